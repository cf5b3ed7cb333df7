//! SW2xx: how useful the skill will be to an agent. Heuristics from the "agent-skills" check
//! specification (seed 002: descriptions that are short, vague or silent on when to activate;
//! bodies too thin, too large, or without workflow or examples; compatibility that is not
//! actionable) and skill-validator's SkillsBench profile (seed 003: 800-2,500 tokens is the
//! sweet spot, over 5,000 hurts), plus the specification's progressive-disclosure advice (under
//! 500 lines, file references one level deep, relative `/` paths).

mod references;

use std::sync::LazyLock;

use regex::Regex;

use super::context::Ctx;
use super::markdown::{Body, estimate_tokens};
use crate::text::Span;

/// Descriptions shorter than this many characters cannot say both what and when.
const MIN_DESCRIPTION_CHARS: usize = 40;
/// Below this many tokens a body rarely changes what an agent does (skill-validator's bound).
const THIN_BODY_TOKENS: usize = 200;
/// Below this, the body is effectively empty: only SW204 is reported.
const EMPTY_BODY_TOKENS: usize = 50;
/// SkillsBench's sweet spot ends here.
const SWEET_SPOT_MAX_TOKENS: usize = 2_500;
/// The specification's recommended ceiling for the loaded body.
const MAX_BODY_TOKENS: usize = 5_000;
/// The specification's advice for SKILL.md.
const MAX_LINES: usize = 500;

/// Run every SW2xx rule.
pub(crate) fn check(ctx: &mut Ctx<'_>, body: &Body<'_>) {
    description(ctx);
    compatibility(ctx);
    let tokens = estimate_tokens(ctx.doc.body_text().trim());
    size(ctx, body, tokens);
    if tokens >= EMPTY_BODY_TOKENS {
        structure(ctx, body);
    }
    references::check(ctx, body);
}

/// The pattern of [`TRIGGER`], case-insensitive.
const TRIGGER_PATTERN: &str = r"(?i)\b((use|used) (it |this |this skill |the skill |as )?(when|whenever|for|to|if|on|in|after|before|during)|when(ever)?\b|trigger|invoke|activate|applies (to|when)|if (the )?user|user (asks|wants|mentions|needs|says|requests)|for (tasks|requests|questions) )";

/// Run on ASCII-lowercased text (see [`crate::checks::pattern::compile_folded`]).
static TRIGGER: LazyLock<Regex> =
    LazyLock::new(|| crate::checks::pattern::compile_folded(TRIGGER_PATTERN));

/// The pattern of [`VAGUE`], case-insensitive.
const VAGUE_PATTERN: &str = r"(?i)(^|[.!?]\s+)(a |this )?(skill |tool )?(that )?(helps?|assists?|is useful|useful|utilit(y|ies)|handles?|does) (with|for|you|in|stuff|things|various)\b|\b(various|miscellaneous|misc|general[- ]purpose|stuff)\b";

/// Run on ASCII-lowercased text (see [`crate::checks::pattern::compile_folded`]).
static VAGUE: LazyLock<Regex> =
    LazyLock::new(|| crate::checks::pattern::compile_folded(VAGUE_PATTERN));

fn description(ctx: &mut Ctx<'_>) {
    let doc = ctx.doc;
    let Some((text, span)) = doc.field_str("description") else {
        return;
    };
    let has_when_to_use = doc
        .frontmatter_root()
        .and_then(|r| r.get("when_to_use"))
        .is_some();
    for (rule, message) in description_findings(text, has_when_to_use) {
        ctx.report(rule, span, message);
    }
}

/// SW201-SW203 on a description's text: `(rule, message)` for each that applies. Also what
/// a discovery index's entry descriptions are held to (`index::document`).
pub(crate) fn description_findings(
    text: &str,
    has_when_to_use: bool,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let text = text.trim();
    if text.is_empty() {
        return out;
    }
    let chars = text.chars().count();
    let shown = super::spec::truncate(text, 60);
    // the floor is in Latin letters: a wide (CJK) character holds about two of them
    if chars < MIN_DESCRIPTION_CHARS
        && unicode_width::UnicodeWidthStr::width(text) < MIN_DESCRIPTION_CHARS
    {
        out.push((
            "SW202",
            format!(
                "description `{shown}` is {}; say what the skill does and when to use it (at \
                 least {MIN_DESCRIPTION_CHARS})",
                counted(chars, "character")
            ),
        ));
    }
    let lower = text.to_ascii_lowercase();
    if !has_when_to_use && written_in_latin_script(text) && !TRIGGER.is_match(&lower) {
        out.push((
            "SW201",
            format!(
                "description `{shown}` does not say when to use the skill; add \"Use when ...\" \
                 with the words a user would type"
            ),
        ));
    }
    if chars < 200
        && let Some(m) = VAGUE.find(&lower)
    {
        out.push((
            "SW203",
            format!(
                "description is vague (`{}`); name the concrete tasks, inputs and keywords",
                text[m.range()].trim()
            ),
        ));
    }
    out
}

