//! The `claude-code` harness: the real Claude Code CLI in print mode with its JSON event stream.
//!
//! `claude -p --output-format stream-json --verbose --model M --permission-mode P -- PROMPT`,
//! run in the workspace with skills staged in `.claude/skills/<name>/` (project skills), a
//! fresh `CLAUDE_CONFIG_DIR` and HOME (no personal skills, settings or CLAUDE.md), and
//! `ANTHROPIC_BASE_URL` set when configured. Verified against Claude Code 2.1.328.
//!
//! `--dangerously-skip-permissions` is refused when running as root; `--permission-mode
//! bypassPermissions` with `IS_SANDBOX=1` works for every user, so that is the default.

use std::path::{Path, PathBuf};

use skillwatch_core::trajectory::parse_claude_stream_json;
use tokio::sync::OnceCell;

use super::cli::{self, CliHarness};
use super::env::{HostEnv, TrialDirs, TrialEnv};
use super::process::Invocation;
use super::{BoxFuture, Harness, HarnessError, TrialOutcome, TrialSpec};

/// Host variables Claude Code may see besides [`super::BASE_ALLOW`]: its credentials and the
/// API endpoint (overridden by the configured base URL).
pub const CLAUDE_ALLOW: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
];

/// What Claude Code answers when it has no credential.
const NOT_LOGGED_IN: &str = "Not logged in";

/// Said after [`NOT_LOGGED_IN`] when no key was given: Claude Code's own advice (`/login`)
/// cannot help a trial, which runs with a fresh HOME.
const NO_CREDENTIALS_HINT: &str = " (no API key reached Claude Code: set ANTHROPIC_API_KEY, or \
     name the variable holding it with --api-key-env or [harness.claude-code] api_key_env; \
     trials run with a fresh HOME, so a `claude` login does not reach them)";

/// How to run Claude Code.
#[derive(Debug, Clone)]
pub struct ClaudeCodeConfig {
    /// The `claude` executable.
    pub program: PathBuf,
    /// `ANTHROPIC_BASE_URL` for every trial (a proxy, a gateway or a test server).
    pub base_url: Option<String>,
    /// `ANTHROPIC_API_KEY` for every trial; otherwise the host's is passed through.
    pub api_key: Option<String>,
    /// `--permission-mode`; trials cannot answer permission prompts.
    pub permission_mode: String,
    /// Extra arguments before the prompt (e.g. `--max-turns 20`).
    pub extra_args: Vec<String>,
    /// Further host variables to pass through.
    pub env_allow: Vec<String>,
    /// The environment trials draw from.
    pub host_env: HostEnv,
}

impl Default for ClaudeCodeConfig {
    fn default() -> ClaudeCodeConfig {
        ClaudeCodeConfig {
            program: "claude".into(),
            base_url: None,
            api_key: None,
            permission_mode: "bypassPermissions".into(),
            extra_args: Vec::new(),
            env_allow: Vec::new(),
            host_env: HostEnv::current(),
        }
    }
}

/// The Claude Code adapter.
#[derive(Debug)]
pub struct ClaudeCode {
    config: ClaudeCodeConfig,
    version: OnceCell<String>,
}

impl ClaudeCode {
    /// An adapter running Claude Code as `config` says.
    pub fn new(config: ClaudeCodeConfig) -> ClaudeCode {
        ClaudeCode {
            config,
            version: OnceCell::new(),
        }
    }

    fn env(&self, dirs: &TrialDirs, config_dir: &Path) -> TrialEnv {
        let c = &self.config;
        let mut env = TrialEnv::scrubbed(&c.host_env, CLAUDE_ALLOW, &c.env_allow);
        env.isolate(dirs);
        env.set("CLAUDE_CONFIG_DIR", config_dir.display().to_string());
        if let Some(url) = &c.base_url {
            env.set("ANTHROPIC_BASE_URL", url.clone());
        }
        if let Some(key) = &c.api_key {
            env.set("ANTHROPIC_API_KEY", key.clone());
        }
        for var in [
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "DISABLE_TELEMETRY",
            "DISABLE_AUTOUPDATER",
            "DISABLE_ERROR_REPORTING",
            "IS_SANDBOX",
        ] {
            env.set(var, "1");
        }
        env
    }

