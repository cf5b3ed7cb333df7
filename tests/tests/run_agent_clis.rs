//! Paired runs end to end on the real agent CLIs (installed by .ci/run): Claude Code against a
//! scripted Anthropic Messages server (SSE) and Codex against a scripted Responses server, both
//! on 127.0.0.1, with a fake user HOME full of personal skills. The skill is visible and used
//! only in the with-skill condition, the personal skills never, and the lift is measured.
//! Without the CLIs: a failure in CI, a visible skip elsewhere (`skillwatch_tests::needs`).

use std::sync::Arc;

use serde_json::{Value, json};
use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::runner::{
    HarnessKind, HarnessSettings, RunReport, RunRequest, Runner, no_progress,
};
use skillwatch_daemon::store::{Condition, RunStatus, TrialStatus};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::run::{RunFixture, eval_yaml};
use skillwatch_tests::trial::{
    LEAKED_SKILL, SKILL_MARKER, SKILL_NAME, agent_cli, fake_home, skip_agent_clis,
};
use tokio_util::sync::CancellationToken;

fn usage(input: u64, cached: u64, output: u64) -> MockUsage {
    MockUsage {
        input,
        cached,
        output,
    }
}

/// GOOD once the skill's text is in the conversation; loads the skill with `load` when the
/// harness lists it; BAD otherwise.
fn skill_sensitive_model(load: fn() -> ModelReply) -> Script {
    Arc::new(move |req: &ModelRequest| {
        if req.mentions(SKILL_MARKER) {
            return ModelReply::text(
                "GOOD: columns padded as the skill says",
                usage(300, 100, 20),
            );
        }
        if req.turn == 0 && req.mentions(&format!("- {SKILL_NAME}:")) {
            return load();
        }
        ModelReply::text("BAD: left the table as it was", usage(100, 0, 8))
    })
}

async fn paired_run(fx: &RunFixture, harness: HarnessSettings) -> RunReport {
    let home = fake_home(fx.root.path());
    let host = HostEnv::from_pairs([
        ("PATH", std::env::var("PATH").unwrap()),
        ("HOME", home.display().to_string()),
        ("SW_TEST_KEY", "sk-test".into()),
    ]);
    let mut request = RunRequest::new(&fx.skill, harness, "mock-model");
    request.jobs = 2;
    request.timeout_secs = Some(180);
    Runner::new(fx.store.clone())
        .with_host_env(host)
        .run(&request, no_progress(), CancellationToken::new())
        .await
        .expect("paired run")
}

