//! The job queue: runs of every kind (paired, Harbor, probes, trigger trials) asked of the
//! daemon, persisted in the history database so they survive restarts, started with bounded
//! parallelism per harness and within the daily budget, cancellable (the executor kills the
//! agent processes). Every kind is a job of the one run engine (`crate::runs`).
//!
//! Life of a job: `queued` (in the `jobs` table) -> `running` (a slot on its harness was free
//! and the budget allows) -> `completed | failed | cancelled`. A daemon that dies leaves the job
//! `running`; the next daemon re-queues a paired job once (its run resumes) and gives it up as
//! `interrupted` the second time; a job of another kind, which cannot resume, is `interrupted`
//! at once. A daemon stopped gracefully lets trials in flight finish (up to a grace period),
//! then puts a paired job back in the queue without counting an interruption, and ends a job
//! of another kind `interrupted` as a crash would (run again, it would start over: a second
//! record, spent again; `JobKind::resumes`).

mod budget;
mod executor;
mod model_change;
mod regression;
mod runner_executor;

pub use budget::{day_start, status as budget_status};
pub use executor::{Executor, JobContext, Outcome, Reporter};
pub use model_change::{plan as plan_model_changes, rerun_all};
pub use regression::compare_with_previous;
pub use runner_executor::{RunnerExecutor, configured_request, job_spec};

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use skillwatch_core::skill::{SKILL_FILE, load_document};
use skillwatch_protocol::{
    ClientEnv, EventKind, JobFilter, JobId, JobInfo, JobKind, JobState, JobTrigger,
    PROTOCOL_VERSION, RpcError, RunRequest, RunSpec,
};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::config;
use crate::events::EventLog;
use crate::store::{RunKind, Store};

/// The daemon's one history handle, shared by the scheduler and the RPC handlers. Every store
/// call is short (one statement or transaction), so a plain mutex is enough.
pub type SharedStore = Arc<Mutex<Store>>;

pub use crate::runs::lock;

/// How often jobs held back by the budget are looked at again (a new day, a raised limit).
const BUDGET_RECHECK: Duration = Duration::from_secs(30);

/// Why a running job was told to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopReason {
    Cancelled,
    Shutdown,
}

#[derive(Debug)]
struct Running {
    harness: String,
    cancel: CancellationToken,
    drain: CancellationToken,
    stop: Option<StopReason>,
    done: Arc<Notify>,
}

/// The queue. Clones share it.
#[derive(Clone)]
pub struct Scheduler {
    inner: Arc<Inner>,
}

struct Inner {
    store: SharedStore,
    executor: Arc<dyn Executor>,
    events: Arc<EventLog>,
    wake: Notify,
    running: Mutex<HashMap<JobId, Running>>,
    /// The environment each queued client job brought (`enqueue_client_run`): held here
    /// only, never in the queue, until the job starts.
    client_envs: Mutex<HashMap<JobId, ClientEnv>>,
    stopping: AtomicBool,
    budget_note: Mutex<Option<String>>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").finish_non_exhaustive()
    }
}

impl Scheduler {
    /// Recover jobs cut off by a crash, then start dispatching. Call inside a tokio runtime.
    pub fn start(
        store: SharedStore,
        executor: Arc<dyn Executor>,
        events: Arc<EventLog>,
    ) -> crate::store::Result<Scheduler> {
        {
            let mut s = lock(&store);
            let runs = s.interrupt_running_runs()?;
            let recovered = s.recover_interrupted_jobs()?;
            if runs > 0 || !recovered.requeued.is_empty() || !recovered.given_up.is_empty() {
                tracing::warn!(
                    runs,
                    requeued = ?recovered.requeued,
                    given_up = ?recovered.given_up,
                    "recovered from a daemon that stopped mid-run"
                );
            }
        }
        let scheduler = Scheduler {
            inner: Arc::new(Inner {
                store,
                executor,
                events,
                wake: Notify::new(),
                running: Mutex::new(HashMap::new()),
                client_envs: Mutex::new(HashMap::new()),
                stopping: AtomicBool::new(false),
                budget_note: Mutex::new(None),
            }),
        };
        tokio::spawn(scheduler.clone().dispatch_loop());
        Ok(scheduler)
    }

