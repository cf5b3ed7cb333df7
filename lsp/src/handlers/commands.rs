//! workspace/executeCommand: the lens commands.
//!
//! `skillwatch.runEval` runs a paired eval of a skill (or of one case) on the harness and model
//! its skillwatch.toml names; with none named, the author picks one of those found on this
//! machine (`skillwatch/pickRun`, or `window/showMessageRequest` for other clients), the run
//! starts at once and the choice may be saved to skillwatch.toml ([`crate::choice`]). The run
//! is queued on the daemon when the server is connected to one and followed with work-done
//! progress; otherwise `skillwatch run` runs as a child process. Lenses refresh when it ends.
//! `skillwatch.showHistory` runs `skillwatch history SKILL_DIR [--model M]` and opens its
//! output.
//!
//! Both take the skill as their first argument: its folder, a file in it (SKILL.md or an eval
//! file), or that file's URI. Without one (an editor's command palette sends none), the skill
//! of the only open SKILL.md or eval file.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use serde_json::Value;
use skillwatch_core::plural::agree;
use skillwatch_daemon::client;
use skillwatch_daemon::harness::discover::{self, ProcessEnv, RunTarget};
use skillwatch_protocol::{ClientEnv, JobState, RunRequest};
use tokio::process::Command;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{
    MessageActionItem, MessageType, NumberOrString, ProgressToken, ShowDocumentParams,
    ShowMessageRequestParams, Uri,
};

use crate::choice;
use crate::documents::DocumentKind;
use crate::ext::{PickChoice, PickRun, PickRunParams, RunFinished, RunFinishedParams};
use crate::history::{DaemonHistory, History};
use crate::state::State;

/// Start a paired run of a skill (or of one case): arguments `[skill, caseName?]`.
pub const RUN_EVAL: &str = "skillwatch.runEval";
/// Show a skill's run history: arguments `[skill, model?]`.
pub const SHOW_HISTORY: &str = "skillwatch.showHistory";

/// Every command the server executes.
pub const ALL: &[&str] = &[
    RUN_EVAL,
    SHOW_HISTORY,
    super::optimize::OPTIMIZE_DESCRIPTION,
];

