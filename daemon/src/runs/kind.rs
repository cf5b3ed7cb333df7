//! What a kind of run gives the engine: its plan (from its request), how it begins in the
//! store, how one of its trials runs, how a finished trial is recorded and told, and its report.
//! Paired runs (`crate::runner`), probes (`crate::probe`), trigger trials (`crate::trigger`) and
//! Harbor runs (`crate::harbor`) each implement [`Kind`] once; the engine
//! ([`super::Engine`]) owns everything between.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use skillwatch_core::trajectory::TokenUsage;
use skillwatch_protocol::Budget;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::event::{ProgressSink, RunEvent};
use crate::harness::BoxFuture;
use crate::runner::RunError;
use crate::store::{
    Row, RunEnd, RunKind, RunRef, RunStatus, Spend, Spent, Stop, Store, StoreError,
};

/// A request of one kind of run: how the engine plans it.
pub trait Request: Send + Sync {
    /// The kind it plans.
    type Kind: Kind;

    /// Work out what to run, starting and storing nothing: the skill, the harness and its
    /// version, the trials.
    fn plan<'a>(&'a self, engine: &'a super::Engine)
    -> BoxFuture<'a, Result<Self::Kind, RunError>>;
}

/// What the engine reads from a kind's report once the run ended. It belongs to the report, not
/// to the kind, so kinds that share a report (paired runs and Harbor runs, both `RunReport`)
/// share one answer instead of each repeating it.
pub trait Outcome {
    /// How the reported run ended.
    fn status(&self) -> RunStatus;

    /// Why the reported run failed as a measurement beyond its status (a paired run whose
    /// every trial failed at the infrastructure measured nothing).
    fn failure(&self) -> Option<String> {
        None
    }

    /// The run's overall lift, for the event that ends it (paired runs).
    fn lift(&self) -> Option<f64> {
        None
    }
}

/// A planned run of one kind, as the engine drives it.
pub trait Kind: Send + Sized + 'static {
    /// One planned trial, as the kind starts it.
    type Trial: Send + 'static;
    /// A finished trial, as the kind records it.
    type Done: Send + 'static;
    /// What the run's caller gets at its end.
    type Report: Outcome + Send + 'static;

    /// The table its runs live in.
    const RUN: RunKind;

    /// The agent's model (what the run's spending is recorded and priced under).
    fn model(&self) -> &str;

    /// What the run may spend.
    fn budget(&self) -> &Budget;

    /// Trials in flight at once.
    fn jobs(&self) -> usize;

    /// Keep the trial folders after the run (for debugging).
    fn keep_folders(&self) -> bool {
        false
    }

    /// Begin (or reopen) the run in the store: the trials still to run and what its start
    /// says. Runs on the blocking pool.
    fn begin(&mut self, store: &mut Store) -> Result<Begun<Self::Trial>, RunError>;

    /// Work before the first trial (a paired run copies its reusable baselines; a probe run
    /// starts its honeypot and watchdog).
    fn before<'a>(&'a mut self, _ctx: &'a Ctx) -> BoxFuture<'a, Result<(), RunError>> {
        Box::pin(async { Ok(()) })
    }

    /// Trials that an outside runner starts and finishes (Harbor), instead of trials the
    /// engine starts one by one: finished trials arrive on the channel; cancelling the token
    /// stops the runner.
    fn outside(&mut self, _ctx: &Ctx) -> Result<Option<Outside<Self::Done>>, RunError> {
        Ok(None)
    }

    /// Run one trial, its folders under `root`. Never fails: a failure is a finished trial
    /// that says so.
    fn start(&self, trial: Self::Trial, root: &Path) -> BoxFuture<'static, Self::Done>;

    /// What a finished trial's agent used (the harness's figures).
    fn usage(done: &Self::Done) -> TokenUsage;

    /// A finished trial as stored (with `spend`, what the engine counted it spent), and what
    /// it tells.
    fn row(&mut self, done: &Self::Done, spend: &Spend) -> Recorded;

    /// After a trial is stored (a paired run deletes its folders, reports its judge's
    /// failure, judges a complete pair).
    fn recorded<'a>(
        &'a mut self,
        _done: Self::Done,
        _ctx: &'a Ctx,
    ) -> BoxFuture<'a, Result<(), RunError>> {
        Box::pin(async { Ok(()) })
    }

    /// Judge calls made since the last time the engine asked, with what each spent: the
    /// engine records them in the ledger and counts them against the run's budget (they are
    /// not trials: they count tokens and cost, never `max_trials`).
    fn judge_calls(&mut self) -> Vec<Spend> {
        Vec::new()
    }

    /// After the last trial: finish what the kind started beside its trials (a paired run's
    /// pairwise judges; a probe run's honeypot). `cancelled`: stop it instead.
    fn settle(&mut self, _cancelled: bool) -> BoxFuture<'_, Result<(), RunError>> {
        Box::pin(async { Ok(()) })
    }

    /// How a run the daemon drained (its trials left undone) ends: `interrupted` where the
    /// kind can resume it, else `cancelled`.
    fn drained() -> RunStatus {
        RunStatus::Cancelled
    }

    /// End the run in the store.
    fn end(&mut self, store: &mut Store, run: RunRef, end: &RunEnd) -> Result<(), StoreError> {
        store.finish(run, end)
    }

    /// Why a run ended with none of its trials recorded, when its run only exists once one
    /// is (an outside runner's).
    fn never_recorded(&mut self) -> RunError {
        RunError::Settings {
            message: "the run ended before any of its trials was recorded".into(),
        }
    }

    /// The report of the ended run, read back from the store (every path to a report, in
    /// process or through the daemon, reads the same rows).
    fn report(
        &mut self,
        store: &Store,
        run: RunRef,
        ending: &Ending,
    ) -> Result<Self::Report, RunError>;
}

