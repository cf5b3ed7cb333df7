//! SW123: text Claude Code substitutes before the model reads the skill. When a skill is
//! invoked with arguments, Claude Code replaces `$ARGUMENTS` with all of them, `$ARGUMENTS[N]`
//! and `$N` with the Nth (0-based), and names listed in `arguments` with theirs, everywhere in
//! the body, code blocks included (code.claude.com/docs/en/skills, "Pass arguments to
//! skills"). A shell or awk `$1` in an example (`awk '{print $1}'`) then reaches the model as
//! the user's argument, or as nothing.
//!
//! Reported: `$N` in code (a fenced block or an inline span), where it is a shell positional
//! parameter, unless the skill declares `arguments` or `argument-hint` (then it is meant);
//! `$ARGUMENTS` when the skill declares neither, as information: other harnesses leave it as
//! written, and users cannot tell the skill takes arguments. A `$5` in prose is a price.

use super::super::Severity;
use super::super::context::Ctx;
use super::super::markdown::Body;
use crate::text::Span;

/// Run SW123 over the body.
pub(crate) fn check(ctx: &mut Ctx<'_>, body: &Body<'_>) {
    let text = body.slice();
    if memchr::memchr(b'$', text.as_bytes()).is_none() {
        return;
    }
    let declares = ctx
        .doc
        .frontmatter_root()
        .is_some_and(|r| r.get("arguments").is_some() || r.get("argument-hint").is_some());
    let base = body.span.start;
    let mut found = Vec::new();
    for at in memchr::memchr_iter(b'$', text.as_bytes()) {
        let Some((len, kind)) = substitution_at(text, at) else {
            continue;
        };
        let span = Span::new(base + at, base + at + len);
        match kind {
            Kind::Positional if !declares && in_code(body, text, base + at) => {
                found.push((
                    span,
                    Severity::Warning,
                    positional_message(&text[at..at + len]),
                ));
            }
            Kind::Arguments if !declares => {
                found.push((span, Severity::Info, arguments_message(&text[at..at + len])));
            }
            _ => {}
        }
    }
    for (span, severity, message) in found {
        ctx.report_as("SW123", severity, span, message, None);
    }
}

/// What a `$` starts.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// `$0`..`$9` (and more digits).
    Positional,
    /// `$ARGUMENTS` or `$ARGUMENTS[N]`.
    Arguments,
}

/// The length and kind of the substitution starting at `text[at] == '$'`, if one does. A `$`
/// after a word character, `$` or `\` starts none (`a$1`, `$$1`, `\$1`); nor does a number
/// that goes on as a price (`$1.50`, `$1,000`) or a longer name (`$ARGUMENTSX`).
fn substitution_at(text: &str, at: usize) -> Option<(usize, Kind)> {
    let bytes = text.as_bytes();
    if at > 0
        && matches!(bytes[at - 1], b'$' | b'\\' | b'_' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
    {
        return None;
    }
    let rest = &bytes[at + 1..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 {
        let after = &rest[digits..];
        let price = matches!(after, [b'.' | b',', d, ..] if d.is_ascii_digit());
        let word = after
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
        return (!price && !word).then_some((1 + digits, Kind::Positional));
    }
    let name = b"ARGUMENTS";
    if !rest.starts_with(name) {
        return None;
    }
    let after = &rest[name.len()..];
    if after
        .first()
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        return None;
    }
    let index = match after {
        [b'[', more @ ..] => {
            let n = more.iter().take_while(|b| b.is_ascii_digit()).count();
            (n > 0 && more.get(n) == Some(&b']')).then_some(n + 2)
        }
        _ => None,
    };
    Some((1 + name.len() + index.unwrap_or(0), Kind::Arguments))
}

/// Whether `offset` is in a fenced code block or an inline code span (an odd number of
/// backticks before it on its line).
fn in_code(body: &Body<'_>, text: &str, offset: usize) -> bool {
    if body.is_code_at(offset) {
        return true;
    }
    let local = offset - body.span.start;
    let line_start = text[..local].rfind('\n').map_or(0, |i| i + 1);
    memchr::memchr_iter(b'`', &text.as_bytes()[line_start..local]).count() % 2 == 1
}

fn positional_message(written: &str) -> String {
    let n: usize = written[1..].parse().unwrap_or(0);
    format!(
        "Claude Code replaces `{written}` with the skill's argument {n} (`$ARGUMENTS[{n}]`, \
         counted from 0) before the model reads this, code blocks included: a shell `{written}` \
         here reaches the model as the user's argument or as nothing; move the command into a \
         script under scripts/, or declare `arguments` if the substitution is meant"
    )
}

fn arguments_message(written: &str) -> String {
    format!(
        "Claude Code replaces `{written}` with the arguments the skill is invoked with; other \
         harnesses leave it as written: declare `argument-hint` so users know what to pass"
    )
}

#[cfg(test)]
mod tests {
    use super::super::super::test_support::*;
    use super::*;

    fn with_body(extra: &str) -> String {
        good_with("## Edge cases", &format!("{extra}\n\n## Edge cases"))
    }

    #[test]
    fn shell_positionals_in_code_are_warnings() {
        let text = with_body("```bash\nawk '{print $1}' data.txt\n```\n\nOr run `cut -f $2`.");
        let hits = check_rule(&text, "SW123");
        assert_eq!(hits.len(), 2, "{hits:#?}");
        assert_eq!(&text[hits[0].span.start..hits[0].span.end], "$1");
        assert_eq!(hits[0].severity, Severity::Warning);
        assert!(hits[0].message.contains("argument 1"));
        let arguments = with_body("Fix issue $ARGUMENTS[0] in the tracker; all: $ARGUMENTS.");
        let hits = check_rule(&arguments, "SW123");
        assert_eq!(hits.len(), 2);
        assert!(hits.iter().all(|h| h.severity == Severity::Info));
        assert_eq!(
            &arguments[hits[0].span.start..hits[0].span.end],
            "$ARGUMENTS[0]"
        );
    }

    /// The benign twins: prices, escaped and longer names, and skills that mean it.
    #[test]
    fn prices_names_and_declared_arguments_are_silent() {
        for extra in [
            "It costs $5 per month, or $1.50 a day, $1,000 a year.",
            "```bash\necho \"$HOME $PATH ${1} \\$1 $$1 a$1\"\n```",
            "Use `$ARGUMENTS_FILE` and `$1abc` as written.",
        ] {
            assert_eq!(check_rule(&with_body(extra), "SW123").len(), 0, "{extra}");
        }
        let declared = good_with(
            "license: Apache-2.0",
            "license: Apache-2.0\nargument-hint: \"[file]\"",
        );
        let declared = declared.replace(
            "## Edge cases",
            "```bash\nawk '{print $1}' $ARGUMENTS\n```\n\n## Edge cases",
        );
        assert_eq!(check_rule(&declared, "SW123").len(), 0);
    }
}
