//! Watching roots: a saved SKILL.md or eval file is checked at once (a `checked` event for
//! editors) and, when its `skillwatch.toml` says `rerun_on_save`, a paired rerun is queued on
//! every model the config lists (the runner reuses the cached baseline, so an edited SKILL.md
//! reruns only the with-skill condition). A saved `skillwatch.toml` is read again, and models
//! it newly lists trigger model-change reruns.
//!
//! One OS watcher for every root (one inotify instance on Linux, [`folders`] says how its
//! watches are laid out), made at the first root; its thread hands events to one async task,
//! which waits out each path's quiet time ([`debounce`]). A root remembers when it was last
//! used (asked for, saved under, shown in an editor); one unused for the daemon's
//! `--forget-roots-after` is unwatched and forgotten.

mod debounce;
mod folders;
mod tracked;

use tracked::tracked_and_check_options;
pub use tracked::tracked_skills;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use notify::EventKind as FsEventKind;
use skillwatch_core::checks::check_skill_dir;
use skillwatch_core::config::{CheckConfig, ConfigError};
use skillwatch_core::evalspec::skill_dir_for_eval_file;
use skillwatch_core::skill::{SKILL_FILE, SKIPPED_DIRS};
use skillwatch_protocol::{EventKind, JobTrigger, RpcError, RunRequest, TrackedSkill, WatchedRoot};
use tokio::sync::mpsc;

use crate::config;
use crate::events::EventLog;
use crate::scheduler::{Scheduler, lock, plan_model_changes};
use crate::store::Store;
use crate::store::time::now_ms;
use debounce::Pending;
use folders::{Folders, NotifyBackend};

/// A root's use is written to the history at most this often (it is kept in memory between).
const USE_WRITE_EVERY_MS: i64 = 60_000;

/// What a batch of changed paths asks for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Skill folders with a saved SKILL.md or eval file, and the first such file seen.
    pub skills: BTreeMap<PathBuf, PathBuf>,
    /// `skillwatch.toml` files that changed.
    pub configs: BTreeSet<PathBuf>,
}

/// Sort changed paths into saved skills and changed configs; everything else is ignored.
pub fn classify(paths: impl IntoIterator<Item = PathBuf>) -> Changes {
    let mut changes = Changes::default();
    for path in paths {
        if path
            .components()
            .any(|c| SKIPPED_DIRS.iter().any(|s| c.as_os_str() == *s))
        {
            continue;
        }
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let skill_dir = match name {
            config::FILE_NAME => {
                changes.configs.insert(path.clone());
                None
            }
            SKILL_FILE => path.parent().map(Path::to_path_buf),
            "eval.yaml" | "eval.yml" | "evals.json" => skill_dir_for_eval_file(&path),
            _ => None,
        };
        if let Some(dir) = skill_dir {
            changes.skills.entry(dir).or_insert(path);
        }
    }
    changes
}

/// The watcher. Clones share it.
#[derive(Clone)]
pub struct Watcher {
    inner: Arc<Inner>,
}

struct Inner {
    scheduler: Scheduler,
    events: Arc<EventLog>,
    roots: Mutex<BTreeMap<PathBuf, Root>>,
    /// The OS watcher's folders; `None` until the first root, or while no watcher can be made.
    folders: Mutex<Option<Folders<NotifyBackend>>>,
    /// Why no OS watcher could be made, said once.
    no_watcher: Mutex<Option<String>>,
    tx: mpsc::UnboundedSender<FsEvent>,
}

/// One watched root.
#[derive(Debug, Clone)]
struct Root {
    /// Its `[daemon] debounce_ms`.
    quiet: Duration,
    /// The folders above it where a `skillwatch.toml` governing it is or may be written
    /// ([`config_dirs`]; each watched alone, for that file).
    config_dirs: Vec<PathBuf>,
    /// Last used (epoch ms), and what the history holds of it.
    used_ms: i64,
    stored_used_ms: i64,
}

