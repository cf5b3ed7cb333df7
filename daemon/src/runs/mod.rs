//! The run engine: every kind of run skillwatch makes (a paired run, the security probes, the
//! trigger trials, a paired run on Harbor) is planned, begun, run trial by trial, recorded and
//! reported here, by one lifecycle. A kind ([`Kind`]) says what its trials are and how one
//! runs; the engine owns the rest:
//!
//! 1. **plan** ([`Engine::plan`]): the kind resolves the skill, the harness and its version
//!    ([`resolve`]), and its trials; nothing is started or stored.
//! 2. **begin** ([`Planned::begin`]): the run exists in the store (or is reopened to resume);
//!    its id is final. The daemon records it on the job here.
//! 3. **trials** ([`Started::execute`]): at most `jobs` at once, in one temporary folder for
//!    the run; before each starts, the budget gate ([`budget`]) decides whether it may. Each
//!    finished trial is recorded at once with what it spent, in one transaction, and told as a
//!    [`RunEvent`]. Cancelling kills the agents in flight; draining (the daemon stopping)
//!    starts no new trial and lets those in flight finish.
//! 4. **end and report**: the run ends `completed` (with `stopped: budget` when its budget
//!    stopped it), `cancelled`, `interrupted` (drained, where the kind can resume) or
//!    `failed`; the store scores it and the kind's report is read back from the store.
//!
//! Only [`crate::runner::AgentRun`] starts an agent: every kind's trial goes through it, and so
//! does a judge that is a harness.

pub mod budget;
mod event;
mod kind;
pub mod prices;
mod reads;
pub mod resolve;

pub use budget::{Admit, Gate, Usage};
pub use event::{ProgressSink, RunEvent, TrialDetail, no_progress};
pub use kind::{Begun, Ctx, Ending, Kind, Outcome, Outside, Recorded, Request};
pub use reads::{Reads, check_key_vars};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use skillwatch_protocol::ClientEnv;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::harness::HostEnv;
use crate::runner::RunError;
use crate::store::{RunEnd, RunRef, RunStatus, Spent, Stop, Store};

/// Runs runs of every kind against one history store. Cheap to clone; one engine can run
/// several at once.
#[derive(Clone)]
pub struct Engine {
    store: Arc<Mutex<Store>>,
    host: HostEnv,
    temp_dir: PathBuf,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("temp_dir", &self.temp_dir)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine recording into `store`, drawing agent environments from this process's
    /// environment, with trial folders under the system temp dir.
    pub fn new(store: Arc<Mutex<Store>>) -> Engine {
        Engine {
            store,
            host: HostEnv::current(),
            temp_dir: std::env::temp_dir(),
        }
    }

    /// Draw agent environments (allowed variables, API keys) from `host` instead.
    pub fn with_host_env(mut self, host: HostEnv) -> Engine {
        self.host = host;
        self
    }

    /// Put trial folders under `dir` (it must have no agent files above it).
    pub fn with_temp_dir(mut self, dir: impl Into<PathBuf>) -> Engine {
        self.temp_dir = dir.into();
        self
    }

    /// An engine like this one whose agents read `client`'s values of the variables it names
    /// (a run the daemon makes for a client) instead of this one's.
    pub fn for_client(&self, client: &ClientEnv) -> Engine {
        Engine {
            store: self.store.clone(),
            host: self.host.with_client(client),
            temp_dir: self.temp_dir.clone(),
        }
    }

    /// The environment agents draw from.
    pub fn host(&self) -> &HostEnv {
        &self.host
    }

    /// The history.
    pub fn store(&self) -> &Arc<Mutex<Store>> {
        &self.store
    }

    /// Where trial folders go.
    pub fn temp_dir(&self) -> &Path {
        &self.temp_dir
    }

    /// Plan `request` (see the module docs): nothing is started or stored.
    pub async fn plan<R: Request>(&self, request: &R) -> Result<Planned<R::Kind>, RunError> {
        Ok(Planned {
            kind: request.plan(self).await?,
            engine: self.clone(),
            drain: CancellationToken::new(),
        })
    }

    /// Plan `request` and begin its run in the store.
    pub async fn prepare<R: Request>(&self, request: &R) -> Result<Started<R::Kind>, RunError> {
        self.plan(request).await?.begin().await
    }