/// Whether most letters of `text` are ASCII: the trigger phrases SW201 knows are English, so a
/// description in another script (`渡されたときに使います`: "use when given") is not judged.
fn written_in_latin_script(text: &str) -> bool {
    let (ascii, other) =
        text.chars()
            .filter(|c| c.is_alphabetic())
            .fold((0usize, 0usize), |(a, o), c| match c.is_ascii() {
                true => (a + 1, o),
                false => (a, o + 1),
            });
    ascii >= other
}

static ACTIONABLE: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(
        r"(?i)\d|`|[A-Z][A-Z0-9]*_[A-Z0-9_]+|\b(requires?|required|needs?|needed|must|designed for|targets?|only|env|environment|variables?|hub|service|platforms?|linux|macos|windows|wsl|python|node|npm|pip|uv|docker|git|gpu|cuda|internet|network|access|api|token|key|cli|sudo|root|install|package|claude|codex|cursor|copilot|opencode|gemini)\b",
    )
});

static NOT_ACTIONABLE: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(
        r"(?i)^\W*(none|n/?a|any|all|everything|universal|compatible|works everywhere)\W*$|\bno (external |runtime |special |specific )*(requirements|dependencies|prerequisites)\b",
    )
});

fn compatibility(ctx: &mut Ctx<'_>) {
    let Some((text, span)) = ctx.doc.field_str("compatibility") else {
        return;
    };
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    if NOT_ACTIONABLE.is_match(text) || !ACTIONABLE.is_match(text) {
        ctx.report(
            "SW214",
            span,
            format!(
                "compatibility `{}` names no product, tool, package, version or access need; \
                 remove it if the skill has none",
                super::spec::truncate(text, 60)
            ),
        );
    }
}

fn size(ctx: &mut Ctx<'_>, body: &Body<'_>, tokens: usize) {
    let at = first_content_line(ctx, body);
    if tokens < THIN_BODY_TOKENS {
        ctx.report(
            "SW204",
            at,
            format!(
                "body is about {}; under {THIN_BODY_TOKENS} rarely guides an agent: add the \
                 workflow, inputs, outputs and an example",
                counted(tokens, "token")
            ),
        );
    } else if tokens > MAX_BODY_TOKENS {
        ctx.report(
            "SW206",
            at,
            format!(
                "body is about {tokens} tokens, over the {MAX_BODY_TOKENS} the specification \
                 recommends; move reference material into linked files"
            ),
        );
    } else if tokens > SWEET_SPOT_MAX_TOKENS {
        ctx.report(
            "SW207",
            at,
            format!(
                "body is about {tokens} tokens, above the 800-{SWEET_SPOT_MAX_TOKENS} range where \
                 skills helped most (SkillsBench)"
            ),
        );
    }
    let text = &ctx.doc.text;
    // A byte count the compiler vectorises; the line index is built only for a finding.
    let newlines = text.bytes().filter(|b| *b == b'\n').count();
    let lines = newlines + usize::from(!text.is_empty() && !text.ends_with('\n'));
    if lines > MAX_LINES {
        let line = ctx.lines().line_span(&ctx.doc.text, MAX_LINES);
        ctx.report(
            "SW205",
            line,
            format!(
                "SKILL.md is {lines} lines, over the {MAX_LINES} the specification advises; move \
                 detail into referenced files"
            ),
        );
    }
}

/// The first non-blank line of the body (or the end of the file), where body-wide findings
/// are shown.
fn first_content_line(ctx: &Ctx<'_>, body: &Body<'_>) -> Span {
    body.lines
        .iter()
        .find(|l| !l.text.trim().is_empty())
        .map(|l| l.span)
        .unwrap_or_else(|| Span::empty(ctx.doc.text.len()))
}

/// The pattern of [`WORKFLOW_HEADING`], case-insensitive.
const WORKFLOW_HEADING_PATTERN: &str = r"(?i)\b(workflow|steps?|process|procedure|instructions|how to|usage|quick ?start|phase|checklist)\b";

