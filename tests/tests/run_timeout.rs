//! A trial that hangs is killed at its timeout together with its children; the run goes on,
//! records the timeout, and scores the other cases. Cancelling a run kills the agents in
//! flight the same way.

use std::path::Path;
use std::time::{Duration, Instant};

use skillwatch_daemon::runner::{RunEvent, RunRequest};
use skillwatch_daemon::store::{Condition, RunStatus, TrialStatus};
use skillwatch_tests::run::{RunFixture, atif_answer, command_agent, recorder};
use skillwatch_tests::trial::wait_gone;
use skillwatch_tests::wait;
use tokio_util::sync::CancellationToken;

/// An agent that hangs (with a background child, pid written to `pids/`) on prompts saying
/// "hang", and answers GOOD at once otherwise.
fn hanging_agent(dir: &Path) -> skillwatch_daemon::runner::HarnessSettings {
    let pids = dir.join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    let answer = atif_answer("GOOD");
    command_agent(
        dir,
        &format!(
            "case \"$SKILLWATCH_PROMPT\" in\n  *hang*) sleep 300 & echo $! > {pids}/$$; sleep 300 ;;\n  *) printf '%s' '{answer}' > \"$SKILLWATCH_TRAJECTORY\" ;;\nesac",
            pids = pids.display()
        ),
    )
}

fn child_pids(dir: &Path) -> Vec<i32> {
    std::fs::read_dir(dir.join("pids"))
        .unwrap()
        .flatten()
        .map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect()
}

const SUITE: &str = "scenarios:\n  - name: quick\n    prompt: answer now\n    assertions:\n      - type: output_contains\n        value: GOOD\n  - name: stuck\n    prompt: please hang\n    timeout: 1\n    assertions:\n      - type: output_contains\n        value: GOOD\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_trial_is_killed_at_its_timeout_and_the_run_goes_on() {
    let fx = RunFixture::new(SUITE);
    let agent_dir = fx.path("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    let mut request = RunRequest::new(&fx.skill, hanging_agent(&agent_dir), "m");
    request.jobs = 2;
    let started = Instant::now();
    let report = fx
        .runner()
        .run(
            &request,
            skillwatch_daemon::runner::no_progress(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(report.run.status, RunStatus::Completed);
    assert_eq!(report.tally.timeouts, 2);
    let trials = fx.store.lock().unwrap().run_trials(report.run.id).unwrap();
    for t in &trials {
        if t.case == "stuck" {
            assert_eq!(t.status, TrialStatus::Timeout, "{t:?}");
            assert_eq!(t.passed, Some(false), "a timed-out task is not completed");
            let msg = t.error_message.as_deref().unwrap();
            assert!(
                msg.contains("timeout") && msg.contains("killed with its process group"),
                "{msg}"
            );
            let wall = t.wall_ms.unwrap();
            assert!((1000..10_000).contains(&wall), "{wall}");
        } else {
            assert_eq!(t.status, TrialStatus::Completed, "{t:?}");
            assert_eq!(t.passed, Some(true));
        }
    }
    let summary = report.summary.unwrap();
    // ACES's graded metrics leave the timed-out pair out rather than score it 0 ...
    assert_eq!(
        summary.headline.aces.excluded.timed_out, 1,
        "the timed-out pair is excluded, not scored 0"
    );
    assert_eq!(summary.headline.aces.cases, 1);
    // ... while the outcome lift counts a timeout as a failed task (here on both sides, so
    // the stuck case enters with no difference).
    let outcome = &summary.headline.outcome;
    assert_eq!((outcome.cases, outcome.excluded.total()), (2, 0));
    let stuck = summary
        .lift
        .cases
        .iter()
        .find(|c| c.case_id == "stuck")
        .unwrap();
    assert_eq!(stuck.outcome, Some(0.0));
    let pids = child_pids(&agent_dir);
    assert_eq!(
        pids.len(),
        2,
        "both conditions of the stuck case started a child"
    );
    for pid in pids {
        assert!(
            wait_gone(pid).await,
            "background child {pid} survived the timeout"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_run_kills_the_agents_in_flight_and_records_a_cancelled_run() {
    let fx =
        RunFixture::new("scenarios:\n  - name: stuck\n    prompt: please hang\n    timeout: 600\n");
    let agent_dir = fx.path("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    let mut request = RunRequest::new(&fx.skill, hanging_agent(&agent_dir), "m");
    request.jobs = 2;
    let cancel = CancellationToken::new();
    let (progress, events) = recorder();
    let trigger = cancel.clone();
    let pids_dir = agent_dir.join("pids");
    tokio::spawn(async move {
        // Cancel once both agents have started their children (or, when they never do, after
        // waiting: the assertions below then say what happened).
        let started = || {
            let pids_dir = pids_dir.clone();
            async move {
                let n = std::fs::read_dir(&pids_dir).map_or(0, |d| d.count());
                wait::when(n == 2, || n)
            }
        };
        let _ = wait::poll_async(wait::PATIENCE, started).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let report = fx.runner().run(&request, progress, cancel).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(report.run.status, RunStatus::Cancelled);
    assert_eq!(report.tally.ran, 0, "no trial finished");
    for pid in child_pids(&agent_dir) {
        assert!(
            wait_gone(pid).await,
            "child {pid} survived the cancellation"
        );
    }
    let events = events.lock().unwrap();
    let started_trials = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                RunEvent::TrialStarted {
                    condition: Condition::Baseline | Condition::Skill,
                    ..
                }
            )
        })
        .count();
    assert_eq!(started_trials, 2);
    assert!(matches!(
        events.last(),
        Some(RunEvent::Finished {
            status: RunStatus::Cancelled,
            ..
        })
    ));
}
