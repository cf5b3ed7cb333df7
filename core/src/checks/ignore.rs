//! Inline `skillwatch-ignore` comments: a finding the author has looked at and accepts (an
//! example key in a tutorial, a link to the team's own site) is silenced where it stands,
//! instead of turning its rule off for the whole repository.
//!
//! A directive is the word `skillwatch-ignore` followed by rule ids, on any line of a checked
//! text, inside whatever comment the file has:
//!
//! ```text
//! <!-- skillwatch-ignore SW307: our own docs site -->     (Markdown body)
//! # skillwatch-ignore SW116                                (frontmatter, eval.yaml, scripts)
//! version: 1.0  # skillwatch-ignore SW116                  (at the end of the line)
//! ```
//!
//! Alone on its line (only a comment opener before it), it covers the next line; after other
//! text, its own line. Anything after the ids is a free-form reason. A finding is covered when
//! its span starts on a covered line. Two findings keep directives honest: SW001 for a
//! directive naming no rule or an unknown id, SW002 for an id that silences nothing there (the
//! finding it was for has gone), with a fix that removes it.
//!
//! SKILL.md and the eval files are always searched for directives. The skill's other files
//! (scripts, references), scanned for credentials only, are searched only when they have a
//! finding, so their check stays one pass; an unused directive there goes unreported.

use std::path::Path;

use super::{Category, CheckOptions, Diagnostic, Edit, Fix, InlineIgnore, Profile, catalog};
use crate::text::{LineIndex, Span};

/// The word that starts a directive.
pub const DIRECTIVE: &str = "skillwatch-ignore";

/// Characters that open a comment in the files skills hold (`<!--`, `#`, `//`, `/*`, `--`,
/// `;`, `%`), allowed before a directive that stands alone on its line.
const COMMENT_OPENERS: &[u8] = b"<!-#/*;%";

/// One directive as written.
#[derive(Debug)]
struct Directive {
    /// The span of `skillwatch-ignore` itself.
    word: Span,
    /// 0-based line whose findings it covers.
    covers: usize,
    /// The ids it names, as written (`SW301`), each with its span.
    ids: Vec<Span>,
    /// The whole line, with its terminator, when nothing but the comment is on it: what is
    /// removed once it names nothing in use.
    own_line: Option<Span>,
}

/// A finding a directive silenced, kept so reports can show it as suppressed rather than
/// let it vanish: SARIF marks it `suppressions: [{kind: "inSource"}]`, so code scanning shows
/// the alert as dismissed with the author's reason, not as fixed; the summaries count it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ignored {
    /// The finding as it would have been reported.
    pub finding: Diagnostic,
    /// The directive's words after its ids (`our own docs site`); empty when none.
    pub reason: String,
}

impl AsMut<Diagnostic> for Ignored {
    fn as_mut(&mut self) -> &mut Diagnostic {
        &mut self.finding
    }
}

/// Move the findings in `diagnostics` that a directive in `text` covers out (returned), and
/// add SW001/SW002 for the directives themselves. Runs before the rule levels of `[check]`
/// and the flags apply, so a directive for a finding the configuration silences still counts
/// as used.
///
/// A finding a directive covers but `options.inline_ignore` does not let it silence stays,
/// with a note that says so: a skill under vetting that tries to silence a finding about
/// itself shows it. With [`InlineIgnore::None`] the directives themselves are not judged
/// (no SW001/SW002): they do nothing.
pub(crate) fn apply(
    path: &Path,
    text: &str,
    diagnostics: &mut Vec<Diagnostic>,
    options: &CheckOptions,
) -> Vec<Ignored> {
    let profile = options.profile;
    if memchr::memmem::find(text.as_bytes(), DIRECTIVE.as_bytes()).is_none() {
        return Vec::new();
    }
    let lines = LineIndex::new(text);
    let directives = parse(text, &lines);
    let mut used: Vec<Vec<bool>> = directives
        .iter()
        .map(|d| vec![false; d.ids.len()])
        .collect();
    // by the line they cover, so each finding looks at its line's directives only (a file of
    // many findings and many directives stays linear)
    let mut by_line: Vec<usize> = (0..directives.len()).collect();
    by_line.sort_by_key(|&k| directives[k].covers);
    let mut ignored = Vec::new();
    diagnostics.retain_mut(|finding| {
        let line = lines.line_of(finding.span.start);
        let from = by_line.partition_point(|&k| directives[k].covers < line);
        let mut covered_by = None;
        for &k in by_line[from..]
            .iter()
            .take_while(|&&k| directives[k].covers == line)
        {
            for (id, used) in directives[k].ids.iter().zip(used[k].iter_mut()) {
                if &text[id.start..id.end] == finding.rule {
                    *used = true;
                    covered_by.get_or_insert(k);
                }
            }
        }
        let Some(k) = covered_by else { return true };
        if !options.inline_ignore.honours(finding.rule) {
            finding.message.push_str(match options.inline_ignore {
                InlineIgnore::None => {
                    " (its `skillwatch-ignore` comment is disregarded: --no-inline-ignore)"
                }
                _ => " (its `skillwatch-ignore` comment is disregarded: [check] inline-ignore keeps security findings)",
            });
            return true;
        }
        ignored.push(Ignored {
            finding: finding.clone(),
            reason: reason(text, &directives[k], &lines),
        });
        false
    });
    if options.inline_ignore == InlineIgnore::None {
        return ignored;
    }
    for (directive, used) in directives.iter().zip(&used) {
        report(path, text, directive, used, profile, diagnostics);
    }
    ignored
}

