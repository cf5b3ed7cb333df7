//! The RPC handlers: [`DaemonRpc`] over the daemon's state. Each handler answers; store work
//! runs on the blocking pool so a long history query never stalls the socket.

use std::path::PathBuf;
use std::sync::Arc;

use skillwatch_core::checks::check_skill_dir;
use skillwatch_core::config::CheckConfig;
use skillwatch_core::evalspec::skill_dir_for_eval_file;
use skillwatch_core::skill::SKILL_FILE;
use skillwatch_protocol::{
    BudgetStatus, CheckedFile, ClientEnv, CompareAllRequest, CompareRequest, DaemonRpc,
    DaemonStatus, EventBatch, HistoryQuery, JobFilter, JobId, JobInfo, JobState, Lenses,
    PROTOCOL_VERSION, RpcError, RunRequest, TrackedSkill,
};
use tarpc::context::Context;
use tokio_util::sync::CancellationToken;

use super::queries::{self, QueryError};
use crate::config;
use crate::events::EventLog;
use crate::scheduler::{Scheduler, SharedStore, budget_status, lock, rerun_all};
use crate::store::Store;
use crate::watch::Watcher;

/// What the daemon is made of, shared by every connection.
#[derive(Debug)]
pub struct DaemonState {
    /// The history.
    pub store: SharedStore,
    /// The job queue.
    pub scheduler: Scheduler,
    /// The file watcher.
    pub watcher: Watcher,
    /// The event log.
    pub events: Arc<EventLog>,
    /// Fired to stop the daemon.
    pub shutdown: CancellationToken,
    /// Connections open now (the idle limit counts from the last one's end).
    pub clients: std::sync::atomic::AtomicUsize,
    /// Fixed facts for `status`.
    pub info: DaemonInfo,
}

/// Facts about this daemon process.
#[derive(Debug, Clone)]
pub struct DaemonInfo {
    /// Instance id (changes at every start).
    pub instance: String,
    /// Start time, epoch ms.
    pub started_ms: i64,
    /// The socket.
    pub socket: PathBuf,
    /// The database.
    pub db: PathBuf,
    /// The log file.
    pub log: Option<PathBuf>,
    /// A root nobody has used for this long is forgotten.
    pub forget_roots_after: std::time::Duration,
}

/// One connection's handle on the state (tarpc clones it per request).
#[derive(Debug, Clone)]
pub struct Service(pub Arc<DaemonState>);

fn query_error(e: QueryError) -> RpcError {
    match e {
        QueryError::NoSkill { .. } => RpcError::not_found(e.to_string()),
        QueryError::Invalid(m) => RpcError::invalid(m),
        QueryError::Store(s) => RpcError::store(s.to_string()),
    }
}

impl Service {
    /// Run `f` on the store on the blocking pool.
    async fn with_store<T, F>(&self, f: F) -> Result<T, RpcError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T, RpcError> + Send + 'static,
    {
        let store = self.0.store.clone();
        tokio::task::spawn_blocking(move || f(&mut lock(&store)))
            .await
            .unwrap_or_else(|e| Err(RpcError::store(format!("internal error: {e}"))))
    }

    fn budget(&self, store: &Store) -> BudgetStatus {
        // the strictest limits among the watched roots' configs
        let mut limits = config::BudgetConfig::default();
        for root in self.0.watcher.roots() {
            if let Ok((_, c)) = config::for_dir(&root) {
                limits.max_trials_per_day =
                    min_some(limits.max_trials_per_day, c.budget.max_trials_per_day);
                limits.max_cost_usd_per_day =
                    min_some(limits.max_cost_usd_per_day, c.budget.max_cost_usd_per_day);
            }
        }
        budget_status(store, &limits).unwrap_or_default()
    }
}