    fn invocation(&self, spec: &TrialSpec, env: TrialEnv) -> Invocation {
        let c = &self.config;
        let mut args: Vec<String> = vec![
            "-p".into(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--model".into(),
            spec.model.clone(),
            "--permission-mode".into(),
            c.permission_mode.clone(),
        ];
        args.extend(c.extra_args.iter().cloned());
        args.push("--".into());
        args.push(spec.prompt.clone());
        Invocation {
            program: c.program.clone(),
            args: args.into_iter().map(Into::into).collect(),
            env: env.into_vec(),
            cwd: spec.workspace.clone(),
        }
    }

    async fn run_trial(&self, spec: &TrialSpec) -> TrialOutcome {
        let h = CliHarness {
            name: "claude-code",
            skills_dir: self.skills_dir(),
            config_dir: "claude-config",
        };
        let invocation =
            |dirs: &TrialDirs, config: &Path| self.invocation(spec, self.env(dirs, config));
        let version = self.cached_version().await;
        let mut outcome =
            cli::run_cli_trial(h, version, spec, invocation, parse_claude_stream_json).await;
        if self.no_credentials() {
            for e in outcome
                .errors
                .iter_mut()
                .filter(|e| e.message.contains(NOT_LOGGED_IN))
            {
                e.message.push_str(NO_CREDENTIALS_HINT);
            }
        }
        outcome
    }

    /// Whether no credential reaches the CLI: its own login cannot, since every trial runs
    /// with a fresh HOME and config dir.
    fn no_credentials(&self) -> bool {
        let c = &self.config;
        c.api_key.is_none() && c.host_env.get("ANTHROPIC_AUTH_TOKEN").is_none()
    }

    async fn cached_version(&self) -> Result<String, HarnessError> {
        self.version
            .get_or_try_init(|| {
                cli::isolated_version(&self.config.program, "claude-config", |dirs, config| {
                    self.env(dirs, config).into_vec()
                })
            })
            .await
            .cloned()
    }
}

impl Harness for ClaudeCode {
    fn name(&self) -> &str {
        "claude-code"
    }

    fn skills_dir(&self) -> &Path {
        Path::new(".claude/skills")
    }

    fn version(&self) -> BoxFuture<'_, Result<String, HarnessError>> {
        Box::pin(self.cached_version())
    }

    fn run<'a>(&'a self, spec: &'a TrialSpec) -> BoxFuture<'a, TrialOutcome> {
        Box::pin(self.run_trial(spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn argv_and_env_follow_the_documented_flags() {
        let host =
            HostEnv::from_pairs([("PATH", "/bin"), ("HOME", "/home/me"), ("CLAUDECODE", "1")]);
        let h = ClaudeCode::new(ClaudeCodeConfig {
            base_url: Some("http://127.0.0.1:9".into()),
            api_key: Some("sk-test".into()),
            host_env: host,
            ..ClaudeCodeConfig::default()
        });
        let tmp = tempfile::tempdir().unwrap();
        let dirs = TrialDirs::create(tmp.path()).unwrap();
        let spec = TrialSpec {
            prompt: "-starts with a dash".into(),
            model: "claude-sonnet-4-5".into(),
            workspace: tmp.path().join("ws"),
            scratch: tmp.path().to_path_buf(),
            skills: vec![],
            timeout: Duration::from_secs(1),
            stop_when: None,
            plant: Default::default(),
        };
        let inv = h.invocation(&spec, h.env(&dirs, &tmp.path().join("cfg")));
        let args: Vec<String> = inv
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            &args[..4],
            ["-p", "--output-format", "stream-json", "--verbose"]
        );
        assert_eq!(&args[args.len() - 2..], ["--", "-starts with a dash"]);
        let env: std::collections::BTreeMap<_, _> = inv.env.into_iter().collect();
        assert_eq!(env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:9");
        assert_eq!(
            env["CLAUDE_CONFIG_DIR"],
            tmp.path().join("cfg").display().to_string()
        );
        assert_ne!(env["HOME"], "/home/me");
        assert!(
            !env.contains_key("CLAUDECODE"),
            "nesting marker must not leak"
        );
    }
}
