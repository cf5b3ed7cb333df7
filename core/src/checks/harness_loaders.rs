//! SW223 and SW224 for the harnesses a skill ships to, from their measured loader profiles
//! ([`crate::loaders::PROFILES`]): what each targeted harness's loader does with this SKILL.md,
//! with the harness's name and version, without running anything. Claude Code's own SW223
//! (description with `when_to_use`, in UTF-16 units) stays in [`super::skill_set`].
//!
//! - SW223: a harness cuts the description (Codex 0.169 at 1,021 characters plus `...`).
//! - SW224: a harness leaves the skill out of its listing without a word: a description over
//!   its limit (Copilot CLI, over 1,024), a repeated key, frontmatter it cannot read as YAML, no
//!   `name` where the loader needs one.

use super::context::Ctx;
use crate::loaders::{DescriptionLimit, DuplicateKey, LoaderProfile, YamlRule};
use crate::skill::Frontmatter;
use crate::text::Span;

/// Report what each targeted harness (but Claude Code, see the module doc) does with the skill.
pub(crate) fn check(ctx: &mut Ctx<'_>) {
    let targets = ctx.options.targets();
    match &ctx.doc.frontmatter {
        Frontmatter::Parsed { root, .. } => {
            let entries = root.as_mapping().unwrap_or_default();
            let description = entries
                .iter()
                .rev()
                .find(|e| e.key.as_key() == Some("description"));
            let first_key = entries.first().map_or(Span::new(0, 3), |e| e.key.span);
            for p in &targets {
                if let Some(d) = description
                    && let Some(text) = d.value.as_str()
                {
                    description_limit(ctx, p, text.trim(), d.value.span);
                }
                if p.duplicate_key == DuplicateKey::Dropped {
                    repeated_key(ctx, p, entries);
                }
                if p.needs_name && !entries.iter().any(|e| e.key.as_key() == Some("name")) {
                    let message = format!(
                        "{} {} leaves a skill without `name` out of its listing (measured {}): \
                         add `name`",
                        p.label,
                        p.version,
                        crate::loaders::MEASURED
                    );
                    ctx.report("SW224", first_key, message);
                }
            }
        }
        Frontmatter::Invalid { span, error } => {
            let repair = invalid_yaml_repair(ctx, *span, error);
            for p in targets.iter().filter(|p| p.yaml == YamlRule::Strict) {
                let message = format!(
                    "{} {} leaves a skill whose frontmatter is not valid YAML out of its listing \
                     (lenient loaders read it anyway, so the skill works elsewhere): {repair}",
                    p.label, p.version
                );
                ctx.report("SW224", *span, message);
            }
        }
        _ => {}
    }
}

/// What makes the frontmatter YAML again: SW102's repair when it knows the cause (a value
/// to quote), else where SW102 points. (This said "quote the value with `: ` in it" whatever
/// the cause: wrong for an unclosed bracket, a tab, an alias.)
fn invalid_yaml_repair(ctx: &Ctx<'_>, fm: Span, error: &crate::yaml::YamlError) -> String {
    let text = &ctx.doc.text;
    let fields: Vec<&str> = crate::fields::Place::Frontmatter
        .fields()
        .iter()
        .map(|f| f.name)
        .collect();
    match super::quote_fix::quote_fix(text, fm, error.span.start, &error.message, &fields) {
        Some((why, _)) => why,
        None => {
            let at = super::spec::invalid_yaml::error_span(text, fm, error).start;
            let at = ctx.lines().line_col(text, at);
            format!(
                "fix the YAML error at line {}, column {} (SW102)",
                at.line, at.column
            )
        }
    }
}

fn description_limit(ctx: &mut Ctx<'_>, p: &LoaderProfile, text: &str, at: Span) {
    let length = text.chars().count();
    match p.description {
        DescriptionLimit::Cut { kept, ellipsis }
            if p.harness != "claude-code" && length > kept + ellipsis.chars().count() =>
        {
            let message = format!(
                "{} {} cuts this description at {} characters (it has {}) and adds `{ellipsis}`: \
                 the rest never reaches the agent when it picks a skill; put what decides the \
                 choice first, or shorten it",
                p.label,
                p.version,
                thousands(kept),
                thousands(length)
            );
            ctx.report("SW223", at, message);
        }
        DescriptionLimit::Dropped { over } if length > over => {
            let message = format!(
                "{} {} leaves this skill out of its listing without a word: the description has \
                 {} characters, over the {} it accepts (measured {}); shorten it",
                p.label,
                p.version,
                thousands(length),
                thousands(over),
                crate::loaders::MEASURED
            );
            ctx.report("SW224", at, message);
        }
        _ => {}
    }
}

