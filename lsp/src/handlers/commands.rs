//! workspace/executeCommand: the lens commands.
//!
//! `skillwatch.runEval` queues a paired run on the daemon when the server is connected to one
//! and the skill's `skillwatch.toml` names a model (the first entry of its `[models]` table),
//! follows the job with work-done progress, then refreshes lenses; otherwise it runs
//! `skillwatch run SKILL_DIR [--case NAME]` as a child process. `skillwatch.showHistory` runs
//! `skillwatch history SKILL_DIR [--model M]` and opens its output.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use serde_json::Value;
use skillwatch_daemon::client;
use skillwatch_protocol::{JobState, RunRequest};
use tokio::process::Command;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{
    MessageType, NumberOrString, ProgressToken, ShowDocumentParams, Uri,
};

use crate::ext::{RunFinished, RunFinishedParams};
use crate::history::{DaemonHistory, History};
use crate::state::State;

/// Start a paired run of a skill (or of one case): arguments `[skillDir, caseName?]`.
pub const RUN_EVAL: &str = "skillwatch.runEval";
/// Show a skill's run history: arguments `[skillDir, model?]`.
pub const SHOW_HISTORY: &str = "skillwatch.showHistory";

/// Every command the server executes.
pub const ALL: &[&str] = &[RUN_EVAL, SHOW_HISTORY];

