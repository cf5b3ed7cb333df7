//! A fresh workspace per trial attempt: the case's test files copied, its setup files written,
//! its setup commands run. Skills are not staged here: the harness stages them where it looks
//! for them (the target skill only in the with-skill condition).
//!
//! Workspaces live under the system temp dir (Claude Code reads `.claude/` and `CLAUDE.md` of
//! every folder above its working directory, and the adapters refuse a workspace with agent
//! files above it), one folder per trial attempt, so a retry never sees a failed attempt's
//! leftovers.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use skillwatch_core::evalspec::{Case, FileContent, Setup};
use walkdir::WalkDir;

use crate::harness::{BASE_ALLOW, Exit, HostEnv, Invocation, run_process};

/// The longest a case's setup commands may run, together.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(300);

/// The folders of one trial attempt.
#[derive(Debug, Clone)]
pub struct TrialFolders {
    /// The agent's working directory.
    pub workspace: PathBuf,
    /// The harness's scratch dir (fresh HOME, config dirs, logs).
    pub scratch: PathBuf,
}

/// Create `root/ws` and `root/scratch`, empty: what every trial starts from.
fn folders(root: &Path) -> Result<TrialFolders, String> {
    let folders = TrialFolders {
        workspace: root.join("ws"),
        scratch: root.join("scratch"),
    };
    for dir in [&folders.workspace, &folders.scratch] {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    Ok(folders)
}

/// What a workspace is made from: a case's setup, a security probe's files, or nothing (a
/// trigger trial's query needs no files); `file` and `id` name it in errors.
#[derive(Debug, Clone, Copy)]
pub struct WorkspaceSource<'a> {
    /// The setup.
    pub setup: &'a Setup,
    /// The file it was written in, relative to the skill (test files are copied from beside it).
    pub file: &'a str,
    /// The case or probe id.
    pub id: &'a str,
}

/// The setup of a workspace that starts empty.
static NO_SETUP: Setup = Setup {
    copy_test_files: false,
    files: Vec::new(),
    commands: Vec::new(),
};

impl<'a> WorkspaceSource<'a> {
    /// An empty workspace, for the query `id` of `file`.
    pub fn empty(file: &'a str, id: &'a str) -> WorkspaceSource<'a> {
        WorkspaceSource {
            setup: &NO_SETUP,
            file,
            id,
        }
    }

    /// A case's workspace.
    pub fn of(case: &'a Case) -> WorkspaceSource<'a> {
        WorkspaceSource {
            setup: &case.setup,
            file: &case.origin.file,
            id: &case.id,
        }
    }
}

/// Create `root/ws` and `root/scratch` and prepare the workspace from `source` (a case of the
/// skill in `skill_dir`, or a probe). Errors say which setup step failed, for which file or
/// command.
pub async fn prepare(
    root: &Path,
    source: &WorkspaceSource<'_>,
    skill_dir: &Path,
    host: &HostEnv,
) -> Result<TrialFolders, String> {
    let WorkspaceSource {
        setup,
        file: origin,
        id,
    } = *source;
    let folders = folders(root)?;
    if setup.copy_test_files {
        copy_test_files(origin, skill_dir, &folders.workspace)?;
    }
    for file in &setup.files {
        let dest = inside(&folders.workspace, &file.path).ok_or_else(|| {
            format!(
                "{} case {}: setup file path {:?}: expected a relative path inside the workspace, found one that leaves it",
                origin, id, file.path
            )
        })?;
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("creating {}: {e}", parent.display()))?;
        }
        match &file.content {
            FileContent::Inline { text } => std::fs::write(&dest, text)
                .map_err(|e| format!("writing setup file {}: {e}", dest.display()))?,
            FileContent::Source { path } => {
                let src = skill_dir.join(path);
                copy_source(&src, &dest).map_err(|e| {
                    format!(
                        "{} case {}: setup file {}: copying {}: {e}",
                        origin,
                        id,
                        file.path,
                        src.display()
                    )
                })?;
            }
        }
    }
    for command in &setup.commands {
        run_setup_command(command, &folders, host)
            .await
            .map_err(|e| format!("{} case {}: setup command {command:?}: {e}", origin, id))?;
    }
    Ok(folders)
}

/// skill-validator's `copy_test_files`: every file beside the eval file (recursively), except
/// the eval file itself.
fn copy_test_files(origin: &str, skill_dir: &Path, workspace: &Path) -> Result<(), String> {
    let eval_path = skill_dir.join(origin);
    let Some(dir) = eval_path.parent() else {
        return Ok(());
    };
    for entry in WalkDir::new(dir).follow_links(false).into_iter().flatten() {
        if !entry.file_type().is_file() || entry.path() == eval_path {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let dest = workspace.join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("creating {}: {e}", parent.display()))?;
        }
        std::fs::copy(entry.path(), &dest)
            .map_err(|e| format!("copying test file {}: {e}", entry.path().display()))?;
    }
    Ok(())
}

/// A file, or a whole folder, copied to `dest` (symlinks are not followed, nor copied).
pub(crate) fn copy_source(src: &Path, dest: &Path) -> io::Result<()> {
    if src.is_dir() {
        for entry in WalkDir::new(src).follow_links(false).into_iter().flatten() {
            let rel = entry.path().strip_prefix(src).unwrap_or(entry.path());
            let target = dest.join(rel);
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&target)?;
            } else if entry.file_type().is_file() {
                std::fs::copy(entry.path(), &target)?;
            }
        }
        return Ok(());
    }
    std::fs::copy(src, dest).map(|_| ())
}

