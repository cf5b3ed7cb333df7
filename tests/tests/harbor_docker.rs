//! End to end with the real thing: a 2-case suite exported, run paired by the real `harbor`
//! (0.25.0) in a real Docker engine (2 attempts x 2 arms per case), and imported. The agent is
//! the recipe's custom Harbor agent (tests/fixtures/harbor/agent), whose loop runs in the
//! container against a scripted OpenAI-compatible model server on the host's 127.0.0.1 (the
//! model API is the only double). One case's image cannot be built: its trials are errored,
//! never failed. Then the same with the real Claude Code baked into the image. Needs what scripts/harbor-env sets up (`SKILLWATCH_HARBOR`, `DOCKER_CONFIG`,
//! `SKILLWATCH_HARBOR_BASE_IMAGE`); without it the test fails in CI and is skipped visibly
//! elsewhere (`skillwatch_tests::needs`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde_json::{Value, json};
use skillwatch_tests::daemon::DaemonFixture;
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::{needs, skillwatch_bin, wait, workspace_root};

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
    needs::required(
        harbor.zip(image),
        "Harbor and Docker (SKILLWATCH_HARBOR, SKILLWATCH_HARBOR_BASE_IMAGE)",
        needs::HARBOR_HOW,
    )
}

/// The image with the agent CLIs baked in (scripts/harbor-env builds it from
/// target/agent-clis).
fn agents_image() -> Option<String> {
    needs::required(
        std::env::var("SKILLWATCH_HARBOR_AGENTS_IMAGE").ok(),
        "the agents image (SKILLWATCH_HARBOR_AGENTS_IMAGE)",
        needs::HARBOR_HOW,
    )
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

/// `skillwatch run --on harbor` through the daemon (started on demand, the default path) with
/// the real Claude Code CLI baked into the agents image (so Harbor skips its online install)
/// against a scripted Anthropic server: the skill arm calls its Skill tool, which the import
/// reads from Harbor's ATIF v1.7 trajectory. Its trials, lift and interval equal those of a
/// local `skillwatch run` on the same suite and script; importing its job folder again adds
/// nothing.
#[test]
fn the_real_claude_code_runs_on_harbor_through_the_daemon_as_a_local_run_does() {
    let Some((harbor, _)) = harbor_env() else {
        return;
    };
    let Some(image) = agents_image() else {
        return;
    };
    let fixtures = workspace_root().join("tests/fixtures/harbor");
    let port = free_port();
    let _model = Server(
        Command::new("python3")
            .arg(fixtures.join("agent/scripted_anthropic.py"))
            .arg(port.to_string())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let fx = DaemonFixture::new();
    let job_dir = fx.root.path().join("hb");
    let t0 = Instant::now();
    let out = fx
        .cli_command(&[
            "run",
            fixtures.join("skills/release-codename").to_str().unwrap(),
            "--on",
            "harbor",
            "--harness",
            "claude-code",
            "--model",
            "claude-sonnet-4-5",
            "--runs",
            "2",
            "-j",
            "4",
            "--base-image",
            &image,
            &format!("--base-url=http://127.0.0.1:{port}"),
        ])
        .arg("--harbor")
        .arg(&harbor)
        .arg("--harbor-dir")
        .arg(&job_dir)
        .env("ANTHROPIC_API_KEY", "sk-ant-dummy")
        .output()
        .unwrap();
    let on_harbor = t0.elapsed();
    let stderr = text(&out.stderr);
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{stderr}\n{}",
        text(&out.stdout)
    );
    assert!(
        stderr.contains("queued as job"),
        "through the daemon: {stderr}"
    );
    assert!(
        stderr.contains("codename skill #1: completed, passed"),
        "a progress line per trial: {stderr}"
    );
    let summary = text(&out.stdout);
    assert!(summary.contains("Skill Lift"), "{summary}");
    let history = fx.cli(&["history", "release-codename", "--trials", "--json"]);
    let v: Value = serde_json::from_slice(&history.stdout).unwrap();
    let run = v["runs"][0].clone();
    assert_eq!(run["run"]["harness"], "claude-code");
    assert_eq!(run["run"]["status"], "completed");
    let trials = run["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 8);
    for t in trials {
        let skill = t["condition"] == "skill";
        assert_eq!(t["passed"], skill, "{t}");
        assert_eq!(t["skill_invoked"], skill, "{t}");
    }
    let again = fx.cli(&[
        "import",
        "harbor",
        job_dir.join("jobs/job").to_str().unwrap(),
    ]);
    assert!(
        text(&again.stdout).contains("0 trials imported, 8 already"),
        "{}{}",
        text(&again.stdout),
        text(&again.stderr)
    );
    // The same suite and script run locally by `skillwatch run`: the same outcomes, trial by
    // trial, and the same lift with the same interval.
    let (local, local_summary, local_time) = local_run(free_port());
    eprintln!(
        "local `skillwatch run` ({local_time:?}):\n{local_summary}\n`skillwatch run --on harbor` ({on_harbor:?}):\n{summary}"
    );
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
/// the same scripted server; the run from `history --json --trials`, its summary and time.
fn local_run(port: u16) -> (Value, String, std::time::Duration) {
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
    let took = t0.elapsed();
    let history = Command::new(skillwatch_bin())
        .args(["history", "release-codename", "--trials", "--json", "--db"])
        .arg(&db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&history.stdout).unwrap();
    (v["runs"][0].clone(), text(&out.stdout), took)
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

/// The real Codex CLI through Harbor (a second harness besides Claude Code), baked into the
/// agents image, against a scripted Responses server on the host: the skill arm reads the
/// skill's SKILL.md with a shell command, which the import reads from Harbor's Codex ATIF
/// trajectory. The job is stopped half-way (SIGINT to harbor, as Ctrl-C) after a trial
/// finished: the import takes what finished and says how many are missing; `harbor jobs
/// resume` runs the rest; importing again adds only those, with no duplicate.
#[test]
fn codex_through_harbor_stopped_half_way_resumes_and_imports_without_duplicates() {
    let Some((harbor, _)) = harbor_env() else {
        return;
    };
    let Some(image) = agents_image() else {
        return;
    };
    // Held from the first trial's last answer until Harbor has stopped: the model answers
    // nothing meanwhile, so the trials still running cannot all finish before the SIGINT lands
    // (on a quiet machine they did, and the job completed whole).
    let hold = Arc::new(AtomicBool::new(false));
    let model = mock::responses::server(codex_script(hold.clone()));
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("export");
    let export = Command::new(skillwatch_bin())
        .args(["export", "harbor"])
        .arg(workspace_root().join("tests/fixtures/harbor/skills/release-codename"))
        .arg("--out")
        .arg(&out_dir)
        .args(["--agent", "codex", "--model", "openai/gpt-5-codex"])
        .args(["--attempts", "1", "--host-network", "--base-image", &image])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", text(&export.stderr));
    let harbor_cmd = |args: &[&str]| {
        let mut c = Command::new(&harbor);
        c.args(args)
            .current_dir(&out_dir)
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("OPENAI_API_KEY", "sk-dummy")
            .env("OPENAI_BASE_URL", format!("{}/v1", model.url()))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // The SIGINT below stops Harbor only if its Python did not start with SIGINT ignored,
        // as everything started under a background job of a script does (`.ci/run &`): there
        // the job ran whole (its held trials ended at Codex's own timeout) and this test failed.
        // As skillwatch starts Harbor. SAFETY: the hook only calls signal(2), which is
        // async-signal-safe.
        unsafe {
            use std::os::unix::process::CommandExt;
            c.pre_exec(skillwatch_daemon::harbor::sigint_at_default);
        }
        c
    };
    let t0 = Instant::now();
    let mut job = harbor_cmd(&[
        "run",
        "-c",
        "job.yaml",
        "-o",
        "jobs",
        "--job-name",
        "half",
        "-y",
        "-n",
        "2",
    ])
    .spawn()
    .unwrap();
    let job_dir = out_dir.join("jobs/half");
    wait::within(
        "a trial of the job to finish",
        std::time::Duration::from_secs(300),
        || {
            assert!(
                job.try_wait().unwrap().is_none(),
                "harbor ended before a trial finished"
            );
            wait::when(finished_trials(&job_dir) > 0, || {
                let folders: Vec<_> = std::fs::read_dir(&job_dir)
                    .map(|d| d.flatten().map(|e| e.file_name()).collect())
                    .unwrap_or_default();
                format!("{}: {folders:?}", job_dir.display())
            })
        },
    );
    hold.store(true, Ordering::SeqCst);
    // SAFETY: kill has no memory effects.
    unsafe {
        libc::kill(job.id() as libc::pid_t, libc::SIGINT);
    }
    job.wait().unwrap();
    hold.store(false, Ordering::SeqCst);
    let stopped = t0.elapsed();
    let db = tmp.path().join("h.db");
    let first = import(&db, &job_dir);
    let first_out = text(&first.stdout);
    let imported = |out: &str| -> usize {
        let re = regex::Regex::new(r"(\d+) trials? imported").unwrap();
        re.captures(out).unwrap()[1].parse().unwrap()
    };
    let n = imported(&first_out);
    assert!(
        (1..4).contains(&n),
        "a partial import (Harbor stopped {stopped:?} after its start): {first_out}"
    );
    assert!(
        first_out.contains(&format!("{} trial", 4 - n)) && first_out.contains("not finished yet"),
        "says how many are missing: {first_out}"
    );
    let t1 = Instant::now();
    let resumed = harbor_cmd(&["jobs", "resume", "-p", "jobs/half"])
        .status()
        .unwrap();
    assert!(resumed.success(), "harbor jobs resume failed");
    let second = import(&db, &job_dir);
    let second_out = text(&second.stdout);
    assert!(
        second_out.contains(&format!("{} trial", 4 - n))
            && second_out.contains(&format!("{n} already")),
        "only the rest is added: {first_out}{second_out}"
    );
    eprintln!(
        "codex: stopped after {stopped:?} with {n} of 4 trials; resumed in {:?}\n{first_out}{second_out}",
        t1.elapsed()
    );
    let history = Command::new(skillwatch_bin())
        .args(["history", "release-codename", "--trials", "--json", "--db"])
        .arg(&db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&history.stdout).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["run"]["harness"], "codex");
    assert_eq!(run["run"]["status"], "completed");
    let trials = run["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 4, "no duplicates: {trials:?}");
    let mut seen = std::collections::BTreeSet::new();
    for t in trials {
        let skill = t["condition"] == "skill";
        assert!(
            seen.insert((
                t["case"].clone().to_string(),
                t["condition"].to_string(),
                t["attempt"].to_string()
            )),
            "{t}"
        );
        assert_eq!(t["passed"], skill, "{t}");
        assert_eq!(
            t["skill_invoked"], skill,
            "read from Codex's trajectory: {t}"
        );
    }
}

/// Trial folders of the job whose `result.json` says they finished.
fn finished_trials(job: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(job) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read(e.path().join("result.json")).ok())
        .filter_map(|b| serde_json::from_slice::<Value>(&b).ok())
        .filter(|v| !v["finished_at"].is_null())
        .count()
}

/// Codex's model: when a skill named release-codename is listed, read its SKILL.md with a
/// shell command (its path as Codex lists it: a short path under a skill root, `r0/...`,
/// expanded through the roots table as the model is told to); once the skill's text came
/// back, write the codename; without the skill, write UNKNOWN; after the write, end the turn.
fn codex_script(hold: Arc<AtomicBool>) -> Script {
    // The first trial's last answer starts the hold itself, so no later trial can be answered
    // between that trial's end and the test seeing it on disk (a poll).
    let first_done = AtomicBool::new(false);
    Arc::new(move |req: &ModelRequest| {
        let held = Instant::now();
        // until the test has stopped Harbor (a cap, so a Harbor that never stops cannot hang
        // the test for ever)
        while hold.load(Ordering::SeqCst) && held.elapsed().as_secs() < 900 {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let usage = MockUsage {
            input: 200,
            cached: 0,
            output: 12,
        };
        let shell = |cmd: String| ModelReply::tool("exec_command", json!({"cmd": cmd}), usage);
        match req.tool_results.len() {
            0 if req.offers_tool("exec_command") => match skill_path(&req.text) {
                Some(p) => shell(format!("cat {p}")),
                None => shell("echo UNKNOWN > answer.txt".into()),
            },
            1 if req.tool_result_mentions("is BLUE-HERON") => {
                shell("echo BLUE-HERON > answer.txt".into())
            }
            _ => {
                if !first_done.swap(true, Ordering::SeqCst) {
                    hold.store(true, Ordering::SeqCst);
                }
                ModelReply::text("Done: answer.txt written.", usage)
            }
        }
    })
}

/// The absolute path of release-codename's SKILL.md in Codex's skill listing.
fn skill_path(listing: &str) -> Option<String> {
    let entry = regex::Regex::new(r"- release-codename: .*\(file: ([^)]+)\)").unwrap();
    let short = entry.captures(listing)?[1].to_owned();
    let Some((root, rest)) = short.split_once('/') else {
        return Some(short);
    };
    let table = regex::Regex::new(&format!(r"`{}` = `([^`]+)`", regex::escape(root))).unwrap();
    Some(match table.captures(listing) {
        Some(c) => format!("{}/{rest}", &c[1]),
        None => short,
    })
}

/// A budget on a run whose trials Harbor starts (`run --on harbor --max-trials`): the engine
/// counts each trial as Harbor finishes it and, once the next would cross the limit, stops
/// Harbor (trials it had in flight end with it, so the run holds at least the limit); the run
/// ends `stopped: budget` with what it spent, completed and in the history like any run.
#[test]
fn a_budget_stops_a_run_on_harbor_and_its_partial_run_is_history() {
    let Some((harbor, _)) = harbor_env() else {
        return;
    };
    let Ok(image) = std::env::var("SKILLWATCH_HARBOR_AGENTS_IMAGE") else {
        eprintln!("skipped: no agents image (scripts/harbor-env builds it from target/agent-clis)");
        return;
    };
    let fixtures = workspace_root().join("tests/fixtures/harbor");
    let port = free_port();
    let _model = Server(
        Command::new("python3")
            .arg(fixtures.join("agent/scripted_anthropic.py"))
            .arg(port.to_string())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.sqlite3");
    let out = Command::new(skillwatch_bin())
        .arg("run")
        .arg(fixtures.join("skills/release-codename"))
        .args(["--on", "harbor", "--harness", "claude-code", "--model"])
        .args([
            "claude-sonnet-4-5",
            "--runs",
            "2",
            "-j",
            "1",
            "--max-trials",
            "2",
        ])
        .args(["--json", "--base-image", &image])
        .arg(format!("--base-url=http://127.0.0.1:{port}"))
        .arg("--harbor")
        .arg(&harbor)
        .arg("--harbor-dir")
        .arg(tmp.path().join("hb"))
        .arg("--db")
        .arg(&db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .env("ANTHROPIC_API_KEY", "sk-ant-dummy")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}\n{}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(report["stop"]["reason"], "budget", "{report:#}");
    assert_eq!(report["run"]["status"], "completed", "{report:#}");
    let spent = report["spent"]["trials"].as_u64().unwrap();
    let held = report["run"]["trial_count"].as_u64().unwrap();
    assert!((2..8).contains(&held), "of 8 planned: {report:#}");
    assert_eq!(
        spent, held,
        "every trial Harbor finished is counted: {report:#}"
    );
    let history = Command::new(skillwatch_bin())
        .args(["history", "release-codename", "--json", "--db"])
        .arg(&db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&history.stdout).unwrap();
    assert_eq!(v["runs"][0]["run"]["id"], report["run"]["id"], "{v:#}");
}
