//! Baseline reuse: after editing SKILL.md only the with-skill condition runs again (half the
//! trials); anything a baseline depends on (model, case, harness settings) invalidates it.
//! Resume: a cancelled run is reopened and only its missing trials run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use skillwatch_daemon::runner::{
    HarnessKind, HarnessSettings, RunEvent, RunReport, RunRequest, no_progress,
};
use skillwatch_daemon::store::{Condition, RunStatus};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::run::{RunFixture, eval_yaml, recorder};
use skillwatch_tests::trial::{SKILL_MARKER, SKILL_NAME};
use tokio_util::sync::CancellationToken;

fn usage() -> MockUsage {
    MockUsage {
        input: 10,
        cached: 0,
        output: 2,
    }
}

/// GOOD once the skill was loaded, BAD otherwise; counts the trials it started (first turns).
fn model(first_turns: Arc<AtomicUsize>) -> Script {
    Arc::new(move |req: &ModelRequest| {
        if req.turn == 0 {
            first_turns.fetch_add(1, Ordering::SeqCst);
        }
        if req.tool_result_mentions(SKILL_MARKER) {
            return ModelReply::text("GOOD", usage());
        }
        if req.turn == 0 && req.mentions(&format!("- {SKILL_NAME}:")) {
            return ModelReply::tool("load_skill", json!({"name": SKILL_NAME}), usage());
        }
        ModelReply::text("BAD", usage())
    })
}

struct Setup {
    fx: RunFixture,
    server: mock::MockServer,
    trials_started: Arc<AtomicUsize>,
}

impl Setup {
    fn new() -> Setup {
        let trials_started = Arc::new(AtomicUsize::new(0));
        Setup {
            fx: RunFixture::new(&eval_yaml(2, "")),
            server: mock::openai_chat::server(model(trials_started.clone())),
            trials_started,
        }
    }

    fn request(&self, model: &str) -> RunRequest {
        let harness = HarnessSettings {
            base_url: Some(format!("{}/v1", self.server.url())),
            ..HarnessSettings::new(HarnessKind::Openai)
        };
        let mut r = RunRequest::new(&self.fx.skill, harness, model);
        r.runs = 2;
        r.jobs = 2;
        r
    }

