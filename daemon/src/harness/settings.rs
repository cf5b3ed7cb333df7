//! The adapter a [`HarnessSettings`] describes (the settings are data of the protocol; building
//! the adapter and reading its key are the daemon's), and the host variables each harness
//! reads.

use std::collections::BTreeSet;
use std::sync::Arc;

use skillwatch_protocol::{HarnessKind, HarnessSettings};

use super::{
    AgentCliConfig, CLAUDE_ALLOW, CODEX_ALLOW, COPILOT_ALLOW, ClaudeCode, ClaudeCodeConfig, Codex,
    CodexConfig, CommandConfig, CommandHarness, CopilotCli, GEMINI_ALLOW, GeminiCli, Harness,
    HostEnv, OPENCODE_ALLOW, OpenAi, OpenAiConfig, Opencode,
};

/// The host variables harness `kind` reads besides [`super::BASE_ALLOW`] and its API key
/// variable (credentials and endpoints of its own).
pub fn own_vars(kind: HarnessKind) -> &'static [&'static str] {
    match kind {
        HarnessKind::ClaudeCode => CLAUDE_ALLOW,
        HarnessKind::Codex => CODEX_ALLOW,
        HarnessKind::GeminiCli => GEMINI_ALLOW,
        HarnessKind::Opencode => OPENCODE_ALLOW,
        HarnessKind::CopilotCli => COPILOT_ALLOW,
        HarnessKind::Openai | HarnessKind::Command => &[],
    }
}

/// The host variables a harness on `settings` reads besides [`super::BASE_ALLOW`]: its API key
/// variable, its own variables, `env_allow`.
pub fn host_vars(settings: &HarnessSettings) -> BTreeSet<String> {
    settings
        .key_var()
        .into_iter()
        .chain(own_vars(settings.kind).iter().copied())
        .map(str::to_owned)
        .chain(settings.env_allow.iter().cloned())
        .collect()
}

/// The API key of `settings` from the configured (or default) variable of `host`.
pub fn api_key(settings: &HarnessSettings, host: &HostEnv) -> Option<String> {
    host.get(settings.key_var()?).map(str::to_owned)
}

/// The adapter `settings` describe, drawing its environment from `host`; what is missing, said.
pub fn build(settings: &HarnessSettings, host: &HostEnv) -> Result<Arc<dyn Harness>, String> {
    let missing = |field: &str| {
        format!(
            "harness {}: expected {field} to be set (flag or skillwatch.toml), found none",
            settings.kind.as_str()
        )
    };
    let s = settings;
    let api_key = api_key(s, host);
    let mut env_allow = s.env_allow.clone();
    if let Some(var) = &s.api_key_env {
        env_allow.retain(|v| v != var);
    }
    Ok(match s.kind {
        HarnessKind::ClaudeCode => Arc::new(ClaudeCode::new(ClaudeCodeConfig {
            program: s.program.clone().unwrap_or_else(|| "claude".into()),
            base_url: s.base_url.clone(),
            api_key,
            extra_args: s.args.clone(),
            env_allow,
            host_env: host.clone(),
            ..ClaudeCodeConfig::default()
        })),
        HarnessKind::Codex => Arc::new(Codex::new(CodexConfig {
            program: s.program.clone().unwrap_or_else(|| "codex".into()),
            base_url: s.base_url.clone(),
            api_key,
            extra_args: s.args.clone(),
            env_allow,
            host_env: host.clone(),
            ..CodexConfig::default()
        })),
        HarnessKind::GeminiCli => Arc::new(GeminiCli::new(cli_config(
            s, "gemini", api_key, env_allow, host,
        ))),
        HarnessKind::Opencode => Arc::new(Opencode::new(cli_config(
            s, "opencode", api_key, env_allow, host,
        ))),
        HarnessKind::CopilotCli => Arc::new(CopilotCli::new(cli_config(
            s, "copilot", api_key, env_allow, host,
        ))),
        HarnessKind::Openai => {
            let base = s.base_url.clone().ok_or_else(|| missing("base_url"))?;
            let mut config = OpenAiConfig::new(base);
            config.api_key = api_key;
            config.env_allow = env_allow;
            config.host_env = host.clone();
            config.temperature = s.temperature;
            if let Some(t) = s.max_turns {
                config.max_turns = t;
            }
            Arc::new(OpenAi::new(config))
        }
        HarnessKind::Command => {
            let program = s.program.clone().ok_or_else(|| missing("program"))?;
            let mut config = CommandConfig::new(program);
            config.args = s.args.clone();
            config.env_allow = env_allow;
            config.host_env = host.clone();
            config.version = s.version.clone();
            if let Some(dir) = &s.skills_dir {
                config.skills_dir = dir.clone();
            }
            Arc::new(CommandHarness::new(config))
        }
    })
}

/// The settings of an [`AgentCliConfig`] CLI whose executable is `program` by default.
fn cli_config(
    s: &HarnessSettings,
    program: &str,
    api_key: Option<String>,
    env_allow: Vec<String>,
    host: &HostEnv,
) -> AgentCliConfig {
    AgentCliConfig {
        program: s.program.clone().unwrap_or_else(|| program.into()),
        base_url: s.base_url.clone(),
        api_key,
        extra_args: s.args.clone(),
        env_allow,
        host_env: host.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_name_what_is_missing() {
        let host = HostEnv::from_pairs([("OPENAI_API_KEY", "k")]);
        let err = build(&HarnessSettings::new(HarnessKind::Openai), &host)
            .err()
            .unwrap();
        assert!(err.contains("expected base_url to be set"), "{err}");
        let s = HarnessSettings::new(HarnessKind::Openai);
        assert_eq!(api_key(&s, &host).as_deref(), Some("k"));
        let named = HarnessSettings {
            api_key_env: Some("MY_KEY".into()),
            ..s
        };
        assert_eq!(api_key(&named, &host), None);
        assert!(host_vars(&named).contains("MY_KEY"));
        assert!(
            host_vars(&HarnessSettings::new(HarnessKind::ClaudeCode))
                .contains("ANTHROPIC_BASE_URL")
        );
    }
}
