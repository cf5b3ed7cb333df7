//! textDocument/hover: what the frontmatter key or eval field under the cursor means and what
//! its limits are; on an assertion's `type` value, what that assertion checks.

use skillwatch_core::skill::{Frontmatter, SkillDocument};
use skillwatch_core::text::bom_len;
use skillwatch_core::yaml::{self, Node};
use tower_lsp_server::ls_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use crate::documents::{Document, DocumentKind};
use crate::fields;
use crate::locate::{self, On};

/// The hover at `position`, or `None` when the cursor is on nothing documented.
pub fn hover(doc: &Document, position: Position) -> Option<Hover> {
    let offset = doc.offset_of(position);
    let (markdown, span) = match doc.kind {
        DocumentKind::SkillMd => skill_md_hover(doc, offset)?,
        DocumentKind::EvalYaml | DocumentKind::EvalsJson => {
            let root = yaml::parse(&doc.text, 0).ok()?;
            tree_hover(doc.kind, &root, offset)?
        }
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown,
        }),
        range: Some(doc.range_of(span)),
    })
}

fn skill_md_hover(doc: &Document, offset: usize) -> Option<(String, skillwatch_core::text::Span)> {
    // parse the editor's text as is: no BOM handling needed for positions inside frontmatter
    // unless a BOM is present, in which case core's offsets are 3 bytes early
    let bom = bom_len(&doc.text);
    let parsed = SkillDocument::parse(doc.text.clone());
    let Frontmatter::Parsed { root, .. } = &parsed.frontmatter else {
        return None;
    };
    let (markdown, span) = tree_hover(DocumentKind::SkillMd, root, offset.checked_sub(bom)?)?;
    Some((markdown, span.shifted(bom)))
}

fn tree_hover(
    kind: DocumentKind,
    root: &Node,
    offset: usize,
) -> Option<(String, skillwatch_core::text::Span)> {
    let found = locate::locate(root, offset)?;
    match found.on {
        On::Key(entry) => {
            let table = locate::fields_at(kind, &found.path)?;
            let field = fields::find(table, entry.key.as_key()?)?;
            Some((fields::hover_markdown(field), entry.key.span))
        }
        On::Value(node, Some("type")) if kind == DocumentKind::EvalYaml => {
            let table = locate::fields_at(kind, &found.path)?;
            if !std::ptr::eq(table, fields::EVAL_YAML_ASSERTION_FIELDS) {
                return None;
            }
            let assertion = fields::assertion_type(node.as_str()?)?;
            Some((fields::assertion_markdown(assertion), node.span))
        }
        On::Value(..) => None,
    }
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

    fn hover_text(doc: &Document, needle: &str) -> Option<String> {
        let offset = doc.text.find(needle).unwrap() + 1;
        let h = hover(doc, doc.position_of(offset))?;
        match h.contents {
            HoverContents::Markup(m) => Some(m.value),
            _ => None,
        }
    }

    #[test]
    fn frontmatter_keys_explain_themselves() {
        let d = doc(
            DocumentKind::SkillMd,
            "SKILL.md",
            "---\nname: demo\ndescription: Does things 😀\n---\nname: body text\n",
        );
        let text = hover_text(&d, "description").unwrap();
        assert!(text.contains("1-1024 characters"), "{text}");
        assert!(hover_text(&d, "name: body").is_none());
    }

    #[test]
    fn eval_fields_and_assertion_types() {
        let d = doc(
            DocumentKind::EvalYaml,
            "tests/eval.yaml",
            "scenarios:\n  - name: a\n    timeout: 30\n    assertions:\n      - type: output_matches\n        pattern: x\n",
        );
        assert!(hover_text(&d, "timeout").unwrap().contains("default 120"));
        assert!(
            hover_text(&d, "output_matches")
                .unwrap()
                .contains("`pattern`")
        );
        assert!(
            hover_text(&d, "pattern")
                .unwrap()
                .contains("regular expression")
        );
    }

    #[test]
    fn evals_json_fields() {
        let d = doc(
            DocumentKind::EvalsJson,
            "evals/evals.json",
            "{\"skill_name\": \"demo\", \"evals\": [{\"id\": 1, \"expected_skill\": null}]}",
        );
        assert!(
            hover_text(&d, "expected_skill")
                .unwrap()
                .contains("negative case")
        );
        assert!(hover_text(&d, "skill_name").is_some());
    }
}
