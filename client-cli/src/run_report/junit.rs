//! JUnit XML: one test case per eval case, failing only when the case's own exact test
//! (Fisher's on pass/fail trials, a permutation test on scores; Holm-adjusted over the run's
//! cases, `core::scoring::case_test`) shows it worse with the skill at the run's level; a
//! negative lift the test cannot tell from noise is reported in the case's output, not
//! failed (a single-trial drop at 3 attempts a side has p = 1). Plus one test case for the
//! run's verdict, failing when the verdict rule says the skill regresses; with probes
//! (`run --with-probes`, `probe --report junit:`), a second suite (`probes`).

use std::fmt::Write;

use skillwatch_core::scoring::case_test::CaseFinding;
use skillwatch_daemon::probe::ProbeReport;
use skillwatch_daemon::runner::RunReport;

use crate::cmd::history_db::signed;

/// The run as JUnit XML, with the probe run's suite when there is one.
pub fn junit(r: &RunReport, probes: Option<&ProbeReport>) -> String {
    let mut suites = suite(r);
    if let Some(p) = probes {
        suites.push_str(&super::probes::junit_suite(p));
    }
    document(&suites)
}

/// A probe run alone as JUnit XML (`skillwatch probe --report junit:PATH`).
pub fn junit_probes(p: &ProbeReport) -> String {
    document(&super::probes::junit_suite(p))
}

fn document(suites: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n{suites}</testsuites>\n")
}

/// The paired run as one `<testsuite>` element.
fn suite(r: &RunReport) -> String {
    let suite = format!("skillwatch run: {}", r.run.skill);
    let mut cases = String::new();
    let mut failures = 0;
    for c in &r.cases {
        let test = super::case_test(r, &c.case);
        let failed = test.is_some_and(|t| t.finding == CaseFinding::Worse);
        failures += usize::from(failed);
        let arm = c.plugin.as_ref().map_or_else(String::new, |p| {
            format!(
                " · plugin arm {}/{} passed, lift {}",
                p.passed,
                p.graded,
                signed(c.plugin_lift)
            )
        });
        let detail = format!(
            "lift {} · baseline {}/{} passed · with skill {}/{} passed{arm} · skill read {}/{} · {}",
            signed(c.lift),
            c.baseline.passed,
            c.baseline.graded,
            c.skill.passed,
            c.skill.graded,
            c.skill.invoked,
            c.skill.trials,
            super::case_finding(r, test)
        );
        testcase(
            &mut cases,
            "skillwatch.run",
            &r.run.skill,
            &c.case,
            failed.then_some(("failure", &detail)),
            &detail,
        );
    }
    let lift = r
        .summary
        .as_ref()
        .and_then(|s| s.headline.profile(r.profile).lift);
    let verdict = format!(
        "verdict {} · {} {} · {}",
        r.verdict.label(),
        r.profile.label(),
        signed(lift),
        r.verdict.reason
    );
    let regressed = r.verdict.verdict.fails();
    failures += usize::from(regressed);
    testcase(
        &mut cases,
        "skillwatch.run",
        &r.run.skill,
        "overall",
        regressed.then_some(("failure", &verdict)),
        &verdict,
    );
    format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">\n{cases}  </testsuite>\n",
        xml(&suite),
        r.cases.len() + 1,
        r.wall_ms as f64 / 1000.0
    )
}

/// One `<testcase>`; `failure` is the element (`failure` or `error`) and its message.
pub(super) fn testcase(
    out: &mut String,
    class: &str,
    skill: &str,
    name: &str,
    failure: Option<(&str, &String)>,
    detail: &str,
) {
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"{class}\">",
        xml(&format!("{skill} / {name}"))
    );
    if let Some((element, message)) = failure {
        let _ = write!(out, "<{element} message=\"{}\"/>", xml(message));
    }
    let _ = writeln!(out, "<system-out>{}</system-out></testcase>", xml(detail));
}

/// Text escaped for XML attributes and content; characters XML 1.0 forbids are dropped.
pub(super) fn xml(s: &str) -> String {
    s.chars()
        .filter(|c| matches!(c, '\t' | '\n' | '\r') || *c >= ' ')
        .map(|c| match c {
            '&' => "&amp;".into(),
            '<' => "&lt;".into(),
            '>' => "&gt;".into(),
            '"' => "&quot;".into(),
            '\'' => "&apos;".into(),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_is_escaped_and_control_characters_dropped() {
        assert_eq!(xml("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;");
    }
}
