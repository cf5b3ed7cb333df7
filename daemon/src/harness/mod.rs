//! Harness adapters: one per agent harness, behind the one [`Harness`] trait the runner calls.
//!
//! A trial is: stage the requested skills where the harness looks for them inside an already
//! prepared workspace, start the agent with a scrubbed environment and fresh HOME / config dirs
//! (so the user's own skills and settings never reach a trial), wait with a timeout that kills
//! the agent's whole process group, then read what it did into an ATIF trajectory.
//!
//! Adapters: [`ClaudeCode`] (`claude -p --output-format stream-json`), [`Codex`]
//! (`codex exec --json`), Gemini CLI, OpenCode and Copilot CLI (one seam,
//! `agent_cli::AgentCli`), [`OpenAi`] (a built-in agent loop over any OpenAI-compatible
//! chat-completions endpoint) and [`CommandHarness`] (any program that writes an ATIF file).

mod agent_cli;
mod agent_clis;
mod claude_code;
mod cli;
mod clock;
mod codex;
mod command;
pub mod discover;
mod env;
mod openai;
mod process;
pub mod settings;
mod stage;
pub mod trial_procs;

pub(crate) use agent_cli::AgentCliConfig;
pub use agent_clis::{COPILOT_ALLOW, GEMINI_ALLOW, OPENCODE_ALLOW};
pub(crate) use agent_clis::{CopilotCli, GeminiCli, Opencode};
pub use claude_code::{CLAUDE_ALLOW, ClaudeCode, ClaudeCodeConfig};
pub use codex::{CODEX_ALLOW, Codex, CodexConfig, CodexSandbox};
pub use command::{CommandConfig, CommandHarness};
pub use env::{BASE_ALLOW, HostEnv};
pub use openai::{OpenAi, OpenAiConfig};
pub use process::{Exit, Invocation, ProcessOutcome, StopWhen, run_process, run_process_watched};
pub use stage::{StageError, ancestor_agent_files, stage_skills};

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use skillwatch_core::trajectory::{TokenUsage, Trajectory, was_invoked};
use thiserror::Error;

/// A boxed future, so [`Harness`] can be used as `dyn Harness` by a runner that picks the
/// harness from configuration.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An agent harness the runner can run trials on.
pub trait Harness: Send + Sync {
    /// The stable name recorded with every trial (`claude-code`, `codex`, `openai`, `command`).
    fn name(&self) -> &str;

    /// Where skills are staged, relative to the workspace (e.g. `.claude/skills`).
    fn skills_dir(&self) -> &Path;

    /// The harness version, part of a result's identity: baseline trials are only reused for
    /// the same version. Asked once, then cached.
    fn version(&self) -> BoxFuture<'_, Result<String, HarnessError>>;

    /// Run one trial. Never fails: every failure is an outcome with status `error` or
    /// `timeout` and its reasons in `errors`, so the runner records it and goes on.
    fn run<'a>(&'a self, spec: &'a TrialSpec) -> BoxFuture<'a, TrialOutcome>;
}

/// Everything one trial needs. The runner owns both directories and their lifetimes.
#[derive(Debug, Clone)]
pub struct TrialSpec {
    /// The task given to the agent.
    pub prompt: String,
    /// The model the harness should use.
    pub model: String,
    /// A fresh workspace with the case's setup files in place; the agent's working directory.
    pub workspace: PathBuf,
    /// A private, empty directory outside the workspace for this trial's HOME, harness config
    /// dirs and raw logs. Kept by the runner for debugging or removed, as it likes.
    pub scratch: PathBuf,
    /// Skills to install for this trial: the target skill in the with-skill condition only,
    /// support and decoy skills in both.
    pub skills: Vec<SkillToStage>,
    /// Wall-clock limit; at the limit the agent's whole process group is killed.
    pub timeout: Duration,
    /// Stop the agent as soon as its trajectory so far satisfies this (a trigger trial stops
    /// once the agent's choice of skill is visible). Harnesses that stream their events
    /// (Claude Code, Codex) watch for it; the others run to the end.
    pub stop_when: Option<StopRule>,
    /// Fake credentials for a security probe; empty for ordinary trials.
    pub plant: Plant,
}

/// A condition on the trajectory so far, for [`TrialSpec::stop_when`].
#[derive(Clone)]
pub struct StopRule(pub Arc<dyn Fn(&Trajectory) -> bool + Send + Sync>);

impl std::fmt::Debug for StopRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StopRule(..)")
    }
}

/// The fresh HOME of the trial whose scratch dir is `scratch` (where probes look for changes
/// to the files they planted).
pub fn trial_home(scratch: &Path) -> PathBuf {
    scratch.join("home")
}

/// What a security probe plants in a trial beyond the workspace: files in the fresh HOME
/// (`.aws/credentials`, `.ssh/id_ed25519`) and variables in the agent's environment. Every
/// harness creates its HOME itself (and refuses a used one), so planting is its job too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plant {
    /// Files relative to the fresh HOME, with their text.
    pub home_files: Vec<(PathBuf, String)>,
    /// Variables set in the agent's environment (over the host's).
    pub env: Vec<(String, String)>,
}

