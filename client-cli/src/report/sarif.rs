//! `--format sarif`: SARIF 2.1.0, the format GitHub code scanning uploads. Every catalog rule
//! is listed in the driver (so `ruleIndex` is stable across runs), each finding is a result
//! with a line/column region (columns in Unicode code points, as `columnKind` declares),
//! fixes become SARIF fixes, and findings a `skillwatch-ignore` comment silenced are results
//! with an `inSource` suppression.

use std::io::{self, Write};
use std::path::Path;

use serde_json::{Value, json};
use skillwatch_core::checks::{Category, Diagnostic, Fix, Rule, Severity, catalog};
use skillwatch_core::text::{LineIndex, Span};

use super::{Outcome, category_name};

pub(super) const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Write the SARIF log.
pub fn render(out: &mut impl Write, outcome: &Outcome<'_>) -> io::Result<()> {
    let rules: Vec<&Rule> = catalog::all_rules().collect();
    let mut results = Vec::new();
    for file in outcome.files {
        let text = file.text.as_deref();
        let index = text.map(LineIndex::new);
        for d in file
            .diagnostics
            .iter()
            .filter(|d| d.severity <= outcome.min_severity)
        {
            let lines = text.zip(index.as_ref());
            results.push(result(d, &rules, lines));
        }
        // silenced by a comment: still a result, marked suppressed in the source, so code
        // scanning shows the alert as dismissed with the reason instead of as fixed
        for ignored in file
            .ignored
            .iter()
            .filter(|i| i.finding.severity <= outcome.min_severity)
        {
            let lines = text.zip(index.as_ref());
            let mut value = result(&ignored.finding, &rules, lines);
            let mut suppression = json!({"kind": "inSource", "status": "accepted"});
            if !ignored.reason.is_empty() {
                suppression["justification"] = ignored.reason.as_str().into();
            }
            value["suppressions"] = json!([suppression]);
            results.push(value);
        }
    }
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "skillwatch",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules.iter().map(|r| rule(r)).collect::<Vec<_>>(),
            }},
            "columnKind": "unicodeCodePoints",
            "properties": {"profile": outcome.profile_name()},
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}

pub(super) fn rule(rule: &Rule) -> Value {
    let mut properties = json!({"tags": [category_name(rule)]});
    if rule.category == Category::Security {
        // GitHub ranks security alerts by this CVSS-like score.
        let score = match rule.severity {
            Severity::Error => "8.0",
            Severity::Warning => "5.0",
            Severity::Info => "2.0",
        };
        properties["security-severity"] = score.into();
        properties["tags"] = json!(["security"]);
    }
    json!({
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": catalog::explain(rule.id).unwrap_or(rule.summary)},
        "defaultConfiguration": {"level": level(rule.severity)},
        "properties": properties,
    })
}

pub(super) fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn result(d: &Diagnostic, rules: &[&Rule], lines: Option<(&str, &LineIndex)>) -> Value {
    let uri = artifact_uri(&d.path);
    let mut physical = json!({"artifactLocation": {"uri": uri}});
    if let Some((text, index)) = lines {
        physical["region"] = region(text, index, d.span);
    }
    let mut value = json!({
        "ruleId": d.rule,
        "level": level(d.severity),
        "message": {"text": d.message},
        "locations": [{"physicalLocation": physical}],
    });
    if let Some(i) = rules.iter().position(|r| r.id == d.rule) {
        value["ruleIndex"] = i.into();
    }
    if let (Some(fix), Some((text, index))) = (&d.fix, lines) {
        value["fixes"] = json!([sarif_fix(fix, &uri, text, index)]);
    }
    value
}

fn region(text: &str, index: &LineIndex, span: Span) -> Value {
    let start = index.line_col(text, span.start);
    let end = index.line_col(text, span.end);
    json!({
        "startLine": start.line,
        "startColumn": start.column,
        "endLine": end.line,
        "endColumn": end.column,
    })
}

fn sarif_fix(fix: &Fix, uri: &str, text: &str, index: &LineIndex) -> Value {
    let replacements: Vec<Value> = fix
        .edits
        .iter()
        .map(|e| {
            json!({
                "deletedRegion": region(text, index, e.span),
                "insertedContent": {"text": e.replacement},
            })
        })
        .collect();
    json!({
        "description": {"text": fix.title},
        "artifactChanges": [{"artifactLocation": {"uri": uri}, "replacements": replacements}],
    })
}

/// A URI reference for a path: relative paths stay relative (GitHub resolves them against the
/// checkout), absolute ones become `file://` URIs; both percent-encoded.
pub(super) fn artifact_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let text = text.strip_prefix("./").unwrap_or(&text);
    let encoded = percent_encode(text);
    if path.is_absolute() {
        format!("file://{encoded}")
    } else {
        encoded
    }
}

fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_or_file_and_encoded() {
        assert_eq!(artifact_uri(Path::new("./a b/SKILL.md")), "a%20b/SKILL.md");
        assert_eq!(
            artifact_uri(Path::new("/x/ü/SKILL.md")),
            "file:///x/%C3%BC/SKILL.md"
        );
        assert_eq!(artifact_uri(Path::new("../c/SKILL.md")), "../c/SKILL.md");
    }
}
