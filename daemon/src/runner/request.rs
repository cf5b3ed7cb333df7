//! What a run is asked to do: the serializable request the CLI builds from flags and
//! `skillwatch.toml`, and the daemon stores in its job queue and sends over RPC.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::harness::{
    AgentCliConfig, CLAUDE_ALLOW, CODEX_ALLOW, COPILOT_ALLOW, ClaudeCode, ClaudeCodeConfig, Codex,
    CodexConfig, CommandConfig, CommandHarness, CopilotCli, GEMINI_ALLOW, GeminiCli, Harness,
    HostEnv, OPENCODE_ALLOW, OpenAi, OpenAiConfig, Opencode,
};
use crate::store::{RunId, Trigger};

use super::RunError;

/// The per-trial timeout when neither the case nor the request sets one (skill-validator's).
pub const DEFAULT_TIMEOUT_SECS: u32 = 120;

/// One paired evaluation to run. Every field but `skill_dir`, `harness` and `model` has a
/// default, so a request deserialized from a few JSON keys is complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The skill folder (with SKILL.md and its eval file).
    pub skill_dir: PathBuf,
    /// The harness that runs the agent.
    pub harness: HarnessSettings,
    /// The agent's model.
    pub model: String,
    /// LLM judging; `None` grades with deterministic checks only.
    #[serde(default)]
    pub judge: Option<JudgeSettings>,
    /// Attempts per case and condition (pairs per case).
    #[serde(default = "one")]
    pub runs: u32,
    /// Trials in flight at once.
    #[serde(default = "one_usize")]
    pub jobs: usize,
    /// Seconds per trial, overriding the cases' own timeouts; `None` uses each case's
    /// `timeout` (eval.yaml's default is 120 s), else [`DEFAULT_TIMEOUT_SECS`].
    #[serde(default)]
    pub timeout_secs: Option<u32>,
    /// Support and decoy skill folders, installed in both conditions.
    #[serde(default)]
    pub support_skills: Vec<PathBuf>,
    /// Only these case ids (all cases when empty).
    #[serde(default)]
    pub cases: Vec<String>,
    /// Why the run happens.
    #[serde(default = "manual")]
    pub trigger: Trigger,
    /// Seed of the run's statistics.
    #[serde(default)]
    pub seed: u64,
    /// Copy baseline trials from earlier runs when nothing they depend on changed.
    #[serde(default = "yes")]
    pub reuse_baselines: bool,
    /// Retries of a trial whose workspace or agent could not be started (each into a fresh
    /// workspace); agent failures are recorded, not retried.
    #[serde(default = "two")]
    pub retries: u32,
    /// Resume this interrupted run instead of starting a new one: its recorded trials are kept
    /// and only the missing ones run.
    #[serde(default)]
    pub resume: Option<RunId>,
    /// Keep each trial's workspace and logs (under the system temp dir) for debugging.
    #[serde(default)]
    pub keep_workspaces: bool,
    /// Run the trials on Harbor instead of here (`skillwatch run --on harbor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harbor: Option<crate::harbor::HarborTarget>,
}

fn one() -> u32 {
    1
}
fn one_usize() -> usize {
    1
}
fn two() -> u32 {
    2
}
fn yes() -> bool {
    true
}
fn manual() -> Trigger {
    Trigger::Manual
}

impl RunRequest {
    /// A request with every default: one attempt, one job, no judge.
    pub fn new(
        skill_dir: impl Into<PathBuf>,
        harness: HarnessSettings,
        model: impl Into<String>,
    ) -> RunRequest {
        RunRequest {
            skill_dir: skill_dir.into(),
            harness,
            model: model.into(),
            judge: None,
            runs: 1,
            jobs: 1,
            timeout_secs: None,
            support_skills: Vec::new(),
            cases: Vec::new(),
            trigger: Trigger::Manual,
            seed: 0,
            reuse_baselines: true,
            retries: 2,
            resume: None,
            keep_workspaces: false,
            harbor: None,
        }
    }

    /// The timeout of a trial of a case that sets `case_secs`.
    pub fn timeout(&self, case_secs: Option<u32>) -> Duration {
        trial_timeout(self.timeout_secs, case_secs)
    }

