//! Renderers of a paired run's [`RunReport`]: the terminal table, markdown for a pull request
//! comment or `$GITHUB_STEP_SUMMARY`, and JUnit XML for CI test views; [`probes`] renders a
//! probe run's report the same ways. They only format.

mod junit;
#[cfg(test)]
mod junit_check;
mod markdown;
pub mod probes;
mod text;

pub use junit::{junit, junit_probes};
pub use markdown::markdown;
pub use text::text;

use skillwatch_core::plural::count;
use skillwatch_core::scoring::case_test::{CaseFinding, CaseTest};
use skillwatch_core::scoring::{ScoringProfile, Verdict};
use skillwatch_daemon::runner::{RunReport, SideRow, TrialTally};
use skillwatch_daemon::store::{ProfileHeadline, RunHeadline, RunStatus, Spent, Stop};

use crate::cmd::history_db::{design, interval, rate, signed};

/// A run's status as said to a person: `stopped: budget` when its budget stopped it before its
/// plan was done (it is stored `completed`: it ran to its own end and is scored).
pub fn status_word(status: RunStatus, stop: Option<&Stop>) -> String {
    match (status, stop) {
        (RunStatus::Completed, Some(_)) => "stopped: budget".into(),
        _ => status.to_string(),
    }
}

/// The `Stopped` and `Spent` lines of every kind of run's report: why its budget stopped it,
/// and what its trials and judge calls spent (tokens as the harness or endpoint counted them,
/// cost at the model's and the judge's price).
pub fn budget_lines(stop: Option<&Stop>, spent: &Spent) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(stop) = stop {
        lines.push(format!("Stopped      budget: {}", stop.detail));
    }
    let calls = spent.trials + spent.judge_calls;
    if calls == 0 {
        return lines;
    }
    let cost = match spent.unpriced {
        0 => format!("${:.4}", spent.cost_usd),
        u if u == calls => "cost unknown (no price for the model)".into(),
        u => format!(
            "${:.4} (and {} at no known price)",
            spent.cost_usd,
            count(
                u,
                if spent.judge_calls == 0 {
                    "trial"
                } else {
                    "call"
                }
            )
        ),
    };
    let what = match spent.judge_calls {
        0 => count(spent.trials, "trial"),
        j => format!(
            "{} and {}",
            count(spent.trials, "trial"),
            count(j, "judge call")
        ),
    };
    lines.push(format!(
        "Spent        {what}, {} tokens ({} in, {} out), {cost}",
        spent.tokens(),
        spent.tokens_in,
        spent.tokens_out
    ));
    lines
}

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
        parts.push(count(side.errors, "error"));
    }
    if side.timeouts > 0 {
        parts.push(count(side.timeouts, "timeout"));
    }
    parts.join(", ")
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
    tally_text(r.run.trial_count, &r.tally)
}

fn tally_text(trials: u64, t: &TrialTally) -> String {
    let mut parts = vec![format!("{} run", t.ran)];
    if t.reused > 0 {
        parts.push(count(t.reused, "reused baseline"));
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
            parts.push(count(n, what));
        }
    }
    format!("{}: {}", count(trials, "trial"), parts.join(", "))
}

/// The exact test of `case` under the report's profile, when the case had trials on both
/// sides.
fn case_test<'a>(r: &'a RunReport, case: &str) -> Option<&'a CaseTest> {
    r.summary
        .as_ref()?
        .lift
        .cases
        .iter()
        .find(|c| c.case_id == case)?
        .test(r.profile)
}

/// The run's confidence level (its summary's; 95% without one).
fn level(r: &RunReport) -> f64 {
    r.summary
        .as_ref()
        .map_or(0.95, |s| s.lift.params.inference.level)
}

/// Cases with an exact test in the report's profile (what Holm's correction counted).
fn tested_cases(r: &RunReport) -> usize {
    r.summary.as_ref().map_or(0, |s| {
        s.lift
            .cases
            .iter()
            .filter(|c| c.test(r.profile).is_some())
            .count()
    })
}

/// `worse with the skill (Fisher's exact test p = 0.0004, Holm-adjusted over 12 cases
/// 0.005)`, or `not shown at 95% (...)`: the per-case finding and the test behind it.
fn case_finding(r: &RunReport, test: Option<&CaseTest>) -> String {
    let Some(t) = test else {
        return "no exact test (a side has no scored trial)".into();
    };
    let what = match t.finding {
        CaseFinding::Worse => "worse with the skill".to_string(),
        CaseFinding::Better => "better with the skill".to_string(),
        CaseFinding::NotShown => format!("not shown at {:.0}%", level(r) * 100.0),
    };
    format!("{what} ({})", t.describe(tested_cases(r)))
}

