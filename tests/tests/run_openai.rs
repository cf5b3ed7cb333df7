//! `skillwatch run`'s runner on the `openai` adapter against a scripted chat-completions
//! server on 127.0.0.1 that behaves better when the skill is loaded: the measured lift has the
//! right sign and magnitude, invocation is detected, tokens and times are stored.

use std::sync::Arc;

use serde_json::json;
use skillwatch_core::scoring::Verdict;
use skillwatch_daemon::runner::{HarnessKind, HarnessSettings, RunEvent, RunRequest};
use skillwatch_daemon::store::{Condition, RunStatus, TrialStatus};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::run::{RunFixture, eval_yaml, recorder};
use skillwatch_tests::trial::{SKILL_MARKER, SKILL_NAME};
use tokio_util::sync::CancellationToken;

fn usage(input: u64, cached: u64, output: u64) -> MockUsage {
    MockUsage {
        input,
        cached,
        output,
    }
}

/// Loads the skill when the system prompt lists it; answers GOOD once the SKILL.md text came
/// back in a tool result, BAD otherwise.
fn skill_sensitive_model() -> Script {
    Arc::new(|req: &ModelRequest| {
        if req.tool_result_mentions(SKILL_MARKER) {
            return ModelReply::text(
                "GOOD: columns padded as the skill says",
                usage(300, 120, 20),
            );
        }
        if req.turn == 0 && req.mentions(&format!("- {SKILL_NAME}:")) {
            return ModelReply::tool("load_skill", json!({"name": SKILL_NAME}), usage(200, 0, 12));
        }
        ModelReply::text("BAD: left the table as it was", usage(100, 0, 8))
    })
}

fn openai(server: &mock::MockServer) -> HarnessSettings {
    HarnessSettings {
        base_url: Some(format!("{}/v1", server.url())),
        ..HarnessSettings::new(HarnessKind::Openai)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_skill_that_helps_gets_the_lift_it_earns() {
    let fx = RunFixture::new(&eval_yaml(3, ""));
    let server = mock::openai_chat::server(skill_sensitive_model());
    let mut request = RunRequest::new(&fx.skill, openai(&server), "mock-model");
    request.runs = 2;
    request.jobs = 3;
    let (progress, events) = recorder();
    let report = fx
        .runner()
        .run(&request, progress, CancellationToken::new())
        .await
        .expect("run");

    assert_eq!(report.run.status, RunStatus::Completed);
    assert_eq!(report.run.skill, SKILL_NAME);
    assert_eq!(report.tally.planned, 12);
    assert_eq!(report.tally.ran, 12);
    let summary = report.summary.as_ref().expect("summary");
    // Per trial (metrics module): with the skill, activation 1, routing 1, tool efficiency 1,
    // the GOOD assertion holds, no unsafe action; without it, nothing loaded, no tool call,
    // the assertion fails. Lift per metric: pass 1, security 0, skill_execution 1,
    // skill_efficiency 1, behavior_check 1; the outcome lift is pass and behavior_check, the
    // ACES overall the mean of the four default metrics.
    let metric = |name: &str| {
        summary
            .lift
            .metrics
            .iter()
            .find(|m| m.metric.name() == name)
            .unwrap_or_else(|| panic!("no {name} in {:?}", summary.lift.metrics))
            .lift
    };
    assert_eq!(metric("security"), 0.0);
    assert_eq!(metric("skill_execution"), 1.0);
    assert_eq!(metric("skill_efficiency"), 1.0);
    assert_eq!(metric("behavior_check"), 1.0);
    assert_eq!(metric("pass"), 1.0);
    assert!(
        summary.lift.metric(&"accuracy".to_owned().into()).is_none(),
        "no judge, no accuracy"
    );
    let outcome = &summary.headline.outcome;
    assert_eq!(outcome.lift, Some(1.0));
    assert_eq!((outcome.cases, outcome.pairs), (3, 6));
    let aces = summary.headline.aces.lift.expect("ACES overall");
    assert!((aces - 0.75).abs() < 1e-12, "{aces}");
    // Three cases cannot show a difference at 95%, however large: the verdict says so.
    assert_eq!(report.verdict.verdict, Verdict::Inconclusive);
    assert_eq!(report.verdict.needed_cases, Some(6));
    let invocation = summary.headline.invocation_rate.expect("invocation rate");
    assert_eq!(invocation.estimate, 1.0);
    assert_eq!(summary.headline.attempts, 2);

    for row in &report.cases {
        assert_eq!((row.baseline.passed, row.skill.passed), (0, 2), "{row:?}");
        assert_eq!((row.baseline.invoked, row.skill.invoked), (0, 2));
        assert_eq!(row.lift, Some(1.0));
    }

    let trials = fx.store.lock().unwrap().run_trials(report.run.id).unwrap();
    assert_eq!(trials.len(), 12);
    for t in &trials {
        assert_eq!(t.status, TrialStatus::Completed, "{t:?}");
        let with = t.condition == Condition::Skill;
        assert_eq!(t.skill_invoked, Some(with));
        assert_eq!(t.passed, Some(with));
        let (input, cached, output) = if with { (500, 120, 32) } else { (100, 0, 8) };
        assert_eq!(
            (t.tokens.input, t.tokens.cached, t.tokens.output),
            (Some(input), Some(cached), Some(output))
        );
        assert_eq!(t.tool_calls, Some(u32::from(with)));
        let wall = t.wall_ms.expect("wall time stored");
        assert!(wall < 30_000, "{wall}");
        assert_eq!(
            (t.assertions_passed, t.assertions_total),
            (u32::from(with), 1)
        );
        let sha = t.trajectory_sha256.as_ref().expect("trajectory stored");
        let stored = fx
            .store
            .lock()
            .unwrap()
            .trajectory(sha)
            .unwrap()
            .expect("trajectory");
        let atif: serde_json::Value = serde_json::from_slice(&stored.bytes).unwrap();
        let loaded = &atif["extra"]["skillwatch"]["loaded_skills"];
        assert_eq!(loaded, &json!(if with { vec![SKILL_NAME] } else { vec![] }));
        assert_eq!(atif["extra"]["skillwatch"]["security"]["score"], 1.0);
    }

    // Every request the baseline made came without the skill in its system prompt.
    let bodies = server.bodies("/v1/chat/completions");
    let listed = bodies
        .iter()
        .filter(|b| {
            b["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains(SKILL_NAME)
        })
        .count();
    assert_eq!(
        listed, 12,
        "two requests per with-skill trial list it, none of the baseline's"
    );

    let events = events.lock().unwrap();
    assert!(
        matches!(events.first(), Some(RunEvent::Started { run, planned: 12, .. }) if *run == report.run.id)
    );
    let finished = events
        .iter()
        .filter(|e| matches!(e, RunEvent::TrialFinished { .. }))
        .count();
    assert_eq!(finished, 12);
    assert!(matches!(
        events.last(),
        Some(RunEvent::Finished {
            status: RunStatus::Completed,
            ..
        })
    ));
}
