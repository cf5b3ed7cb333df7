//! What one batch (a `skillwatch check` run) learns about a folder once and shares among its
//! workers: the folders above its skills (`evalspec::AboveSkills`) and the skills of each
//! repository (SW411's tree names). A single check asks the disk instead; see the freshness
//! invariant in docs/architecture.md.

use foldhash::{HashMap, HashMapExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One answer per folder, computed at its first need and kept for the run.
pub(crate) struct FolderMemo<T>(Mutex<HashMap<PathBuf, Arc<T>>>);

impl<T> FolderMemo<T> {
    /// An empty memo, for one run.
    pub fn new() -> FolderMemo<T> {
        FolderMemo(Mutex::new(HashMap::new()))
    }

    /// The answer for `folder`, computed by `compute` if it is not known yet. The lock is
    /// held through `compute`, so workers that need the same folder at once wait for one
    /// answer instead of each computing their own. A poisoned lock (a worker panicked)
    /// computes without remembering.
    pub fn get_or_compute(&self, folder: &Path, compute: impl FnOnce() -> T) -> Arc<T> {
        let Ok(mut known) = self.0.lock() else {
            return Arc::new(compute());
        };
        if let Some(answer) = known.get(folder) {
            return Arc::clone(answer);
        }
        let answer = Arc::new(compute());
        known.insert(folder.to_path_buf(), Arc::clone(&answer));
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_folder_is_computed_once() {
        let memo = FolderMemo::new();
        let mut computed = 0;
        for folder in ["a", "b", "a", "a"] {
            memo.get_or_compute(Path::new(folder), || {
                computed += 1;
                folder.len()
            });
        }
        assert_eq!(computed, 2);
        assert_eq!(*memo.get_or_compute(Path::new("b"), || 0), 1);
    }
}