/// Execute `command` with `arguments`.
pub async fn execute(
    state: Arc<State>,
    command: &str,
    arguments: Vec<Value>,
) -> Result<Option<Value>> {
    if !ALL.contains(&command) {
        return Err(Error::invalid_params(format!(
            "expected one of {}, found command `{command}`",
            ALL.join(", ")
        )));
    }
    let args: Vec<String> = arguments
        .iter()
        .map(|a| match a {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let skill_dir = match args.first() {
        Some(arg) => skill_of(arg),
        None => only_open_skill(&state),
    }
    .map_err(|why| Error::invalid_params(format!("{command}: {why}")))?;
    let skill_dir = skill_dir.display().to_string();
    let extra = args.get(1).cloned();
    match command {
        RUN_EVAL => {
            tokio::spawn(run_eval(state, skill_dir.clone(), extra));
            Ok(Some(
                serde_json::json!({ "started": true, "skillDir": skill_dir }),
            ))
        }
        super::optimize::OPTIMIZE_DESCRIPTION => {
            tokio::spawn(super::optimize::run(state, skill_dir.clone()));
            Ok(Some(
                serde_json::json!({ "started": true, "skillDir": skill_dir }),
            ))
        }
        _ => show_history(state, skill_dir, extra).await,
    }
}

/// The skill folder an argument names: the folder itself, a skill file in it, or its URI.
fn skill_of(arg: &str) -> std::result::Result<PathBuf, String> {
    let path = match arg.parse::<Uri>() {
        Ok(uri) if arg.starts_with("file:") => uri
            .to_file_path()
            .map(|p| p.into_owned())
            .ok_or_else(|| format!("expected a file URI, found `{arg}`"))?,
        _ => PathBuf::from(arg),
    };
    if path.is_dir() {
        return Ok(path);
    }
    DocumentKind::of_path(&path)
        .and_then(|kind| kind.skill_dir(&path))
        .ok_or_else(|| {
            format!(
                "expected a skill folder, its SKILL.md or an eval file, found `{}`",
                path.display()
            )
        })
}

/// The skill of the open skill files, when they are all of one skill.
fn only_open_skill(state: &State) -> std::result::Result<PathBuf, String> {
    let mut dirs: Vec<PathBuf> = state
        .documents()
        .values()
        .filter_map(|open| open.doc.skill_dir())
        .collect();
    dirs.sort();
    dirs.dedup();
    match dirs.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(
            "expected the skill as the first argument, found none and no open skill file".into(),
        ),
        _ => Err(format!(
            "expected the skill as the first argument, found none and {} open skills",
            dirs.len()
        )),
    }
}

/// The argv of `skillwatch run` for a skill or one of its cases on `target`.
pub fn run_args(
    skill_dir: &str,
    case: Option<&str>,
    target: &RunTarget,
    history: &History,
) -> Vec<String> {
    let mut args = vec!["run".to_string(), skill_dir.to_string()];
    args.extend([
        "--harness".to_string(),
        target.harness.clone(),
        "--model".to_string(),
        target.model.clone(),
    ]);
    if let Some(url) = &target.base_url {
        args.extend(["--base-url".to_string(), url.clone()]);
    }
    if let Some(case) = case {
        args.extend(["--case".to_string(), case.to_string()]);
    }
    if let History::Store(db) = history {
        args.extend(["--db".to_string(), db.display().to_string()]);
    }
    args
}

async fn run_eval(state: Arc<State>, skill_dir: String, case: Option<String>) {
    let target = match target_for(&state, Path::new(&skill_dir)).await {
        Ok(target) => target,
        Err(message) => {
            return finish_run(&state, None, skill_dir, case, false, message).await;
        }
    };
    crate::daemon::ensure_link(&state);
    if let Some(daemon) = state.daemon() {
        let request = daemon_request(&skill_dir, case.as_deref(), &target);
        return run_eval_on_daemon(state, daemon, request, skill_dir, case).await;
    }
    let args = run_args(&skill_dir, case.as_deref(), &target, &state.history());
    let progress = begin_progress(&state, &skill_dir, case.as_deref()).await;
    let outcome = run_cli(&state.cli_path(), &args).await;
    let (success, message) = match &outcome {
        Ok(out) if out.success => (true, format!("Paired run finished: {}", out.last_line())),
        Ok(out) => (false, format!("Paired run failed: {}", out.last_line())),
        Err(e) => (false, format!("Paired run could not start: {e}")),
    };
    finish_run(&state, progress, skill_dir, case, success, message).await;
}

/// The harness and model to run on: the skill's skillwatch.toml's, else the author's pick
/// (saved when they say so). `Err`: the message saying why no run starts.
async fn target_for(state: &State, skill_dir: &Path) -> std::result::Result<RunTarget, String> {
    let dir = skill_dir.to_path_buf();
    let configured = tokio::task::spawn_blocking(move || choice::configured(&dir))
        .await
        .map_err(|e| format!("Paired run not started: {e}"))?;
    match configured {
        Ok(Some(target)) => return Ok(target),
        Ok(None) => {}
        Err(e) => return Err(format!("Paired run not started: {e}")),
    }
    let found = discover::available(&ProcessEnv).await;
    if found.is_empty() {
        return Err(NOTHING_FOUND.to_string());
    }
    let save_to = choice::save_path(skill_dir, &state.workspace_roots());
    let Some((target, save)) = pick(state, skill_dir, found, &save_to).await else {
        return Err("Paired run not started: no harness chosen".to_string());
    };
    if save {
        let (path, chosen) = (save_to.clone(), target.clone());
        let saved = tokio::task::spawn_blocking(move || choice::save(&path, &chosen)).await;
        let (kind, message) = match saved {
            Ok(Ok(())) => (
                MessageType::INFO,
                format!(
                    "Saved {} to {}: the next runs use it",
                    target.label(),
                    save_to.display()
                ),
            ),
            Ok(Err(e)) => (MessageType::WARNING, format!("Choice not saved: {e}")),
            Err(e) => (MessageType::WARNING, format!("Choice not saved: {e}")),
        };
        state.client.show_message(kind, message).await;
    }
    Ok(target)
}

/// What a run asked for with no harness configured and none found says.
pub const NOTHING_FOUND: &str = "Paired run not started: no harness found on this machine. \
Install Claude Code (`claude`) or Codex (`codex`), or set OPENAI_BASE_URL to an OpenAI-compatible \
endpoint (Ollama, vLLM, llama.cpp), or set [run] harness and model in skillwatch.toml.";

/// Ask the author which of `found` to run on, and whether to save it to `save_to`.
async fn pick(
    state: &State,
    skill_dir: &Path,
    found: Vec<RunTarget>,
    save_to: &Path,
) -> Option<(RunTarget, bool)> {
    let name = skill_dir
        .file_name()
        .map_or_else(|| "the skill".into(), |n| n.to_string_lossy().into_owned());
    let title = format!("Run a paired eval of {name} on:");
    if state.support().pick_run {
        let params = PickRunParams {
            skill_dir: skill_dir.to_path_buf(),
            title,
            choices: found
                .iter()
                .map(|t| PickChoice {
                    label: t.label(),
                    target: t.clone(),
                })
                .collect(),
            save_to: save_to.to_path_buf(),
        };
        let answer = state.client.send_request::<PickRun>(params).await;
        let picked = match answer {
            Ok(Some(picked)) => picked,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!("skillwatch/pickRun failed: {e}");
                return None;
            }
        };
        return found.get(picked.index).cloned().map(|t| (t, picked.save));
    }
    let actions = found
        .iter()
        .map(|t| MessageActionItem {
            title: t.label(),
            properties: Default::default(),
        })
        .collect();
    let answer = ask(state, title, actions).await?;
    let target = found.into_iter().find(|t| t.label() == answer)?;
    let question = format!(
        "Save {} to {} so the next runs use it?",
        target.label(),
        save_to.display()
    );
    let yes = "Save";
    let save = ask(
        state,
        question,
        vec![
            MessageActionItem {
                title: yes.into(),
                properties: Default::default(),
            },
            MessageActionItem {
                title: "Not now".into(),
                properties: Default::default(),
            },
        ],
    )
    .await
    .is_some_and(|a| a == yes);
    Some((target, save))
}