    /// Every environment variable the run reads besides the basics every harness gets
    /// ([`crate::harness::BASE_ALLOW`]): the API keys of the harness and the judge, the
    /// harness's own variables (e.g. `ANTHROPIC_BASE_URL`) and `env_allow`. A run through the
    /// daemon takes these from the client that asked for it (`skillwatch_protocol::ClientEnv`).
    pub fn client_vars(&self) -> BTreeSet<String> {
        let mut vars = self.harness.host_vars();
        match self.judge.as_ref().map(|j| &j.endpoint) {
            Some(JudgeEndpoint::Openai { api_key_env, .. }) => {
                vars.insert(judge_key_var(api_key_env.as_deref()).to_owned());
            }
            Some(JudgeEndpoint::Harness { settings }) => vars.extend(settings.host_vars()),
            None => {}
        }
        if self.harbor.is_some() {
            vars.extend(crate::harbor::HARBOR_VARS.iter().map(|v| (*v).to_owned()));
        }
        vars
    }

    /// An API key variable named by the request (`--api-key-env`, `api_key_env`) must be set
    /// in `host`: running on no key, or on another one, would measure something else. A
    /// default variable (`ANTHROPIC_API_KEY`, ...) may be unset (local endpoints need none).
    pub fn check_named_vars(&self, host: &HostEnv) -> Result<(), RunError> {
        let judge = self.judge.as_ref().map(|j| &j.endpoint);
        let named = [
            ("the harness", self.harness.api_key_env.as_deref()),
            (
                "the judge",
                match judge {
                    Some(JudgeEndpoint::Openai { api_key_env, .. }) => api_key_env.as_deref(),
                    Some(JudgeEndpoint::Harness { settings }) => settings.api_key_env.as_deref(),
                    None => None,
                },
            ),
        ];
        for (whose, var) in named {
            if let Some(var) = var
                && host.get(var).is_none()
            {
                return Err(RunError::Settings {
                    message: format!(
                        "{whose}'s API key: expected the environment variable {var} (named by api_key_env) to be set, found it unset"
                    ),
                });
            }
        }
        Ok(())
    }
}

/// The variable holding an OpenAI-compatible judge endpoint's key.
pub(super) fn judge_key_var(named: Option<&str>) -> &str {
    named.unwrap_or("OPENAI_API_KEY")
}

/// A trial's timeout: the request's when it sets one, else the case's, else the default.
pub fn trial_timeout(request_secs: Option<u32>, case_secs: Option<u32>) -> Duration {
    let secs = request_secs.or(case_secs).unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::from_secs(u64::from(secs))
}

/// The harnesses skillwatch drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HarnessKind {
    /// The Claude Code CLI.
    ClaudeCode,
    /// The Codex CLI.
    Codex,
    /// The Gemini CLI.
    GeminiCli,
    /// OpenCode.
    Opencode,
    /// The Copilot CLI.
    CopilotCli,
    /// skillwatch's own loop over an OpenAI-compatible endpoint.
    Openai,
    /// Any program writing an ATIF file.
    Command,
}

impl HarnessKind {
    /// The name used on the command line, in config files and in the history.
    pub fn as_str(self) -> &'static str {
        match self {
            HarnessKind::ClaudeCode => "claude-code",
            HarnessKind::Codex => "codex",
            HarnessKind::GeminiCli => "gemini-cli",
            HarnessKind::Opencode => "opencode",
            HarnessKind::CopilotCli => "copilot-cli",
            HarnessKind::Openai => "openai",
            HarnessKind::Command => "command",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<HarnessKind> {
        [
            HarnessKind::ClaudeCode,
            HarnessKind::Codex,
            HarnessKind::GeminiCli,
            HarnessKind::Opencode,
            HarnessKind::CopilotCli,
            HarnessKind::Openai,
            HarnessKind::Command,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }

    /// The host variables this harness reads besides [`crate::harness::BASE_ALLOW`] and its
    /// API key variable (credentials and endpoints of its own).
    pub fn own_vars(self) -> &'static [&'static str] {
        match self {
            HarnessKind::ClaudeCode => CLAUDE_ALLOW,
            HarnessKind::Codex => CODEX_ALLOW,
            HarnessKind::GeminiCli => GEMINI_ALLOW,
            HarnessKind::Opencode => OPENCODE_ALLOW,
            HarnessKind::CopilotCli => COPILOT_ALLOW,
            HarnessKind::Openai | HarnessKind::Command => &[],
        }
    }

    /// The environment variable holding the API key when none is configured.
    pub fn default_api_key_env(self) -> Option<&'static str> {
        match self {
            HarnessKind::ClaudeCode => Some("ANTHROPIC_API_KEY"),
            HarnessKind::Codex | HarnessKind::Openai | HarnessKind::Opencode => {
                Some("OPENAI_API_KEY")
            }
            HarnessKind::GeminiCli => Some("GEMINI_API_KEY"),
            HarnessKind::CopilotCli => Some("COPILOT_PROVIDER_API_KEY"),
            HarnessKind::Command => None,
        }
    }
}

