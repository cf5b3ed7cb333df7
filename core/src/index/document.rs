//! The discovery index document: parsed with spans (`evalspec::json`, so every problem has a
//! line and column for the editor), validated against the derived Discovery v0.2.0 schema
//! (the one table of its fields), then the rules a schema cannot say: RFC 3986 references,
//! duplicate names, and the quality of descriptions (`check`'s SW201-SW203).

use std::sync::OnceLock;

use serde::Serialize;

use crate::evalspec::json;
use crate::evalspec::schema::Compiled;
use crate::text::Span;
use crate::yaml::Node;

use super::{DISCOVERY_SCHEMA, urls};

/// What an index entry advertises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ArtifactType {
    /// One SKILL.md.
    #[serde(rename = "skill-md")]
    SkillMd,
    /// A zip or tar(.gz) with SKILL.md at its root.
    #[serde(rename = "archive")]
    Archive,
}

impl ArtifactType {
    /// As the index spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactType::SkillMd => "skill-md",
            ArtifactType::Archive => "archive",
        }
    }
}

/// Where a problem of the document is, and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What kind: `invalid-json`, `schema-uri`, `schema`, `unknown-field`, `url`,
    /// `duplicate-name`, or a description rule's id (`SW201`).
    pub code: &'static str,
    /// Byte range in the document.
    #[serde(skip)]
    pub span: Span,
    /// JSON pointer to the value (`/skills/2/digest`), empty for the document.
    pub pointer: String,
    /// What was expected and found.
    pub message: String,
}

/// One element of `skills`, with what was wrong or doubtful about it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Entry {
    /// Position in `skills`.
    pub index: usize,
    /// `name`, when a string.
    pub name: Option<String>,
    /// `type`, when one of the two.
    #[serde(rename = "type")]
    pub kind: Option<ArtifactType>,
    /// `description`, when a string.
    #[serde(skip)]
    pub description: Option<String>,
    /// `url` as written, when a string.
    pub url: Option<String>,
    /// `digest` as written, when a string.
    pub digest: Option<String>,
    /// Failures: the entry is not processed further.
    pub problems: Vec<Problem>,
    /// Quality warnings (descriptions).
    pub warnings: Vec<Problem>,
}

impl Entry {
    /// Valid: every required field is there and well formed.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// A name for messages: the entry's name, else its position.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => name.clone(),
            None => format!("skills[{}]", self.index),
        }
    }
}

/// The parsed and validated index.
#[derive(Debug, Clone, Default)]
pub struct IndexDocument {
    /// Not JSON (then nothing else is filled in).
    pub syntax: Option<Problem>,
    /// `$schema` as written, when a string.
    pub schema_uri: Option<String>,
    /// Problems of the document outside any entry (`$schema`, `skills` itself).
    pub problems: Vec<Problem>,
    /// Top-level fields v0.2.0 does not define (warnings: ignored for compatibility).
    pub unknown_fields: Vec<Problem>,
    /// The entries of `skills`, when it is an array.
    pub entries: Vec<Entry>,
}

fn schema() -> &'static Compiled {
    static SCHEMA: OnceLock<Compiled> = OnceLock::new();
    SCHEMA.get_or_init(|| Compiled::new(DISCOVERY_SCHEMA))
}

/// The top-level fields the schema defines.
fn known_fields() -> Vec<&'static str> {
    schema().schema["properties"]
        .as_object()
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// Parse and validate an index document.
pub fn parse(text: &str) -> IndexDocument {
    let root = match json::parse(text) {
        Ok(root) => root,
        Err(e) => {
            return IndexDocument {
                syntax: Some(Problem {
                    code: "invalid-json",
                    span: e.span,
                    pointer: String::new(),
                    message: format!("the index is not valid JSON: {}", e.describe(text)),
                }),
                ..IndexDocument::default()
            };
        }
    };
    let mut doc = IndexDocument {
        schema_uri: str_at(&root, "$schema"),
        ..IndexDocument::default()
    };
    if let Some(sequence) = root.get("skills").and_then(|e| e.value.as_sequence()) {
        doc.entries = sequence
            .iter()
            .enumerate()
            .map(|(index, node)| entry(index, node))
            .collect();
    }
    for v in schema().validate(&root, text) {
        let problem = Problem {
            code: if v.pointer == "/$schema"
                || (v.pointer.is_empty() && v.message.contains("`$schema`"))
            {
                "schema-uri"
            } else {
                "schema"
            },
            span: v.span,
            pointer: v.pointer.clone(),
            message: v.message,
        };
        match entry_index(&v.pointer) {
            Some(i) if i < doc.entries.len() => doc.entries[i].problems.push(problem),
            _ => doc.problems.push(problem),
        }
    }
    if let Some(fields) = root.as_mapping() {
        let known = known_fields();
        for field in fields {
            let key = field.key.as_key().unwrap_or_default();
            if !known.contains(&key) {
                doc.unknown_fields.push(Problem {
                    code: "unknown-field",
                    span: field.key.span,
                    pointer: format!("/{}", key.replace('~', "~0").replace('/', "~1")),
                    message: format!(
                        "`{key}` is not a field of Agent Skills Discovery v0.2.0 (`$schema`, \
                         `skills`); clients ignore it"
                    ),
                });
            }
        }
    }
    if let Some(sequence) = root.get("skills").and_then(|e| e.value.as_sequence()) {
        beyond_schema(&mut doc.entries, sequence);
    }
    doc
}