/// A run begun in the store.
pub struct Begun<T> {
    /// The run; `None` until an outside runner's first trial is stored.
    pub run: Option<RunRef>,
    /// Trials still to run, in order.
    pub trials: Vec<T>,
    /// What its start says (`RunEvent::Started`), told before any trial; `None` when the run
    /// is not known yet.
    pub started: Option<RunEvent>,
    /// The skill's name, for the budget's prediction from the history.
    pub skill: String,
}

/// A finished trial, as the engine stores and tells it.
pub struct Recorded {
    /// The row (with what it spent, in one transaction).
    pub row: Row,
    /// What it tells, in order.
    pub events: Vec<RunEvent>,
    /// The run it belongs to, when it names it (an outside runner's first trial).
    pub run: Option<RunRef>,
}

/// Trials an outside runner starts and finishes.
pub struct Outside<D> {
    /// Finished trials as they arrive; the channel closes when the runner is done.
    pub finished: mpsc::UnboundedReceiver<D>,
    /// Stops the runner (its trials in flight end with it).
    pub stop: CancellationToken,
}

/// What a kind's hooks may use of the run.
pub struct Ctx {
    /// The history.
    pub store: Arc<Mutex<Store>>,
    /// Where progress goes.
    pub progress: ProgressSink,
    /// The run, once begun.
    pub run: Option<RunRef>,
    /// The run's trial folders.
    pub root: PathBuf,
}

/// How a run ended, as its report states it.
#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    /// Its final status.
    pub status: RunStatus,
    /// Why it stopped before its plan was done, when its budget stopped it.
    pub stop: Option<Stop>,
    /// What it spent.
    pub spent: Spent,
    /// Trials this invocation ran.
    pub ran: usize,
    /// Wall time of this invocation.
    pub wall_ms: u64,
    /// Where the trial folders were kept (`keep_workspaces`).
    pub kept: Option<PathBuf>,
}
