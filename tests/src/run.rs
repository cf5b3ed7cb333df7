//! Helpers for the paired-run tests (`tests/tests/run_*.rs`): a skill folder with an eval
//! suite, a history store, and a runner whose trials see only a minimal host environment.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::runner::{ProgressSink, RunEvent, Runner};
use skillwatch_daemon::store::Store;
use tempfile::TempDir;

use crate::trial::{SKILL_DESCRIPTION, SKILL_MARKER, SKILL_NAME};

/// A skill folder, its history database, and the temp dir holding both.
pub struct RunFixture {
    /// Keeps the files alive.
    pub root: TempDir,
    /// The skill under test (`table-format`, with the marker in its SKILL.md).
    pub skill: PathBuf,
    /// The history database file.
    pub db: PathBuf,
    /// The open store, shared with the runner.
    pub store: Arc<Mutex<Store>>,
}

impl RunFixture {
    /// The demo skill with `eval_yaml` as its `tests/eval.yaml`.
    pub fn new(eval_yaml: &str) -> RunFixture {
        let root = tempfile::tempdir().expect("temp dir");
        let skill = root.path().join("skills").join(SKILL_NAME);
        std::fs::create_dir_all(skill.join("tests")).expect("skill dir");
        std::fs::write(
            skill.join("SKILL.md"),
            skill_md("pad cells so columns line up"),
        )
        .expect("SKILL.md");
        std::fs::write(skill.join("tests/eval.yaml"), eval_yaml).expect("eval.yaml");
        let db = root.path().join("history.sqlite3");
        let store = Arc::new(Mutex::new(Store::open(&db).expect("open store")));
        RunFixture {
            root,
            skill,
            db,
            store,
        }
    }

    /// A runner on this fixture's store whose trials see only a PATH.
    pub fn runner(&self) -> Runner {
        Runner::new(self.store.clone()).with_host_env(host_env())
    }

    /// Rewrite the skill's SKILL.md body (a new skill version, same eval suite).
    pub fn edit_skill(&self, instruction: &str) {
        std::fs::write(self.skill.join("SKILL.md"), skill_md(instruction)).expect("edit SKILL.md");
    }

    /// A folder beside the skill, e.g. for a fake HOME.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }
}

/// The demo SKILL.md with the marker and `instruction` in its body.
pub fn skill_md(instruction: &str) -> String {
    format!(
        "---\nname: {SKILL_NAME}\ndescription: {SKILL_DESCRIPTION}\n---\n# Steps\n1. {SKILL_MARKER}: {instruction}.\n"
    )
}

/// A minimal host environment: the PATH only.
pub fn host_env() -> HostEnv {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    HostEnv::from_pairs([("PATH", path)])
}

/// An eval.yaml with `n` scenarios `case-0`... asking to format table.md, passing when the
/// output says GOOD, with `extra` appended to each scenario (indented 4 spaces).
pub fn eval_yaml(n: usize, extra: &str) -> String {
    let mut y = String::from("scenarios:\n");
    for i in 0..n {
        y.push_str(&format!(
            "  - name: case-{i}\n    prompt: Format table.md so its columns line up ({i}).\n    setup:\n      files:\n        - path: table.md\n          content: \"|a|b|\\n|1|22|\\n\"\n    assertions:\n      - type: output_contains\n        value: GOOD\n{extra}"
        ));
    }
    y
}

/// A progress sink that keeps every event.
pub fn recorder() -> (ProgressSink, Arc<Mutex<Vec<RunEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink_events = events.clone();
    let sink: ProgressSink =
        Arc::new(move |e: &RunEvent| sink_events.lock().expect("events").push(e.clone()));
    (sink, events)
}

/// Whether `path` lies under the system temp dir (where trial workspaces must be).
pub fn under_temp(path: &Path) -> bool {
    path.starts_with(std::env::temp_dir())
}

/// An ATIF file an instant agent writes: one agent step saying `answer`.
pub fn atif_answer(answer: &str) -> String {
    serde_json::json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "instant", "version": "1"},
        "steps": [{"step_id": 1, "source": "agent", "message": answer,
                   "metrics": {"prompt_tokens": 10, "completion_tokens": 1}}]
    })
    .to_string()
}

/// The `command` harness running the shell script `body` (written to `dir/agent.sh`); the
/// script sees `$SKILLWATCH_PROMPT`, `$SKILLWATCH_TRAJECTORY` and the other documented
/// variables.
pub fn command_agent(dir: &Path, body: &str) -> skillwatch_daemon::runner::HarnessSettings {
    use std::os::unix::fs::PermissionsExt;
    let program = dir.join("agent.sh");
    std::fs::write(&program, format!("#!/bin/sh\n{body}\n")).expect("write agent");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    skillwatch_daemon::runner::HarnessSettings {
        program: Some(program),
        ..skillwatch_daemon::runner::HarnessSettings::new(
            skillwatch_daemon::runner::HarnessKind::Command,
        )
    }
}