/// `workspace/rel` when `rel` is relative and never climbs out. `.` is the workspace itself:
/// where a folder of files is copied whole (skill-up's `context.repo_fixture`).
fn inside(workspace: &Path, rel: &str) -> Option<PathBuf> {
    let path = Path::new(rel);
    let mut depth = 0i32;
    for c in path.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (depth >= 0).then(|| workspace.join(path))
}

/// Run one setup command with `sh -c` in the workspace, with the scrubbed environment and a
/// HOME of its own, its process group killed at [`SETUP_TIMEOUT`].
async fn run_setup_command(
    command: &str,
    folders: &TrialFolders,
    host: &HostEnv,
) -> Result<(), String> {
    let home = folders.scratch.join("setup-home");
    std::fs::create_dir_all(&home).map_err(|e| format!("creating {}: {e}", home.display()))?;
    let mut env: Vec<(String, String)> = BASE_ALLOW
        .iter()
        .filter_map(|k| host.get(k).map(|v| ((*k).to_owned(), v.to_owned())))
        .collect();
    env.push(("HOME".into(), home.display().to_string()));
    env.push(("TMPDIR".into(), home.display().to_string()));
    let inv = Invocation {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), command.into()],
        env,
        cwd: folders.workspace.clone(),
    };
    let log = folders.scratch.join("setup.log");
    let out = run_process(&inv, &log, &log, SETUP_TIMEOUT)
        .await
        .map_err(|e| format!("could not start /bin/sh: {e}"))?;
    match out.exit {
        Exit::Code(0) => Ok(()),
        Exit::Code(c) => Err(format!(
            "expected exit status 0, found {c}{}",
            log_tail(&log)
        )),
        Exit::Signal(s) => Err(format!(
            "expected exit status 0, killed by signal {s}{}",
            log_tail(&log)
        )),
        Exit::TimedOut => Err(format!(
            "expected to finish within {} s, killed",
            SETUP_TIMEOUT.as_secs()
        )),
        Exit::Stopped => Err("expected to finish, stopped".into()),
    }
}

fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let tail: String = text
        .chars()
        .rev()
        .take(400)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!(" (output: {tail})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillwatch_core::evalspec::{FileKind, parse_suite};

    #[tokio::test]
    async fn files_copies_and_commands_make_the_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("skill");
        std::fs::create_dir_all(skill.join("tests/data")).unwrap();
        std::fs::write(skill.join("tests/data/in.txt"), "input").unwrap();
        std::fs::write(skill.join("fixture.md"), "fixture").unwrap();
        let yaml = "scenarios:\n  - name: a\n    prompt: p\n    setup:\n      copy_test_files: true\n      files:\n        - path: docs/inline.txt\n          content: hello\n        - path: f.md\n          source: fixture.md\n      commands:\n        - echo made > made.txt\n";
        std::fs::write(skill.join("tests/eval.yaml"), yaml).unwrap();
        let case = parse_suite(FileKind::EvalYaml, yaml, "tests/eval.yaml")
            .unwrap()
            .cases
            .remove(0);
        let host = HostEnv::from_pairs([("PATH", "/usr/bin:/bin")]);
        let f = prepare(
            &tmp.path().join("t1"),
            &WorkspaceSource::of(&case),
            &skill,
            &host,
        )
        .await
        .unwrap();
        let read = |p: &str| std::fs::read_to_string(f.workspace.join(p)).unwrap();
        assert_eq!(read("data/in.txt"), "input");
        assert!(
            !f.workspace.join("eval.yaml").exists(),
            "the eval file itself is not copied"
        );
        assert_eq!(read("docs/inline.txt"), "hello");
        assert_eq!(read("f.md"), "fixture");
        assert_eq!(read("made.txt"), "made\n");
    }

    #[tokio::test]
    async fn escaping_paths_and_failing_commands_are_located_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let host = HostEnv::from_pairs([("PATH", "/usr/bin:/bin")]);
        let yaml = "scenarios:\n  - name: a\n    prompt: p\n    setup:\n      files:\n        - path: ../../etc/x\n          content: hi\n";
        let case = parse_suite(FileKind::EvalYaml, yaml, "tests/eval.yaml")
            .unwrap()
            .cases
            .remove(0);
        let e = prepare(
            &tmp.path().join("t"),
            &WorkspaceSource::of(&case),
            tmp.path(),
            &host,
        )
        .await
        .unwrap_err();
        assert!(
            e.contains("tests/eval.yaml case a") && e.contains("leaves it"),
            "{e}"
        );
        let yaml = "scenarios:\n  - name: b\n    prompt: p\n    setup:\n      commands:\n        - echo broken >&2; exit 3\n";
        let case = parse_suite(FileKind::EvalYaml, yaml, "tests/eval.yaml")
            .unwrap()
            .cases
            .remove(0);
        let e = prepare(
            &tmp.path().join("t2"),
            &WorkspaceSource::of(&case),
            tmp.path(),
            &host,
        )
        .await
        .unwrap_err();
        assert!(e.contains("found 3") && e.contains("broken"), "{e}");
    }
}