/// What the OS watcher's thread hands the event task.
#[derive(Debug)]
enum FsEvent {
    /// A file was written, created or moved into place.
    Changed(PathBuf),
    /// A folder was created or moved in.
    Created(PathBuf),
    /// A file or folder was removed or moved away.
    Removed(PathBuf),
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("roots", &self.roots())
            .finish_non_exhaustive()
    }
}

impl Watcher {
    /// A watcher with no roots yet; its handler task runs until the runtime stops.
    pub fn start(scheduler: Scheduler, events: Arc<EventLog>) -> Watcher {
        let (tx, rx) = mpsc::unbounded_channel();
        let watcher = Watcher {
            inner: Arc::new(Inner {
                scheduler,
                events,
                roots: Mutex::new(BTreeMap::new()),
                folders: Mutex::new(None),
                no_watcher: Mutex::new(None),
                tx,
            }),
        };
        tokio::spawn(watcher.clone().handle_loop(rx));
        watcher
    }

    /// Watch `roots` too (each canonicalized; remembered across restarts) and mark them used,
    /// then queue the model-change runs the new roots' skills call for. Answers with every
    /// root. A root with no skill below it is refused. Blocks (walks the new trees).
    pub fn add_roots(&self, roots: &[PathBuf]) -> Result<Vec<PathBuf>, RpcError> {
        let mut added = Vec::new();
        for root in roots {
            let real = checked_root(root)?;
            if self.add(&real, now_ms())? {
                added.push(real.clone());
            }
            let store = self.inner.scheduler.store().clone();
            if let Err(e) = lock(&store).add_watched_root(&real) {
                tracing::warn!("remembering root {} failed: {e}", real.display());
            }
        }
        if !added.is_empty() {
            self.queue_model_changes_in(&added);
        }
        Ok(self.roots())
    }

    /// Watch a root remembered from an earlier run, last used at `used_ms` (starting the
    /// daemon is no use of it).
    pub fn add_remembered(&self, root: &Path, used_ms: i64) -> Result<(), RpcError> {
        let real = checked_root(root)?;
        if real != root {
            return Err(RpcError::invalid(format!(
                "{}: now leads to {}",
                root.display(),
                real.display()
            )));
        }
        if self.add(&real, used_ms)? {
            self.queue_model_changes_in(&[real]);
        }
        Ok(())
    }

    /// Watch `root` (canonical) unless it is watched, used at `used_ms`; true when it is new.
    fn add(&self, root: &Path, used_ms: i64) -> Result<bool, RpcError> {
        if let Some(r) = self.roots_map().get_mut(root) {
            r.used_ms = r.used_ms.max(used_ms);
            return Ok(false);
        }
        // A folder with no skill has nothing to watch for: an editor opened on any markdown
        // folder must not make the daemon watch (and remember) it.
        if skillwatch_core::skill::discover(root).is_empty() {
            return Err(RpcError::invalid(format!(
                "{}: expected a folder with skills (a SKILL.md below it), found none; not watched",
                root.display()
            )));
        }
        self.watch_tree(root, used_ms);
        tracing::info!(root = %root.display(), "watching");
        Ok(true)
    }

    /// Start watching the tree at `root` (a new root), and the folder of its config when that
    /// lies above it.
    fn watch_tree(&self, root: &Path, used_ms: i64) {
        let dirs = config_dirs(root);
        self.roots_map().insert(
            root.to_path_buf(),
            Root {
                quiet: quiet_time(root),
                config_dirs: dirs.clone(),
                used_ms,
                stored_used_ms: used_ms,
            },
        );
        if let Some(folders) = self.folders().as_mut() {
            folders.add_tree(root);
            for dir in &dirs {
                folders.add_folder(dir);
            }
        }
    }

