//! Watching workspace roots: a saved SKILL.md or eval file is checked at once (a `checked`
//! event for editors) and, when its `skillwatch.toml` says `rerun_on_save`, a paired rerun is
//! queued on every model the config lists (the runner reuses the cached baseline, so an
//! edited SKILL.md reruns only the with-skill condition). A saved `skillwatch.toml` is read
//! again, and models it newly lists trigger model-change reruns.
//!
//! One debounced `notify` watcher per root (recursive; no file-id cache, to keep memory flat
//! on big trees); the debouncer's thread hands batches of paths to one async task.

mod tracked;

use tracked::tracked_and_check_options;
pub use tracked::tracked_skills;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use notify::{EventKind as FsEventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, NoCache, new_debouncer_opt};
use skillwatch_core::checks::check_skill_dir;
use skillwatch_core::config::{CheckConfig, ConfigError};
use skillwatch_core::evalspec::skill_dir_for_eval_file;
use skillwatch_core::skill::{SKILL_FILE, SKIPPED_DIRS};
use skillwatch_protocol::{EventKind, JobTrigger, RpcError, RunRequest, TrackedSkill};
use tokio::sync::mpsc;

use crate::config;
use crate::events::EventLog;
use crate::scheduler::{Scheduler, lock, plan_model_changes};

type RootWatcher = Debouncer<RecommendedWatcher, NoCache>;

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
    roots: Mutex<BTreeMap<PathBuf, RootWatcher>>,
    tx: mpsc::UnboundedSender<Vec<PathBuf>>,
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
                tx,
            }),
        };
        tokio::spawn(watcher.clone().handle_loop(rx));
        watcher
    }

    /// Watch `roots` too (each canonicalized; remembered across restarts), then queue the
    /// model-change runs the new skills call for. Answers with every root. A root with no
    /// skill below it is refused.
    pub fn add_roots(&self, roots: &[PathBuf]) -> Result<Vec<PathBuf>, RpcError> {
        let mut added = false;
        for root in roots {
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
            if self.roots_map().contains_key(&real) {
                continue;
            }
            // A folder with no skill has nothing to watch for: an editor opened on any
            // markdown folder must not make the daemon watch (and remember) it.
            if skillwatch_core::skill::discover(&real).is_empty() {
                return Err(RpcError::invalid(format!(
                    "{}: expected a folder with skills (a SKILL.md below it), found none; not watched",
                    real.display()
                )));
            }
            let watcher = self
                .watch(&real)
                .map_err(|e| RpcError::invalid(format!("cannot watch {}: {e}", real.display())))?;
            self.roots_map().insert(real.clone(), watcher);
            if let Err(e) = lock(self.inner.scheduler.store()).add_watched_root(&real) {
                tracing::warn!("remembering root {} failed: {e}", real.display());
            }
            tracing::info!(root = %real.display(), "watching");
            added = true;
        }
        if added {
            self.queue_model_changes();
        }
        Ok(self.roots())
    }

    /// The roots being watched.
    pub fn roots(&self) -> Vec<PathBuf> {
        self.roots_map().keys().cloned().collect()
    }

    /// The skills under the roots.
    pub fn tracked(&self) -> Vec<TrackedSkill> {
        tracked_skills(&self.roots())
    }

    /// Queue a model-change run for every tracked skill whose config lists a model the
    /// history has not seen for it.
    pub fn queue_model_changes(&self) {
        let skills = self.tracked();
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

    fn roots_map(&self) -> MutexGuard<'_, BTreeMap<PathBuf, RootWatcher>> {
        self.inner.roots.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn watch(&self, root: &Path) -> notify::Result<RootWatcher> {
        let debounce = config::for_dir(root)
            .map(|(_, c)| c.daemon.debounce_ms)
            .unwrap_or(config::DEFAULT_DEBOUNCE_MS)
            .clamp(20, 10_000);
        let tx = self.inner.tx.clone();
        let handler = move |result: DebounceEventResult| match result {
            Ok(events) => {
                let paths: Vec<PathBuf> = events
                    .into_iter()
                    .filter(|e| is_write(&e.event.kind))
                    .flat_map(|e| e.event.paths)
                    .collect();
                if !paths.is_empty() {
                    let _ = tx.send(paths);
                }
            }
            Err(errors) => {
                for e in errors {
                    tracing::warn!("file watcher: {e}");
                }
            }
        };
        let mut watcher = new_debouncer_opt::<_, RecommendedWatcher, NoCache>(
            Duration::from_millis(debounce),
            Some(Duration::from_millis(debounce / 2)),
            handler,
            NoCache,
            notify::Config::default(),
        )?;
        watcher.watch(root, RecursiveMode::Recursive)?;
        Ok(watcher)
    }

    async fn handle_loop(self, mut rx: mpsc::UnboundedReceiver<Vec<PathBuf>>) {
        while let Some(paths) = rx.recv().await {
            let changes = classify(paths);
            for (dir, path) in changes.skills {
                self.on_saved(dir, path).await;
            }
            if !changes.configs.is_empty() {
                for path in &changes.configs {
                    self.on_config(path);
                }
                self.queue_model_changes();
            }
        }
    }

    async fn on_saved(&self, dir: PathBuf, path: PathBuf) {
        tracing::info!(file = %path.display(), "saved");
        let skill = {
            let dir = dir.clone();
            tokio::task::spawn_blocking(move || {
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

/// Content changes and (re)creations count; reads, metadata and removals do not.
fn is_write(kind: &FsEventKind) -> bool {
    use notify::event::ModifyKind;
    match kind {
        FsEventKind::Create(_) => true,
        FsEventKind::Modify(ModifyKind::Metadata(_)) => false,
        FsEventKind::Modify(_) => true,
        _ => false,
    }
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
