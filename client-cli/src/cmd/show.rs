//! `skillwatch show RUN [--trial ID]`: a stored run's trials, or one trial whole: its output,
//! its error with the end of the agent's stderr, its checks and judgments, and its
//! trajectory (pretty, or `--raw` as stored), so a failure can be understood without sqlite3
//! and zstd.
//!
//! It reads the history file directly (SQLite's WAL lets it read beside a running daemon).

use std::fmt::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::json;
use skillwatch_core::plural::count;
use skillwatch_core::trajectory::{Message, Step, Trajectory};
use skillwatch_daemon::store::{
    JudgmentKind, RunId, RunInfo, StoredJudgment, StoredTrial, TrialId, Verdict,
};

use super::history_db::DbArgs;

/// Arguments of `skillwatch show`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Without --trial, one line per trial of the run with its id; with --trial, \
that trial whole. Trial ids are those of this list and of `skillwatch history --trials`."
)]
pub struct Args {
    /// The run (its id in `skillwatch history`, or in `skillwatch run`'s report).
    run: i64,
    /// One trial of the run, by id.
    #[arg(long, value_name = "ID")]
    trial: Option<i64>,
    /// With --trial: print the stored trajectory as it is (ATIF JSON) instead of a reading.
    #[arg(long, requires = "trial", conflicts_with = "json")]
    raw: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

/// Print the run's trials or one trial.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.db.open_existing()?;
    let run = RunId(args.run);
    let info = store.run(run)?;
    let trials = store.run_trials(run)?;
    let Some(id) = args.trial else {
        let text = if args.json {
            serde_json::to_string_pretty(&json!({"run": info, "trials": trials}))? + "\n"
        } else {
            trial_list(&info, &trials)
        };
        crate::out::stdout(&text)?;
        return Ok(ExitCode::SUCCESS);
    };
    let Some(trial) = trials.iter().find(|t| t.id == TrialId(id)) else {
        let ids: Vec<String> = trials.iter().map(|t| t.id.to_string()).collect();
        bail!(
            "run {run} has no trial {id} (its trials: {})",
            if ids.is_empty() {
                "none".to_owned()
            } else {
                ids.join(", ")
            }
        );
    };
    let output = store.trial_output(trial.id)?.unwrap_or_default();
    let checks = store.trial_checks(trial.id)?;
    let judgments: Vec<StoredJudgment> = store
        .run_judgments(run)?
        .into_iter()
        .filter(|j| belongs_to(j, trial))
        .collect();
    let stored = match &trial.trajectory_sha256 {
        Some(sha) => store.trajectory(sha)?,
        None => None,
    };
    if args.raw {
        let Some(stored) = stored else {
            bail!("trial {id} of run {run} has no stored trajectory");
        };
        let mut bytes = stored.bytes;
        if bytes.last() != Some(&b'\n') {
            bytes.push(b'\n');
        }
        crate::out::stdout(&String::from_utf8_lossy(&bytes))?;
        return Ok(ExitCode::SUCCESS);
    }
    let trajectory: Option<Trajectory> = match &stored {
        Some(s) => Some(
            serde_json::from_slice(&s.bytes)
                .with_context(|| format!("reading the trajectory of trial {id} ({})", s.format))?,
        ),
        None => None,
    };
    let text = if args.json {
        let value = json!({
            "run": info,
            "trial": trial,
            "output": output,
            "checks": checks,
            "judgments": judgments,
            "trajectory": trajectory,
        });
        serde_json::to_string_pretty(&value)? + "\n"
    } else {
        let mut o = trial_header(&info, trial);
        sections(&mut o, trial, &output, &checks, &judgments);
        if let Some(t) = &trajectory {
            trajectory_text(&mut o, t);
        }
        o
    };
    crate::out::stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Independent judgments of this trial, and the pairwise ones of its case and attempt.
fn belongs_to(j: &StoredJudgment, trial: &StoredTrial) -> bool {
    match j.judgment.kind {
        JudgmentKind::Independent => j.trial == Some(trial.id),
        JudgmentKind::Pairwise => j.case == trial.case && j.attempt == trial.attempt,
    }
}

fn outcome(t: &StoredTrial) -> &'static str {
    match t.passed {
        Some(true) => "passed",
        Some(false) => "failed",
        None => "ungraded",
    }
}

fn seconds(ms: Option<u64>) -> String {
    ms.map_or_else(|| "—".into(), |ms| format!("{:.1} s", ms as f64 / 1000.0))
}

fn trial_list(info: &RunInfo, trials: &[StoredTrial]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "run {}: {} on {} ({}), {}, {}",
        info.id,
        info.skill,
        info.model,
        info.harness,
        info.status,
        count(trials.len(), "trial")
    );
    let width = trials
        .iter()
        .map(|t| t.case.len())
        .max()
        .unwrap_or(4)
        .max(4);
    for t in trials {
        let why = t
            .error_message
            .as_deref()
            .map_or_else(String::new, |e| format!("  {}", first_line(e, 120)));
        let _ = writeln!(
            o,
            "  {:>6}  {:<width$}  {:<8} #{}  {:<9} {:<8} {:>7}{why}",
            t.id.to_string(),
            t.case,
            t.condition.as_str(),
            t.attempt,
            t.status.as_str(),
            outcome(t),
            seconds(t.wall_ms),
        );
    }
    let _ = writeln!(
        o,
        "\n`skillwatch show {} --trial ID` shows one whole",
        info.id
    );
    o
}

