//! Where a cursor is in a YAML or JSON document, as a path of keys and indices.
//!
//! Hovers resolve the path on the parsed tree ([`locate`]); completion runs while the author is
//! typing, when the text usually does not parse, so it reconstructs the path from indentation
//! (YAML, [`yaml_path_at`]) or bracket nesting (JSON, [`json_path_at`]) instead.

use skillwatch_core::yaml::{Entry, Node, Value};

use skillwatch_core::evalspec::Dialect;
use skillwatch_core::fields::Place;

use crate::documents::DocumentKind;

/// One step from a container to a child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Into the value of a mapping key.
    Key(String),
    /// Into a sequence item (completion paths use 0: the index is not known).
    Index(usize),
}

/// The cursor's place in a parsed tree.
#[derive(Debug)]
pub struct Located<'a> {
    /// Steps from the root to the mapping that holds the entry (or to the value).
    pub path: Vec<Step>,
    /// What the cursor is on.
    pub on: On<'a>,
}

/// The node under the cursor.
#[derive(Debug)]
pub enum On<'a> {
    /// A mapping key (the entry is given, so its value is at hand).
    Key(&'a Entry),
    /// A scalar value, with the key it belongs to when it is a mapping value.
    Value(&'a Node, Option<&'a str>),
}

/// Find the key or scalar value at byte `offset` (inclusive of a span's end, so a cursor just
/// after a word still counts as on it).
pub fn locate(root: &Node, offset: usize) -> Option<Located<'_>> {
    let mut path = Vec::new();
    let mut node = root;
    let mut owner: Option<&str> = None;
    loop {
        match &node.value {
            Value::Mapping(entries) => {
                let hit = entries.iter().find(|e| contains(e.key.span, offset));
                if let Some(entry) = hit {
                    return Some(Located {
                        path,
                        on: On::Key(entry),
                    });
                }
                let entry = entries.iter().find(|e| contains(e.value.span, offset))?;
                let key = entry.key.as_key()?;
                path.push(Step::Key(key.to_string()));
                owner = Some(key);
                node = &entry.value;
            }
            Value::Sequence(items) => {
                let index = items.iter().position(|i| contains(i.span, offset))?;
                path.push(Step::Index(index));
                owner = None;
                node = &items[index];
            }
            Value::Scalar(_) => {
                path.pop_if(|s| matches!(s, Step::Key(_)));
                return Some(Located {
                    path,
                    on: On::Value(node, owner),
                });
            }
        }
    }
}

fn contains(span: skillwatch_core::text::Span, offset: usize) -> bool {
    span.start <= offset && offset <= span.end
}

/// The place (table of fields) of the mapping at `path`, for a document of `kind` written in
/// `dialect` (core's table of places per dialect, [`Place::at`]). `cases_shape`: the
/// evals.json holds a top-level `cases` (SkillEvaluator's shape, whose top level differs from
/// the current shape's).
pub fn place_at(
    kind: DocumentKind,
    dialect: Dialect,
    path: &[Step],
    cases_shape: bool,
) -> Option<Place> {
    let keys: Vec<&str> = path
        .iter()
        .filter_map(|s| match s {
            Step::Key(k) => Some(k.as_str()),
            Step::Index(_) => None,
        })
        .collect();
    let starts_with_index = matches!(path.first(), Some(Step::Index(_)));
    match kind {
        DocumentKind::SkillMd => keys.is_empty().then_some(Place::Frontmatter),
        DocumentKind::EvalYaml | DocumentKind::EvalsJson => {
            Place::at(dialect, &keys, starts_with_index, cases_shape)
        }
    }
}

/// The path of the mapping a YAML line being typed at `offset` belongs to, from indentation
/// alone. `- ` items count as a step into a sequence.
pub fn yaml_path_at(text: &str, offset: usize) -> Vec<Step> {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let current = &text[line_start..offset];
    let (dash, content) = columns(current);
    let mut steps = Vec::new();
    let (mut want, mut after_item) = match dash {
        Some(d) => {
            steps.push(Step::Index(0));
            (d, true)
        }
        None => (content, false),
    };
    for line in text[..line_start].lines().rev() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if want == 0 && !after_item {
            break;
        }
        let (dash, content) = columns(line);
        if let Some(d) = dash
            && d < want
        {
            steps.push(Step::Index(0));
            want = d;
            after_item = true;
            continue;
        }
        let owns = content < want || (after_item && content <= want && dash.is_none());
        if owns && let Some(key) = key_of(&line[content..]) {
            steps.push(Step::Key(key.to_string()));
            want = content;
            after_item = false;
        }
    }
    steps.reverse();
    steps
}

/// Column of a `- ` marker (if the line is a sequence item) and of the line's content.
fn columns(line: &str) -> (Option<usize>, usize) {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    if rest == "-" || rest.starts_with("- ") {
        let after = rest[1..].len() - rest[1..].trim_start_matches(' ').len();
        (Some(indent), indent + 1 + after)
    } else {
        (None, indent)
    }
}

