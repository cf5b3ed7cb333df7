//! The seam between the queue and the run engine: the scheduler decides *when* a job runs; an
//! [`Executor`] runs it (the daemon's executor drives the run engine on the real harnesses).

use std::sync::Arc;

use skillwatch_protocol::{ClientEnv, EventKind, JobId, JobInfo, JobKind, JobProgress};
use tokio_util::sync::CancellationToken;

use super::SharedStore;
use crate::events::EventLog;
use crate::harness::BoxFuture;
use crate::store::RunRef;

/// Runs one job (a run of any kind) to its end.
pub trait Executor: Send + Sync + 'static {
    /// Run `job`. Must return soon after `ctx.cancel` fires (killing the agent processes in
    /// flight), and should stop starting trials once `ctx.drain` fires. Trials finished before
    /// either are kept in the history.
    fn execute(&self, job: JobInfo, ctx: JobContext) -> BoxFuture<'static, Outcome>;
}

/// How a job's run ended, as the executor saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every planned trial was recorded (or its budget stopped it) and the run scored.
    Completed {
        /// The run, of the job's kind (`None` for a description search, whose runs are its
        /// children).
        run: Option<RunRef>,
    },
    /// The run could not be made or was cut short by an error.
    Failed {
        /// The run, if one was begun.
        run: Option<RunRef>,
        /// What went wrong, and where.
        error: String,
    },
    /// The run stopped because `cancel` or `drain` fired; its finished trials are stored.
    Stopped {
        /// The run, if one was begun.
        run: Option<RunRef>,
    },
}

/// What an executor gets besides the job: its stop signals and where to report.
#[derive(Debug, Clone)]
pub struct JobContext {
    /// Stop now: kill the agents in flight (a client cancelled, or the shutdown grace ran out).
    pub cancel: CancellationToken,
    /// The daemon is stopping: start no new trial; trials in flight may finish.
    pub drain: CancellationToken,
    /// The variables of the client that queued the job, which the run reads instead of the
    /// daemon's; `None`: the daemon's own environment.
    pub client_env: Option<ClientEnv>,
    /// Where progress goes.
    pub report: Reporter,
}

/// Records a running job's progress in the jobs table and publishes it as events.
#[derive(Debug, Clone)]
pub struct Reporter {
    job: JobId,
    kind: JobKind,
    skill_dir: std::path::PathBuf,
    store: SharedStore,
    events: Arc<EventLog>,
    run: Arc<std::sync::Mutex<Option<RunRef>>>,
}

impl Reporter {
    /// A reporter for `job`.
    pub fn new(job: &JobInfo, store: SharedStore, events: Arc<EventLog>) -> Reporter {
        Reporter {
            job: job.id,
            kind: job.request.kind,
            skill_dir: job.request.skill_dir.clone(),
            store,
            events,
            run: Arc::default(),
        }
    }

    /// The run the job records into exists: record it on the job, then tell clients the job
    /// started.
    pub fn run_started(&self, run: RunRef) {
        *self.run.lock().unwrap_or_else(|e| e.into_inner()) = Some(run);
        let stored = {
            let mut store = super::lock(&self.store);
            store
                .set_job_run(self.job, run)
                .and_then(|()| store.job(self.job))
        };
        match stored {
            Ok(Some(job)) => {
                self.events.publish(EventKind::JobStarted { job });
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(job = %self.job, "recording the job's {run} failed: {e}"),
        }
    }

    /// Something happened in the run: `progress` is the new total, `message` says what,
    /// `event` is the engine's own event (JSON) for clients that show it.
    pub fn progress(
        &self,
        progress: JobProgress,
        message: impl Into<String>,
        event: Option<serde_json::Value>,
    ) {
        let stored = super::lock(&self.store).set_job_progress(self.job, progress);
        if let Err(e) = stored {
            tracing::warn!(job = %self.job, "recording progress failed: {e}");
        }
        self.publish(progress, message.into(), event);
    }

    /// Something happened that changes no count (a trial started, a judge failed): published
    /// for clients, not stored.
    pub fn note(
        &self,
        progress: JobProgress,
        message: impl Into<String>,
        event: serde_json::Value,
    ) {
        self.publish(progress, message.into(), Some(event));
    }

    fn publish(&self, progress: JobProgress, message: String, event: Option<serde_json::Value>) {
        self.events.publish(EventKind::Progress {
            job: self.job,
            kind: self.kind,
            skill_dir: self.skill_dir.clone(),
            run: self.run().map(|r| r.id),
            done: progress.done,
            total: progress.total,
            reused: progress.reused,
            message,
            event,
        });
    }

    /// Where a job that is not one run (a description search) is: its progress, in counts
    /// and in words, stored on the job and published with `event`.
    pub fn step(&self, progress: JobProgress, note: String, event: serde_json::Value) {
        let stored = super::lock(&self.store).set_job_note(self.job, &note);
        if let Err(e) = stored {
            tracing::warn!(job = %self.job, "recording progress failed: {e}");
        }
        self.progress(progress, note, Some(event));
    }

    /// The description search stored its record.
    pub fn optimization_recorded(&self, record: i64) {
        let stored = super::lock(&self.store).set_job_optimization(self.job, record);
        if let Err(e) = stored {
            tracing::warn!(job = %self.job, "recording optimisation {record} failed: {e}");
        }
    }

    /// The run reported so far.
    pub fn run(&self) -> Option<RunRef> {
        *self.run.lock().unwrap_or_else(|e| e.into_inner())
    }
}
