//! The `codex` harness: the real Codex CLI's non-interactive mode with its JSON event stream.
//!
//! `codex exec --json --skip-git-repo-check --cd WS <sandbox flags> -m M [-c provider] -- PROMPT`
//! with skills staged in `.agents/skills/<name>/` (repository skills, found from the working
//! directory), a fresh `CODEX_HOME` and HOME (no user skills in `~/.agents/skills` or
//! `$CODEX_HOME/skills`, no user config), stdin from /dev/null (Codex reads stdin when it is not
//! a terminal). A configured base URL becomes a custom model provider speaking the Responses
//! API, the only wire protocol Codex 0.169 accepts. Verified against Codex 0.169.0.

use std::path::{Path, PathBuf};

use skillwatch_core::trajectory::parse_codex_exec_json;
use tokio::sync::OnceCell;

use super::cli::{self, CliHarness};
use super::env::{HostEnv, TrialDirs, TrialEnv};
use super::process::Invocation;
use super::{BoxFuture, Harness, HarnessError, TrialOutcome, TrialSpec};

/// Host variables Codex may see besides [`super::BASE_ALLOW`]: its credentials.
pub const CODEX_ALLOW: &[&str] = &["OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"];

/// The name of the provider skillwatch defines when a base URL is configured.
const PROVIDER: &str = "skillwatch";

/// How much Codex may do outside the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodexSandbox {
    /// `--dangerously-bypass-approvals-and-sandbox`: no OS sandbox, no approvals. The default:
    /// the trial is already isolated by its own workspace, HOME and environment, and Codex's
    /// OS sandbox does not start in many containers.
    Bypass,
    /// `--sandbox workspace-write` with approvals off.
    WorkspaceWrite,
    /// `--sandbox read-only` with approvals off.
    ReadOnly,
}

/// How to run Codex.
#[derive(Debug, Clone)]
pub struct CodexConfig {
    /// The `codex` executable.
    pub program: PathBuf,
    /// A Responses API base URL (e.g. `http://127.0.0.1:8080/v1`) used as a custom provider.
    pub base_url: Option<String>,
    /// `OPENAI_API_KEY` for every trial; otherwise the host's is passed through.
    pub api_key: Option<String>,
    /// The sandbox mode.
    pub sandbox: CodexSandbox,
    /// Extra arguments before the prompt (e.g. `-c model_reasoning_effort="low"`).
    pub extra_args: Vec<String>,
    /// Further host variables to pass through.
    pub env_allow: Vec<String>,
    /// The environment trials draw from.
    pub host_env: HostEnv,
}

impl Default for CodexConfig {
    fn default() -> CodexConfig {
        CodexConfig {
            program: "codex".into(),
            base_url: None,
            api_key: None,
            sandbox: CodexSandbox::Bypass,
            extra_args: Vec::new(),
            env_allow: Vec::new(),
            host_env: HostEnv::current(),
        }
    }
}

/// The Codex adapter.
#[derive(Debug)]
pub struct Codex {
    config: CodexConfig,
    version: OnceCell<String>,
}

impl Codex {
    /// An adapter running Codex as `config` says.
    pub fn new(config: CodexConfig) -> Codex {
        Codex {
            config,
            version: OnceCell::new(),
        }
    }

    fn env(&self, dirs: &TrialDirs, codex_home: &Path) -> TrialEnv {
        let c = &self.config;
        let mut env = TrialEnv::scrubbed(&c.host_env, CODEX_ALLOW, &c.env_allow);
        env.isolate(dirs);
        env.set("CODEX_HOME", codex_home.display().to_string());
        if let Some(key) = &c.api_key {
            env.set("OPENAI_API_KEY", key.clone());
        }
        env
    }

    fn invocation(&self, spec: &TrialSpec, env: TrialEnv) -> Invocation {
        let c = &self.config;
        let mut args: Vec<String> = vec![
            "exec".into(),
            "--json".into(),
            "--skip-git-repo-check".into(),
            "--cd".into(),
            spec.workspace.display().to_string(),
        ];
        match c.sandbox {
            CodexSandbox::Bypass => args.push("--dangerously-bypass-approvals-and-sandbox".into()),
            CodexSandbox::WorkspaceWrite => args.extend(sandbox_args("workspace-write")),
            CodexSandbox::ReadOnly => args.extend(sandbox_args("read-only")),
        }
        args.extend(["-m".into(), spec.model.clone()]);
        if let Some(url) = &c.base_url {
            args.extend(provider_args(url));
        }
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
            name: "codex",
            skills_dir: self.skills_dir(),
            config_dir: "codex-home",
        };
        let invocation =
            |dirs: &TrialDirs, home: &Path| self.invocation(spec, self.env(dirs, home));
        let version = self.cached_version().await;
        cli::run_cli_trial(h, version, spec, invocation, parse_codex_exec_json).await
    }

    async fn cached_version(&self) -> Result<String, HarnessError> {
        self.version
            .get_or_try_init(|| {
                cli::isolated_version(&self.config.program, "codex-home", |dirs, home| {
                    self.env(dirs, home).into_vec()
                })
            })
            .await
            .cloned()
    }
}

fn sandbox_args(mode: &str) -> Vec<String> {
    vec![
        "--sandbox".into(),
        mode.into(),
        "-c".into(),
        "approval_policy=\"never\"".into(),
    ]
}

/// `-c` overrides defining and selecting a Responses API provider at `url`.
fn provider_args(url: &str) -> Vec<String> {
    let url = toml::Value::String(url.to_owned()).to_string();
    vec![
        "-c".into(),
        format!("model_provider=\"{PROVIDER}\""),
        "-c".into(),
        format!(
            "model_providers.{PROVIDER}={{name=\"{PROVIDER}\",base_url={url},wire_api=\"responses\",env_key=\"OPENAI_API_KEY\"}}"
        ),
    ]
}

impl Harness for Codex {
    fn name(&self) -> &str {
        "codex"
    }

    fn skills_dir(&self) -> &Path {
        Path::new(".agents/skills")
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

    #[test]
    fn provider_override_is_valid_toml_even_for_odd_urls() {
        let args = provider_args("http://h/v1?a=\"b\"");
        let table: toml::Table = toml::from_str(&args[3]).unwrap();
        let p = &table["model_providers"][PROVIDER];
        assert_eq!(p["base_url"].as_str(), Some("http://h/v1?a=\"b\""));
        assert_eq!(p["wire_api"].as_str(), Some("responses"));
        assert_eq!(args[1], "model_provider=\"skillwatch\"");
    }
}