/// The key of a `key:` or `key: value` line.
fn key_of(content: &str) -> Option<&str> {
    let (key, _) = content.split_once(':')?;
    let key = key.trim().trim_matches(['"', '\'']);
    (!key.is_empty() && !key.contains(' ')).then_some(key)
}

/// The path of the JSON object that encloses `offset`, from bracket nesting (strings and
/// escapes respected). `None` when the cursor is not inside an object.
pub fn json_path_at(text: &str, offset: usize) -> Option<Vec<Step>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Kind {
        Object,
        Array,
    }
    let mut stack: Vec<(Kind, Option<String>)> = Vec::new();
    let mut pending_key: Option<String> = None;
    let mut last_string: Option<String> = None;
    let mut chars = text[..offset].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                let start = i + 1;
                let mut end = None;
                let mut escaped = false;
                for (j, d) in chars.by_ref() {
                    match (escaped, d) {
                        (true, _) => escaped = false,
                        (false, '\\') => escaped = true,
                        (false, '"') => {
                            end = Some(j);
                            break;
                        }
                        _ => {}
                    }
                }
                let end = end?; // the cursor is inside a string
                last_string = Some(text[start..end].to_string());
            }
            ':' => pending_key = last_string.take(),
            '{' => stack.push((Kind::Object, pending_key.take())),
            '[' => stack.push((Kind::Array, pending_key.take())),
            '}' | ']' => {
                stack.pop();
                pending_key = None;
            }
            ',' => pending_key = None,
            _ => {}
        }
    }
    if stack.last().map(|(k, _)| *k) != Some(Kind::Object) {
        return None;
    }
    let mut steps = Vec::new();
    for pair in stack.windows(2) {
        match pair[0].0 {
            Kind::Array => steps.push(Step::Index(0)),
            Kind::Object => steps.push(Step::Key(pair[1].1.clone().unwrap_or_default())),
        }
    }
    Some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillwatch_core::yaml;

    fn key(k: &str) -> Step {
        Step::Key(k.into())
    }

    #[test]
    fn locate_finds_keys_and_values() {
        let text = "scenarios:\n  - name: a\n    assertions:\n      - type: output_contains\n";
        let root = yaml::parse(text, 0).unwrap();
        let at = text.find("assertions").unwrap() + 2;
        let found = locate(&root, at).unwrap();
        assert_eq!(found.path, vec![key("scenarios"), Step::Index(0)]);
        assert!(matches!(found.on, On::Key(e) if e.key.as_key() == Some("assertions")));
        let at = text.find("output_contains").unwrap() + 3;
        let found = locate(&root, at).unwrap();
        assert_eq!(
            found.path,
            vec![
                key("scenarios"),
                Step::Index(0),
                key("assertions"),
                Step::Index(0)
            ]
        );
        assert!(matches!(found.on, On::Value(_, Some("type"))));
    }

    #[test]
    fn yaml_path_from_indentation_while_typing() {
        let text = "scenarios:\n  - name: a\n    setup:\n      files:\n        - pa";
        assert_eq!(
            yaml_path_at(text, text.len()),
            vec![
                key("scenarios"),
                Step::Index(0),
                key("setup"),
                key("files"),
                Step::Index(0)
            ]
        );
        let text = "scenarios:\n- name: a\n  pro";
        assert_eq!(
            yaml_path_at(text, text.len()),
            vec![key("scenarios"), Step::Index(0)]
        );
        let text =
            "scenarios:\n  - name: a\n    assertions:\n      - type: output_contains\n        va";
        assert_eq!(
            place_at(
                DocumentKind::EvalYaml,
                Dialect::SkillValidator,
                &yaml_path_at(text, text.len()),
                false
            ),
            Some(Place::Assertion)
        );
        assert_eq!(yaml_path_at("sce", 3), vec![]);
    }

    #[test]
    fn json_path_from_nesting() {
        let text = r#"{"skill_name": "x", "evals": [{"id": 1, "prompt": "a{b", "#;
        assert_eq!(
            json_path_at(text, text.len()),
            Some(vec![key("evals"), Step::Index(0)])
        );
        let legacy = r#"[{"question": "q", "#;
        assert_eq!(
            json_path_at(legacy, legacy.len()),
            Some(vec![Step::Index(0)])
        );
        assert_eq!(
            place_at(
                DocumentKind::EvalsJson,
                Dialect::EvalsJson,
                &[Step::Index(0)],
                false
            ),
            Some(Place::Case)
        );
        let criterion = [
            key("evals"),
            Step::Index(0),
            key("must_not"),
            Step::Index(1),
        ];
        assert_eq!(
            place_at(
                DocumentKind::EvalsJson,
                Dialect::EvalsJson,
                &criterion,
                false
            ),
            Some(Place::Criterion)
        );
        assert_eq!(
            place_at(DocumentKind::EvalsJson, Dialect::EvalsJson, &[], true),
            Some(Place::EvalsJsonCasesTop)
        );
        assert_eq!(json_path_at(r#"{"a": "unterminated"#, 19), None);
    }
}