/// The words after a directive's ids, up to the end of its line, without the punctuation
/// around them (`: our own site -->` gives `our own site`).
fn reason(text: &str, directive: &Directive, lines: &LineIndex) -> String {
    let after = directive.ids.last().map_or(directive.word.end, |id| id.end);
    let end = lines.line_span(text, lines.line_of(after)).end;
    let rest = text[after..end].trim();
    let rest = rest
        .strip_suffix("-->")
        .or_else(|| rest.strip_suffix("*/"))
        .unwrap_or(rest);
    rest.trim()
        .trim_start_matches([':', '-', '\u{2014}', ','])
        .trim()
        .to_string()
}

/// Every directive in `text`.
fn parse(text: &str, lines: &LineIndex) -> Vec<Directive> {
    let bytes = text.as_bytes();
    memchr::memmem::find_iter(bytes, DIRECTIVE.as_bytes())
        .filter_map(|at| {
            let end = at + DIRECTIVE.len();
            // part of a longer word (`my-skillwatch-ignore`), but not `<!--skillwatch-ignore`
            let word_before = at > 0
                && (is_word_byte(bytes[at - 1])
                    || (bytes[at - 1] == b'-' && at > 1 && is_word_byte(bytes[at - 2])));
            let word_after = bytes
                .get(end)
                .is_some_and(|&b| is_word_byte(b) || b == b'-');
            if word_before || word_after {
                return None;
            }
            let line = lines.line_of(at);
            let line_span = lines.line_span(text, line);
            let before = text[line_span.start..at].trim();
            let alone = before.bytes().all(|b| COMMENT_OPENERS.contains(&b));
            Some(Directive {
                word: Span::new(at, end),
                covers: if alone { line + 1 } else { line },
                ids: ids_after(text, end, line_span.end),
                own_line: alone.then(|| Span::new(line_span.start, lines.line_start(line + 1))),
            })
        })
        .collect()
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The ids after a directive word ending at `from`, up to `line_end`: tokens shaped like a
/// rule id (`SW` and digits), separated by spaces or commas. The first other token starts the
/// reason.
fn ids_after(text: &str, from: usize, line_end: usize) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut ids = Vec::new();
    let mut i = from;
    loop {
        while i < line_end && matches!(bytes[i], b' ' | b'\t' | b',') {
            i += 1;
        }
        let start = i;
        while i < line_end && bytes[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let token = &text[start..i];
        let is_id = token.len() > 2
            && token.starts_with("SW")
            && token[2..].bytes().all(|b| b.is_ascii_digit());
        if !is_id {
            return ids;
        }
        ids.push(Span::new(start, i));
    }
}

/// SW001 and SW002 for one directive, given which of its ids silenced something.
fn report(
    path: &Path,
    text: &str,
    directive: &Directive,
    used: &[bool],
    profile: Profile,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let finding = |rule: &'static str, span: Span, message: String, fix: Option<Fix>| Diagnostic {
        rule,
        severity: catalog::severity(rule, profile),
        path: path.to_path_buf(),
        span,
        message,
        fix,
    };
    if directive.ids.is_empty() {
        diagnostics.push(finding(
            "SW001",
            directive.word,
            format!("`{DIRECTIVE}` names no rule: list the ids it silences (`{DIRECTIVE} SW301`)"),
            None,
        ));
        return;
    }
    for (k, (&id, &used)) in directive.ids.iter().zip(used).enumerate() {
        let written = &text[id.start..id.end];
        match catalog::rule(written) {
            None => diagnostics.push(finding(
                "SW001",
                id,
                format!(
                    "`{written}` is not a rule id, so `{DIRECTIVE}` silences nothing with it \
                     (`skillwatch check --list-rules`)"
                ),
                None,
            )),
            // a check of the text never reports a results rule (SW501 comes from the history
            // of runs), so a directive for one cannot be judged unused here
            Some(rule) if !used && rule.category != Category::Results => diagnostics.push(finding(
                "SW002",
                id,
                format!(
                    "`{DIRECTIVE} {written}` silences nothing: no {written} finding starts \
                         on the line it covers"
                ),
                removal(directive, k),
            )),
            Some(_) => {}
        }
    }
}