/// The assertions both CLIs share: a complete run, the lift the script earns, invocation in
/// the with-skill condition only, tokens and times stored.
fn check_run(fx: &RunFixture, report: &RunReport) -> Vec<Value> {
    assert_eq!(report.run.status, RunStatus::Completed);
    assert_eq!(
        report.tally.errors + report.tally.timeouts,
        0,
        "{report:#?}"
    );
    let summary = report.summary.as_ref().unwrap();
    let metric = |name: &str| {
        summary
            .lift
            .metrics
            .iter()
            .find(|m| m.metric.name() == name)
            .unwrap()
            .lift
    };
    assert_eq!(metric("behavior_check"), 1.0);
    assert_eq!(metric("skill_execution"), 1.0);
    assert_eq!(metric("security"), 0.0);
    let lift = summary.headline.outcome.lift.unwrap();
    assert!(lift > 0.5, "{lift}");
    let store = fx.store.lock().unwrap();
    let mut extras = Vec::new();
    for t in store.run_trials(report.run.id).unwrap() {
        assert_eq!(t.status, TrialStatus::Completed, "{t:?}");
        let with = t.condition == Condition::Skill;
        assert_eq!(
            (t.skill_invoked, t.passed),
            (Some(with), Some(with)),
            "{t:?}"
        );
        let (input, output) = (t.tokens.input.unwrap(), t.tokens.output.unwrap());
        assert_eq!((input, output), if with { (500, 32) } else { (100, 8) });
        assert!(t.wall_ms.unwrap() > 0);
        let raw = store
            .trajectory(t.trajectory_sha256.as_ref().unwrap())
            .unwrap()
            .unwrap();
        let atif: Value = serde_json::from_slice(&raw.bytes).unwrap();
        let mut extra = atif["extra"]["skillwatch"].clone();
        extra["condition"] = json!(t.condition);
        extras.push(extra);
    }
    extras
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_paired_run_end_to_end() {
    if skip_agent_clis("claude_code_paired_run_end_to_end") {
        return;
    }
    let fx = RunFixture::new(&eval_yaml(2, ""));
    let load = || ModelReply::tool("Skill", json!({"skill": SKILL_NAME}), usage(200, 0, 12));
    let server = mock::anthropic::server(skill_sensitive_model(load));
    let harness = HarnessSettings {
        program: Some(agent_cli("claude")),
        base_url: Some(server.url()),
        api_key_env: Some("SW_TEST_KEY".into()),
        ..HarnessSettings::new(HarnessKind::ClaudeCode)
    };
    let report = paired_run(&fx, harness).await;
    let extras = check_run(&fx, &report);
    let headline = report.summary.unwrap().headline;
    assert_eq!(headline.outcome.lift, Some(1.0));
    assert!((headline.aces.lift.unwrap() - 0.75).abs() < 1e-12);
    for extra in extras {
        // Claude Code's own init event says which skills the model was shown.
        let visible: Vec<&str> = extra["visible_skills"]
            .as_array()
            .expect("init.skills recorded")
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert!(!visible.contains(&LEAKED_SKILL), "{visible:?}");
        let with = extra["condition"] == "skill";
        assert_eq!(visible.contains(&SKILL_NAME), with, "{visible:?}");
    }
    for body in server.bodies("/v1/messages") {
        assert!(
            !body.to_string().contains(LEAKED_SKILL),
            "leaked into a request"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_paired_run_end_to_end() {
    if skip_agent_clis("codex_paired_run_end_to_end") {
        return;
    }
    let fx = RunFixture::new(&eval_yaml(2, ""));
    let load = || {
        let cmd = format!("sed -n '1,200p' .agents/skills/{SKILL_NAME}/SKILL.md");
        ModelReply::tool("exec_command", json!({"cmd": cmd}), usage(200, 0, 12))
    };
    let server = mock::responses::server(skill_sensitive_model(load));
    let harness = HarnessSettings {
        program: Some(agent_cli("codex")),
        base_url: Some(format!("{}/v1", server.url())),
        api_key_env: Some("SW_TEST_KEY".into()),
        ..HarnessSettings::new(HarnessKind::Codex)
    };
    let report = paired_run(&fx, harness).await;
    let extras = check_run(&fx, &report);
    for extra in extras {
        let loaded = extra["loaded_skills"].as_array().unwrap();
        let with = extra["condition"] == "skill";
        assert_eq!(loaded.len(), usize::from(with), "{extra}");
    }
    for body in server.bodies("/v1/responses") {
        assert!(
            !body.to_string().contains(LEAKED_SKILL),
            "leaked into a request"
        );
    }
}

/// Reads the skill's SKILL.md with `read` on its first turn in both conditions, whatever the
/// skill listing says; GOOD once the skill's text came back, BAD otherwise. In the baseline
/// the skill is withheld, so the read fails: "No such file or directory".
fn blind_reader(read: fn() -> ModelReply) -> Script {
    Arc::new(move |req: &ModelRequest| {
        if req.mentions(SKILL_MARKER) {
            return ModelReply::text(
                "GOOD: columns padded as the skill says",
                usage(300, 100, 20),
            );
        }
        if req.turn == 0 {
            return read();
        }
        ModelReply::text("BAD: left the table as it was", usage(100, 0, 8))
    })
}

/// A failed read of SKILL.md is not an invocation: the baseline's attempt is recorded as a
/// failed read, the with-skill condition's successful one as the invocation.
fn check_failed_reads(fx: &RunFixture, report: &RunReport) {
    assert_eq!(report.run.status, RunStatus::Completed, "{report:#?}");
    for row in &report.cases {
        assert_eq!(row.baseline.invoked, 0, "{row:?}");
        assert_eq!(row.skill.invoked, 1, "{row:?}");
    }
    let summary = report.summary.as_ref().unwrap();
    let exec = summary
        .lift
        .metrics
        .iter()
        .find(|m| m.metric.name() == "skill_execution")
        .unwrap();
    assert_eq!(
        exec.baseline_mean, 0.0,
        "the baseline's failed read earns nothing"
    );
    let store = fx.store.lock().unwrap();
    for t in store.run_trials(report.run.id).unwrap() {
        let with = t.condition == Condition::Skill;
        assert_eq!(t.skill_invoked, Some(with), "{t:?}");
        let raw = store
            .trajectory(t.trajectory_sha256.as_ref().unwrap())
            .unwrap()
            .unwrap();
        let atif: Value = serde_json::from_slice(&raw.bytes).unwrap();
        let extra = &atif["extra"]["skillwatch"];
        let failed = extra["failed_skill_reads"].as_array().unwrap();
        if with {
            assert!(failed.is_empty(), "{extra}");
            assert_eq!(extra["loaded_skills"], json!([SKILL_NAME]), "{extra}");
        } else {
            assert_eq!(failed.len(), 1, "{extra}");
            assert_eq!(failed[0]["skill"], SKILL_NAME, "{extra}");
            assert_eq!(extra["loaded_skills"], json!([]), "{extra}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_a_failed_skill_read_is_not_an_invocation() {
    if skip_agent_clis("claude_code_a_failed_skill_read_is_not_an_invocation") {
        return;
    }
    let fx = RunFixture::new(&eval_yaml(2, ""));
    let read = || {
        let command = format!("cat .claude/skills/{SKILL_NAME}/SKILL.md");
        ModelReply::tool(
            "Bash",
            json!({"command": command, "description": "read the skill"}),
            usage(200, 0, 12),
        )
    };
    let server = mock::anthropic::server(blind_reader(read));
    let harness = HarnessSettings {
        program: Some(agent_cli("claude")),
        base_url: Some(server.url()),
        api_key_env: Some("SW_TEST_KEY".into()),
        ..HarnessSettings::new(HarnessKind::ClaudeCode)
    };
    let report = paired_run(&fx, harness).await;
    check_failed_reads(&fx, &report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_a_failed_skill_read_is_not_an_invocation() {
    if skip_agent_clis("codex_a_failed_skill_read_is_not_an_invocation") {
        return;
    }
    let fx = RunFixture::new(&eval_yaml(2, ""));
    let read = || {
        let cmd = format!("cat .agents/skills/{SKILL_NAME}/SKILL.md");
        ModelReply::tool("exec_command", json!({"cmd": cmd}), usage(200, 0, 12))
    };
    let server = mock::responses::server(blind_reader(read));
    let harness = HarnessSettings {
        program: Some(agent_cli("codex")),
        base_url: Some(format!("{}/v1", server.url())),
        api_key_env: Some("SW_TEST_KEY".into()),
        ..HarnessSettings::new(HarnessKind::Codex)
    };
    let report = paired_run(&fx, harness).await;
    check_failed_reads(&fx, &report);
}
