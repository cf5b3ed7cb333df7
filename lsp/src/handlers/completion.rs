//! textDocument/completion: frontmatter keys (those the document's profile accepts), eval
//! fields, and assertion types with their fields, all from core's field table
//! (`skillwatch_core::fields`). Works on text that does not parse yet (it is being typed): the
//! context comes from indentation or bracket nesting, see [`crate::locate`].

use skillwatch_core::checks::Profile;
use skillwatch_core::fields::{self, Field, Origin, Place, TypeValue};
use skillwatch_core::text::BOM;
use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, Position, Range, TextEdit,
};

use crate::documents::{Document, DocumentKind};
use crate::locate::{self, Step};

/// Completion items at `position` under `profile` (empty when nothing fits).
pub fn complete(doc: &Document, position: Position, profile: Profile) -> Vec<CompletionItem> {
    let offset = doc.offset_of(position);
    match doc.kind {
        DocumentKind::SkillMd => frontmatter_items(doc, offset, profile),
        DocumentKind::EvalYaml => eval_yaml_items(doc, offset),
        DocumentKind::EvalsJson => evals_json_items(doc, offset),
    }
}

/// The partial word before the cursor on its line, and where it starts.
fn word_before(text: &str, offset: usize) -> (usize, &str) {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..offset];
    let start = line
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map_or(0, |i| i + 1);
    (line_start + start, &line[start..])
}

fn frontmatter_items(doc: &Document, offset: usize, profile: Profile) -> Vec<CompletionItem> {
    let text = &doc.text;
    let Some(region_end) = frontmatter_region(text) else {
        return Vec::new();
    };
    let first_line_end = text.find('\n').unwrap_or(text.len());
    if offset <= first_line_end || offset > region_end {
        return Vec::new();
    }
    let (start, word) = word_before(text, offset);
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    if start != line_start {
        return Vec::new(); // indented, or after `key:`: not a top-level key position
    }
    let present: Vec<&str> = text[first_line_end..region_end]
        .lines()
        .filter_map(|l| l.split_once(':').map(|(k, _)| k))
        .filter(|k| !k.starts_with([' ', '\t', '-', '#']))
        .collect();
    let edit_range = Range {
        start: doc.position_of(start),
        end: doc.position_of(offset),
    };
    Place::Frontmatter
        .known(profile)
        .filter(|f| f.name.starts_with(word) && !present.contains(&f.name))
        .map(|f| key_item(f, format!("{}: {}", f.name, f.value_hint), edit_range))
        .collect()
}

/// End of the frontmatter's YAML (start of the closing fence), or of the text when the
/// frontmatter is not closed yet. `None` when the file does not open with `---`.
fn frontmatter_region(text: &str) -> Option<usize> {
    let text_no_bom = text.strip_prefix(BOM).unwrap_or(text);
    let first = text_no_bom.lines().next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut pos = text.find('\n')? + 1;
    for line in text[pos..].split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']).trim_end();
        if content == "---" || content == "..." {
            return Some(pos);
        }
        pos += line.len();
    }
    Some(text.len())
}

fn eval_yaml_items(doc: &Document, offset: usize) -> Vec<CompletionItem> {
    let text = &doc.text;
    let path = locate::yaml_path_at(text, offset);
    let Some(place) = locate::place_at(DocumentKind::EvalYaml, doc.dialect(), &path, false) else {
        return Vec::new();
    };
    let (start, word) = word_before(text, offset);
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before_word = text[line_start..start].trim_start();
    let edit_range = Range {
        start: doc.position_of(start),
        end: doc.position_of(offset),
    };
    let typed = !place.types().is_empty();
    if typed && before_word.trim_start_matches("- ").trim_end() == "type:" {
        return place
            .types()
            .iter()
            .filter(|t| t.name.starts_with(word))
            .map(|t| type_item(t, t.name.to_string(), edit_range))
            .collect();
    }
    if !(before_word.is_empty() || before_word == "-" || before_word == "- ") {
        return Vec::new(); // after a key's colon: a value, not a key
    }
    let wanted: Option<&[&str]> = if typed {
        current_type(place, text, offset).map(|t| t.fields)
    } else {
        None
    };
    place
        .fields()
        .iter()
        .filter(|f| f.name.starts_with(word))
        .filter(|f| match wanted {
            Some(names) => f.name == "type" || names.contains(&f.name),
            None => true,
        })
        .map(|f| key_item(f, format!("{}: {}", f.name, f.value_hint), edit_range))
        .collect()
}

fn type_item(t: &TypeValue, new_text: String, range: Range) -> CompletionItem {
    CompletionItem {
        label: t.name.to_string(),
        kind: Some(CompletionItemKind::ENUM_MEMBER),
        detail: Some(format!("needs: {}", t.fields.join(", "))),
        documentation: Some(markdown(fields::type_markdown(t))),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text })),
        ..CompletionItem::default()
    }
}

/// The `type:` of the assertion item the cursor is in, looking up to the item's `- ` line.
fn current_type(place: Place, text: &str, offset: usize) -> Option<&'static TypeValue> {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    for line in text[..line_start].lines().rev() {
        let content = line.trim_start().trim_start_matches("- ");
        if let Some(value) = content.strip_prefix("type:") {
            let value = value.trim().trim_matches(['"', '\'']);
            return place.types().iter().find(|t| t.name == value);
        }
        if line.trim_start().starts_with("- ") {
            return None;
        }
    }
    None
}

