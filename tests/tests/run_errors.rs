//! Infrastructure failures: a trial whose workspace could not be prepared is retried into a
//! pristine workspace; one that keeps failing is recorded as an error (never as a skill
//! failure) and the run goes on.

use skillwatch_daemon::runner::{RunEvent, RunRequest};
use skillwatch_daemon::store::{Condition, RunStatus, TrialStatus};
use skillwatch_tests::run::{RunFixture, atif_answer, command_agent, recorder};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flaky_setup_is_retried_in_a_fresh_workspace_and_broken_setup_is_an_error() {
    let fx = RunFixture::new("");
    let marks = fx.path("marks");
    std::fs::create_dir_all(&marks).unwrap();
    // `flaky` fails every other setup (the first attempt of each of its trials, one job at a
    // time), leaving a file behind; `broken` always fails.
    let suite = format!(
        "scenarios:\n  - name: flaky\n    prompt: flaky task\n    setup:\n      commands:\n        - \"n=$(cat {marks}/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > {marks}/n; if [ $((n % 2)) -eq 1 ]; then echo leftover > leftover.txt; exit 7; fi\"\n    assertions:\n      - type: file_not_exists\n        path: leftover.txt\n      - type: output_contains\n        value: GOOD\n  - name: broken\n    prompt: broken task\n    setup:\n      commands:\n        - exit 9\n",
        marks = marks.display()
    );
    std::fs::write(fx.skill.join("tests/eval.yaml"), suite).unwrap();
    let agent_dir = fx.path("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    let answer = atif_answer("GOOD");
    let harness = command_agent(
        &agent_dir,
        &format!("printf '%s' '{answer}' > \"$SKILLWATCH_TRAJECTORY\""),
    );
    let mut request = RunRequest::new(&fx.skill, harness, "m");
    request.retries = 1;
    let (progress, events) = recorder();
    let report = fx
        .runner()
        .run(&request, progress, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(report.run.status, RunStatus::Completed);
    assert_eq!(report.tally.errors, 2, "the broken case's two trials");
    let trials = fx.store.lock().unwrap().run_trials(report.run.id).unwrap();
    for t in &trials {
        if t.case == "flaky" {
            assert_eq!(t.status, TrialStatus::Completed, "{t:?}");
            assert_eq!(
                t.passed,
                Some(true),
                "the retry's workspace has no leftover: {t:?}"
            );
        } else {
            assert_eq!(t.status, TrialStatus::Error, "{t:?}");
            assert_eq!(t.passed, None, "an infrastructure error is not graded");
            let msg = t.error_message.as_deref().unwrap();
            assert!(msg.starts_with("setup: tests/eval.yaml case broken: setup command \"exit 9\": expected exit status 0, found 9"), "{msg}");
        }
    }
    let events = events.lock().unwrap();
    let retries: Vec<(String, Condition, u32)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TrialFinished {
                case,
                condition,
                retries,
                ..
            } => Some((case.clone(), *condition, *retries)),
            _ => None,
        })
        .collect();
    for (case, _, n) in &retries {
        assert_eq!(*n, 1, "{case}: one retry each ({retries:?})");
    }
    let summary = report.summary.unwrap();
    assert_eq!(
        summary.headline.outcome.excluded.errored, 1,
        "the errored pair is excluded, not scored"
    );
}
