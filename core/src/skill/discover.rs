//! Finding skills under a folder.

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use super::SKILL_FILE;

/// Folders never searched for skills: version control, dependencies and build output hold
/// copies of skills (or millions of files) that are not the author's.
pub const SKIPPED_DIRS: &[&str] = &[".git", "node_modules", "target", ".hg", ".svn"];

/// Every skill folder at or below `root`, sorted. `root` may itself be a skill folder or a
/// SKILL.md file. Symlinked folders are not followed, so a link cycle cannot loop.
pub fn discover(root: &Path) -> Vec<PathBuf> {
    if root.file_name().is_some_and(|n| n == SKILL_FILE) && root.is_file() {
        return root.parent().map(Path::to_path_buf).into_iter().collect();
    }
    let mut found: Vec<PathBuf> = WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_type().is_dir()
                    && e.file_name()
                        .to_str()
                        .is_some_and(|n| SKIPPED_DIRS.contains(&n)))
        })
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == SKILL_FILE && !e.file_type().is_dir())
        .filter_map(|e| e.path().parent().map(Path::to_path_buf))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The skill folders some walks of [`discover`] found, with the folders walked: whoever holds
/// it knows the skills below any folder those walks went through without walking it again.
/// Why: SW411 asks for every skill of a repository, and in a `skillwatch check` run the
/// command line's walk has just listed them (walking a catalog repository again costs a
/// sizeable share of a check run, mostly in system calls: docs/benchmarks.md).
#[derive(Debug, Clone, Default)]
pub struct Discovered {
    /// Each walk: the folder walked and what [`discover`] found there. Folder lists given
    /// without a walk ([`Discovered::listed`]) have no folder: they vouch for nothing below.
    walks: Vec<(Option<PathBuf>, Vec<PathBuf>)>,
}

impl Discovered {
    /// The skills [`discover`] finds at or below `root`.
    pub fn walk(root: &Path) -> Discovered {
        Discovered {
            walks: vec![(Some(root.to_path_buf()), discover(root))],
        }
    }

    /// Skill folders named one by one (no walk vouches that they are all there is).
    pub fn listed(dirs: Vec<PathBuf>) -> Discovered {
        Discovered {
            walks: vec![(None, dirs)],
        }
    }

    /// Both lists, `self`'s folders first.
    pub fn merge(&mut self, other: Discovered) {
        self.walks.extend(other.walks);
    }

    /// Every skill folder, in the order of the walks (each walk's sorted).
    pub fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.walks.iter().flat_map(|(_, dirs)| dirs)
    }

    /// The skill folders found by walks whose parent folder the walk went through (not those
    /// listed one by one, nor a walk's own root: `check skills/a` does not vouch for what
    /// else is in `skills`).
    pub fn walked_dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.walks.iter().flat_map(|(root, dirs)| {
            dirs.iter()
                .filter(move |d| root.as_ref().is_some_and(|r| *d != r))
        })
    }

    /// How many skill folders there are.
    pub fn len(&self) -> usize {
        self.walks.iter().map(|(_, dirs)| dirs.len()).sum()
    }

    /// Whether no skill was found.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What `discover(folder)` would find, when a walk went through `folder`: the walked
    /// folder itself, or one below it holding a found skill (so the walk entered it as a
    /// folder, not a skipped name nor a link, as `discover(folder)` would). None otherwise.
    pub fn below(&self, folder: &Path) -> Option<Vec<PathBuf>> {
        self.walks.iter().find_map(|(root, dirs)| {
            let root = root.as_deref()?;
            let under: Vec<PathBuf> = dirs
                .iter()
                .filter(|d| d.starts_with(folder))
                .cloned()
                .collect();
            let entered = folder == root || (folder.starts_with(root) && !under.is_empty());
            entered.then_some(under)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn finds_nested_skills_and_skips_vendored_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for dir in ["a", "group/b", "node_modules/c", ".git/d", "target/e"] {
            fs::create_dir_all(root.join(dir)).unwrap();
            fs::write(root.join(dir).join(SKILL_FILE), "---\n---\n").unwrap();
        }
        let names: Vec<_> = discover(root)
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().to_owned())
            .collect();
        assert_eq!(names, vec![PathBuf::from("a"), PathBuf::from("group/b")]);
        assert_eq!(discover(&root.join("a")), vec![root.join("a")]);
        assert_eq!(
            discover(&root.join("a").join(SKILL_FILE)),
            vec![root.join("a")]
        );
    }

    /// `below` answers only where the walk went, and then what a walk of that folder finds.
    #[test]
    fn below_is_discover_of_the_folders_the_walk_went_through() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for dir in [
            "a",
            "group/b",
            "group/c/d",
            "node_modules/x",
            "empty/deeper",
        ] {
            fs::create_dir_all(root.join(dir)).unwrap();
        }
        for dir in ["a", "group/b", "group/c/d", "node_modules/x"] {
            fs::write(root.join(dir).join(SKILL_FILE), "---\n---\n").unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("group"), root.join("link")).unwrap();
        let walked = Discovered::walk(root);
        let answers: Vec<(&str, bool)> = ["", "a", "group", "group/c", "group/c/d"]
            .into_iter()
            .map(|f| (f, true))
            .chain(["node_modules", "node_modules/x", "empty", "link"].map(|f| (f, false)))
            .collect();
        for (folder, known) in answers {
            let folder = root.join(folder);
            assert_eq!(
                walked.below(&folder).is_some(),
                known,
                "{}",
                folder.display()
            );
            if let Some(found) = walked.below(&folder) {
                assert_eq!(found, discover(&folder), "{}", folder.display());
            }
        }
        assert!(walked.below(tmp.path().parent().unwrap()).is_none());
        let listed = Discovered::listed(walked.dirs().cloned().collect());
        assert!(listed.below(root).is_none());
        assert_eq!(listed.walked_dirs().count(), 0);
        // A walk of one skill folder found that skill, and vouches for nothing beside it.
        let one = Discovered::walk(&root.join("a"));
        assert_eq!(one.dirs().count(), 1);
        assert_eq!(one.walked_dirs().count(), 0);
        assert_eq!(walked.walked_dirs().count(), 3);
    }
}