/// `Per case      2 of 87 cases shown worse (...)`: the cases the exact tests single out, or
/// that none is.
fn per_case_line(r: &RunReport) -> Option<String> {
    let s = r.summary.as_ref()?;
    let tested = tested_cases(r);
    if tested == 0 {
        return None;
    }
    let named = |finding| -> Vec<&str> {
        s.lift
            .cases
            .iter()
            .filter(|c| c.test(r.profile).is_some_and(|t| t.finding == finding))
            .map(|c| c.case_id.as_str())
            .collect()
    };
    let (worse, better) = (named(CaseFinding::Worse), named(CaseFinding::Better));
    let how = format!(
        "each case's exact test on its own trials, Holm-adjusted over {}",
        count(tested, "case")
    );
    if worse.is_empty() && better.is_empty() {
        return Some(format!(
            "no case is shown better or worse at {:.0}% ({how}); per-case lifts are reported, not judged",
            level(r) * 100.0
        ));
    }
    let mut parts = Vec::new();
    if !worse.is_empty() {
        parts.push(format!("worse: {}", worse.join(", ")));
    }
    if !better.is_empty() {
        parts.push(format!("better: {}", better.join(", ")));
    }
    Some(format!("{} ({how})", parts.join("; ")))
}

/// A sentence when the verdict says the skill helps (or hurts) but no trial read it: the
/// change cannot come from the skill's text, and U is 0 for the same reason.
fn unread_note(r: &RunReport) -> Option<String> {
    let h = &r.summary.as_ref()?.headline;
    let read = h.invocation_rate.as_ref()?;
    if read.estimate > 0.0 || !matches!(r.verdict.verdict, Verdict::Improves | Verdict::Regresses) {
        return None;
    }
    Some(format!(
        "the skill was never read (0 of {} with-skill trials), so this {} did not come from its text:          installing it changed something else (its presence in the listing, a support file), or the harness          read it without saying so. U is 0 for the same reason (it counts a task only when the skill was read).",
        read.n,
        r.verdict.verdict.as_str()
    ))
}

/// `pass, behavior_check`: what a profile's lift is built from.
fn metric_names(p: &ProfileHeadline) -> String {
    if p.metrics.is_empty() {
        return "no metric scored on both sides".into();
    }
    let names: Vec<&str> = p.metrics.iter().map(|m| m.name()).collect();
    format!("{}: {}", p.profile.as_str(), names.join(", "))
}

/// What is shown beside the lift, never inside it: whether the skill was read, the process
/// metrics' lifts, the pass rates.
fn beside(h: &RunHeadline) -> String {
    let mut parts = vec![format!("skill read {}", rate(h.invocation_rate.as_ref()))];
    parts.extend(
        h.process
            .iter()
            .map(|(name, lift)| format!("{name} {}", signed(Some(*lift)))),
    );
    if h.baseline_pass_rate.is_some() || h.skill_pass_rate.is_some() {
        parts.push(format!(
            "pass rate {} -> {}",
            rate(h.baseline_pass_rate.as_ref()),
            rate(h.skill_pass_rate.as_ref())
        ));
    }
    parts.join(" · ")
}

/// The plugin arm's lift over the baseline under the report's profile, with its interval,
/// design, pass rates and verdict, for a run with a plugin arm: one line each renderer
/// prefixes with its own label, so the terminal and markdown say the same thing.
fn plugin_line(r: &RunReport) -> Option<String> {
    let s = r.summary.as_ref()?;
    let arm = s.headline.plugin.as_ref()?;
    let p = arm.profile(r.profile);
    let verdict = r.plugin_verdict.as_ref()?;
    let skills = plugin_skills(r);
    Some(format!(
        "{} {} · {} · pass rate {} -> {}{skills} · {}",
        signed(p.lift),
        interval(p.interval.as_ref()),
        design(p.cases, s.headline.attempts),
        rate(s.headline.baseline_pass_rate.as_ref()),
        rate(arm.pass_rate.as_ref()),
        verdict.reason
    ))
}

