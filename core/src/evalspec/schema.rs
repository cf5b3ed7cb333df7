//! The JSON Schemas of the eval formats (one per [`Dialect`]), embedded in the binary, and
//! validation of a spanned tree against them with every error mapped back to a byte range of
//! the source.
//!
//! The schemas are the project's published contract (`skillwatch schema eval-yaml`), so
//! yaml-language-server users get the same errors in any editor; skillwatch itself turns each
//! `jsonschema` error into a message that names the field, what was expected and what was
//! found. A schema object may carry `x-message`: the wording used when a keyword directly
//! inside it fails (for `anyOf` and patterns, whose generic messages help nobody).

use std::sync::OnceLock;

use jsonschema::Validator;
use jsonschema::error::{ValidationError, ValidationErrorKind};
use serde_json::Value as Json;

use crate::text::Span;
use crate::yaml::{Node, Value};

use super::Dialect;
use super::fields::{describe, display_pointer, key_span};
use crate::spelling::closest;

/// The eval.yaml schema (JSON Schema 2020-12), as shipped.
pub const EVAL_YAML_SCHEMA: &str = include_str!("../../../schemas/eval-yaml.schema.json");
/// The evals.json schema (JSON Schema 2020-12), as shipped.
pub const EVALS_JSON_SCHEMA: &str = include_str!("../../../schemas/evals-json.schema.json");
/// Microsoft Vally's eval spec.
pub const VALLY_SCHEMA: &str = include_str!("../../../schemas/vally-eval.schema.json");
/// Microsoft Vally's experiment file.
pub const VALLY_EXPERIMENT_SCHEMA: &str =
    include_str!("../../../schemas/vally-experiment.schema.json");
/// microsoft/waza's eval.yaml.
pub const WAZA_SCHEMA: &str = include_str!("../../../schemas/waza-eval.schema.json");
/// microsoft/waza's task file.
pub const WAZA_TASK_SCHEMA: &str = include_str!("../../../schemas/waza-task.schema.json");
/// alibaba/skill-up's eval.yaml.
pub const SKILL_UP_SCHEMA: &str = include_str!("../../../schemas/skill-up-eval.schema.json");
/// alibaba/skill-up's case file.
pub const SKILL_UP_CASE_SCHEMA: &str = include_str!("../../../schemas/skill-up-case.schema.json");

/// The schema text for a dialect.
pub fn schema_text(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::SkillValidator => EVAL_YAML_SCHEMA,
        Dialect::EvalsJson => EVALS_JSON_SCHEMA,
        Dialect::Vally => VALLY_SCHEMA,
        Dialect::VallyExperiment => VALLY_EXPERIMENT_SCHEMA,
        Dialect::Waza => WAZA_SCHEMA,
        Dialect::WazaTask => WAZA_TASK_SCHEMA,
        Dialect::SkillUp => SKILL_UP_SCHEMA,
        Dialect::SkillUpCase => SKILL_UP_CASE_SCHEMA,
    }
}

/// The name `skillwatch schema NAME` prints a dialect's schema under, and its file name in
/// schemas/ (`NAME.schema.json`).
pub fn schema_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::SkillValidator => "eval-yaml",
        Dialect::EvalsJson => "evals-json",
        Dialect::Vally => "vally-eval",
        Dialect::VallyExperiment => "vally-experiment",
        Dialect::Waza => "waza-eval",
        Dialect::WazaTask => "waza-task",
        Dialect::SkillUp => "skill-up-eval",
        Dialect::SkillUpCase => "skill-up-case",
    }
}

/// One schema error, positioned in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON Pointer to the offending value (for an unknown field: the object holding it).
    pub pointer: String,
    /// Where in the file (a key for unknown fields, the value otherwise).
    pub span: Span,
    /// Names the location, what was expected and what was found.
    pub message: String,
    /// A field the format does not define: reported as a warning, since the tools that read
    /// these files ignore unknown fields, but usually a typo.
    pub unknown_field: bool,
    /// For an unknown field close to a known one: the known name (a safe rename); for a
    /// string close to one of the values an enum allows: that value.
    pub suggestion: Option<String>,
}

