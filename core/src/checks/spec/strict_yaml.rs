//! SW120: YAML the reference validator refuses. skills-ref parses frontmatter with StrictYAML,
//! which rejects flow collections, anchors, aliases and explicit tags although they are valid
//! YAML. Our tree does not keep anchors or tags on collections, so this rule reads the
//! parser's events that [`crate::yaml::parse_marked`] kept from the frontmatter's one parse.

use super::super::context::Ctx;
use super::super::{Edit, Fix};
use crate::text::Span;
use crate::yaml::{self, Mark, MarkKind, Node, Value};

/// Report each construct once; nested flow collections are covered by the outermost one.
/// `marks` are the events of the frontmatter `fm`, which parsed to `root`.
pub(super) fn check(ctx: &mut Ctx<'_>, fm: Span, root: &Node, marks: &[Mark]) {
    // The parse keeps no events for a frontmatter without one of the characters that
    // write these constructs: nothing to report then.
    if marks.is_empty() {
        return;
    }
    let doc = ctx.doc;
    let text = doc.slice(fm);
    for (span, what) in findings(text, fm.start, marks) {
        let shown = super::truncate(doc.slice(span), 40);
        let fix = block_fix(ctx, root, span);
        ctx.report_fix(
            "SW120",
            span,
            format!(
                "{what} `{shown}` is valid YAML but the reference validator skills-ref refuses it"
            ),
            fix,
        );
    }
}

/// A block collection in place of the one-line flow collection at `span`, when it is the
/// whole value of a `key: [...]` or `key: {...}` line (a comment may follow), its items are
/// scalars, and the block form parses to the same value (so a quoted item that needs its
/// quotes keeps them, or no fix is offered).
///
/// The block form is parsed alone, not in the frontmatter: its items are indented past the
/// key, and the line after the flow list could not be indented past the key either (YAML
/// would have refused it), so the context cannot change what the items mean; and parsing the
/// whole frontmatter again for each list is a measurable share of a corpus check
/// (docs/benchmarks.md).
fn block_fix(ctx: &Ctx<'_>, root: &Node, span: Span) -> Option<Fix> {
    let text = &ctx.doc.text;
    let flow = collection_at(root, span.start)?;
    let slice = |n: &Node| &text[n.span.start..n.span.end];
    // Each item's block line, after the indentation; None when an item is not a scalar.
    let (lines, title): (Option<Vec<String>>, _) = match &flow.value {
        Value::Sequence(items) => (
            items
                .iter()
                .map(|i| i.as_scalar().map(|_| format!("- {}", slice(i))))
                .collect(),
            "Write the list as a block sequence (one `- item` per line)",
        ),
        Value::Mapping(entries) => (
            entries
                .iter()
                .map(|e| {
                    let scalars = e.key.as_scalar().is_some() && e.value.as_scalar().is_some();
                    let written = !e.value.span.is_empty();
                    (scalars && written).then(|| format!("{}: {}", slice(&e.key), slice(&e.value)))
                })
                .collect(),
            "Write the mapping as a block mapping (one `key: value` per line)",
        ),
        Value::Scalar(_) => return None,
    };
    let lines = lines.filter(|l| !l.is_empty())?;
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[span.end..]
        .find('\n')
        .map_or(text.len(), |i| span.end + i);
    let before = &text[line_start..span.start];
    let key = before.trim_end();
    let after = &text[span.end..line_end];
    // A comment after the list stays on the key's line: `tags: # note`.
    let comment = after.trim();
    let one_line = !text[span.start..span.end].contains('\n');
    let entry = key.ends_with(':') && !key.trim_start().starts_with('-');
    if !one_line || !entry || !(comment.is_empty() || comment.starts_with('#')) {
        return None;
    }
    let indent = " ".repeat(before.len() - before.trim_start().len() + 2);
    let newline = ctx.newline();
    let mut replacement = if comment.is_empty() {
        String::new()
    } else {
        format!(" {comment}")
    };
    for line in lines {
        replacement.push_str(&format!("{newline}{indent}{line}"));
    }
    let edit = Edit {
        // to the end of the comment, not of the line: a CRLF's `\r` stays
        span: Span::new(line_start + key.len(), span.end + after.trim_end().len()),
        replacement,
    };
    let alone = yaml::parse(&format!("key:{}", edit.replacement), 0).ok()?;
    let same = alone.get("key")?.value.to_json() == flow.to_json();
    same.then(|| Fix {
        title: title.into(),
        edits: vec![edit],
    })
}

