//! The frontmatter's fields: required ones present, each of the right type and size, no
//! duplicates, no unknown ones (or, under the default profile, a warning that suggests moving
//! them under `metadata`).

use std::sync::LazyLock;

use regex::Regex;

use super::super::context::Ctx;
use super::super::{Edit, Fix, Profile};
use super::{is_claude_code_field, name, spec_fields, truncate};
use crate::fields::Place;
use crate::text::Span;
use crate::yaml::{Entry, Node, Resolved, Value};

const MAX_DESCRIPTION_CHARS: usize = 1024;

/// An XML/HTML-like tag, which the Claude API refuses in a description.
static XML_TAG: LazyLock<Regex> = LazyLock::new(|| {
    crate::checks::pattern::compile(r"</?[A-Za-z][A-Za-z0-9_.:-]*(\s+[A-Za-z_:][^<>]*)?/?>")
});
const MAX_COMPATIBILITY_CHARS: usize = 500;

/// Check the top-level entries of a mapping frontmatter whose YAML text is `fm`.
pub(super) fn check(ctx: &mut Ctx<'_>, fm: Span, entries: &[Entry]) {
    duplicates(ctx, entries);
    for entry in entries {
        unknown(ctx, fm, entries, entry);
    }
    let fence = Span::new(0, 3);
    match first(entries, "name") {
        None => name::missing(ctx, fm),
        Some(entry) => name::check(ctx, entry),
    }
    match first(entries, "description") {
        None => ctx.report(
            "SW109",
            fence,
            "frontmatter has no `description`: say what the skill does and when to use it".into(),
        ),
        Some(entry) => description(ctx, entry),
    }
    if let Some(entry) = first(entries, "compatibility") {
        compatibility(ctx, entry);
    }
    if let Some(entry) = first(entries, "license") {
        text_field(ctx, entry);
    }
    if let Some(entry) = first(entries, "allowed-tools") {
        allowed_tools(ctx, entry);
    }
    if let Some(entry) = first(entries, "metadata") {
        metadata(ctx, entry);
    }
}

/// The first entry with key `key` (later duplicates are reported by [`duplicates`]).
pub(crate) fn first<'e>(entries: &'e [Entry], key: &str) -> Option<&'e Entry> {
    entries.iter().find(|e| e.key.as_key() == Some(key))
}

fn duplicates(ctx: &mut Ctx<'_>, entries: &[Entry]) {
    for (i, entry) in entries.iter().enumerate() {
        let Some(key) = entry.key.as_key() else {
            continue;
        };
        if let Some(earlier) = entries[..i].iter().find(|e| e.key.as_key() == Some(key)) {
            let line = ctx.line_number(earlier.key.span.start);
            ctx.report(
                "SW117",
                entry.key.span,
                format!(
                    "duplicate field `{key}` (first on line {line}); YAML keys must be unique and \
                     readers disagree on which value wins"
                ),
            );
        }
    }
}

/// The text of a scalar that should be a string, reporting a wrong type. Returns None when
/// the value is not a scalar (already reported) so the caller skips its own checks.
pub(super) fn scalar_text<'n>(ctx: &mut Ctx<'_>, entry: &'n Entry) -> Option<&'n str> {
    let key = entry.key.as_key().unwrap_or_default();
    let Some(scalar) = entry.value.as_scalar() else {
        ctx.report(
            "SW113",
            entry.value.span,
            format!(
                "`{key}` is a {}, expected a string",
                entry.value.type_name()
            ),
        );
        return None;
    };
    match scalar.resolve() {
        Resolved::Str(text) => Some(text),
        Resolved::Null => Some(""),
        _ => {
            let fix = quote_fix(ctx, &entry.value);
            ctx.report_fix(
                "SW114",
                entry.value.span,
                format!(
                    "`{key}` is the {} `{}` in YAML, not text; quote it",
                    entry.value.type_name(),
                    scalar.text
                ),
                fix,
            );
            Some(&scalar.text)
        }
    }
}

/// A fix that writes a scalar as a double-quoted string of its source text.
pub(super) fn quote_fix(ctx: &Ctx<'_>, node: &Node) -> Option<Fix> {
    let source = ctx.doc.slice(node.span);
    if source.is_empty() || source.contains('\n') {
        return None;
    }
    let quoted = serde_json::to_string(source).ok()?;
    Some(Fix {
        title: format!("Quote as {quoted}"),
        edits: vec![Edit {
            span: node.span,
            replacement: quoted,
        }],
    })
}

