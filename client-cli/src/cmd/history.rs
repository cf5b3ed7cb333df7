//! `skillwatch history SKILL`: how a skill's lift has moved, per model, from the history store.

use std::process::ExitCode;

use skillwatch_core::protocol::HistoryQuery;
use skillwatch_daemon::server::queries::{self, HistoryReport};
use skillwatch_daemon::store::time::{format_age, format_rfc3339, now_ms};
use skillwatch_daemon::store::{HistoryEntry, ModelLift, StoredTrial};

use super::history_db::{DbArgs, interval, rate, short_hash, signed, skill_name};
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
    /// Print JSON instead of tables.
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
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_tables(&report);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_tables(report: &HistoryReport) {
    println!("{} — history in {}", report.skill, report.db);
    println!();
    print_latest(&report.latest_per_model);
    println!();
    println!(
        "{:>6}  {:<20}  {:<22}  {:<12}  {:<8}  {:>7}  {:<32}  {:<11}  status",
        "run", "started", "model", "harness", "version", "lift", "interval", "excluded"
    );
    for r in &report.runs {
        print_run(&r.entry);
        if let Some(trials) = &r.trials {
            print_trials(trials);
        }
    }
}

fn print_latest(latest: &[ModelLift]) {
    let now = now_ms();
    println!(
        "Latest lift per model (ACES Skill Lift, with-skill minus baseline, metrics on [0, 1])"
    );
    if latest.is_empty() {
        println!("  no completed runs");
    }
    for l in latest {
        let h = &l.headline;
        println!(
            "  {} on {}: lift {} {}  ({} completed run{}, last {})",
            l.run.model,
            l.run.harness,
            signed(h.lift),
            interval(h.interval.as_ref()),
            l.completed_runs,
            plural(l.completed_runs),
            format_age(l.run.finished_ms.unwrap_or(l.run.started_ms), now),
        );
    }
}

fn print_run(entry: &HistoryEntry) {
    let run = &entry.run;
    let (lift, ci, excluded) = match &entry.headline {
        Some(h) => (
            signed(h.lift),
            interval(h.interval.as_ref()),
            format!("{} pair{}", h.excluded.total(), plural(h.excluded.total())),
        ),
        None => ("…".into(), "(running)".into(), String::new()),
    };
    println!(
        "{:>6}  {:<20}  {:<22}  {:<12}  {:<8}  {:>7}  {:<32}  {:<11}  {}",
        run.id.0,
        format_rfc3339(run.started_ms),
        run.model,
        run.harness,
        short_hash(&run.skill_hash),
        lift,
        ci,
        excluded,
        run.status
    );
    if let Some(h) = &entry.headline
        && (h.skill_pass_rate.is_some() || h.invocation_rate.is_some())
    {
        println!(
            "{:>8}pass rate baseline {} · skill {} · skill invoked {}{}",
            "",
            rate(h.baseline_pass_rate.as_ref()),
            rate(h.skill_pass_rate.as_ref()),
            rate(h.invocation_rate.as_ref()),
            h.utility
                .map_or_else(String::new, |u| format!(" · utility U {u:.1}")),
        );
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn print_trials(trials: &[StoredTrial]) {
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
        println!(
            "{:>8}{:<16} {:<8} #{} {:<9} {:<8} {} {} invoked={} {}",
            "",
            t.case,
            t.condition,
            t.attempt,
            t.status,
            passed,
            tokens,
            wall,
            t.skill_invoked.map_or("?".into(), |i| i.to_string()),
            metrics
        );
    }
}