/// A schema and its compiled validator. The eval formats have theirs; other JSON documents
/// skillwatch reads with spans (the Agent Skills discovery index, [`crate::index`]) bring
/// their own and share the error mapping.
pub(crate) struct Compiled {
    pub(crate) schema: Json,
    validator: Validator,
}

impl Compiled {
    /// Compile an embedded Draft 2020-12 schema; a broken one is a bug of this crate (each
    /// has a unit test that compiles it).
    pub(crate) fn new(text: &str) -> Compiled {
        let schema: Json = serde_json::from_str(text).expect("embedded schema is valid JSON");
        let validator = jsonschema::draft202012::new(&schema)
            .expect("embedded schema compiles (checked by a unit test)");
        Compiled { schema, validator }
    }

    /// Validate `root` (parsed from `text`), each error positioned in the source.
    pub(crate) fn validate(&self, root: &Node, text: &str) -> Vec<SchemaViolation> {
        let instance = root.to_json();
        // Most files are valid, and `is_valid` stops at the first failure without building
        // error values; `iter_errors` yields nothing exactly when `is_valid` holds.
        if self.validator.is_valid(&instance) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for error in self.validator.iter_errors(&instance) {
            violations(&self.schema, root, text, &error, &mut out);
        }
        out.sort_by_key(|v| (v.span.start, v.span.end));
        out.dedup();
        out
    }
}

fn compiled(dialect: Dialect) -> &'static Compiled {
    static CELLS: [OnceLock<Compiled>; Dialect::ALL.len()] =
        [const { OnceLock::new() }; Dialect::ALL.len()];
    let i = Dialect::ALL
        .iter()
        .position(|d| *d == dialect)
        .expect("every dialect is in ALL");
    CELLS[i].get_or_init(|| Compiled::new(schema_text(dialect)))
}

/// Every field name the schema for `dialect` defines, at any depth.
pub fn field_names(dialect: Dialect) -> Vec<&'static str> {
    fn walk(node: &'static Json, out: &mut Vec<&'static str>) {
        match node {
            Json::Object(map) => {
                if let Some(props) = map.get("properties").and_then(Json::as_object) {
                    out.extend(props.keys().map(String::as_str).filter(|k| *k != "$schema"));
                }
                map.values().for_each(|v| walk(v, out));
            }
            Json::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(&compiled(dialect).schema, &mut out);
    out.sort_unstable();
    out.dedup();
    out
}

/// Validate `root` (parsed from `text`) against the schema for `dialect`.
pub fn validate(dialect: Dialect, root: &Node, text: &str) -> Vec<SchemaViolation> {
    compiled(dialect).validate(root, text)
}

fn violations(
    schema: &Json,
    root: &Node,
    text: &str,
    error: &ValidationError<'_>,
    out: &mut Vec<SchemaViolation>,
) {
    let pointer = error.instance_path().as_str().to_string();
    let (node, _) = root.pointer(&pointer);
    let keyword_parent = parent_pointer(error.schema_path().as_str());
    let schema_obj = schema.pointer(keyword_parent).unwrap_or(&Json::Null);
    let at = display_pointer(&pointer);
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let known = known_properties(schema, schema_obj);
            for key in unexpected {
                let suggestion = closest(key, &known).map(str::to_string);
                out.push(SchemaViolation {
                    pointer: pointer.clone(),
                    span: key_span(node, key).unwrap_or_else(|| head(node, text)),
                    message: unknown_field_message(&at, key, &known, suggestion.as_deref()),
                    unknown_field: true,
                    suggestion,
                });
            }
        }
        kind => {
            let suggestion = misspelt_option(kind, node);
            let mut message = format!("{at}: {}", detail(kind, node, schema_obj, error));
            if let Some(best) = &suggestion {
                message.push_str(&format!(" (did you mean `{best}`?)"));
            }
            out.push(SchemaViolation {
                pointer: pointer.clone(),
                span: head(node, text),
                message,
                unknown_field: false,
                suggestion,
            });
        }
    }
}