/// The checks a schema cannot state: references by RFC 3986, names used twice, and how
/// well each description tells an agent when to use the skill.
fn beyond_schema(entries: &mut [Entry], nodes: &[Node]) {
    let mut names: Vec<String> = Vec::new();
    for (entry, node) in entries.iter_mut().zip(nodes) {
        let at = |field: &str| node.get(field).map_or(node.span, |e| e.value.span);
        let pointer = |field: &str| format!("/skills/{}/{field}", entry.index);
        if let Some(url) = &entry.url
            && let Err(e) = urls::check_reference(url)
        {
            entry.problems.push(Problem {
                code: "url",
                span: at("url"),
                pointer: pointer("url"),
                message: e.to_string(),
            });
        }
        if let Some(name) = &entry.name {
            if names.contains(name) {
                entry.problems.push(Problem {
                    code: "duplicate-name",
                    span: at("name"),
                    pointer: pointer("name"),
                    message: format!("`{name}` is advertised twice; an agent can load only one"),
                });
            }
            names.push(name.clone());
        }
        if let Some(description) = &entry.description {
            for (rule, message) in crate::checks::quality::description_findings(description, false)
            {
                entry.warnings.push(Problem {
                    code: rule,
                    span: at("description"),
                    pointer: pointer("description"),
                    message,
                });
            }
        }
    }
}

fn entry(index: usize, node: &Node) -> Entry {
    Entry {
        index,
        name: str_at(node, "name"),
        kind: match str_at(node, "type").as_deref() {
            Some("skill-md") => Some(ArtifactType::SkillMd),
            Some("archive") => Some(ArtifactType::Archive),
            _ => None,
        },
        description: str_at(node, "description"),
        url: str_at(node, "url"),
        digest: str_at(node, "digest"),
        problems: Vec::new(),
        warnings: Vec::new(),
    }
}

/// The string value of `key` in the mapping `node`. JSON strings are double-quoted scalars.
fn str_at(node: &Node, key: &str) -> Option<String> {
    let value = &node.get(key)?.value;
    let scalar = value.as_scalar()?;
    (scalar.style == crate::yaml::Style::DoubleQuoted).then(|| scalar.text.clone())
}

/// `N` of a pointer `/skills/N` or `/skills/N/...`.
fn entry_index(pointer: &str) -> Option<usize> {
    let rest = pointer.strip_prefix("/skills/")?;
    rest.split('/').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";

    fn index(skills: &str) -> String {
        format!(
            r#"{{"$schema": "{}", "skills": {skills}}}"#,
            super::super::SCHEMA_URI
        )
    }

    fn good_entry(name: &str) -> String {
        format!(
            r#"{{"name": "{name}", "type": "skill-md", "description": "Extracts tables from PDF invoices into CSV. Use when the user asks for invoice line items.", "url": "{name}/SKILL.md", "digest": "{DIGEST}"}}"#
        )
    }

    #[test]
    fn a_good_index_has_no_problem() {
        let doc = parse(&index(&format!("[{}]", good_entry("pdf"))));
        assert!(doc.syntax.is_none() && doc.problems.is_empty() && doc.unknown_fields.is_empty());
        assert_eq!(doc.entries.len(), 1);
        assert!(doc.entries[0].is_valid() && doc.entries[0].warnings.is_empty());
        assert_eq!(doc.entries[0].kind, Some(ArtifactType::SkillMd));
    }

    #[test]
    fn document_level_problems_are_told_apart() {
        let bad_json = parse("{\"skills\": [}");
        assert_eq!(bad_json.syntax.unwrap().code, "invalid-json");
        let wrong = parse(
            r#"{"$schema": "https://schemas.agentskills.io/discovery/0.1.0/schema.json", "skills": [], "version": "1"}"#,
        );
        let codes: Vec<_> = wrong.problems.iter().map(|p| p.code).collect();
        assert_eq!(codes, ["schema-uri", "schema"], "{:?}", wrong.problems);
        assert_eq!(wrong.unknown_fields.len(), 1);
        let missing = parse(r#"{"skills": "x"}"#);
        assert!(missing.problems.iter().any(|p| p.code == "schema-uri"));
        assert!(missing.problems.iter().any(|p| p.pointer == "/skills"));
    }

    #[test]
    fn entry_problems_stay_with_their_entry() {
        let bad = r#"{"name": "Bad_Name", "type": "zip", "description": "", "url": "a b.md", "digest": "sha256:ABC"}"#;
        let doc = parse(&index(&format!(
            "[{}, {bad}, {}]",
            good_entry("a"),
            good_entry("a")
        )));
        assert!(doc.problems.is_empty(), "{:?}", doc.problems);
        assert!(doc.entries[0].is_valid());
        let pointers: Vec<_> = doc.entries[1]
            .problems
            .iter()
            .map(|p| p.pointer.as_str())
            .collect();
        for field in ["name", "type", "description", "url", "digest"] {
            assert!(
                pointers.contains(&format!("/skills/1/{field}").as_str()),
                "{field}: {pointers:?}"
            );
        }
        assert_eq!(doc.entries[2].problems[0].code, "duplicate-name");
    }

    #[test]
    fn vague_descriptions_are_warnings() {
        let entry = good_entry("a").replace(
            "Extracts tables from PDF invoices into CSV. Use when the user asks for invoice line items.",
            "Helps with PDFs.",
        );
        let doc = parse(&index(&format!("[{entry}]")));
        assert!(doc.entries[0].is_valid());
        let codes: Vec<_> = doc.entries[0].warnings.iter().map(|p| p.code).collect();
        assert!(
            codes.contains(&"SW202") && codes.contains(&"SW201"),
            "{codes:?}"
        );
    }
}
