//! `--format json`: one document with the summary and, per file, every finding with its byte
//! span, 1-based line:column (in characters) and fix. Each finding also deserializes as a core
//! `Diagnostic` (the extra fields are ignored), so tools can read it back with the same types.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};
use skillwatch_core::checks::{Diagnostic, FileReport, Fix, Rule, Severity, catalog};
use skillwatch_core::text::{LineCol, LineIndex, Span};

use super::{Outcome, category_name};

/// Version of this JSON shape; bumped on any incompatible change.
pub const JSON_FORMAT_VERSION: u32 = 1;

/// Write the report. The document is serialized from borrowed structs, not built as a
/// `serde_json::Value` tree first: over a corpus that tree (a map per finding) cost more than
/// the checks it reports. Field order is alphabetical, as the `Value` maps printed it.
pub fn render(out: &mut impl Write, outcome: &Outcome<'_>) -> io::Result<()> {
    let counts = outcome.counts();
    let doc = Document {
        files: outcome
            .files
            .iter()
            .map(|f| file_json(f, outcome))
            .collect(),
        profile: outcome.profile_name(),
        summary: Summary {
            errors: counts.errors,
            files: outcome.files.len(),
            infos: counts.infos,
            skills: outcome.skills,
            warnings: counts.warnings,
        },
        tool: Tool {
            name: "skillwatch",
            version: env!("CARGO_PKG_VERSION"),
        },
        version: JSON_FORMAT_VERSION,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

#[derive(Serialize)]
struct Document<'a> {
    files: Vec<FileJson<'a>>,
    profile: &'a str,
    summary: Summary,
    tool: Tool,
    version: u32,
}

#[derive(Serialize)]
struct Summary {
    errors: usize,
    files: usize,
    infos: usize,
    skills: usize,
    warnings: usize,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct FileJson<'a> {
    diagnostics: Vec<DiagnosticJson<'a>>,
    path: &'a Path,
}

/// A core [`Diagnostic`]'s fields plus the rule's name and category and line:column positions.
#[derive(Serialize)]
struct DiagnosticJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end: Option<LineCol>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<&'a Fix>,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'static str>,
    path: &'a Path,
    rule: &'static str,
    severity: Severity,
    span: Span,
    #[serde(skip_serializing_if = "Option::is_none")]
    start: Option<LineCol>,
}

fn file_json<'a>(file: &'a FileReport, outcome: &Outcome<'_>) -> FileJson<'a> {
    let text = file.text.as_deref();
    let shown = |d: &&Diagnostic| d.severity <= outcome.min_severity;
    // Line starts only for files with something to print: most files scanned have no finding.
    let index = text
        .filter(|_| file.diagnostics.iter().any(|d| shown(&d)))
        .map(LineIndex::new);
    let diagnostics = file
        .diagnostics
        .iter()
        .filter(shown)
        .map(|d| diagnostic_json(d, text, index.as_ref()))
        .collect();
    FileJson {
        diagnostics,
        path: &file.path,
    }
}

fn diagnostic_json<'a>(
    d: &'a Diagnostic,
    text: Option<&str>,
    index: Option<&LineIndex>,
) -> DiagnosticJson<'a> {
    let rule = catalog::rule(d.rule);
    let at = |offset| Some(index?.line_col(text?, offset));
    DiagnosticJson {
        category: rule.map(category_name),
        end: at(d.span.end),
        fix: d.fix.as_ref(),
        message: &d.message,
        name: rule.map(|r| r.name),
        path: &d.path,
        rule: d.rule,
        severity: d.severity,
        span: d.span,
        start: at(d.span.start),
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
