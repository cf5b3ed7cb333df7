//! The part of a trial every process-based harness shares: stage skills and fresh directories,
//! run the agent with its output in files, and turn exit, output and parse results into a
//! [`TrialOutcome`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skillwatch_core::trajectory::{NormalizedRun, RunContext};

use super::env::TrialDirs;
use super::process::{
    Exit, Invocation, ProcessOutcome, StopWhen, read_capped, run_process_watched,
};
use super::stage::{ancestor_agent_files, stage_skills};
use super::{ErrorKind, HarnessInfo, TrialError, TrialLogs, TrialOutcome, TrialSpec, TrialStatus};

/// Agent output beyond this is not read: a runaway agent must not exhaust the daemon's memory.
pub(super) const MAX_OUTPUT_BYTES: u64 = 64 * 1024 * 1024;

/// How long `--version` may take (a first run of a CLI may unpack itself).
const VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// How much of the end of stderr a trial keeps ([`TrialOutcome::stderr_tail`]).
const STDERR_KEEP_BYTES: usize = 4096;

/// How much of the end of stderr an error message quotes.
const STDERR_QUOTE_BYTES: usize = 300;

/// What sets one stream-printing CLI harness (Claude Code, Codex) apart in the shared flow.
pub(super) struct CliHarness<'a> {
    /// The harness name recorded with trials.
    pub name: &'static str,
    /// Where skills are staged, relative to the workspace.
    pub skills_dir: &'a Path,
    /// The fresh config dir created in the scratch dir (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`).
    pub config_dir: &'static str,
}

/// A whole trial of a CLI that prints a JSON event stream: version, staging, fresh dirs, the
/// process with its timeout, then `parse` of its stdout.
pub(super) async fn run_cli_trial(
    h: CliHarness<'_>,
    version: Result<String, super::HarnessError>,
    spec: &TrialSpec,
    invocation: impl FnOnce(&TrialDirs, &Path) -> Invocation,
    parse: impl Fn(&str, &RunContext) -> NormalizedRun + Copy + Send + Sync + 'static,
) -> TrialOutcome {
    let mut info = HarnessInfo {
        name: h.name.into(),
        version: "unknown".into(),
    };
    match version {
        Ok(v) => info.version = v,
        Err(e) => {
            return TrialOutcome::not_started(
                info,
                TrialError::new(ErrorKind::Spawn, e.to_string()),
            );
        }
    }
    let leaks = ancestor_agent_files(&spec.workspace);
    if !leaks.is_empty() {
        let list: Vec<String> = leaks.iter().map(|p| p.display().to_string()).collect();
        let msg = format!(
            "{}: expected no agent skills or instructions above the workspace, found {} ({} loads them in every condition); put trial workspaces in a clean directory",
            spec.workspace.display(),
            list.join(", "),
            h.name
        );
        return TrialOutcome::not_started(info, TrialError::new(ErrorKind::Setup, msg));
    }
    let dirs = match prepare(spec, h.skills_dir) {
        Ok(d) => d,
        Err(e) => return TrialOutcome::not_started(info, e),
    };
    let config_dir = match TrialDirs::config_dir(&spec.scratch, h.config_dir) {
        Ok(d) => d,
        Err(e) => {
            let msg = format!(
                "creating {} in {}: {e}",
                h.config_dir,
                spec.scratch.display()
            );
            return TrialOutcome::not_started(info, TrialError::new(ErrorKind::Setup, msg));
        }
    };
    let inv = invocation(&dirs, &config_dir);
    let ctx = RunContext {
        prompt: Some(spec.prompt.clone()),
        model: Some(spec.model.clone()),
        harness_version: Some(info.version.clone()),
    };
    let watch = spec.stop_when.clone().map(|rule| {
        let ctx = ctx.clone();
        StopWhen(Arc::new(move |text: &str| {
            (rule.0)(&parse(text, &ctx).trajectory)
        }))
    });
    let finished = match run_agent(&inv, spec, watch.as_ref()).await {
        Ok(f) => f,
        Err(e) => return TrialOutcome::not_started(info, e),
    };
    let run = parse(&finished.stdout, &ctx);
    let source = finished.logs.stdout.clone().unwrap_or_default();
    outcome(info, finished, Some(run), &source)
}

/// `program --version`, run with the environment a trial would get (fresh HOME and config dir
/// in a temporary directory), so asking never touches the user's own configuration.
pub(super) async fn isolated_version(
    program: &Path,
    config_dir: &str,
    env: impl FnOnce(&TrialDirs, &Path) -> Vec<(String, String)>,
) -> Result<String, super::HarnessError> {
    let spawn_err = |source| super::HarnessError::Spawn {
        program: program.display().to_string(),
        source,
    };
    let tmp = tempfile::tempdir().map_err(spawn_err)?;
    let dirs = TrialDirs::create(tmp.path()).map_err(spawn_err)?;
    let config = TrialDirs::config_dir(tmp.path(), config_dir).map_err(spawn_err)?;
    ask_version(program, env(&dirs, &config), tmp.path().to_path_buf()).await
}

