//! SW1xx: the Agent Skills specification (agentskills.io), as its reference validator
//! `skills-ref` applies it, plus the frontmatter fields Claude Code documents.
//!
//! Field by field: `name` (1-64 characters, lowercase letters, digits and single hyphens, equal
//! to the folder), `description` (1-1024 characters), `compatibility` (1-500), `license`
//! (text), `metadata` (a string-to-string map), `allowed-tools` (a space-delimited string or a
//! list of strings). Under the default profile Claude Code's extra fields are known and other
//! fields are warnings; under `agentskills` anything beyond the six is an error.

mod claude_code;
mod fields;
pub(crate) mod invalid_yaml;
mod name;
mod strict_yaml;
pub(crate) mod substitution;

use super::Profile;
use super::context::Ctx;
use crate::fields::{Origin, Place};
use crate::skill::Frontmatter;
use crate::text::Span;
use crate::yaml::{Mark, Node};

/// The fields the Agent Skills specification defines (the `agentskills` profile's whole set),
/// from core's field table.
fn spec_fields() -> Vec<&'static str> {
    Place::Frontmatter
        .known(Profile::AgentSkills)
        .map(|f| f.name)
        .collect()
}

/// Whether `key` is a field Claude Code documents beyond the specification.
fn is_claude_code_field(key: &str) -> bool {
    Place::Frontmatter
        .field(key)
        .is_some_and(|f| f.origin == Origin::ClaudeCode)
}

/// What is wrong with `name` as a skill's name, as short phrases (none for a valid name):
/// for tools that create skills (`skillwatch init`) and must not create a broken one.
pub fn name_problems(name: &str) -> Vec<String> {
    let mut out = name::problems(name);
    if name.is_empty() {
        out.push("empty".into());
    }
    let chars = name.chars().count();
    if chars > 64 {
        out.push(format!("{chars} characters, more than 64"));
    }
    out
}

/// Run every SW1xx rule on the document.
pub(crate) fn check(ctx: &mut Ctx<'_>) {
    let doc = ctx.doc;
    if doc.bom {
        ctx.report(
            "SW121",
            Span::empty(0),
            "SKILL.md starts with a UTF-8 byte-order mark; readers that keep it (skills-ref \
             among them) find no `---` on the first line"
                .into(),
        );
    }
    match &doc.frontmatter {
        Frontmatter::Missing => missing(ctx),
        Frontmatter::Unterminated { open } => ctx.report(
            "SW103",
            *open,
            format!(
                "frontmatter opened on line {} is never closed: expected a `---` line after the YAML",
                ctx.line_number(open.start)
            ),
        ),
        Frontmatter::Invalid { span, error } => invalid_yaml::report(ctx, *span, error),
        Frontmatter::Parsed { span, root, marks } => parsed(ctx, *span, root, marks),
    }
    dots_fence(ctx);
}

/// A frontmatter closed by YAML's `...` document-end marker: our parser accepts it, but
/// skills-ref and the harnesses look for a second `---` and see no frontmatter at all.
fn dots_fence(ctx: &mut Ctx<'_>) {
    let doc = ctx.doc;
    if matches!(
        doc.frontmatter,
        Frontmatter::Missing | Frontmatter::Unterminated { .. }
    ) || doc.body.start == 0
    {
        return;
    }
    let ends_in_newline = doc.text.as_bytes()[doc.body.start - 1] == b'\n';
    let fence_end = doc.body.start - usize::from(ends_in_newline);
    let fence_start = doc.text[..fence_end].rfind('\n').map_or(0, |i| i + 1);
    let span = Span::new(fence_start, fence_end);
    if doc.slice(span).trim_end() == "..." {
        let fix = super::Fix {
            title: "Close with `---`".into(),
            edits: vec![super::Edit {
                span: Span::new(span.start, span.start + 3),
                replacement: "---".into(),
            }],
        };
        ctx.report_fix(
            "SW103",
            span,
            "frontmatter is closed by `...`; close it with `---`, which skills-ref and the \
             harnesses look for"
                .into(),
            Some(fix),
        );
    }
}

