//! Which harnesses this machine can run, and on which models: what an editor offers when a
//! paired run is asked for and nothing is configured yet.
//!
//! - `claude-code` and `codex` when their CLI is on `PATH`, with the models their vendors
//!   document (the CLIs have no offline model list; any other name works in skillwatch.toml);
//! - `openai` for an OpenAI-compatible endpoint named by the environment (`OPENAI_BASE_URL`,
//!   `OPENAI_API_BASE`, or `OLLAMA_HOST` for Ollama's `/v1`), with the models its `/models`
//!   lists (an endpoint that does not answer within [`LIST_TIMEOUT`] offers nothing).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::runner::HarnessKind;

/// How long an endpoint's model list may take.
pub const LIST_TIMEOUT: Duration = Duration::from_secs(3);

/// Models offered per endpoint at most (a gateway may list hundreds).
pub const MAX_MODELS: usize = 25;

/// Claude Code's models, newest first.
pub const CLAUDE_MODELS: &[&str] = &["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"];

/// Codex's models.
pub const CODEX_MODELS: &[&str] = &["gpt-5-codex", "gpt-5"];

/// One way to run a paired eval here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunTarget {
    /// The harness (`claude-code`, `codex`, `openai`).
    pub harness: String,
    /// The agent model.
    pub model: String,
    /// The endpoint, for `openai`.
    pub base_url: Option<String>,
    /// Where this choice was found, for the picker (`claude on PATH (/usr/bin/claude)`).
    pub found: String,
}

impl RunTarget {
    /// `openai · qwen3:8b`: how a picker lists it.
    pub fn label(&self) -> String {
        format!("{} · {}", self.harness, self.model)
    }
}

/// The environment discovery reads (the process's, or a test's).
pub trait Environment: Sync {
    /// A variable's value (unset and empty are alike).
    fn var(&self, name: &str) -> Option<String>;
}

/// The process's environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Environment for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }
}

impl<F: Fn(&str) -> Option<String> + Sync> Environment for F {
    fn var(&self, name: &str) -> Option<String> {
        self(name).filter(|v| !v.is_empty())
    }
}

/// Every harness and model this machine offers, CLIs first, then endpoints.
pub async fn available(env: &dyn Environment) -> Vec<RunTarget> {
    let mut found = Vec::new();
    for (kind, program, models) in [
        (HarnessKind::ClaudeCode, "claude", CLAUDE_MODELS),
        (HarnessKind::Codex, "codex", CODEX_MODELS),
    ] {
        if let Some(path) = on_path(program, env.var("PATH").as_deref()) {
            found.extend(models.iter().map(|model| RunTarget {
                harness: kind.as_str().to_string(),
                model: model.to_string(),
                base_url: None,
                found: format!("{program} on PATH ({})", path.display()),
            }));
        }
    }
    if let Some((base_url, variable)) = endpoint(env) {
        let key = env.var("OPENAI_API_KEY");
        match list_models(&base_url, key.as_deref()).await {
            Ok(models) => found.extend(models.into_iter().map(|model| RunTarget {
                harness: HarnessKind::Openai.as_str().to_string(),
                model,
                base_url: Some(base_url.clone()),
                found: format!("{variable}={base_url}"),
            })),
            Err(e) => tracing::info!("{variable}={base_url}: no model list ({e})"),
        }
    }
    found
}

/// The OpenAI-compatible endpoint the environment names, and the variable naming it.
pub fn endpoint(env: &dyn Environment) -> Option<(String, &'static str)> {
    for variable in ["OPENAI_BASE_URL", "OPENAI_API_BASE"] {
        if let Some(url) = env.var(variable) {
            return Some((url.trim_end_matches('/').to_string(), variable));
        }
    }
    let host = env.var("OLLAMA_HOST")?;
    let host = host.trim_end_matches('/');
    let base = if host.contains("://") {
        format!("{host}/v1")
    } else {
        format!("http://{host}/v1")
    };
    Some((base, "OLLAMA_HOST"))
}

/// The executable `program` in one of `path`'s folders.
pub fn on_path(program: &str, path: Option<&str>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The model ids `GET {base_url}/models` lists, sorted.
pub async fn list_models(base_url: &str, api_key: Option<&str>) -> Result<Vec<String>, String> {
    #[derive(Deserialize)]
    struct Listing {
        data: Vec<Model>,
    }
    #[derive(Deserialize)]
    struct Model {
        id: String,
    }
    let client = reqwest::Client::builder()
        .timeout(LIST_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    let mut request = client.get(format!("{base_url}/models"));
    if let Some(key) = api_key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status()));
    }
    let listing: Listing = response
        .json()
        .await
        .map_err(|e| format!("expected {{\"data\": [{{\"id\": ...}}]}}, found {e}"))?;
    let mut models: Vec<String> = listing.data.into_iter().map(|m| m.id).collect();
    models.sort();
    models.dedup();
    models.truncate(MAX_MODELS);
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_endpoint_comes_from_the_environment() {
        assert_eq!(
            endpoint(&env(&[("OPENAI_BASE_URL", "http://h:1/v1/")])),
            Some(("http://h:1/v1".into(), "OPENAI_BASE_URL"))
        );
        assert_eq!(
            endpoint(&env(&[("OLLAMA_HOST", "127.0.0.1:11434")])),
            Some(("http://127.0.0.1:11434/v1".into(), "OLLAMA_HOST"))
        );
        assert_eq!(endpoint(&env(&[("OPENAI_BASE_URL", "")])), None);
    }

    #[tokio::test]
    async fn clis_on_the_path_offer_their_models() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let claude = dir.path().join("claude");
        std::fs::write(&claude, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(dir.path().join("codex"), "not executable").unwrap();
        let path = dir.path().display().to_string();
        let found = available(&move |name: &str| (name == "PATH").then(|| path.clone())).await;
        let labels: Vec<String> = found.iter().map(RunTarget::label).collect();
        assert_eq!(
            labels,
            CLAUDE_MODELS
                .iter()
                .map(|m| format!("claude-code · {m}"))
                .collect::<Vec<_>>()
        );
        assert!(found[0].found.contains("claude on PATH"), "{found:?}");
    }
}
