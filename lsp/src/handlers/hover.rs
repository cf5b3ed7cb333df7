//! textDocument/hover: what the frontmatter key or eval field under the cursor means and what
//! its limits are (core's field table, `skillwatch_core::fields`); on a `type` value, what that
//! check does. A frontmatter key the document's profile rejects says so. With vetting on (the
//! `vet` setting, or `[check] vet` of skillwatch.toml), SKILL.md's `name:` also shows the skill's
//! capability card (`skillwatch vet --card`): what it makes the agent do, with the verdict.

use skillwatch_core::checks::Profile;
use skillwatch_core::evalspec::Dialect;
use skillwatch_core::fields::{self, Origin};
use skillwatch_core::skill::{Frontmatter, SkillDocument};
use skillwatch_core::text::{Span, bom_len};
use skillwatch_core::vet::{self, SkillVerdict, Verdict};
use skillwatch_core::yaml::{self, Node};
use tower_lsp_server::ls_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use crate::documents::{Document, DocumentKind};
use crate::locate::{self, On};

/// The hover at `position` under `profile`, or `None` when the cursor is on nothing documented.
/// `vetting`: the skill is vetted (its `name:` shows the capability card).
pub fn hover(doc: &Document, position: Position, profile: Profile, vetting: bool) -> Option<Hover> {
    let offset = doc.offset_of(position);
    let (markdown, span) = match doc.kind {
        DocumentKind::SkillMd => skill_md_hover(doc, offset, profile, vetting)?,
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

fn skill_md_hover(
    doc: &Document,
    offset: usize,
    profile: Profile,
    vetting: bool,
) -> Option<(String, Span)> {
    // core parses the text without its BOM: its offsets are that many bytes early
    let bom = bom_len(&doc.text);
    let parsed = SkillDocument::parse(doc.text.clone());
    let Frontmatter::Parsed { root, .. } = &parsed.frontmatter else {
        return None;
    };
    let at = offset.checked_sub(bom)?;
    let (mut markdown, span) = tree_hover(
        DocumentKind::SkillMd,
        Dialect::SkillValidator,
        root,
        at,
        profile,
    )?;
    let on_name = locate::locate(root, at).is_some_and(|found| {
        found.path.is_empty()
            && matches!(found.on, On::Key(entry) if entry.key.as_key() == Some("name"))
    });
    if vetting
        && on_name
        && let Some(dir) = doc.path.parent()
    {
        let saved = std::fs::read_to_string(&doc.path).is_ok_and(|t| t == doc.text);
        markdown = format!(
            "{}\n\n---\n\n{markdown}",
            card_markdown(&vet::vet_dir(dir), saved)
        );
    }
    Some((markdown, span.shifted(bom)))
}

/// Entries shown in the hover at most; the rest are counted (the CLI shows them all).
const CARD_HOVER_ENTRIES: usize = 30;

/// The capability card as Markdown: the verdict (the worst entry), then a list per kind, the
/// riskiest first, each entry with its place and, when a finding weighs on it, why.
fn card_markdown(v: &SkillVerdict, saved: bool) -> String {
    let mut out = format!(
        "**Capability card: {}** (the verdict is the worst entry)",
        v.verdict.as_str()
    );
    if !saved {
        out.push_str("\n\n*Of the files as saved: save to see your edits.*");
    }
    if v.card.entries.is_empty() {
        out.push_str("\n\nNothing found that the skill makes the agent do.");
        return out;
    }
    let mut shown = 0;
    for (kind, entries) in v.card.groups() {
        if shown == CARD_HOVER_ENTRIES {
            break;
        }
        out.push_str(&format!("\n\n**{}**\n", kind.title()));
        for e in entries.iter().take(CARD_HOVER_ENTRIES - shown) {
            shown += 1;
            let risk = match e.risk {
                Verdict::Clean => "clean".to_string(),
                r => format!("**{}**", r.as_str()),
            };
            let mark = e
                .mark
                .map_or(String::new(), |m| format!(" ({})", m.as_str()));
            let file = e.place.path.strip_prefix(&v.dir).unwrap_or(&e.place.path);
            let more = if e.places > 1 {
                format!(", +{} more", e.places - 1)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "\n- {risk} `{}`{mark} at {}:{}:{}{more}",
                e.subject.replace('`', "'"),
                file.display(),
                e.place.line,
                e.place.column
            ));
            if let Some(why) = e.evidence.first() {
                out.push_str(&format!(": {} {}", why.rule, why.message.replace('`', "'")));
            }
        }
    }
    if shown < v.card.entries.len() {
        out.push_str(&format!(
            "\n\n… {} more: `skillwatch vet --card {}`",
            v.card.entries.len() - shown,
            v.dir.display()
        ));
    }
    out
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
        let h = hover(doc, doc.position_of(offset), profile, false)?;
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
