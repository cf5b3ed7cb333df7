//! The repair for the YAML error authors write most: a plain value holding `: `
//! (`description: Extracts tables. Use when: ...`, `prompt: Summarize: the file`).
//!
//! YAML reads the second colon as a nested mapping, which a plain value cannot start, and the
//! parser says only "mapping values are not allowed in this context". Quoting the value is the
//! repair. It is offered when the line is a one-line `key: value` (or `- key: value`) whose
//! value a quote cannot change the meaning of, and only when the quoted YAML parses past that
//! line. SW102 (frontmatter) and SW401 (eval.yaml) offer it.

use crate::checks::{Edit, Fix};
use crate::text::Span;
use crate::yaml;

/// Single quotes around the value of the `key: value` line of the YAML at `yaml_span` in
/// `text` that the parser's error (`message`, at offset `error_at` of `text`) is on, when the
/// error is a `: ` inside that value; with the sentence that explains it, for the message.
pub(crate) fn quote_fix(
    text: &str,
    yaml_span: Span,
    error_at: usize,
    message: &str,
) -> Option<(String, Fix)> {
    if !message.contains("mapping values are not allowed") {
        return None;
    }
    let yaml = text.get(yaml_span.start..yaml_span.end)?;
    let at = error_at.checked_sub(yaml_span.start)?;
    let line_start = yaml.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let line_end = yaml[at..].find('\n').map_or(yaml.len(), |i| at + i);
    let line = yaml[line_start..line_end].trim_end_matches('\r');
    let (key, key_start, value_offset) = plain_entry(line)?;
    if at <= line_start + value_offset || continues(&yaml[line_end..], key_start) {
        return None;
    }
    let value = line[value_offset..].trim_end();
    let quoted = format!("'{}'", value.replace('\'', "''"));
    let value_span = Span::new(
        line_start + value_offset,
        line_start + value_offset + value.len(),
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
    let fix = Fix {
        title: format!("Quote the value of `{key}`"),
        edits: vec![Edit {
            span: value_span.shifted(yaml_span.start),
            replacement: quoted,
        }],
    };
    let why =
        format!("the value of `{key}` holds `: `, which YAML reads as a nested mapping: quote it");
    parses_past_the_line.then_some((why, fix))
}

/// The key, its offset and the offset of the value of a `key: value` or `- key: value` line
/// whose value is a plain scalar that quoting keeps as it is: not quoted, not a flow or block
/// collection, no anchor, tag, alias or comment.
fn plain_entry(line: &str) -> Option<(&str, usize, usize)> {
    let indent = indentation(line);
    let key_start = if line[indent..].starts_with("- ") {
        indent + 2 + indentation(&line[indent + 2..])
    } else {
        indent
    };
    let colon = key_start + line[key_start..].find(':')?;
    let key = &line[key_start..colon];
    let is_key_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if key.is_empty() || !key.chars().all(is_key_char) {
        return None;
    }
    let rest = &line[colon + 1..];
    let value_offset = colon + 1 + (rest.len() - rest.trim_start_matches([' ', '\t']).len());
    let value = line[value_offset..].trim_end();
    let first = value.chars().next()?;
    let indicator = "'\"[]{}|>&*!#%@`,".contains(first)
        || ["- ", "? ", ": "].iter().any(|p| value.starts_with(p))
        || ["-", "?", ":"].contains(&value);
    let comment = value.contains(" #") || value.contains("\t#");
    if value_offset == colon + 1 || indicator || comment {
        return None;
    }
    Some((key, key_start, value_offset))
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