fn missing(ctx: &mut Ctx<'_>) {
    let text = &ctx.doc.text;
    let first = ctx.lines().line_span(text, 0);
    let later_fence = (1..ctx.lines().line_count().min(6)).find(|&line| {
        let span = ctx.lines().line_span(text, line);
        text[span.start..span.end].trim_end() == "---"
    });
    let message = match later_fence {
        Some(line) => format!(
            "frontmatter must start on line 1, but its `---` is on line {}",
            line + 1
        ),
        None if text.trim().is_empty() => {
            "SKILL.md is empty: expected `---` frontmatter with `name` and `description`".into()
        }
        None => format!(
            "SKILL.md does not start with `---` frontmatter: expected YAML with `name` and \
             `description`, found `{}`",
            truncate(&text[first.start..first.end], 40)
        ),
    };
    ctx.report("SW101", first, message);
}

fn parsed(ctx: &mut Ctx<'_>, span: Span, root: &Node, marks: &[Mark]) {
    strict_yaml::check(ctx, span, root, marks);
    let Some(entries) = root.as_mapping() else {
        let message = if root.is_null() {
            "frontmatter is empty: expected at least `name` and `description`".to_string()
        } else {
            format!(
                "frontmatter is a {}, expected a mapping of fields such as `name: my-skill`",
                root.type_name()
            )
        };
        let at = if root.span.is_empty() {
            Span::new(0, 3)
        } else {
            root.span
        };
        ctx.report("SW104", at, message);
        return;
    };
    fields::check(ctx, span, entries);
    claude_code::check(ctx, entries);
}

