//! What the readers of other tools' formats share: the notes on what skillwatch does not run,
//! the rules that map their checks onto [`Assertion`]s, paths relative to the eval file,
//! and durations.
//!
//! Mapping rules (docs/evals.md, "Mapping other formats"): a case-sensitive substring check
//! becomes `output_matches` of the escaped text under `(?-i)`; a regular expression of a tool
//! that matches case-sensitively (Vally, waza and skill-up use JavaScript or Go regexps) is
//! prefixed with `(?-i)`, since skillwatch compiles patterns ignoring case as skill-validator
//! does; an inline `(?i)` in the pattern still switches case back off.

use std::num::NonZeroU32;

use crate::text::Span;
use crate::yaml::{Node, Resolved};

use super::ParseError;
use super::fields::{Fields, describe, key_span};
use super::model::{Assertion, Note, NoteLevel, Pattern};

/// The notes one file's reader collects.
pub(crate) struct Notes<'f> {
    file: &'f str,
    pub list: Vec<Note>,
}

impl<'f> Notes<'f> {
    pub fn new(file: &'f str) -> Notes<'f> {
        Notes {
            file,
            list: Vec::new(),
        }
    }

    fn push(&mut self, span: Span, level: NoteLevel, message: String) {
        self.list.push(Note {
            file: self.file.to_string(),
            span,
            line: 0,
            column: 0,
            message,
            level,
        });
    }

    /// Something that changes what is measured.
    pub fn warn(&mut self, span: Span, what: impl Into<String>) {
        let message = format!("not run by skillwatch: {}", what.into());
        self.push(span, NoteLevel::Warning, message);
    }

    /// Something skillwatch is to run in a later version (the plugin arm).
    pub fn warn_yet(&mut self, span: Span, what: impl Into<String>) {
        let message = format!("not run by skillwatch yet: {}", what.into());
        self.push(span, NoteLevel::Warning, message);
    }

    /// A run setting skillwatch takes from its own flags.
    pub fn info(&mut self, span: Span, what: impl Into<String>) {
        let message = format!("not run by skillwatch: {}", what.into());
        self.push(span, NoteLevel::Info, message);
    }

    /// A note at the key `key` of `f` (its value when the key has no span).
    pub fn warn_at(&mut self, f: &Fields<'_>, key: &str, what: impl Into<String>) {
        let span = key_span(f.node, key).unwrap_or(f.node.span);
        self.warn(span, what);
    }

    /// An info note at the key `key` of `f`.
    pub fn info_at(&mut self, f: &Fields<'_>, key: &str, what: impl Into<String>) {
        let span = key_span(f.node, key).unwrap_or(f.node.span);
        self.info(span, what);
    }
}

/// The run settings a file may hold that skillwatch takes from `skillwatch run`'s flags
/// instead: `(key, flag)`.
pub(crate) fn run_setting_notes(f: &Fields<'_>, keys: &[(&str, &str)], notes: &mut Notes<'_>) {
    for (key, flag) in keys {
        if let Some(node) = f.present(key) {
            let value = node
                .as_scalar()
                .map_or_else(|| describe(node), |s| format!("`{}`", s.text));
            notes.info_at(
                f,
                key,
                format!(
                    "`{}` ({value}) is a run setting; skillwatch takes it from `skillwatch run \
                     {flag}`",
                    f.path(key).trim_start_matches('/').replace('/', ".")
                ),
            );
        }
    }
}

/// A case-sensitive "the output contains `value`".
pub(crate) fn contains_exactly(value: &str) -> Assertion {
    Assertion::OutputMatches {
        pattern: Pattern::new(format!("(?-i){}", fancy_regex::escape(value)))
            .expect("an escaped text compiles"),
    }
}

/// A case-sensitive "the output does not contain `value`".
pub(crate) fn lacks_exactly(value: &str) -> Assertion {
    Assertion::OutputNotMatches {
        pattern: Pattern::new(format!("(?-i){}", fancy_regex::escape(value)))
            .expect("an escaped text compiles"),
    }
}

/// A pattern of a tool whose regexps match case-sensitively, as skillwatch compiles it; an
/// error names where it was written.
pub(crate) fn case_sensitive(pattern: &str, node: &Node, at: &str) -> Result<Pattern, ParseError> {
    Pattern::new(pattern).map_err(|e| ParseError::shape(node.span, format!("{at}: {e}")))?;
    Ok(Pattern::new(format!("(?-i){pattern}")).expect("a pattern that compiles still does"))
}

/// `rel` (written relative to the folder of the eval file `file`) relative to the skill
/// folder, as [`super::Origin::file`] is: `/`-separated, `.` and `..` resolved lexically
/// (leading `..` kept).
pub(crate) fn beside(file: &str, rel: &str) -> String {
    let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
    join(dir, rel)
}

/// `base/rel` with `.` and `..` resolved lexically (leading `..` kept).
pub(crate) fn join(base: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let rel = rel.trim();
    let all = if rel.starts_with('/') {
        rel.split('/').collect::<Vec<_>>()
    } else {
        base.split('/').chain(rel.split('/')).collect()
    };
    for part in all {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

/// A duration: `5m`, `300s`, `30000ms`, `1h`, or a bare number of seconds, rounded up to
/// whole seconds; `None` when absent. Zero or unreadable is an error naming the forms.
pub(crate) fn duration_secs(f: &Fields<'_>, key: &str) -> Result<Option<NonZeroU32>, ParseError> {
    let Some(node) = f.present(key) else {
        return Ok(None);
    };
    let secs = node.as_scalar().and_then(|s| match s.resolve() {
        Resolved::Int(i) if i > 0 => u64::try_from(i).ok(),
        Resolved::Float(x) if x > 0.0 && x.is_finite() => Some(x.ceil() as u64),
        _ => parse_duration(&s.text),
    });
    secs.and_then(|s| NonZeroU32::new(u32::try_from(s).ok()?))
        .map(Some)
        .ok_or_else(|| {
            ParseError::shape(
                node.span,
                format!(
                    "{}: expected a duration greater than 0 (`5m`, `300s`, `30000ms`, or seconds), found {}",
                    f.path(key),
                    describe(node)
                ),
            )
        })
}

fn parse_duration(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = t.split_at(split);
    let n: f64 = number.parse().ok()?;
    let ms = match unit.trim() {
        "ms" => n,
        "s" | "sec" | "secs" => n * 1000.0,
        "m" | "min" | "mins" => n * 60_000.0,
        "h" => n * 3_600_000.0,
        _ => return None,
    };
    (ms > 0.0 && ms.is_finite()).then(|| (ms / 1000.0).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml;

    #[test]
    fn paths_beside_the_eval_file() {
        assert_eq!(
            beside("../../../../tests/p/s/eval.vally.yaml", "fixtures/a.cs"),
            "../../../../tests/p/s/fixtures/a.cs"
        );
        assert_eq!(
            beside("../../../../tests/p/s/eval.vally.yaml", "."),
            "../../../../tests/p/s"
        );
        assert_eq!(beside("evals/eval.yaml", "../x/./y"), "x/y");
        assert_eq!(beside("eval.yaml", "."), ".");
        assert_eq!(join("..", "../a"), "../../a");
    }

    #[test]
    fn durations() {
        let text = "a: 5m\nb: 300s\nc: 30000ms\nd: 120\ne: 0\nf: soon\ng: 1.5s\n";
        let root = yaml::parse(text, 0).unwrap();
        let f = Fields::new(&root, String::new(), super::super::fields::Texts::AnyScalar).unwrap();
        let secs = |k| duration_secs(&f, k).map(|d| d.map(NonZeroU32::get));
        assert_eq!(secs("a").unwrap(), Some(300));
        assert_eq!(secs("b").unwrap(), Some(300));
        assert_eq!(secs("c").unwrap(), Some(30));
        assert_eq!(secs("d").unwrap(), Some(120));
        assert_eq!(secs("g").unwrap(), Some(2));
        assert_eq!(secs("x").unwrap(), None);
        assert!(secs("e").unwrap_err().message.contains("greater than 0"));
        assert!(secs("f").is_err());
    }

    #[test]
    fn exact_and_case_sensitive_checks() {
        let Assertion::OutputMatches { pattern } = contains_exactly("a.b (c)") else {
            panic!()
        };
        let re = pattern.compile();
        assert!(re.is_match("x a.b (c) y").unwrap());
        assert!(!re.is_match("A.B (C)").unwrap());
        assert!(!re.is_match("axb (c)").unwrap());
        let node = yaml::parse("p", 0).unwrap();
        let p = case_sensitive("Net(8|9)", &node, "/p").unwrap();
        assert!(p.compile().is_match("Net9").unwrap());
        assert!(!p.compile().is_match("net9").unwrap());
        let p = case_sensitive("(?i)net9", &node, "/p").unwrap();
        assert!(p.compile().is_match("NET9").unwrap());
        assert!(case_sensitive("(x", &node, "/p").is_err());
    }
}
