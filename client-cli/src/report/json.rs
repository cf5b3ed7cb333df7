//! `--format json`: one document with the summary and, per file, every finding with its byte
//! span, 1-based line:column (in characters) and fix. Its shape is published as a JSON Schema
//! (schemas/check-output.schema.json, `skillwatch schema check-output`), which the tests hold
//! real output to. Each finding also deserializes as a core
//! `Diagnostic` (the extra fields are ignored), so tools can read it back with the same types.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};
use skillwatch_core::checks::{Diagnostic, FileReport, Rule, catalog};
use skillwatch_core::text::{LineCol, LineIndex};

use super::{Counts, Outcome, category_name};

/// Version of this JSON shape; bumped on any incompatible change.
pub const JSON_FORMAT_VERSION: u32 = 1;

/// Write the report. The document is serialized from borrowed structs, not built as a
/// `serde_json::Value` tree first: over a corpus that tree (a map per finding) cost more than
/// the checks it reports.
pub fn render(out: &mut impl Write, outcome: &Outcome<'_>) -> io::Result<()> {
    let doc = Document {
        version: JSON_FORMAT_VERSION,
        tool: Tool {
            name: "skillwatch",
            version: env!("CARGO_PKG_VERSION"),
        },
        profile: outcome.profile_name(),
        config: outcome.config,
        fixed: outcome.fixed,
        summary: Summary {
            skills: outcome.skills,
            files: outcome.files.len(),
            counts: outcome.counts(),
        },
        files: outcome
            .files
            .iter()
            .map(|f| file_json(f, outcome))
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    tool: Tool,
    profile: &'a str,
    /// The skillwatch.toml whose `[check]` table applied (`null`: none).
    config: Option<&'a Path>,
    /// Under `--fix`, the fixes written (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    fixed: Option<&'a [crate::cmd::check::Applied]>,
    summary: Summary,
    files: Vec<FileJson<'a>>,
}

#[derive(Serialize)]
struct Summary {
    skills: usize,
    files: usize,
    #[serde(flatten)]
    counts: Counts,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct FileJson<'a> {
    path: &'a Path,
    /// For an eval file, the dialect it was read as and what decided it.
    #[serde(skip_serializing_if = "Option::is_none")]
    dialect: Option<DialectJson<'a>>,
    diagnostics: Vec<DiagnosticJson<'a>>,
    /// Findings silenced by `skillwatch-ignore` comments, with the comments' reasons (absent
    /// when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ignored: Vec<IgnoredJson<'a>>,
}

/// Which tool's format an eval file was read as.
#[derive(Serialize)]
struct DialectJson<'a> {
    /// The stable id (`vally`, `waza-task`, ...).
    id: &'static str,
    /// For people.
    name: &'static str,
    /// What decided it (a top-level key, or the file name).
    why: &'a str,
}

/// A finding a comment silenced: the finding as in `diagnostics`, and the comment's reason.
#[derive(Serialize)]
struct IgnoredJson<'a> {
    #[serde(flatten)]
    finding: DiagnosticJson<'a>,
    reason: &'a str,
}

/// A core [`Diagnostic`] as it serializes (so the finding reads back as one), plus the rule's
/// name and category and line:column positions.
#[derive(Serialize)]
struct DiagnosticJson<'a> {
    #[serde(flatten)]
    diagnostic: &'a Diagnostic,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<&'static str>,
    start: LineCol,
    end: LineCol,
}

fn file_json<'a>(file: &'a FileReport, outcome: &Outcome<'_>) -> FileJson<'a> {
    let text = file.text.as_deref();
    let shown = |d: &&Diagnostic| d.severity <= outcome.min_severity;
    // Line starts only for files with something to print: most files scanned have no finding.
    let index = text
        .filter(|_| {
            let mut all = file
                .diagnostics
                .iter()
                .chain(file.ignored.iter().map(|i| &i.finding));
            all.any(|d| shown(&d))
        })
        .map(LineIndex::new);
    let diagnostics = file
        .diagnostics
        .iter()
        .filter(shown)
        .map(|d| diagnostic_json(d, text, index.as_ref()))
        .collect();
    let ignored = file
        .ignored
        .iter()
        .filter(|i| shown(&&i.finding))
        .map(|i| IgnoredJson {
            finding: diagnostic_json(&i.finding, text, index.as_ref()),
            reason: &i.reason,
        })
        .collect();
    FileJson {
        path: &file.path,
        dialect: file.dialect.as_ref().map(|d| DialectJson {
            id: d.dialect.id(),
            name: d.dialect.name(),
            why: &d.why,
        }),
        diagnostics,
        ignored,
    }
}

fn diagnostic_json<'a>(
    d: &'a Diagnostic,
    text: Option<&str>,
    index: Option<&LineIndex>,
) -> DiagnosticJson<'a> {
    let rule = catalog::rule(d.rule);
    // a file not read as text (too large, unreadable) has its one finding at its start
    let at = |offset| match (index, text) {
        (Some(index), Some(text)) => index.line_col(text, offset),
        _ => LineCol { line: 1, column: 1 },
    };
    DiagnosticJson {
        diagnostic: d,
        name: rule.map(|r| r.name),
        category: rule.map(category_name),
        start: at(d.span.start),
        end: at(d.span.end),
    }
}

/// A catalog entry as JSON (for `--list-rules --json` and `--explain --json`).
pub fn rule_json(rule: &Rule) -> Value {
    json!({
        "id": rule.id,
        "name": rule.name,
        "category": category_name(rule),
        "severity": rule.severity,
        "summary": rule.summary,
    })
}