    /// Plan, begin and run `request` to its end.
    pub async fn run<R: Request>(
        &self,
        request: &R,
        progress: ProgressSink,
        cancel: CancellationToken,
    ) -> Result<<R::Kind as Kind>::Report, RunError> {
        self.prepare(request).await?.execute(progress, cancel).await
    }

    /// Run `f` on the store on the blocking pool (SQLite commits fsync).
    pub(crate) async fn with_store<T: Send + 'static, E: Into<RunError>>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, E> + Send + 'static,
    ) -> Result<T, RunError> {
        with_store(&self.store, f).await
    }
}

/// A planned run: what will run, before anything does.
pub struct Planned<K: Kind> {
    engine: Engine,
    kind: K,
    drain: CancellationToken,
}

impl<K: Kind> Planned<K> {
    /// What was planned.
    pub fn kind(&self) -> &K {
        &self.kind
    }

    /// Start no new trial once `drain` fires (the daemon is stopping): trials in flight
    /// finish and are recorded.
    pub fn draining_on(mut self, drain: CancellationToken) -> Planned<K> {
        self.drain = drain;
        self
    }

    /// Begin the run in the store. A budget it cannot count (a cost limit on a model with no
    /// price) is refused first: nothing is stored.
    pub async fn begin(self) -> Result<Started<K>, RunError> {
        let Planned {
            engine,
            mut kind,
            drain,
        } = self;
        budget::countable(kind.budget(), kind.model())
            .map_err(|message| RunError::Settings { message })?;
        let (kind, begun) = engine
            .with_store(move |s| {
                let begun = kind.begin(s)?;
                Ok::<_, RunError>((kind, begun))
            })
            .await?;
        Ok(Started {
            engine,
            kind,
            begun,
            drain,
        })
    }

    /// Begin and run to the end.
    pub async fn execute(
        self,
        progress: ProgressSink,
        cancel: CancellationToken,
    ) -> Result<K::Report, RunError> {
        self.begin().await?.execute(progress, cancel).await
    }
}

/// A run begun in the store, ready to run its trials.
pub struct Started<K: Kind> {
    engine: Engine,
    kind: K,
    begun: Begun<K::Trial>,
    drain: CancellationToken,
}

impl<K: Kind> Started<K> {
    /// The run in the history (`None` for a Harbor run until its first trial is stored).
    pub fn run(&self) -> Option<RunRef> {
        self.begun.run
    }

    /// What was planned.
    pub fn kind(&self) -> &K {
        &self.kind
    }

    /// Trials this run will start (fewer when its budget stops it).
    pub fn pending(&self) -> usize {
        self.begun.trials.len()
    }

    /// Start no new trial once `drain` fires (see [`Planned::draining_on`]).
    pub fn draining_on(mut self, drain: CancellationToken) -> Started<K> {
        self.drain = drain;
        self
    }

    /// Run the trials, end the run and report it (see the module docs). An error only when
    /// the store fails (the recorded trials remain) or the trial folders cannot be made.
    pub async fn execute(
        self,
        progress: ProgressSink,
        cancel: CancellationToken,
    ) -> Result<K::Report, RunError> {
        let clock = Instant::now();
        let Started {
            engine,
            mut kind,
            begun,
            drain,
        } = self;
        let gate = gate(&engine, &kind, &begun).await?;
        let root = trial_root(&engine.temp_dir, K::RUN.as_str(), begun.run)?;
        let ctx = Ctx {
            store: engine.store.clone(),
            progress: progress.clone(),
            run: begun.run,
            root: root.path().to_path_buf(),
        };
        if let Some(started) = &begun.started {
            progress(started);
        }
        let mut exec = Execution {
            engine: &engine,
            model: kind.model().to_owned(),
            ctx,
            gate,
            cancel,
            drain,
            stop: None,
            ran: 0,
            left: 0,
            cancelled: false,
        };
        let outcome = exec.run(&mut kind, begun.trials).await;
        let settled = kind.settle(exec.cancelled).await;
        // what the judge spent is recorded however settling went
        let settled = settled.and(exec.judged(&mut kind).await);
        let status = exec.status::<K>(&outcome);
        let (run, stop, spent, ran) =
            (exec.ctx.run, exec.stop.clone(), exec.gate.spent(), exec.ran);
        let kept = keep_or_drop(root, kind.keep_folders()).await;
        let Some(run) = run else {
            outcome?;
            return Err(kind.never_recorded());
        };
        let end = RunEnd {
            status,
            stop: stop.clone(),
        };
        let ending = Ending {
            status,
            stop,
            spent,
            ran,
            wall_ms: clock.elapsed().as_millis() as u64,
            kept,
        };
        let (report, last) = engine
            .with_store(move |s| {
                kind.end(s, run, &end)?;
                let report = kind.report(s, run, &ending)?;
                Ok::<_, RunError>((report, ending))
            })
            .await?;
        outcome?;
        settled?;
        progress(&finished_event(run, &last, report.lift()));
        Ok(report)
    }
}