/// How to reach and run one harness. Fields that do not apply to a kind are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarnessSettings {
    /// Which harness.
    pub kind: HarnessKind,
    /// The executable: `claude`, `codex` (looked up in PATH by default), or the `command`
    /// harness's program (required for it).
    #[serde(default)]
    pub program: Option<PathBuf>,
    /// Extra arguments: appended before the prompt for the CLIs; the whole argument list (with
    /// `{prompt}` placeholders) for `command`.
    #[serde(default)]
    pub args: Vec<String>,
    /// API base URL: `ANTHROPIC_BASE_URL` for Claude Code, a Responses endpoint for Codex, the
    /// chat-completions base (`http://host/v1`) for `openai` (required for it).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (the key itself is never stored).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Further host environment variables the agent may see.
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// `openai`: model calls per trial.
    #[serde(default)]
    pub max_turns: Option<u32>,
    /// `openai`: sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// `command`: where skills are staged, relative to the workspace.
    #[serde(default)]
    pub skills_dir: Option<PathBuf>,
    /// `command`: the version recorded with trials (default: a hash of the program).
    #[serde(default)]
    pub version: Option<String>,
}

impl HarnessSettings {
    /// Settings of `kind` with every default.
    pub fn new(kind: HarnessKind) -> HarnessSettings {
        HarnessSettings {
            kind,
            program: None,
            args: Vec::new(),
            base_url: None,
            api_key_env: None,
            env_allow: Vec::new(),
            max_turns: None,
            temperature: None,
            skills_dir: None,
            version: None,
        }
    }

    /// The host variables a harness on these settings reads besides
    /// [`crate::harness::BASE_ALLOW`]: its API key variable, its own variables, `env_allow`.
    pub fn host_vars(&self) -> BTreeSet<String> {
        self.api_key_env
            .as_deref()
            .or(self.kind.default_api_key_env())
            .into_iter()
            .chain(self.kind.own_vars().iter().copied())
            .map(str::to_owned)
            .chain(self.env_allow.iter().cloned())
            .collect()
    }

    /// The API key from the configured (or default) environment variable of `host`.
    pub fn api_key(&self, host: &HostEnv) -> Option<String> {
        let var = self
            .api_key_env
            .as_deref()
            .or(self.kind.default_api_key_env())?;
        host.get(var).map(str::to_owned)
    }

    /// The settings of an [`AgentCliConfig`] CLI whose executable is `program` by default.
    fn cli_config(
        &self,
        program: &str,
        api_key: Option<String>,
        env_allow: Vec<String>,
        host: &HostEnv,
    ) -> AgentCliConfig {
        AgentCliConfig {
            program: self.program.clone().unwrap_or_else(|| program.into()),
            base_url: self.base_url.clone(),
            api_key,
            extra_args: self.args.clone(),
            env_allow,
            host_env: host.clone(),
        }
    }

    /// The adapter these settings describe, drawing its environment from `host`.
    pub fn build(&self, host: &HostEnv) -> Result<Arc<dyn Harness>, RunError> {
        let missing = |field: &str| RunError::Settings {
            message: format!(
                "harness {}: expected {field} to be set (flag or skillwatch.toml), found none",
                self.kind.as_str()
            ),
        };
        let api_key = self.api_key(host);
        let mut env_allow = self.env_allow.clone();
        if let Some(var) = &self.api_key_env {
            env_allow.retain(|v| v != var);
        }
        Ok(match self.kind {
            HarnessKind::ClaudeCode => Arc::new(ClaudeCode::new(ClaudeCodeConfig {
                program: self.program.clone().unwrap_or_else(|| "claude".into()),
                base_url: self.base_url.clone(),
                api_key,
                extra_args: self.args.clone(),
                env_allow,
                host_env: host.clone(),
                ..ClaudeCodeConfig::default()
            })),
            HarnessKind::Codex => Arc::new(Codex::new(CodexConfig {
                program: self.program.clone().unwrap_or_else(|| "codex".into()),
                base_url: self.base_url.clone(),
                api_key,
                extra_args: self.args.clone(),
                env_allow,
                host_env: host.clone(),
                ..CodexConfig::default()
            })),
            HarnessKind::GeminiCli => Arc::new(GeminiCli::new(
                self.cli_config("gemini", api_key, env_allow, host),
            )),
            HarnessKind::Opencode => Arc::new(Opencode::new(
                self.cli_config("opencode", api_key, env_allow, host),
            )),
            HarnessKind::CopilotCli => Arc::new(CopilotCli::new(
                self.cli_config("copilot", api_key, env_allow, host),
            )),
            HarnessKind::Openai => {
                let base = self.base_url.clone().ok_or_else(|| missing("base_url"))?;
                let mut config = OpenAiConfig::new(base);
                config.api_key = api_key;
                config.env_allow = env_allow;
                config.host_env = host.clone();
                config.temperature = self.temperature;
                if let Some(t) = self.max_turns {
                    config.max_turns = t;
                }
                Arc::new(OpenAi::new(config))
            }
            HarnessKind::Command => {
                let program = self.program.clone().ok_or_else(|| missing("program"))?;
                let mut config = CommandConfig::new(program);
                config.args = self.args.clone();
                config.env_allow = env_allow;
                config.host_env = host.clone();
                config.version = self.version.clone();
                if let Some(dir) = &self.skills_dir {
                    config.skills_dir = dir.clone();
                }
                Arc::new(CommandHarness::new(config))
            }
        })
    }
}