    /// Stop watching `roots` and forget them; each must be a watched root (a folder already
    /// gone is named as it was watched). Answers with the roots left.
    pub fn remove_roots(&self, roots: &[PathBuf]) -> Result<Vec<PathBuf>, RpcError> {
        let mut known = Vec::new();
        for root in roots {
            let key = root.canonicalize().unwrap_or_else(|_| root.clone());
            if !self.roots_map().contains_key(&key) {
                let watched = self.roots();
                let list = if watched.is_empty() {
                    "none".to_owned()
                } else {
                    watched
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                return Err(RpcError::not_found(format!(
                    "{}: not a watched root (watched: {list})",
                    root.display()
                )));
            }
            known.push(key);
        }
        self.forget(&known, "unwatched");
        Ok(self.roots())
    }

    /// Unwatch and forget every root nobody has used for `after`; answers with them.
    pub fn forget_unused(&self, after: Duration) -> Vec<PathBuf> {
        let cutoff = now_ms().saturating_sub(i64::try_from(after.as_millis()).unwrap_or(i64::MAX));
        let unused: Vec<PathBuf> = self
            .roots_map()
            .iter()
            .filter(|(_, r)| r.used_ms < cutoff)
            .map(|(p, _)| p.clone())
            .collect();
        self.forget(&unused, "unused for longer than --forget-roots-after");
        unused
    }

    fn forget(&self, roots: &[PathBuf], why: &str) {
        if roots.is_empty() {
            return;
        }
        for root in roots {
            self.roots_map().remove(root);
            let store = self.inner.scheduler.store().clone();
            if let Err(e) = lock(&store).remove_watched_root(root) {
                tracing::warn!("forgetting root {} failed: {e}", root.display());
            }
            tracing::info!(root = %root.display(), "no longer watched: {why}");
        }
        let wanted = self.wanted();
        if let Some(folders) = self.folders().as_mut() {
            folders.retain(|dir| wanted.contains(dir));
        }
    }

    /// Mark the roots holding `path` used now (a save, an editor showing a skill), writing
    /// it to `store` at most once a minute per root.
    pub fn touch(&self, path: &Path, store: &mut Store) {
        let now = now_ms();
        let mut roots = self.roots_map();
        for (root, r) in roots.iter_mut().filter(|(root, _)| path.starts_with(root)) {
            r.used_ms = now;
            if now - r.stored_used_ms >= USE_WRITE_EVERY_MS {
                r.stored_used_ms = now;
                if let Err(e) = store.touch_watched_root(root, now) {
                    tracing::warn!("recording the use of {} failed: {e}", root.display());
                }
            }
        }
    }

    /// The roots being watched.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.roots_map().keys().cloned().collect()
    }

    /// The roots with how they are watched and when they were last used.
    pub fn watched(&self) -> Vec<WatchedRoot> {
        let roots = self.roots_map().clone();
        let folders = self.inner.folders.lock().unwrap_or_else(|e| e.into_inner());
        roots
            .into_iter()
            .map(|(path, r)| WatchedRoot {
                folders: folders.as_ref().map_or(0, |f| f.count_below(&path) as u64),
                complete: folders.as_ref().is_some_and(|f| f.complete(&path)),
                path,
                used_ms: r.used_ms,
            })
            .collect()
    }

    /// Why saves under some root are not seen, while that holds.
    pub fn problem(&self) -> Option<String> {
        let no_watcher = self
            .inner
            .no_watcher
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        no_watcher.clone().or_else(|| {
            let folders = self.inner.folders.lock().unwrap_or_else(|e| e.into_inner());
            folders
                .as_ref()
                .and_then(|f| f.problem().map(str::to_owned))
        })
    }

    /// The skills under the roots.
    pub fn tracked(&self) -> Vec<TrackedSkill> {
        tracked_skills(&self.roots())
    }

    /// Queue a model-change run for every tracked skill whose config lists a model the
    /// history has not seen for it.
    pub fn queue_model_changes(&self) {
        self.queue_model_changes_in(&self.roots());
    }

    fn queue_model_changes_in(&self, roots: &[PathBuf]) {
        let skills = tracked_skills(roots);
        let planned = plan_model_changes(&lock(self.inner.scheduler.store()), &skills);
        match planned {
            Ok(requests) => {
                for request in requests {
                    tracing::info!(skill_dir = %request.skill_dir.display(), model = %request.model, "new model for a tracked skill");
                    if let Err(e) = self.inner.scheduler.enqueue(request) {
                        tracing::warn!("queueing a model-change run failed: {e}");
                    }
                }
            }
            Err(e) => tracing::warn!("planning model-change runs failed: {e}"),
        }
    }

