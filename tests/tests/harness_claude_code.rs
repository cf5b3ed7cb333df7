//! The real Claude Code CLI (npm `@anthropic-ai/claude-code`, installed by .ci/run) driven by
//! the `claude-code` harness against a scripted Anthropic Messages server on 127.0.0.1.

use std::sync::Arc;
use std::time::Duration;

use skillwatch_core::trajectory::{LoadSignal, RunContext, parse_claude_stream_json, skill_loads};
use skillwatch_daemon::harness::{ClaudeCode, ClaudeCodeConfig, Harness, HostEnv, TrialStatus};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::trial::{
    LEAKED_SKILL, SKILL_MARKER, SKILL_NAME, TrialDirs, agent_cli, fake_home, skip_agent_clis,
};

const PROMPT: &str = "Format table.md so its columns line up.";

fn usage(input: u64, cached: u64, output: u64) -> MockUsage {
    MockUsage {
        input,
        cached,
        output,
    }
}

/// Calls the Skill tool when Claude Code lists the skill, answers GOOD once the skill body
/// Claude Code injects after the call is in the conversation, BAD otherwise.
fn skill_sensitive_model() -> Script {
    Arc::new(|req: &ModelRequest| {
        if req.mentions(SKILL_MARKER) {
            return ModelReply::text(
                "GOOD: columns padded as the skill says",
                usage(300, 100, 20),
            );
        }
        if req.turn == 0 && req.offers_tool("Skill") && req.mentions(&format!("- {SKILL_NAME}:")) {
            return ModelReply::tool(
                "Skill",
                serde_json::json!({"skill": SKILL_NAME}),
                usage(200, 0, 12),
            );
        }
        ModelReply::text("BAD: left the table as it was", usage(100, 0, 8))
    })
}

fn host_env(home: Option<&str>) -> HostEnv {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let mut pairs = vec![("PATH".to_owned(), path)];
    if let Some(h) = home {
        pairs.push(("HOME".into(), h.into()));
    }
    HostEnv::from_pairs(pairs)
}

fn harness(server: &mock::MockServer, host: HostEnv) -> ClaudeCode {
    ClaudeCode::new(ClaudeCodeConfig {
        program: agent_cli("claude"),
        base_url: Some(server.url()),
        api_key: Some("sk-test".into()),
        host_env: host,
        ..ClaudeCodeConfig::default()
    })
}

#[tokio::test]
async fn paired_trials_on_the_real_cli_detect_the_skill_invocation() {
    if skip_agent_clis("paired_trials_on_the_real_cli_detect_the_skill_invocation") {
        return;
    }
    let server = mock::anthropic::server(skill_sensitive_model());
    let h = harness(&server, host_env(None));
    let version = h.version().await.expect("claude --version");
    assert!(
        version.starts_with(|c: char| c.is_ascii_digit()),
        "{version}"
    );

    let dirs = TrialDirs::new();
    let with = h
        .run(&dirs.spec(
            "with",
            PROMPT,
            vec![dirs.demo_skill()],
            Duration::from_secs(120),
        ))
        .await;
    assert_eq!(
        with.status,
        TrialStatus::Ok,
        "{:?}\n{:?}",
        with.errors,
        with.logs
    );
    assert!(with.workspace_skill_visible(SKILL_NAME));
    assert!(with.invoked(SKILL_NAME));
    let loads = skill_loads(with.trajectory.as_ref().unwrap());
    assert!(matches!(&loads[0].signal, LoadSignal::SkillTool { tool } if tool == "Skill"));
    assert_eq!(with.final_output, "GOOD: columns padded as the skill says");
    assert_eq!(with.harness.version, version);
    assert_eq!((with.tool_calls, with.turns), (1, 2));
    // The two scripted replies, 200+0+12 and 300 (100 cached)+20, sent in Anthropic's
    // convention (input excludes cache reads) and read back in ATIF's.
    let t = with.tokens;
    assert_eq!((t.input, t.cached, t.output), (500, 100, 32));
    assert!(with.cost_usd.is_some_and(|c| c > 0.0));
    assert!(with.wall_ms > 0);

    let base_dirs = TrialDirs::new();
    let without = h
        .run(&base_dirs.spec("without", PROMPT, vec![], Duration::from_secs(120)))
        .await;
    assert_eq!(without.status, TrialStatus::Ok, "{:?}", without.errors);
    assert!(!without.workspace_skill_visible(SKILL_NAME));
    assert!(!without.invoked(SKILL_NAME));
    assert_eq!(without.final_output, "BAD: left the table as it was");
    assert_eq!(without.tool_calls, 0);
}

