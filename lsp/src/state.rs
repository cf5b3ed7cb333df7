//! The server's shared state: open documents, settings, what the client supports, and where
//! the history lives. One `State` per session, shared by every handler behind an `Arc`.
//!
//! Locks are `std::sync` and are never held across an `.await`: handlers copy what they need
//! (documents are `Arc` snapshots) and release the lock at once.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

use tokio::sync::watch;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{ClientCapabilities, Uri};

use skillwatch_core::skill::skill_root_here;
use skillwatch_protocol::ModelComparison;

use crate::documents::{Document, DocumentKind};
use crate::history::{DaemonHistory, History};
use crate::settings::Settings;

/// One open document and the channel that wakes its diagnostics worker.
#[derive(Debug)]
pub struct OpenDocument {
    /// The current text and version. Replaced copy-on-write, so a worker holding the previous
    /// snapshot never sees a half-applied edit.
    pub doc: Arc<Document>,
    /// Sends each new snapshot to the document's diagnostics worker; dropping it (on close)
    /// ends the worker.
    pub changes: watch::Sender<Arc<Document>>,
}

/// What the client said it supports, reduced to the questions handlers ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientSupport {
    /// `workspace/codeLens/refresh` may be sent.
    pub code_lens_refresh: bool,
    /// `window/workDoneProgress/create` may be sent.
    pub work_done_progress: bool,
    /// `window/showDocument` may be sent.
    pub show_document: bool,
    /// A `workspace/didChangeWatchedFiles` watcher may be registered at run time.
    pub watched_files: bool,
    /// `skillwatch/pickRun` may be sent (`experimental.skillwatch.pickRun`).
    pub pick_run: bool,
}

impl ClientSupport {
    /// Read the flags from the client's `initialize` capabilities.
    pub fn from_capabilities(caps: &ClientCapabilities) -> Self {
        let flag = |b: Option<bool>| b.unwrap_or(false);
        ClientSupport {
            code_lens_refresh: flag(
                caps.workspace
                    .as_ref()
                    .and_then(|w| w.code_lens.as_ref())
                    .and_then(|c| c.refresh_support),
            ),
            work_done_progress: flag(caps.window.as_ref().and_then(|w| w.work_done_progress)),
            show_document: caps
                .window
                .as_ref()
                .and_then(|w| w.show_document.as_ref())
                .is_some_and(|s| s.support),
            watched_files: flag(
                caps.workspace
                    .as_ref()
                    .and_then(|w| w.did_change_watched_files.as_ref())
                    .and_then(|d| d.dynamic_registration),
            ),
            pick_run: caps
                .experimental
                .as_ref()
                .and_then(|e| e.pointer("/skillwatch/pickRun"))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
        }
    }
}

/// Everything a handler can reach.
#[derive(Debug)]
pub struct State {
    /// The connection back to the editor.
    pub client: Client,
    documents: Mutex<HashMap<Uri, OpenDocument>>,
    settings: RwLock<Settings>,
    support: RwLock<ClientSupport>,
    shutdown: AtomicBool,
    background: Mutex<Vec<tokio::task::AbortHandle>>,
    daemon: RwLock<Option<DaemonHistory>>,
    workspace_roots: RwLock<Vec<PathBuf>>,
    regressions: Mutex<HashMap<PathBuf, Vec<ModelComparison>>>,
    /// The daemon link was started (it starts with the first skill file opened).
    linked: AtomicBool,
    /// The roots the connected daemon was asked to watch.
    watched_roots: Mutex<BTreeSet<PathBuf>>,
    /// The root of each skill folder opened ([`skill_root_here`]), worked out once.
    skill_roots: Mutex<HashMap<PathBuf, PathBuf>>,
    /// This session's private folder for history reports, made on first use.
    reports: OnceLock<tempfile::TempDir>,
    /// Gives memory back after documents close.
    pub release: Arc<crate::memory::Release>,
}

impl State {
    /// A fresh session.
    pub fn new(client: Client) -> Self {
        State {
            client,
            documents: Mutex::new(HashMap::new()),
            settings: RwLock::new(Settings::default()),
            support: RwLock::new(ClientSupport::default()),
            shutdown: AtomicBool::new(false),
            background: Mutex::new(Vec::new()),
            daemon: RwLock::new(None),
            workspace_roots: RwLock::new(Vec::new()),
            regressions: Mutex::new(HashMap::new()),
            linked: AtomicBool::new(false),
            watched_roots: Mutex::new(BTreeSet::new()),
            skill_roots: Mutex::new(HashMap::new()),
            reports: OnceLock::new(),
            release: Arc::default(),
        }
    }

    /// Keep a background task (the history poller) to stop when the session ends.
    pub fn add_background(&self, task: tokio::task::AbortHandle) {
        self.background
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(task);
    }

