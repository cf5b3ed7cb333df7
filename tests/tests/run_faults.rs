//! Fault injection at the model API, for every harness that talks to one: the real Claude Code
//! and Codex CLIs and the built-in openai loop meet a model server that answers 500, closes
//! the connection, never answers, or sends garbage, one fault per eval case, all in one run.
//! Every trial is recorded, none as a pass or a plain task failure, and its message names the
//! cause, so a person reading `skillwatch show` knows the model API failed, and how.

use std::time::{Duration, Instant};

use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::runner::{HarnessKind, HarnessSettings, RunRequest, Runner, no_progress};
use skillwatch_daemon::store::{RunStatus, StoredTrial, TrialStatus};
use skillwatch_tests::mock::faults::{Injected, injecting};
use skillwatch_tests::mock::{self, MockServer, MockUsage, ModelReply, Script};
use skillwatch_tests::run::RunFixture;
use skillwatch_tests::trial::{agent_cli, fake_home, skip_agent_clis};
use tokio_util::sync::CancellationToken;

/// Per-trial timeout: the hang is found by it, and a CLI that retries a 500 is killed by it.
const TIMEOUT_SECS: u32 = 25;

fn healthy() -> Script {
    std::sync::Arc::new(|_req| {
        ModelReply::text(
            "GOOD",
            MockUsage {
                input: 10,
                cached: 0,
                output: 1,
            },
        )
    })
}

async fn run_with_faults(harness: HarnessSettings) -> Vec<StoredTrial> {
    let fx = RunFixture::new(&Injected::eval_yaml());
    let home = fake_home(fx.root.path());
    let host = HostEnv::from_pairs([
        ("PATH", std::env::var("PATH").unwrap()),
        ("HOME", home.display().to_string()),
        ("SW_TEST_KEY", "sk-test".into()),
    ]);
    let mut request = RunRequest::new(&fx.skill, harness, "mock-model");
    request.jobs = 4;
    request.timeout_secs = Some(TIMEOUT_SECS);
    let started = Instant::now();
    let report = Runner::new(fx.store.clone())
        .with_host_env(host)
        .run(&request, no_progress(), CancellationToken::new())
        .await
        .expect("the run itself does not fail");
    assert!(
        started.elapsed() < Duration::from_secs(u64::from(TIMEOUT_SECS) * 4 + 60),
        "{:?}",
        started.elapsed()
    );
    // every trial met a fault: the run measured nothing, so it is stored failed (issue 36)
    assert_eq!(report.run.status, RunStatus::Failed, "{report:#?}");
    let trials = fx.store.lock().unwrap().run_trials(report.run.id).unwrap();
    assert_eq!(
        trials.len(),
        Injected::ALL.len() * 2,
        "every trial recorded"
    );
    trials
}

fn check(trials: &[StoredTrial]) {
    let mut wrong = Vec::new();
    for t in trials {
        let fault = Injected::of_case(&t.case).unwrap();
        let msg = t.error_message.clone().unwrap_or_default();
        eprintln!("{} {}: {} {msg}", t.case, t.condition, t.status);
        let named = fault.named_in(&msg);
        if t.status != TrialStatus::Error || !named {
            wrong.push(format!(
                "{} {}: {} {:?}",
                t.case, t.condition, t.status, msg
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_records_every_model_api_fault_with_its_cause() {
    let server = MockServer::start(injecting(
        mock::openai_chat::handler(healthy()),
        "application/json",
    ));
    let harness = HarnessSettings {
        base_url: Some(format!("{}/v1", server.url())),
        api_key_env: Some("SW_TEST_KEY".into()),
        ..HarnessSettings::new(HarnessKind::Openai)
    };
    check(&run_with_faults(harness).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_records_every_model_api_fault_with_its_cause() {
    if skip_agent_clis("claude_code_records_every_model_api_fault_with_its_cause") {
        return;
    }
    let server = MockServer::start(injecting(
        mock::anthropic::handler(healthy()),
        "text/event-stream",
    ));
    let harness = HarnessSettings {
        program: Some(agent_cli("claude")),
        base_url: Some(server.url()),
        api_key_env: Some("SW_TEST_KEY".into()),
        ..HarnessSettings::new(HarnessKind::ClaudeCode)
    };
    check(&run_with_faults(harness).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_records_every_model_api_fault_with_its_cause() {
    if skip_agent_clis("codex_records_every_model_api_fault_with_its_cause") {
        return;
    }
    let server = MockServer::start(injecting(
        mock::responses::handler(healthy()),
        "text/event-stream",
    ));
    let harness = HarnessSettings {
        program: Some(agent_cli("codex")),
        base_url: Some(format!("{}/v1", server.url())),
        api_key_env: Some("SW_TEST_KEY".into()),
        ..HarnessSettings::new(HarnessKind::Codex)
    };
    check(&run_with_faults(harness).await);
}