/// The budget gate of a run: its limits, what it spent before (a resumed run), and what a
/// trial of this skill, kind and model took in the history.
async fn gate<K: Kind>(
    engine: &Engine,
    kind: &K,
    begun: &Begun<K::Trial>,
) -> Result<Gate, RunError> {
    let budget = *kind.budget();
    let (run, skill, model) = (begun.run, begun.skill.clone(), kind.model().to_owned());
    let (before, prior) = engine
        .with_store(move |s| {
            let before = match run {
                Some(r) => s.spent(r)?,
                None => Spent::default(),
            };
            Ok::<_, RunError>((before, s.typical_usage(K::RUN, &skill, &model)?))
        })
        .await?;
    Gate::new(budget, kind.model(), before, prior).map_err(|message| RunError::Settings { message })
}

/// The moving parts of one execution.
struct Execution<'e> {
    engine: &'e Engine,
    /// The agent's model (what spending is recorded under).
    model: String,
    ctx: Ctx,
    gate: Gate,
    cancel: CancellationToken,
    drain: CancellationToken,
    /// Why no more trials started, when the budget said so.
    stop: Option<Stop>,
    ran: usize,
    /// Trials not started (drained or stopped).
    left: usize,
    cancelled: bool,
}

impl Execution<'_> {
    async fn run<K: Kind>(&mut self, kind: &mut K, trials: Vec<K::Trial>) -> Result<(), RunError> {
        kind.before(&self.ctx).await?;
        match kind.outside(&self.ctx)? {
            Some(outside) => self.follow(kind, outside).await,
            None => self.start_each(kind, trials).await,
        }
    }

    /// Start the trials here, at most `jobs` at once, each only when the gate lets it.
    async fn start_each<K: Kind>(
        &mut self,
        kind: &mut K,
        trials: Vec<K::Trial>,
    ) -> Result<(), RunError> {
        let mut pending = trials.into_iter();
        let mut running: JoinSet<K::Done> = JoinSet::new();
        let jobs = kind.jobs().max(1);
        loop {
            while running.len() < jobs && self.may_start() {
                match self.gate.admit() {
                    Admit::Go => {}
                    Admit::Wait => break,
                    Admit::Stop(stop) => {
                        self.stop.get_or_insert(stop);
                        break;
                    }
                }
                let Some(trial) = pending.next() else { break };
                self.gate.started();
                running.spawn(kind.start(trial, &self.ctx.root));
            }
            if running.is_empty() {
                self.left = pending.len();
                return Ok(());
            }
            tokio::select! {
                _ = self.cancel.cancelled() => {
                    running.shutdown().await;
                    self.cancelled = true;
                    self.left = pending.len();
                    return Ok(());
                }
                Some(done) = running.join_next() => {
                    let done = done.map_err(|e| RunError::Io {
                        context: "a trial task".into(),
                        source: std::io::Error::other(e.to_string()),
                    })?;
                    self.finished(kind, done).await?;
                }
            }
        }
    }

    /// Record the trials an outside runner finishes; stop it when the budget says so, the
    /// daemon drains or the run is cancelled.
    async fn follow<K: Kind>(
        &mut self,
        kind: &mut K,
        mut outside: Outside<K::Done>,
    ) -> Result<(), RunError> {
        loop {
            if !self.may_start() && !outside.stop.is_cancelled() {
                outside.stop.cancel();
            }
            tokio::select! {
                _ = self.cancel.cancelled(), if !self.cancelled => {
                    self.cancelled = true;
                    outside.stop.cancel();
                }
                _ = self.drain.cancelled(), if !outside.stop.is_cancelled() => {
                    outside.stop.cancel();
                }
                next = outside.finished.recv() => match next {
                    Some(done) => {
                        self.gate.started();
                        self.finished(kind, done).await?;
                        if let Admit::Stop(stop) = self.gate.admit() {
                            self.stop.get_or_insert(stop);
                        }
                    }
                    None => return Ok(()),
                },
            }
        }
    }

    /// Whether another trial may start: not cancelled, not drained, not stopped.
    fn may_start(&self) -> bool {
        !self.cancel.is_cancelled() && !self.drain.is_cancelled() && self.stop.is_none()
    }

    /// Store a finished trial with what it spent, tell it, and let the kind follow up.
    async fn finished<K: Kind>(&mut self, kind: &mut K, done: K::Done) -> Result<(), RunError> {
        let spend = budget::spend(&self.model, &K::usage(&done), kind.budget().price.as_ref());
        self.gate.finished(&spend);
        self.ran += 1;
        let Recorded { row, events, run } = kind.row(&done, &spend);
        if let Some(run) = run {
            self.ctx.run = Some(run);
        }
        let Some(run) = self.ctx.run else {
            return Err(RunError::Settings {
                message: "a trial finished before its run was begun".into(),
            });
        };
        self.engine
            .with_store(move |s| s.record(run, &row, Some(&spend)))
            .await?;
        for event in &events {
            (self.ctx.progress)(event);
        }
        kind.recorded(done, &self.ctx).await?;
        self.judged(kind).await
    }

    /// Record the judge calls the kind made since it was last asked, and count them.
    async fn judged<K: Kind>(&mut self, kind: &mut K) -> Result<(), RunError> {
        let calls = kind.judge_calls();
        let Some(run) = self.ctx.run.filter(|_| !calls.is_empty()) else {
            return Ok(());
        };
        for call in &calls {
            self.gate.judged(call);
        }
        self.engine
            .with_store(move |s| s.record_judge_calls(run, &calls))
            .await
    }

    /// How the run ends.
    fn status<K: Kind>(&self, outcome: &Result<(), RunError>) -> RunStatus {
        if self.cancelled || self.cancel.is_cancelled() {
            RunStatus::Cancelled
        } else if outcome.is_err() {
            RunStatus::Failed
        } else if self.drain.is_cancelled() && self.left > 0 && self.stop.is_none() {
            K::drained()
        } else {
            RunStatus::Completed
        }
    }
}