    fn roots_map(&self) -> MutexGuard<'_, BTreeMap<PathBuf, Root>> {
        self.inner.roots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The OS watcher's folders, making the watcher when there is none yet (and watching
    /// every known root with it). Stays `None` while no watcher can be made; that is said
    /// once.
    fn folders(&self) -> MutexGuard<'_, Option<Folders<NotifyBackend>>> {
        let mut folders = self.inner.folders.lock().unwrap_or_else(|e| e.into_inner());
        if folders.is_some() {
            return folders;
        }
        let mut said = self
            .inner
            .no_watcher
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        match os_watcher(self.inner.tx.clone()) {
            Ok(backend) => {
                if said.take().is_some() {
                    tracing::info!("a file watcher could be made now");
                }
                let mut made = Folders::new(backend);
                for (root, r) in self.roots_map().iter() {
                    made.add_tree(root);
                    for dir in &r.config_dirs {
                        made.add_folder(dir);
                    }
                }
                *folders = Some(made);
            }
            Err(e) => {
                let message = folders::instance_message(&e);
                if said.is_none() {
                    tracing::warn!("{message}");
                }
                *said = Some(message);
            }
        }
        folders
    }

    /// The folders the roots want watched: every root and its config folder (the roots'
    /// trees are checked by prefix).
    fn wanted(&self) -> Wanted {
        let roots = self.roots_map();
        Wanted {
            roots: roots.keys().cloned().collect(),
            config_dirs: roots.values().flat_map(|r| r.config_dirs.clone()).collect(),
        }
    }

    async fn handle_loop(self, mut rx: mpsc::UnboundedReceiver<FsEvent>) {
        let mut pending = Pending::default();
        loop {
            let next = pending.next_due();
            let wait = async {
                match next {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                event = rx.recv() => match event {
                    Some(event) => self.on_fs_event(event, &mut pending).await,
                    None => return,
                },
                () = wait => {
                    let due = pending.take_due(tokio::time::Instant::now());
                    self.on_changes(due).await;
                }
            }
        }
    }

    async fn on_fs_event(&self, event: FsEvent, pending: &mut Pending) {
        match event {
            FsEvent::Changed(path) => {
                if let Some(quiet) = self.quiet_for(&path) {
                    pending.push(path, quiet, tokio::time::Instant::now());
                }
            }
            FsEvent::Created(dir) => {
                let me = self.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    let wanted = me.wanted();
                    if let Some(folders) = me.folders().as_mut() {
                        folders.created(&dir, |d| wanted.root_of(d));
                    }
                })
                .await;
            }
            FsEvent::Removed(path) => {
                if let Some(folders) = self
                    .inner
                    .folders
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .as_mut()
                {
                    folders.removed(&path);
                }
                let gone: Vec<PathBuf> = self
                    .roots()
                    .into_iter()
                    .filter(|root| root.starts_with(&path) && !root.exists())
                    .collect();
                self.forget(&gone, "its folder was removed");
            }
        }
    }

    /// The quiet time of a changed path a root cares about: a file under a root, or the
    /// `skillwatch.toml` above one. `None` for anything else.
    fn quiet_for(&self, path: &Path) -> Option<Duration> {
        let roots = self.roots_map();
        let under = roots
            .iter()
            .filter(|(root, _)| path.starts_with(root))
            .max_by_key(|(root, _)| root.components().count());
        if let Some((_, r)) = under {
            return Some(r.quiet);
        }
        let is_config = path.file_name().is_some_and(|n| n == config::FILE_NAME);
        let parent = path.parent()?;
        roots
            .values()
            .find(|r| is_config && r.config_dirs.iter().any(|d| d == parent))
            .map(|r| r.quiet)
    }

    async fn on_changes(&self, paths: Vec<PathBuf>) {
        let changes = classify(paths);
        for (dir, path) in changes.skills {
            self.on_saved(dir, path).await;
        }
        if !changes.configs.is_empty() {
            for path in &changes.configs {
                self.on_config(path);
            }
            let me = self.clone();
            let _ = tokio::task::spawn_blocking(move || {
                me.reread_settings();
                me.queue_model_changes();
            })
            .await;
        }
    }

    /// A config changed: read every root's quiet time again.
    fn reread_settings(&self) {
        for root in self.roots() {
            let quiet = quiet_time(&root);
            if let Some(r) = self.roots_map().get_mut(&root) {
                r.quiet = quiet;
            }
        }
    }

    async fn on_saved(&self, dir: PathBuf, path: PathBuf) {
        tracing::info!(file = %path.display(), "saved");
        let skill = {
            let (dir, me) = (dir.clone(), self.clone());
            tokio::task::spawn_blocking(move || {
                me.touch(&dir, &mut lock(me.inner.scheduler.store()));
                let root = dir.parent().unwrap_or(&dir).to_path_buf();
                // A broken [check] table was reported when it was saved (ConfigReloaded);
                // the save is still checked, under the defaults.
                let (skill, options) = tracked_and_check_options(&dir, &root);
                (skill, check_skill_dir(&dir, &options))
            })
            .await
        };
        let Ok((skill, reports)) = skill else {
            tracing::error!(dir = %dir.display(), "checking the saved skill failed");
            return;
        };
        self.inner.events.publish(EventKind::Checked {
            skill_dir: dir.clone(),
            path,
            diagnostics: reports.into_iter().flat_map(|r| r.diagnostics).collect(),
        });
        if !(skill.rerun_on_save && skill.has_evals) {
            return;
        }
        for (harness, model) in &skill.models {
            let mut request = RunRequest::new(&dir, harness, model);
            request.trigger = JobTrigger::Save;
            match self.inner.scheduler.enqueue_coalesced(request) {
                Ok(Some(job)) => tracing::info!(job = %job.id, "rerun on save queued"),
                Ok(None) => tracing::debug!("a rerun on save is already waiting"),
                Err(e) => tracing::warn!("queueing a rerun on save failed: {e}"),
            }
        }
    }

    fn on_config(&self, path: &Path) {
        let error = if path.exists() {
            // The daemon's tables and [check], from one read of the file.
            std::fs::read_to_string(path)
                .map_err(|e| ConfigError::read(path, &e))
                .and_then(|text| {
                    config::Config::parse(&text, path)?;
                    CheckConfig::parse(&text, path).map(drop)
                })
                .err()
                .map(|e| e.to_string())
        } else {
            None
        };
        match &error {
            Some(e) => tracing::warn!("{e}"),
            None => tracing::info!(config = %path.display(), "configuration reloaded"),
        }
        self.inner.events.publish(EventKind::ConfigReloaded {
            path: path.to_path_buf(),
            error,
        });
    }
}

