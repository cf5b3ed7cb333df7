//! Where code lenses get their numbers: the history of paired runs (and of probe runs, for
//! the security lens).
//!
//! [`History`] is an enum over the ways to reach that history: through the daemon
//! ([`History::Daemon`], its `lenses` call) when the server is connected to one, else by
//! opening the SQLite store read-only ([`History::Store`]). A daemon call that fails falls
//! back to the store. Lenses only see [`ModelLift`] and [`CaseResult`], whichever way.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use skillwatch_core::scoring::Interval;
use skillwatch_core::skill::{SKILL_FILE, load_document};
use skillwatch_daemon::client;
use skillwatch_daemon::server::queries;
use skillwatch_daemon::store::{Store, StoreError};
use skillwatch_protocol::{
    DaemonRpcClient, LensFailed, LensLift, LensSecurity, LensTrigger, Lenses, ModelComparison,
};

/// How long a lens waits for the daemon before reading the store itself.
const DAEMON_TIMEOUT: Duration = Duration::from_secs(5);

/// The latest lift of a skill on one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelLift {
    /// The model the paired runs used.
    pub model: String,
    /// The harness that ran them (shown when a model ran on several harnesses).
    pub harness: String,
    /// The headline lift (with-skill minus baseline); `None` when no case had a complete pair.
    pub lift: Option<f64>,
    /// The interval around it (bounds, level and n), when the run had enough cases for one.
    pub interval: Option<Interval>,
    /// The verdict's label (`improves`, `no change`, `inconclusive (n too small)`, ...), from
    /// the one verdict rule (`core::scoring::verdict`).
    pub verdict: Option<String>,
    /// How many completed runs of this skill on this model the history holds.
    pub runs: usize,
    /// When the latest run finished.
    pub finished_at: SystemTime,
    /// S and status of the newest completed probe run on the same harness and model.
    pub security: Option<LensSecurity>,
    /// The plugin arm's lift in the same run, when it had one.
    pub plugin_lift: Option<f64>,
}

impl From<LensLift> for ModelLift {
    fn from(l: LensLift) -> ModelLift {
        ModelLift {
            model: l.model,
            harness: l.harness,
            lift: l.lift,
            interval: l.interval,
            verdict: l.verdict.map(|d| d.label()),
            runs: l.runs,
            finished_at: epoch_ms(l.finished_ms),
            security: l.security,
            plugin_lift: l.plugin_lift,
        }
    }
}

/// The last result of one eval case on one model.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The case's name (eval.yaml) or id (evals.json).
    pub case: String,
    /// The model of the run.
    pub model: String,
    /// The case's lift in that run.
    pub lift: Option<f64>,
    /// The case was edited since: the result measured other content.
    pub stale: bool,
    /// When the run finished.
    pub finished_at: SystemTime,
}

