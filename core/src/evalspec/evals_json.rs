//! `evals/evals.json` -> [`Suite`], in every shape found in real skills.
//!
//! - current (agentskills.io, Anthropic skill-creator, ACES): `{"skill_name", "evals": [...]}`
//!   with `id, prompt, expected_output, assertions | expectations, files, expected_skill, ...`;
//! - legacy ACES flat array: `[{id, question, expected_skill, expected_script, ground_truth,
//!   expected_behavior, files, acceptable_skills}]`;
//! - `{"skill", "cases": [...]}` and a single case object, both accepted by SkillEvaluator's
//!   loader (`dataset_utils.normalize_dataset_entries`) and present in NVIDIA's catalog.
//!
//! Field mapping follows SkillEvaluator: `question`->prompt, `ground_truth`->expected output,
//! `expected_behavior` (else `assertions`)->judged criteria, `acceptable_alternates`->
//! `acceptable_skills`; in the current shape a missing `expected_skill` means `skill_name`;
//! an explicit `should_trigger` wins over `expected_skill`; `expected_skill: null` is a
//! negative case. Typed assertion objects (`contains_phrase`, `not_contains`,
//! `contains_pattern`, `not_contains_pattern`) become deterministic assertions: an author who
//! writes a pattern expects it to be matched, not read by a judge.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::yaml::Node;

use super::ParseError;
use super::fields::{Fields, Texts, describe, display_pointer, scalar_text};
use super::model::{
    Activation, Assertion, Case, Constraints, Criterion, CriterionKind, FileContent, Format,
    Judged, Origin, Pattern, Setup, SetupFile, Suite,
};

/// Typed assertion objects found in evals.json files, with the field holding their operand.
pub const TYPED_ASSERTIONS: &[(&str, &str)] = &[
    ("contains_phrase", "phrase"),
    ("not_contains", "phrase"),
    ("contains_pattern", "pattern"),
    ("not_contains_pattern", "pattern"),
];

/// Case fields this reader interprets; any other field is kept in [`Case::extra`].
const KNOWN_CASE_FIELDS: &[&str] = &[
    "id",
    "name",
    "prompt",
    "question",
    "expected_output",
    "ground_truth",
    "assertions",
    "expected_behavior",
    "expectations",
    "must_not",
    "files",
    "expected_skill",
    "should_trigger",
    "acceptable_skills",
    "acceptable_alternates",
    "expected_script",
];

/// Read an evals.json tree. `file` is the file's path relative to the skill folder.
pub fn suite_from_tree(root: &Node, file: &str) -> Result<Suite, ParseError> {
    let shape = shape_of(root)?;
    let skill_name = match shape.format {
        Format::EvalsJson => Some(
            Fields::new(root, String::new(), Texts::StringsOnly)?.required_text("skill_name")?,
        ),
        Format::EvalsJsonCases => {
            Fields::new(root, String::new(), Texts::StringsOnly)?.optional_text("skill")?
        }
        _ => None,
    };
    let default_skill = (shape.format == Format::EvalsJson)
        .then_some(skill_name.as_deref())
        .flatten();
    let cases = shape
        .cases
        .into_iter()
        .map(|(pointer, node)| case(node, pointer, file, shape.format, default_skill))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Suite {
        plugin: None,
        skill_name,
        cases,
        triggers: Vec::new(),
        notes: Vec::new(),
    })
}

/// An evals.json tree's shape and its case nodes with their JSON pointers.
pub(crate) struct Shape<'a> {
    pub format: Format,
    pub cases: Vec<(String, &'a Node)>,
}

/// Tell the shapes apart as SkillEvaluator's loader does: a list; an object with `evals`;
/// an object with `cases`; else the object is one case.
pub(crate) fn shape_of<'a>(root: &'a Node) -> Result<Shape<'a>, ParseError> {
    let numbered = |items: &'a [Node], prefix: &str| -> Vec<(String, &'a Node)> {
        items
            .iter()
            .enumerate()
            .map(|(i, n)| (format!("{prefix}/{i}"), n))
            .collect()
    };
    if let Some(items) = root.as_sequence() {
        return Ok(Shape {
            format: Format::EvalsJsonLegacyArray,
            cases: numbered(items, ""),
        });
    }
    let top = Fields::new(root, String::new(), Texts::StringsOnly)?;
    for (key, format) in [
        ("evals", Format::EvalsJson),
        ("cases", Format::EvalsJsonCases),
    ] {
        if top.has(key) {
            return Ok(Shape {
                format,
                cases: numbered(list(&top, key)?, &format!("/{key}")),
            });
        }
    }
    Ok(Shape {
        format: Format::EvalsJsonSingleCase,
        cases: vec![(String::new(), root)],
    })
}