fn trial_header(info: &RunInfo, t: &StoredTrial) -> String {
    let mut o = String::new();
    let retried = match t.retries {
        Some(n) if n > 0 => format!(", retried {n}x"),
        _ => String::new(),
    };
    let _ = writeln!(
        o,
        "run {}, trial {}: {} {} #{} of {} on {} ({})",
        info.id, t.id, t.case, t.condition, t.attempt, info.skill, info.model, info.harness
    );
    let _ = writeln!(
        o,
        "{}, {}, {}{retried}; skill invoked: {}; tokens {} in, {} out",
        t.status,
        outcome(t),
        seconds(t.wall_ms),
        t.skill_invoked
            .map_or_else(|| "unknown".into(), |i| i.to_string()),
        t.tokens.input.map_or_else(|| "—".into(), |n| n.to_string()),
        t.tokens
            .output
            .map_or_else(|| "—".into(), |n| n.to_string()),
    );
    o
}

fn sections(
    o: &mut String,
    t: &StoredTrial,
    output: &str,
    checks: &[skillwatch_daemon::store::AssertionResult],
    judgments: &[StoredJudgment],
) {
    if let Some(error) = &t.error_message {
        let _ = writeln!(o, "\nerror:\n{}", indent(error));
    }
    if let Some(stderr) = &t.stderr_tail {
        let _ = writeln!(o, "\nthe agent's stderr (its end):\n{}", indent(stderr));
    }
    let _ = writeln!(
        o,
        "\noutput:\n{}",
        if output.trim().is_empty() {
            "  (none)".to_owned()
        } else {
            indent(output)
        }
    );
    if !t.metrics.is_empty() {
        let metrics: Vec<String> = t
            .metrics
            .iter()
            .map(|(m, v)| format!("{m}={v:.2}"))
            .collect();
        let _ = writeln!(o, "\nmetrics: {}", metrics.join(" "));
    }
    if !checks.is_empty() {
        let _ = writeln!(o, "\nchecks:");
        for c in checks {
            let why = c
                .message
                .as_deref()
                .map_or_else(String::new, |m| format!(" — {}", first_line(m, 200)));
            let _ = writeln!(
                o,
                "  {} {} {}{why}",
                if c.passed { "pass" } else { "FAIL" },
                c.kind,
                c.description
            );
        }
    }
    if !judgments.is_empty() {
        let _ = writeln!(o, "\njudgments:");
        for j in judgments {
            let g = &j.judgment;
            let verdict = match &g.verdict {
                Verdict::Score { score } => format!("score {score}"),
                Verdict::Preference { winner, magnitude } => format!("{winner} {magnitude}"),
                Verdict::Failed { error } => format!("JUDGE ERROR: {error}"),
            };
            let _ = writeln!(
                o,
                "  {} {} by {}: {verdict}{}",
                g.kind.as_str(),
                g.criterion.as_deref().unwrap_or("overall"),
                g.judge_model,
                g.reasoning
                    .as_deref()
                    .map_or_else(String::new, |r| format!(" — {}", first_line(r, 200)))
            );
        }
    }
}

/// The trajectory as a person reads it: each step's source, text, tool calls and results.
fn trajectory_text(o: &mut String, t: &Trajectory) {
    let _ = writeln!(
        o,
        "\ntrajectory ({}, {} {}, {}; --raw for the JSON):",
        t.schema_version,
        t.agent.name,
        t.agent.version,
        count(t.steps.len(), "step")
    );
    for step in &t.steps {
        step_text(o, step);
    }
}

fn step_text(o: &mut String, step: &Step) {
    let source = serde_json::to_value(step.source)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let text = message_text(&step.message);
    let _ = writeln!(
        o,
        "  [{}] {source}: {}",
        step.step_id,
        first_line(&text, 300)
    );
    if let Some(reasoning) = &step.reasoning_content {
        let _ = writeln!(o, "      (reasoning) {}", first_line(reasoning, 200));
    }
    for call in step.tool_calls.iter().flatten() {
        let args = serde_json::Value::Object(call.arguments.clone()).to_string();
        let _ = writeln!(o, "      -> {}({})", call.function_name, clip(&args, 300));
    }
    for result in step.observation.iter().flat_map(|obs| &obs.results) {
        let content = result
            .content
            .as_ref()
            .map(message_text)
            .unwrap_or_default();
        let _ = writeln!(o, "      <- {}", first_line(&content, 300));
    }
}

fn message_text(m: &Message) -> String {
    m.text()
}

/// `text` indented two spaces, every line.
fn indent(text: &str) -> String {
    text.trim_end()
        .lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first line of `text`, cut at `max` characters, with a mark when more was left out.
fn first_line(text: &str, max: usize) -> String {
    let text = text.trim();
    let line = text.lines().next().unwrap_or("");
    let more = line.len() < text.len();
    let cut = clip(line, max);
    if more && cut.len() == line.len() {
        format!("{cut} …")
    } else {
        cut
    }
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_multi_line_text_is_cut_visibly() {
        assert_eq!(first_line("one\ntwo", 10), "one …");
        assert_eq!(first_line("abcdef", 3), "abc…");
        assert_eq!(first_line("  short  ", 10), "short");
        assert_eq!(indent("a\nb\n"), "  a\n  b");
    }
}