/// Execute `command` with `arguments`.
pub async fn execute(
    state: Arc<State>,
    command: &str,
    arguments: Vec<Value>,
) -> Result<Option<Value>> {
    let args: Vec<String> = arguments
        .iter()
        .map(|a| match a {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let Some(skill_dir) = args.first().cloned() else {
        return Err(Error::invalid_params(format!(
            "{command}: expected the skill folder as the first argument, found none"
        )));
    };
    let extra = args.get(1).cloned();
    match command {
        RUN_EVAL => {
            tokio::spawn(run_eval(state, skill_dir.clone(), extra));
            Ok(Some(
                serde_json::json!({ "started": true, "skillDir": skill_dir }),
            ))
        }
        SHOW_HISTORY => show_history(state, skill_dir, extra).await,
        other => Err(Error::invalid_params(format!(
            "expected one of {}, found command `{other}`",
            ALL.join(", ")
        ))),
    }
}

/// The argv of `skillwatch run` for a skill or one of its cases.
pub fn run_args(skill_dir: &str, case: Option<&str>, history: &History) -> Vec<String> {
    let mut args = vec!["run".to_string(), skill_dir.to_string()];
    if let Some(case) = case {
        args.extend(["--case".to_string(), case.to_string()]);
    }
    if let History::Store(db) = history {
        args.extend(["--db".to_string(), db.display().to_string()]);
    }
    args
}

async fn run_eval(state: Arc<State>, skill_dir: String, case: Option<String>) {
    if let Some(daemon) = state.daemon()
        && let Some(request) = daemon_request(&skill_dir, case.as_deref())
    {
        return run_eval_on_daemon(state, daemon, request, skill_dir, case).await;
    }
    let args = run_args(&skill_dir, case.as_deref(), &state.history());
    let progress = begin_progress(&state, &skill_dir, case.as_deref()).await;
    let outcome = run_cli(&state.cli_path(), &args).await;
    let (success, message) = match &outcome {
        Ok(out) if out.success => (true, format!("Paired run finished: {}", out.last_line())),
        Ok(out) => (false, format!("Paired run failed: {}", out.last_line())),
        Err(e) => (false, format!("Paired run could not start: {e}")),
    };
    finish_run(&state, progress, skill_dir, case, success, message).await;
}

/// The daemon request for a lens run: the skill, its first configured (harness, model).
fn daemon_request(skill_dir: &str, case: Option<&str>) -> Option<RunRequest> {
    let dir = std::path::Path::new(skill_dir).canonicalize().ok()?;
    let (_, config) = skillwatch_daemon::config::for_dir(&dir).ok()?;
    let (harness, model) = config.models().into_iter().next()?;
    let mut request = RunRequest::new(dir, harness, model);
    request.cases = case.map(str::to_string).into_iter().collect();
    Some(request)
}

/// Queue the run on the daemon and follow the job to its end.
async fn run_eval_on_daemon(
    state: Arc<State>,
    daemon: DaemonHistory,
    request: RunRequest,
    skill_dir: String,
    case: Option<String>,
) {
    let progress = begin_progress(&state, &skill_dir, case.as_deref()).await;
    let queued = daemon
        .client
        .enqueue_run(client::context(Duration::from_secs(30)), request)
        .await;
    let job = match queued {
        Ok(Ok(job)) => job,
        Ok(Err(e)) => {
            let message = format!("Paired run could not start: {e}");
            return finish_run(&state, progress, skill_dir, case, false, message).await;
        }
        Err(e) => {
            let message = format!("Paired run could not start: the daemon did not answer ({e})");
            return finish_run(&state, progress, skill_dir, case, false, message).await;
        }
    };
    let mut last = job;
    while last.state.is_live() {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let ctx = client::context(Duration::from_secs(30));
        match daemon.client.run_status(ctx, last.id).await {
            Ok(Ok(job)) => {
                if let Some(p) = &progress
                    && job.progress.total > 0
                {
                    let pct = job.progress.done * 100 / job.progress.total;
                    let text = format!("{}/{} trials", job.progress.done, job.progress.total);
                    p.report_with_message(text, pct.min(100)).await;
                }
                last = job;
            }
            Ok(Err(e)) => {
                let message = format!("Paired run lost: {e}");
                return finish_run(&state, progress, skill_dir, case, false, message).await;
            }
            Err(e) => {
                let message = format!("Paired run lost: the daemon did not answer ({e})");
                return finish_run(&state, progress, skill_dir, case, false, message).await;
            }
        }
    }
    let success = last.state == JobState::Completed;
    let message = match (success, &last.error) {
        (true, _) => format!(
            "Paired run finished: job {} (run {}), lift {}",
            last.id,
            last.run.map_or_else(|| "?".into(), |r| r.to_string()),
            last.lift
                .map_or_else(|| "n/a".into(), |l| format!("{l:+.2}"))
        ),
        (false, Some(error)) => format!("Paired run {}: {error}", last.state),
        (false, None) => format!("Paired run {}", last.state),
    };
    finish_run(&state, progress, skill_dir, case, success, message).await;
}

type RunProgress =
    tower_lsp_server::OngoingProgress<tower_lsp_server::Bounded, tower_lsp_server::NotCancellable>;

async fn begin_progress(state: &State, skill_dir: &str, case: Option<&str>) -> Option<RunProgress> {
    let title = match case {
        Some(case) => format!("skillwatch: running `{case}`"),
        None => "skillwatch: paired run".to_string(),
    };
    if !state.support().work_done_progress {
        return None;
    }
    let token = progress_token();
    state
        .client
        .create_work_done_progress(token.clone())
        .await
        .ok()?;
    Some(
        state
            .client
            .progress(token, title)
            .with_message(skill_dir.to_string())
            .with_percentage(0)
            .begin()
            .await,
    )
}

async fn finish_run(
    state: &State,
    progress: Option<RunProgress>,
    skill_dir: String,
    case: Option<String>,
    success: bool,
    message: String,
) {
    if let Some(progress) = progress {
        progress.finish_with_message(message.clone()).await;
    }
    let kind = if success {
        MessageType::INFO
    } else {
        MessageType::ERROR
    };
    state.client.show_message(kind, &message).await;
    state
        .client
        .send_notification::<RunFinished>(RunFinishedParams {
            skill_dir,
            case,
            success,
            message,
        })
        .await;
    crate::handlers::refresh_lenses(state).await;
}

async fn show_history(
    state: Arc<State>,
    skill_dir: String,
    model: Option<String>,
) -> Result<Option<Value>> {
    let mut args = vec!["history".to_string(), skill_dir.clone()];
    if let Some(model) = &model {
        args.extend(["--model".to_string(), model.clone()]);
    }
    if let History::Store(db) = state.history() {
        args.extend(["--db".to_string(), db.display().to_string()]);
    }
    let out = match run_cli(&state.cli_path(), &args).await {
        Ok(out) if out.success => out,
        Ok(out) => {
            let message = format!("skillwatch history failed: {}", out.last_line());
            state
                .client
                .show_message(MessageType::ERROR, &message)
                .await;
            return Ok(Some(Value::String(message)));
        }
        Err(e) => {
            let message = format!("skillwatch history could not start: {e}");
            state
                .client
                .show_message(MessageType::ERROR, &message)
                .await;
            return Ok(Some(Value::String(message)));
        }
    };
    if state.support().show_document {
        match write_report(&skill_dir, &out.stdout) {
            Ok(uri) => {
                let params = ShowDocumentParams {
                    uri,
                    external: Some(false),
                    take_focus: Some(true),
                    selection: None,
                };
                if let Err(e) = state.client.show_document(params).await {
                    tracing::warn!("showDocument failed: {e}");
                }
            }
            Err(e) => tracing::warn!("could not write the history report: {e}"),
        }
    } else {
        state
            .client
            .show_message(MessageType::INFO, &out.stdout)
            .await;
    }
    Ok(Some(Value::String(out.stdout)))
}

/// Write the history text where the editor can open it.
fn write_report(skill_dir: &str, text: &str) -> std::io::Result<Uri> {
    let dir = std::env::temp_dir().join("skillwatch-history");
    std::fs::create_dir_all(&dir)?;
    let name = PathBuf::from(skill_dir)
        .file_name()
        .map_or_else(|| "skill".to_string(), |n| n.to_string_lossy().into_owned());
    let path = dir.join(format!("{name}.history.txt"));
    std::fs::write(&path, text)?;
    Uri::from_file_path(&path).ok_or_else(|| std::io::Error::other("no file URI for the report"))
}

/// What a CLI child process produced.
#[derive(Debug)]
pub struct CliOutput {
    /// Exit status was 0.
    pub success: bool,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

impl CliOutput {
    /// The last non-empty line of stderr (or stdout): the one that says what happened.
    pub fn last_line(&self) -> &str {
        [&self.stderr, &self.stdout]
            .iter()
            .find_map(|s| s.lines().rev().find(|l| !l.trim().is_empty()))
            .unwrap_or("no output")
    }
}

/// Run the CLI with `args`, stdin closed, capturing its output.
pub async fn run_cli(cli: &std::path::Path, args: &[String]) -> std::io::Result<CliOutput> {
    let output = Command::new(cli)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await?;
    Ok(CliOutput {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// A fresh token for the client's progress UI: unique per run within this server process.
fn progress_token() -> ProgressToken {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    NumberOrString::String(format!("skillwatch-run-{}-{n}", std::process::id()))
}
