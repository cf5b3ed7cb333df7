//! textDocument/hover: what the frontmatter key or eval field under the cursor means and what
//! its limits are (core's field table, `skillwatch_core::fields`); on a `type` value, what that
//! check does. A frontmatter key the document's profile rejects says so.

use skillwatch_core::checks::Profile;
use skillwatch_core::evalspec::Dialect;
use skillwatch_core::fields::{self, Origin};
use skillwatch_core::skill::{Frontmatter, SkillDocument};
use skillwatch_core::text::{Span, bom_len};
use skillwatch_core::yaml::{self, Node};
use tower_lsp_server::ls_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use crate::documents::{Document, DocumentKind};
use crate::locate::{self, On};

/// The hover at `position` under `profile`, or `None` when the cursor is on nothing documented.
pub fn hover(doc: &Document, position: Position, profile: Profile) -> Option<Hover> {
    let offset = doc.offset_of(position);
    let (markdown, span) = match doc.kind {
        DocumentKind::SkillMd => skill_md_hover(doc, offset, profile)?,
        DocumentKind::EvalYaml | DocumentKind::EvalsJson => {
            let root = yaml::parse(&doc.text, 0).ok()?;
            tree_hover(doc.kind, doc.dialect(), &root, offset, profile)?
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

fn skill_md_hover(doc: &Document, offset: usize, profile: Profile) -> Option<(String, Span)> {
    // core parses the text without its BOM: its offsets are that many bytes early
    let bom = bom_len(&doc.text);
    let parsed = SkillDocument::parse(doc.text.clone());
    let Frontmatter::Parsed { root, .. } = &parsed.frontmatter else {
        return None;
    };
    let (markdown, span) = tree_hover(
        DocumentKind::SkillMd,
        Dialect::SkillValidator,
        root,
        offset.checked_sub(bom)?,
        profile,
    )?;
    Some((markdown, span.shifted(bom)))
}

fn tree_hover(
    kind: DocumentKind,
    dialect: Dialect,
    root: &Node,
    offset: usize,
    profile: Profile,
) -> Option<(String, Span)> {
    let found = locate::locate(root, offset)?;
    let cases_shape = root.get("cases").is_some();
    let place = locate::place_at(kind, dialect, &found.path, cases_shape)?;
    match found.on {
        On::Key(entry) => {
            let field = place.field(entry.key.as_key()?)?;
            let mut markdown = fields::hover_markdown(field);
            if field.origin == Origin::ClaudeCode && profile == Profile::AgentSkills {
                markdown.push_str(
                    "\n\n⚠ Not in the Agent Skills specification: the `agentskills` profile \
                     rejects it (SW116).",
                );
            }
            Some((markdown, entry.key.span))
        }
        On::Value(node, Some("type")) => {
            let value = place
                .types()
                .iter()
                .find(|t| Some(t.name) == node.as_str())?;
            Some((fields::type_markdown(value), node.span))
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

    fn hover_as(doc: &Document, needle: &str, profile: Profile) -> Option<String> {
        let offset = doc.text.find(needle).unwrap() + 1;
        let h = hover(doc, doc.position_of(offset), profile)?;
        match h.contents {
            HoverContents::Markup(m) => Some(m.value),
            _ => None,
        }
    }

    fn hover_text(doc: &Document, needle: &str) -> Option<String> {
        hover_as(doc, needle, Profile::Default)
    }

    #[test]
    fn frontmatter_keys_explain_themselves() {
        let d = doc(
            DocumentKind::SkillMd,
            "SKILL.md",
            "---\nname: demo\ndescription: Does things 😀\neffort: high\n---\nname: body text\n",
        );
        let text = hover_text(&d, "description").unwrap();
        assert!(text.contains("1-1024 characters"), "{text}");
        assert!(hover_text(&d, "name: body").is_none());
        let effort = hover_text(&d, "effort").unwrap();
        assert!(
            effort.contains("xhigh") && !effort.contains("rejects"),
            "{effort}"
        );
        let strict = hover_as(&d, "effort", Profile::AgentSkills).unwrap();
        assert!(
            strict.contains("`agentskills` profile rejects it"),
            "{strict}"
        );
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
            "{\"skill_name\": \"demo\", \"evals\": [{\"id\": 1, \"expected_skill\": null, \"should_trigger\": false, \"must_not\": [{\"type\": \"not_contains\", \"phrase\": \"x\"}]}]}",
        );
        assert!(
            hover_text(&d, "expected_skill")
                .unwrap()
                .contains("negative case")
        );
        assert!(hover_text(&d, "skill_name").is_some());
        assert!(hover_text(&d, "should_trigger").is_some());
        assert!(hover_text(&d, "must_not").is_some());
        assert!(
            hover_text(&d, "phrase")
                .unwrap()
                .contains("case-insensitive")
        );
        assert!(hover_text(&d, "not_contains").unwrap().contains("`phrase`"));
    }
}