/// ` · 3 skills of plugin arm `plugin``: what the plugin arm staged, from the run's config.
fn plugin_skills(r: &RunReport) -> String {
    let plugin = &r.run.config["plugin"];
    let n = plugin["skills"].as_array().map_or(0, Vec::len);
    match plugin["name"].as_str() {
        Some(name) => format!(" · {} of the arm `{name}`", count(n, "skill")),
        None => String::new(),
    }
}

/// The profile not shown as the headline, with its own verdict, labelled.
fn other_profile(r: &RunReport) -> Option<String> {
    let h = &r.summary.as_ref()?.headline;
    let (other, flag) = match r.profile {
        ScoringProfile::Outcome => (&h.aces, "--scoring-profile aces"),
        ScoringProfile::Aces => (&h.outcome, "--scoring-profile outcome"),
    };
    other.lift?;
    Some(format!(
        "{} {} {} · {} (not the verdict; {flag})",
        other.profile.label(),
        signed(other.lift),
        interval(other.interval.as_ref()),
        other.verdict.label()
    ))
}

/// `pass@3 baseline 0.90 · skill 0.40; pass^3 baseline 0.50 · skill 0.10`, when attempts > 1.
fn pass_at_k_lines(h: &RunHeadline) -> Vec<String> {
    let [b, s] = h.pass_at_k.as_slice() else {
        return Vec::new();
    };
    vec![format!(
        "pass@{k}/^{k}   baseline {:.2} / {:.2} · with skill {:.2} / {:.2} (at least one / all of {k} attempts pass)",
        b.pass_at_k,
        b.pass_hat_k,
        s.pass_at_k,
        s.pass_hat_k,
        k = b.k
    )]
}

/// `62.5 / 100 [40.1, 84.9] 95% t n=8`, or `—`.
fn utility(h: &RunHeadline) -> String {
    match h.utility {
        Some(u) => format!(
            "{u:.1} / 100{}",
            h.utility_interval
                .as_ref()
                .map_or_else(String::new, |i| format!(" [{:.1}, {:.1}]", i.low, i.high))
        ),
        None => "—".into(),
    }
}

/// skill-validator's compat score, and the judge-fallback variant when it differs.
fn compat_lines(r: &RunReport) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(c) = &r.compat {
        lines.push(format!(
            "Compat       skill-validator improvement score {:+.3}: {}",
            c.overall_improvement_score, c.reason
        ));
    }
    if let Some(f) = &r.judge_fallback {
        lines.push(format!(
            "             with inconsistent pairwise verdicts scored by the independent judge instead of tied: {:+.3} (not skill-validator's rule)",
            f.overall_improvement_score
        ));
    }
    lines
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
        "{} left out: {}",
        count(e.total(), "pair"),
        parts.join(", ")
    )
}

/// `run --format github`: one annotation on the skill's SKILL.md with the verdict, an error
/// when the run fails (the skill regresses, or the run did not complete), else a notice.
pub fn github_annotation(r: &RunReport, skill_dir: &std::path::Path) -> String {
    use crate::report::github::{Level, Place, annotation, relative};
    let level = if r.fails() {
        Level::Error
    } else {
        Level::Notice
    };
    let place = Place {
        file: Some(relative(&skill_dir.join("SKILL.md"))),
        range: None,
    };
    let title = format!(
        "skillwatch run: {} on {} {}",
        r.run.skill,
        r.run.model,
        r.verdict.label()
    );
    let status = if r.run.status == skillwatch_daemon::store::RunStatus::Completed {
        String::new()
    } else {
        format!(" (run {})", r.run.status)
    };
    annotation(
        level,
        &place,
        &title,
        &format!("{}{status}", r.verdict.reason),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tally_agrees_with_its_counts() {
        let one = TrialTally {
            ran: 1,
            ..TrialTally::default()
        };
        assert_eq!(tally_text(1, &one), "1 trial: 1 run");
        let many = TrialTally {
            ran: 8,
            reused: 4,
            errors: 1,
            timeouts: 2,
            retries: 2,
            judge_errors: 1,
            ..TrialTally::default()
        };
        assert_eq!(
            tally_text(12, &many),
            "12 trials: 8 run, 4 reused baselines, 1 error, 2 timeouts, 2 retries, 1 judge error"
        );
        let singular = TrialTally {
            ran: 1,
            reused: 1,
            timeouts: 1,
            retries: 1,
            judge_errors: 2,
            ..TrialTally::default()
        };
        assert_eq!(
            tally_text(2, &singular),
            "2 trials: 1 run, 1 reused baseline, 1 timeout, 1 retry, 2 judge errors"
        );
    }
}
