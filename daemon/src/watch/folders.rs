//! The folders the daemon's one file watcher watches, over every root.
//!
//! On Linux each folder gets its own non-recursive inotify watch, all in one inotify instance:
//! a folder under two roots is watched once, unwatching one root leaves the other's folders
//! alone (notify's recursive inotify mode would tear down the shared watches), and the
//! folders an agent skill never lives in (`.git`, `node_modules`, `target`, ...:
//! `skill::SKIPPED_DIRS`, the folders discovery skips) cost no watch. A folder created later
//! under a root is added when its creation is seen. Elsewhere (FSEvents, kqueue, polling) a
//! root is one recursive watch.
//!
//! The system's limit on watches (`fs.inotify.max_user_watches`, ENOSPC) stops a walk where it
//! is: the daemon keeps what it has, says so once with the sysctl that raises the limit, and
//! tries the rest again when a root is unwatched.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use skillwatch_core::skill::SKIPPED_DIRS;
use walkdir::WalkDir;

/// Why a folder could not be watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The system's limit on watches is reached (ENOSPC from `inotify_add_watch`).
    Limit,
    /// The folder went away between the walk and the watch.
    Vanished,
    /// Anything else (permissions, ...), with the OS's words.
    Other(String),
}

impl From<notify::Error> for Failure {
    fn from(e: notify::Error) -> Failure {
        match &e.kind {
            notify::ErrorKind::MaxFilesWatch => Failure::Limit,
            notify::ErrorKind::PathNotFound => Failure::Vanished,
            notify::ErrorKind::Io(io) if io.raw_os_error() == Some(libc::ENOSPC) => Failure::Limit,
            notify::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound => {
                Failure::Vanished
            }
            _ => Failure::Other(e.to_string()),
        }
    }
}

/// What sets and removes the OS watches (notify's watcher; a fake in tests).
pub(crate) trait Backend {
    /// Whether a watch covers one folder (inotify) rather than the tree below it.
    fn per_folder(&self) -> bool;
    /// Watch `dir`: the folder alone, or with `tree` (and a tree backend) everything below it.
    fn watch(&mut self, dir: &Path, tree: bool) -> Result<(), Failure>;
    /// Stop watching `dir` (a folder already gone is no error).
    fn unwatch(&mut self, dir: &Path);
}

/// notify's recommended watcher as a [`Backend`].
pub(crate) struct NotifyBackend(pub(crate) notify::RecommendedWatcher);

impl Backend for NotifyBackend {
    fn per_folder(&self) -> bool {
        cfg!(target_os = "linux")
    }

    fn watch(&mut self, dir: &Path, tree: bool) -> Result<(), Failure> {
        use notify::Watcher as _;
        let mode = if tree && !self.per_folder() {
            notify::RecursiveMode::Recursive
        } else {
            notify::RecursiveMode::NonRecursive
        };
        self.0.watch(dir, mode).map_err(Failure::from)
    }

    fn unwatch(&mut self, dir: &Path) {
        use notify::Watcher as _;
        if let Err(e) = self.0.unwatch(dir) {
            tracing::debug!(dir = %dir.display(), "unwatching: {e}");
        }
    }
}

/// The watched folders.
pub(crate) struct Folders<B> {
    backend: B,
    watched: BTreeSet<PathBuf>,
    /// Roots whose walk the limit stopped.
    short: BTreeSet<PathBuf>,
    /// What went wrong last, said once in the log and kept for `daemon status`.
    problem: Option<String>,
    limit_said: bool,
}

/// Whether a folder is one discovery skips (so no skill lives there).
pub(crate) fn skipped(dir: &Path) -> bool {
    dir.components()
        .any(|c| SKIPPED_DIRS.iter().any(|s| c.as_os_str() == *s))
}

impl<B: Backend> Folders<B> {
    pub(crate) fn new(backend: B) -> Folders<B> {
        Folders {
            backend,
            watched: BTreeSet::new(),
            short: BTreeSet::new(),
            problem: None,
            limit_said: false,
        }
    }

