//! A probe run's [`ProbeReport`] for CI: a JUnit test suite (a failed probe is a failed test
//! case carrying its evidence, an unrun one an errored case, S's status one more case), a
//! markdown section, and a GitHub annotation. Evidence is printed as stored: canary values
//! already replaced by `[canary:NAME]` and other secret-like strings masked
//! (`core::probe::redact`), so nothing here sees a secret to leak.

use std::fmt::Write;

use skillwatch_core::scoring::skilltester::SecurityStatus;
use skillwatch_daemon::probe::ProbeReport;
use skillwatch_daemon::store::{ProbeOutcome, ProbeOutcomeRecord, RunStatus};

use super::junit::{testcase, xml};
use super::markdown::escape;

/// S and its status in words: `S 66.7 · Risky (θs = 80)`, or why S is not measured.
pub fn security_line(p: &ProbeReport) -> String {
    match &p.security {
        Some(s) => format!(
            "S {:.1} · {} (θs = {})",
            s.score,
            s.status.label(),
            p.run.theta_s
        ),
        None => "S not measured (a group had no probe that ran)".into(),
    }
}

/// Whether the probe run fails a CI gate: Risky, or not completed.
pub fn fails(p: &ProbeReport) -> bool {
    p.risky() || p.run.status != RunStatus::Completed
}

/// The evidence of one failed probe, one finding a line.
fn evidence(o: &ProbeOutcomeRecord) -> String {
    o.findings
        .iter()
        .map(|f| {
            let kind = serde_json::to_value(f.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            format!("{kind} at {}: {}", f.location, f.evidence)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The probe run as one JUnit `<testsuite>` element.
pub fn junit_suite(p: &ProbeReport) -> String {
    let r = &p.run;
    let mut cases = String::new();
    let (mut failures, mut errors) = (0, 0);
    for o in &r.outcomes {
        let name = format!("{} [{}] {}", o.probe, o.group.as_str(), o.owasp.join(","));
        match o.outcome {
            ProbeOutcome::Passed => testcase(
                &mut cases,
                "skillwatch.probe",
                &r.skill,
                &name,
                None,
                "passed",
            ),
            ProbeOutcome::Failed => {
                failures += 1;
                let detail = evidence(o);
                let first = detail.split_whitespace().collect::<Vec<_>>().join(" ");
                testcase(
                    &mut cases,
                    "skillwatch.probe",
                    &r.skill,
                    &name,
                    Some(("failure", &first)),
                    &detail,
                );
            }
            ProbeOutcome::Error => {
                errors += 1;
                let why = o.error_message.clone().unwrap_or_default();
                testcase(
                    &mut cases,
                    "skillwatch.probe",
                    &r.skill,
                    &name,
                    Some(("error", &format!("not run: {why}"))),
                    &why,
                );
            }
        }
    }
    let line = security_line(p);
    let gate = fails(p);
    failures += usize::from(gate);
    testcase(
        &mut cases,
        "skillwatch.probe",
        &r.skill,
        "security",
        gate.then_some(("failure", &line)),
        &line,
    );
    let wall: u64 = r.outcomes.iter().filter_map(|o| o.wall_ms).sum();
    format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{:.3}\">\n{cases}  </testsuite>\n",
        xml(&format!("skillwatch probe: {} on {}", r.skill, r.model)),
        r.outcomes.len() + 1,
        wall as f64 / 1000.0
    )
}

/// The probe run as a markdown section.
pub fn markdown(p: &ProbeReport) -> String {
    let r = &p.run;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "### Security probes: `{}` on `{}`\n",
        escape(&r.skill),
        escape(&r.model)
    );
    let _ = writeln!(o, "**{}**\n", security_line(p));
    if let Some(s) = &p.security {
        let groups: Vec<String> = s
            .groups
            .iter()
            .map(|g| {
                format!(
                    "{} {:.1} ({}/{})",
                    g.group.as_str(),
                    g.score,
                    g.passed,
                    g.total
                )
            })
            .collect();
        let _ = writeln!(o, "{}\n", groups.join(" · "));
    }
    let _ = writeln!(o, "| probe | group | OWASP | result |");
    let _ = writeln!(o, "|---|---|---|---|");
    for out in &r.outcomes {
        let result = match out.outcome {
            ProbeOutcome::Passed => "passed".to_owned(),
            ProbeOutcome::Failed => format!("**failed**: {}", escape(&evidence(out))),
            ProbeOutcome::Error => format!(
                "not run: {}",
                escape(out.error_message.as_deref().unwrap_or(""))
            ),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {result} |",
            escape(&out.probe),
            out.group.as_str(),
            out.owasp.join(", ")
        );
    }
    let _ = writeln!(
        o,
        "\n<sub>probe run {} · {} · {} {} · suite {}</sub>",
        r.id,
        r.status,
        r.harness,
        r.harness_version.as_deref().unwrap_or("?"),
        r.suite_version
    );
    o
}

/// `--format github`: one annotation on the skill's SKILL.md with S and its status: an error
/// when Risky or not completed, a warning when Caution, else a notice.
pub fn github_annotation(p: &ProbeReport, skill_dir: &std::path::Path) -> String {
    use crate::report::github::{Level, Place, annotation, relative};
    let level = match (&p.security, fails(p)) {
        (_, true) => Level::Error,
        (Some(s), false) if s.status == SecurityStatus::Caution => Level::Warning,
        _ => Level::Notice,
    };
    let place = Place {
        file: Some(relative(&skill_dir.join("SKILL.md"))),
        range: None,
    };
    let failed: Vec<&str> = p
        .run
        .outcomes
        .iter()
        .filter(|o| o.outcome == ProbeOutcome::Failed)
        .map(|o| o.probe.as_str())
        .collect();
    let failed = if failed.is_empty() {
        String::new()
    } else {
        format!("; failed: {}", failed.join(", "))
    };
    annotation(
        level,
        &place,
        &format!("skillwatch probe: {} on {}", p.run.skill, p.run.model),
        &format!("{}{failed}", security_line(p)),
    )
}
