//! Acceptance 1 of the daemon: two CLI clients enqueue runs at once, progress events flow,
//! a running job is cancelled (its agent process is killed), the daemon is killed with
//! SIGKILL mid-run and restarted: no completed trial is lost, the interrupted runs are
//! re-queued and finish, and the database passes `PRAGMA integrity_check`.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::process::Child;
use std::time::Duration;

use skillwatch_daemon::store::{RunId, Store};
use skillwatch_protocol::{EventKind, JobFilter, JobId, JobState};
use skillwatch_tests::daemon::{
    DaemonFixture, config, events_until, integrity, model, wait_finished,
};
use skillwatch_tests::mock::openai_chat;
use skillwatch_tests::trial::{process_gone, process_state};
use skillwatch_tests::wait;

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let pid = child.id();
    wait::until(&format!("CLI client {pid} to exit"), || {
        child
            .try_wait()
            .expect("try_wait")
            .ok_or_else(|| process_state(pid as i32))
    })
}

/// (trial id, case, condition, attempt) of every trial of a run.
fn trials(db: &std::path::Path, run: i64) -> BTreeSet<(i64, String, String, u32)> {
    let store = Store::open_existing(db).expect("open history");
    store
        .run_trials(RunId(run))
        .expect("trials")
        .into_iter()
        .map(|t| (t.id.0, t.case, t.condition.to_string(), t.attempt))
        .collect()
}

