//! The repair for the YAML errors authors write most: a one-line plain value that YAML reads
//! as something else.
//!
//! - A value holding `: ` (`description: Extracts tables. Use when: ...`, `prompt: Summarize:
//!   the file`). YAML reads the second colon as a nested mapping, which a plain value cannot
//!   start, and the parser says only "mapping values are not allowed in this context".
//! - A value starting with a character YAML reserves (`` ` ``, `@`, `%`) or with `*`, which
//!   YAML reads as an alias (`description: *New* PDF tools`).
//!
//! Quoting the value is the repair: in single quotes every character stands for itself. It is
//! offered only on a one-line `key: value` (or `- key: value`) with no comment, and only when
//! the quoted YAML parses past that line. SW102 (frontmatter) and SW401 (eval.yaml) offer it.

use crate::checks::{Edit, Fix};
use crate::text::{Span, quoted_char};
use crate::yaml;

/// Single quotes around the value of the `key: value` line of the YAML at `yaml_span` in
/// `text` that the parser's error (`message`, at offset `error_at` of `text`) is on, when the
/// value is what the error is about; with the sentence that explains it, for the message.
pub(crate) fn quote_fix(
    text: &str,
    yaml_span: Span,
    error_at: usize,
    message: &str,
) -> Option<(String, Fix)> {
    let yaml = text.get(yaml_span.start..yaml_span.end)?;
    let at = error_at.checked_sub(yaml_span.start)?;
    let line_start = yaml.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let line_end = yaml[at..].find('\n').map_or(yaml.len(), |i| at + i);
    let line = yaml[line_start..line_end].trim_end_matches('\r');
    let entry = Entry::of(line)?;
    let value = line[entry.value..].trim_end();
    let cause = cause(message, value, at.checked_sub(line_start + entry.value)?)?;
    if value.contains(" #") || value.contains("\t#") || continues(&yaml[line_end..], entry.key) {
        return None;
    }
    let quoted = format!("'{}'", value.replace('\'', "''"));
    let value_span = Span::new(
        line_start + entry.value,
        line_start + entry.value + value.len(),
    );
    let fixed = format!(
        "{}{quoted}{}",
        &yaml[..value_span.start],
        &yaml[value_span.end..]
    );
    let fixed_line_end = line_end + quoted.len() - value.len();
    let parses_past_the_line = match yaml::parse(&fixed, 0) {
        Ok(_) => true,
        Err(e) => e.span.start > fixed_line_end,
    };
    let key = &line[entry.key..entry.colon];
    let fix = Fix {
        title: format!("Quote the value of `{key}`"),
        edits: vec![Edit {
            span: value_span.shifted(yaml_span.start),
            replacement: quoted,
        }],
    };
    parses_past_the_line.then(|| (format!("the value of `{key}` {cause}: quote it"), fix))
}

/// What in `value` the parser's `message` is about, as the end of "the value of `key` ...",
/// when quoting answers it; `offset` is where the error is, from the value's start.
fn cause(message: &str, value: &str, offset: usize) -> Option<String> {
    let first = value.chars().next()?;
    if message.contains("mapping values are not allowed") {
        let plain_start = !"'\"[]{}|>&*!#%@`,".contains(first)
            && !["- ", "? ", ": "].iter().any(|p| value.starts_with(p));
        return (offset > 0 && plain_start)
            .then(|| "holds `: `, which YAML reads as a nested mapping".to_string());
    }
    if offset != 0 {
        return None;
    }
    if message.contains("unexpected character") && "`@%".contains(first) {
        let shown = quoted_char(first);
        return Some(format!("starts with {shown}, which YAML reserves"));
    }
    if message.contains("unknown anchor") && first == '*' {
        return Some("starts with `*`, which YAML reads as an alias".to_string());
    }
    None
}

/// Where the parts of a `key: value` or `- key: value` line start.
struct Entry {
    /// The key's offset.
    key: usize,
    /// The offset of the colon after the key.
    colon: usize,
    /// The value's offset.
    value: usize,
}

impl Entry {
    /// The parts of `line`, when it is a simple key (letters, digits, `_`, `-`), a colon, white
    /// space and a value.
    fn of(line: &str) -> Option<Entry> {
        let indent = indentation(line);
        let key = if line[indent..].starts_with("- ") {
            indent + 2 + indentation(&line[indent + 2..])
        } else {
            indent
        };
        let colon = key + line[key..].find(':')?;
        let is_key_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if colon == key || !line[key..colon].chars().all(is_key_char) {
            return None;
        }
        let rest = &line[colon + 1..];
        let value = colon + 1 + (rest.len() - rest.trim_start_matches([' ', '\t']).len());
        (value > colon + 1 && value < line.trim_end().len()).then_some(Entry { key, colon, value })
    }
}

/// Whether the lines after a `key: value` line carry on its value: the next line that is not
/// blank is indented past the key.
fn continues(after: &str, key_start: usize) -> bool {
    after
        .split('\n')
        .skip(1)
        .map(|l| l.trim_end_matches('\r'))
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| indentation(l) > key_start)
}

/// The number of leading spaces.
fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}