#[tokio::test]
async fn a_trial_with_no_api_key_says_which_variable_to_set() {
    if skip_agent_clis("a_trial_with_no_api_key_says_which_variable_to_set") {
        return;
    }
    let server = mock::anthropic::server(skill_sensitive_model());
    let h = ClaudeCode::new(ClaudeCodeConfig {
        program: agent_cli("claude"),
        base_url: Some(server.url()),
        api_key: None,
        host_env: host_env(None),
        ..ClaudeCodeConfig::default()
    });
    let dirs = TrialDirs::new();
    let out = h
        .run(&dirs.spec("no-key", PROMPT, vec![], Duration::from_secs(120)))
        .await;
    assert_eq!(out.status, TrialStatus::Error, "{:?}", out.errors);
    // Claude Code's own advice is `/login`, which a trial's fresh HOME never sees
    let said: Vec<&str> = out.errors.iter().map(|e| e.message.as_str()).collect();
    assert!(
        said.iter().any(|m| m.contains("Not logged in")
            && m.contains("no API key reached Claude Code: set ANTHROPIC_API_KEY")),
        "{said:?}"
    );
}

#[tokio::test]
async fn personal_skills_in_the_users_home_never_reach_the_baseline() {
    if skip_agent_clis("personal_skills_in_the_users_home_never_reach_the_baseline") {
        return;
    }
    let dirs = TrialDirs::new();
    let home = fake_home(dirs.root.path());
    let server = mock::anthropic::server(skill_sensitive_model());
    let h = harness(&server, host_env(Some(home.to_str().unwrap())));
    let out = h
        .run(&dirs.spec("baseline", PROMPT, vec![], Duration::from_secs(120)))
        .await;
    assert_eq!(out.status, TrialStatus::Ok, "{:?}", out.errors);
    let visible = out.visible_skills.clone().expect("init event lists skills");
    assert!(!visible.iter().any(|s| s == LEAKED_SKILL), "{visible:?}");
    for body in server.bodies("/v1/messages") {
        assert!(
            !body.to_string().contains(LEAKED_SKILL),
            "leaked into a request"
        );
    }

    // Control: the same CLI with the user's HOME and no isolation does see the personal skill,
    // so the assertions above would catch a leak.
    let ws = dirs.root.path().join("control-ws");
    std::fs::create_dir_all(&ws).unwrap();
    let output = std::process::Command::new(agent_cli("claude"))
        .args([
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "mock-model",
        ])
        .args(["--permission-mode", "bypassPermissions", "--", PROMPT])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "sk-test")
        .env("IS_SANDBOX", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .current_dir(&ws)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run claude without isolation");
    let run = parse_claude_stream_json(
        &String::from_utf8_lossy(&output.stdout),
        &RunContext::default(),
    );
    let seen = run.visible_skills.unwrap_or_default();
    assert!(
        seen.iter().any(|s| s == LEAKED_SKILL),
        "control run did not see the personal skill: {seen:?}"
    );
}

#[tokio::test]
async fn a_workspace_under_a_folder_with_skills_is_refused_before_the_cli_starts() {
    if skip_agent_clis("a_workspace_under_a_folder_with_skills_is_refused_before_the_cli_starts") {
        return;
    }
    let dirs = TrialDirs::new();
    // Claude Code would list this parent-folder skill in both conditions.
    skillwatch_tests::trial::write_skill(
        &dirs.root.path().join(".claude/skills"),
        "parent-skill",
        "A skill above the workspace.",
        "PARENT",
    );
    let server = mock::anthropic::server(skill_sensitive_model());
    let out = harness(&server, host_env(None))
        .run(&dirs.spec(
            "with",
            PROMPT,
            vec![dirs.demo_skill()],
            Duration::from_secs(120),
        ))
        .await;
    assert_eq!(out.status, TrialStatus::Error);
    assert_eq!(
        out.errors[0].kind,
        skillwatch_daemon::harness::ErrorKind::Setup
    );
    assert!(
        out.errors[0].message.contains(".claude/skills"),
        "{}",
        out.errors[0].message
    );
    assert!(
        server.bodies("/v1/messages").is_empty(),
        "the CLI must not have run"
    );
}

/// Lets the test read "was the workspace skill listed to the model" off an outcome.
trait Visible {
    fn workspace_skill_visible(&self, name: &str) -> bool;
}

impl Visible for skillwatch_daemon::harness::TrialOutcome {
    fn workspace_skill_visible(&self, name: &str) -> bool {
        self.visible_skills
            .as_ref()
            .is_some_and(|s| s.iter().any(|n| n == name))
    }
}
