//! `skillwatch trigger SKILL`: the visibility check, then the trigger trials, in-process.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use skillwatch_core::checks::{Visibility, VisibilityProblem};
use skillwatch_core::evalspec::TriggerQuery;
use skillwatch_core::plural::count;
use skillwatch_core::scoring::Interval;
use skillwatch_core::scoring::VerdictParams;
use skillwatch_core::scoring::trigger::{PooledRate, TriggerChange, compare_summaries};
use skillwatch_core::trajectory::Decision;
use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::trigger::{
    DEFAULT_TRIGGER_TIMEOUT_SECS, TriggerPlan, TriggerReport, TriggerRequest, TriggerTrialRecord,
    plan,
};
use skillwatch_protocol::{ClientEnv, EventKind};
use tokio_util::sync::CancellationToken;

use super::history_db::DbArgs;
use super::link::{Daemon, LinkArgs, absolute, daemon_for};
use super::run::{HarnessFlags, harness_and_model, load_config};
use super::run_daemon::{Reading, latest_event, read_events};

/// `skillwatch trigger`.
#[derive(Parser)]
#[command(
    after_help = "Queries: the skill's eval cases (by whether they expect the skill), eval.yaml's \
`triggers:` (positive, negative, near_miss), and skill-creator's trigger eval set \
(evals/trigger_evals.json, or --eval-set). Before any trial, says whether the harness's listing \
shows the skill (Claude Code's listing budget and 1,536-character cut, name collisions); when it \
does not, runs nothing unless --anyway. Exit status: 0 done, 1 the skill is not visible (no \
trials run), 2 bad usage or a failure."
)]
pub struct Args {
    /// The skill folder.
    skill: PathBuf,
    /// Harness: claude-code or codex (watched and stopped at the decision), openai or command
    /// (run to the end) [default: [run] harness].
    #[arg(long)]
    harness: Option<String>,
    /// The agent's model [default: [run] model].
    #[arg(long)]
    model: Option<String>,
    /// Trials per query [default: 1].
    #[arg(long)]
    runs: Option<u32>,
    /// Trials in flight at once [default: 1].
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// Seconds per trial [default: 60].
    #[arg(long, value_name = "SECS")]
    timeout: Option<u32>,
    /// A decoy skill staged beside the skill and its siblings (repeatable).
    #[arg(long = "decoy", value_name = "DIR")]
    decoys: Vec<PathBuf>,
    /// Do not stage the skills beside the skill's folder.
    #[arg(long)]
    no_siblings: bool,
    /// A trigger eval set: a JSON list of {query, should_trigger[, near_miss]}.
    #[arg(long, value_name = "FILE")]
    eval_set: Option<PathBuf>,
    /// Run the trials even when the listing would not show the skill.
    #[arg(long)]
    anyway: bool,
    /// Let each agent run to its end instead of stopping it at its decision (to see what a
    /// full trial costs).
    #[arg(long)]
    full: bool,
    /// API base URL of the harness.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Name of the environment variable holding the harness's API key.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// The harness executable.
    #[arg(long, value_name = "PATH")]
    program: Option<PathBuf>,
    /// An argument for the harness (repeatable).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    args: Vec<String>,
    /// skillwatch.toml to read [default: the nearest one above the skill].
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Also run the same queries with the description in FILE (the skill staged as a copy
    /// with only its `description:` changed) and report the change of recall and false
    /// triggers, paired by query, with an interval. Neither arm is recorded.
    #[arg(long, value_name = "FILE")]
    description_file: Option<PathBuf>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// Check visibility, run the trials unless it blocks, print the report.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let config = load_config(a.config.as_deref(), &a.skill)?;
    let (kind, model) = harness_and_model(a.harness.as_deref(), a.model.as_deref(), &config)?;
    let flags = HarnessFlags {
        base_url: a.base_url.clone(),
        api_key_env: a.api_key_env.clone(),
        program: a.program.clone(),
        args: a.args.clone(),
    };
    let mut request = TriggerRequest::new(&a.skill, flags.over(&config, kind), model);
    request.runs = a.runs.unwrap_or(1).max(1);
    request.jobs = a.jobs.unwrap_or(1).max(1);
    request.timeout_secs = a.timeout;
    request.siblings = !a.no_siblings;
    request.decoys = a.decoys.clone();
    request.eval_set = a.eval_set.clone();
    request.full = a.full;
    if let Some(file) = &a.description_file {
        return ab(&a, request, file);
    }
    let planned = plan(&request, &HostEnv::current())?;
    if let Some(code) = stop_unless_visible(&a, &[&planned])? {
        return Ok(code);
    }
    say_planned(&a, &planned, request.runs);
    let report = execute(&a, request, &planned)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        out!("{}", report_text(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--description-file`: the same queries with the skill's description and with the
/// alternative, paired by query; neither arm is recorded in the history.
fn ab(a: &Args, mut request: TriggerRequest, file: &std::path::Path) -> anyhow::Result<ExitCode> {
    let alternative = std::fs::read_to_string(file)
        .with_context(|| format!("reading the alternative description {}", file.display()))?;
    if alternative.trim().is_empty() {
        anyhow::bail!(
            "{}: expected an alternative description, found an empty file",
            file.display()
        );
    }
    request.record = false;
    let mut other = request.clone();
    other.description = Some(alternative);
    let host = HostEnv::current();
    let (reference, candidate) = (plan(&request, &host)?, plan(&other, &host)?);
    if let Some(code) = stop_unless_visible(a, &[&reference, &candidate])? {
        return Ok(code);
    }
    say_planned(a, &reference, request.runs);
    let before = execute(a, request, &reference)?;
    if !a.json {
        errln!("the same queries with the alternative description:");
    }
    let after = execute(a, other, &candidate)?;
    let change = compare_summaries(&before.summary, &after.summary, &VerdictParams::default());
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "reference": before,
                "alternative": after,
                "change": change,
                "verdict": change.verdict(),
            }))?
        )?;
    } else {
        out!("{}", report_text(&before))?;
        out!(
            "\nWith the description of {}:{}",
            file.display(),
            report_text(&after)
        )?;
        out!(
            "\n{}",
            change_text(
                "The alternative description against the skill's own, paired by query",
                &change
            )
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Show each plan's visibility; when one blocks and `--anyway` is not given, say so (and
/// with `--json`, print that nothing ran) and give the exit status.
fn stop_unless_visible(a: &Args, plans: &[&TriggerPlan]) -> anyhow::Result<Option<ExitCode>> {
    let blocked = plans.iter().any(|p| p.visibility.blocked());
    for p in plans {
        if !a.json || blocked {
            errln!("{}", visibility_text(&p.visibility));
        }
    }
    if !blocked || a.anyway {
        return Ok(None);
    }
    if a.json {
        let visibility: Vec<&Visibility> = plans.iter().map(|p| &p.visibility).collect();
        let visibility = match visibility.as_slice() {
            [one] => serde_json::to_value(one)?,
            many => serde_json::to_value(many)?,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "visibility": visibility, "trials": [], "ran": false
            }))?
        )?;
    }
    errln!("no trials run: the agent cannot pick a skill it is not shown (--anyway to run them)");
    Ok(Some(ExitCode::from(1)))
}

fn say_planned(a: &Args, planned: &TriggerPlan, runs: u32) {
    if !a.json {
        errln!(
            "{}",
            planned_line(planned.queries.len(), runs, planned.planned(), a.full)
        );
    }
}

/// `8 queries × 2 runs: 16 trials, each stopped at its decision`.
fn planned_line(queries: usize, runs: u32, trials: usize, full: bool) -> String {
    format!(
        "{} × {}: {}{}",
        count(queries, "query"),
        count(runs, "run"),
        count(trials, "trial"),
        if full {
            ", each to its end"
        } else {
            ", each stopped at its decision"
        }
    )
}

/// The trials of `planned`: through the daemon (started on demand) unless `--no-daemon`.
fn execute(
    a: &Args,
    request: TriggerRequest,
    planned: &TriggerPlan,
) -> anyhow::Result<TriggerReport> {
    match daemon_for(&a.link, &a.db)? {
        Some(daemon) => through_daemon(&daemon, request, planned, a.json),
        None => in_process(a, planned),
    }
}

fn visibility_text(v: &Visibility) -> String {
    let mut out = format!(
        "Visibility   `{}` among {} listed skills ({} characters of listing, description {} \
         characters)",
        v.name, v.listed_skills, v.listing_chars, v.description_chars
    );
    if v.problems.is_empty() {
        out.push_str(": shown whole");
    }
    for p in &v.problems {
        out.push_str("\n  ");
        out.push_str(&match p {
            VisibilityProblem::Hidden => {
                "not shown: `disable-model-invocation: true` keeps it out of the listing".into()
            }
            VisibilityProblem::DroppedByBudget {
                budget,
                for_installed,
            } => format!(
                "not shown: the listing is over Claude Code's budget of {budget} characters for \
                 this model ({for_installed} once its own skills are listed) and shows this \
                 skill by name only (SW222)"
            ),
            VisibilityProblem::DescriptionCut { kept } => {
                format!("description cut: only its first {kept} characters are listed (SW223)")
            }
            VisibilityProblem::NameCollision { other } => format!(
                "not shown as itself: `{}` in {} has the same name (SW220)",
                v.name,
                other.display()
            ),
            VisibilityProblem::Unreadable => {
                "not shown: SKILL.md has no readable frontmatter".into()
            }
        });
    }
    out
}

/// A finished trial as a progress line on stderr: the same in-process and through the daemon.
fn trial_line(queries: &[TriggerQuery], t: &TriggerTrialRecord) -> String {
    let query = queries.get(t.trial.query).map_or("", |q| q.query.as_str());
    format!(
        "  {:<50} {}",
        short(query, 50),
        Decision::describe(t.trial.decision.as_ref())
    )
}

fn rate(i: Option<&Interval>) -> String {
    i.map_or("-".into(), |i| {
        format!(
            "{:.0}% [{:.0}%, {:.0}%]",
            i.estimate * 100.0,
            i.low * 100.0,
            i.high * 100.0
        )
    })
}

/// `4/6 67% [30%, 90%]`: hits over decided trials with the Wilson interval.
pub(crate) fn pooled(p: &PooledRate) -> String {
    format!("{}/{} {}", p.hits, p.trials, rate(p.interval.as_ref()))
}

fn short(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let cut: String = one_line.chars().take(max - 1).collect();
    format!("{cut}…")
}

fn report_text(r: &TriggerReport) -> String {
    let s = &r.summary;
    let mut out = format!(
        "\n{} on {} {} ({}), staged with {}\n\n{:<50} {:<9} {:>9}  {:<20} {}\n",
        r.skill,
        r.harness,
        r.harness_version,
        r.model,
        count(r.staged.len(), "other skill"),
        "query",
        "kind",
        "triggered",
        "rate (95% Wilson)",
        "instead"
    );
    for q in &s.queries {
        let instead: Vec<String> = q
            .picked_instead
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let mark = if q.as_expected { " " } else { "✗" };
        out.push_str(&format!(
            "{mark}{:<49} {:<9} {:>9}  {:<20} {}\n",
            short(&q.query.query, 49),
            q.query.kind.as_str(),
            format!("{}/{}", q.triggered, q.decided),
            rate(q.rate.as_ref()),
            instead.join(", ")
        ));
    }
    out.push_str(&format!("\nRecall          {}\n", pooled(&s.recall)));
    out.push_str(&format!(
        "False triggers  {} (near misses {})\n",
        pooled(&s.false_trigger),
        pooled(&s.near_miss_false_trigger)
    ));
    if !s.picked_instead.is_empty() {
        let list: Vec<String> = s
            .picked_instead
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        out.push_str(&format!("Picked instead  {}\n", list.join(", ")));
    }
    if s.undecided > 0 {
        out.push_str(&format!(
            "Undecided       {} with no decision seen (left out of the rates)\n",
            count(s.undecided, "trial")
        ));
    }
    let stopped = r.trials.iter().filter(|t| t.trial.stopped_early).count();
    out.push_str(&format!(
        "Per trial       {:.1} model requests, {:.0} tokens, {:.1} s ({stopped} of {} stopped at the decision)\n",
        s.mean_turns,
        s.mean_tokens,
        s.mean_seconds,
        r.trials.len()
    ));
    out
}

/// A [`TriggerChange`] as text: recall and false triggers before and after, the change with
/// its interval, and each verdict's reason.
pub(crate) fn change_text(title: &str, c: &TriggerChange) -> String {
    let mut out = format!("{title}\n");
    for (label, r) in [("Recall", &c.recall), ("False triggers", &c.false_trigger)] {
        let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.0}%", v * 100.0));
        let change = r.interval.as_ref().map_or("-".into(), |i| {
            format!(
                "{:+.0} points [{:+.0}, {:+.0}] ({:.0}% {}, {})",
                i.estimate * 100.0,
                i.low * 100.0,
                i.high * 100.0,
                i.level * 100.0,
                i.method.label(),
                count(i.n, "query")
            )
        });
        out.push_str(&format!(
            "  {label:<15} {} -> {}  {change}\n  {:<15} {}\n",
            pct(r.before),
            pct(r.after),
            "",
            r.decision.reason
        ));
    }
    if c.unpaired > 0 {
        out.push_str(&format!(
            "  {} asked in only one run (left out)\n",
            count(c.unpaired, "query")
        ));
    }
    out.push_str(&format!("Verdict: {}\n", c.verdict().as_str()));
    out
}

/// The trials in this process, recorded in the history `--db` names.
fn in_process(a: &Args, planned: &TriggerPlan) -> anyhow::Result<TriggerReport> {
    let store = Arc::new(Mutex::new(a.db.open_or_create()?));
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let cancel = CancellationToken::new();
    let json = a.json;
    let queries = planned.queries.clone();
    let report = runtime.block_on(async {
        let on_interrupt = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_interrupt.cancel();
            }
        });
        let progress = move |t: &TriggerTrialRecord| {
            if !json {
                errln!("{}", trial_line(&queries, t));
            }
        };
        planned
            .execute(&std::env::temp_dir(), &progress, cancel, Some(store))
            .await
    })?;
    Ok(report)
}

/// The trials on the daemon (started on demand), on this client's values of the variables
/// the harness reads; recorded in the daemon's history, which tells the editor's lenses. Each
/// trial is shown as it finishes, from the daemon's events for this call.
fn through_daemon(
    daemon: &Daemon,
    mut request: TriggerRequest,
    planned: &TriggerPlan,
    json: bool,
) -> anyhow::Result<TriggerReport> {
    // The daemon has another working directory: every path goes as an absolute one (and
    // `.` as the folder's own name, which events and lenses show).
    let full = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| absolute(p));
    request.skill_dir = full(&request.skill_dir);
    request.decoys = request.decoys.iter().map(|d| full(d)).collect();
    request.eval_set = request.eval_set.as_deref().map(full);
    if let Some(program) = &request.harness.program
        && program.components().count() > 1
    {
        request.harness.program = Some(absolute(program));
    }
    let call = call_id();
    request.call = Some(call.clone());
    let env = ClientEnv::capture(request.harness.host_vars().iter().map(String::as_str));
    let trials = planned.planned();
    if !json {
        errln!(
            "running {} on the skillwatch daemon (--no-daemon to run them here)",
            count(trials, "trial")
        );
    }
    // A trigger run answers when its trials are done: the deadline is the trials' own
    // timeouts, one after another, with room to spare.
    let secs = u64::from(request.timeout_secs.unwrap_or(DEFAULT_TRIGGER_TIMEOUT_SECS));
    let deadline = Duration::from_secs(secs * (trials as u64 + 1) * 2 + 60);
    let cursor = latest_event(daemon)?;
    let (rpc, request) = (daemon.rpc.clone(), serde_json::to_value(&request)?);
    let answer = daemon.runtime.spawn(async move {
        rpc.trigger(skillwatch_daemon::client::context(deadline), request, env)
            .await
    });
    let events = |kind: EventKind| -> anyhow::Result<()> {
        if let EventKind::TriggerProgress {
            call: Some(c),
            event,
            ..
        } = kind
            && c == call
            && !json
        {
            let trial: TriggerTrialRecord =
                serde_json::from_value(event).context("reading a progress event of the daemon")?;
            errln!("{}", trial_line(&planned.queries, &trial));
        }
        Ok(())
    };
    // once the call has answered, what is left of its events is read without waiting
    read_events(daemon, cursor, events, || {
        Ok(match answer.is_finished() {
            true => Reading::Drain,
            false => Reading::Wait,
        })
    })?;
    let report = daemon
        .call(answer)
        .context("waiting for the daemon's trigger call")???;
    Ok(serde_json::from_value(report)?)
}

/// An id for one trigger call through the daemon, unique among this user's clients: the
/// process id and the time.
fn call_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_line_agrees_with_its_counts() {
        assert_eq!(
            planned_line(1, 1, 1, false),
            "1 query × 1 run: 1 trial, each stopped at its decision"
        );
        assert_eq!(
            planned_line(8, 2, 16, true),
            "8 queries × 2 runs: 16 trials, each to its end"
        );
    }
}
