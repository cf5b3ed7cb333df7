//! `skillwatch trigger SKILL`: the visibility check, then the trigger trials, a job of the run
//! engine through the daemon by default (in this process with `--no-daemon`), and the
//! description A/B.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use skillwatch_core::checks::{Visibility, VisibilityProblem};
use skillwatch_core::plural::count;
use skillwatch_core::scoring::Interval;
use skillwatch_core::scoring::VerdictParams;
use skillwatch_core::scoring::trigger::{PooledRate, TriggerChange, compare_summaries};
use skillwatch_core::trajectory::Decision;
use skillwatch_daemon::runs::{ProgressSink, RunEvent, TrialDetail};
use skillwatch_daemon::store::TriggerRunId;
use skillwatch_daemon::trigger::{Preview, TriggerReport, TriggerRequest, preview};

use super::agent::{AgentArgs, RepeatArgs};
use super::engine;
use super::history_db::DbArgs;
use super::link::LinkArgs;

mod optimize;

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
    #[command(flatten)]
    agent: AgentArgs,
    #[command(flatten)]
    repeat: RepeatArgs,
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
    /// Also run the same queries with the description in FILE (the skill staged as a copy
    /// with only its `description:` changed) and report the change of recall and false
    /// triggers, paired by query, with an interval. Neither arm is recorded.
    #[arg(long, value_name = "FILE")]
    description_file: Option<PathBuf>,
    /// Look for a better description: the queries split into train and validation (seeded,
    /// stratified), a model proposes rewrites from the train failures, each rewrite that
    /// passes `check` is measured on train, and validation alone decides, by the paired
    /// interval. Prints the diff of SKILL.md and the validation rates before and after;
    /// records the optimisation in the history (docs/evals.md).
    #[arg(long, conflicts_with = "description_file")]
    optimize: bool,
    #[command(flatten)]
    optimizer: optimize::OptimizeArgs,
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
    let settings = a.agent.settings(&a.skill)?;
    let (kind, model) = a.agent.harness_and_model(&settings.run)?;
    let mut request = TriggerRequest::new(&a.skill, a.agent.harness(&settings.run, kind), &model);
    request.runs = a.repeat.runs.unwrap_or(1).max(1);
    request.jobs = a.repeat.jobs.unwrap_or(1).max(1);
    request.timeout_secs = a.agent.timeout;
    request.siblings = !a.no_siblings;
    request.decoys = a.decoys.clone();
    request.eval_set = a.eval_set.clone();
    request.full = a.full;
    request.budget = a.agent.budget(&settings, &model)?;
    if let Some(file) = &a.description_file {
        return ab(&a, request, file);
    }
    if a.optimize {
        return optimize::run(&a, request, &settings);
    }
    let planned = preview(&request)?;
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
    let (reference, candidate) = (preview(&request)?, preview(&other)?);
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
fn stop_unless_visible(a: &Args, plans: &[&Preview]) -> anyhow::Result<Option<ExitCode>> {
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

fn say_planned(a: &Args, planned: &Preview, runs: u32) {
    if !a.json {
        errln!(
            "{}",
            planned_line(planned.queries.len(), runs, planned.trials, a.full)
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

/// The trials of `planned`: through the daemon (started on demand) unless `--no-daemon`,
/// each shown as it finishes; the report read back from the history the run went to.
fn execute(a: &Args, request: TriggerRequest, planned: &Preview) -> anyhow::Result<TriggerReport> {
    let json = a.json;
    let visibility = planned.visibility.clone();
    let trials = planned.trials;
    let sink: ProgressSink = Arc::new(move |event: &RunEvent| match event {
        RunEvent::TrialFinished {
            detail: Some(TrialDetail::Trigger { query, decision }),
            ..
        } if !json => errln!("{}", trial_line(query, decision.as_ref())),
        RunEvent::Finished {
            stop: Some(stop), ..
        } if !json => errln!("stopped: budget ({})", stop.detail),
        _ => {}
    });
    let prelude: engine::Prelude<'_, TriggerRequest> = Box::new(move |_, _| {
        if !json {
            errln!("{} to run", count(trials, "trial"));
        }
        Ok(())
    });
    on_engine(a, request, visibility, sink, json, prelude)
}

/// Run `request` by the engine (through the daemon unless `--no-daemon`) and read its report
/// back from the history; a failed job is an error.
fn on_engine<'a>(
    a: &'a Args,
    request: TriggerRequest,
    visibility: Visibility,
    sink: ProgressSink,
    quiet: bool,
    prelude: engine::Prelude<'a, TriggerRequest>,
) -> anyhow::Result<TriggerReport> {
    let ran = engine::execute(
        request,
        engine::Run {
            link: &a.link,
            db: &a.db,
            sink,
            quiet,
            prelude,
            load: Box::new(|store, run, _| {
                TriggerReport::load(store, TriggerRunId(run.id), visibility)?
                    .ok_or_else(|| anyhow::anyhow!("the history has no such trigger run"))
            }),
        },
    )?;
    if let Some(why) = ran.job_failure() {
        anyhow::bail!("{why}");
    }
    Ok(ran.report)
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
fn trial_line(query: &str, decision: Option<&Decision>) -> String {
    format!(
        "  {:<50} {}",
        short(query, 50),
        Decision::describe(decision)
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
    for line in crate::run_report::budget_lines(r.stop.as_ref(), &r.spent) {
        out.push_str(&line);
        out.push('\n');
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