/// The activation a case node declares, read the way [`suite_from_tree`] reads it; `None`
/// when the fields that decide it are malformed.
pub(crate) fn activation_of(
    node: &Node,
    format: Format,
    skill_name: Option<&str>,
) -> Option<Activation> {
    let f = Fields::new(node, String::new(), Texts::StringsOnly).ok()?;
    let default_skill = (format == Format::EvalsJson)
        .then_some(skill_name)
        .flatten();
    activation(&f, format, default_skill).ok()
}

fn list<'a>(top: &Fields<'a>, key: &str) -> Result<&'a [Node], ParseError> {
    let node = top.get(key).expect("checked by caller");
    node.as_sequence().ok_or_else(|| {
        ParseError::shape(
            node.span,
            format!("/{key}: expected a list of cases, found {}", describe(node)),
        )
    })
}

fn case(
    node: &Node,
    pointer: String,
    file: &str,
    format: Format,
    skill_name: Option<&str>,
) -> Result<Case, ParseError> {
    let f = Fields::new(node, pointer.clone(), Texts::StringsOnly)?;
    let id = case_id(&f)?;
    let prompt = match f.present("question") {
        Some(_) => f.required_text("question")?,
        None => f.required_text("prompt").map_err(|e| {
            if f.has("prompt") {
                e
            } else {
                ParseError::shape(
                    node.span,
                    format!(
                        "{}: expected `prompt` (or legacy `question`), a non-empty string, \
                         found neither",
                        display_pointer(&pointer)
                    ),
                )
            }
        })?,
    };
    let expected_output = match f.present("ground_truth") {
        Some(_) => f.optional_raw_text("ground_truth")?,
        None => f.optional_raw_text("expected_output")?,
    };
    let (criteria, assertions) = judged_and_typed(&f)?;
    Ok(Case {
        name: f.optional_text("name")?.unwrap_or_else(|| id.clone()),
        id,
        prompt,
        setup: Setup {
            copy_test_files: false,
            files: files(&f)?,
            commands: Vec::new(),
        },
        assertions,
        judged: Judged {
            expected_output,
            criteria,
        },
        activation: activation(&f, format, skill_name)?,
        timeout_secs: None,
        constraints: Constraints::default(),
        expected_script: f.optional_text("expected_script")?,
        extra: extra(node),
        origin: Origin {
            file: file.to_string(),
            format,
            span: node.span,
            pointer,
        },
    })
}

/// `id` as a string: ACES canonicalises integer ids to their decimal text.
fn case_id(f: &Fields<'_>) -> Result<String, ParseError> {
    let Some(node) = f.present("id") else {
        return Err(ParseError::shape(
            f.node.span,
            format!(
                "{}: expected `id` (a string or an integer), found no such field",
                display_pointer(&f.pointer)
            ),
        ));
    };
    if let Some(i) = super::fields::integer(node) {
        return Ok(i.to_string());
    }
    match scalar_text(node, Texts::StringsOnly) {
        Some(s) if !s.trim().is_empty() => Ok(s.to_string()),
        _ => Err(ParseError::shape(
            node.span,
            format!(
                "{}: expected a non-empty string or an integer, found {}",
                f.path("id"),
                describe(node)
            ),
        )),
    }
}

fn judged_and_typed(f: &Fields<'_>) -> Result<(Vec<Criterion>, Vec<Assertion>), ParseError> {
    let mut criteria = Vec::new();
    let mut assertions = Vec::new();
    let behaviour_key = if f.present("expected_behavior").is_some() {
        "expected_behavior"
    } else {
        "assertions"
    };
    for (key, kind) in [
        (behaviour_key, CriterionKind::Expectation),
        ("expectations", CriterionKind::Expectation),
        ("must_not", CriterionKind::MustNot),
    ] {
        let Some(node) = f.present(key) else { continue };
        let items = node.as_sequence().ok_or_else(|| {
            ParseError::shape(
                node.span,
                format!("{}: expected a list, found {}", f.path(key), describe(node)),
            )
        })?;
        for (i, item) in items.iter().enumerate() {
            let pointer = format!("{}/{i}", f.path(key));
            match criterion_item(item, &pointer, kind)? {
                // Blank statements give a judge nothing to check (SW410 tells the author).
                Item::Judged(c) if c.text.trim().is_empty() => {}
                Item::Judged(c) => criteria.push(c),
                Item::Typed(a) => assertions.push(a),
            }
        }
    }
    Ok((criteria, assertions))
}

enum Item {
    Judged(Criterion),
    Typed(Assertion),
}