    /// The shared store.
    pub fn store(&self) -> &SharedStore {
        &self.inner.store
    }

    /// Queue a run on the daemon's own environment. The skill folder must exist; relative
    /// paths are refused (the daemon's working directory is not the client's).
    pub fn enqueue(&self, request: RunRequest) -> Result<JobInfo, RpcError> {
        self.enqueue_for_client(request, ClientEnv::default())
    }

    /// Queue a run whose trials read `env`, the asking client's variables, instead of the
    /// daemon's. The queue records only their names and whether each was set.
    pub fn enqueue_for_client(
        &self,
        mut request: RunRequest,
        env: ClientEnv,
    ) -> Result<JobInfo, RpcError> {
        if self.inner.stopping.load(Ordering::SeqCst) {
            return Err(RpcError {
                kind: skillwatch_protocol::RpcErrorKind::ShuttingDown,
                message: "the daemon is shutting down; no new jobs".into(),
            });
        }
        validate(&request)?;
        request.client_env = env.presence();
        // held across the insert, so the dispatcher cannot start the job before its
        // environment is in place
        let mut envs = self.client_envs();
        let job = lock(&self.inner.store)
            .enqueue_job(&request)
            .map_err(|e| RpcError::store(e.to_string()))?;
        if !env.is_empty() {
            envs.insert(job.id, env);
        }
        drop(envs);
        tracing::info!(job = %job.id, skill_dir = %request.skill_dir.display(), harness = %request.harness, model = %request.model, trigger = request.trigger.as_str(), "job queued");
        self.inner
            .events
            .publish(EventKind::JobQueued { job: job.clone() });
        self.inner.wake.notify_one();
        Ok(job)
    }

    /// Queue a save-triggered run unless one for the same skill, harness and model is already
    /// waiting (a burst of saves makes one rerun).
    pub fn enqueue_coalesced(&self, request: RunRequest) -> Result<Option<JobInfo>, RpcError> {
        let waiting = lock(&self.inner.store)
            .latest_job_for(
                &request.skill_dir,
                &request.harness,
                &request.model,
                Some(request.trigger),
                &[JobState::Queued],
            )
            .map_err(|e| RpcError::store(e.to_string()))?;
        match waiting {
            Some(_) => Ok(None),
            None => self.enqueue(request).map(Some),
        }
    }

    /// One job.
    pub fn job(&self, id: JobId) -> Result<JobInfo, RpcError> {
        lock(&self.inner.store)
            .job(id)
            .map_err(|e| RpcError::store(e.to_string()))?
            .ok_or_else(|| RpcError::not_found(format!("no job {id} in the queue")))
    }

    /// Jobs, newest first.
    pub fn jobs(&self, filter: &JobFilter) -> Result<Vec<JobInfo>, RpcError> {
        lock(&self.inner.store)
            .jobs(filter)
            .map_err(|e| RpcError::store(e.to_string()))
    }

    /// Cancel a job: a queued one ends at once; a running one is told to stop (its agents are
    /// killed) and this returns when it has.
    pub async fn cancel(&self, id: JobId) -> Result<JobInfo, RpcError> {
        let done = {
            let mut running = self.running();
            running.get_mut(&id).map(|r| {
                r.stop = Some(StopReason::Cancelled);
                r.cancel.cancel();
                r.done.clone()
            })
        };
        if let Some(done) = done {
            let notified = done.notified();
            if self.running().contains_key(&id) {
                let _ = tokio::time::timeout(Duration::from_secs(30), notified).await;
            }
            return self.job(id);
        }
        let finished = lock(&self.inner.store).finish_job(
            id,
            JobState::Cancelled,
            Some("cancelled by a client before it started"),
        );
        if finished.is_ok() {
            self.client_envs().remove(&id);
        }
        match finished {
            Ok(job) => {
                self.inner
                    .events
                    .publish(EventKind::JobFinished { job: job.clone() });
                Ok(job)
            }
            Err(_) => {
                let job = self.job(id)?;
                Err(RpcError::invalid(format!(
                    "job {id} is {}; only queued or running jobs can be cancelled",
                    job.state
                )))
            }
        }
    }