/// At most `max` characters of `text` (one line), with an ellipsis when cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || text.contains('\n') && text.trim_end() != line {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{Profile, Severity};

    fn rules(text: &str) -> Vec<&'static str> {
        check(text).iter().map(|d| d.rule).collect()
    }

    fn one(text: &str, rule: &str) -> super::super::Diagnostic {
        let found = check(text);
        let hits = of(&found, rule);
        assert_eq!(hits.len(), 1, "{rule} in {found:#?}");
        hits[0].clone()
    }

    fn passes(text: &str, rule: &str) {
        let found = check(text);
        assert!(of(&found, rule).is_empty(), "{rule} fired: {found:#?}");
    }

    #[test]
    fn sw101_frontmatter_missing() {
        let d = one("# Invoice tables\n\nText.\n", "SW101");
        assert!(
            d.message.contains("found `# Invoice tables`"),
            "{}",
            d.message
        );
        let d = one("\n\n---\nname: good-skill\n---\n", "SW101");
        assert!(d.message.contains("on line 3"), "{}", d.message);
        assert!(one("", "SW101").message.contains("empty"));
        passes(GOOD, "SW101");
    }

    #[test]
    fn sw102_frontmatter_invalid_yaml() {
        let text = good_with("license: Apache-2.0", "license: [Apache");
        let d = one(&text, "SW102");
        assert!(d.message.starts_with("frontmatter is not valid YAML"));
        let bracket = text.find("[Apache").unwrap();
        let line = text[..bracket].matches('\n').count() + 1;
        assert!(
            d.message
                .ends_with(&format!("(inside the `[` at line {line}, column 10)")),
            "{}",
            d.message
        );
        let tabs = good_with("license: Apache-2.0", "\tlicense: Apache-2.0");
        assert_eq!(
            one(&tabs, "SW102").span.start,
            tabs.find("\tlicense").unwrap()
        );
        passes(GOOD, "SW102");
    }

    #[test]
    fn sw103_frontmatter_unterminated() {
        let d = one("---\nname: good-skill\ndescription: x\n# Body\n", "SW103");
        assert_eq!((d.span.start, d.span.end), (0, 3));
        passes(GOOD, "SW103");
    }

    #[test]
    fn sw103_dots_close_is_fixed_to_dashes() {
        let text = GOOD.replacen("\n---\n# ", "\n...\n# ", 1);
        let d = one(&text, "SW103");
        assert!(d.message.contains("closed by `...`"));
        assert_eq!(fixed(&text, &d), GOOD);
        let at_end = "---\nname: good-skill\ndescription: Use when x.\n...";
        assert_eq!(
            fixed(at_end, &one(at_end, "SW103")),
            at_end.replace("...", "---")
        );
    }

    #[test]
    fn sw104_frontmatter_not_mapping() {
        assert!(
            one("---\n- a\n- b\n---\nbody\n", "SW104")
                .message
                .contains("is a list")
        );
        assert!(one("---\n---\nbody\n", "SW104").message.contains("empty"));
        passes(GOOD, "SW104");
    }

    #[test]
    fn sw105_name_missing_with_fix() {
        let text = good_with("name: good-skill\n", "");
        let d = one(&text, "SW105");
        let repaired = fixed(&text, &d);
        assert_eq!(repaired, GOOD.to_string());
        passes(GOOD, "SW105");
    }

    #[test]
    fn sw106_name_format() {
        for bad in [
            "Good-Skill",
            "good_skill",
            "-good",
            "good-",
            "good--skill",
            "good skill",
        ] {
            let text = good_with("name: good-skill", &format!("name: \"{bad}\""));
            let d = one(&text, "SW106");
            assert!(d.message.contains(bad), "{}", d.message);
            assert_eq!(
                fixed(&text, &d),
                good_with("name: good-skill", "name: good-skill")
            );
        }
        assert!(
            one(&good_with("name: good-skill", "name: \"\""), "SW106")
                .message
                .contains("empty")
        );
        passes(GOOD, "SW106");
    }

    #[test]
    fn sw107_name_too_long() {
        let long = "a".repeat(65);
        let (found, _tmp) = check_in(
            &long,
            &good_with("good-skill", &long),
            &[],
            Profile::Default,
        );
        assert_eq!(of(&found, "SW107").len(), 1);
        let ok = "a".repeat(64);
        let (found, _tmp) = check_in(&ok, &good_with("good-skill", &ok), &[], Profile::Default);
        assert!(of(&found, "SW107").is_empty());
    }

    #[test]
    fn sw108_name_matches_folder_with_fix() {
        let text = good_with("name: good-skill", "name: other-skill");
        let d = one(&text, "SW108");
        // the fix replaces the author's name: a quick fix to choose, never applied by --fix
        assert_eq!(
            d.message,
            "name `other-skill` does not match its folder `good-skill` (`--fix` leaves this \
             to you: its fix would replace `other-skill`)"
        );
        assert_eq!(&text[d.span.start..d.span.end], "other-skill");
        assert!(check(&fixed(&text, &d)).is_empty());
        passes(GOOD, "SW108");
        // reshaping the same words is a fix --fix applies
        let text = good_with("name: good-skill", "name: Good_Skill");
        let d = one(&text, "SW108");
        assert_eq!(
            d.message,
            "name `Good_Skill` does not match its folder `good-skill`"
        );
        assert!(check(&fixed(&text, &d)).is_empty());
    }

    #[test]
    fn sw109_sw110_sw111_description() {
        let line = GOOD
            .lines()
            .find(|l| l.starts_with("description:"))
            .unwrap();
        one(&good_with(&format!("{line}\n"), ""), "SW109");
        one(&good_with(line, "description: \"  \""), "SW110");
        one(&good_with(line, "description:"), "SW110");
        let long = format!("description: Use when {}", "x".repeat(1016));
        assert!(
            one(&good_with(line, &long), "SW111")
                .message
                .contains("1025 characters")
        );
        let max = format!("description: Use when {}", "x".repeat(1015));
        passes(&good_with(line, &max), "SW111");
        for rule in ["SW109", "SW110", "SW111"] {
            passes(GOOD, rule);
        }
    }

    #[test]
    fn sw112_compatibility_length() {
        let with = |c: &str| {
            good_with(
                "license: Apache-2.0",
                &format!("license: Apache-2.0\ncompatibility: {c}"),
            )
        };
        assert!(
            one(&with(&format!("Requires git {}", "x".repeat(488))), "SW112")
                .message
                .contains("501")
        );
        passes(&with(&format!("Requires git {}", "x".repeat(487))), "SW112");
        one(&with("\"\""), "SW112");
        passes(GOOD, "SW112");
    }

    #[test]
    fn sw113_field_type() {
        assert!(
            one(
                &good_with("name: good-skill", "name: [good-skill]"),
                "SW113"
            )
            .message
            .contains("`name` is a list")
        );
        assert!(
            one(
                &good_with("license: Apache-2.0", "license: {a: b}"),
                "SW113"
            )
            .message
            .contains("mapping")
        );
        one(
            &good_with(
                "license: Apache-2.0",
                "license: MIT\nallowed-tools: {Read: yes}",
            ),
            "SW113",
        );
        one(
            &good_with(
                "license: Apache-2.0",
                "license: MIT\nallowed-tools:\n  - [Read]",
            ),
            "SW113",
        );
        one(
            &good_with(
                "metadata:\n  author: example-team\n  version: \"1.0\"",
                "metadata: text",
            ),
            "SW113",
        );
        passes(
            &good_with(
                "license: Apache-2.0",
                "license: MIT\nallowed-tools:\n  - Read\n  - Grep",
            ),
            "SW113",
        );
        passes(GOOD, "SW113");
    }

    #[test]
    fn sw114_field_not_string_with_quote_fix() {
        let text = good_with("license: Apache-2.0", "license: 2.0");
        let d = one(&text, "SW114");
        assert!(d.message.contains("number `2.0`"), "{}", d.message);
        assert_eq!(
            fixed(&text, &d),
            good_with("license: Apache-2.0", "license: \"2.0\"")
        );
        one(&good_with("license: Apache-2.0", "license:"), "SW114");
        passes(GOOD, "SW114");
    }

    #[test]
    fn sw115_metadata_values_with_fixes() {
        let text = good_with("version: \"1.0\"", "version: 1.0");
        let d = one(&text, "SW115");
        assert_eq!(fixed(&text, &d), GOOD);
        let text = good_with("version: \"1.0\"", "version: \"1.0\"\n  tags: [pdf, csv]");
        let d = one(&text, "SW115");
        assert!(d.message.contains("a list of 2"));
        assert!(fixed(&text, &d).contains("  tags: \"pdf, csv\"\n"));
        let block = good_with(
            "version: \"1.0\"",
            "version: \"1.0\"\n  tags:\n    - pdf\n    - csv",
        );
        let d = one(&block, "SW115");
        assert!(check(&fixed(&block, &d)).is_empty());
        passes(GOOD, "SW115");
    }

    #[test]
    fn sw116_unknown_field_by_profile_with_move_fix() {
        let text = good_with(
            "license: Apache-2.0\n",
            "license: Apache-2.0\nowner: team-x\n",
        );
        let d = one(&text, "SW116");
        assert_eq!(d.severity, Severity::Warning);
        assert!(d.message.contains("unknown field `owner`"), "{}", d.message);
        let repaired = fixed(&text, &d);
        assert!(
            repaired.contains("  version: \"1.0\"\n  owner: \"team-x\"\n---"),
            "{repaired}"
        );
        assert!(check(&repaired).is_empty(), "{repaired}");
        let (strict, _tmp) = check_in("good-skill", &text, &[], Profile::AgentSkills);
        assert_eq!(of(&strict, "SW116")[0].severity, Severity::Error);
        passes(GOOD, "SW116");
    }

    #[test]
    fn sw116_claude_code_fields_only_in_default_profile() {
        let text = good_with(
            "license: Apache-2.0",
            "license: Apache-2.0\nwhen_to_use: When a PDF invoice arrives\ndisable-model-invocation: true",
        );
        passes(&text, "SW116");
        let (strict, _tmp) = check_in("good-skill", &text, &[], Profile::AgentSkills);
        let hits = of(&strict, "SW116");
        assert_eq!(hits.len(), 2);
        assert!(hits[0].message.contains("Claude Code extension"));
        assert!(hits.iter().all(|d| d.severity == Severity::Error));
    }

    #[test]
    fn sw116_misspelled_field_is_renamed() {
        let text = good_with("license: Apache-2.0", "License: Apache-2.0");
        let d = one(&text, "SW116");
        assert!(d.message.contains("did you mean `license`"));
        assert_eq!(fixed(&text, &d), GOOD);
        let text = good_with(
            "license: Apache-2.0",
            "license: Apache-2.0\nuser_invocable: false",
        );
        assert!(one(&text, "SW116").message.contains("`user-invocable`"));
        // typos a few edits away are renamed, not moved under `metadata` (which would leave
        // the skill without a description)
        let text = good_with("description:", "descripton:").replace("license:", "licence:");
        let found = of(&check(&text), "SW116")
            .into_iter()
            .map(|d| (d.message.clone(), d.fix.as_ref().unwrap().title.clone()))
            .collect::<Vec<_>>();
        assert_eq!(
            found,
            [
                (
                    "unknown field `descripton`: did you mean `description`?".to_string(),
                    "Rename to `description`".to_string()
                ),
                (
                    "unknown field `licence`: did you mean `license`?".to_string(),
                    "Rename to `license`".to_string()
                ),
            ]
        );
        // a near miss of a field that is set already is an unknown field of its own
        let text = good_with("license: Apache-2.0", "license: Apache-2.0\nlicence: MIT");
        assert!(
            one(&text, "SW116")
                .fix
                .as_ref()
                .unwrap()
                .title
                .starts_with("Move")
        );
    }

    #[test]
    fn sw116_nested_mapping_says_why_no_fix() {
        let text = "---\nname: good-skill\ndescription: Use when testing.\nconfig:\n  depth: 2\n---\nbody\n";
        let d = one(text, "SW116");
        assert!(d.fix.is_none(), "{d:?}");
        assert!(
            d.message.contains("`metadata` values are strings"),
            "{}",
            d.message
        );
        let listed =
            "---\nname: good-skill\ndescription: Use when testing.\nsteps:\n  - a: 1\n---\nbody\n";
        assert!(one(listed, "SW116").message.contains("list of mappings"));
        // a plain value moves, and its message has no excuse
        let plain =
            "---\nname: good-skill\nversion: 2\ndescription: Use when testing.\n---\nbody\n";
        let d = one(plain, "SW116");
        assert!(d.fix.is_some() && !d.message.contains("leaves it to you"));
    }

    #[test]
    fn sw116_move_fix_creates_metadata_and_keeps_crlf() {
        let text = "---\r\nname: good-skill\r\nversion: 2\r\ndescription: Use when testing.\r\n---\r\nbody\r\n";
        let d = one(text, "SW116");
        let repaired = fixed(text, &d);
        assert_eq!(
            repaired,
            "---\r\nname: good-skill\r\ndescription: Use when testing.\r\nmetadata:\r\n  version: \"2\"\r\n---\r\nbody\r\n"
        );
    }

    #[test]
    fn sw116_a_copy_metadata_already_holds_is_removed() {
        let meta = "metadata:\n  author: Team <t@example.com>\n  tags:\n    - a\n    - b\n";
        let added =
            format!("license: Apache-2.0\nauthor: \"Team <t@example.com>\"\ntags: [a, b]\n{meta}");
        let text = good_with("license: Apache-2.0", added.trim_end());
        let found = check(&text);
        let fixes: Vec<_> = of(&found, "SW116")
            .iter()
            .map(|d| d.fix.as_ref().expect("a fix").title.clone())
            .collect();
        assert_eq!(
            fixes,
            [
                "Remove `author`: `metadata` holds the same value",
                "Remove `tags`: `metadata` holds the same value"
            ]
        );
        let author = of(&found, "SW116")[0].clone();
        assert_eq!(
            fixed(&text, &author),
            text.replace("author: \"Team <t@example.com>\"\n", "")
        );
        // the joined form the move writes counts as the same value too
        let joined = text.replace("  tags:\n    - a\n    - b\n", "  tags: \"a, b\"\n");
        assert!(of(&check(&joined), "SW116")[1].fix.is_some());
        // a different value is neither moved over it nor removed
        let differs = text.replace("tags: [a, b]", "tags: [a, c]");
        assert!(of(&check(&differs), "SW116")[1].fix.is_none());
    }

    #[test]
    fn sw117_duplicate_field() {
        let text = good_with("license: Apache-2.0", "license: Apache-2.0\nlicense: MIT");
        let d = one(&text, "SW117");
        assert!(d.message.contains("first on line 4"), "{}", d.message);
        passes(GOOD, "SW117");
    }

    #[test]
    fn sw118_claude_code_values() {
        let text = good_with(
            "license: Apache-2.0",
            "license: Apache-2.0\nargument-hint: [invoice-file]",
        );
        let d = one(&text, "SW118");
        assert_eq!(
            fixed(&text, &d),
            good_with(
                "license: Apache-2.0",
                "license: Apache-2.0\nargument-hint: \"[invoice-file]\""
            )
        );
        let text = good_with(
            "license: Apache-2.0",
            "license: Apache-2.0\nuser-invocable: yes",
        );
        assert_eq!(
            fixed(&text, &one(&text, "SW118")),
            good_with(
                "license: Apache-2.0",
                "license: Apache-2.0\nuser-invocable: true"
            )
        );
        one(
            &good_with(
                "license: Apache-2.0",
                "license: Apache-2.0\neffort: extreme",
            ),
            "SW118",
        );
        one(
            &good_with("license: Apache-2.0", "license: Apache-2.0\nagent: Explore"),
            "SW118",
        );
        passes(
            &good_with(
                "license: Apache-2.0",
                "license: Apache-2.0\nagent: Explore\ncontext: fork\neffort: high\nargument-hint: \"[file]\"\nhooks:\n  PreToolUse: []",
            ),
            "SW118",
        );
        passes(GOOD, "SW118");
    }

    #[test]
    fn sw119_non_ascii_name() {
        let text = good_with("name: good-skill", "name: données");
        let (found, _tmp) = check_in("données", &text, &[], Profile::Default);
        assert_eq!(of(&found, "SW119").len(), 1);
        assert!(of(&found, "SW106").is_empty());
        passes(GOOD, "SW119");
    }

    #[test]
    fn sw120_strict_yaml_by_profile() {
        let text = good_with(
            "version: \"1.0\"",
            "version: \"1.0\"\n  tags: \"a, b\"\n  list: &l x\n  again: *l",
        );
        let found = check(&text);
        let hits = of(&found, "SW120");
        assert_eq!(hits.len(), 2, "{found:#?}");
        assert!(hits.iter().all(|d| d.severity == Severity::Info));
        let flow = good_with(
            "license: Apache-2.0",
            "license: Apache-2.0\nallowed-tools: [Read, Grep]",
        );
        let (strict, _tmp) = check_in("good-skill", &flow, &[], Profile::AgentSkills);
        assert_eq!(of(&strict, "SW120")[0].severity, Severity::Error);
        passes(GOOD, "SW120");
    }

    #[test]
    fn sw121_byte_order_mark() {
        let text = format!("\u{feff}{GOOD}");
        assert_eq!(rules(&text), vec!["SW121"]);
        let (strict, _tmp) = check_in("good-skill", &text, &[], Profile::AgentSkills);
        assert_eq!(strict[0].severity, Severity::Error);
        passes(GOOD, "SW121");
    }

    #[test]
    fn sw122_claude_api_constraints() {
        let text = good_with("name: good-skill", "name: claude-helper");
        let (found, _tmp) = check_in("claude-helper", &text, &[], Profile::Default);
        assert_eq!(of(&found, "SW122").len(), 1);
        let line = GOOD
            .lines()
            .find(|l| l.starts_with("description:"))
            .unwrap();
        let xml = good_with(line, &format!("{line} <invoice> tags allowed."));
        assert!(one(&xml, "SW122").message.contains("<invoice>"));
        passes(GOOD, "SW122");
    }

    /// Capitalised, the reserved word is still refused, and no fix proposes a name that holds
    /// one: SW106's fix would set `name` to the folder `claude-helper`.
    #[test]
    fn sw122_is_case_insensitive_and_no_fix_proposes_a_reserved_name() {
        let text = good_with("name: good-skill", "name: Claude-Helper");
        let (found, _tmp) = check_in("claude-helper", &text, &[], Profile::Default);
        assert_eq!(of(&found, "SW122").len(), 1, "{found:#?}");
        let sw106 = of(&found, "SW106");
        assert_eq!(sw106.len(), 1);
        assert!(sw106[0].fix.is_none(), "{:?}", sw106[0].fix);
        let (found, _tmp) = check_in("anthropic-notes", GOOD, &[], Profile::Default);
        assert!(of(&found, "SW108").iter().all(|d| d.fix.is_none()));
        let missing = good_with("name: good-skill\n", "");
        let (found, _tmp) = check_in("claude-notes", &missing, &[], Profile::Default);
        assert!(of(&found, "SW105")[0].fix.is_none());
        // the benign twin: a folder name without a reserved word is still offered
        let (found, _tmp) = check_in("pdf-notes", GOOD, &[], Profile::Default);
        assert!(of(&found, "SW108")[0].fix.is_some());
    }
}
