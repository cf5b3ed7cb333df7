//! End to end with the real thing: a 2-case suite exported, run paired by the real `harbor`
//! (0.25.0) in a real Docker engine (2 attempts x 2 arms per case), and imported. The agent is
//! the recipe's custom Harbor agent (tests/fixtures/harbor/agent), whose loop runs in the
//! container against a scripted OpenAI-compatible model server on the host's 127.0.0.1 (the
//! model API is the only double). One case's image cannot be built: its trials are errored,
//! never failed. Then the same with the real Claude Code baked into the image. Needs what scripts/harbor-env sets up (`SKILLWATCH_HARBOR`, `DOCKER_CONFIG`,
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

/// What a round trip runs: the agent, its image and model server, and what to do to the
/// export before the job starts.
struct RoundTrip<'a> {
    agent: &'a str,
    model: &'a str,
    image: String,
    server: &'a str,
    agent_env: Vec<String>,
    host_env: Vec<(&'a str, String)>,
    break_case: Option<&'a str>,
}

/// Export the fixture skill, run the job with the real harbor, import it twice; the run's
/// trials from `history --json --trials`.
fn round_trip(rt: RoundTrip<'_>, harbor: &Path, port: u16) -> Value {
    let fixtures = workspace_root().join("tests/fixtures/harbor");
    let tmp = tempfile::tempdir().unwrap();
    let _model = Server(
        Command::new("python3")
            .arg(fixtures.join("agent").join(rt.server))
            .arg(port.to_string())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let out_dir = tmp.path().join("export");
    let bin = skillwatch_bin();
    let t0 = Instant::now();
    let mut export = Command::new(&bin);
    export
        .args(["export", "harbor"])
        .arg(fixtures.join("skills/release-codename"))
        .arg("--out")
        .arg(&out_dir)
        .args(["--agent", rt.agent, "--model", rt.model, "--attempts", "2"])
        .args(["--host-network", "--base-image", &rt.image]);
    for e in &rt.agent_env {
        export.arg(format!("--agent-env={e}"));
    }
    let export = export.output().unwrap();
    assert!(export.status.success(), "{}", text(&export.stderr));
    let exported = t0.elapsed();
    if let Some(case) = rt.break_case {
        let dockerfile = out_dir.join(format!("tasks/{case}/environment/Dockerfile"));
        let broken = std::fs::read_to_string(&dockerfile).unwrap().replace(
            &format!("FROM {}", rt.image),
            "FROM skillwatch-no-such-image:none",
        );
        std::fs::write(&dockerfile, broken).unwrap();
    }
    let t1 = Instant::now();
    let run = Command::new(harbor)
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
        .envs(rt.host_env.iter().map(|(k, v)| (k, v)))
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
    let history = |json: bool| {
        let mut c = Command::new(&bin);
        c.args(["history", "release-codename", "--trials", "--db"])
            .arg(&db);
        if json {
            c.arg("--json");
        }
        c.env("SKILLWATCH_NO_DAEMON", "1").output().unwrap()
    };
    eprintln!(
        "{}: export {exported:?}, harbor run {ran:?}, import {imported:?}\n{}",
        rt.agent,
        text(&history(false).stdout)
    );
    let v: Value = serde_json::from_slice(&history(true).stdout).unwrap();
    v["runs"][0].clone()
}

fn harbor_env() -> Option<(PathBuf, String)> {
    let harbor = std::env::var_os("SKILLWATCH_HARBOR").map(PathBuf::from);
    let image = std::env::var("SKILLWATCH_HARBOR_BASE_IMAGE").ok();
    match (harbor, image) {
        (Some(h), Some(i)) => Some((h, i)),
        _ => {
            eprintln!("skipped: no Harbor and Docker (scripts/harbor-env sets them up)");
            None
        }
    }
}

#[test]
fn a_paired_suite_runs_on_harbor_in_docker_and_imports_trial_by_trial() {
    let Some((harbor, image)) = harbor_env() else {
        return;
    };
    let port = free_port();
    let run = round_trip(
        RoundTrip {
            agent: "skillwatch_agent:ScriptedLoopAgent",
            model: "scripted/codename-v1",
            image,
            server: "scripted_model.py",
            agent_env: vec![format!("MODEL_BASE_URL=http://127.0.0.1:{port}/v1")],
            host_env: Vec::new(),
            break_case: Some("codename-again"),
        },
        &harbor,
        port,
    );
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
}

/// The real Claude Code CLI, baked into the agents image (so Harbor skips its online install),
/// against a scripted Anthropic server: the skill arm calls its Skill tool, which the import
/// reads from Harbor's ATIF v1.7 trajectory.
#[test]
fn the_real_claude_code_runs_through_harbor_and_its_skill_calls_are_read() {
    let Some((harbor, _)) = harbor_env() else {
        return;
    };
    let Ok(image) = std::env::var("SKILLWATCH_HARBOR_AGENTS_IMAGE") else {
        eprintln!("skipped: no agents image (scripts/harbor-env builds it from target/agent-clis)");
        return;
    };
    let port = free_port();
    let run = round_trip(
        RoundTrip {
            agent: "claude-code",
            model: "anthropic/claude-sonnet-4-5",
            image,
            server: "scripted_anthropic.py",
            agent_env: Vec::new(),
            host_env: vec![
                ("ANTHROPIC_API_KEY", "sk-ant-dummy".into()),
                ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}")),
            ],
            break_case: None,
        },
        &harbor,
        port,
    );
    assert_eq!(run["run"]["harness"], "claude-code");
    let trials = run["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 8);
    for t in trials {
        let skill = t["condition"] == "skill";
        assert_eq!(t["passed"], skill, "{t}");
        assert_eq!(t["skill_invoked"], skill, "{t}");
    }
    // The same suite and script run locally by `skillwatch run`: the same outcomes, trial by
    // trial, and the same lift with the same interval.
    let local = local_run(free_port());
    assert_eq!(outcomes(&local), outcomes(&run));
    let lift = |r: &Value| r["headline"]["outcome"].clone();
    assert_eq!(lift(&local)["lift"], lift(&run)["lift"]);
    assert_eq!(lift(&local)["interval"], lift(&run)["interval"]);
}

/// (case, condition, passed, invoked) of every trial, sorted: attempts are interchangeable.
fn outcomes(run: &Value) -> Vec<(String, String, bool, bool)> {
    let mut v: Vec<_> = run["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["case"].as_str().unwrap().to_owned(),
                t["condition"].as_str().unwrap().to_owned(),
                t["passed"].as_bool().unwrap(),
                t["skill_invoked"].as_bool().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// `skillwatch run` of the fixture skill with the real Claude Code on this machine, against
/// the same scripted server; the run from `history --json --trials`.
fn local_run(port: u16) -> Value {
    let fixtures = workspace_root().join("tests/fixtures/harbor");
    let tmp = tempfile::tempdir().unwrap();
    let _model = Server(
        Command::new("python3")
            .arg(fixtures.join("agent/scripted_anthropic.py"))
            .arg(port.to_string())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let db = tmp.path().join("local.db");
    let t0 = Instant::now();
    let out = Command::new(skillwatch_bin())
        .arg("run")
        .arg(fixtures.join("skills/release-codename"))
        .args([
            "--harness",
            "claude-code",
            "--model",
            "claude-sonnet-4-5",
            "--runs",
            "2",
        ])
        .arg("--program")
        .arg(skillwatch_tests::trial::agent_cli("claude"))
        .arg(format!("--base-url=http://127.0.0.1:{port}"))
        .arg("--db")
        .arg(&db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .env("ANTHROPIC_API_KEY", "sk-ant-dummy")
        .output()
        .unwrap();
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{}",
        text(&out.stderr)
    );
    eprintln!(
        "local skillwatch run {:?}\n{}",
        t0.elapsed(),
        text(&out.stdout)
    );
    let history = Command::new(skillwatch_bin())
        .args(["history", "release-codename", "--trials", "--json", "--db"])
        .arg(&db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&history.stdout).unwrap();
    v["runs"][0].clone()
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
