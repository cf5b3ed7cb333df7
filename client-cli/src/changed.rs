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
        let top = PathBuf::from(git(folder, &["rev-parse", "--show-toplevel"])?.trim());
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
