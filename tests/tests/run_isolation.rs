//! Isolation: a skill in the (fake) user's HOME skills folders never reaches a trial; the
//! baseline sees no skill at all, the with-skill condition only the skill under test.

use std::sync::Arc;

use serde_json::json;
use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::runner::{HarnessKind, HarnessSettings, RunRequest, Runner, no_progress};
use skillwatch_daemon::store::Condition;
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::run::{RunFixture, eval_yaml};
use skillwatch_tests::trial::{LEAKED_SKILL, SKILL_NAME, fake_home};
use tokio_util::sync::CancellationToken;

/// Looks for skills where agents keep them, then answers with what it found.
fn snooping_model() -> Script {
    Arc::new(|req: &ModelRequest| {
        let u = MockUsage {
            input: 10,
            cached: 0,
            output: 1,
        };
        if req.turn == 0 {
            let cmd = "ls ~/.agents/skills ~/.claude/skills ~/.codex/skills .agents/skills 2>&1; echo HOME=$HOME";
            return ModelReply::tool("run_command", json!({"command": cmd}), u);
        }
        ModelReply::text(format!("found: {}", req.tool_results.join(" ")), u)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_in_the_users_home_is_invisible_in_the_baseline() {
    let fx = RunFixture::new(&eval_yaml(1, ""));
    let home = fake_home(fx.root.path());
    let server = mock::openai_chat::server(snooping_model());
    let host = HostEnv::from_pairs([
        ("PATH", std::env::var("PATH").unwrap()),
        ("HOME", home.display().to_string()),
        ("OPENAI_API_KEY", "sk-test".into()),
    ]);
    let harness = HarnessSettings {
        base_url: Some(format!("{}/v1", server.url())),
        ..HarnessSettings::new(HarnessKind::Openai)
    };
    let request = RunRequest::new(&fx.skill, harness, "m");
    let report = Runner::new(fx.store.clone())
        .with_host_env(host)
        .run(&request, no_progress(), CancellationToken::new())
        .await
        .unwrap();
    let store = fx.store.lock().unwrap();
    let trials = store.run_trials(report.run.id).unwrap();
    assert_eq!(trials.len(), 2);
    for t in &trials {
        let output = store.trial_output(t.id).unwrap().unwrap();
        assert!(
            !output.contains(LEAKED_SKILL),
            "{:?} saw the user's skill: {output}",
            t.condition
        );
        assert!(
            !output.contains(home.to_str().unwrap()),
            "HOME is the trial's own: {output}"
        );
        match t.condition {
            Condition::Baseline => assert!(
                !output.contains(SKILL_NAME),
                "baseline saw the target: {output}"
            ),
            Condition::Skill => assert!(
                output.contains(SKILL_NAME),
                "with-skill lacks the target: {output}"
            ),
            Condition::Plugin => panic!("a suite without a plugin arm ran one: {output}"),
        }
    }
    for body in server.bodies("/v1/chat/completions") {
        assert!(
            !body.to_string().contains(LEAKED_SKILL),
            "leaked into a request: {body}"
        );
    }
}