fn evals_json_items(doc: &Document, offset: usize) -> Vec<CompletionItem> {
    let text = &doc.text;
    // a key position: after `{` or `,`, optionally inside an opening quote
    let (word_start, word) = word_before(text, offset);
    let start = if text[..word_start].ends_with('"') {
        word_start - 1
    } else {
        word_start
    };
    let before = text[..start].trim_end();
    if !(before.ends_with('{') || before.ends_with(',')) {
        return Vec::new();
    }
    let Some(path) = locate::json_path_at(text, start) else {
        return Vec::new();
    };
    let cases_shape = text.contains("\"cases\"");
    let Some(place) = locate::place_at(DocumentKind::EvalsJson, doc.dialect(), &path, cases_shape)
    else {
        return Vec::new();
    };
    let edit_range = Range {
        start: doc.position_of(start),
        end: doc.position_of(offset),
    };
    let legacy_root = matches!(path.first(), Some(Step::Index(_)));
    place
        .fields()
        .iter()
        .filter(|f| f.name.starts_with(word))
        .map(|f| {
            let mut item = key_item(f, format!("\"{}\": ", f.name), edit_range);
            // the names a file's shape uses first: legacy names in a legacy array, else last
            let legacy = f.origin == Origin::Legacy;
            if legacy != legacy_root {
                item.sort_text = Some(format!("1{}", f.name));
            }
            item.filter_text = Some(format!("\"{}", f.name));
            item
        })
        .collect()
}

fn key_item(field: &Field, new_text: String, range: Range) -> CompletionItem {
    CompletionItem {
        label: field.name.to_string(),
        kind: Some(CompletionItemKind::FIELD),
        detail: Some(field.limits.to_string()),
        documentation: Some(markdown(fields::hover_markdown(field))),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text })),
        ..CompletionItem::default()
    }
}

fn markdown(value: String) -> Documentation {
    Documentation::MarkupContent(MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn doc(kind: DocumentKind, name: &str, text: &str) -> Document {
        let path = PathBuf::from(format!("/s/demo/{name}"));
        let uri = format!("file://{}", path.display()).parse().unwrap();
        Document::new(uri, path, kind, 1, text.into())
    }

    fn labels_at_end(d: &Document) -> Vec<String> {
        labels_as(d, Profile::Default)
    }

    fn labels_as(d: &Document, profile: Profile) -> Vec<String> {
        complete(d, d.position_of(d.text.len()), profile)
            .into_iter()
            .map(|i| i.label)
            .collect()
    }

    #[test]
    fn frontmatter_keys_not_yet_present() {
        let d = doc(DocumentKind::SkillMd, "SKILL.md", "---\nname: demo\n");
        let labels = labels_at_end(&d);
        assert!(labels.contains(&"description".to_string()), "{labels:?}");
        assert!(!labels.contains(&"name".to_string()));
        let d = doc(DocumentKind::SkillMd, "SKILL.md", "---\nname: demo\nallo");
        assert_eq!(labels_at_end(&d), vec!["allowed-tools"]);
        let d = doc(DocumentKind::SkillMd, "SKILL.md", "---\nname: demo\n");
        let all = labels_at_end(&d);
        for field in ["when_to_use", "arguments", "effort", "paths", "shell"] {
            assert!(all.contains(&field.to_string()), "{field}: {all:?}");
        }
        // the strict profile rejects Claude Code's fields: they are not offered
        let strict = labels_as(&d, Profile::AgentSkills);
        assert_eq!(
            strict,
            [
                "description",
                "license",
                "compatibility",
                "metadata",
                "allowed-tools"
            ]
        );
        let d = doc(
            DocumentKind::SkillMd,
            "SKILL.md",
            "---\nname: a\n---\nbody ",
        );
        assert!(labels_at_end(&d).is_empty());
    }

    #[test]
    fn assertion_types_and_their_fields() {
        let d = doc(
            DocumentKind::EvalYaml,
            "tests/eval.yaml",
            "scenarios:\n  - name: a\n    assertions:\n      - type: output_",
        );
        let labels = labels_at_end(&d);
        assert!(labels.contains(&"output_matches".to_string()), "{labels:?}");
        assert!(!labels.contains(&"file_exists".to_string()));
        let d = doc(
            DocumentKind::EvalYaml,
            "tests/eval.yaml",
            "scenarios:\n  - name: a\n    assertions:\n      - type: output_matches\n        ",
        );
        assert_eq!(labels_at_end(&d), vec!["type", "pattern"]);
        let d = doc(
            DocumentKind::EvalYaml,
            "tests/eval.yaml",
            "scenarios:\n  - name: a\n    time",
        );
        assert_eq!(labels_at_end(&d), vec!["timeout"]);
    }

    #[test]
    fn evals_json_case_keys() {
        let d = doc(
            DocumentKind::EvalsJson,
            "evals/evals.json",
            "{\"skill_name\": \"demo\", \"evals\": [{\"id\": 1, \"pro",
        );
        let items = complete(&d, d.position_of(d.text.len()), Profile::Default);
        assert_eq!(items.len(), 1);
        let Some(CompletionTextEdit::Edit(edit)) = &items[0].text_edit else {
            panic!()
        };
        assert_eq!(edit.new_text, "\"prompt\": ");
    }
}
