//! `skillwatch compare SKILL_DIR --base REF`: the two runs behind the pull request gate. The
//! skill folder as it was at REF is copied out of git into a temporary folder, the working
//! tree's eval files (its `tests/` and `evals/` folders) are put in it, so both runs measure
//! the same cases, and both folders are run by `skillwatch run` itself (this binary, as a
//! child), with the same settings: the skillwatch.toml that governs the working tree's skill,
//! `--harness`, `--model`, `--db` and the run flags given after `--`. Running the real
//! command, not a copy of its setup, keeps one place that turns flags into a run, and the
//! daemon or in-process choice stays `run`'s. The baselines of the second run are the first
//! run's, reused from the history (same harness, model and cases), so the base costs only its
//! with-skill trials.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use skillwatch_daemon::runner::RunConfig;

use crate::changed::git;

/// What the gate runs.
pub struct Plan<'a> {
    /// The skill folder in the working tree.
    pub folder: &'a Path,
    /// The git reference of the base.
    pub reference: &'a str,
    /// `--model` for both runs, when given.
    pub model: Option<&'a str>,
    /// `--harness` for both runs, when given.
    pub harness: Option<&'a str>,
    /// `--db` for both runs, when given.
    pub db: Option<&'a Path>,
    /// More run flags.
    pub run_args: &'a [String],
    /// `--no-daemon`: both runs in-process.
    pub no_daemon: bool,
}

/// Run the base, then the head: their run ids, or why there is nothing to compare: the
/// skill's folder did not change since the base (the changed-only selection `check` and
/// `run` use), or did not exist there.
pub fn run_both(plan: &Plan<'_>) -> anyhow::Result<Result<(i64, i64), String>> {
    if !plan.folder.join("SKILL.md").is_file() {
        bail!(
            "--base needs the skill's folder (with its SKILL.md), found {}",
            plan.folder.display()
        );
    }
    let folder = plan
        .folder
        .canonicalize()
        .with_context(|| format!("reading {}", plan.folder.display()))?;
    let top = crate::changed::toplevel(&folder)?;
    let inside = folder
        .strip_prefix(&top)
        .context("the skill folder is not inside its git repository")?
        .to_path_buf();
    let changed = crate::changed::ChangedSince::read(plan.reference, &folder)?;
    if !changed.touches(&folder) {
        return Ok(Err(format!(
            "{}: unchanged since {}; nothing to compare",
            plan.folder.display(),
            plan.reference
        )));
    }
    let base_commit = git(
        &top,
        &[
            "rev-parse",
            "--verify",
            &format!("{}^{{commit}}", plan.reference),
        ],
    )
    .with_context(|| format!("--base {}: not a commit here", plan.reference))?
    .trim()
    .to_string();
    let tmp = tempfile::tempdir().context("creating a temporary folder for the base")?;
    let name = folder.file_name().unwrap_or_default();
    let base_folder = tmp.path().join(name);
    if !extract(&top, &base_commit, &inside, &base_folder)? {
        return Ok(Err(format!(
            "{}: new since {} ({}); nothing to compare against",
            plan.folder.display(),
            plan.reference,
            &base_commit[..12.min(base_commit.len())]
        )));
    }
    for evals in ["tests", "evals"] {
        let _ = std::fs::remove_dir_all(base_folder.join(evals));
        if folder.join(evals).is_dir() {
            copy_tree(&folder.join(evals), &base_folder.join(evals))?;
        }
    }
    let config = if plan
        .run_args
        .iter()
        .any(|a| a == "--config" || a.starts_with("--config="))
    {
        None
    } else {
        RunConfig::find(&folder)
    };
    errln!(
        "base: {} at {} ({}), with the working tree's eval cases",
        inside.display(),
        plan.reference,
        &base_commit[..12.min(base_commit.len())]
    );
    let base = run(plan, &base_folder, config.as_deref())?;
    errln!("head: {} in the working tree", inside.display());
    let head = run(plan, &folder, config.as_deref())?;
    Ok(Ok((base, head)))
}

/// Write the tree of `inside` at `commit` into `to`; false when it has no such folder.
fn extract(top: &Path, commit: &str, inside: &Path, to: &Path) -> anyhow::Result<bool> {
    let spec = format!("{commit}:{}", inside.to_string_lossy());
    if git(top, &["cat-file", "-e", &spec]).is_err() {
        return Ok(false);
    }
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    let mut archive = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["archive", "--format=tar", &spec])
        .stdout(Stdio::piped())
        .spawn()
        .context("running git archive")?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(to)
        .stdin(archive.stdout.take().context("git archive's output")?)
        .status()
        .context("running tar to unpack the base")?;
    let archived = archive.wait()?;
    if !archived.success() || !tar.success() {
        bail!("could not unpack {spec} (git archive | tar -x failed)");
    }
    Ok(true)
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// `skillwatch run FOLDER --json ...`; the run's id. Exit 1 (the run's own verdict says
/// regresses) still made a run; anything else is a failure.
fn run(plan: &Plan<'_>, folder: &Path, config: Option<&Path>) -> anyhow::Result<i64> {
    let me = std::env::current_exe().context("finding the skillwatch binary")?;
    let mut cmd = Command::new(me);
    cmd.arg("run").arg(folder).arg("--json");
    if let Some(m) = plan.model {
        cmd.args(["--model", m]);
    }
    if let Some(h) = plan.harness {
        cmd.args(["--harness", h]);
    }
    if let Some(db) = plan.db {
        cmd.arg("--db").arg(db);
    }
    if let Some(c) = config {
        cmd.arg("--config").arg(c);
    }
    if plan.no_daemon {
        cmd.arg("--no-daemon");
    }
    cmd.args(plan.run_args);
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .context("running skillwatch run")?;
    let code = out.status.code().unwrap_or(-1);
    if code != 0 && code != 1 {
        bail!("skillwatch run {} failed (exit {code})", folder.display());
    }
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("reading the report of skillwatch run {}", folder.display()))?;
    report["run"]["id"].as_i64().with_context(|| {
        format!(
            "the report of skillwatch run {} has no run id",
            folder.display()
        )
    })
}