fn description(ctx: &mut Ctx<'_>, entry: &Entry) {
    let Some(text) = scalar_text(ctx, entry) else {
        return;
    };
    let at = value_or_key(entry);
    if text.trim().is_empty() {
        ctx.report(
            "SW110",
            at,
            "`description` is empty: say what the skill does and when to use it".into(),
        );
        return;
    }
    // Every match of XML_TAG starts with its literal `<`: a description without one (almost
    // all) has no match, and skips the regex search (and, in a fresh process, its compile).
    if text.contains('<')
        && let Some(tag) = XML_TAG.find(text)
    {
        ctx.report(
            "SW122",
            at,
            format!(
                "`description` contains the XML tag `{}`; the Claude API refuses descriptions with XML tags",
                tag.as_str()
            ),
        );
    }
    let chars = text.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        ctx.report(
            "SW111",
            at,
            format!(
                "`description` is {chars} characters, more than the {MAX_DESCRIPTION_CHARS} allowed"
            ),
        );
    }
}

fn compatibility(ctx: &mut Ctx<'_>, entry: &Entry) {
    let Some(text) = scalar_text(ctx, entry) else {
        return;
    };
    let at = value_or_key(entry);
    let chars = text.chars().count();
    if text.trim().is_empty() {
        ctx.report(
            "SW112",
            at,
            "`compatibility` is empty: remove it, or name what the skill needs (1-500 characters)"
                .into(),
        );
    } else if chars > MAX_COMPATIBILITY_CHARS {
        ctx.report(
            "SW112",
            at,
            format!(
                "`compatibility` is {chars} characters, more than the {MAX_COMPATIBILITY_CHARS} allowed"
            ),
        );
    }
}

/// A string field with no further constraint (`license`): report a wrong type or emptiness.
fn text_field(ctx: &mut Ctx<'_>, entry: &Entry) {
    if entry.value.is_null() {
        let key = entry.key.as_key().unwrap_or_default();
        ctx.report(
            "SW114",
            value_or_key(entry),
            format!("`{key}` is empty (null); give it a value or remove it"),
        );
        return;
    }
    scalar_text(ctx, entry);
}

fn allowed_tools(ctx: &mut Ctx<'_>, entry: &Entry) {
    match &entry.value.value {
        Value::Scalar(_) => text_field(ctx, entry),
        Value::Sequence(items) => {
            for item in items.iter().filter(|i| i.as_scalar().is_none()) {
                ctx.report(
                    "SW113",
                    item.span,
                    format!(
                        "`allowed-tools` item is a {}, expected a tool name such as `Read` or `Bash(git:*)`",
                        item.type_name()
                    ),
                );
            }
        }
        Value::Mapping(_) => ctx.report(
            "SW113",
            entry.value.span,
            "`allowed-tools` is a mapping, expected a space-delimited string or a list of tool names"
                .into(),
        ),
    }
}

fn metadata(ctx: &mut Ctx<'_>, entry: &Entry) {
    let Some(items) = entry.value.as_mapping() else {
        if !entry.value.is_null() {
            ctx.report(
                "SW113",
                entry.value.span,
                format!(
                    "`metadata` is a {}, expected a mapping of string keys to string values",
                    entry.value.type_name()
                ),
            );
        }
        return;
    };
    duplicates(ctx, items);
    for item in items {
        metadata_value(ctx, item);
    }
}

fn metadata_value(ctx: &mut Ctx<'_>, item: &Entry) {
    let key = item.key.as_key().unwrap_or_default();
    let value = &item.value;
    let (what, fix) = match &value.value {
        Value::Scalar(s) => match s.resolve() {
            Resolved::Str(_) => return,
            Resolved::Null => ("empty (null)".to_string(), None),
            _ => (
                format!("the {} `{}`", value.type_name(), s.text),
                quote_fix(ctx, value),
            ),
        },
        Value::Sequence(items) => (
            format!("a list of {}", items.len()),
            join_list_fix(ctx, item),
        ),
        Value::Mapping(_) => ("a mapping".to_string(), None),
    };
    ctx.report_fix(
        "SW115",
        value_or_key(item),
        format!("`metadata.{key}` is {what}; metadata values must be strings"),
        fix,
    );
}

