//! Renderers for `skillwatch vet`: a verdict per skill with its evidence, as text for a person,
//! JSON (shape versioned by [`VET_FORMAT_VERSION`]) and SARIF 2.1.0 (each piece of evidence a
//! result; rules carry `security-severity`, results the verdict of their skill).

use std::io::{self, Write};

use serde::Serialize;
use serde_json::json;
use skillwatch_core::checks::{Rule, Severity, catalog};
use skillwatch_core::vet::{Evidence, Place, SkillVerdict, Verdict};

use super::sarif;
use skillwatch_core::plural::count;

/// Version of the JSON shape of `skillwatch vet --json`.
pub const VET_FORMAT_VERSION: u32 = 1;

fn counts(verdicts: &[SkillVerdict]) -> (usize, usize, usize) {
    let n = |v| verdicts.iter().filter(|s| s.verdict == v).count();
    (
        n(Verdict::Malicious),
        n(Verdict::Suspicious),
        n(Verdict::Clean),
    )
}

/// The human report: one block per skill, worst first within the run's order, then a summary.
pub fn human(verdicts: &[SkillVerdict], color: bool) -> io::Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    let paint = |code: &str, text: &str| {
        if color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    for v in verdicts {
        let word = match v.verdict {
            Verdict::Malicious => paint("1;31", "malicious "),
            Verdict::Suspicious => paint("1;33", "suspicious"),
            Verdict::Clean => paint("1;32", "clean     "),
        };
        writeln!(out, "{word} {}", v.dir.display())?;
        for e in &v.evidence {
            let sev = match e.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            };
            let silenced = if e.silenced_inline {
                " (a skillwatch-ignore comment tried to silence this; not honoured)"
            } else {
                ""
            };
            let at = match e.place.located {
                true => format!(
                    "{}:{}:{}",
                    e.place.path.display(),
                    e.place.line,
                    e.place.column
                ),
                false => e.place.path.display().to_string(),
            };
            writeln!(out, "  {sev}[{}] {at}: {}{silenced}", e.rule, e.message)?;
            if e.place.located {
                writeln!(out, "      | {}", e.place.excerpt)?;
            }
        }
        if !v.context.is_empty() {
            let ids: Vec<String> = v
                .context
                .iter()
                .map(|e| e.rule.to_string())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            writeln!(
                out,
                "  context (does not decide the verdict): {}",
                ids.join(", ")
            )?;
        }
    }
    let (m, s, c) = counts(verdicts);
    writeln!(
        out,
        "\n{}: {m} malicious, {s} suspicious, {c} clean",
        count(verdicts.len(), "skill")
    )?;
    out.flush()
}

#[derive(Serialize)]
struct Doc<'a> {
    version: u32,
    tool: &'static str,
    tool_version: &'static str,
    summary: Summary,
    skills: Vec<SkillJson<'a>>,
}

#[derive(Serialize)]
pub(crate) struct Summary {
    skills: usize,
    malicious: usize,
    suspicious: usize,
    clean: usize,
}

#[derive(Serialize)]
struct SkillJson<'a> {
    path: &'a std::path::Path,
    verdict: &'static str,
    evidence: Vec<EvidenceJson<'a>>,
    context: Vec<EvidenceJson<'a>>,
}

#[derive(Serialize)]
pub(crate) struct EvidenceJson<'a> {
    rule: &'static str,
    name: &'static str,
    severity: &'static str,
    path: &'a std::path::Path,
    #[serde(flatten)]
    place: PlaceJson<'a>,
    message: &'a str,
    silenced_inline: bool,
}

/// Where a finding or a card entry is, as both JSON shapes print it (flattened into each).
#[derive(Serialize)]
pub(crate) struct PlaceJson<'a> {
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    start: usize,
    end: usize,
    excerpt: &'a str,
}

/// A [`Place`] in the JSON of `vet` and of `vet --card`.
pub(crate) fn place_json(p: &Place) -> PlaceJson<'_> {
    PlaceJson {
        line: p.line,
        column: p.column,
        end_line: p.end_line,
        end_column: p.end_column,
        start: p.span.start,
        end: p.span.end,
        excerpt: &p.excerpt,
    }
}

/// One piece of evidence as `vet --json` and `vet --card --json` print it.
pub(crate) fn evidence_json(e: &Evidence) -> EvidenceJson<'_> {
    EvidenceJson {
        rule: e.rule,
        name: catalog::rule(e.rule).map_or("", |r| r.name),
        severity: e.severity.as_str(),
        path: &e.place.path,
        place: place_json(&e.place),
        message: &e.message,
        silenced_inline: e.silenced_inline,
    }
}

/// The counts of verdicts, as both JSON shapes print them.
pub(crate) fn summary(verdicts: &[SkillVerdict]) -> Summary {
    let (malicious, suspicious, clean) = counts(verdicts);
    Summary {
        skills: verdicts.len(),
        malicious,
        suspicious,
        clean,
    }
}

/// `--json`.
pub fn json(verdicts: &[SkillVerdict]) -> io::Result<()> {
    let doc = Doc {
        version: VET_FORMAT_VERSION,
        tool: "skillwatch",
        tool_version: env!("CARGO_PKG_VERSION"),
        summary: summary(verdicts),
        skills: verdicts
            .iter()
            .map(|v| SkillJson {
                path: &v.dir,
                verdict: v.verdict.as_str(),
                evidence: v.evidence.iter().map(evidence_json).collect(),
                context: v.context.iter().map(evidence_json).collect(),
            })
            .collect(),
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, &doc)?;
    writeln!(out)?;
    out.flush()
}

/// `--format sarif`: only security rules are listed; each result carries its skill's verdict.
pub fn sarif(verdicts: &[SkillVerdict]) -> io::Result<()> {
    let rules: Vec<&Rule> = catalog::all_rules()
        .filter(|r| r.category == skillwatch_core::checks::Category::Security)
        .collect();
    let mut results = Vec::new();
    for v in verdicts {
        for (e, deciding) in v
            .evidence
            .iter()
            .map(|e| (e, true))
            .chain(v.context.iter().map(|e| (e, false)))
        {
            let uri = sarif::artifact_uri(&e.place.path);
            let mut result = json!({
                "ruleId": e.rule,
                "level": sarif::level(e.severity),
                "message": {"text": e.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": {"startLine": e.place.line, "startColumn": e.place.column, "endLine": e.place.end_line, "endColumn": e.place.end_column,
                               "snippet": {"text": e.place.excerpt}},
                }}],
                "properties": {"verdict": v.verdict.as_str(), "decides": deciding, "skill": v.dir.display().to_string()},
            });
            if let Some(i) = rules.iter().position(|r| r.id == e.rule) {
                result["ruleIndex"] = i.into();
            }
            results.push(result);
        }
    }
    let log = json!({
        "$schema": sarif::SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "skillwatch vet",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules.iter().map(|r| sarif::rule(r)).collect::<Vec<_>>(),
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut out = io::BufWriter::new(io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, &log)?;
    writeln!(out)?;
    out.flush()
}
