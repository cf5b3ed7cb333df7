//! The daemon's RPC protocol: one tarpc service, shared by the daemon (server) and its clients
//! (the CLI, the language server, tests).
//!
//! Wire: a Unix socket in the user's runtime directory; frames are length-delimited (4-byte
//! big-endian length, at most [`MAX_FRAME_BYTES`]) and each frame is one JSON-encoded tarpc
//! message. JSON rather than bincode because the history and compare replies carry the
//! store's documents as JSON values, and because a person can read a captured frame.
//!
//! tarpc has no server push: events (progress, finished runs, regressions, checks of saved
//! files) are read by long-polling [`DaemonRpc::next_events`] with a cursor.
//!
//! Its own crate, between core and the daemon: a client needs nothing of the daemon crate to
//! speak to it, and core stays free of tarpc and tokio (core's rule is no I/O, no runtime, and
//! that holds of its dependencies too: `scripts/test` checks core's tree has no tokio).

mod events;
mod jobs;
mod optimize;
mod requests;
mod results;
mod status;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use events::{Event, EventBatch, EventKind};
pub use jobs::{
    ClientEnv, JobFilter, JobId, JobInfo, JobKind, JobProgress, JobState, JobTrigger, RunRequest,
};
pub use optimize::{
    Candidate, DEFAULT_CANDIDATES, DEFAULT_ROUNDS, OptimizeProgress, OptimizeReport,
    OptimizeRequest, OptimizeSpent, Rates, Share, StopReason, Stopped,
};
pub use requests::{
    Budget, DEFAULT_PROBE_TIMEOUT_SECS, DEFAULT_TIMEOUT_SECS, DEFAULT_TRIGGER_TIMEOUT_SECS,
    HARBOR_VARS, HarborRun, HarborTarget, HarnessKind, HarnessSettings, JudgeEndpoint, JudgeMode,
    JudgeSettings, PairedRequest, Price, ProbeRequest, RunId, RunSpec, TriggerRequest, UnknownRun,
    trial_timeout,
};
pub use results::{
    CompareAllRequest, CompareRequest, CompareWhat, HistoryQuery, LensCase, LensFailed, LensLift,
    LensSecurity, LensTrigger, Lenses, ModelComparison,
};
pub use status::{BudgetStatus, CheckedFile, DaemonStatus, TrackedSkill, WatchedRoot};

/// Bumped whenever a request or reply changes shape; [`DaemonStatus::protocol`] carries it.
///
/// The `status` call is the handshake every client makes first, so it must stay readable
/// across versions: it takes no arguments, and [`DaemonStatus`] only ever gains fields (with
/// serde defaults). A client and a daemon of different versions then always get far enough to
/// compare their numbers and say so, instead of failing to decode each other.
///
/// 2: `enqueue_client_run` (the client's environment travels with its run), `JobProgress`
/// counts retries, progress events carry the runner's own event.
///
/// 3: `RunRequest.kind` (probe jobs) and `RunRequest.harbor` (`run --on harbor`), which an
/// older daemon would ignore and run as a local paired run; the `trigger` call and
/// `EventKind::TriggerFinished`; `CompareWhat::TriggerModels`; `JobInfo.probe_run`;
/// `LensLift.security` and `Lenses.triggers`.
///
/// 4: `compare_all` answers rows with the security and trigger changes beside the lift;
/// `EventKind::TriggerProgress` (an older client cannot decode a batch holding one) and
/// `TriggerRequest.call`.
///
/// 5: one run engine: `RunRequest.spec` (a typed [`RunSpec`] per kind, with budgets) replaces
/// `RunRequest.runner` (untyped JSON); `RunRequest.protocol`; trigger runs are jobs (the
/// `trigger` call and `EventKind::TriggerProgress` are gone; `JobKind::Trigger`,
/// `JobInfo.trigger_run`); `EventKind::Progress` names its job's kind and skill;
/// `unwatch_roots`; `DaemonStatus.watched`, `watch_problem` and `forget_roots_after_secs`;
/// `Lenses.failed`.
///
/// 6: the description search is a job (`RunSpec::Optimize`, `JobKind::Optimize`, its typed
/// `OptimizeRequest`, its progress `OptimizeProgress` in `EventKind::Progress`,
/// `JobInfo.optimization` and `JobInfo.note`); `TriggerRequest.when_to_use`.
pub const PROTOCOL_VERSION: u32 = 6;

/// The largest frame either side accepts: a bigger length prefix closes the connection
/// instead of allocating (a malformed or hostile client cannot exhaust the daemon's memory).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// The longest a `next_events` call may wait before answering with no events.
pub const MAX_EVENT_WAIT_MS: u64 = 30_000;