/// The folders the roots want watched.
struct Wanted {
    roots: Vec<PathBuf>,
    config_dirs: BTreeSet<PathBuf>,
}

impl Wanted {
    fn contains(&self, dir: &Path) -> bool {
        self.config_dirs.contains(dir) || self.root_of(dir).is_some()
    }

    /// The root whose tree holds `dir`.
    fn root_of(&self, dir: &Path) -> Option<PathBuf> {
        self.roots.iter().find(|r| dir.starts_with(r)).cloned()
    }
}

/// `root` as a folder to watch: canonical, and a folder.
fn checked_root(root: &Path) -> Result<PathBuf, RpcError> {
    let real = root.canonicalize().map_err(|e| {
        RpcError::not_found(format!(
            "{}: expected a folder to watch, found none ({e})",
            root.display()
        ))
    })?;
    if !real.is_dir() {
        return Err(RpcError::invalid(format!(
            "{}: expected a folder to watch, found a file",
            real.display()
        )));
    }
    Ok(real)
}

/// The quiet time after a save under `root` (its config's `[daemon] debounce_ms`).
fn quiet_time(root: &Path) -> Duration {
    let quiet = config::for_dir(root)
        .map(|(_, c)| c.daemon.debounce_ms)
        .unwrap_or(config::DEFAULT_DEBOUNCE_MS)
        .clamp(20, 10_000);
    Duration::from_millis(quiet)
}