/// For a string outside an enum (`type: output_contian`), the option it is a typo of.
fn misspelt_option(kind: &ValidationErrorKind, node: &Node) -> Option<String> {
    let ValidationErrorKind::Enum { options } = kind else {
        return None;
    };
    let found = node.as_str()?;
    let known: Vec<&str> = options
        .as_array()?
        .iter()
        .filter_map(Json::as_str)
        .collect();
    closest(found, &known).map(str::to_string)
}

/// What was expected and found, for every kind except unknown fields.
fn detail(
    kind: &ValidationErrorKind,
    node: &Node,
    schema_obj: &Json,
    error: &ValidationError<'_>,
) -> String {
    if let Some(custom) = schema_obj.get("x-message").and_then(Json::as_str) {
        return format!("{custom}; found {}", describe(node));
    }
    match kind {
        ValidationErrorKind::Required { property } => format!(
            "expected field `{}`, found no such field",
            property.as_str().unwrap_or_default()
        ),
        ValidationErrorKind::Type { .. } => format!(
            "expected {}, found {}",
            expected_types(schema_obj.get("type")),
            describe(node)
        ),
        ValidationErrorKind::Enum { options } => format!(
            "expected one of {}, found {}",
            list_of(options),
            describe(node)
        ),
        ValidationErrorKind::Constant { expected_value } => {
            format!("expected `{expected_value}`, found {}", describe(node))
        }
        ValidationErrorKind::Pattern { pattern } if pattern == "\\S" => {
            format!("expected a non-empty string, found {}", describe(node))
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!(
                "expected text matching `{pattern}`, found {}",
                describe(node)
            )
        }
        ValidationErrorKind::MinItems { limit } => format!(
            "expected at least {limit} item{}, found {}",
            if *limit == 1 { "" } else { "s" },
            node.as_sequence().map_or(0, <[Node]>::len)
        ),
        ValidationErrorKind::Minimum { limit } => {
            format!(
                "expected a number of at least {limit}, found {}",
                describe(node)
            )
        }
        _ => error.to_string(),
    }
}

fn unknown_field_message(
    at: &str,
    key: &str,
    known: &[String],
    suggestion: Option<&str>,
) -> String {
    let mut message = format!("{at}: unknown field `{key}`, which this format does not define");
    if let Some(best) = suggestion {
        message.push_str(&format!(" (did you mean `{best}`?)"));
    } else if !known.is_empty() {
        message.push_str(&format!("; expected one of {}", backticked(known)));
    }
    message
}

/// The property names a schema object defines, following one `$ref` (for
/// `unevaluatedProperties` next to a `$ref` to the shared case fields).
fn known_properties(schema: &Json, schema_obj: &Json) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |obj: &Json| {
        if let Some(props) = obj.get("properties").and_then(Json::as_object) {
            names.extend(props.keys().filter(|k| k.as_str() != "$schema").cloned());
        }
    };
    add(schema_obj);
    if let Some(target) = schema_obj.get("$ref").and_then(Json::as_str)
        && let Some(resolved) = target.strip_prefix('#').and_then(|p| schema.pointer(p))
    {
        add(resolved);
    }
    names
}