    /// Stop: start nothing new, let trials in flight finish for up to `grace`, then cancel
    /// what still runs and wait for it. Stopped jobs go back to the queue.
    pub async fn shutdown(&self, grace: Duration) {
        self.inner.stopping.store(true, Ordering::SeqCst);
        self.inner.wake.notify_one();
        let waiters: Vec<Arc<Notify>> = {
            let mut running = self.running();
            running
                .values_mut()
                .map(|r| {
                    r.stop.get_or_insert(StopReason::Shutdown);
                    r.drain.cancel();
                    r.done.clone()
                })
                .collect()
        };
        if waiters.is_empty() {
            return;
        }
        tracing::info!(
            jobs = waiters.len(),
            ?grace,
            "letting trials in flight finish"
        );
        if tokio::time::timeout(grace, self.all_done()).await.is_err() {
            tracing::warn!("grace period over; cancelling the trials still running");
            for r in self.running().values() {
                r.cancel.cancel();
            }
            let _ = tokio::time::timeout(Duration::from_secs(30), self.all_done()).await;
        }
    }

    async fn all_done(&self) {
        loop {
            let next = {
                let running = self.running();
                match running.values().next() {
                    Some(r) => r.done.clone(),
                    None => return,
                }
            };
            let notified = next.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.running().is_empty() {
                return;
            }
            let _ = tokio::time::timeout(Duration::from_millis(200), notified).await;
        }
    }

    /// Jobs running now, per harness.
    pub fn running_count(&self) -> usize {
        self.running().len()
    }

    fn running(&self) -> MutexGuard<'_, HashMap<JobId, Running>> {
        self.inner.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn client_envs(&self) -> MutexGuard<'_, HashMap<JobId, ClientEnv>> {
        self.inner
            .client_envs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The environment a job runs with: the client's it was queued with; for a client job
    /// queued before a restart, none of whose variables was set, the same (all unset); `Err`
    /// when the client's values are gone (the daemon keeps them in memory only).
    fn client_env_of(&self, job: &JobInfo) -> Result<Option<ClientEnv>, String> {
        if let Some(env) = self.client_envs().remove(&job.id) {
            return Ok(Some(env));
        }
        let asked = &job.request.client_env;
        if asked.is_empty() {
            return Ok(None);
        }
        let set: Vec<&str> = asked
            .iter()
            .filter(|(_, set)| **set)
            .map(|(name, _)| name.as_str())
            .collect();
        if set.is_empty() {
            return Ok(Some(ClientEnv::unset(asked.keys().map(String::as_str))));
        }
        let again = match (job.request.kind, job.run) {
            (JobKind::Paired, Some(run)) => format!("skillwatch run --resume {run}"),
            (JobKind::Paired | JobKind::Harbor, _) => "skillwatch run".to_owned(),
            (JobKind::Probe, _) => "skillwatch probe".to_owned(),
            (JobKind::Trigger, _) => "skillwatch trigger".to_owned(),
            (JobKind::Optimize, _) => "skillwatch trigger --optimize".to_owned(),
            (JobKind::Unknown, _) => "the command".to_owned(),
        };
        Err(format!(
            "the daemon restarted after this job was queued, and the client's {} (kept in memory only, never stored) went with it; run `{again}` again",
            set.join(", ")
        ))
    }

    async fn dispatch_loop(self) {
        loop {
            let held_back = self.dispatch();
            if self.inner.stopping.load(Ordering::SeqCst) {
                return;
            }
            if held_back {
                let _ = tokio::time::timeout(BUDGET_RECHECK, self.inner.wake.notified()).await;
            } else {
                self.inner.wake.notified().await;
            }
        }
    }

    /// Start every queued job that may start now; true when some wait for the budget.
    fn dispatch(&self) -> bool {
        if self.inner.stopping.load(Ordering::SeqCst) {
            return false;
        }
        let queued = match lock(&self.inner.store).queued_jobs() {
            Ok(q) => q,
            Err(e) => {
                tracing::error!("reading the queue failed: {e}");
                return true;
            }
        };
        let mut held_back = false;
        for job in queued {
            match self.admit(&job) {
                Admit::Start => self.launch(job),
                Admit::Wait => {}
                Admit::Budget(reason) => {
                    held_back = true;
                    self.note_budget(reason);
                }
                Admit::Fail(error) => self.fail_unstarted(job.id, &error),
            }
        }
        held_back
    }

