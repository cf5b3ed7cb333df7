//! The Gemini CLI, OpenCode and Copilot CLI harnesses: what each of them needs on top of
//! [`super::agent_cli`] to run one prompt non-interactively, isolated from the user's own
//! configuration and, given a base URL, against that model server only (docs/harnesses.md has
//! how each was found out).

use serde_json::json;
use skillwatch_core::trajectory::{
    NormalizedRun, RunContext, parse_copilot_json, parse_gemini_stream_json, parse_opencode_json,
};

use super::TrialSpec;
use super::agent_cli::{AgentCli, AgentCliConfig, CliKind, Dirs, flag, shared_cache};
use super::env::TrialEnv;

/// Gemini CLI (`@google/gemini-cli`).
#[derive(Debug)]
pub(crate) struct GeminiKind;

/// The Gemini CLI adapter.
pub(crate) type GeminiCli = AgentCli<GeminiKind>;

/// Host variables Gemini CLI may see: its credentials and endpoint.
pub const GEMINI_ALLOW: &[&str] = &[
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_GENAI_USE_VERTEXAI",
];

impl CliKind for GeminiKind {
    const NAME: &'static str = "gemini-cli";
    const SKILLS_DIR: &'static str = ".gemini/skills";
    const CONFIG_DIR: &'static str = "gemini-config";
    const ALLOW: &'static [&'static str] = GEMINI_ALLOW;

    /// Gemini CLI 0.61 takes `GOOGLE_GEMINI_BASE_URL` as a "gateway" sign-in that its own
    /// check then refuses ("Invalid auth method selected"), so the fresh HOME's settings pick
    /// the API-key sign-in, which still honours the base URL. Usage statistics, which would
    /// go to Google, and updates are off.
    fn setup(config: &AgentCliConfig, env: &mut TrialEnv, dirs: Dirs<'_>, _model: &str) {
        if let Some(url) = &config.base_url {
            env.set("GOOGLE_GEMINI_BASE_URL", url.clone());
        }
        if let Some(key) = &config.api_key {
            env.set("GEMINI_API_KEY", key.clone());
        }
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            "telemetry": {"enabled": false},
        });
        let dir = dirs.home.join(".gemini");
        // a failure shows as Gemini CLI's own sign-in error in the trial
        let _ = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("settings.json"), settings.to_string()));
    }

    fn args(config: &AgentCliConfig, spec: &TrialSpec) -> Vec<String> {
        let mut args = vec![
            "--output-format".into(),
            "stream-json".into(),
            "--yolo".into(),
            "--skip-trust".into(),
            flag("--model", &spec.model),
        ];
        args.extend(config.extra_args.iter().cloned());
        args.push(flag("--prompt", &spec.prompt));
        args
    }

    fn parse(text: &str, ctx: &RunContext) -> NormalizedRun {
        parse_gemini_stream_json(text, ctx)
    }
}

/// OpenCode (`opencode-ai`).
#[derive(Debug)]
pub(crate) struct OpencodeKind;

/// The OpenCode adapter.
pub(crate) type Opencode = AgentCli<OpencodeKind>;

/// Host variables OpenCode may see: the keys of the providers it ships with.
pub const OPENCODE_ALLOW: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "OPENCODE_API_KEY",
];

/// The provider skillwatch defines for a base URL.
const OPENCODE_PROVIDER: &str = "skillwatch";