fn min_some<T: PartialOrd>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b < a { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// The skill folder a checked path stands for: itself, its SKILL.md's folder, or the skill of
/// an eval file.
fn skill_dir_of(path: &std::path::Path) -> Option<PathBuf> {
    if path.join(SKILL_FILE).is_file() {
        return Some(path.to_path_buf());
    }
    if path.file_name().is_some_and(|n| n == SKILL_FILE) {
        return path.parent().map(std::path::Path::to_path_buf);
    }
    skill_dir_for_eval_file(path)
}

impl DaemonRpc for Service {
    async fn status(self, _: Context) -> DaemonStatus {
        let info = self.0.info.clone();
        let watched = self.0.watcher.watched();
        let roots = watched.iter().map(|r| r.path.clone()).collect();
        let watch_problem = self.0.watcher.problem();
        let me = self.clone();
        let (counts, budget) = self
            .with_store(move |s| Ok((s.live_job_counts().unwrap_or_default(), me.budget(s))))
            .await
            .unwrap_or_default();
        DaemonStatus {
            version: env!("CARGO_PKG_VERSION").to_string(),
            protocol: PROTOCOL_VERSION,
            pid: std::process::id(),
            instance: info.instance,
            started_ms: info.started_ms,
            socket: info.socket,
            db: info.db,
            log: info.log,
            roots,
            // (not the connection asking)
            clients: (self.0.clients.load(std::sync::atomic::Ordering::SeqCst) as u32)
                .saturating_sub(1),
            watched,
            watch_problem,
            forget_roots_after_secs: Some(info.forget_roots_after.as_secs()),
            queued: counts.0,
            running: counts.1,
            budget,
        }
    }

    async fn check(self, _: Context, path: PathBuf) -> Result<Vec<CheckedFile>, RpcError> {
        let Some(dir) = skill_dir_of(&path) else {
            return Err(RpcError::not_found(format!(
                "{}: expected a skill folder, its SKILL.md or one of its eval files",
                path.display()
            )));
        };
        tokio::task::spawn_blocking(move || {
            let options = CheckConfig::for_dir(&dir)
                .map_err(|e| RpcError::invalid(e.to_string()))?
                .map(|c| c.options())
                .unwrap_or_default();
            Ok(check_skill_dir(&dir, &options)
                .into_iter()
                .map(|r| CheckedFile {
                    path: r.path,
                    diagnostics: r.diagnostics,
                })
                .collect())
        })
        .await
        .map_err(|e| RpcError::store(format!("internal error while checking: {e}")))?
    }

    async fn enqueue_run(self, _: Context, request: RunRequest) -> Result<JobInfo, RpcError> {
        self.0.scheduler.enqueue(request)
    }

    async fn enqueue_client_run(
        self,
        _: Context,
        request: RunRequest,
        env: ClientEnv,
    ) -> Result<JobInfo, RpcError> {
        self.0.scheduler.enqueue_for_client(request, env)
    }

    async fn run_status(self, _: Context, job: JobId) -> Result<JobInfo, RpcError> {
        self.0.scheduler.job(job)
    }

    async fn cancel(self, _: Context, job: JobId) -> Result<JobInfo, RpcError> {
        self.0.scheduler.cancel(job).await
    }

    async fn list_runs(self, _: Context, filter: JobFilter) -> Result<Vec<JobInfo>, RpcError> {
        self.0.scheduler.jobs(&filter)
    }

    async fn history(self, _: Context, query: HistoryQuery) -> Result<serde_json::Value, RpcError> {
        self.with_store(move |s| {
            let report = queries::history(s, &query).map_err(query_error)?;
            serde_json::to_value(report).map_err(|e| RpcError::store(e.to_string()))
        })
        .await
    }

    async fn compare(
        self,
        _: Context,
        request: CompareRequest,
    ) -> Result<serde_json::Value, RpcError> {
        self.with_store(move |s| queries::compare_value(s, &request).map_err(query_error))
            .await
    }

    async fn compare_all(
        self,
        _: Context,
        request: CompareAllRequest,
    ) -> Result<serde_json::Value, RpcError> {
        self.with_store(move |s| {
            let rows = queries::compare_all(s, &request).map_err(query_error)?;
            serde_json::to_value(rows).map_err(|e| RpcError::store(e.to_string()))
        })
        .await
    }

    async fn lenses(self, _: Context, skill_dir: PathBuf) -> Result<Lenses, RpcError> {
        let jobs = self.0.scheduler.jobs(&JobFilter {
            states: vec![JobState::Queued, JobState::Running],
            skill_dir: Some(skill_dir.clone()),
            limit: Some(20),
        })?;
        let watcher = self.0.watcher.clone();
        let mut lenses = self
            .with_store(move |s| {
                // an editor showing a skill uses its root
                watcher.touch(&skill_dir, s);
                queries::lenses(s, &skill_dir).map_err(query_error)
            })
            .await?;
        lenses.jobs = jobs;
        Ok(lenses)
    }

    async fn tracked_skills(self, _: Context) -> Result<Vec<TrackedSkill>, RpcError> {
        let watcher = self.0.watcher.clone();
        tokio::task::spawn_blocking(move || watcher.tracked())
            .await
            .map_err(|e| RpcError::store(format!("internal error: {e}")))
    }

    async fn watch_roots(self, _: Context, roots: Vec<PathBuf>) -> Result<Vec<PathBuf>, RpcError> {
        let watcher = self.0.watcher.clone();
        tokio::task::spawn_blocking(move || watcher.add_roots(&roots))
            .await
            .map_err(|e| RpcError::store(format!("internal error: {e}")))?
    }

    async fn rerun_all(
        self,
        _: Context,
        model: String,
        harness: Option<String>,
    ) -> Result<Vec<JobInfo>, RpcError> {
        if model.trim().is_empty() {
            return Err(RpcError::invalid(
                "model: expected a name, found an empty one",
            ));
        }
        let watcher = self.0.watcher.clone();
        let skills = tokio::task::spawn_blocking(move || watcher.tracked())
            .await
            .map_err(|e| RpcError::store(format!("internal error: {e}")))?;
        rerun_all(&skills, &model, harness.as_deref())
            .into_iter()
            .map(|request| self.0.scheduler.enqueue(request))
            .collect()
    }

    async fn next_events(self, _: Context, cursor: u64, wait_ms: u64) -> EventBatch {
        self.0.events.wait_after(cursor, wait_ms).await
    }

    async fn shutdown(self, _: Context) {
        tracing::info!("shutdown requested by a client");
        self.0.shutdown.cancel();
    }

    async fn unwatch_roots(
        self,
        _: Context,
        roots: Vec<PathBuf>,
    ) -> Result<Vec<PathBuf>, RpcError> {
        let watcher = self.0.watcher.clone();
        tokio::task::spawn_blocking(move || watcher.remove_roots(&roots))
            .await
            .map_err(|e| RpcError::store(format!("internal error: {e}")))?
    }
}
