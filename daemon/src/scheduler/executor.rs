//! The seam between the queue and the runners: the scheduler decides *when* a job runs; an
//! [`Executor`] runs it (the daemon's executor drives the real paired runner or prober on the
//! real harnesses).

use std::sync::Arc;

use skillwatch_protocol::{ClientEnv, EventKind, JobId, JobInfo, JobProgress};
use tokio_util::sync::CancellationToken;

use super::SharedStore;
use crate::events::EventLog;
use crate::harness::BoxFuture;

/// Runs one job (a paired run or a probe run) to its end.
pub trait Executor: Send + Sync + 'static {
    /// Run `job`. Must return soon after `ctx.cancel` fires (killing the agent processes in
    /// flight), and should stop starting trials once `ctx.drain` fires. Trials finished before
    /// either are kept in the history.
    fn execute(&self, job: JobInfo, ctx: JobContext) -> BoxFuture<'static, Outcome>;
}

/// How a job's run ended, as the executor saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every planned trial (or probe) was recorded and the run scored.
    Completed {
        /// The history run (the probe run, for a probe job).
        run: i64,
    },
    /// The run could not be made or was cut short by an error.
    Failed {
        /// The history run, if one was begun.
        run: Option<i64>,
        /// What went wrong, and where.
        error: String,
    },
    /// The run stopped because `cancel` or `drain` fired; its finished trials are stored.
    Stopped {
        /// The history run, if one was begun.
        run: Option<i64>,
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
    store: SharedStore,
    events: Arc<EventLog>,
    run: Arc<std::sync::Mutex<Option<i64>>>,
    probe_run: Arc<std::sync::Mutex<Option<i64>>>,
}

impl Reporter {
    /// A reporter for `job`.
    pub fn new(job: JobId, store: SharedStore, events: Arc<EventLog>) -> Reporter {
        Reporter {
            job,
            store,
            events,
            run: Arc::default(),
            probe_run: Arc::default(),
        }
    }

    /// The run the job records into exists (the store's `begin_run` returned `run`).
    pub fn run_started(&self, run: i64) {
        *self.run.lock().unwrap_or_else(|e| e.into_inner()) = Some(run);
        self.started("run", |store| store.set_job_run(self.job, run));
    }

    /// The probe run a probe job records into exists.
    pub fn probe_run_started(&self, probe_run: i64) {
        *self.probe_run.lock().unwrap_or_else(|e| e.into_inner()) = Some(probe_run);
        self.started("probe run", |store| {
            store.set_job_probe_run(self.job, probe_run)
        });
    }

    /// Record on the job what it runs into (`record`), then tell clients the job started.
    fn started(
        &self,
        what: &str,
        record: impl FnOnce(&mut crate::store::Store) -> crate::store::Result<()>,
    ) {
        let stored = {
            let mut store = self.store.lock().unwrap_or_else(|e| e.into_inner());
            record(&mut store).and_then(|()| store.job(self.job))
        };
        match stored {
            Ok(Some(job)) => {
                self.events.publish(EventKind::JobStarted { job });
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(job = %self.job, "recording the job's {what} failed: {e}"),
        }
    }

    /// Something happened in the run: `progress` is the new total, `message` says what,
    /// `event` is the runner's own event (JSON) for clients that show it.
    pub fn progress(
        &self,
        progress: JobProgress,
        message: impl Into<String>,
        event: Option<serde_json::Value>,
    ) {
        let stored = self
            .store
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .set_job_progress(self.job, progress);
        if let Err(e) = stored {
            tracing::warn!(job = %self.job, "recording progress failed: {e}");
        }
        self.events.publish(EventKind::Progress {
            job: self.job,
            run: self.run(),
            done: progress.done,
            total: progress.total,
            reused: progress.reused,
            message: message.into(),
            event,
        });
    }

    /// Something happened that changes no count (a trial started, a judge failed): published
    /// for clients, not stored.
    pub fn note(
        &self,
        progress: JobProgress,
        message: impl Into<String>,
        event: serde_json::Value,
    ) {
        self.events.publish(EventKind::Progress {
            job: self.job,
            run: self.run(),
            done: progress.done,
            total: progress.total,
            reused: progress.reused,
            message: message.into(),
            event: Some(event),
        });
    }

    /// The probe run reported so far.
    pub fn probe_run(&self) -> Option<i64> {
        *self.probe_run.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The run reported so far.
    pub fn run(&self) -> Option<i64> {
        *self.run.lock().unwrap_or_else(|e| e.into_inner())
    }
}