fn criterion_item(item: &Node, pointer: &str, kind: CriterionKind) -> Result<Item, ParseError> {
    if let Some(text) = scalar_text(item, Texts::StringsOnly) {
        return Ok(Item::Judged(Criterion {
            kind,
            text: text.to_string(),
            name: None,
        }));
    }
    if item.as_mapping().is_none() {
        return Err(ParseError::shape(
            item.span,
            format!(
                "{pointer}: expected a string or an object with `text`, found {}",
                describe(item)
            ),
        ));
    }
    let f = Fields::new(item, pointer.to_string(), Texts::StringsOnly)?;
    match f.optional_text("type")? {
        Some(kind) => typed_assertion(&f, &kind).map(Item::Typed),
        None => Ok(Item::Judged(Criterion {
            kind,
            text: match f.optional_raw_text("text")? {
                Some(text) => text,
                None => f.required_text("text")?,
            },
            name: f.optional_text("name")?,
        })),
    }
}

fn typed_assertion(f: &Fields<'_>, kind: &str) -> Result<Assertion, ParseError> {
    let pattern = || {
        let text = f.required_text("pattern")?;
        Pattern::new(text).map_err(|e| {
            let at = f.get("pattern").map_or(f.node.span, |n| n.span);
            ParseError::shape(at, format!("{}: {e}", f.path("pattern")))
        })
    };
    Ok(match kind {
        "contains_phrase" => Assertion::OutputContains {
            value: f.required_text("phrase")?,
        },
        "not_contains" => Assertion::OutputNotContains {
            value: f.required_text("phrase")?,
        },
        "contains_pattern" => Assertion::OutputMatches {
            pattern: pattern()?,
        },
        "not_contains_pattern" => Assertion::OutputNotMatches {
            pattern: pattern()?,
        },
        other => {
            let names: Vec<_> = TYPED_ASSERTIONS.iter().map(|(t, _)| *t).collect();
            let at = f.get("type").map_or(f.node.span, |n| n.span);
            return Err(ParseError::shape(
                at,
                format!(
                    "{}: expected an assertion type ({}), found `{other}`",
                    f.path("type"),
                    names.join(", ")
                ),
            ));
        }
    })
}

/// `files`: a path or a list of paths. ACES resolves `evals/x` and `x` both inside `evals/`;
/// the workspace path is the reference as written, which is how prompts name the file.
fn files(f: &Fields<'_>) -> Result<Vec<SetupFile>, ParseError> {
    let Some(node) = f.present("files") else {
        return Ok(Vec::new());
    };
    let refs = match scalar_text(node, Texts::StringsOnly) {
        Some(one) => vec![one.to_string()],
        None => f.text_list("files")?,
    };
    Ok(refs
        .into_iter()
        .map(|r| SetupFile {
            content: FileContent::Source {
                path: files_source(&r),
            },
            path: r,
        })
        .collect())
}

/// Where an evals.json `files` reference lives, relative to the skill folder.
pub fn files_source(reference: &str) -> String {
    let trimmed = reference.trim().trim_start_matches("./");
    if trimmed.starts_with("evals/") {
        trimmed.to_string()
    } else {
        format!("evals/{trimmed}")
    }
}

fn activation(
    f: &Fields<'_>,
    format: Format,
    skill_name: Option<&str>,
) -> Result<Activation, ParseError> {
    let mut acceptable = f.text_list("acceptable_skills")?;
    if acceptable.is_empty() {
        acceptable = f.text_list("acceptable_alternates")?;
    }
    let expected = f.optional_text("expected_skill")?;
    let expected_null = f.has("expected_skill") && expected.is_none();
    let positive = |skill: Option<String>| Activation::Expected {
        skill,
        acceptable: acceptable.clone(),
    };
    Ok(match f.optional_bool("should_trigger")? {
        Some(false) => Activation::MustNotTrigger,
        Some(true) => positive(expected.or_else(|| skill_name.map(str::to_string))),
        None if expected_null => Activation::MustNotTrigger,
        None => match (expected, format, skill_name) {
            (Some(skill), _, _) => positive(Some(skill)),
            (None, Format::EvalsJson, Some(name)) => positive(Some(name.to_string())),
            (None, _, _) => Activation::Unspecified,
        },
    })
}