/// Stage the trial's skills under `skills_dir` and create its fresh HOME and TMPDIR, with
/// what a security probe plants there.
pub(super) fn prepare(spec: &TrialSpec, skills_dir: &Path) -> Result<TrialDirs, TrialError> {
    stage_skills(&spec.workspace, skills_dir, &spec.skills)
        .map_err(|e| TrialError::new(ErrorKind::Setup, e.to_string()))?;
    let mut dirs = TrialDirs::create(&spec.scratch).map_err(|e| {
        TrialError::new(
            ErrorKind::Setup,
            format!("creating trial dirs in {}: {e}", spec.scratch.display()),
        )
    })?;
    for (rel, text) in &spec.plant.home_files {
        let escapes = rel
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)));
        let path = dirs.home.join(rel);
        let written = if escapes {
            Err(std::io::Error::other(
                "expected a relative path inside HOME",
            ))
        } else {
            path.parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&path, text))
        };
        written.map_err(|e| {
            TrialError::new(
                ErrorKind::Setup,
                format!("planting {}: {e}", path.display()),
            )
        })?;
    }
    dirs.planted_env = spec.plant.env.clone();
    Ok(dirs)
}

/// A finished agent process and where its output is.
pub(super) struct Finished {
    /// How it ended.
    pub process: ProcessOutcome,
    /// Its stdout, as text (cut at [`MAX_OUTPUT_BYTES`]).
    pub stdout: String,
    /// Raw output files.
    pub logs: TrialLogs,
    /// The end of stderr.
    pub stderr_tail: Option<String>,
    /// Problems reading the output.
    pub errors: Vec<TrialError>,
}

/// Run `inv` for `spec`, stdout to `scratch/stdout.jsonl`, stderr to `scratch/stderr.txt`.
pub(super) async fn run_agent(
    inv: &Invocation,
    spec: &TrialSpec,
    watch: Option<&StopWhen>,
) -> Result<Finished, TrialError> {
    let stdout_path = spec.scratch.join("stdout.jsonl");
    let stderr_path = spec.scratch.join("stderr.txt");
    let process = run_process_watched(inv, &stdout_path, &stderr_path, spec.timeout, watch)
        .await
        .map_err(|e| {
            TrialError::new(
                ErrorKind::Spawn,
                format!("could not start {}: {e}", inv.program.display()),
            )
        })?;
    let mut errors = Vec::new();
    let stdout = match read_capped(&stdout_path, MAX_OUTPUT_BYTES) {
        Ok((text, cut)) => {
            if cut {
                errors.push(TrialError::new(
                    ErrorKind::Output,
                    format!(
                        "{}: expected at most {MAX_OUTPUT_BYTES} bytes of output, found more; the rest was not read",
                        stdout_path.display()
                    ),
                ));
            }
            text
        }
        Err(e) => {
            errors.push(TrialError::new(
                ErrorKind::Output,
                format!("reading {}: {e}", stdout_path.display()),
            ));
            String::new()
        }
    };
    Ok(Finished {
        process,
        stdout,
        stderr_tail: stderr_tail(&stderr_path),
        logs: TrialLogs {
            stdout: Some(stdout_path),
            stderr: Some(stderr_path),
            trajectory: None,
        },
        errors,
    })
}

/// The outcome of a process-based trial from its process end and its normalized output.
pub(super) fn outcome(
    harness: HarnessInfo,
    finished: Finished,
    run: Option<NormalizedRun>,
    source: &Path,
) -> TrialOutcome {
    let Finished {
        process,
        logs,
        stderr_tail,
        mut errors,
        ..
    } = finished;
    let stall = run.as_ref().and_then(|r| r.api_stall.as_deref());
    let stalled = process.exit == Exit::TimedOut && stall.is_some();
    match stall.filter(|_| stalled) {
        // killed while waiting for the model API: the API failed, not the agent at its task
        Some(stall) => errors.push(TrialError::new(
            ErrorKind::Harness,
            format!(
                "{}: {stall}; killed at the trial timeout after {} ms",
                harness.name,
                process.wall.as_millis()
            ),
        )),
        None => errors.extend(exit_error(&harness.name, process, stderr_tail.as_deref())),
    }
    let mut notices = Vec::new();
    if let Some(run) = &run {
        errors.extend(
            run.errors
                .iter()
                .map(|e| TrialError::new(ErrorKind::Harness, e.clone())),
        );
        if process.exit == Exit::Code(0) && !run.ended {
            errors.push(cut_short(&harness.name, run));
        }
        notices.extend(run.notices.iter().cloned());
        notices.extend(
            run.warnings
                .iter()
                .map(|w| format!("{}:{w}", source.display())),
        );
    }
    let status = match process.exit {
        Exit::TimedOut if !stalled => TrialStatus::Timeout,
        _ if errors.is_empty() => TrialStatus::Ok,
        _ => TrialStatus::Error,
    };
    let exit_code = match process.exit {
        Exit::Code(c) => Some(c),
        _ => None,
    };
    let (trajectory, final_output, tokens, cost_usd, visible_skills) = match run {
        Some(r) => (
            Some(r.trajectory),
            r.final_output,
            r.usage,
            r.cost_usd,
            r.visible_skills,
        ),
        None => (None, String::new(), Default::default(), None, None),
    };
    let tool_calls = trajectory.as_ref().map_or(0, |t| t.tool_calls().count()) as u32;
    let turns = trajectory.as_ref().map_or(0, |t| t.agent_steps()) as u32;
    TrialOutcome {
        harness,
        status,
        exit_code,
        trajectory,
        final_output,
        tokens,
        cost_usd,
        wall_ms: process.wall.as_millis() as u64,
        tool_calls,
        turns,
        errors,
        notices,
        visible_skills,
        stderr_tail,
        logs,
        stopped_early: process.exit == Exit::Stopped,
    }
}

