//! Progress of a run as events: the CLI draws its progress bar from them, the daemon forwards
//! them to clients. Every event is serializable, one JSON object with an `event` tag.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::store::{Condition, RunId, RunStatus, TrialStatus};

/// Where a run reports its progress. Called from the runner's task; keep it quick (send on a
/// channel, update a bar).
pub type ProgressSink = Arc<dyn Fn(&RunEvent) + Send + Sync>;

/// A sink that drops every event.
pub fn no_progress() -> ProgressSink {
    Arc::new(|_| {})
}

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    /// The run exists in the history; its id is final.
    Started {
        /// The run.
        run: RunId,
        /// The skill's name.
        skill: String,
        /// Harness name.
        harness: String,
        /// Harness version.
        harness_version: String,
        /// The agent's model.
        model: String,
        /// Cases in the run.
        cases: usize,
        /// Trials the run holds when done (reused and resumed ones included).
        planned: usize,
        /// Baseline trials copied from earlier runs.
        reused: usize,
        /// Trials already recorded (a resumed run).
        resumed: usize,
    },
    /// A baseline trial was copied from an earlier run instead of run.
    TrialReused {
        /// Case id.
        case: String,
        /// Attempt.
        attempt: u32,
        /// The run it came from.
        from_run: RunId,
    },
    /// A trial's agent started.
    TrialStarted {
        /// Case id.
        case: String,
        /// Condition.
        condition: Condition,
        /// Attempt.
        attempt: u32,
    },
    /// A trial was graded and recorded.
    TrialFinished {
        /// Case id.
        case: String,
        /// Condition.
        condition: Condition,
        /// Attempt.
        attempt: u32,
        /// How it ended.
        status: TrialStatus,
        /// Task outcome, when graded.
        passed: Option<bool>,
        /// Whether the skill under test was loaded.
        invoked: Option<bool>,
        /// Agent wall time.
        wall_ms: u64,
        /// Retries into a fresh workspace it took.
        retries: u32,
        /// The error or timeout message.
        error: Option<String>,
    },
    /// A judge call failed after its retries (a judge error, not a skill failure).
    JudgeFailed {
        /// Case id.
        case: String,
        /// Attempt.
        attempt: u32,
        /// Which trial (`None`: the pairwise comparison).
        condition: Option<Condition>,
        /// Why.
        message: String,
    },
    /// The run ended.
    Finished {
        /// The run.
        run: RunId,
        /// Its final status.
        status: RunStatus,
        /// Overall Skill Lift, when measured.
        lift: Option<f64>,
    },
}