    /// Watch the tree at `root` (every folder below it but the skipped ones; symlinks are
    /// not followed). False when the limit stopped the walk.
    pub(crate) fn add_tree(&mut self, root: &Path) -> bool {
        if !self.backend.per_folder() {
            return self.add(root, true, root);
        }
        let walk = WalkDir::new(root)
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !skipped(Path::new(e.file_name())));
        for entry in walk.flatten() {
            if entry.file_type().is_dir() && !self.add(entry.path(), false, root) {
                return false;
            }
        }
        self.short.remove(root);
        true
    }

    /// Watch the folder `dir` alone (the folder of a `skillwatch.toml` above a root).
    pub(crate) fn add_folder(&mut self, dir: &Path) -> bool {
        self.add(dir, false, dir)
    }

    fn add(&mut self, dir: &Path, tree: bool, root: &Path) -> bool {
        if self.watched.contains(dir) {
            return true;
        }
        match self.backend.watch(dir, tree) {
            Ok(()) => {
                self.watched.insert(dir.to_path_buf());
                true
            }
            Err(Failure::Limit) => {
                self.short.insert(root.to_path_buf());
                let message = limit_message(root, self.count_below(root));
                if !self.limit_said {
                    tracing::warn!("{message}");
                    self.limit_said = true;
                } else {
                    tracing::debug!("{message}");
                }
                self.problem = Some(message);
                false
            }
            Err(Failure::Vanished) => true,
            Err(Failure::Other(why)) => {
                tracing::warn!(dir = %dir.display(), "cannot watch: {why}");
                true
            }
        }
    }

    /// A folder was created or moved in at `dir`: watch its tree when it lies under a root
    /// (`root_of`) and not in a skipped folder.
    pub(crate) fn created(&mut self, dir: &Path, root_of: impl Fn(&Path) -> Option<PathBuf>) {
        if !self.backend.per_folder() || self.watched.contains(dir) {
            return;
        }
        let Some(root) = root_of(dir) else { return };
        if !dir.strip_prefix(&root).is_ok_and(skipped) {
            self.add_tree(dir);
        }
    }

    /// The folder at `path` was removed or moved away: the OS dropped its watches.
    pub(crate) fn removed(&mut self, path: &Path) {
        let gone: Vec<PathBuf> = self.below(path).cloned().collect();
        for dir in gone {
            self.watched.remove(&dir);
        }
    }

    /// Unwatch every folder `wanted` no longer wants; then, if any went and a walk had stopped
    /// at the limit, try those roots again.
    pub(crate) fn retain(&mut self, wanted: impl Fn(&Path) -> bool) {
        let unwanted: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|d| !wanted(d))
            .cloned()
            .collect();
        for dir in &unwanted {
            self.backend.unwatch(dir);
            self.watched.remove(dir);
        }
        self.short.retain(|root| wanted(root));
        if !unwanted.is_empty() {
            let short: Vec<PathBuf> = self.short.iter().cloned().collect();
            for root in short {
                self.add_tree(&root);
            }
            if self.short.is_empty() {
                self.problem = None;
            }
        }
    }

    fn below<'a>(&'a self, path: &'a Path) -> impl Iterator<Item = &'a PathBuf> + 'a {
        self.watched
            .range(path.to_path_buf()..)
            .take_while(move |d| d.starts_with(path))
    }

    /// How many folders at or below `path` are watched.
    pub(crate) fn count_below(&self, path: &Path) -> usize {
        self.below(path).count()
    }

    /// Whether every folder of `root`'s tree is watched (no limit stopped its walk).
    pub(crate) fn complete(&self, root: &Path) -> bool {
        !self.short.contains(root)
    }

    /// Whether `dir` has a watch.
    #[cfg(test)]
    pub(crate) fn is_watched(&self, dir: &Path) -> bool {
        self.watched.contains(dir)
    }

    /// What went wrong, while it holds.
    pub(crate) fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }
}

