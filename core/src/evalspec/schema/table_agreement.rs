//! The schemas against core's field table (`crate::fields`): each place's property names are
//! the table's, each `type` enum and what each type requires are the table's, and every
//! property's `description` is written from the table. `SKILLWATCH_BLESS=1 cargo test -p
//! skillwatch-core --lib table_agreement` rewrites the descriptions in schemas/ after a table
//! change; the names and types are the schema author's to mend.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::{Dialect, schema_name, schema_text};
use crate::fields::{Place, schema_description};

/// Where each place lives in its schema: the object whose `properties` (and whose `allOf`
/// branches' `then.properties`) list the place's fields.
const PLACES: &[(Place, Dialect, &str)] = &[
    (Place::EvalYamlTop, Dialect::SkillValidator, ""),
    (Place::Scenario, Dialect::SkillValidator, "/$defs/scenario"),
    (Place::Setup, Dialect::SkillValidator, "/$defs/setup"),
    (
        Place::SetupFile,
        Dialect::SkillValidator,
        "/$defs/setupFile",
    ),
    (
        Place::Assertion,
        Dialect::SkillValidator,
        "/$defs/assertion",
    ),
    (
        Place::EvalsJsonTop,
        Dialect::EvalsJson,
        "/$defs/currentSuite",
    ),
    (
        Place::EvalsJsonCasesTop,
        Dialect::EvalsJson,
        "/$defs/casesSuite",
    ),
    (Place::Case, Dialect::EvalsJson, "/$defs/caseFields"),
    (
        Place::Criterion,
        Dialect::EvalsJson,
        "/$defs/criterionObject",
    ),
    (Place::VallyTop, Dialect::Vally, ""),
    (Place::VallyConfig, Dialect::Vally, "/$defs/config"),
    (
        Place::VallyEnvironment,
        Dialect::Vally,
        "/$defs/environment",
    ),
    (Place::VallyFile, Dialect::Vally, "/$defs/file"),
    (Place::VallyStimulus, Dialect::Vally, "/$defs/stimulus"),
    (Place::VallyGrader, Dialect::Vally, "/$defs/grader"),
    (
        Place::VallyGraderConfig,
        Dialect::Vally,
        "/$defs/graderConfig",
    ),
    (
        Place::VallyConstraints,
        Dialect::Vally,
        "/$defs/constraints",
    ),
    (Place::VallyScoring, Dialect::Vally, "/$defs/scoring"),
    (Place::VallyExperimentTop, Dialect::VallyExperiment, ""),
    (
        Place::VallyVariant,
        Dialect::VallyExperiment,
        "/$defs/variant",
    ),
    (Place::WazaTop, Dialect::Waza, ""),
    (Place::WazaConfig, Dialect::Waza, "/$defs/config"),
    (Place::WazaMetric, Dialect::Waza, "/$defs/metric"),
    (Place::WazaGrader, Dialect::Waza, "/$defs/grader"),
    (
        Place::WazaGraderConfig,
        Dialect::Waza,
        "/$defs/graderConfig",
    ),
    (Place::WazaTask, Dialect::WazaTask, ""),
    (Place::WazaInputs, Dialect::WazaTask, "/$defs/inputs"),
    (Place::WazaExpected, Dialect::WazaTask, "/$defs/expected"),
    (Place::WazaBehavior, Dialect::WazaTask, "/$defs/behavior"),
    (Place::WazaGrader, Dialect::WazaTask, "/$defs/grader"),
    (
        Place::WazaGraderConfig,
        Dialect::WazaTask,
        "/$defs/graderConfig",
    ),
    (Place::SkillUpTop, Dialect::SkillUp, ""),
    (Place::SkillUpCases, Dialect::SkillUp, "/$defs/cases"),
    (Place::SkillUpDefaults, Dialect::SkillUp, "/$defs/defaults"),
    (Place::SkillUpExpect, Dialect::SkillUp, "/$defs/expect"),
    (Place::SkillUpJudge, Dialect::SkillUp, "/$defs/judge"),
    (Place::SkillUpCase, Dialect::SkillUpCase, ""),
    (Place::SkillUpInput, Dialect::SkillUpCase, "/$defs/input"),
    (
        Place::SkillUpContext,
        Dialect::SkillUpCase,
        "/$defs/context",
    ),
    (
        Place::SkillUpConstraints,
        Dialect::SkillUpCase,
        "/$defs/constraints",
    ),
    (Place::SkillUpExpect, Dialect::SkillUpCase, "/$defs/expect"),
    (Place::SkillUpJudge, Dialect::SkillUpCase, "/$defs/judge"),
];