    fn admit(&self, job: &JobInfo) -> Admit {
        let (_, config) = match config::for_dir(&job.request.skill_dir) {
            Ok(found) => found,
            Err(e) => return Admit::Fail(e.to_string()),
        };
        let harness = &job.request.harness;
        let busy = self
            .running()
            .values()
            .filter(|r| &r.harness == harness)
            .count();
        if busy >= config.parallel(harness) {
            return Admit::Wait;
        }
        let budget = budget_status(&lock(&self.inner.store), &config.budget);
        match budget {
            Ok(b) => match b.exhausted() {
                Some(reason) => Admit::Budget(reason),
                None => Admit::Start,
            },
            Err(e) => Admit::Fail(format!("reading today's budget failed: {e}")),
        }
    }

    fn note_budget(&self, reason: String) {
        let mut last = self
            .inner
            .budget_note
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if last.as_deref() != Some(reason.as_str()) {
            tracing::warn!("jobs held back: {reason}");
            self.inner.events.publish(EventKind::BudgetExhausted {
                reason: reason.clone(),
            });
            *last = Some(reason);
        }
    }

    fn fail_unstarted(&self, id: JobId, error: &str) {
        self.client_envs().remove(&id);
        match lock(&self.inner.store).finish_job(id, JobState::Failed, Some(error)) {
            Ok(job) => {
                self.inner.events.publish(EventKind::JobFinished { job });
            }
            Err(e) => tracing::error!(job = %id, "failing the job failed: {e}"),
        }
    }

    fn launch(&self, job: JobInfo) {
        let client_env = match self.client_env_of(&job) {
            Ok(env) => env,
            Err(error) => return self.fail_unstarted(job.id, &error),
        };
        let name = skill_name(&job.request.skill_dir);
        let job = match lock(&self.inner.store).start_job(job.id, name.as_deref()) {
            Ok(job) => job,
            Err(e) => {
                tracing::warn!(job = %job.id, "not started: {e}");
                return;
            }
        };
        tracing::info!(job = %job.id, attempt = job.attempts, "job started");
        let running = Running {
            harness: job.request.harness.clone(),
            cancel: CancellationToken::new(),
            drain: CancellationToken::new(),
            stop: None,
            done: Arc::new(Notify::new()),
        };
        let ctx = JobContext {
            cancel: running.cancel.clone(),
            drain: running.drain.clone(),
            client_env,
            report: Reporter::new(&job, self.inner.store.clone(), self.inner.events.clone()),
        };
        self.running().insert(job.id, running);
        self.inner
            .events
            .publish(EventKind::JobStarted { job: job.clone() });
        let me = self.clone();
        tokio::spawn(async move { me.run_job(job, ctx).await });
    }

    async fn run_job(self, job: JobInfo, ctx: JobContext) {
        let id = job.id;
        let (trigger, kind) = (job.request.trigger, job.request.kind);
        let skill_dir = job.request.skill_dir.clone();
        let report = ctx.report.clone();
        let task = tokio::spawn(self.inner.executor.execute(job, ctx));
        let outcome = task.await.unwrap_or_else(|e| Outcome::Failed {
            run: report.run(),
            error: format!("internal error: the run panicked: {e}"),
        });
        let stop = self.running().get(&id).and_then(|r| r.stop);
        let finished = self.settle((id, kind), &outcome, stop);
        if let (Some(_), Outcome::Completed { run: Some(run) }) = (&finished, &outcome)
            && trigger == JobTrigger::ModelChange
            && run.kind == RunKind::Paired
        {
            self.compare(run.id, &skill_dir);
        }
        if kind == JobKind::Trigger {
            // the editor's trigger lens refreshes on it
            self.inner.events.publish(EventKind::TriggerFinished {
                skill_dir: skill_dir.clone(),
                run: report.run().map(|r| r.id),
            });
        }
        if let Some(r) = self.running().remove(&id) {
            r.done.notify_waiters();
        }
        self.inner.wake.notify_one();
    }