/// `window/showMessageRequest`: the title of the action taken.
async fn ask(state: &State, message: String, actions: Vec<MessageActionItem>) -> Option<String> {
    let params = ShowMessageRequestParams {
        typ: MessageType::INFO,
        message,
        actions: Some(actions),
    };
    match state
        .client
        .send_request::<tower_lsp_server::ls_types::request::ShowMessageRequest>(params)
        .await
    {
        Ok(answer) => answer.map(|a| a.title),
        Err(e) => {
            tracing::warn!("window/showMessageRequest failed: {e}");
            None
        }
    }
}

/// The daemon request for a lens run on `target`.
fn daemon_request(skill_dir: &str, case: Option<&str>, target: &RunTarget) -> RunRequest {
    let dir = Path::new(skill_dir)
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from(skill_dir));
    let mut request = RunRequest::new(dir, &target.harness, &target.model);
    request.base_url = target.base_url.clone();
    request.cases = case.map(str::to_string).into_iter().collect();
    request
}

/// The editor's values of the variables the run reads (API key, base URL, `env_allow`): the
/// daemon may have been started elsewhere, by a `skillwatch run` in a shell without the key,
/// and a run from the editor must see what the editor sees, as `skillwatch run` does. A
/// request whose settings cannot be read passes nothing: the daemon's environment is used,
/// and the daemon reports the settings error.
fn editor_env(request: &RunRequest) -> ClientEnv {
    use skillwatch_daemon::runs::Reads;
    match skillwatch_daemon::scheduler::configured_request(request) {
        Ok(runner) => ClientEnv::capture(runner.client_vars().iter().map(String::as_str)),
        Err(_) => ClientEnv::default(),
    }
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
    let env = editor_env(&request);
    let queued = daemon
        .client
        .enqueue_client_run(client::context(Duration::from_secs(30)), request, env)
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
                    let (done, total) = (job.progress.done, job.progress.total);
                    let text = format!("{done}/{total} {}", agree(total, job.request.kind.unit()));
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

/// Tell the user how a job started from the editor ended: a notice, or an error when it failed.
pub(super) async fn show_outcome(state: &State, success: bool, message: &str) {
    let kind = if success {
        MessageType::INFO
    } else {
        MessageType::ERROR
    };
    state.client.show_message(kind, message).await;
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
    show_outcome(state, success, &message).await;
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
        match write_report(&state, &skill_dir, &out.stdout) {
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

/// Write the history text where the editor can open it: a file of this session's own private
/// folder (removed when the session ends), so two editors never overwrite each other's report
/// and no other user can read or replace it.
fn write_report(state: &State, skill_dir: &str, text: &str) -> std::io::Result<Uri> {
    let dir = state.report_dir()?;
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