fn extra(node: &Node) -> BTreeMap<String, Json> {
    node.as_mapping()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let key = e.key.as_key()?;
            (!KNOWN_CASE_FIELDS.contains(&key)).then(|| (key.to_string(), e.value.to_json()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalspec::json;

    fn parse(text: &str) -> Result<Suite, ParseError> {
        suite_from_tree(&json::parse(text).unwrap(), "evals/evals.json")
    }

    #[test]
    fn current_shape_with_skill_creator_fields() {
        let suite = parse(
            r#"{"skill_name": "csv", "evals": [
                {"id": 1, "prompt": "Chart it", "expected_output": "A chart",
                 "files": ["evals/files/s.csv"], "expectations": ["Has axes"]},
                {"id": "neg", "prompt": "Write a poem", "expected_output": "A poem",
                 "expected_skill": null, "assertions": [{"name": "n", "text": "No chart"}]}
            ]}"#,
        )
        .unwrap();
        assert_eq!(suite.skill_name.as_deref(), Some("csv"));
        let [a, b] = &suite.cases[..] else { panic!() };
        assert_eq!(a.id, "1");
        assert_eq!(a.judged.expected_output.as_deref(), Some("A chart"));
        assert_eq!(a.setup.files[0].path, "evals/files/s.csv");
        assert_eq!(
            a.activation,
            Activation::Expected {
                skill: Some("csv".into()),
                acceptable: vec![]
            }
        );
        assert_eq!(a.origin.format, Format::EvalsJson);
        assert_eq!(b.activation, Activation::MustNotTrigger);
        assert_eq!(b.judged.criteria[0].name.as_deref(), Some("n"));
        assert_eq!(b.origin.pointer, "/evals/1");
    }

    #[test]
    fn legacy_array_maps_fields() {
        let suite = parse(
            r#"[{"id": "a-1", "question": "Install it", "expected_skill": "aiq",
                "expected_script": null, "ground_truth": "Asks the mode",
                "expected_behavior": ["Routes to aiq"], "files": ["files/x.py"],
                "acceptable_alternates": ["other"], "expected_workflow": "w"},
               {"id": "a-2", "question": "q", "ground_truth": null}]"#,
        )
        .unwrap();
        let a = &suite.cases[0];
        assert_eq!(a.prompt, "Install it");
        assert_eq!(a.judged.expected_output.as_deref(), Some("Asks the mode"));
        assert_eq!(a.judged.criteria[0].kind, CriterionKind::Expectation);
        assert_eq!(
            a.setup.files[0].content,
            FileContent::Source {
                path: "evals/files/x.py".into()
            }
        );
        assert_eq!(
            a.activation,
            Activation::Expected {
                skill: Some("aiq".into()),
                acceptable: vec!["other".into()]
            }
        );
        assert_eq!(a.extra["expected_workflow"], "w");
        assert_eq!(suite.cases[1].activation, Activation::Unspecified);
        assert_eq!(suite.cases[1].judged.expected_output, None);
    }

    #[test]
    fn should_trigger_wins_and_typed_assertions_are_deterministic() {
        let suite = parse(
            r#"{"skill": "w", "cases": [{"id": "x", "question": "q", "expected_skill": "w",
                "should_trigger": false, "assertions": [
                  {"text": "t", "type": "contains_phrase", "phrase": "gst"},
                  {"text": "t", "type": "not_contains_pattern", "pattern": "sk-[a-z]+"}],
                "must_not": ["Use WebGL"]}]}"#,
        )
        .unwrap();
        assert_eq!(suite.skill_name.as_deref(), Some("w"));
        let c = &suite.cases[0];
        assert_eq!(c.activation, Activation::MustNotTrigger);
        assert_eq!(
            c.assertions[0],
            Assertion::OutputContains {
                value: "gst".into()
            }
        );
        assert!(matches!(
            c.assertions[1],
            Assertion::OutputNotMatches { .. }
        ));
        assert_eq!(c.judged.criteria[0].kind, CriterionKind::MustNot);
        assert_eq!(c.origin.format, Format::EvalsJsonCases);
    }

    #[test]
    fn single_object_is_one_case() {
        let suite = parse(r#"{"id": "d-1", "question": "q", "expected_skill": "d"}"#).unwrap();
        assert_eq!(suite.cases.len(), 1);
        assert_eq!(suite.cases[0].origin.format, Format::EvalsJsonSingleCase);
        assert_eq!(suite.cases[0].origin.pointer, "");
    }

    #[test]
    fn shape_errors_point_at_the_problem() {
        let cases = [
            (r#"{"evals": []}"#, "skill_name", 0),
            (r#"{"skill_name": "s", "evals": {}}"#, "list of cases", 29),
            (r#"[{"id": "a"}]"#, "found neither", 1),
            (r#"[{"id": true, "question": "q"}]"#, "integer", 8),
            (r#"[{"id": "a", "prompt": 5}]"#, "a string", 23),
            (
                r#"[{"id": "a", "prompt": "p", "assertions": [{"type": "contains_pattern", "pattern": "("}]}]"#,
                "invalid regular expression",
                83,
            ),
        ];
        for (text, needle, offset) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.message.contains(needle), "{text}: {}", err.message);
            assert_eq!(err.span.start, offset, "{text}: {}", err.message);
        }
    }
}
