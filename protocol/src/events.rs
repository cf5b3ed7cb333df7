//! The daemon's event stream. tarpc has no server push, so clients long-poll
//! `next_events(cursor)`: each event has a sequence number, a batch says where to continue,
//! and a restarted daemon (a new `instance`) tells the client to start over.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{JobId, JobInfo, JobKind, ModelComparison};
use skillwatch_core::checks::Diagnostic;

/// One thing that happened in the daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Position in the stream: strictly increasing within one daemon instance.
    pub seq: u64,
    /// When it happened (epoch ms).
    pub at_ms: i64,
    /// What happened.
    pub kind: EventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A job entered the queue.
    JobQueued {
        /// The job.
        job: JobInfo,
    },
    /// A job started (or restarted after a crash); `job.run` is set once the run exists.
    JobStarted {
        /// The job.
        job: JobInfo,
    },
    /// A trial of a running job finished (or, with no count changed, started).
    Progress {
        /// The job.
        job: JobId,
        /// Its kind.
        #[serde(default)]
        kind: JobKind,
        /// Its skill folder.
        #[serde(default)]
        skill_dir: PathBuf,
        /// Its history run (of the job's kind).
        run: Option<i64>,
        /// Trials done.
        done: u32,
        /// Trials planned.
        total: u32,
        /// Of `done`, reused baseline trials.
        reused: u32,
        /// What just finished, e.g. `case-1 skill #0 passed`.
        message: String,
        /// The engine's own event (`skillwatch_daemon::runs::RunEvent` as JSON), so a
        /// client can show a run's progress exactly as an in-process run shows it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event: Option<serde_json::Value>,
    },
    /// A job ended (completed, failed, cancelled, or interrupted twice).
    JobFinished {
        /// The job, in its final state.
        job: JobInfo,
    },
    /// A model-change rerun was compared with the previous model. `comparison.verdict` says
    /// whether the skill regressed.
    Compared {
        /// The comparison.
        comparison: ModelComparison,
    },
    /// A saved skill file was checked.
    Checked {
        /// The skill folder.
        skill_dir: PathBuf,
        /// The file whose save triggered the check.
        path: PathBuf,
        /// Findings in every file of the skill.
        diagnostics: Vec<Diagnostic>,
    },
    /// A trigger job finished: lenses of the skill show its rates.
    TriggerFinished {
        /// The skill folder.
        skill_dir: PathBuf,
        /// Its trigger run in the history.
        run: Option<i64>,
    },
    /// A job waits because today's budget is spent.
    BudgetExhausted {
        /// What ran out, e.g. `500 trials of max_trials_per_day = 500`.
        reason: String,
    },
    /// A `skillwatch.toml` was read again.
    ConfigReloaded {
        /// The file.
        path: PathBuf,
        /// Why it was not applied, if it was not.
        error: Option<String>,
    },
}

/// The answer to `next_events(cursor)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventBatch {
    /// Identifies the daemon process: when it changes, sequence numbers start over and the
    /// client should pass cursor 0.
    pub instance: String,
    /// Events after the cursor, oldest first.
    pub events: Vec<Event>,
    /// The cursor to pass next time.
    pub next: u64,
    /// True when events after the cursor were dropped from the daemon's buffer before this
    /// call (the client was away too long): it should re-read state (jobs, lenses).
    pub missed: bool,
}