/// The collection that starts at `start`, anywhere in the tree.
fn collection_at(node: &Node, start: usize) -> Option<&Node> {
    match &node.value {
        Value::Scalar(_) => None,
        _ if node.span.start == start => Some(node),
        Value::Sequence(items) => items.iter().find_map(|i| collection_at(i, start)),
        Value::Mapping(entries) => entries.iter().find_map(|e| collection_at(&e.value, start)),
    }
}

/// (span, description) of every flow collection, anchor, alias and tag among the events
/// `marks` of `text` (whose spans start at `base`).
///
/// The events are the ones a second parse of `text` would give: the frontmatter parsed
/// without error, so [`crate::yaml::parse_marked`] saw the whole event stream, and its
/// spans are converted from character indices to bytes exactly as this rule did.
fn findings(text: &str, base: usize, marks: &[Mark]) -> Vec<(Span, &'static str)> {
    let mut out = Vec::new();
    // One entry per open collection: Some(start) for a flow collection, None for a block one.
    let mut open: Vec<Option<usize>> = Vec::new();
    for mark in marks {
        let Span { start, end } = mark.span;
        let in_flow = open.iter().any(Option::is_some);
        match mark.kind {
            MarkKind::Open => {
                let flow = text[start - base..].starts_with(['[', '{']);
                open.push(flow.then_some(start));
                if !in_flow {
                    note_anchor_and_tag(&mut out, mark);
                }
            }
            MarkKind::Close => {
                if let Some(Some(flow_start)) = open.pop()
                    && !open.iter().any(Option::is_some)
                {
                    let name = if text[flow_start - base..].starts_with('[') {
                        "flow sequence"
                    } else {
                        "flow mapping"
                    };
                    out.push((Span::new(flow_start, end.max(flow_start)), name));
                }
            }
            MarkKind::Scalar if !in_flow => note_anchor_and_tag(&mut out, mark),
            MarkKind::Alias if !in_flow => out.push((mark.span, "alias")),
            _ => {}
        }
    }
    out.sort_by_key(|(s, _)| s.start);
    out
}

