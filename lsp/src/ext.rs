//! skillwatch's own LSP messages (`skillwatch/*`), beside the standard protocol.
//!
//! - `skillwatch/historyChanged` (client -> server, notification, no params): new results
//!   landed (e.g. the editor ran `skillwatch run` itself); the server refreshes code lenses now
//!   instead of at its next poll of the history database.
//! - `skillwatch/runFinished` (server -> client, notification): a paired run started by the
//!   `skillwatch.runEval` lens command ended; editors may show it, tests wait for it.
//! - `skillwatch/pickRun` (server -> client, request): no harness and model are configured
//!   for a run that was asked for; the editor shows the choices found on this machine in a
//!   picker and answers with the one taken and whether to save it to skillwatch.toml (or
//!   `null`: cancelled). Sent only to clients whose `initialize` capabilities say
//!   `experimental.skillwatch.pickRun: true` (the VS Code extension and the Neovim plugin);
//!   others get two `window/showMessageRequest`s instead.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use skillwatch_daemon::harness::discover::RunTarget;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::Request;

/// Method name of the client's "history changed" notification.
pub const HISTORY_CHANGED: &str = "skillwatch/historyChanged";

/// `skillwatch/runFinished`.
#[derive(Debug)]
pub enum RunFinished {}

/// What `skillwatch/runFinished` carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunFinishedParams {
    /// The skill that was run.
    pub skill_dir: String,
    /// The one case run, when the lens was on a case.
    pub case: Option<String>,
    /// Whether the CLI exited with success.
    pub success: bool,
    /// The outcome in one line.
    pub message: String,
}

impl Notification for RunFinished {
    type Params = RunFinishedParams;
    const METHOD: &'static str = "skillwatch/runFinished";
}

/// `skillwatch/pickRun`.
#[derive(Debug)]
pub enum PickRun {}

/// What `skillwatch/pickRun` asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PickRunParams {
    /// The skill to run.
    pub skill_dir: PathBuf,
    /// The picker's title.
    pub title: String,
    /// The choices, in order: each with `label` (`openai · qwen3:8b`) and `found` (where the
    /// harness was found) for display.
    pub choices: Vec<PickChoice>,
    /// The skillwatch.toml the choice would be saved to.
    pub save_to: PathBuf,
}

/// One choice of a picker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PickChoice {
    /// How to list it.
    pub label: String,
    /// The run it stands for.
    #[serde(flatten)]
    pub target: RunTarget,
}

/// The editor's answer to `skillwatch/pickRun`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PickRunResult {
    /// The index of the choice taken.
    pub index: usize,
    /// Write it to `save_to`.
    #[serde(default)]
    pub save: bool,
}

impl Request for PickRun {
    type Params = PickRunParams;
    type Result = Option<PickRunResult>;
    const METHOD: &'static str = "skillwatch/pickRun";
}

/// `skillwatch/optimizeFinished`: the description search of a skill ended.
#[derive(Debug)]
pub enum OptimizeFinished {}

/// What `skillwatch/optimizeFinished` carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OptimizeFinishedParams {
    /// The skill.
    pub skill_dir: String,
    /// Whether the search ran to its end (found a better description or not).
    pub success: bool,
    /// The outcome in one line.
    pub message: String,
    /// The chosen description, when one beat the current on validation.
    pub chosen: Option<String>,
    /// The diff of SKILL.md it makes.
    pub diff: Option<String>,
}

impl Notification for OptimizeFinished {
    type Params = OptimizeFinishedParams;
    const METHOD: &'static str = "skillwatch/optimizeFinished";
}