impl CliKind for OpencodeKind {
    const NAME: &'static str = "opencode";
    const SKILLS_DIR: &'static str = ".opencode/skills";
    const CONFIG_DIR: &'static str = "opencode-config";
    const ALLOW: &'static [&'static str] = OPENCODE_ALLOW;

    /// The configuration comes inline (`OPENCODE_CONFIG_CONTENT`): every permission granted
    /// (a trial cannot answer), and for a base URL an OpenAI-compatible provider of that URL.
    /// OpenCode installs `@opencode-ai/plugin` from npm into every config folder at start,
    /// the workspace's `.opencode` included; npm's offline mode makes that fail at once
    /// instead of reaching the registry in every trial (OpenCode logs it and goes on).
    fn setup(config: &AgentCliConfig, env: &mut TrialEnv, dirs: Dirs<'_>, model: &str) {
        let mut content =
            json!({"permission": {"*": "allow"}, "autoupdate": false, "share": "disabled"});
        if let Some(url) = &config.base_url {
            let key = config
                .api_key
                .clone()
                .unwrap_or_else(|| "{env:OPENAI_API_KEY}".into());
            content["provider"] = json!({OPENCODE_PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": OPENCODE_PROVIDER,
                "options": {"baseURL": url, "apiKey": key},
                "models": {model: {"name": model}},
            }});
        }
        env.set("OPENCODE_CONFIG_CONTENT", content.to_string());
        env.set("OPENCODE_CONFIG_DIR", dirs.config.display().to_string());
        for var in [
            "OPENCODE_DISABLE_AUTOUPDATE",
            "OPENCODE_DISABLE_MODELS_FETCH",
            "OPENCODE_DISABLE_LSP_DOWNLOAD",
            "OPENCODE_DISABLE_SHARE",
        ] {
            env.set(var, "1");
        }
        env.set("npm_config_offline", "true");
    }

    fn args(config: &AgentCliConfig, spec: &TrialSpec) -> Vec<String> {
        let model = match &config.base_url {
            Some(_) => format!("{OPENCODE_PROVIDER}/{}", spec.model),
            None => spec.model.clone(),
        };
        let mut args = vec![
            "run".into(),
            "--format".into(),
            "json".into(),
            flag("--model", &model),
        ];
        args.extend(config.extra_args.iter().cloned());
        args.push("--".into());
        args.push(spec.prompt.clone());
        args
    }

    fn parse(text: &str, ctx: &RunContext) -> NormalizedRun {
        parse_opencode_json(text, ctx)
    }
}

/// Copilot CLI (`@github/copilot`).
#[derive(Debug)]
pub(crate) struct CopilotKind;

/// The Copilot CLI adapter.
pub(crate) type CopilotCli = AgentCli<CopilotKind>;

/// Host variables Copilot CLI may see: its GitHub token and its own-provider (BYOK) settings.
pub const COPILOT_ALLOW: &[&str] = &[
    "COPILOT_GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_HOST",
    "COPILOT_GH_HOST",
    "COPILOT_PROVIDER_BASE_URL",
    "COPILOT_PROVIDER_TYPE",
    "COPILOT_PROVIDER_API_KEY",
    "COPILOT_PROVIDER_BEARER_TOKEN",
    "COPILOT_PROVIDER_WIRE_API",
    "COPILOT_PROVIDER_MODEL_ID",
    "COPILOT_PROVIDER_WIRE_MODEL",
];