/// Which judge calls a run makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JudgeMode {
    /// Each trial scored on its own (accuracy, goal accuracy, judged expectations).
    Independent,
    /// Independent scores plus a position-swapped pairwise comparison of each pair
    /// (skill-validator's default: pairwise always comes with independent scores).
    Pairwise,
}

impl JudgeMode {
    /// `independent` or `pairwise`.
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeMode::Independent => "independent",
            JudgeMode::Pairwise => "pairwise",
        }
    }
}

/// How the judge model is reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "via", rename_all = "kebab-case")]
pub enum JudgeEndpoint {
    /// An OpenAI-compatible chat-completions endpoint (no tools, one message in, one out).
    Openai {
        /// The API base, e.g. `http://127.0.0.1:11434/v1`.
        base_url: String,
        /// Name of the environment variable holding the API key.
        #[serde(default)]
        api_key_env: Option<String>,
    },
    /// A harness run in an empty workspace with the judge prompt as its task.
    Harness {
        /// The harness.
        settings: HarnessSettings,
    },
}

/// LLM judging of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeSettings {
    /// The judge model (ideally of another family than the agent's).
    pub model: String,
    /// Which calls.
    #[serde(default = "pairwise")]
    pub mode: JudgeMode,
    /// How it is reached.
    pub endpoint: JudgeEndpoint,
}

fn pairwise() -> JudgeMode {
    JudgeMode::Pairwise
}

impl JudgeSettings {
    /// What identifies the judge in a baseline's identity: model, mode and transport kind.
    pub fn identity(&self) -> String {
        let via = match &self.endpoint {
            JudgeEndpoint::Openai { .. } => "openai".to_owned(),
            JudgeEndpoint::Harness { settings } => settings.kind.as_str().to_owned(),
        };
        format!("{}|{}|{via}", self.model, self.mode.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minimal_json_request_gets_every_default() {
        let req: RunRequest = serde_json::from_str(
            r#"{"skill_dir": "s", "harness": {"kind": "openai", "base_url": "http://x/v1"}, "model": "m"}"#,
        )
        .unwrap();
        assert_eq!(
            req,
            RunRequest::new(
                "s",
                HarnessSettings {
                    base_url: Some("http://x/v1".into()),
                    ..HarnessSettings::new(HarnessKind::Openai)
                },
                "m"
            )
        );
        assert_eq!(req.timeout(None), Duration::from_secs(120));
        assert_eq!(req.timeout(Some(5)), Duration::from_secs(5));
        let set = RunRequest {
            timeout_secs: Some(600),
            ..req
        };
        assert_eq!(
            set.timeout(Some(5)),
            Duration::from_secs(600),
            "the request overrides"
        );
    }

    #[test]
    fn settings_name_what_is_missing() {
        let host = HostEnv::from_pairs([("OPENAI_API_KEY", "k")]);
        let err = HarnessSettings::new(HarnessKind::Openai)
            .build(&host)
            .err()
            .unwrap();
        assert!(
            err.to_string().contains("expected base_url to be set"),
            "{err}"
        );
        let s = HarnessSettings::new(HarnessKind::Openai);
        assert_eq!(s.api_key(&host).as_deref(), Some("k"));
        let named = HarnessSettings {
            api_key_env: Some("MY_KEY".into()),
            ..s
        };
        assert_eq!(named.api_key(&host), None);
        assert_eq!(
            HarnessKind::parse("claude-code"),
            Some(HarnessKind::ClaudeCode)
        );
    }
}
