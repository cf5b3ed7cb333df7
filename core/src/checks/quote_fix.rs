//! The repair for the YAML errors authors write most: a one-line plain value that YAML reads
//! as something else.
//!
//! - A value holding `: ` (`description: Extracts tables. Use when: ...`, `prompt: Summarize:
//!   the file`). YAML reads the second colon as a nested mapping, which a plain value cannot
//!   start, and the parser says only "mapping values are not allowed in this context".
//! - A value starting with a character YAML reserves (`` ` ``, `@`, `%`) or with `*`, which
//!   YAML reads as an alias (`description: *New* PDF tools`).
//!
//! - Two fields on one line (`name: pdf-tools description: Extract text.`): the `: ` is a
//!   known field's, joined to a one-word value. Quoting would make the description part of
//!   `name` (and `name`'s own fix would then drop it); the repair is a line break before
//!   the second field.
//!
//! Otherwise quoting the value is the repair: in single quotes every character stands for
//! itself. Either is offered only on a one-line `key: value` (or `- key: value`) with no
//! comment, and only when the repaired YAML parses past that line. SW102 (frontmatter) and
//! SW401 (eval.yaml) offer it.

use crate::checks::{Edit, Fix};
use crate::text::{Span, quoted_char};
use crate::yaml;

/// The repair of the `key: value` line of the YAML at `yaml_span` in `text` that the
/// parser's error (`message`, at offset `error_at` of `text`) is on, when the value is what
/// the error is about: a line break before a second field of `fields` joined to it, else
/// single quotes around it; with the sentence that explains it, for the message.
pub(crate) fn quote_fix(
    text: &str,
    yaml_span: Span,
    error_at: usize,
    message: &str,
    fields: &[&str],
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
    if let Some(split) = split_fix(yaml, line_start, line, &entry, fields) {
        let (why, mut fix) = split;
        fix.edits[0].span = fix.edits[0].span.shifted(yaml_span.start);
        return Some((why, fix));
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

/// A line break before a field of `fields` that follows a one-word value on the same line
/// (`name: pdf-tools description: ...`), when that field is not a key of the YAML already
/// and the YAML parses past the line once broken. Spans are in `yaml`.
fn split_fix(
    yaml: &str,
    line_start: usize,
    line: &str,
    entry: &Entry,
    fields: &[&str],
) -> Option<(String, Fix)> {
    let value = &line[entry.value..];
    let gap = value.find([' ', '\t'])?;
    let second = gap + value[gap..].len() - value[gap..].trim_start().len();
    let rest = &value[second..];
    let field = fields.iter().find(|f| {
        rest.strip_prefix(**f)
            .is_some_and(|r| r == ":" || r.starts_with(": ") || r.starts_with(":\t"))
    })?;
    let written = |f: &str| {
        yaml.lines().any(|l| {
            l.trim_start()
                .trim_start_matches("- ")
                .starts_with(&format!("{f}:"))
        })
    };
    if written(field) {
        return None;
    }
    let newline = if line.len() < yaml[line_start..].split('\n').next()?.len() {
        "\r\n"
    } else {
        "\n"
    };
    let gap_span = Span::new(
        line_start + entry.value + gap,
        line_start + entry.value + second,
    );
    let replacement = format!("{newline}{}", " ".repeat(entry.key));
    let fixed = format!(
        "{}{replacement}{}",
        &yaml[..gap_span.start],
        &yaml[gap_span.end..]
    );
    let line_end = line_start + line.len() + replacement.len() - gap_span.len();
    let parses_past_the_line = match yaml::parse(&fixed, 0) {
        Ok(_) => true,
        Err(e) => e.span.start > line_end,
    };
    let key = &line[entry.key..entry.colon];
    let fix = Fix {
        title: format!("Put `{field}` on a line of its own"),
        edits: vec![Edit {
            span: gap_span,
            replacement,
        }],
    };
    let why = format!(
        "`{field}:` follows the value of `{key}` on the same line: put it on a line of its own"
    );
    parses_past_the_line.then_some((why, fix))
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
