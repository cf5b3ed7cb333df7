//! Progress of a run of any kind, as events: the CLI draws its progress from them, the daemon
//! forwards them to clients. One event type for every kind; what only one kind has (a probe's
//! outcome, a trigger trial's decision) rides in [`TrialDetail`]. Every event is serializable,
//! one JSON object with an `event` tag.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use skillwatch_core::trajectory::Decision;

use crate::store::{Condition, ProbeOutcome, RunId, RunKind, RunStatus, Spent, Stop, TrialStatus};

/// Where a run reports its progress. Called from the engine's task; keep it quick (send on a
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
        /// The run (its id among runs of its kind).
        run: RunId,
        /// Its kind.
        #[serde(default = "paired")]
        kind: RunKind,
        /// The skill's name.
        skill: String,
        /// Harness name.
        harness: String,
        /// Harness version.
        harness_version: String,
        /// The agent's model.
        model: String,
        /// Cases in the run (probes of a probe run, queries of a trigger run).
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
        /// Case id (probe id, query).
        case: String,
        /// Condition.
        condition: Condition,
        /// Attempt (run of a trigger query).
        attempt: u32,
    },
    /// A trial was graded and recorded.
    TrialFinished {
        /// Case id (probe id, query).
        case: String,
        /// Condition.
        condition: Condition,
        /// Attempt (run of a trigger query).
        attempt: u32,
        /// How it ended.
        status: TrialStatus,
        /// Task outcome, when graded (a probe: passed; a trigger trial: as expected).
        passed: Option<bool>,
        /// Whether the skill under test was loaded.
        invoked: Option<bool>,
        /// Agent wall time.
        wall_ms: u64,
        /// Retries into a fresh workspace it took.
        retries: u32,
        /// The error or timeout message.
        error: Option<String>,
        /// What only its kind has.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<TrialDetail>,
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
        /// Overall Skill Lift, when measured (paired runs).
        lift: Option<f64>,
        /// Why it stopped before its plan was done, when its budget stopped it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<Stop>,
        /// What it spent.
        #[serde(default)]
        spent: Spent,
    },
}

fn paired() -> RunKind {
    RunKind::Paired
}

/// What a finished trial of one kind says beyond the common fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TrialDetail {
    /// A security probe.
    Probe {
        /// How it ended.
        outcome: ProbeOutcome,
        /// Pieces of evidence.
        findings: usize,
    },
    /// A trigger trial.
    Trigger {
        /// The query it sent.
        query: String,
        /// The agent's first decision, when seen.
        decision: Option<Decision>,
    },
}
