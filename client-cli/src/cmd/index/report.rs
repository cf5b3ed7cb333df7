//! The report of `index check`: a human summary (each step with its weight, what it earned
//! and why), JSON (schemas/index-check-output.schema.json, `skillwatch schema
//! index-check-output`), and SARIF 2.1.0 (each finding a result, its code the rule id).

use std::io::{self, Write};

use serde_json::{Value, json};
use skillwatch_core::index::check::Report;
use skillwatch_core::index::steps::{Level, STEPS, Status};
use skillwatch_core::index::{CHECK_ID, CHECK_VERSION};

use crate::report::Format;

/// Version of the JSON report's shape.
const REPORT_VERSION: u64 = 1;

/// Write the report to stdout.
pub fn render(report: &Report, format: Format, color: bool) -> io::Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    match format {
        Format::Human => human(&mut out, report, color)?,
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &to_json(report))?;
            writeln!(out)?;
        }
        // `run` refuses github before checking anything
        Format::Sarif | Format::Github => {
            serde_json::to_writer_pretty(&mut out, &sarif(report))?;
            writeln!(out)?;
        }
    }
    out.flush()
}

/// The JSON report.
pub fn to_json(report: &Report) -> Value {
    json!({
        "version": REPORT_VERSION,
        "tool": {"name": "skillwatch", "version": env!("CARGO_PKG_VERSION")},
        "check": {"id": CHECK_ID, "version": CHECK_VERSION},
        "target": report.target,
        "index_url": report.index_url,
        "status": report.status,
        "score": report.score,
        "steps": report.steps_json(),
    })
}

fn paint(color: bool, code: &str, text: &str) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

fn status_word(color: bool, status: Status) -> String {
    let (code, word) = match status {
        Status::Pass => ("1;32", "pass"),
        Status::Warn => ("1;33", "warn"),
        Status::Fail => ("1;31", "fail"),
        Status::Skipped => ("2", "skip"),
    };
    paint(color, code, &format!("{word:<4}"))
}

fn human(out: &mut impl Write, report: &Report, color: bool) -> io::Result<()> {
    let index = report.index_url.as_deref().unwrap_or("no index found");
    writeln!(
        out,
        "{CHECK_ID} {CHECK_VERSION} on {} ({index})",
        report.target
    )?;
    for result in &report.steps {
        let row = result.id.step();
        writeln!(
            out,
            "  {}  {:<24} {:.3} of {:.2}  {}",
            status_word(color, result.status),
            row.name,
            result.earned(),
            row.weight,
            summary(result.id.step().name, &result.evidence),
        )?;
        for f in &result.findings {
            let level = match f.level {
                Level::Fail => paint(color, "1;31", "fail"),
                Level::Warn => paint(color, "1;33", "warn"),
            };
            writeln!(out, "        {level}[{}]: {}", f.code, f.message)?;
        }
    }
    let line = format!(
        "{}: score {:.3} ({} steps passed)",
        report.status.as_str(),
        report.score,
        report
            .steps
            .iter()
            .filter(|s| s.status == Status::Pass)
            .count()
    );
    let code = match report.status {
        Status::Pass => "1;32",
        Status::Fail => "1;31",
        _ => "1;33",
    };
    writeln!(out, "{}", paint(color, code, &line))
}

/// A step's evidence in a few words.
fn summary(step: &str, e: &Value) -> String {
    if let Some(why) = e.get("skipped").and_then(Value::as_str) {
        return format!("skipped: {why}");
    }
    match step {
        "discover-index" => match e["selected"].as_str() {
            Some(path) => format!("selected {path}"),
            None => "no index at either path".to_string(),
        },
        "validate-index-schema" => format!(
            "{} skills, $schema {}, {} unknown top-level fields",
            e["skill_count"],
            if e["schema_uri_matches"] == true {
                "v0.2.0"
            } else {
                "wrong or missing"
            },
            e["unknown_top_level_field_count"]
        ),
        "validate-skill-entries" => format!(
            "{} of {} entries valid",
            e["valid_skill_count"], e["skill_count"]
        ),
        "verify-artifacts" => {
            let rows = e["artifacts"].as_array().map_or(&[][..], Vec::as_slice);
            let matched = rows.iter().filter(|r| r["digest_match"] == true).count();
            format!("{matched} of {} digests match", rows.len())
        }
        "validate-skill-content" => {
            let rows = e["artifacts"].as_array().map_or(0, Vec::len);
            format!("{rows} artifacts examined")
        }
        "security-review" => {
            let n = e["findings"].as_array().map_or(0, Vec::len);
            format!("{n} items of evidence")
        }
        _ => String::new(),
    }
}

/// SARIF 2.1.0: one rule per finding code seen, one result per finding, located at the URL
/// it is about (else the index).
fn sarif(report: &Report) -> Value {
    let mut rules: Vec<Value> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut results = Vec::new();
    let fallback = report
        .index_url
        .clone()
        .unwrap_or_else(|| report.target.clone());
    for result in &report.steps {
        let row = result.id.step();
        for f in &result.findings {
            let id = format!("{}/{}", row.name, f.code);
            let index = match ids.iter().position(|i| *i == id) {
                Some(i) => i,
                None => {
                    ids.push(id.clone());
                    rules.push(json!({
                        "id": id,
                        "name": f.code,
                        "shortDescription": {"text": row.title},
                        "fullDescription": {"text": row.description},
                        "properties": {"step": row.name, "weight": row.weight},
                    }));
                    ids.len() - 1
                }
            };
            let uri = f
                .subject
                .as_deref()
                .filter(|s| s.starts_with("http://") || s.starts_with("https://"))
                .unwrap_or(&fallback);
            results.push(json!({
                "ruleId": id,
                "ruleIndex": index,
                "level": if f.level == Level::Fail { "error" } else { "warning" },
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
            }));
        }
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "skillwatch",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules,
            }},
            "properties": {
                "check": CHECK_ID,
                "checkVersion": CHECK_VERSION,
                "status": report.status,
                "score": report.score,
                "steps": STEPS.iter().map(|s| s.name).collect::<Vec<_>>(),
            },
            "results": results,
        }],
    })
}
