//! Renderers of a paired run's [`RunReport`]: the terminal table, markdown for a pull request
//! comment or `$GITHUB_STEP_SUMMARY`, and JUnit XML for CI test views. They only format.

mod junit;
mod markdown;
mod text;

pub use junit::junit;
pub use markdown::markdown;
pub use text::text;

use skillwatch_daemon::runner::{RunReport, SideRow};

/// `2/3 passed`, or `—` when nothing was graded.
fn passes(side: &SideRow) -> String {
    if side.graded == 0 {
        return "—".into();
    }
    format!("{}/{} passed", side.passed, side.graded)
}

/// The mean score on [0, 1] with two decimals, or `—`.
fn score(side: &SideRow) -> String {
    side.score.map_or_else(|| "—".into(), |s| format!("{s:.2}"))
}

/// Trouble worth a note in a cell: errors and timeouts.
fn trouble(side: &SideRow) -> String {
    let mut parts = Vec::new();
    if side.errors > 0 {
        parts.push(format!(
            "{} error{}",
            side.errors,
            plural(side.errors as usize)
        ));
    }
    if side.timeouts > 0 {
        parts.push(format!(
            "{} timeout{}",
            side.timeouts,
            plural(side.timeouts as usize)
        ));
    }
    parts.join(", ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `openai 0.1.0+loop.1`.
fn harness_line(r: &RunReport) -> String {
    format!(
        "{} {}",
        r.run.harness,
        r.run
            .harness_version
            .as_deref()
            .unwrap_or("(version unknown)")
    )
}

/// `12 trials: 8 run, 4 reused baselines, 1 error, 2 timeouts, 1 judge error`.
fn tally_line(r: &RunReport) -> String {
    let t = &r.tally;
    let mut parts = vec![format!("{} run", t.ran)];
    if t.reused > 0 {
        parts.push(format!("{} reused baseline{}", t.reused, plural(t.reused)));
    }
    if t.resumed > 0 {
        parts.push(format!("{} from before the resume", t.resumed));
    }
    for (n, what) in [
        (t.errors, "error"),
        (t.timeouts, "timeout"),
        (t.retries, "retry"),
        (t.judge_errors, "judge error"),
    ] {
        if n > 0 {
            let word = if what == "retry" && n != 1 {
                "retries".to_owned()
            } else {
                format!("{what}{}", plural(n))
            };
            parts.push(format!("{n} {word}"));
        }
    }
    format!("{} trials: {}", r.run.trial_count, parts.join(", "))
}

/// `3 pairs left out: 1 timed out, 2 errored`.
fn exclusions(e: &skillwatch_core::scoring::Exclusions) -> String {
    let parts: Vec<String> = [
        (e.timed_out, "timed out"),
        (e.errored, "errored"),
        (e.unscored, "unscored"),
        (e.missing_baseline, "without a baseline"),
        (e.missing_skill, "without a skill trial"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    format!(
        "{} pair{} left out: {}",
        e.total(),
        plural(e.total()),
        parts.join(", ")
    )
}