/// A kernel setting under /proc/sys/fs/inotify, when readable.
fn inotify_setting(name: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/sys/fs/inotify/{name}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// What the user reads when the watch limit stops a walk.
fn limit_message(root: &Path, watched: usize) -> String {
    let now = inotify_setting("max_user_watches").map_or_else(String::new, |n| {
        format!(" (fs.inotify.max_user_watches = {n})")
    });
    format!(
        "the system's limit on file watches is reached{now}: {watched} folders under {} are \
         watched, saves in the others are not seen; the daemon goes on with what it has. \
         Raise the limit with `sudo sysctl fs.inotify.max_user_watches=524288` (and \
         `echo fs.inotify.max_user_watches=524288 | sudo tee /etc/sysctl.d/90-inotify.conf` \
         to keep it), or unwatch roots with `skillwatch daemon unwatch PATH`",
        root.display()
    )
}

/// What the user reads when no file watcher can be made (no inotify instance left, or no file
/// descriptor).
pub(crate) fn instance_message(error: &notify::Error) -> String {
    let now = inotify_setting("max_user_instances").map_or_else(String::new, |n| {
        format!(" (fs.inotify.max_user_instances = {n})")
    });
    format!(
        "cannot create a file watcher: {error}; saves are not seen until one can be made (the \
         daemon tries again when a root is added) and everything else works. Other programs \
         hold this user's inotify instances{now}: raise the limit with `sudo sysctl \
         fs.inotify.max_user_instances=512` (and `echo fs.inotify.max_user_instances=512 | \
         sudo tee /etc/sysctl.d/90-inotify.conf` to keep it)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A per-folder backend that refuses watches beyond `limit`, and counts them.
    #[derive(Default)]
    struct Fake {
        limit: usize,
        watches: BTreeMap<PathBuf, usize>,
    }

    impl Backend for Fake {
        fn per_folder(&self) -> bool {
            true
        }
        fn watch(&mut self, dir: &Path, _: bool) -> Result<(), Failure> {
            if self.watches.len() >= self.limit {
                return Err(Failure::Limit);
            }
            *self.watches.entry(dir.to_path_buf()).or_default() += 1;
            Ok(())
        }
        fn unwatch(&mut self, dir: &Path) {
            self.watches.remove(dir);
        }
    }

    fn tree(root: &Path, dirs: &[&str]) {
        for d in dirs {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
    }

    fn under(roots: &[PathBuf]) -> impl Fn(&Path) -> bool + '_ {
        move |d: &Path| roots.iter().any(|r| d.starts_with(r))
    }

    fn root_of(roots: &[PathBuf]) -> impl Fn(&Path) -> Option<PathBuf> + '_ {
        move |d: &Path| roots.iter().find(|r| d.starts_with(r)).cloned()
    }

    #[test]
    fn every_folder_of_a_root_once_but_the_skipped_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skills");
        tree(
            &root,
            &[
                "a/scripts",
                "b",
                "b/node_modules/x",
                "c/.git/objects",
                "d/.hidden",
            ],
        );
        let mut folders = Folders::new(Fake {
            limit: 100,
            ..Fake::default()
        });
        assert!(folders.add_tree(&root));
        // a root inside another shares its watches
        assert!(folders.add_tree(&root.join("a")));
        let watched: Vec<String> = folders
            .backend
            .watches
            .iter()
            .map(|(d, n)| {
                assert_eq!(*n, 1, "{} watched twice", d.display());
                d.strip_prefix(tmp.path()).unwrap().display().to_string()
            })
            .collect();
        assert_eq!(
            watched,
            [
                "skills",
                "skills/a",
                "skills/a/scripts",
                "skills/b",
                "skills/c",
                "skills/d",
                "skills/d/.hidden"
            ]
        );
    }

    /// Property: whatever order roots come and go in, the watches are exactly the folders
    /// of the remaining roots' trees, each once.
    #[test]
    fn watches_follow_the_roots_in_any_order() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path();
        tree(base, &["x/a/1", "x/a/2", "x/b", "y/c", "y/c/d"]);
        let candidates: Vec<PathBuf> = ["x", "x/a", "x/a/1", "y", "y/c/d", "x/b"]
            .iter()
            .map(|p| base.join(p))
            .collect();
        // every sequence of add/remove steps over the candidates, up to length 4, in a fixed
        // pseudo-random walk (a linear congruential sequence: reproducible, no dependency)
        let mut seed: u64 = 7;
        for _ in 0..300 {
            let mut folders = Folders::new(Fake {
                limit: 1000,
                ..Fake::default()
            });
            let mut roots: Vec<PathBuf> = Vec::new();
            for _ in 0..6 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = &candidates[(seed >> 33) as usize % candidates.len()];
                if roots.contains(pick) {
                    roots.retain(|r| r != pick);
                    folders.retain(under(&roots));
                } else {
                    roots.push(pick.clone());
                    folders.add_tree(pick);
                }
                let expected: BTreeSet<PathBuf> = walkdir::WalkDir::new(base)
                    .into_iter()
                    .flatten()
                    .filter(|e| e.file_type().is_dir())
                    .map(|e| e.into_path())
                    .filter(|d| under(&roots)(d))
                    .collect();
                let actual: BTreeSet<PathBuf> = folders.backend.watches.keys().cloned().collect();
                assert_eq!(actual, expected, "roots {roots:?}");
                assert_eq!(folders.watched, expected);
            }
        }
    }

    #[test]
    fn the_limit_stops_a_walk_is_said_once_and_is_retried_when_room_is_made() {
        let tmp = tempfile::tempdir().unwrap();
        let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
        tree(tmp.path(), &["one/a", "one/b", "two/a", "two/b", "two/c"]);
        let mut folders = Folders::new(Fake {
            limit: 5,
            ..Fake::default()
        });
        assert!(folders.add_tree(&one));
        assert!(!folders.add_tree(&two), "the limit stops the second tree");
        assert_eq!(folders.count_below(&two), 2);
        assert!(!folders.complete(&two) && folders.complete(&one));
        let problem = folders.problem().unwrap().to_owned();
        assert!(
            problem.contains("sysctl fs.inotify.max_user_watches=")
                && problem.contains(&format!("2 folders under {}", two.display())),
            "{problem}"
        );
        // unwatching the first root makes room: the second is walked again, to the end
        let roots = [two.clone()];
        folders.retain(under(&roots));
        assert!(folders.complete(&two));
        assert_eq!(folders.count_below(&two), 4);
        assert_eq!(folders.problem(), None);
    }

    #[test]
    fn created_and_removed_folders_follow() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("skills");
        tree(&root, &["a"]);
        let mut folders = Folders::new(Fake {
            limit: 100,
            ..Fake::default()
        });
        folders.add_tree(&root);
        tree(&root, &["new/scripts", "target/debug"]);
        let roots = [root.clone()];
        folders.created(&root.join("new"), root_of(&roots));
        folders.created(&root.join("target"), root_of(&roots));
        folders.created(&tmp.path().join("elsewhere"), root_of(&roots));
        assert!(folders.is_watched(&root.join("new/scripts")));
        assert!(!folders.is_watched(&root.join("target")));
        folders.removed(&root.join("new"));
        assert_eq!(folders.count_below(&root), 2);
    }
}