    /// Record how the job ended; the final job, or `None` when it went back to the queue.
    fn settle(
        &self,
        (id, kind): (JobId, JobKind),
        outcome: &Outcome,
        stop: Option<StopReason>,
    ) -> Option<JobInfo> {
        let mut store = lock(&self.inner.store);
        let result = match (outcome, stop) {
            (Outcome::Completed { .. }, _) => store.finish_job(id, JobState::Completed, None),
            (Outcome::Failed { error, .. }, _) => {
                store.finish_job(id, JobState::Failed, Some(error))
            }
            (Outcome::Stopped { .. }, Some(StopReason::Shutdown)) if kind.resumes() => {
                let note =
                    "the daemon stopped during this job; re-queued (finished trials are kept)";
                match store.requeue_job(id, note) {
                    Ok(_) => return None,
                    Err(e) => Err(e),
                }
            }
            (Outcome::Stopped { .. }, Some(StopReason::Shutdown)) => {
                let note = format!(
                    "the daemon stopped during this job; a {} run cannot resume, so it is not \
                     re-queued (its finished trials are kept)",
                    kind.as_str()
                );
                store.finish_job(id, JobState::Interrupted, Some(&note))
            }
            (Outcome::Stopped { .. }, Some(StopReason::Cancelled)) => {
                store.finish_job(id, JobState::Cancelled, Some("cancelled by a client"))
            }
            (Outcome::Stopped { .. }, None) => store.finish_job(
                id,
                JobState::Failed,
                Some("the run stopped without being asked to"),
            ),
        };
        drop(store);
        match result {
            Ok(job) => {
                tracing::info!(job = %id, state = %job.state, "job finished");
                self.inner
                    .events
                    .publish(EventKind::JobFinished { job: job.clone() });
                Some(job)
            }
            Err(e) => {
                tracing::error!(job = %id, "recording the job's end failed: {e}");
                None
            }
        }
    }

    fn compare(&self, run: i64, skill_dir: &std::path::Path) {
        let compared = compare_with_previous(&mut lock(&self.inner.store), run, Some(skill_dir));
        match compared {
            Ok(Some(comparison)) => {
                tracing::info!(skill = %comparison.skill, verdict = comparison.verdict.as_str(), "{}", comparison.headline());
                self.inner
                    .events
                    .publish(EventKind::Compared { comparison });
            }
            Ok(None) => tracing::info!(run, "no previous model to compare with"),
            Err(e) => tracing::warn!(run, "comparing with the previous model failed: {e}"),
        }
    }
}

enum Admit {
    Start,
    Wait,
    Budget(String),
    Fail(String),
}

fn validate(request: &RunRequest) -> Result<(), RpcError> {
    if let Some(kind) = unknown_kind(request) {
        return Err(RpcError::invalid(format!(
            "a run of kind `{kind}`: this daemon (skillwatch {}, protocol {PROTOCOL_VERSION}) does not know it, and the client speaks protocol {}; stop this daemon (`skillwatch daemon stop`) so the client's skillwatch starts its own",
            env!("CARGO_PKG_VERSION"),
            request.protocol
        )));
    }
    if let Some(why) = request.disagreement() {
        return Err(RpcError::invalid(why));
    }
    if !request.skill_dir.is_absolute() {
        return Err(RpcError::invalid(format!(
            "skill folder: expected an absolute path, found `{}`",
            request.skill_dir.display()
        )));
    }
    if !request.skill_dir.join(SKILL_FILE).is_file() {
        return Err(RpcError::not_found(format!(
            "{}: expected a skill folder with a {SKILL_FILE}, found none",
            request.skill_dir.display()
        )));
    }
    for (field, value) in [("harness", &request.harness), ("model", &request.model)] {
        if value.trim().is_empty() {
            return Err(RpcError::invalid(format!(
                "{field}: expected a name, found an empty one"
            )));
        }
    }
    Ok(())
}

/// The kind a request names that this daemon does not know, if it names one.
fn unknown_kind(request: &RunRequest) -> Option<String> {
    match (&request.spec, request.kind) {
        (Some(RunSpec::Unknown(u)), _) => Some(u.kind.clone()),
        (_, JobKind::Unknown) => Some("unknown".into()),
        _ => None,
    }
}

/// The skill's `name`, or its folder name.
pub fn skill_name(dir: &std::path::Path) -> Option<String> {
    load_document(&dir.join(SKILL_FILE))
        .ok()
        .and_then(|d| d.field_str("name").map(|(n, _)| n.trim().to_string()))
        .filter(|n| !n.is_empty())
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
}
