//! `skillwatch history SKILL`: how a skill's lift has moved, per model, from the history store.

use std::fmt::Write;
use std::process::ExitCode;

use skillwatch_core::plural::count;
use skillwatch_core::scoring::ScoringProfile;
use skillwatch_daemon::server::queries::{self, HistoryReport};
use skillwatch_daemon::store::time::{format_age, format_rfc3339, now_ms};
use skillwatch_daemon::store::{
    HistoryEntry, ModelLift, ProbeOutcome, ProbeRunInfo, StoredTrial, TriggerRunInfo,
};
use skillwatch_protocol::HistoryQuery;

use super::history_db::{DbArgs, ProfileArg, interval, rate, short_hash, signed, skill_name};
use super::link::{LinkArgs, ctx, daemon_for_reading};

/// Arguments of `skillwatch history`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The skill: its name, or its folder (the SKILL.md `name` is used).
    skill: String,
    /// Only runs on this model.
    #[arg(long)]
    model: Option<String>,
    /// Only runs on this harness.
    #[arg(long)]
    harness: Option<String>,
    /// Show at most this many runs (newest first).
    #[arg(long, default_value_t = 20)]
    limit: u32,
    /// Also list every trial of the runs shown (case, condition, status, metrics, tokens).
    #[arg(long)]
    trials: bool,
    /// Which lift the table and verdicts show [default: the profile each run was made with,
    /// `outcome` unless `run --scoring-profile` chose another].
    #[arg(long, value_enum)]
    scoring_profile: Option<ProfileArg>,
    /// Print JSON instead of tables (every profile's lift, verdict, pass@k, U and S).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// Print the skill's latest lift per model and its recent runs.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let query = HistoryQuery {
        skill: skill_name(&args.skill)?,
        model: args.model.clone(),
        harness: args.harness.clone(),
        limit: args.limit,
        trials: args.trials,
    };
    let report: HistoryReport = match daemon_for_reading(&args.link, &args.db)? {
        Some(d) => serde_json::from_value(d.call(d.rpc.history(ctx(), query))??)?,
        None => queries::history(&args.db.open_existing()?, &query)?,
    };
    let text = if args.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        tables(&report, args.scoring_profile.map(Into::into))
    };
    crate::out::stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn tables(report: &HistoryReport, profile: Option<ScoringProfile>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{} — history in {}\n", report.skill, report.db);
    latest(&mut o, &report.latest_per_model, profile);
    let _ = writeln!(
        o,
        "\n{:>6}  {:<24}  {:<22}  {:<12}  {:<8}  {:>7}  {:<32}  {:<26}  {:<11}  status",
        "run", "started", "model", "harness", "version", "lift", "interval", "verdict", "excluded"
    );
    for r in &report.runs {
        run_line(&mut o, &r.entry, profile);
        if let Some(trials) = &r.trials {
            trial_lines(&mut o, trials);
        }
    }
    probe_lines(&mut o, &report.probe_runs);
    trigger_lines(&mut o, &report.trigger_runs);
    o
}

/// The trigger test runs: recall and false triggers per run (docs/evals.md, *Trigger tests*).
fn trigger_lines(o: &mut String, runs: &[TriggerRunInfo]) {
    if runs.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nTrigger tests (skillwatch trigger)\n{:>6}  {:<24}  {:<22}  {:<12}  {:<8}  {:<26}  {:<26}  status",
        "run", "started", "model", "harness", "version", "recall", "false triggers"
    );
    for r in runs {
        let _ = writeln!(
            o,
            "{:>6}  {:<24}  {:<22}  {:<12}  {:<8}  {:<26}  {:<26}  {}",
            r.id.to_string(),
            format_rfc3339(r.started_ms),
            r.model,
            r.harness,
            short_hash(&r.skill_hash),
            super::trigger::pooled(&r.summary.recall),
            super::trigger::pooled(&r.summary.false_trigger),
            r.status
        );
    }
}

/// The security probe runs: S and its status per run (docs/probes.md).
fn probe_lines(o: &mut String, runs: &[ProbeRunInfo]) {
    if runs.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nSecurity probes (skillwatch probe)\n{:>6}  {:<24}  {:<22}  {:<12}  {:>6}  {:<13}  {:<10}  status",
        "run", "started", "model", "harness", "S", "label", "failed"
    );
    for r in runs {
        let failed = r
            .outcomes
            .iter()
            .filter(|x| x.outcome == ProbeOutcome::Failed)
            .count();
        let score = r.score.map_or("-".to_owned(), |s| format!("{s:.1}"));
        let label = r.security_status.map_or(
            "not measured",
            skillwatch_core::scoring::skilltester::SecurityStatus::label,
        );
        let _ = writeln!(
            o,
            "{:>6}  {:<24}  {:<22}  {:<12}  {:>6}  {:<13}  {:<10}  {}",
            r.id.to_string(),
            format_rfc3339(r.started_ms),
            r.model,
            r.harness,
            score,
            label,
            format!("{failed}/{}", r.outcomes.len()),
            r.status
        );
    }
}