impl CliKind for CopilotKind {
    const NAME: &'static str = "copilot-cli";
    const SKILLS_DIR: &'static str = ".github/skills";
    const CONFIG_DIR: &'static str = "copilot-home";
    const ALLOW: &'static [&'static str] = COPILOT_ALLOW;

    /// A base URL is Copilot CLI's own-provider mode (BYOK, OpenAI chat completions unless
    /// `COPILOT_PROVIDER_TYPE` says otherwise) with `COPILOT_OFFLINE`, which needs no GitHub
    /// sign-in and sends nothing to GitHub. The unpacked package is shared between trials.
    fn setup(config: &AgentCliConfig, env: &mut TrialEnv, dirs: Dirs<'_>, _model: &str) {
        env.set("COPILOT_HOME", dirs.config.display().to_string());
        let cache = shared_cache(&config.host_env, "copilot-pkg");
        env.set("COPILOT_PKG_CACHE_HOME", cache.display().to_string());
        env.set("COPILOT_AUTO_UPDATE", "false");
        if let Some(url) = &config.base_url {
            env.set("COPILOT_PROVIDER_BASE_URL", url.clone());
            env.set("COPILOT_OFFLINE", "true");
        }
        if let Some(key) = &config.api_key {
            env.set("COPILOT_PROVIDER_API_KEY", key.clone());
        }
    }

    fn args(config: &AgentCliConfig, spec: &TrialSpec) -> Vec<String> {
        let mut args = vec![
            "--output-format".into(),
            "json".into(),
            "--allow-all-tools".into(),
            "--no-auto-update".into(),
            "--disable-client-telemetry".into(),
            flag("--model", &spec.model),
        ];
        args.extend(config.extra_args.iter().cloned());
        args.push(flag("--prompt", &spec.prompt));
        args
    }

    fn parse(text: &str, ctx: &RunContext) -> NormalizedRun {
        parse_copilot_json(text, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::super::env::{HostEnv, TrialDirs};
    use super::*;
    use std::collections::BTreeMap;
    use std::path::Path;
    use std::time::Duration;

    fn spec(dir: &Path) -> TrialSpec {
        TrialSpec {
            prompt: "-starts with a dash".into(),
            model: "m1".into(),
            workspace: dir.join("ws"),
            scratch: dir.to_path_buf(),
            skills: vec![],
            timeout: Duration::from_secs(1),
            stop_when: None,
            plant: Default::default(),
        }
    }

    fn config() -> AgentCliConfig {
        let mut c = AgentCliConfig::new("x");
        c.base_url = Some("http://127.0.0.1:9/v1".into());
        c.api_key = Some("k".into());
        c.host_env =
            HostEnv::from_pairs([("PATH", "/bin"), ("HOME", "/home/me"), ("GH_TOKEN", "t")]);
        c
    }

    fn env_of<K: CliKind>(tmp: &Path) -> BTreeMap<String, String> {
        let dirs = TrialDirs::create(tmp).unwrap();
        let mut env = TrialEnv::scrubbed(&config().host_env, K::ALLOW, &[]);
        env.isolate(&dirs);
        let cfg = tmp.join("cfg");
        let d = Dirs {
            home: &dirs.home,
            config: &cfg,
        };
        K::setup(&config(), &mut env, d, "m1");
        env.into_vec().into_iter().collect()
    }

    #[test]
    fn prompts_never_read_as_flags_and_base_urls_reach_each_cli() {
        let tmp = tempfile::tempdir().unwrap();
        let s = spec(tmp.path());
        let g = GeminiKind::args(&config(), &s);
        assert_eq!(g.last().unwrap(), "--prompt=-starts with a dash");
        let o = OpencodeKind::args(&config(), &s);
        assert_eq!(&o[o.len() - 2..], ["--", "-starts with a dash"]);
        assert!(o.contains(&"--model=skillwatch/m1".to_string()), "{o:?}");
        let c = CopilotKind::args(&config(), &s);
        assert_eq!(c.last().unwrap(), "--prompt=-starts with a dash");

        let env = env_of::<GeminiKind>(tmp.path());
        assert_eq!(env["GOOGLE_GEMINI_BASE_URL"], "http://127.0.0.1:9/v1");
        assert_ne!(env["HOME"], "/home/me");
        let settings =
            std::fs::read_to_string(Path::new(&env["HOME"]).join(".gemini/settings.json")).unwrap();
        assert!(settings.contains("gemini-api-key"), "{settings}");
    }

    #[test]
    fn opencode_and_copilot_get_their_provider_and_no_user_config() {
        let tmp = tempfile::tempdir().unwrap();
        let env = env_of::<OpencodeKind>(&tmp.path().join("o"));
        let content: serde_json::Value =
            serde_json::from_str(&env["OPENCODE_CONFIG_CONTENT"]).unwrap();
        assert_eq!(
            content["provider"]["skillwatch"]["options"]["baseURL"],
            "http://127.0.0.1:9/v1"
        );
        assert_eq!(env["npm_config_offline"], "true");
        let env = env_of::<CopilotKind>(&tmp.path().join("c"));
        assert_eq!(env["COPILOT_PROVIDER_BASE_URL"], "http://127.0.0.1:9/v1");
        assert_eq!(env["COPILOT_OFFLINE"], "true");
        assert_eq!(
            env["GH_TOKEN"], "t",
            "the GitHub token is the CLI's own credential"
        );
        assert!(env["COPILOT_PKG_CACHE_HOME"].ends_with("skillwatch/copilot-pkg"));
    }
}
