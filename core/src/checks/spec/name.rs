//! The `name` field: present, 1-64 characters of lowercase letters, digits and single inner
//! hyphens, equal to the folder name. The fixes set it to the folder name, which is always
//! what the specification wants when the folder name is itself valid.

use super::super::context::Ctx;
use super::super::{Edit, Fix};
use super::fields::{scalar_text, value_or_key};
use crate::text::Span;
use crate::yaml::Entry;

const MAX_NAME_CHARS: usize = 64;

/// Words the Claude API refuses in a skill's name.
const RESERVED_WORDS: &[&str] = &["anthropic", "claude"];

/// Report a missing `name`, offering to insert the folder name.
pub(super) fn missing(ctx: &mut Ctx<'_>, fm: Span) {
    let fix = ctx.dir_name.clone().filter(|d| is_valid(d)).map(|dir| Fix {
        title: format!("Add `name: {dir}`"),
        edits: vec![Edit {
            span: Span::empty(fm.start),
            replacement: format!("name: {dir}{}", ctx.newline()),
        }],
    });
    ctx.report_fix(
        "SW105",
        Span::new(0, 3),
        "frontmatter has no `name`: expected the skill's folder name".into(),
        fix,
    );
}

/// Check a present `name`.
pub(super) fn check(ctx: &mut Ctx<'_>, entry: &Entry) {
    let Some(name) = scalar_text(ctx, entry) else {
        return;
    };
    let at = value_or_key(entry);
    let fix = set_to_folder(ctx, entry, name);
    if name.trim().is_empty() {
        ctx.report_fix("SW106", at, "`name` is empty".into(), fix);
        return;
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        ctx.report_fix(
            "SW107",
            at,
            format!("name `{name}` is {chars} characters, more than the {MAX_NAME_CHARS} allowed"),
            fix.clone(),
        );
    }
    let problems = problems(name);
    if !problems.is_empty() {
        ctx.report_fix(
            "SW106",
            at,
            format!(
                "name `{name}` must be lowercase letters, digits and single inner hyphens: {}",
                problems.join(", ")
            ),
            fix.clone(),
        );
    } else if !name.is_ascii() {
        ctx.report(
            "SW119",
            at,
            format!(
                "name `{name}` has non-ASCII letters; Claude Code and most clients accept only a-z, 0-9 and `-`"
            ),
        );
    }
    if let Some(word) = RESERVED_WORDS.iter().find(|w| name.contains(*w)) {
        ctx.report(
            "SW122",
            at,
            format!("name `{name}` contains `{word}`, a word the Claude API reserves"),
        );
    }
    match ctx.dir_name.clone() {
        Some(dir) if dir != name => ctx.report_fix(
            "SW108",
            at,
            format!("name `{name}` does not match its folder `{dir}`"),
            fix,
        ),
        _ => {}
    }
}

/// True when `name` satisfies every format rule (the folder name is offered as a fix only then).
pub(crate) fn is_valid(name: &str) -> bool {
    !name.is_empty() && name.chars().count() <= MAX_NAME_CHARS && problems(name).is_empty()
}

/// What is wrong with a name's characters, as short phrases. Letters count as the reference
/// validator counts them: any Unicode letter or digit that is already lowercase.
pub(crate) fn problems(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let upper: String = name.chars().filter(|c| c.is_uppercase()).collect();
    if !upper.is_empty() {
        out.push(format!("uppercase `{upper}`"));
    }
    let mut bad: Vec<char> = name
        .chars()
        .filter(|c| !(c.is_alphanumeric() || *c == '-'))
        .collect();
    bad.dedup();
    if !bad.is_empty() {
        let shown: Vec<String> = bad.iter().map(|c| format!("{c:?}")).collect();
        out.push(format!("invalid {}", shown.join(" ")));
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push("hyphen at the start or end".into());
    }
    if name.contains("--") {
        out.push("consecutive hyphens".into());
    }
    out
}

/// Set `name` to the folder name, when that name is valid and differs.
fn set_to_folder(ctx: &Ctx<'_>, entry: &Entry, name: &str) -> Option<Fix> {
    let dir = ctx.dir_name.clone().filter(|d| is_valid(d) && d != name)?;
    let (span, replacement) = if entry.value.span.is_empty() {
        let colon = entry.key.span.end;
        if !ctx.doc.text[colon..].starts_with(':') {
            return None;
        }
        (Span::empty(colon + 1), format!(" {dir}"))
    } else {
        (entry.value.span, dir.clone())
    };
    Some(Fix {
        title: format!("Set name to `{dir}`"),
        edits: vec![Edit { span, replacement }],
    })
}
