//! `--changed-since REF`: the skills whose folder changed in git since REF, shared by
//! `check` and `run` (and `trigger` when it comes), so CI on a pull request looks only at the
//! skills the pull request touches.
//!
//! "Changed since REF" is measured from the merge base of REF and HEAD to the working tree,
//! as a pull request's diff is: commits on the branch, staged and unstaged edits, and new
//! files git does not ignore. A skill's eval files live in its folder (tests/eval.yaml,
//! evals/evals.json), so a changed eval file selects its skill too. git itself is asked
//! (`git merge-base`, `git diff`, `git ls-files`) rather than a library: it is on every CI
//! machine and reads every repository layout (worktrees, submodules) as users expect.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The files changed since a git reference, as absolute paths.
#[derive(Debug)]
pub struct ChangedSince {
    /// The commit the changes are counted from (the merge base).
    pub base: String,
    files: BTreeSet<PathBuf>,
}

impl ChangedSince {
    /// The changes in the repository holding `at` since `reference`.
    pub fn read(reference: &str, at: &Path) -> anyhow::Result<ChangedSince> {
        let folder = if at.is_dir() {
            at
        } else {
            at.parent().unwrap_or(Path::new("."))
        };
        let top = toplevel(folder)?;
        let base = git(&top, &["merge-base", reference, "HEAD"])
            .with_context(|| format!("--changed-since {reference}: no common history with HEAD (for a shallow CI checkout, fetch with fetch-depth: 0)"))?
            .trim()
            .to_string();
        let mut files = BTreeSet::new();
        let diff = git(
            &top,
            &["diff", "--name-only", "-z", "--no-renames", &base, "--"],
        )?;
        let untracked = git(&top, &["ls-files", "--others", "--exclude-standard", "-z"])?;
        for name in diff.split('\0').chain(untracked.split('\0')) {
            if !name.is_empty() {
                files.insert(top.join(name));
            }
        }
        Ok(ChangedSince { base, files })
    }

    /// Whether any changed file lies in `skill_dir`.
    pub fn touches(&self, skill_dir: &Path) -> bool {
        let Ok(dir) = skill_dir.canonicalize() else {
            return false;
        };
        self.files
            .range(dir.clone()..)
            .next()
            .is_some_and(|f| f.starts_with(&dir))
    }

    /// The folders of `dirs` that changed, in their order.
    pub fn select<'a>(&self, dirs: impl IntoIterator<Item = &'a PathBuf>) -> Vec<PathBuf> {
        dirs.into_iter()
            .filter(|d| self.touches(d))
            .cloned()
            .collect()
    }

    /// How many files changed.
    pub fn len(&self) -> usize {
        self.files.len()
    }
}

/// The root of the git work tree holding `folder`.
pub fn toplevel(folder: &Path) -> anyhow::Result<PathBuf> {
    let top = git(folder, &["rev-parse", "--show-toplevel"]).with_context(|| {
        format!(
            "{} is not in a git repository (--changed-since and --base compare with git history)",
            folder.display()
        )
    })?;
    Ok(PathBuf::from(top.trim()))
}

/// Run git in `dir`; its stdout, or its stderr as the error.
pub fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("running git (needed by --changed-since)")?;
    if !out.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    String::from_utf8(out.stdout).context("git printed a path that is not UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        git(dir, args).unwrap();
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Changes since the merge base: commits on the branch, edits, untracked files; a folder
    /// whose name only starts like a changed one is not selected, and main's own later
    /// commits are not the branch's changes.
    #[test]
    fn selects_folders_changed_since_the_merge_base() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        run(repo, &["init", "-q", "-b", "main"]);
        run(repo, &["config", "user.email", "t@example.com"]);
        run(repo, &["config", "user.name", "T"]);
        for skill in ["a", "a-b", "c", "d", "e"] {
            write(&repo.join(skill).join("SKILL.md"), "---\nname: x\n---\n");
        }
        run(repo, &["add", "-A"]);
        run(repo, &["commit", "-q", "-m", "one"]);
        run(repo, &["checkout", "-q", "-b", "topic"]);
        write(&repo.join("a/tests/eval.yaml"), "scenarios: []\n");
        run(repo, &["add", "-A"]);
        run(repo, &["commit", "-q", "-m", "a's evals"]);
        run(repo, &["checkout", "-q", "main"]);
        write(&repo.join("e/SKILL.md"), "---\nname: e\n---\n");
        run(repo, &["commit", "-q", "-am", "main moves on"]);
        run(repo, &["checkout", "-q", "topic"]);
        write(&repo.join("c/SKILL.md"), "edited, not staged\n");
        write(&repo.join("d/notes.md"), "untracked\n");
        write(&repo.join(".gitignore"), "ignored/\n");
        write(&repo.join("ignored/SKILL.md"), "ignored\n");

        let changed = ChangedSince::read("main", repo).unwrap();
        let selected: Vec<&str> = ["a", "a-b", "c", "d", "e", "ignored"]
            .into_iter()
            .filter(|s| changed.touches(&repo.join(s)))
            .collect();
        assert_eq!(selected, ["a", "c", "d"]);
        assert!(ChangedSince::read("no-such-ref", repo).is_err());
    }
}