/// Replace a list of scalars by one comma-separated string: `tags: [a, b]` -> `tags: "a, b"`.
fn join_list_fix(ctx: &Ctx<'_>, item: &Entry) -> Option<Fix> {
    let joined = scalar_items(&item.value)?.join(", ");
    let quoted = serde_json::to_string(&joined).ok()?;
    Some(Fix {
        title: format!("Write as the string {quoted}"),
        edits: vec![Edit {
            span: Span::new(item.key.span.end, item.value.span.end),
            replacement: format!(": {quoted}"),
        }],
    })
    .filter(|_| ctx.doc.slice(item.key.span).trim() == item.key.as_key().unwrap_or_default())
}

fn scalar_items(node: &Node) -> Option<Vec<&str>> {
    node.as_sequence()?
        .iter()
        .map(|i| i.as_scalar().map(|s| s.text.as_str()))
        .collect()
}

/// Where to point for a field's value: the value, or the key when the value is empty.
pub(super) fn value_or_key(entry: &Entry) -> Span {
    if entry.value.span.is_empty() {
        entry.key.span
    } else {
        entry.value.span
    }
}

fn known_fields(profile: Profile) -> impl Iterator<Item = &'static str> {
    Place::Frontmatter.known(profile).map(|f| f.name)
}

fn unknown(ctx: &mut Ctx<'_>, fm: Span, entries: &[Entry], entry: &Entry) {
    let Some(key) = entry.key.as_key() else {
        return;
    };
    let profile = ctx.options.profile;
    if known_fields(profile).any(|k| k == key) {
        return;
    }
    if let Some(known) = misspelt(profile, entries, key) {
        let fix = Fix {
            title: format!("Rename to `{known}`"),
            edits: vec![Edit {
                span: entry.key.span,
                replacement: known.to_string(),
            }],
        };
        ctx.report_fix(
            "SW116",
            entry.key.span,
            format!("unknown field `{key}`: did you mean `{known}`?"),
            Some(fix).filter(|_| ctx.doc.slice(entry.key.span) == key),
        );
        return;
    }
    let message = if is_claude_code_field(key) {
        format!(
            "field `{key}` is a Claude Code extension, not in the Agent Skills specification \
             (which allows {}); move it under `metadata` or use the default profile",
            spec_fields().join(", ")
        )
    } else if profile == Profile::AgentSkills {
        format!(
            "unknown field `{key}`: the Agent Skills specification allows only {}; move it under `metadata`",
            spec_fields().join(", ")
        )
    } else {
        format!(
            "unknown field `{key}`: neither the Agent Skills specification nor Claude Code defines \
             it; move it under `metadata`"
        )
    };
    let fix = move_to_metadata(ctx, fm, entries, entry);
    let message = match (&fix, why_not_moved(entry)) {
        (None, Some(why)) => format!("{message}; {why}"),
        _ => message,
    };
    ctx.report_fix("SW116", entry.key.span, message, fix);
}

/// Why [`move_to_metadata`] offers no fix for this value, when the value is the reason:
/// `metadata` maps names to strings (the specification), so a mapping, or a list holding
/// more than plain values, has no string form to move that keeps its shape.
fn why_not_moved(entry: &Entry) -> Option<&'static str> {
    match &entry.value.value {
        Value::Mapping(_) => Some(
            "`metadata` values are strings, so a nested mapping cannot move there as it is and              `--fix` leaves it to you: flatten it into string entries (e.g. `name.key: value`)              or drop it",
        ),
        Value::Sequence(_) if scalar_items(&entry.value).is_none() => Some(
            "`metadata` values are strings, so a list of mappings or lists cannot move there as              it is and `--fix` leaves it to you: flatten it into string entries or drop it",
        ),
        _ => None,
    }
}

/// The known field `key` is a misspelling of, when that field is not set already: the same
/// but for case and separators (`user_invocable`, `Description`), or a typo a few edits
/// away (`descripton`, `licence`). Renaming is the repair; moving a misspelt `description`
/// under `metadata` would leave the skill without one.
fn misspelt(profile: Profile, entries: &[Entry], key: &str) -> Option<&'static str> {
    let folded = fold(key);
    let known: Vec<&'static str> = known_fields(profile).collect();
    let same = known.iter().copied().find(|k| fold(k) == folded);
    let suggested = same.or_else(|| {
        let typo = crate::spelling::closest(key, &known)?;
        known.iter().copied().find(|k| *k == typo)
    })?;
    first(entries, suggested).is_none().then_some(suggested)
}