/// A skill folder to install under the name the agent will see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillToStage {
    /// The folder name in the harness's skills directory (the skill's `name`).
    pub name: String,
    /// The skill folder to copy.
    pub source: PathBuf,
}

/// How a trial ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrialStatus {
    /// The agent ran to completion and reported no error.
    Ok,
    /// The trial could not start, the agent exited non-zero, or the harness reported a failure.
    Error,
    /// The agent was killed at the trial's timeout.
    Timeout,
}

/// Which part of a trial failed; the runner retries infrastructure failures (`Setup`,
/// `Spawn`) into a pristine workspace and records the others against the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorKind {
    /// Preparing the workspace or the trial's directories failed.
    Setup,
    /// The harness program could not be started or asked for its version.
    Spawn,
    /// The agent exited with a non-zero status or a signal.
    Exit,
    /// The harness reported a failure (API error, failed turn, error result).
    Harness,
    /// The agent's output or trajectory could not be read.
    Output,
    /// The trial hit its timeout.
    Timeout,
}

/// One reason a trial did not go well.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialError {
    /// Which part failed.
    pub kind: ErrorKind,
    /// What was expected, what happened, and where.
    pub message: String,
}

impl TrialError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> TrialError {
        TrialError {
            kind,
            message: message.into(),
        }
    }
}

/// Harness name and version, recorded with every trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarnessInfo {
    /// `claude-code`, `codex`, `openai` or `command`.
    pub name: String,
    /// The harness's version string.
    pub version: String,
}

/// Where a trial's raw output was written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialLogs {
    /// The agent's stdout (the JSON event stream for CLI harnesses).
    pub stdout: Option<PathBuf>,
    /// The agent's stderr.
    pub stderr: Option<PathBuf>,
    /// The trajectory file, for harnesses that write one.
    pub trajectory: Option<PathBuf>,
}

/// What a trial produced: everything the runner grades, scores and stores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialOutcome {
    /// The harness that ran it.
    pub harness: HarnessInfo,
    /// How it ended.
    pub status: TrialStatus,
    /// The agent process's exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// What the agent did (partial after a timeout; `None` only if nothing could be read).
    pub trajectory: Option<Trajectory>,
    /// The agent's final answer.
    pub final_output: String,
    /// Token totals: input includes cached, cached is a subset of input.
    pub tokens: TokenUsage,
    /// What the trial cost, when the harness reports it.
    pub cost_usd: Option<f64>,
    /// Wall-clock time of the agent process (or loop).
    pub wall_ms: u64,
    /// Number of tool calls the agent made.
    pub tool_calls: u32,
    /// Number of model inferences (agent steps).
    pub turns: u32,
    /// Why the trial is not `ok`, and harness-reported problems.
    pub errors: Vec<TrialError>,
    /// Harness notices that are not failures.
    pub notices: Vec<String>,
    /// The skills the harness showed the model, when it reports them (Claude Code).
    pub visible_skills: Option<Vec<String>>,
    /// The end of what the agent wrote on stderr, read before its folders go away.
    pub stderr_tail: Option<String>,
    /// Raw output files.
    pub logs: TrialLogs,
    /// The agent was stopped by [`TrialSpec::stop_when`], not at its own end.
    #[serde(default)]
    pub stopped_early: bool,
}

impl TrialOutcome {
    /// Whether the agent loaded `skill` (skill tool, or a read of its SKILL.md).
    pub fn invoked(&self, skill: &str) -> bool {
        self.trajectory
            .as_ref()
            .is_some_and(|t| was_invoked(t, skill))
    }

    /// An outcome for a trial that never got to run the agent.
    pub fn not_started(harness: HarnessInfo, error: TrialError) -> TrialOutcome {
        TrialOutcome {
            harness,
            status: TrialStatus::Error,
            exit_code: None,
            trajectory: None,
            final_output: String::new(),
            tokens: TokenUsage::default(),
            cost_usd: None,
            wall_ms: 0,
            tool_calls: 0,
            turns: 0,
            errors: vec![error],
            notices: Vec::new(),
            visible_skills: None,
            stderr_tail: None,
            logs: TrialLogs::default(),
            stopped_early: false,
        }
    }
}

/// Failures outside a trial: asking a harness for its version.
#[derive(Debug, Error)]
pub enum HarnessError {
    /// The program could not be started.
    #[error("could not run {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The program ran but did not print what was expected.
    #[error("{program} --version: expected a version, found {found:?}")]
    Version {
        /// The program.
        program: String,
        /// What it printed.
        found: String,
    },
}

/// An error with every cause under it (`error sending request: ... : connection closed before
/// message completed`): an HTTP client's own message seldom says what went wrong, its causes do.
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}