fn note_anchor_and_tag(out: &mut Vec<(Span, &'static str)>, mark: &Mark) {
    if mark.anchored {
        out.push((mark.span, "anchored value"));
    }
    if mark.tagged {
        out.push((mark.span, "tagged value"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(&str, &'static str)> {
        let mut marks = Vec::new();
        crate::yaml::parse_marked(text, 0, Some(&mut marks)).unwrap();
        findings(text, 0, &marks)
            .into_iter()
            .map(|(s, k)| (&text[s.start..s.end], k))
            .collect()
    }

    #[test]
    fn finds_flow_collections_once() {
        assert_eq!(
            kinds("tags: [a, [b]]\nm: {x: y}\n"),
            vec![("[a, [b]]", "flow sequence"), ("{x: y}", "flow mapping")]
        );
    }

    #[test]
    fn a_flow_collection_ends_at_its_bracket_not_after_a_comment() {
        assert_eq!(
            kinds("tags: [a, b]   # the tags\nm: {x: y} # m\n"),
            vec![("[a, b]", "flow sequence"), ("{x: y}", "flow mapping")]
        );
    }

    #[test]
    fn finds_anchors_aliases_and_tags() {
        let found = kinds("a: &x foo\nb: *x\nc: !!str 1\n");
        let names: Vec<_> = found.iter().map(|(_, k)| *k).collect();
        assert_eq!(names, vec!["anchored value", "alias", "tagged value"]);
    }

    #[test]
    fn block_yaml_and_brackets_inside_text_pass() {
        assert!(kinds("a: foo [bar] baz\nb:\n  - x\nc: '[q]'\n").is_empty());
    }

    /// The rule as it was: a second parse of the frontmatter, kept as the oracle the kept
    /// events must agree with.
    fn findings_by_reparse(text: &str, base: usize) -> Vec<(Span, &'static str)> {
        use saphyr_parser::{Event, Parser};
        let offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let byte = |index: usize| base + offsets.get(index).copied().unwrap_or(text.len());
        let marks: Vec<Mark> = Parser::new_from_str(text)
            .map_while(Result::ok)
            .filter_map(|(event, span)| {
                let (kind, anchor, tagged) = match event {
                    Event::SequenceStart(a, t) | Event::MappingStart(a, t) => {
                        (MarkKind::Open, a, t.is_some())
                    }
                    Event::SequenceEnd | Event::MappingEnd => (MarkKind::Close, 0, false),
                    Event::Scalar(_, _, a, t) => (MarkKind::Scalar, a, t.is_some()),
                    Event::Alias(_) => (MarkKind::Alias, 0, false),
                    _ => return None,
                };
                let mut span = Span::new(byte(span.start.index()), byte(span.end.index()));
                // As parse_marked: a flow collection ends at its bracket, not after a comment.
                if kind == MarkKind::Close && text[span.start - base..].starts_with([']', '}']) {
                    span.end = span.start + 1;
                }
                let (anchored, tagged) = (anchor != 0, tagged);
                Some(Mark {
                    kind,
                    span,
                    anchored,
                    tagged,
                })
            })
            .collect();
        findings(text, base, &marks)
    }

    #[test]
    fn kept_events_agree_with_a_second_parse_on_the_corpus() {
        use crate::skill::{Frontmatter, SkillDocument};
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus");
        let mut checked = 0;
        for dir in crate::skill::discover(&root) {
            let Ok(text) = std::fs::read_to_string(dir.join("SKILL.md")) else {
                continue;
            };
            let doc = SkillDocument::parse(text);
            let Frontmatter::Parsed { span, marks, .. } = &doc.frontmatter else {
                continue;
            };
            let yaml = doc.slice(*span);
            assert_eq!(
                findings(yaml, span.start, marks),
                findings_by_reparse(yaml, span.start),
                "{}",
                dir.display()
            );
            checked += 1;
        }
        assert!(
            checked > 0,
            "no corpus frontmatter under {}",
            root.display()
        );
    }

    /// `added` (frontmatter lines after `license`, with CRLF line ends when `crlf`) has one
    /// SW120 finding, whose fix gives a text that holds `expected` and has no SW120 left.
    fn block_fixed(added: &str, crlf: bool, expected: &str) {
        use crate::checks::test_support::{check_rule, fixed, good_with};
        let mut text = good_with(
            "license: Apache-2.0",
            &format!("license: Apache-2.0\n{added}"),
        );
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        let found = check_rule(&text, "SW120");
        assert_eq!(found.len(), 1, "{added}: {found:?}");
        let repaired = fixed(&text, &found[0]);
        assert!(repaired.contains(expected), "{repaired:?}");
        assert!(check_rule(&repaired, "SW120").is_empty(), "{repaired:?}");
    }

    /// `added` has SW120 findings, none with a fix.
    fn no_block_fix(added: &str) {
        use crate::checks::test_support::{check_rule, good_with};
        let text = good_with(
            "license: Apache-2.0",
            &format!("license: Apache-2.0\n{added}"),
        );
        let found = check_rule(&text, "SW120");
        assert!(!found.is_empty(), "{added}");
        assert!(found.iter().all(|d| d.fix.is_none()), "{added}: {found:?}");
    }

    #[test]
    fn a_one_line_flow_list_is_rewritten_as_a_block_list() {
        block_fixed(
            "allowed-tools: [Read, 'Bash(git:*)', \"Grep\"]",
            false,
            "allowed-tools:\n  - Read\n  - 'Bash(git:*)'\n  - \"Grep\"\n",
        );
        // Nested under a key, and with CRLF line ends.
        block_fixed(
            "x:\n  tags: [a, b]",
            true,
            "x:\r\n  tags:\r\n    - a\r\n    - b\r\n",
        );
        // A comment after the list stays on the key's line.
        block_fixed(
            "tags: [a, 'b # c'] # the tags",
            true,
            "\r\ntags: # the tags\r\n  - a\r\n  - 'b # c'\r\n",
        );
    }

    #[test]
    fn a_one_line_flow_mapping_is_rewritten_as_a_block_mapping() {
        block_fixed(
            "settings: {author: Jo, version: \"1.0\", 'a b': 'c: d'} # kept",
            false,
            "settings: # kept\n  author: Jo\n  version: \"1.0\"\n  'a b': 'c: d'\nmetadata:",
        );
        for case in ["settings: {a: [b]}", "settings: {a}", "settings: {}"] {
            no_block_fix(case);
        }
    }

    #[test]
    fn no_block_list_where_it_would_not_be_the_same_list() {
        for case in [
            "tags:\n  - [a, b]",
            "tags: [a, [b]]",
            "tags: [a, {b: c}]",
            "tags: []",
            "tags: [a,\n  b]",
        ] {
            no_block_fix(case);
        }
    }

    #[test]
    fn non_ascii_offsets_are_bytes() {
        let text = "d: é\nt: [ü]\n";
        assert_eq!(kinds(text), vec![("[ü]", "flow sequence")]);
    }
}