/// Case- and separator-insensitive form of a field name, to catch `user_invocable` for
/// `user-invocable` and `Description` for `description`.
fn fold(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Move a top-level `key: value` (a scalar, or a list of scalars joined with ", ") under
/// `metadata` as a quoted string. Only offered where the edit is certain to leave valid YAML:
/// a block mapping, the entry on whole lines of its own, and `metadata` absent, empty, or a
/// block mapping without that key. When `metadata` already holds the key with the same value
/// (a copy left at the top level, common in skills written for several harnesses), the fix
/// removes the copy instead.
fn move_to_metadata(ctx: &Ctx<'_>, fm: Span, entries: &[Entry], entry: &Entry) -> Option<Fix> {
    let key = entry.key.as_key()?;
    let text = match &entry.value.value {
        Value::Scalar(s) if !entry.value.is_null() => s.text.clone(),
        Value::Sequence(_) => scalar_items(&entry.value)?.join(", "),
        _ => return None,
    };
    let delete = whole_lines(ctx, fm, entry)?;
    if held_in_metadata(entries, key, entry, &text) {
        return Some(Fix {
            title: format!("Remove `{key}`: `metadata` holds the same value"),
            edits: vec![Edit {
                span: delete,
                replacement: String::new(),
            }],
        });
    }
    let nl = ctx.newline();
    let value = serde_json::to_string(&text).ok()?;
    let insert = match first(entries, "metadata") {
        None => Edit {
            span: Span::empty(fm.end),
            replacement: format!("metadata:{nl}  {key}: {value}{nl}"),
        },
        Some(meta) => {
            let (at, indent) = metadata_insertion(ctx, fm, meta, key)?;
            Edit {
                span: Span::empty(at),
                replacement: format!("{indent}{key}: {value}{nl}"),
            }
        }
    };
    if insert.span.start > delete.start && insert.span.start < delete.end {
        return None;
    }
    Some(Fix {
        title: format!("Move `{key}` under `metadata`"),
        edits: vec![
            Edit {
                span: delete,
                replacement: String::new(),
            },
            insert,
        ],
    })
}

/// Whether `metadata` holds `key` with the value of the top-level `entry`: equal as data, or
/// equal to `text`, the string the move would write (a list joined with ", ").
fn held_in_metadata(entries: &[Entry], key: &str, entry: &Entry, text: &str) -> bool {
    let Some(held) = first(entries, "metadata").and_then(|m| m.value.get(key)) else {
        return false;
    };
    held.value.to_json() == entry.value.to_json()
        || held.value.as_scalar().is_some_and(|s| s.text == text)
}

/// The byte range of the lines an entry occupies, when it starts at column 0 and nothing but
/// a comment follows it on its last line.
fn whole_lines(ctx: &Ctx<'_>, fm: Span, entry: &Entry) -> Option<Span> {
    let text = &ctx.doc.text;
    let lines = ctx.lines();
    let start = entry.key.span.start;
    if lines.line_start(lines.line_of(start)) != start || text[fm.start..].starts_with('{') {
        return None;
    }
    let end = entry.value.span.end.max(entry.key.span.end);
    let last_line = lines.line_of(end.saturating_sub(1).max(start));
    let line_end = lines.line_span(text, last_line).end;
    let rest = text.get(end.min(line_end)..line_end)?.trim();
    if !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    let next = lines.line_start(last_line + 1).min(fm.end);
    Some(Span::new(start, next))
}

/// Where a new `metadata` entry goes and its indentation.
fn metadata_insertion(ctx: &Ctx<'_>, fm: Span, meta: &Entry, key: &str) -> Option<(usize, String)> {
    let text = &ctx.doc.text;
    let lines = ctx.lines();
    if meta.value.span.is_empty() || ctx.doc.slice(meta.value.span).trim().is_empty() {
        let line = lines.line_of(meta.key.span.start);
        return Some((lines.line_start(line + 1).min(fm.end), "  ".into()));
    }
    let items = meta.value.as_mapping()?;
    if items.iter().any(|i| i.key.as_key() == Some(key))
        || text[meta.value.span.start..].starts_with('{')
    {
        return None;
    }
    let first_key = items.first()?.key.span.start;
    let indent_start = lines.line_start(lines.line_of(first_key));
    let indent = text.get(indent_start..first_key)?;
    if !indent.bytes().all(|b| b == b' ') || indent.is_empty() {
        return None;
    }
    let last = meta.value.span.end.saturating_sub(1);
    let at = lines.line_start(lines.line_of(last) + 1).min(fm.end);
    Some((at, indent.to_string()))
}

/// A value shortened for a message.
pub(super) fn shown(text: &str) -> String {
    truncate(text, 60)
}
