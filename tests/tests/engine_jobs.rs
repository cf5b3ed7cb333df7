//! Every kind of run is a job of the one engine (issue 37): a trigger run and a probe run
//! through the daemon are queued, listed by `status` with their kind, cancelled by job id (their
//! agents killed), and a trigger run cut off by `kill -9` of the daemon is `interrupted` at
//! the next start. A request of a kind the daemon does not know (a newer client's) is refused
//! with both protocol versions named, never run as another kind.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillwatch_daemon::store::{RunStatus, Store, TriggerRunId};
use skillwatch_protocol::{JobFilter, JobKind, JobState, PROTOCOL_VERSION};
use skillwatch_tests::daemon::{DaemonFixture, frame};
use skillwatch_tests::trial::process_gone;
use skillwatch_tests::{code, stderr, stdout};

use crate::trigger_history::fixture;

/// A `command` agent that writes its pid to `pids/<n>` and hangs.
fn hanging_agent(root: &Path) -> (PathBuf, PathBuf) {
    let pids = root.join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let agent = root.join("hang.sh");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\necho $$ > {}/$$\nexec sleep 300\n",
            pids.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    (agent, pids)
}

/// The pids the hanging agents wrote so far.
fn agent_pids(pids: &Path) -> Vec<i32> {
    std::fs::read_dir(pids)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `skillwatch CMD SKILL` on the hanging agent, spawned (it follows its job until it ends).
fn spawn(fx: &DaemonFixture, cmd: &str, skill: &Path, agent: &Path, extra: &[&str]) -> Child {
    fx.cli_command(&[cmd, skill.to_str().unwrap()])
        .args(["--harness", "command", "--model", "m", "--program"])
        .arg(agent)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `skillwatch status --json`: the daemon's jobs.
fn jobs(fx: &DaemonFixture) -> Vec<Value> {
    let out = fx.cli(&["status", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    v.as_array()
        .cloned()
        .or_else(|| v["jobs"].as_array().cloned())
        .unwrap_or_default()
}

#[test]
fn status_lists_a_trigger_job_and_a_probe_job_and_cancel_stops_each() {
    let mut fx = DaemonFixture::new();
    let skill = fixture(&fx.workspace);
    let (agent, pids) = hanging_agent(fx.root.path());
    fx.start();
    let mut trigger = spawn(&fx, "trigger", &skill, &agent, &[]);
    wait_until("the trigger job's agent", Duration::from_secs(60), || {
        !agent_pids(&pids).is_empty()
    });
    let mut probe = spawn(&fx, "probe", &skill, &agent, &["--probe", "PB-03"]);
    wait_until("both jobs queued", Duration::from_secs(60), || {
        jobs(&fx).len() == 2
    });

    // one `command` job at a time: the trigger job runs, the probe job waits; both are listed
    let listed = jobs(&fx);
    let of = |kind: &str| -> Value {
        listed
            .iter()
            .find(|j| j["request"]["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} job: {listed:#?}"))
            .clone()
    };
    let (t, p) = (of("trigger"), of("probe"));
    assert_eq!(t["state"], "running", "{t:#}");
    assert_eq!(p["state"], "queued", "{p:#}");
    let text = stdout(&fx.cli(&["status"]));
    for (job, kind) in [(&t, "trigger"), (&p, "probe")] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&job["id"].to_string()))
            .unwrap_or_else(|| panic!("no line for job {}: {text}", job["id"]));
        assert!(line.contains(kind), "{line}");
    }

    // cancel the running trigger job: its agent dies, the job and its run are cancelled
    let first = agent_pids(&pids)[0];
    let out = fx.cli(&["cancel", &t["id"].to_string(), "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let cancelled: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(cancelled["state"], "cancelled", "{cancelled:#}");
    wait_until(
        "the trigger agent is killed",
        Duration::from_secs(10),
        || process_gone(first),
    );
    let run = cancelled["trigger_run"].as_i64().expect("its trigger run");
    let store = Store::open_existing(&fx.db).unwrap();
    let stored = store.trigger_run(TriggerRunId(run)).unwrap().unwrap();
    assert_eq!(stored.status, RunStatus::Cancelled);

    // the probe job starts next; cancel it too, while its agent hangs
    wait_until("the probe job's agent", Duration::from_secs(60), || {
        agent_pids(&pids).len() == 2
    });
    let second = *agent_pids(&pids).iter().find(|p| **p != first).unwrap();
    let out = fx.cli(&["cancel", &p["id"].to_string(), "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let cancelled: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(cancelled["state"], "cancelled", "{cancelled:#}");
    assert!(cancelled["probe_run"].is_number(), "{cancelled:#}");
    wait_until("the probe agent is killed", Duration::from_secs(10), || {
        process_gone(second)
    });
    for child in [&mut trigger, &mut probe] {
        let status = child.wait().unwrap();
        assert!(status.code().is_some(), "a client died by a signal");
    }
    assert!(fx.terminate().success());
}

#[test]
fn kill_9_of_the_daemon_during_a_trigger_run_leaves_it_interrupted_at_the_next_start() {
    let mut fx = DaemonFixture::new();
    let skill = fixture(&fx.workspace);
    let (agent, pids) = hanging_agent(fx.root.path());
    fx.start();
    let mut client = spawn(&fx, "trigger", &skill, &agent, &[]);
    wait_until("the trigger job's agent", Duration::from_secs(60), || {
        !agent_pids(&pids).is_empty()
    });
    let job = jobs(&fx).into_iter().next().expect("the trigger job");
    assert_eq!(job["request"]["kind"], "trigger");
    let run = job["trigger_run"].as_i64().expect("its trigger run, begun");
    fx.kill9();
    let _ = client.wait();

    fx.start();
    let store = Store::open_existing(&fx.db).unwrap();
    let jobs = store.jobs(&JobFilter::default()).unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:#?}");
    assert_eq!(jobs[0].request.kind, JobKind::Trigger);
    assert_eq!(jobs[0].state, JobState::Interrupted, "{jobs:#?}");
    assert_eq!(jobs[0].trigger_run, Some(run));
    assert!(
        jobs[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("cannot resume"),
        "{jobs:#?}"
    );
    let stored = store.trigger_run(TriggerRunId(run)).unwrap().unwrap();
    assert_eq!(stored.status, RunStatus::Interrupted);
    // the restarted daemon killed the agent the killed one left running
    let left = agent_pids(&pids)[0];
    wait_until("the left agent is killed", Duration::from_secs(20), || {
        process_gone(left)
    });
    assert!(fx.terminate().success());
}

/// A graceful stop ends a job that cannot resume as a crash does: `interrupted`, not put back
/// in the queue to start over at the next start (a second run, spent again).
#[test]
fn a_graceful_stop_during_a_trigger_run_leaves_it_interrupted_not_requeued() {
    let mut fx = DaemonFixture::new();
    let skill = fixture(&fx.workspace);
    let (agent, pids) = hanging_agent(fx.root.path());
    fx.start();
    let mut client = spawn(&fx, "trigger", &skill, &agent, &[]);
    wait_until("the trigger job's agent", Duration::from_secs(60), || {
        !agent_pids(&pids).is_empty()
    });
    let run = jobs(&fx)[0]["trigger_run"]
        .as_i64()
        .expect("its trigger run");
    assert!(fx.terminate().success(), "a graceful stop");
    let _ = client.wait();

    fx.start();
    let store = Store::open_existing(&fx.db).unwrap();
    let jobs = store.jobs(&JobFilter::default()).unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:#?}");
    assert_eq!(jobs[0].state, JobState::Interrupted, "{jobs:#?}");
    assert_eq!(jobs[0].trigger_run, Some(run), "no second trigger run");
    let note = jobs[0].error.as_deref().unwrap_or("");
    assert!(note.contains("a trigger run cannot resume"), "{note}");
    assert!(fx.terminate().success());
}

#[test]
fn a_request_of_a_kind_the_daemon_does_not_know_is_refused_with_both_versions() {
    let mut fx = DaemonFixture::new();
    let skill = fx.add_skill("newer", 1);
    fx.start();
    let mut stream = UnixStream::connect(fx.socket()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    // what a client of protocol 99 sends for a kind of run this daemon has never heard of
    let skill = skill.canonicalize().unwrap();
    let request = json!({
        "skill_dir": skill, "harness": "openai", "model": "m", "judge_model": null,
        "runs": null, "jobs": null, "cases": [], "base_url": null, "timeout_secs": null,
        "trigger": "manual", "kind": "distill", "protocol": 99,
        "spec": {"kind": "distill", "skill_dir": skill, "rounds": 3, "split": [0.6, 0.4]},
    });
    frame::write(
        &mut stream,
        &frame::request(7, json!({"EnqueueRun": {"request": request}})),
    );
    let answer = frame::read(&mut stream).expect("an answer, not a dropped connection");
    assert_eq!(answer["request_id"], 7, "{answer}");
    let refused = &answer["message"]["Ok"]["EnqueueRun"]["Err"];
    assert_eq!(refused["kind"], "invalid", "{answer}");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("`distill`")
            && message.contains(&format!("protocol {PROTOCOL_VERSION}"))
            && message.contains("protocol 99")
            && message.contains("skillwatch daemon stop"),
        "{message}"
    );
    // nothing was queued, and the connection still answers
    frame::write(&mut stream, &frame::request(8, json!({"Status": {}})));
    let status = frame::read(&mut stream).expect("status");
    assert_eq!(status["message"]["Ok"]["Status"]["queued"], 0, "{status}");
    let store = Store::open_existing(&fx.db).unwrap();
    assert!(store.jobs(&JobFilter::default()).unwrap().is_empty());
    assert!(fx.terminate().success());
}
