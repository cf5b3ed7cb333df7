//! JUnit XML: one test case per eval case, failing when the skill made that case worse under
//! the report's profile (skill-validator's rule: a scenario fails on a negative score), plus
//! one for the run's verdict, failing when the verdict rule says the skill regresses.

use std::fmt::Write;

use skillwatch_daemon::runner::RunReport;

use crate::cmd::history_db::signed;

/// The run as JUnit XML.
pub fn junit(r: &RunReport) -> String {
    let suite = format!("skillwatch run: {}", r.run.skill);
    let mut cases = String::new();
    let mut failures = 0;
    for c in &r.cases {
        let failed = c.lift.is_some_and(|l| l < 0.0);
        failures += usize::from(failed);
        let detail = format!(
            "lift {} · baseline {}/{} passed · with skill {}/{} passed · skill read {}/{}",
            signed(c.lift),
            c.baseline.passed,
            c.baseline.graded,
            c.skill.passed,
            c.skill.graded,
            c.skill.invoked,
            c.skill.trials
        );
        testcase(
            &mut cases,
            &r.run.skill,
            &c.case,
            failed.then_some(&detail),
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
        &r.run.skill,
        "overall",
        regressed.then_some(&verdict),
        &verdict,
    );
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">\n{cases}  </testsuite>\n</testsuites>\n",
        xml(&suite),
        r.cases.len() + 1,
        r.wall_ms as f64 / 1000.0
    )
}

fn testcase(out: &mut String, skill: &str, name: &str, failure: Option<&String>, detail: &str) {
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"skillwatch.run\">",
        xml(&format!("{skill} / {name}"))
    );
    if let Some(message) = failure {
        let _ = write!(out, "<failure message=\"{}\"/>", xml(message));
    }
    let _ = writeln!(out, "<system-out>{}</system-out></testcase>", xml(detail));
}

/// Text escaped for XML attributes and content; characters XML 1.0 forbids are dropped.
fn xml(s: &str) -> String {
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