fn latest(o: &mut String, latest: &[ModelLift], profile: Option<ScoringProfile>) {
    let now = now_ms();
    let _ = writeln!(
        o,
        "Latest lift per model ({}: with-skill minus baseline, metrics on [0, 1])",
        profile.map_or(
            "each run's own profile, outcome unless the run chose another",
            |p| { p.label() }
        )
    );
    if latest.is_empty() {
        let _ = writeln!(o, "  no completed runs");
    }
    for l in latest {
        let chosen = profile.unwrap_or_else(|| l.run.profile());
        let h = l.headline.profile(chosen);
        let named = if profile.is_none() && chosen != ScoringProfile::Outcome {
            format!(" ({})", chosen.label())
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "  {} on {}: lift {} {} · {}{named}  ({}, last {})",
            l.run.model,
            l.run.harness,
            signed(h.lift),
            interval(h.interval.as_ref()),
            h.verdict.label(),
            count(l.completed_runs, "completed run"),
            format_age(l.run.finished_ms.unwrap_or(l.run.started_ms), now),
        );
    }
}

fn run_line(o: &mut String, entry: &HistoryEntry, profile: Option<ScoringProfile>) {
    let run = &entry.run;
    let (lift, ci, verdict, excluded) = match &entry.headline {
        Some(h) => {
            let p = h.profile(profile.unwrap_or_else(|| run.profile()));
            (
                signed(p.lift),
                interval(p.interval.as_ref()),
                p.verdict.label(),
                count(p.excluded.total(), "pair"),
            )
        }
        None => ("…".into(), "(running)".into(), String::new(), String::new()),
    };
    let _ = writeln!(
        o,
        "{:>6}  {:<24}  {:<22}  {:<12}  {:<8}  {:>7}  {:<32}  {:<26}  {:<11}  {}",
        run.id.0,
        format_rfc3339(run.started_ms),
        run.model,
        run.harness,
        short_hash(&run.skill_hash),
        lift,
        ci,
        verdict,
        excluded,
        run.status
    );
    let Some(h) = &entry.headline else { return };
    if let Some(arm) = &h.plugin {
        let p = arm.profile(profile.unwrap_or_else(|| run.profile()));
        let _ = writeln!(
            o,
            "{:>8}plugin arm: lift {} {} · {} · pass rate {}",
            "",
            signed(p.lift),
            interval(p.interval.as_ref()),
            p.verdict.label(),
            rate(arm.pass_rate.as_ref()),
        );
    }
    if h.skill_pass_rate.is_some() || h.invocation_rate.is_some() {
        let _ = writeln!(
            o,
            "{:>8}pass rate baseline {} · skill {} · skill read {}{}",
            "",
            rate(h.baseline_pass_rate.as_ref()),
            rate(h.skill_pass_rate.as_ref()),
            rate(h.invocation_rate.as_ref()),
            h.utility
                .map_or_else(String::new, |u| format!(" · utility U {u:.1}")),
        );
    }
    for p in &h.pass_at_k {
        let _ = writeln!(
            o,
            "{:>8}{}: pass@{k} {:.2} · pass^{k} {:.2} ({})",
            "",
            p.condition.as_str(),
            p.pass_at_k,
            p.pass_hat_k,
            count(p.cases, "case"),
            k = p.k
        );
    }
}

fn trial_lines(o: &mut String, trials: &[StoredTrial]) {
    for t in trials {
        let metrics = t
            .metrics
            .iter()
            .map(|(m, v)| format!("{m}={v:.2}"))
            .collect::<Vec<_>>()
            .join(" ");
        let passed = match t.passed {
            Some(true) => "passed",
            Some(false) => "failed",
            None => "ungraded",
        };
        let tokens = match (t.tokens.input, t.tokens.output) {
            (Some(i), Some(o)) => format!("{i}+{o} tok"),
            _ => "— tok".into(),
        };
        let wall = t
            .wall_ms
            .map_or_else(|| "— s".into(), |ms| format!("{:.1} s", ms as f64 / 1000.0));
        let _ = writeln!(
            o,
            "{:>8}{:<16} {:<8} #{} {:<9} {:<8} {} {} invoked={} {} (trial {})",
            "",
            t.case,
            t.condition,
            t.attempt,
            t.status,
            passed,
            tokens,
            wall,
            t.skill_invoked.map_or("?".into(), |i| i.to_string()),
            metrics,
            t.id
        );
    }
}