fn expected_types(types: Option<&Json>) -> String {
    let names: Vec<&str> = match types {
        Some(Json::String(t)) => vec![t.as_str()],
        Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
        _ => vec![],
    };
    let words: Vec<&str> = names
        .iter()
        .filter(|t| **t != "null")
        .map(|t| match *t {
            "object" => "a mapping",
            "array" => "a list",
            "string" => "a string",
            "integer" => "a whole number",
            "number" => "a number",
            "boolean" => "true or false",
            other => other,
        })
        .collect();
    match words.as_slice() {
        [] => "another type".to_string(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn list_of(options: &Json) -> String {
    let items: Vec<String> = options
        .as_array()
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect()
        })
        .unwrap_or_default();
    backticked(&items)
}

fn backticked(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn parent_pointer(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |i| &pointer[..i])
}

/// The span to underline for a value: a scalar whole; a mapping at its first key; a list at
/// its first line. Whole collections would paint an entire scenario red.
fn head(node: &Node, text: &str) -> Span {
    let source = text.get(node.span.start..node.span.end).unwrap_or("");
    match &node.value {
        Value::Mapping(entries) if !entries.is_empty() && !source.starts_with('{') => {
            entries[0].key.span
        }
        Value::Scalar(_) => node.span,
        _ => {
            let end = source
                .find('\n')
                .map_or(node.span.end, |i| node.span.start + i);
            Span::new(node.span.start, end)
        }
    }
}

#[cfg(test)]
mod table_agreement;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalspec::json;
    use crate::yaml;

    fn yaml_violations(text: &str) -> Vec<SchemaViolation> {
        validate(
            Dialect::SkillValidator,
            &yaml::parse(text, 0).unwrap(),
            text,
        )
    }

    fn json_violations(text: &str) -> Vec<SchemaViolation> {
        validate(Dialect::EvalsJson, &json::parse(text).unwrap(), text)
    }

    #[test]
    fn embedded_schemas_compile() {
        for d in Dialect::ALL {
            compiled(d);
        }
    }

    #[test]
    fn valid_files_have_no_violations() {
        let text = "scenarios:\n  - name: a\n    prompt: b\n    assertions:\n      - type: exit_success\n    setup:\n    rubric:\n";
        assert_eq!(yaml_violations(text), vec![]);
        let text =
            r#"{"skill_name": "s", "evals": [{"id": 1, "prompt": "p", "expected_output": "o"}]}"#;
        assert_eq!(json_violations(text), vec![]);
        let text = r#"[{"id": "a", "question": "q", "expected_skill": null}]"#;
        assert_eq!(json_violations(text), vec![]);
    }

    #[test]
    fn unknown_fields_point_at_the_key_and_suggest() {
        let text = "scenarios:\n  - name: a\n    prompt: b\n    rubrik: [x]\n";
        let v = yaml_violations(text);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].unknown_field);
        assert_eq!(&text[v[0].span.start..v[0].span.end], "rubrik");
        assert!(
            v[0].message.contains("did you mean `rubric`"),
            "{}",
            v[0].message
        );
    }

    #[test]
    fn assertion_fields_depend_on_type() {
        let text = "scenarios:\n  - name: a\n    prompt: b\n    assertions:\n      - type: output_matches\n        value: x\n";
        let v = yaml_violations(text);
        let messages: Vec<_> = v.iter().map(|v| v.message.as_str()).collect();
        assert!(
            messages
                .iter()
                .any(|m| m.contains("expected field `pattern`")),
            "{messages:?}"
        );
        assert!(
            v.iter()
                .any(|v| v.unknown_field && &text[v.span.start..v.span.end] == "value"),
            "{v:?}"
        );
    }

    #[test]
    fn custom_messages_for_any_of() {
        let text =
            "scenarios:\n  - name: a\n    prompt: b\n    setup:\n      files:\n        - path: x\n";
        let v = yaml_violations(text);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].message.contains("`content`"), "{}", v[0].message);
        assert_eq!(&text[v[0].span.start..v[0].span.end], "path");
    }

    #[test]
    fn json_shapes_are_each_validated() {
        let v = json_violations(r#"{"skill_name": "s", "evals": [{"id": 1, "prompt": "p"}]}"#);
        assert!(v[0].message.contains("`expected_output`"), "{v:?}");
        let v = json_violations(r#"[{"id": "bad id!", "question": "q"}]"#);
        assert!(v[0].message.contains("starts with a letter"), "{v:?}");
        let v = json_violations(r#"{"skill": "s", "cases": [{"id": "a"}]}"#);
        assert!(v[0].message.contains("`question`"), "{v:?}");
        let v = json_violations(r#"[{"id": "a", "question": "q", "expected_skil": "x"}]"#);
        assert!(
            v[0].unknown_field && v[0].message.contains("expected_skill"),
            "{v:?}"
        );
    }
}