/// Run on ASCII-lowercased text (see [`crate::checks::pattern::compile_folded`]).
static WORKFLOW_HEADING: LazyLock<Regex> =
    LazyLock::new(|| crate::checks::pattern::compile_folded(WORKFLOW_HEADING_PATTERN));

static EXAMPLE: LazyLock<Regex> =
    LazyLock::new(|| crate::checks::pattern::compile(r"(?i)\bexamples?\b"));

fn structure(ctx: &mut Ctx<'_>, body: &Body<'_>) {
    let at = first_content_line(ctx, body);
    let headings: Vec<&str> = body.headings().map(|(_, t)| t).collect();
    if headings.is_empty() {
        ctx.report(
            "SW210",
            at,
            "body has no Markdown headings; sections (`## Workflow`, `## Examples`) help agent and author find their way".into(),
        );
    }
    let workflow = body.has_numbered_steps()
        || headings
            .iter()
            .any(|h| WORKFLOW_HEADING.is_match(&h.to_ascii_lowercase()));
    if !workflow {
        ctx.report(
            "SW208",
            at,
            "body has no numbered steps or workflow section for the agent to follow".into(),
        );
    }
    let example = body.code_blocks > 0 || body.prose().any(|l| EXAMPLE.is_match(l.text));
    if !example {
        ctx.report(
            "SW209",
            at,
            "body has no example: add a code block or an `## Examples` section with input and output".into(),
        );
    }
}