/// Why the history could not be read. Lenses then say so instead of showing numbers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// No history database is configured, or it does not exist yet.
    #[error("no history database: {0}")]
    Unavailable(String),
    /// The store answered with an error.
    #[error("history database {path}: {message}")]
    Store {
        /// The database file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// A way to read the history of paired runs.
#[derive(Debug, Clone)]
pub enum History {
    /// No history configured: lenses say so.
    None,
    /// The SQLite history database at this path, opened per query (WAL lets the daemon and
    /// the CLI write meanwhile).
    Store(PathBuf),
    /// The daemon, serving the database at `db`.
    Daemon(DaemonHistory),
}

/// A connected daemon, callable from the blocking threads lenses are computed on.
#[derive(Debug, Clone)]
pub struct DaemonHistory {
    /// The RPC client.
    pub client: DaemonRpcClient,
    /// The runtime the client's connection runs on.
    pub runtime: tokio::runtime::Handle,
    /// The daemon's database: polled for changes, and read directly when a call fails.
    pub db: PathBuf,
}

impl DaemonHistory {
    /// The daemon's answer for `skill_dir`, or `None` when the call failed at the transport
    /// level (the caller falls back to the store). Call from a blocking thread.
    fn lenses(&self, skill_dir: &Path) -> Option<Result<Lenses, HistoryError>> {
        let call = self
            .client
            .lenses(client::context(DAEMON_TIMEOUT), skill_dir.to_path_buf());
        match self.runtime.block_on(call) {
            Ok(Ok(lenses)) => Some(Ok(lenses)),
            Ok(Err(e)) => Some(Err(HistoryError::Store {
                path: self.db.clone(),
                message: e.to_string(),
            })),
            Err(e) => {
                tracing::warn!("the daemon did not answer ({e}); reading the history directly");
                None
            }
        }
    }
}

impl History {
    /// The latest lift per model for the skill in `skill_dir`, sorted by model.
    pub fn skill_lifts(&self, skill_dir: &Path) -> Result<Vec<ModelLift>, HistoryError> {
        if let History::Daemon(daemon) = self {
            return match daemon.lenses(skill_dir) {
                Some(lenses) => Ok(lenses?.lifts.into_iter().map(ModelLift::from).collect()),
                None => History::Store(daemon.db.clone()).skill_lifts(skill_dir),
            };
        }
        let (store, skill) = self.open(skill_dir)?;
        let Some(skill) = skill else {
            return Ok(Vec::new());
        };
        let lifts = queries::lens_lifts(&store, &skill).map_err(|e| HistoryError::Store {
            path: store.path().to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(lifts.into_iter().map(ModelLift::from).collect())
    }

    /// The last result of every case of the skill in `skill_dir`, per model.
    pub fn case_results(&self, skill_dir: &Path) -> Result<Vec<CaseResult>, HistoryError> {
        if let History::Daemon(daemon) = self {
            return match daemon.lenses(skill_dir) {
                Some(lenses) => Ok(lenses?
                    .cases
                    .into_iter()
                    .map(|c| CaseResult {
                        case: c.case,
                        model: c.model,
                        lift: c.lift,
                        stale: c.stale,
                        finished_at: epoch_ms(c.finished_ms),
                    })
                    .collect()),
                None => History::Store(daemon.db.clone()).case_results(skill_dir),
            };
        }
        let (store, skill) = self.open(skill_dir)?;
        let Some(skill) = skill else {
            return Ok(Vec::new());
        };
        let results = store
            .case_results(&skill)
            .map_err(|e| store_error(&store, e))?;
        Ok(results
            .into_iter()
            .map(|r| CaseResult {
                case: r.case,
                model: r.model,
                lift: r.lift,
                stale: r.stale,
                finished_at: epoch_ms(r.finished_ms.unwrap_or(0)),
            })
            .collect())
    }

    /// The newest model comparison per harness of the skill in `skill_dir` (regressed ones
    /// become SW501 warnings on its SKILL.md).
    pub fn comparisons(&self, skill_dir: &Path) -> Result<Vec<ModelComparison>, HistoryError> {
        if let History::Daemon(daemon) = self {
            return match daemon.lenses(skill_dir) {
                Some(lenses) => Ok(lenses?.comparisons),
                None => History::Store(daemon.db.clone()).comparisons(skill_dir),
            };
        }
        let (store, skill) = self.open(skill_dir)?;
        let Some(skill) = skill else {
            return Ok(Vec::new());
        };
        store
            .latest_model_comparisons(&skill)
            .map_err(|e| store_error(&store, e))
    }

    /// Per (harness, model) of the skill in `skill_dir` whose newest finished run failed:
    /// that run.
    pub fn skill_failures(&self, skill_dir: &Path) -> Result<Vec<LensFailed>, HistoryError> {
        if let History::Daemon(daemon) = self {
            return match daemon.lenses(skill_dir) {
                Some(lenses) => Ok(lenses?.failed),
                None => History::Store(daemon.db.clone()).skill_failures(skill_dir),
            };
        }
        let (store, skill) = self.open(skill_dir)?;
        let Some(skill) = skill else {
            return Ok(Vec::new());
        };
        skillwatch_daemon::server::queries::lens_failed(&store, &skill).map_err(|e| {
            HistoryError::Store {
                path: store.path().to_path_buf(),
                message: e.to_string(),
            }
        })
    }

    /// The newest trigger rates of the skill in `skill_dir` per (harness, model): the
    /// `description:` line's lenses.
    pub fn skill_triggers(&self, skill_dir: &Path) -> Result<Vec<LensTrigger>, HistoryError> {
        if let History::Daemon(daemon) = self {
            return match daemon.lenses(skill_dir) {
                Some(lenses) => Ok(lenses?.triggers),
                None => History::Store(daemon.db.clone()).skill_triggers(skill_dir),
            };
        }
        let (store, skill) = self.open(skill_dir)?;
        let Some(skill) = skill else {
            return Ok(Vec::new());
        };
        skillwatch_daemon::server::queries::trigger_lenses(&store, &skill).map_err(|e| {
            HistoryError::Store {
                path: store.path().to_path_buf(),
                message: e.to_string(),
            }
        })
    }

    /// Open the store and find the name the history knows the skill by: its folder name, or
    /// (when the folder was renamed) the `name` in its SKILL.md. `None`: the skill has no runs.
    fn open(&self, skill_dir: &Path) -> Result<(Store, Option<String>), HistoryError> {
        let path = match self {
            History::Store(path) => path,
            History::Daemon(daemon) => &daemon.db,
            History::None => return Err(HistoryError::Unavailable("none configured".into())),
        };
        if !path.exists() {
            return Err(HistoryError::Unavailable(format!(
                "{} does not exist yet",
                path.display()
            )));
        }
        let store = Store::open_existing(path).map_err(|e| HistoryError::Store {
            path: path.clone(),
            message: e.to_string(),
        })?;
        for name in candidate_names(skill_dir) {
            if store.has_skill(&name).map_err(|e| store_error(&store, e))? {
                return Ok((store, Some(name)));
            }
        }
        Ok((store, None))
    }

    /// A value that changes whenever new results land, polled to refresh lenses.
    pub fn generation(&self) -> Option<u64> {
        match self {
            History::None => None,
            History::Store(path) => file_generation(path),
            History::Daemon(daemon) => file_generation(&daemon.db),
        }
    }
}

fn candidate_names(skill_dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(dir) = skill_dir.file_name().and_then(|n| n.to_str()) {
        names.push(dir.to_string());
    }
    if let Ok(doc) = load_document(&skill_dir.join(SKILL_FILE))
        && let Some((name, _)) = doc.field_str("name")
        && !names.iter().any(|n| n == name)
    {
        names.push(name.to_string());
    }
    names
}

fn store_error(store: &Store, error: StoreError) -> HistoryError {
    HistoryError::Store {
        path: store.path().to_path_buf(),
        message: error.to_string(),
    }
}

fn epoch_ms(ms: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

/// Size and modification time of the database and its write-ahead log, folded into one
/// number: any commit changes one of them.
fn file_generation(db: &Path) -> Option<u64> {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    let mut generation = 0u64;
    let mut seen = false;
    for path in [db.to_path_buf(), PathBuf::from(wal)] {
        if let Ok(meta) = std::fs::metadata(&path) {
            seen = true;
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as u64);
            generation = generation
                .wrapping_mul(31)
                .wrapping_add(mtime)
                .wrapping_add(meta.len());
        }
    }
    seen.then_some(generation)
}