/// The fix for the `k`th id of `directive` being unused: drop the id (and a separator) when
/// the directive names others, else the whole line when the directive stands alone on it. A
/// lone id at the end of a line gets no fix: where its comment starts depends on the file's
/// syntax.
fn removal(directive: &Directive, k: usize) -> Option<Fix> {
    let ids = &directive.ids;
    let span = match (k.checked_sub(1).map(|j| ids[j]), ids.get(k + 1)) {
        (Some(previous), _) => Span::new(previous.end, ids[k].end),
        (None, Some(next)) => Span::new(ids[k].start, next.start),
        (None, None) => directive.own_line?,
    };
    Some(Fix {
        title: "Remove the unused id".into(),
        edits: vec![Edit {
            span,
            replacement: String::new(),
        }],
    })
}

/// The file a [`Silencer`] writes into: the comment syntax and the data that must not
/// change differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A SKILL.md (its text without a BOM): `# ...` in the frontmatter, `<!-- ... -->` in the
    /// Markdown body.
    SkillMd,
    /// An eval.yaml: `# ...`.
    EvalYaml,
}

/// Where `skillwatch-ignore` lines can go in one text, parsed once for every finding an
/// editor asks about.
pub struct Silencer<'t> {
    target: Target,
    text: &'t str,
    lines: LineIndex,
    /// Where a SKILL.md's Markdown body starts: comments from there on are HTML ones.
    body_start: Option<usize>,
    /// The YAML data (frontmatter or eval file) that an inserted line must leave unchanged.
    data: Option<serde_json::Value>,
}