/// `n word`, with the plural `s` only when `n` is not 1: the short-description and thin-body
/// messages are most often read about one-word texts ("is 1 character").
fn counted(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::super::pattern::folded_test;
    use super::super::test_support::*;
    use super::super::{Profile, Severity};

    fn description_line() -> &'static str {
        GOOD.lines()
            .find(|l| l.starts_with("description:"))
            .unwrap()
    }

    fn with_description(text: &str) -> String {
        good_with(description_line(), &format!("description: {text}"))
    }

    fn count(text: &str, rule: &str) -> usize {
        of(&check(text), rule).len()
    }

    /// GOOD with its body replaced.
    fn with_body(body: &str) -> String {
        let end = GOOD.find("---\n# ").unwrap() + 4;
        format!("{}{body}", &GOOD[..end])
    }

    #[test]
    fn sw201_description_without_trigger() {
        let text = with_description(
            "Extracts tables from PDF invoices into CSV files with one row per item.",
        );
        assert_eq!(count(&text, "SW201"), 1);
        let with_when_to_use = good_with(
            "license: Apache-2.0",
            "license: Apache-2.0\nwhen_to_use: A PDF invoice needs its tables",
        );
        assert_eq!(count(&with_when_to_use.replace(" Use when the user asks to pull line items, totals or dates out of PDF invoices.", ""), "SW201"), 0);
        assert_eq!(count(GOOD, "SW201"), 0);
    }

    #[test]
    fn sw202_description_too_short() {
        assert_eq!(count(&with_description("Use when PDFs."), "SW202"), 1);
        assert_eq!(count(GOOD, "SW202"), 0);
    }

    #[test]
    fn sw203_description_vague() {
        let found = check(&with_description(
            "Helps with PDFs and various document things. Use when needed.",
        ));
        let hits = of(&found, "SW203");
        assert_eq!(hits.len(), 1);
        assert!(
            hits[0].message.contains("Helps with"),
            "{}",
            hits[0].message
        );
        assert_eq!(count(GOOD, "SW203"), 0);
        // "Getting Things Done", "anything", "everything" name no vague task
        for description in [
            "Plans a week with the Getting Things Done method. Use when the user asks to plan a week.",
            "Finds anything the user mislaid in the repository history. Use when a file vanished.",
            "Backs up everything under ~/notes to a dated tarball. Use when the user asks to back up notes.",
        ] {
            assert_eq!(
                count(&with_description(description), "SW203"),
                0,
                "{description}"
            );
        }
    }

    #[test]
    fn sw204_body_too_thin_and_nothing_else_on_an_empty_body() {
        let found = check(&with_body("# T\n\nShort.\n"));
        let rules: Vec<_> = found.iter().map(|d| d.rule).collect();
        assert_eq!(rules, vec!["SW204"]);
        assert_eq!(count(GOOD, "SW204"), 0);
    }

    #[test]
    fn a_count_of_one_is_singular() {
        let short = check(&with_description("x"));
        let message = &of(&short, "SW202")[0].message;
        assert!(message.contains("is 1 character;"), "{message}");
        let thin = check(&with_body("hi"));
        let message = &of(&thin, "SW204")[0].message;
        assert!(message.contains("about 1 token;"), "{message}");
        let two = check(&with_description("xy"));
        assert!(of(&two, "SW202")[0].message.contains("is 2 characters;"));
    }

    #[test]
    fn sw205_too_many_lines() {
        let long = format!("{GOOD}{}", "- more detail\n".repeat(480));
        let found = check(&long);
        let hits = of(&found, "SW205");
        assert_eq!(hits.len(), 1);
        assert_eq!(long[..hits[0].span.start].matches('\n').count(), 500);
        assert_eq!(count(GOOD, "SW205"), 0);
    }

    #[test]
    fn sw206_sw207_token_budget() {
        let words = |n: usize| "word ".repeat(n);
        let big = format!("{GOOD}\n{}\n", words(4200));
        assert_eq!(count(&big, "SW206"), 1);
        assert_eq!(count(&big, "SW207"), 0);
        let mid = format!("{GOOD}\n{}\n", words(2000));
        let found = check(&mid);
        assert_eq!(of(&found, "SW207")[0].severity, Severity::Info);
        assert_eq!(of(&found, "SW206").len(), 0);
        assert_eq!(count(GOOD, "SW206") + count(GOOD, "SW207"), 0);
    }

    #[test]
    fn sw208_sw209_sw210_structure() {
        let prose = "Turn the tables of a PDF invoice into CSV. ".repeat(30);
        let found = check(&with_body(&format!("{prose}\n")));
        for rule in ["SW208", "SW209", "SW210"] {
            assert_eq!(of(&found, rule).len(), 1, "{rule}: {found:#?}");
        }
        for rule in ["SW208", "SW209", "SW210"] {
            assert_eq!(count(GOOD, rule), 0);
        }
    }

    #[test]
    fn sw211_missing_references_once_per_target() {
        let text = format!(
            "{GOOD}\nSee [guide](references/guide.md) and [guide again](references/guide.md#x).\nRun `scripts/extract.py`.\n"
        );
        let (found, _tmp) = check_in(
            "good-skill",
            &text,
            &[("scripts/other.py", "")],
            Profile::Default,
        );
        let hits = of(&found, "SW211");
        assert_eq!(hits.len(), 2, "{found:#?}");
        assert!(hits[0].message.contains(
            "`references/guide.md` does not exist in the skill folder; referenced 2 times"
        ));
        assert!(hits[1].message.contains("scripts/extract.py"));
        let (found, _tmp) = check_in(
            "good-skill",
            &text,
            &[
                ("references/guide.md", "# Guide\n"),
                ("scripts/extract.py", ""),
            ],
            Profile::Default,
        );
        assert!(of(&found, "SW211").is_empty(), "{found:#?}");
    }

    #[test]
    fn sw211_license_file_must_exist() {
        let text = good_with(
            "license: Apache-2.0",
            "license: Proprietary. LICENSE.txt has complete terms",
        );
        let (found, _tmp) = check_in("good-skill", &text, &[], Profile::Default);
        assert!(of(&found, "SW211")[0].message.contains("`LICENSE.txt`"));
        let (found, _tmp) = check_in(
            "good-skill",
            &text,
            &[("LICENSE.txt", "terms")],
            Profile::Default,
        );
        assert!(of(&found, "SW211").is_empty());
    }

    #[test]
    fn sw212_nested_references() {
        let text = format!("{GOOD}\nSee [guide](references/guide.md).\n");
        let files = [
            (
                "references/guide.md",
                "# Guide\nDetails in [deep](deep.md).\n",
            ),
            ("references/deep.md", "# Deep\n"),
        ];
        let (found, _tmp) = check_in("good-skill", &text, &files, Profile::Default);
        let hits = of(&found, "SW212");
        assert_eq!(hits.len(), 1, "{found:#?}");
        assert!(
            hits[0]
                .message
                .contains("refers on to `references/deep.md`")
        );
        let direct = format!("{text}Also [deep](references/deep.md).\n");
        let (found, _tmp) = check_in("good-skill", &direct, &files, Profile::Default);
        assert!(of(&found, "SW212").is_empty(), "{found:#?}");
    }

    #[test]
    fn sw213_windows_paths_with_fix() {
        let text = format!("{GOOD}\nRead references\\guide.md first.\n");
        let (found, _tmp) = check_in(
            "good-skill",
            &text,
            &[("references/guide.md", "")],
            Profile::Default,
        );
        let hits = of(&found, "SW213");
        assert_eq!(hits.len(), 1);
        assert!(fixed(&text, hits[0]).contains("Read references/guide.md first."));
        assert!(
            of(&found, "SW211").is_empty(),
            "the file exists once separators are fixed"
        );
        assert_eq!(count(GOOD, "SW213"), 0);
    }

    #[test]
    fn sw214_compatibility_not_actionable() {
        let with = |c: &str| {
            good_with(
                "license: Apache-2.0",
                &format!("license: Apache-2.0\ncompatibility: {c}"),
            )
        };
        assert_eq!(
            count(&with("Standalone, no external requirements."), "SW214"),
            1
        );
        assert_eq!(count(&with("Works well."), "SW214"), 1);
        assert_eq!(
            count(&with("Requires Python 3.10+ and network access"), "SW214"),
            0
        );
        assert_eq!(count(&with("Needs HF_TOKEN for gated models"), "SW214"), 0);
    }

    #[test]
    fn descriptions_in_another_script_are_not_held_to_english_phrases_and_latin_lengths() {
        let jp = "会議の議事録を作成します。会議の記録を渡されたときに使います。";
        assert!(super::description_findings(jp, false).is_empty());
        // short in any script is still short
        let short = "議事録を作成します。";
        let rules: Vec<_> = super::description_findings(short, false)
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        assert_eq!(rules, ["SW202"]);
        // Latin script with accents is still held to the English trigger phrases
        let fr = "Rédige le compte rendu d'une réunion à partir de sa transcription complète.";
        let rules: Vec<_> = super::description_findings(fr, false)
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        assert_eq!(rules, ["SW201"]);
    }

    const TRIGGER_SEEDS: &[&str] = &[
        "use when",
        "used for",
        "use this skill when",
        "use the skill before",
        "use as during",
        "whenever",
        "when",
        "trigger",
        "invoke",
        "activate",
        "applies to",
        "if the user",
        "user asks",
        "user requests",
        "for tasks ",
    ];

    #[test]
    fn trigger_seeds_match() {
        folded_test::seeds_match(super::TRIGGER_PATTERN, TRIGGER_SEEDS);
    }

    #[test]
    fn sw215_absolute_path_links() {
        let text = with_body(
            "# T\n\nSee [setup](/Users/alice/skills/pdf/setup.md), \
             [notes](C:\\Users\\bob\\notes.md) and [log](file:///home/c/log.txt).\n",
        );
        let hits = super::super::test_support::check_rule(&text, "SW215");
        assert_eq!(hits.len(), 3, "{hits:#?}");
        assert_eq!(
            &text[hits[0].span.start..hits[0].span.end],
            "/Users/alice/skills/pdf/setup.md"
        );
        // the benign twins: relative links, site-root links, URLs, paths in code
        let text = with_body(
            "# T\n\nSee [a](references/a.md), [b](/docs/b.md), [c](https://x.io/home/c).\n\n\
             ```\ncat /home/user/.bashrc\n```\n",
        );
        assert_eq!(count(&text, "SW215"), 0);
    }

    const VAGUE_SEEDS: &[&str] = &[
        "helps with",
        "a skill that helps with",
        "x. this tool handles various",
        "useful for",
        "utilities for",
        "is useful in",
        "does stuff",
        "various",
        "general-purpose",
        "misc",
        "handles things",
        "assists you",
    ];

    #[test]
    fn vague_seeds_match() {
        folded_test::seeds_match(super::VAGUE_PATTERN, VAGUE_SEEDS);
    }

    const WORKFLOW_HEADING_SEEDS: &[&str] = &[
        "workflow",
        "steps",
        "step",
        "quick start",
        "quickstart",
        "how to",
        "usage",
        "checklist",
        "phase",
        "process",
        "procedure",
        "instructions",
    ];

    #[test]
    fn workflow_heading_seeds_match() {
        folded_test::seeds_match(super::WORKFLOW_HEADING_PATTERN, WORKFLOW_HEADING_SEEDS);
    }

    proptest::proptest! {
        #[test]
        fn folded_trigger_agrees(text in folded_test::texts(super::TRIGGER_PATTERN, TRIGGER_SEEDS)) {
            folded_test::agree(super::TRIGGER_PATTERN, &text)?;
        }

        #[test]
        fn folded_vague_agrees(text in folded_test::texts(super::VAGUE_PATTERN, VAGUE_SEEDS)) {
            folded_test::agree(super::VAGUE_PATTERN, &text)?;
        }

        #[test]
        fn folded_workflow_heading_agrees(
            text in folded_test::texts(super::WORKFLOW_HEADING_PATTERN, WORKFLOW_HEADING_SEEDS)
        ) {
            folded_test::agree(super::WORKFLOW_HEADING_PATTERN, &text)?;
        }
    }
}