#[test]
fn queue_cancel_crash_and_restart() {
    let server = openai_chat::server(model(&[], Duration::from_millis(120)));
    let mut fx = DaemonFixture::new();
    fx.write_config(&config(
        &server.url(),
        &["model-a"],
        "[daemon]\nparallel = { openai = 2, command = 1 }\n",
    ));
    let alpha = fx.add_skill("alpha", 6);
    let beta = fx.add_skill("beta", 6);
    let pid_file = fx.root.path().join("agent.pid");
    let agent = fx.root.path().join("agent.sh");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\necho $$ > {}\nexec sleep 300\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    fx.start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rpc = rt.block_on(fx.client());

    // two CLI clients at once, plus a third run to cancel (a command agent that hangs)
    let run_args = |skill: &std::path::Path| {
        let mut cmd = fx.cli_command(&["run", skill.to_str().unwrap(), "--harness", "openai"]);
        cmd.args(["--model", "model-a", "--json"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        cmd
    };
    let mut client_a = run_args(&alpha).spawn().unwrap();
    let mut client_b = run_args(&beta).spawn().unwrap();
    let mut client_c = fx
        .cli_command(&[
            "run",
            alpha.to_str().unwrap(),
            "--harness",
            "command",
            "--program",
            agent.to_str().unwrap(),
            "--model",
            "hang",
            "--json",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();

    let mut cursor = 0;
    let mut seen = Vec::new();
    rt.block_on(events_until(&rpc, &mut cursor, &mut seen, |events| {
        let queued = events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::JobQueued { .. }))
            .count();
        queued == 3
    }));
    let jobs = rt
        .block_on(rpc.list_runs(skillwatch_tests::daemon::ctx(), JobFilter::default()))
        .unwrap()
        .unwrap();
    let job_of = |harness: &str, skill: &std::path::Path| -> JobId {
        jobs.iter()
            .find(|j| {
                j.request.harness == harness && j.request.skill_dir == skill.canonicalize().unwrap()
            })
            .unwrap_or_else(|| panic!("no {harness} job for {}: {jobs:#?}", skill.display()))
            .id
    };
    let (job_a, job_b, job_c) = (
        job_of("openai", &alpha),
        job_of("openai", &beta),
        job_of("command", &alpha),
    );

    // cancel the hanging run once its agent is up: the agent process must die
    let agent_pid: i32 = wait::until("the command agent to start", || {
        let text = std::fs::read_to_string(&pid_file).unwrap_or_default();
        text.trim()
            .parse()
            .map_err(|_| format!("{}: {text:?}", pid_file.display()))
    });
    assert!(!process_gone(agent_pid));
    let cancel = fx.cli(&["cancel", &job_c.to_string(), "--json"]);
    assert!(
        cancel.status.success(),
        "{}",
        String::from_utf8_lossy(&cancel.stderr)
    );
    let cancelled: serde_json::Value = serde_json::from_slice(&cancel.stdout).unwrap();
    assert_eq!(cancelled["state"], "cancelled", "{cancelled}");
    wait::until(
        &format!("the cancelled job's agent {agent_pid} to end"),
        || wait::when(process_gone(agent_pid), || process_state(agent_pid)),
    );
    wait_exit(&mut client_c);

    // progress of both runs, then SIGKILL while they are mid-run
    rt.block_on(events_until(&rpc, &mut cursor, &mut seen, |events| {
        [job_a, job_b].iter().all(|job| {
            events.iter().any(|e| {
                matches!(&e.kind, EventKind::Progress { job: j, done, run: Some(_), .. } if j == job && *done >= 2)
            })
        })
    }));
    let running = |job: JobId| {
        rt.block_on(rpc.run_status(skillwatch_tests::daemon::ctx(), job))
            .unwrap()
            .unwrap()
    };
    let (before_a, before_b) = (running(job_a), running(job_b));
    assert_eq!(
        (before_a.state, before_b.state),
        (JobState::Running, JobState::Running),
        "both runs must still be running when the daemon is killed (slow the mock if not)"
    );
    fx.kill9();
    let run_a = before_a.run.expect("run of job a");
    let run_b = before_b.run.expect("run of job b");
    let reported = |job: JobId| {
        seen.iter()
            .filter_map(|e| match &e.kind {
                EventKind::Progress { job: j, done, .. } if *j == job => Some(*done),
                _ => None,
            })
            .max()
            .unwrap_or(0) as usize
    };
    let kept_a = trials(&fx.db, run_a);
    let kept_b = trials(&fx.db, run_b);
    assert!(
        kept_a.len() >= reported(job_a) && kept_a.len() < 12,
        "{kept_a:?}"
    );
    assert!(
        kept_b.len() >= reported(job_b) && kept_b.len() < 12,
        "{kept_b:?}"
    );
    assert_eq!(integrity(&fx.db), "ok");

    // the CLI clients notice the daemon is gone and end with an error, not a hang
    for client in [&mut client_a, &mut client_b] {
        let status = wait_exit(client);
        assert_eq!(status.code(), Some(2), "{status:?}");
    }

    // restart: both jobs are re-queued once, resume their runs, and finish
    fx.start();
    let rpc = rt.block_on(fx.client());
    for (job, run, kept) in [(job_a, run_a, &kept_a), (job_b, run_b, &kept_b)] {
        let done = rt.block_on(wait_finished(&rpc, job));
        assert_eq!(done.state, JobState::Completed, "{done:#?}");
        assert_eq!((done.interruptions, done.attempts), (1, 2), "{done:#?}");
        assert_eq!(done.run, Some(run), "the interrupted run is resumed");
        let now = trials(&fx.db, run);
        assert_eq!(now.len(), 12, "6 cases x 2 conditions");
        assert!(kept.is_subset(&now), "a completed trial was lost");
        assert!(done.lift.is_some_and(|l| l > 0.5), "{done:#?}");
    }
    let c = rt
        .block_on(rpc.run_status(skillwatch_tests::daemon::ctx(), job_c))
        .unwrap()
        .unwrap();
    assert_eq!(
        c.state,
        JobState::Cancelled,
        "a cancelled job stays cancelled"
    );
    assert_eq!(integrity(&fx.db), "ok");
    let store = Store::open_existing(&fx.db).unwrap();
    assert!(store.integrity_check().unwrap().is_empty());
    assert!(fx.terminate().success());
}