/// The agent exited 0, but its output stops before a finished run's last event: it was cut
/// off or garbled, so nothing in it can be graded as the agent's answer.
fn cut_short(name: &str, run: &NormalizedRun) -> TrialError {
    let unreadable = match run.warnings.len() {
        0 => String::new(),
        1 => format!("; 1 line could not be read ({})", run.warnings[0]),
        n => format!("; {n} lines could not be read (first: {})", run.warnings[0]),
    };
    TrialError::new(
        ErrorKind::Output,
        format!(
            "{name}: expected its output to end as a finished run does, found it cut short (exit status 0){unreadable}"
        ),
    )
}

fn exit_error(name: &str, process: ProcessOutcome, stderr: Option<&str>) -> Option<TrialError> {
    let tail = stderr.map(quote_tail).unwrap_or_default();
    match process.exit {
        Exit::Code(0) | Exit::Stopped => None,
        Exit::TimedOut => Some(TrialError::new(
            ErrorKind::Timeout,
            format!(
                "{name}: expected to finish within the trial timeout, killed with its process group after {} ms",
                process.wall.as_millis()
            ),
        )),
        Exit::Code(c) => Some(TrialError::new(
            ErrorKind::Exit,
            format!("{name}: expected exit status 0, found {c}{tail}"),
        )),
        Exit::Signal(s) => Some(TrialError::new(
            ErrorKind::Exit,
            format!("{name}: expected exit status 0, killed by signal {s}{tail}"),
        )),
    }
}

/// The last `max` bytes of `text` (cut at a character boundary).
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The end of the stderr file at `path`, trimmed; `None` when it is empty or missing.
pub(super) fn stderr_tail(path: &Path) -> Option<String> {
    let (text, _) = read_tail(path, STDERR_KEEP_BYTES as u64).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The end of stderr quoted for an error message (empty when there is none).
fn quote_tail(stderr: &str) -> String {
    let quoted = tail(stderr, STDERR_QUOTE_BYTES);
    let cut = if quoted.len() < stderr.len() {
        "…"
    } else {
        ""
    };
    format!("; stderr ends: {cut}{quoted}")
}

/// The last `limit` bytes of a file as text (invalid UTF-8 replaced), without reading the
/// rest; whether it was cut.
fn read_tail(path: &Path, limit: u64) -> std::io::Result<(String, bool)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(limit);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    file.read_to_end(&mut bytes)?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), start > 0))
}

/// The first whitespace-separated token of `text` that starts with a digit: the version in
/// `2.1.328 (Claude Code)` or `codex-cli 0.169.0`.
pub(super) fn version_token(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|t| t.starts_with(|c: char| c.is_ascii_digit()))
        // `GitHub Copilot CLI 1.0.102.` ends its sentence
        .map(|t| t.trim_end_matches('.').to_owned())
}

/// Run `program --version` with `env` in `cwd` and pick the version out of its output.
async fn ask_version(
    program: &Path,
    env: Vec<(String, String)>,
    cwd: PathBuf,
) -> Result<String, super::HarnessError> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg("--version")
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let asked = async {
        let child = super::trial_procs::spawn(&mut cmd)?;
        let pid = child.id();
        let output = child.wait_with_output().await;
        if let Some(pid) = pid {
            super::trial_procs::reaped(pid);
        }
        output
    };
    let output = tokio::time::timeout(VERSION_TIMEOUT, asked)
        .await
        .map_err(|_| super::HarnessError::Version {
            program: program.display().to_string(),
            found: format!("no answer within {} s", VERSION_TIMEOUT.as_secs()),
        })?
        .map_err(|source| super::HarnessError::Spawn {
            program: program.display().to_string(),
            source,
        })?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    version_token(&text).ok_or_else(|| super::HarnessError::Version {
        program: program.display().to_string(),
        found: text.trim().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_tokens() {
        assert_eq!(
            version_token("2.1.328 (Claude Code)\n").as_deref(),
            Some("2.1.328")
        );
        assert_eq!(
            version_token("codex-cli 0.169.0").as_deref(),
            Some("0.169.0")
        );
        assert_eq!(version_token("no version here"), None);
        assert_eq!(
            version_token("GitHub Copilot CLI 1.0.102.\nRun 'copilot update'").as_deref(),
            Some("1.0.102")
        );
    }
}