    /// Stop the background tasks: the session is over.
    pub fn stop_background(&self) {
        for task in self
            .background
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            task.abort();
        }
    }

    /// The open documents. A poisoned lock (a handler panicked) is recovered: the map itself
    /// is always in a consistent state between statements.
    pub fn documents(&self) -> MutexGuard<'_, HashMap<Uri, OpenDocument>> {
        self.documents.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current snapshot of an open document.
    pub fn document(&self, uri: &Uri) -> Option<Arc<Document>> {
        self.documents().get(uri).map(|d| d.doc.clone())
    }

    /// A copy of the current settings.
    pub fn settings(&self) -> Settings {
        self.settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Replace the settings.
    pub fn set_settings(&self, settings: Settings) {
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = settings;
    }

    /// What the client supports.
    pub fn support(&self) -> ClientSupport {
        *self.support.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Record what the client supports (at `initialize`).
    pub fn set_support(&self, support: ClientSupport) {
        *self.support.write().unwrap_or_else(|e| e.into_inner()) = support;
    }

    /// Where lenses read the history: the daemon when connected, else the database the
    /// settings name (read directly).
    pub fn history(&self) -> History {
        if let Some(daemon) = self.daemon() {
            return History::Daemon(daemon);
        }
        match self.history_db() {
            Some(path) => History::Store(path),
            None => History::None,
        }
    }

    /// The history database: the settings' `historyDb`, else `$SKILLWATCH_DB` (as the CLI
    /// reads it, so both show one history), else the store's default.
    pub fn history_db(&self) -> Option<PathBuf> {
        self.chosen_history_db().or_else(default_history_db)
    }

    /// The history database the user chose: the settings' `historyDb`, else `$SKILLWATCH_DB`.
    pub fn chosen_history_db(&self) -> Option<PathBuf> {
        self.settings().history_db.or_else(env_history_db)
    }

    /// The connected daemon, if any.
    pub fn daemon(&self) -> Option<DaemonHistory> {
        self.daemon
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Record the daemon connection (or its loss, with `None`).
    pub fn set_daemon(&self, daemon: Option<DaemonHistory>) {
        *self.daemon.write().unwrap_or_else(|e| e.into_inner()) = daemon;
    }

    /// The editor's workspace folders (from `initialize`).
    pub fn workspace_roots(&self) -> Vec<PathBuf> {
        self.workspace_roots
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Record the editor's workspace folders.
    pub fn set_workspace_roots(&self, roots: Vec<PathBuf>) {
        *self
            .workspace_roots
            .write()
            .unwrap_or_else(|e| e.into_inner()) = roots;
    }

    /// The known model comparisons of the skill in `skill_dir`.
    pub fn regressions(&self, skill_dir: &std::path::Path) -> Vec<ModelComparison> {
        self.regressions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(skill_dir)
            .cloned()
            .unwrap_or_default()
    }

    /// Forget the comparisons of a skill whose documents are all closed.
    pub fn forget_regressions(&self, skill_dir: &std::path::Path) {
        self.regressions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(skill_dir);
    }

    /// Replace the comparisons of a skill; true when they changed.
    pub fn set_regressions(&self, skill_dir: PathBuf, found: Vec<ModelComparison>) -> bool {
        let mut map = self.regressions.lock().unwrap_or_else(|e| e.into_inner());
        if map.get(&skill_dir) == Some(&found) {
            return false;
        }
        map.insert(skill_dir, found);
        true
    }

    /// The skill folders of open SKILL.md documents.
    pub fn open_skill_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .documents()
            .values()
            .filter(|d| d.doc.kind == DocumentKind::SkillMd)
            .filter_map(|d| d.doc.skill_dir())
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// Re-check the open documents of the skill in `skill_dir`.
    pub fn recheck_skill(&self, skill_dir: &std::path::Path) {
        for open in self.documents().values() {
            if open.doc.skill_dir().as_deref() == Some(skill_dir) {
                open.changes.send_replace(open.doc.clone());
            }
        }
    }

    /// The `skillwatch` binary lens commands run.
    pub fn cli_path(&self) -> PathBuf {
        self.settings()
            .cli_path
            .or_else(|| std::env::current_exe().ok())
            .unwrap_or_else(|| PathBuf::from("skillwatch"))
    }

    /// True the first time it is asked: the daemon link is to be started now.
    pub fn start_link(&self) -> bool {
        !self.linked.swap(true, Ordering::SeqCst)
    }

    /// The roots a daemon should watch for the open skill files: for each skill, the root
    /// of its folder of skills ([`skill_root_here`]: the folder holding it when that holds
    /// skills, else its project, else itself), the one root the editors start a server for.
    /// Folders without an open skill are never watched.
    pub fn skill_roots(&self) -> BTreeSet<PathBuf> {
        let dirs: BTreeSet<PathBuf> = self
            .documents()
            .values()
            .filter_map(|open| open.doc.skill_dir())
            .collect();
        let mut known = self.skill_roots.lock().unwrap_or_else(|e| e.into_inner());
        dirs.into_iter()
            .map(|dir| {
                known
                    .entry(dir)
                    .or_insert_with_key(|dir| skill_root_here(dir))
                    .clone()
            })
            .collect()
    }

    /// Of `roots`, those not yet asked of the connected daemon, now marked as asked.
    pub fn roots_to_ask(&self, roots: BTreeSet<PathBuf>) -> Vec<PathBuf> {
        let mut asked = self.watched_roots.lock().unwrap_or_else(|e| e.into_inner());
        roots
            .into_iter()
            .filter(|r| asked.insert(r.clone()))
            .collect()
    }

    /// Forget which roots were asked (the daemon went away).
    pub fn forget_asked_roots(&self) {
        self.watched_roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// This session's private folder for history reports (mode 0700, removed with the
    /// session).
    pub fn report_dir(&self) -> std::io::Result<&std::path::Path> {
        if let Some(dir) = self.reports.get() {
            return Ok(dir.path());
        }
        let dir = tempfile::Builder::new()
            .prefix("skillwatch-history-")
            .tempdir()?;
        Ok(self.reports.get_or_init(|| dir).path())
    }

    /// Note that the client asked for `shutdown` (so a following `exit` is clean).
    pub fn mark_shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
    }

    /// Whether `shutdown` was requested.
    pub fn shutdown_requested(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }
}

/// `$SKILLWATCH_DB`, the variable the CLI's `--db` falls back to (empty counts as unset).
fn env_history_db() -> Option<PathBuf> {
    std::env::var_os("SKILLWATCH_DB")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The history database used when the settings name none: the store's default path.
fn default_history_db() -> Option<PathBuf> {
    skillwatch_daemon::store::default_path()
}