/// Why the daemon refused or could not answer a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct RpcError {
    /// The kind of failure, for clients that react differently (e.g. exit codes).
    pub kind: RpcErrorKind,
    /// What was expected, what was found, and where.
    pub message: String,
}

/// Kinds of [`RpcError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RpcErrorKind {
    /// The request names something that does not exist (job, skill, run, folder).
    NotFound,
    /// The request is malformed or contradicts itself.
    Invalid,
    /// The history database failed.
    Store,
    /// The daemon is shutting down.
    ShuttingDown,
}

impl RpcError {
    /// A [`RpcErrorKind::NotFound`] error.
    pub fn not_found(message: impl Into<String>) -> RpcError {
        RpcError {
            kind: RpcErrorKind::NotFound,
            message: message.into(),
        }
    }

    /// A [`RpcErrorKind::Invalid`] error.
    pub fn invalid(message: impl Into<String>) -> RpcError {
        RpcError {
            kind: RpcErrorKind::Invalid,
            message: message.into(),
        }
    }

    /// A [`RpcErrorKind::Store`] error.
    pub fn store(message: impl Into<String>) -> RpcError {
        RpcError {
            kind: RpcErrorKind::Store,
            message: message.into(),
        }
    }
}

/// The daemon's service. Every call answers; failures are `Err(RpcError)`, never a dropped
/// connection.
#[tarpc::service]
pub trait DaemonRpc {
    /// Who is running, where its files are, how busy it is.
    async fn status() -> DaemonStatus;
    /// Check a skill folder (or one SKILL.md / eval file's skill) from disk.
    async fn check(path: PathBuf) -> Result<Vec<CheckedFile>, RpcError>;
    /// Queue a run on the daemon's own environment (editor runs, reruns); answers at once
    /// with the queued job. A request of a kind the daemon does not know is refused with both
    /// protocol versions named.
    async fn enqueue_run(request: RunRequest) -> Result<JobInfo, RpcError>;
    /// Queue a run that reads `env`, the asking client's values of the variables the run
    /// names (`skillwatch run`, `probe`, `trigger`), instead of the daemon's; answers at once
    /// with the job.
    async fn enqueue_client_run(request: RunRequest, env: ClientEnv) -> Result<JobInfo, RpcError>;
    /// One job.
    async fn run_status(job: JobId) -> Result<JobInfo, RpcError>;
    /// Cancel a queued or running job (its agent processes are killed); answers with the job.
    async fn cancel(job: JobId) -> Result<JobInfo, RpcError>;
    /// Jobs, newest first.
    async fn list_runs(filter: JobFilter) -> Result<Vec<JobInfo>, RpcError>;
    /// `skillwatch history --json`'s document (`skillwatch_daemon::server::queries::
    /// HistoryReport` as JSON).
    async fn history(query: HistoryQuery) -> Result<serde_json::Value, RpcError>;
    /// A comparison of two runs (`skillwatch_daemon::store::RunComparison` as JSON).
    async fn compare(request: CompareRequest) -> Result<serde_json::Value, RpcError>;
    /// Every skill with history on a model, compared with another: lift, security and
    /// triggers per skill (a list of `skillwatch_daemon::server::queries::CompareAllRow` as
    /// JSON).
    async fn compare_all(request: CompareAllRequest) -> Result<serde_json::Value, RpcError>;
    /// What the editor shows for the skill in `skill_dir`.
    async fn lenses(skill_dir: PathBuf) -> Result<Lenses, RpcError>;
    /// Skills under the watched roots.
    async fn tracked_skills() -> Result<Vec<TrackedSkill>, RpcError>;
    /// Watch more roots (an editor's folders of skills, `daemon start --root`), or mark known
    /// ones used; answers with all roots.
    async fn watch_roots(roots: Vec<PathBuf>) -> Result<Vec<PathBuf>, RpcError>;
    /// Queue a model-change run of every tracked skill with evals on `model` (on `harness`,
    /// or every harness whose config lists a model).
    async fn rerun_all(model: String, harness: Option<String>) -> Result<Vec<JobInfo>, RpcError>;
    /// Events after `cursor`, waiting up to `wait_ms` (at most [`MAX_EVENT_WAIT_MS`]) for one.
    async fn next_events(cursor: u64, wait_ms: u64) -> EventBatch;
    /// Stop the daemon gracefully (as SIGTERM does).
    async fn shutdown();
    /// Stop watching roots and forget them (`skillwatch daemon unwatch`); every path must be a
    /// watched root. Answers with the roots left.
    async fn unwatch_roots(roots: Vec<PathBuf>) -> Result<Vec<PathBuf>, RpcError>;
}