impl<'t> Silencer<'t> {
    /// Parse `text` as a `target` file.
    pub fn new(target: Target, text: &'t str) -> Silencer<'t> {
        let (body_start, data) = parse_data(target, text);
        Silencer {
            target,
            text,
            lines: LineIndex::new(text),
            body_start,
            data,
        }
    }

    /// The edit that silences `rule` on the line holding `offset`: a directive line inserted
    /// above it, indented like it. `None` where no line can go without changing what the file
    /// says: above the first line (a SKILL.md's opening `---`), or inside a multi-line YAML
    /// value, where a `#` line would become part of the text (checked by parsing the file
    /// again and comparing its data).
    pub fn edit(&self, offset: usize, rule: &str) -> Option<Edit> {
        let text = self.text;
        let line = self.lines.line_of(offset);
        if line == 0 {
            return None;
        }
        let span = self.lines.line_span(text, line);
        let content = &text[span.start..span.end];
        let indent = &content[..content.len() - content.trim_start().len()];
        let newline = if text[span.end..].starts_with("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        let in_markdown = self.body_start.is_some_and(|body| offset >= body);
        let directive = if in_markdown {
            format!("<!-- {DIRECTIVE} {rule} -->")
        } else {
            format!("# {DIRECTIVE} {rule}")
        };
        let edit = Edit {
            span: Span::empty(span.start),
            replacement: format!("{indent}{directive}{newline}"),
        };
        if in_markdown {
            return Some(edit);
        }
        // a SKILL.md's frontmatter parses the same without the body after it, which may be
        // large: only the part up to the body is copied and parsed again
        let head = &text[..self.body_start.unwrap_or(text.len())];
        let after = [&head[..span.start], &edit.replacement, &head[span.start..]].concat();
        (self.data == parse_data(self.target, &after).1).then_some(edit)
    }
}

/// A `target` file's body start (SKILL.md) and its YAML data, `None` when it does not parse.
fn parse_data(target: Target, text: &str) -> (Option<usize>, Option<serde_json::Value>) {
    use crate::evalspec::{FileKind, parse_tree};
    use crate::skill::{Frontmatter, SkillDocument};
    match target {
        Target::SkillMd => {
            let doc = SkillDocument::parse(text.to_owned());
            let data = match &doc.frontmatter {
                Frontmatter::Parsed { root, .. } => Some(root.to_json()),
                _ => None,
            };
            (Some(doc.body.start), data)
        }
        Target::EvalYaml => (
            None,
            parse_tree(FileKind::EvalYaml, text)
                .ok()
                .map(|root| root.to_json()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Severity;

    fn found(rule: &'static str, text: &str, needle: &str) -> Diagnostic {
        let start = text.find(needle).unwrap();
        Diagnostic {
            rule,
            severity: Severity::Warning,
            path: "SKILL.md".into(),
            span: Span::new(start, start + needle.len()),
            message: String::new(),
            fix: None,
        }
    }

    fn run(text: &str, findings: Vec<Diagnostic>) -> Vec<(&'static str, String)> {
        let mut findings = findings;
        let _ = apply(
            Path::new("SKILL.md"),
            text,
            &mut findings,
            &CheckOptions::default(),
        );
        findings
            .iter()
            .map(|d| (d.rule, text[d.span.start..d.span.end].to_string()))
            .collect()
    }

    #[test]
    fn a_directive_alone_covers_the_next_line_and_after_text_its_own() {
        let text = "a\n<!-- skillwatch-ignore SW307: ours -->\nsee https://ours.example\n\
                    key AKIA # skillwatch-ignore SW301\nother https://x.example\n";
        let findings = vec![
            found("SW307", text, "https://ours.example"),
            found("SW301", text, "AKIA"),
            found("SW307", text, "https://x.example"),
        ];
        assert_eq!(run(text, findings), [("SW307", "https://x.example".into())]);
    }

    #[test]
    fn two_directives_on_one_line_cover_it_and_the_next() {
        // the first stands alone (covers the next line), the second follows text (its own)
        let text = "a\n# skillwatch-ignore SW116 x # skillwatch-ignore SW120\nversion: [1]\n";
        let findings = vec![
            found("SW120", text, "x #"),
            found("SW116", text, "version"),
            found("SW120", text, "[1]"),
        ];
        assert_eq!(run(text, findings), [("SW120", "[1]".into())]);
    }

    #[test]
    fn silenced_findings_are_kept_with_the_reason() {
        let text = "<!-- skillwatch-ignore SW307: our own site -->\nhttps://ours.example\n\
                    key AKIA # skillwatch-ignore SW301 -- a test fixture\n";
        let findings = vec![
            found("SW307", text, "https://ours.example"),
            found("SW301", text, "AKIA"),
        ];
        assert_eq!(
            all_silenced(text, findings),
            [
                ("SW307", "our own site".into()),
                ("SW301", "a test fixture".into())
            ]
        );
    }

    /// The rules and reasons of `findings`, which directives in `text` must all silence.
    fn all_silenced(text: &str, mut findings: Vec<Diagnostic>) -> Vec<(&'static str, String)> {
        let ignored = apply(
            Path::new("SKILL.md"),
            text,
            &mut findings,
            &CheckOptions::default(),
        );
        assert!(findings.is_empty(), "{findings:?}");
        ignored
            .into_iter()
            .map(|i| (i.finding.rule, i.reason))
            .collect()
    }

    #[test]
    fn a_comment_without_spaces_is_a_directive_too() {
        let text = "<!--skillwatch-ignore SW307-->\nhttps://ours.example\n";
        let findings = vec![found("SW307", text, "https://ours.example")];
        assert_eq!(all_silenced(text, findings), [("SW307", String::new())]);
    }

    #[test]
    fn only_the_named_rules_are_silenced() {
        let text = "# skillwatch-ignore SW116, SW120 reviewed\nversion: [1]\n";
        let findings = vec![
            found("SW116", text, "version"),
            found("SW120", text, "[1]"),
            found("SW113", text, "1"),
        ];
        assert_eq!(run(text, findings), [("SW113", "1".into())]);
    }

    #[test]
    fn unknown_and_unused_ids_are_reported_with_a_removal() {
        let text = "x\n  # skillwatch-ignore SW116 SW999 SW120\nversion: 1\n# skillwatch-ignore SW301\nplain\n";
        let findings = vec![found("SW116", text, "version")];
        let mut out = findings.clone();
        let ignored = apply(
            Path::new("SKILL.md"),
            text,
            &mut out,
            &CheckOptions::default(),
        );
        assert_eq!(ignored.len(), 1);
        assert_eq!(
            (ignored[0].finding.rule, ignored[0].reason.as_str()),
            ("SW116", "")
        );
        let said: Vec<_> = out
            .iter()
            .map(|d| (d.rule, &text[d.span.start..d.span.end]))
            .collect();
        assert_eq!(
            said,
            [("SW001", "SW999"), ("SW002", "SW120"), ("SW002", "SW301")]
        );
        // an unused id among others goes with its separator; a lone one takes its line
        let fixed = |d: &Diagnostic| d.fix.as_ref().unwrap().apply(text).unwrap();
        assert!(fixed(&out[1]).contains("# skillwatch-ignore SW116 SW999\n"));
        assert_eq!(
            fixed(&out[2]),
            "x\n  # skillwatch-ignore SW116 SW999 SW120\nversion: 1\nplain\n"
        );
        assert!(out[0].fix.is_none());
        assert_eq!(out[0].severity, Severity::Warning);
    }

    #[test]
    fn lookalikes_are_not_directives_and_a_bare_one_is_reported() {
        let text = "my-skillwatch-ignore SW301\nskillwatch-ignored SW301\nskillwatch-ignore-file SW1\n# skillwatch-ignore because\nx\n";
        let mut out = vec![];
        let _ = apply(
            Path::new("SKILL.md"),
            text,
            &mut out,
            &CheckOptions::default(),
        );
        let rules: Vec<_> = out.iter().map(|d| d.rule).collect();
        assert_eq!(rules, ["SW001"], "{out:?}");
        assert_eq!(
            text[out[0].span.start..].lines().next(),
            Some("skillwatch-ignore because")
        );
    }

    #[test]
    fn an_unused_id_beside_one_in_use_is_cut_alone() {
        let text = "<!-- skillwatch-ignore SW307 SW301 -->\nhttps://ours.example\n";
        let out = run(text, vec![found("SW307", text, "https://ours.example")]);
        assert_eq!(out, [("SW002", "SW301".into())]);
    }

    #[test]
    fn the_silencing_line_is_indented_commented_for_its_place_and_keeps_the_data() {
        let text = "---\nname: a\nmetadata:\n  tags: [a]\r\n---\nsee https://x.example\n";
        let silencer = Silencer::new(Target::SkillMd, text);
        let edit = |offset: usize, rule: &str| silencer.edit(offset, rule);
        let tags = edit(text.find("tags").unwrap(), "SW120").unwrap();
        assert_eq!(tags.replacement, "  # skillwatch-ignore SW120\r\n");
        assert_eq!(tags.span, Span::empty(text.find("  tags").unwrap()));
        let url = edit(text.find("https").unwrap(), "SW307").unwrap();
        assert_eq!(url.replacement, "<!-- skillwatch-ignore SW307 -->\n");
        // not above the opening fence
        assert!(edit(0, "SW101").is_none());
        // not inside a block scalar, where the comment would become text
        let block = "---\nname: a\ndescription: |\n  Fetch it.\n  Use when asked.\n---\n";
        let inside = block.find("Use when").unwrap();
        assert!(
            Silencer::new(Target::SkillMd, block)
                .edit(inside, "SW201")
                .is_none()
        );
        let key = block.find("description").unwrap();
        assert!(
            Silencer::new(Target::SkillMd, block)
                .edit(key, "SW201")
                .is_some()
        );
        let eval = "scenarios:\n  - name: a\n    prompt: |\n      one\n      two\n";
        let two = eval.find("two").unwrap();
        assert!(
            Silencer::new(Target::EvalYaml, eval)
                .edit(two, "SW402")
                .is_none()
        );
        let name = eval.find("name").unwrap();
        let edit = Silencer::new(Target::EvalYaml, eval)
            .edit(name, "SW402")
            .unwrap();
        assert_eq!(edit.replacement, "  # skillwatch-ignore SW402\n");
    }

    #[test]
    fn an_inserted_directive_silences_the_finding_it_was_made_for() {
        let text = "---\nname: a\nversion: 1\n---\n";
        let finding = found("SW116", text, "version");
        let edit = Silencer::new(Target::SkillMd, text)
            .edit(finding.span.start, "SW116")
            .unwrap();
        let fix = Fix {
            title: String::new(),
            edits: vec![edit],
        };
        let fixed = fix.apply(text).unwrap();
        let moved = found("SW116", &fixed, "version");
        assert!(run(&fixed, vec![moved]).is_empty());
    }
}