fn repeated_key(ctx: &mut Ctx<'_>, p: &LoaderProfile, entries: &[crate::yaml::Entry]) {
    for (i, e) in entries.iter().enumerate() {
        let Some(key) = e.key.as_key() else { continue };
        if entries[..i].iter().any(|o| o.key.as_key() == Some(key)) {
            let message = format!(
                "{} {} leaves a skill with a repeated key (`{key}`) out of its listing: keep one",
                p.label, p.version
            );
            ctx.report("SW224", e.key.span, message);
        }
    }
}

/// `1100` as `1,100`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::checks::CheckOptions;
    use crate::checks::test_support::*;

    fn options(harnesses: &[&str]) -> CheckOptions {
        CheckOptions {
            harnesses: Some(harnesses.iter().map(|h| h.to_string()).collect()),
            ..CheckOptions::default()
        }
    }

    /// SW224 on YAML a strict loader refuses says how to repair it: SW102's quoting where that
    /// is the cause, else where SW102 points, never a quoting hint that does not apply.
    #[test]
    fn unreadable_yaml_is_repaired_as_sw102_says() {
        let sw224 = |text: &str| -> String {
            let all = check_text_with("demo", text, &options(&["copilot-cli"]));
            let found: Vec<_> = all.iter().filter(|d| d.rule == "SW224").collect();
            assert_eq!(found.len(), 1, "{all:#?}");
            found[0].message.clone()
        };
        let colon = sw224(
            "---
name: demo
description: Tables: pads cells
---
# demo
",
        );
        assert!(
            colon.ends_with("which YAML reads as a nested mapping: quote it"),
            "{colon}"
        );
        let bracket = sw224(
            "---
name: demo
description: pads cells
x: [[1
---
# demo
",
        );
        // the parser stops at the closing fence, where SW102 points too
        assert!(
            bracket.ends_with("fix the YAML error at line 5, column 1 (SW102)"),
            "{bracket}"
        );
    }

    #[test]
    fn each_targeted_harness_speaks_for_itself() {
        let long: String = "word ".repeat(220).trim_end().to_string();
        let text = format!("---\nname: demo\ndescription: {long}\n---\n# demo\n");
        let all = check_text_with("demo", &text, &CheckOptions::default());
        let codex: Vec<_> = all
            .iter()
            .filter(|d| {
                d.rule == "SW223"
                    && d.message.starts_with(
                        "Codex 0.169.0 cuts this description at 1,021 characters (it has 1,099)",
                    )
            })
            .collect();
        assert_eq!(codex.len(), 1, "{all:#?}");
        let copilot: Vec<_> = all
            .iter()
            .filter(|d| {
                d.rule == "SW224"
                    && d.message
                        .starts_with("Copilot CLI 1.0.102 leaves this skill out")
            })
            .collect();
        assert_eq!(copilot.len(), 1, "{all:#?}");
        let only_gemini = check_text_with("demo", &text, &options(&["gemini-cli"]));
        assert!(
            only_gemini
                .iter()
                .all(|d| d.rule != "SW223" && d.rule != "SW224"),
            "{only_gemini:#?}"
        );
    }

    #[test]
    fn strict_yaml_and_repeated_keys_and_missing_names() {
        let colon = "---\nname: demo\ndescription: Use when: asked\n---\n# demo\n";
        let found = check_text_with("demo", colon, &options(&["copilot-cli", "codex"]));
        let sw224: Vec<_> = found.iter().filter(|d| d.rule == "SW224").collect();
        assert_eq!(sw224.len(), 1, "Copilot only: {found:#?}");
        assert!(sw224[0].message.contains("Copilot CLI 1.0.102"));
        let dup = "---\nname: demo\ndescription: a\ndescription: b\n---\n# demo\n";
        let found = check_text_with("demo", dup, &options(&["codex", "gemini-cli"]));
        let sw224: Vec<_> = found.iter().filter(|d| d.rule == "SW224").collect();
        assert_eq!(
            sw224.len(),
            1,
            "Codex drops it, Gemini takes the last: {found:#?}"
        );
        let noname = "---\ndescription: a\n---\n# demo\n";
        let found = check_text_with("demo", noname, &options(&["opencode"]));
        assert!(
            found.iter().any(|d| d.rule == "SW224"
                && d.message
                    .starts_with("OpenCode 1.18.33 leaves a skill without `name`")),
            "{found:#?}"
        );
    }
}
