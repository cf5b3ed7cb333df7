//! End to end with the real thing: a 2-case suite exported, run paired by the real `harbor`
//! (0.25.0) in a real Docker engine (2 attempts x 2 arms per case), and imported. The agent is
//! the recipe's custom Harbor agent (tests/fixtures/harbor/agent), whose loop runs in the
//! container against a scripted OpenAI-compatible model server on the host's 127.0.0.1 (the
//! model API is the only double). One case's image cannot be built: its trials are errored,
//! never failed. Needs what scripts/harbor-env sets up (`SKILLWATCH_HARBOR`, `DOCKER_CONFIG`,
//! `SKILLWATCH_HARBOR_BASE_IMAGE`); without it the test says it was skipped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use serde_json::Value;
use skillwatch_tests::{skillwatch_bin, workspace_root};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_paired_suite_runs_on_harbor_in_docker_and_imports_trial_by_trial() {
    let (Some(harbor), Some(image)) = (
        std::env::var_os("SKILLWATCH_HARBOR").map(PathBuf::from),
        std::env::var("SKILLWATCH_HARBOR_BASE_IMAGE").ok(),
    ) else {
        eprintln!("skipped: no Harbor and Docker (scripts/harbor-env sets them up)");
        return;
    };
    let fixtures = workspace_root().join("tests/fixtures/harbor");
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let _model = Server(
        Command::new("python3")
            .arg(fixtures.join("agent/scripted_model.py"))
            .arg(port.to_string())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let out_dir = tmp.path().join("export");
    let bin = skillwatch_bin();
    let t0 = Instant::now();
    let export = Command::new(&bin)
        .args(["export", "harbor"])
        .arg(fixtures.join("skills/release-codename"))
        .arg("--out")
        .arg(&out_dir)
        .args(["--agent", "skillwatch_agent:ScriptedLoopAgent"])
        .args(["--model", "scripted/codename-v1", "--attempts", "2"])
        .args(["--host-network", "--base-image", &image])
        .arg(format!(
            "--agent-env=MODEL_BASE_URL=http://127.0.0.1:{port}/v1"
        ))
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", text(&export.stderr));
    let exported = t0.elapsed();
    // The second case's image cannot be built: its environment fails to start.
    let dockerfile = out_dir.join("tasks/codename-again/environment/Dockerfile");
    let broken = std::fs::read_to_string(&dockerfile).unwrap().replace(
        &format!("FROM {image}"),
        "FROM skillwatch-no-such-image:none",
    );
    std::fs::write(&dockerfile, broken).unwrap();

    let t1 = Instant::now();
    let run = Command::new(&harbor)
        .args([
            "run",
            "-c",
            "job.yaml",
            "-o",
            "jobs",
            "--job-name",
            "paired",
            "-y",
        ])
        .args(["-n", "4"])
        .current_dir(&out_dir)
        .env("PYTHONPATH", fixtures.join("agent"))
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .output()
        .unwrap();
    let ran = t1.elapsed();
    assert!(
        run.status.success(),
        "harbor: {}\n{}",
        text(&run.stdout),
        text(&run.stderr)
    );

    let db = tmp.path().join("h.db");
    let t2 = Instant::now();
    let first = import(&db, &out_dir.join("jobs/paired"));
    let imported = t2.elapsed();
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(
        text(&first.stdout).contains("8 trials imported"),
        "{}",
        text(&first.stdout)
    );
    let again = import(&db, &out_dir.join("jobs/paired"));
    assert!(
        text(&again.stdout).contains("0 trials imported, 8 already"),
        "{}",
        text(&again.stdout)
    );

    let history = Command::new(skillwatch_bin())
        .args(["history", "release-codename", "--json", "--trials", "--db"])
        .arg(&db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&history.stdout).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["run"]["status"], "completed");
    let trials = run["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 8);
    for t in trials {
        match (
            t["case"].as_str().unwrap(),
            t["condition"].as_str().unwrap(),
        ) {
            ("codename", "baseline") => assert_eq!(t["passed"], false, "{t}"),
            ("codename", "skill") => assert_eq!(t["passed"], true, "{t}"),
            ("codename-again", _) => {
                assert_eq!(t["status"], "error", "{t}");
                assert_eq!(
                    t["passed"],
                    Value::Null,
                    "an errored trial is not a failed task: {t}"
                );
            }
            other => panic!("unexpected trial {other:?}"),
        }
    }
    let table = Command::new(skillwatch_bin())
        .args(["history", "release-codename", "--db"])
        .arg(&db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .unwrap();
    eprintln!(
        "export {exported:?}, harbor run {ran:?}, import {imported:?}\n{}",
        text(&table.stdout)
    );
}

fn import(db: &Path, job: &Path) -> std::process::Output {
    Command::new(skillwatch_bin())
        .args(["import", "harbor"])
        .arg(job)
        .arg("--db")
        .arg(db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .unwrap()
}