/// How many folders above a root may hold its `skillwatch.toml` (a repository's skills folder
/// is seldom deeper below the repository's root).
const CONFIG_LEVELS: usize = 4;

/// The folders above `root` where the `skillwatch.toml` governing it is or may be written
/// later (an editor saves a first run's choice at the repository's root): each up to the
/// nearest holding `.git` or a `skillwatch.toml`, at most [`CONFIG_LEVELS`], never the home
/// folder nor a folder right under `/` (watched alone, they would report every file the user
/// touches there).
fn config_dirs(root: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let marked = |dir: &Path| {
        skillwatch_core::skill::PROJECT_MARKERS
            .iter()
            .any(|m| dir.join(m).exists())
    };
    let mut dirs = Vec::new();
    if marked(root) {
        return dirs;
    }
    for dir in root.ancestors().skip(1).take(CONFIG_LEVELS) {
        let top = dir.parent().is_none_or(|p| p.parent().is_none());
        if top || home.as_deref() == Some(dir) {
            break;
        }
        dirs.push(dir.to_path_buf());
        if marked(dir) {
            break;
        }
    }
    dirs
}

/// The OS watcher, its events sorted on its own thread into what the event task needs
/// (reads and metadata changes are dropped there).
fn os_watcher(tx: mpsc::UnboundedSender<FsEvent>) -> notify::Result<NotifyBackend> {
    use notify::Watcher as _;
    use notify::event::{ModifyKind, RenameMode};
    let handler = move |result: notify::Result<notify::Event>| {
        let event = match result {
            Ok(event) => event,
            Err(e) => return tracing::warn!("file watcher: {e}"),
        };
        let mut paths = event.paths.into_iter();
        let send = |e: FsEvent| {
            let _ = tx.send(e);
        };
        let arrived = |path: PathBuf| {
            if path.is_dir() {
                send(FsEvent::Created(path.clone()));
            }
            send(FsEvent::Changed(path));
        };
        match event.kind {
            FsEventKind::Create(_) | FsEventKind::Modify(ModifyKind::Name(RenameMode::To)) => {
                paths.for_each(arrived);
            }
            FsEventKind::Modify(ModifyKind::Name(RenameMode::Both)) => {
                if let Some(from) = paths.next() {
                    send(FsEvent::Removed(from));
                }
                paths.for_each(arrived);
            }
            FsEventKind::Modify(ModifyKind::Name(RenameMode::From)) | FsEventKind::Remove(_) => {
                paths.for_each(|p| send(FsEvent::Removed(p)));
            }
            FsEventKind::Modify(ModifyKind::Metadata(_)) => {}
            FsEventKind::Modify(_) => paths.for_each(|p| send(FsEvent::Changed(p))),
            _ => {}
        }
    };
    let watcher = notify::RecommendedWatcher::new(handler, notify::Config::default())?;
    Ok(NotifyBackend(watcher))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_files_are_sorted_by_what_they_ask_for() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("pdf");
        std::fs::create_dir_all(skill.join("evals")).unwrap();
        std::fs::write(skill.join(SKILL_FILE), "---\nname: pdf\n---\n").unwrap();
        let changes = classify([
            skill.join(SKILL_FILE),
            skill.join("evals/evals.json"),
            skill.join("notes.txt"),
            tmp.path().join(config::FILE_NAME),
            tmp.path().join("node_modules/x/SKILL.md"),
        ]);
        assert_eq!(changes.skills.len(), 1);
        assert_eq!(changes.skills[&skill], skill.join(SKILL_FILE));
        assert_eq!(
            changes.configs.into_iter().collect::<Vec<_>>(),
            vec![tmp.path().join(config::FILE_NAME)]
        );
    }
}