    async fn run(&self, request: &RunRequest) -> (RunReport, usize) {
        let before = self.trials_started.load(Ordering::SeqCst);
        let report = self
            .fx
            .runner()
            .run(request, no_progress(), CancellationToken::new())
            .await
            .unwrap();
        (report, self.trials_started.load(Ordering::SeqCst) - before)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_the_skill_reruns_only_the_with_skill_condition() {
    let s = Setup::new();
    let (first, agents) = s.run(&s.request("m1")).await;
    assert_eq!((agents, first.tally.reused), (8, 0));

    s.fx.edit_skill("pad cells and right-align numbers");
    let (second, agents) = s.run(&s.request("m1")).await;
    assert_eq!(agents, 4, "only the with-skill trials ran");
    assert_eq!((second.tally.ran, second.tally.reused), (4, 4));
    assert_ne!(
        first.run.skill_hash, second.run.skill_hash,
        "a new skill version"
    );
    assert_eq!(second.run.status, RunStatus::Completed);
    let lift = second.summary.as_ref().unwrap().headline.aces.lift.unwrap();
    assert!(
        (lift - 0.75).abs() < 1e-12,
        "pairs with reused baselines are scored: {lift}"
    );
    assert_eq!(
        second.summary.as_ref().unwrap().headline.outcome.lift,
        Some(1.0)
    );
    let (old, new) = {
        let store = s.fx.store.lock().unwrap();
        (
            store.run_trials(first.run.id).unwrap(),
            store.run_trials(second.run.id).unwrap(),
        )
    };
    for t in new.iter().filter(|t| t.condition == Condition::Baseline) {
        let original = old
            .iter()
            .find(|o| {
                o.condition == Condition::Baseline && o.case == t.case && o.attempt == t.attempt
            })
            .unwrap();
        assert_eq!(
            (t.tokens, t.wall_ms, &t.metrics),
            (original.tokens, original.wall_ms, &original.metrics)
        );
        assert_eq!(t.trajectory_sha256, original.trajectory_sha256);
        assert_ne!(t.id, original.id, "a copy in the new run");
    }
    let reused = second.run.config["reused"].as_array().unwrap();
    assert_eq!(reused.len(), 4);

    // A third run reuses the originals of the first run, never the copies in the second, so
    // it still gets two distinct baselines per case.
    let (third, agents) = s.run(&s.request("m1")).await;
    assert_eq!((agents, third.tally.reused), (4, 4));
    let from: std::collections::BTreeSet<i64> = third.run.config["reused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["from_run"].as_i64().unwrap())
        .collect();
    assert_eq!(from, [first.run.id.0].into());

    // Another model is another baseline.
    let (other, agents) = s.run(&s.request("m2")).await;
    assert_eq!((agents, other.tally.reused), (8, 0));
    // Turning reuse off runs everything.
    let mut fresh = s.request("m1");
    fresh.reuse_baselines = false;
    let (_, agents) = s.run(&fresh).await;
    assert_eq!(agents, 8);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_a_case_reruns_that_case_s_baseline() {
    let s = Setup::new();
    s.run(&s.request("m1")).await;
    let suite = eval_yaml(2, "").replace("(1).", "(1), carefully.");
    std::fs::write(s.fx.skill.join("tests/eval.yaml"), suite).unwrap();
    let (second, agents) = s.run(&s.request("m1")).await;
    assert_eq!(second.tally.reused, 2, "case-0's two baselines only");
    assert_eq!(agents, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_resumes_with_only_its_missing_trials() {
    let s = Setup::new();
    let cancel = CancellationToken::new();
    let (progress, _) = recorder();
    let trigger = cancel.clone();
    let finished = Arc::new(AtomicUsize::new(0));
    let counter = finished.clone();
    let progress_then_cancel: skillwatch_daemon::runner::ProgressSink =
        Arc::new(move |e: &RunEvent| {
            progress(e);
            if matches!(e, RunEvent::TrialFinished { .. })
                && counter.fetch_add(1, Ordering::SeqCst) == 2
            {
                trigger.cancel();
            }
        });
    let mut request = s.request("m1");
    request.jobs = 1;
    let cancelled =
        s.fx.runner()
            .run(&request, progress_then_cancel, cancel)
            .await
            .unwrap();
    assert_eq!(cancelled.run.status, RunStatus::Cancelled);
    let done = cancelled.tally.ran;
    assert!((3..8).contains(&done), "{done}");

    let mut resume = s.request("m1");
    resume.resume = Some(cancelled.run.id);
    let (resumed, agents) = s.run(&resume).await;
    assert_eq!(resumed.run.id, cancelled.run.id);
    assert_eq!(resumed.run.status, RunStatus::Completed);
    assert_eq!((resumed.tally.resumed, resumed.tally.ran), (done, 8 - done));
    assert_eq!(agents, 8 - done);
    assert_eq!(resumed.run.trial_count, 8);
    let lift = resumed.summary.unwrap().headline.aces.lift.unwrap();
    assert!((lift - 0.75).abs() < 1e-12);

    // A completed run cannot be resumed; a different model cannot resume it either.
    let again = s.fx.runner().prepare(&resume).await.err().unwrap();
    assert!(again.to_string().contains("a completed run"), "{again}");
    let mut wrong = s.request("m2");
    wrong.resume = Some(cancelled.run.id);
    let e = s.fx.runner().prepare(&wrong).await.err().unwrap();
    assert!(
        e.to_string().contains("expected model m2, found model m1"),
        "{e}"
    );
}