/// The run's trial folders: one temporary folder under `dir`.
fn trial_root(dir: &Path, kind: &str, run: Option<RunRef>) -> Result<tempfile::TempDir, RunError> {
    let id = run.map_or_else(String::new, |r| r.id.to_string());
    tempfile::Builder::new()
        .prefix(&format!("skillwatch-{kind}{id}-"))
        .tempdir_in(dir)
        .map_err(|source| RunError::Io {
            context: format!("creating trial folders in {}", dir.display()),
            source,
        })
}

/// Keep the folders (and say where), or delete them off the async threads.
async fn keep_or_drop(root: tempfile::TempDir, keep: bool) -> Option<PathBuf> {
    if keep {
        return Some(root.keep());
    }
    let _ = tokio::task::spawn_blocking(move || drop(root)).await;
    None
}

/// The event that ends a run.
fn finished_event(run: RunRef, ending: &Ending, lift: Option<f64>) -> RunEvent {
    RunEvent::Finished {
        run: crate::store::RunId(run.id),
        status: ending.status,
        lift,
        stop: ending.stop.clone(),
        spent: ending.spent,
    }
}

/// Lock a shared store, recovering from a poisoned lock: the store's state is in the
/// database, whose transactions a panic cannot leave half-done.
pub fn lock(store: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    store
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Run a store call on the blocking pool (SQLite commits fsync).
pub(crate) async fn with_store<T: Send + 'static, E: Into<RunError>>(
    store: &Arc<Mutex<Store>>,
    f: impl FnOnce(&mut Store) -> Result<T, E> + Send + 'static,
) -> Result<T, RunError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(&mut lock(&store)).map_err(Into::into))
        .await
        .map_err(|e| RunError::Io {
            context: "a history store call".into(),
            source: std::io::Error::other(e.to_string()),
        })?
}