/// The `properties` objects of the place at `pointer`: its own and its branches'.
fn property_maps<'a>(
    schema: &'a mut Json,
    pointer: &str,
) -> Vec<&'a mut serde_json::Map<String, Json>> {
    let place = schema
        .pointer_mut(pointer)
        .expect("the place is in its schema");
    let mut maps = Vec::new();
    let Json::Object(object) = place else {
        return maps;
    };
    let mut branches = Vec::new();
    for (key, value) in object.iter_mut() {
        match (key.as_str(), value) {
            ("properties", Json::Object(props)) => maps.push(props),
            ("allOf", Json::Array(items)) => branches = items.iter_mut().collect(),
            _ => {}
        }
    }
    for branch in branches {
        if let Some(Json::Object(props)) = branch.pointer_mut("/then/properties") {
            maps.push(props);
        }
    }
    maps
}

fn names(schema: &mut Json, pointer: &str) -> BTreeSet<String> {
    property_maps(schema, pointer)
        .into_iter()
        .flat_map(|m| m.keys().cloned().collect::<Vec<_>>())
        .filter(|k| k != "$schema")
        .collect()
}

/// The schema of `kind` with every table field's description written from the table.
fn described(kind: Dialect) -> String {
    let mut schema: Json = serde_json::from_str(schema_text(kind)).unwrap();
    for (place, _, pointer) in PLACES.iter().filter(|(_, k, _)| *k == kind) {
        for props in property_maps(&mut schema, pointer) {
            for (name, property) in props.iter_mut() {
                let (Some(field), Json::Object(property)) = (place.field(name), property) else {
                    continue;
                };
                property.insert(
                    "description".into(),
                    Json::String(schema_description(field)),
                );
            }
        }
    }
    serde_json::to_string_pretty(&schema).unwrap() + "\n"
}

#[test]
fn every_place_has_the_tables_fields() {
    for (place, kind, pointer) in PLACES {
        let mut schema: Json = serde_json::from_str(schema_text(*kind)).unwrap();
        let in_schema = names(&mut schema, pointer);
        let in_table: BTreeSet<String> =
            place.fields().iter().map(|f| f.name.to_string()).collect();
        assert_eq!(in_schema, in_table, "{place:?} at {kind:?}{pointer}");
    }
}

#[test]
fn every_place_is_in_a_schema_but_the_frontmatter() {
    for place in Place::ALL {
        let placed = PLACES.iter().any(|(p, _, _)| *p == place);
        assert_eq!(placed, place != Place::Frontmatter, "{place:?}");
    }
}

/// The `type` enum of a place, and the fields each type requires, from its `allOf` branches.
fn types(schema: &Json, pointer: &str) -> Vec<(String, BTreeSet<String>)> {
    let place = schema.pointer(pointer).unwrap();
    let listed: Vec<String> = place
        .pointer("/properties/type/enum")
        .and_then(Json::as_array)
        .expect("a type enum")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let branches = place["allOf"].as_array().cloned().unwrap_or_default();
    listed
        .into_iter()
        .map(|name| {
            let required: BTreeSet<String> = branches
                .iter()
                .filter(|b| {
                    let condition = &b["if"]["properties"]["type"];
                    condition["const"] == name.as_str()
                        || condition["enum"]
                            .as_array()
                            .is_some_and(|e| e.iter().any(|v| v == name.as_str()))
                })
                .flat_map(|b| {
                    b["then"]["required"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                })
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            (name, required)
        })
        .collect()
}

#[test]
fn type_values_and_what_they_need_are_the_tables() {
    for (place, kind, pointer) in PLACES {
        if place.types().is_empty() {
            continue;
        }
        let schema: Json = serde_json::from_str(schema_text(*kind)).unwrap();
        let in_schema = types(&schema, pointer);
        let in_table: Vec<(String, BTreeSet<String>)> = place
            .types()
            .iter()
            .map(|t| {
                let fields = t.fields.iter().map(|f| f.to_string()).collect();
                (t.name.to_string(), fields)
            })
            .collect();
        assert_eq!(in_schema, in_table, "{place:?}");
    }
    let typed: Vec<(&str, &str)> = Place::Criterion
        .types()
        .iter()
        .map(|t| (t.name, t.fields[0]))
        .collect();
    assert_eq!(typed, crate::evalspec::TYPED_ASSERTIONS);
}

#[test]
fn descriptions_are_written_from_the_table() {
    for kind in Dialect::ALL {
        let file = format!("{}.schema.json", schema_name(kind));
        let expected = described(kind);
        if std::env::var_os("SKILLWATCH_BLESS").is_some() {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../schemas")
                .join(file);
            std::fs::write(&path, &expected).unwrap();
            continue;
        }
        assert!(
            schema_text(kind) == expected,
            "schemas/{file} is not what core's field table makes of it; run \
             SKILLWATCH_BLESS=1 cargo test -p skillwatch-core --lib table_agreement"
        );
    }
}
