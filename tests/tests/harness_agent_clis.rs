//! The real Gemini CLI, OpenCode and Copilot CLI (pinned by scripts/test) driven by their
//! harnesses against scripted model servers on 127.0.0.1: Gemini's own API for Gemini CLI,
//! streamed OpenAI chat completions for OpenCode and Copilot CLI (its own-provider mode). A
//! paired run on each: the baseline answers badly, the skill arm calls the skill tool, gets
//! the SKILL.md text and answers well, and the load is detected in the trajectory.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use skillwatch_core::trajectory::{LoadSignal, skill_loads};
use skillwatch_daemon::harness::{Harness, HostEnv, TrialStatus};
use skillwatch_daemon::runner::{HarnessKind, HarnessSettings};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::trial::{SKILL_MARKER, SKILL_NAME, TrialDirs, agent_cli, skip_agent_clis};

const PROMPT: &str = "Format table.md so its columns line up.";

/// Calls `tool` with `args` when the skill is listed and the model has not acted yet; answers
/// GOOD once the SKILL.md text is in the conversation, BAD otherwise.
fn skill_sensitive(tool: &'static str, args: serde_json::Value) -> Script {
    Arc::new(move |req: &ModelRequest| {
        if req.mentions(SKILL_MARKER) {
            return ModelReply::text(
                "GOOD: columns padded as the skill says",
                MockUsage::tokens(300, 20),
            );
        }
        if req.turn == 0
            && req.offers_tool(tool)
            && req.mentions(&format!("<name>{SKILL_NAME}</name>"))
        {
            return ModelReply::tool(tool, args.clone(), MockUsage::tokens(200, 12));
        }
        ModelReply::text("BAD: left the table as it was", MockUsage::tokens(100, 8))
    })
}

fn harness(kind: HarnessKind, program: &str, base: String) -> Arc<dyn Harness> {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let key = kind.default_api_key_env().unwrap();
    let host = HostEnv::from_pairs([("PATH", path.as_str()), (key, "sk-test")]);
    let mut settings = HarnessSettings::new(kind);
    settings.program = Some(agent_cli(program));
    settings.base_url = Some(base);
    skillwatch_daemon::harness::settings::build(&settings, &host).expect("harness")
}

async fn paired(h: Arc<dyn Harness>, tool: &str) {
    let version = h.version().await.expect("--version");
    let dirs = TrialDirs::new();
    let with = h
        .run(&dirs.spec(
            "with",
            PROMPT,
            vec![dirs.demo_skill()],
            Duration::from_secs(240),
        ))
        .await;
    assert_eq!(
        with.status,
        TrialStatus::Ok,
        "{}: {:?}\n{:?}",
        h.name(),
        with.errors,
        with.stderr_tail
    );
    assert!(
        with.invoked(SKILL_NAME),
        "{}: {:?}",
        h.name(),
        with.trajectory
    );
    let loads = skill_loads(with.trajectory.as_ref().unwrap());
    assert!(
        matches!(&loads[0].signal, LoadSignal::SkillTool { tool: t } if t == tool),
        "{}: {loads:?}",
        h.name()
    );
    assert_eq!(
        with.final_output,
        "GOOD: columns padded as the skill says",
        "{}",
        h.name()
    );
    assert_eq!(with.harness.version, version);

    let base_dirs = TrialDirs::new();
    let without = h
        .run(&base_dirs.spec("without", PROMPT, vec![], Duration::from_secs(240)))
        .await;
    assert_eq!(
        without.status,
        TrialStatus::Ok,
        "{}: {:?}",
        h.name(),
        without.errors
    );
    assert!(!without.invoked(SKILL_NAME));
    assert_eq!(
        without.final_output,
        "BAD: left the table as it was",
        "{}",
        h.name()
    );
}

#[tokio::test]
async fn gemini_cli_paired_trials_detect_the_skill_activation() {
    if skip_agent_clis("gemini_cli_paired_trials_detect_the_skill_activation") {
        return;
    }
    let server = mock::gemini::server(skill_sensitive(
        "activate_skill",
        json!({"name": SKILL_NAME}),
    ));
    let h = harness(HarnessKind::GeminiCli, "gemini", server.url());
    paired(h, "activate_skill").await;
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.path.starts_with("/v1beta/models/"))
    );
}

#[tokio::test]
async fn opencode_paired_trials_detect_the_skill_tool() {
    if skip_agent_clis("opencode_paired_trials_detect_the_skill_tool") {
        return;
    }
    let server = mock::openai_chat::server(skill_sensitive("skill", json!({"name": SKILL_NAME})));
    let h = harness(
        HarnessKind::Opencode,
        "opencode",
        format!("{}/v1", server.url()),
    );
    paired(h, "skill").await;
}

#[tokio::test]
async fn copilot_cli_paired_trials_detect_the_skill_tool() {
    if skip_agent_clis("copilot_cli_paired_trials_detect_the_skill_tool") {
        return;
    }
    let server = mock::openai_chat::server(skill_sensitive("skill", json!({"skill": SKILL_NAME})));
    let h = harness(
        HarnessKind::CopilotCli,
        "copilot",
        format!("{}/v1", server.url()),
    );
    paired(h, "skill").await;
}
