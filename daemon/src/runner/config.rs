//! The run settings of `skillwatch.toml`: which harness and model to run by default, how to
//! reach each harness's endpoint, and the judge. Every field is optional; flags override the
//! file, the file overrides the built-in defaults. Tables this module does not own (other
//! parts of skillwatch read their own) are ignored; unknown keys inside its own tables are
//! errors, so a misspelled `base_ulr` is reported instead of silently ignored.
//!
//! ```toml
//! [run]
//! harness = "openai"            # claude-code | codex | openai | command
//! model = "qwen3:8b"
//! runs = 3                      # attempts per case and condition (default 1)
//! jobs = 2                      # trials in flight (default 1)
//! timeout_secs = 300            # per trial, overriding the cases' (default: theirs, else 120)
//! support_skills = ["../auth"]  # installed in both conditions; relative to this file
//! reuse_baselines = true        # default true
//! retries = 2                   # infrastructure retries per trial (default 2)
//!
//! [harness.openai]
//! base_url = "http://127.0.0.1:11434/v1"   # required for openai
//! api_key_env = "OPENAI_API_KEY"           # the variable holding the key (this default)
//! max_turns = 30
//! temperature = 0.0
//!
//! [harness.claude-code]
//! program = "claude"                       # default: `claude` on PATH
//! base_url = "https://gateway.example/anthropic"
//! api_key_env = "ANTHROPIC_API_KEY"        # default
//! args = ["--max-turns", "30"]
//!
//! [harness.command]
//! program = "./my-agent.sh"                # relative to this file
//! args = ["--task", "{prompt}"]
//! skills_dir = ".agents/skills"
//!
//! [judge]
//! model = "gpt-4.1-mini"
//! mode = "pairwise"                        # or independent (default pairwise)
//! base_url = "https://api.openai.com/v1"   # an OpenAI-compatible endpoint, or:
//! harness = "claude-code"                  # judge through a harness's settings instead
//! api_key_env = "OPENAI_API_KEY"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::request::{HarnessKind, HarnessSettings, JudgeEndpoint, JudgeMode, JudgeSettings};

/// The file name looked for.
pub use skillwatch_core::config::FILE_NAME as CONFIG_FILE;

/// Why `skillwatch.toml` could not be used: core's one error type for the file.
pub use skillwatch_core::config::ConfigError;

/// The run settings of one `skillwatch.toml`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunConfig {
    /// The file they came from (`None`: no file, all defaults).
    pub path: Option<PathBuf>,
    /// `[run]`.
    pub run: RunTable,
    /// `[harness.<name>]`.
    pub harness: BTreeMap<HarnessKind, HarnessTable>,
    /// `[judge]`.
    pub judge: Option<JudgeTable>,
}

/// `[run]`: defaults of `skillwatch run`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunTable {
    /// Default harness.
    pub harness: Option<String>,
    /// Default model.
    pub model: Option<String>,
    /// Attempts per case and condition.
    pub runs: Option<u32>,
    /// Trials in flight.
    pub jobs: Option<usize>,
    /// Per-trial timeout, overriding the cases'.
    pub timeout_secs: Option<u32>,
    /// Support and decoy skills (relative to the file).
    #[serde(default)]
    pub support_skills: Vec<PathBuf>,
    /// Reuse baselines.
    pub reuse_baselines: Option<bool>,
    /// Infrastructure retries.
    pub retries: Option<u32>,
}

/// `[harness.<name>]`: the fields of [`HarnessSettings`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessTable {
    /// The executable.
    pub program: Option<PathBuf>,
    /// Arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// API base URL.
    pub base_url: Option<String>,
    /// The variable holding the API key.
    pub api_key_env: Option<String>,
    /// More host variables the agent may see.
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// `openai`: model calls per trial.
    pub max_turns: Option<u32>,
    /// `openai`: temperature.
    pub temperature: Option<f64>,
    /// `command`: skills folder in the workspace.
    pub skills_dir: Option<PathBuf>,
    /// `command`: recorded version.
    pub version: Option<String>,
}

/// `[judge]`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeTable {
    /// The judge model.
    pub model: Option<String>,
    /// `independent` or `pairwise`.
    pub mode: Option<JudgeMode>,
    /// An OpenAI-compatible endpoint.
    pub base_url: Option<String>,
    /// The variable holding its key.
    pub api_key_env: Option<String>,
    /// Judge through this harness (its `[harness.<name>]` settings) instead of an endpoint.
    pub harness: Option<String>,
}

/// The whole file as read; tables of other parts of skillwatch pass through unread.
#[derive(Deserialize)]
struct FileShape {
    #[serde(default)]
    run: RunTable,
    #[serde(default)]
    harness: BTreeMap<String, HarnessTable>,
    #[serde(default)]
    judge: Option<JudgeTable>,
}

impl RunConfig {
    /// The nearest `skillwatch.toml` in `start` or a folder above it.
    pub fn find(start: &Path) -> Option<PathBuf> {
        skillwatch_core::config::nearest(start)
    }

    /// Read the run settings of `path`; relative paths in it are made relative to its folder.
    pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::read(path, &e))?;
        RunConfig::parse(&text, path)
    }

    /// Read run settings from `text`, the content of `path`.
    pub fn parse(text: &str, path: &Path) -> Result<RunConfig, ConfigError> {
        let shape: FileShape =
            toml::from_str(text).map_err(|e| ConfigError::toml(path, text, &e))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut harness = BTreeMap::new();
        for (name, mut table) in shape.harness {
            let kind = parse_kind(&name).map_err(|message| {
                ConfigError::invalid(path, format!("[harness.{name}]: {message}"))
            })?;
            if let Some(p) = &table.program
                && p.components().count() > 1
            {
                table.program = Some(base.join(p));
            }
            harness.insert(kind, table);
        }
        let mut run = shape.run;
        run.support_skills = run.support_skills.iter().map(|p| base.join(p)).collect();
        if let Some(h) = &run.harness {
            parse_kind(h).map_err(|message| {
                ConfigError::invalid(path, format!("[run] harness: {message}"))
            })?;
        }
        Ok(RunConfig {
            path: Some(path.to_path_buf()),
            run,
            harness,
            judge: shape.judge,
        })
    }

    /// The settings of harness `kind`: its table, else the defaults.
    pub fn harness_settings(&self, kind: HarnessKind) -> HarnessSettings {
        let t = self.harness.get(&kind).cloned().unwrap_or_default();
        HarnessSettings {
            kind,
            program: t.program,
            args: t.args,
            base_url: t.base_url,
            api_key_env: t.api_key_env,
            env_allow: t.env_allow,
            max_turns: t.max_turns,
            temperature: t.temperature,
            skills_dir: t.skills_dir,
            version: t.version,
        }
    }

    /// The judge the file describes (model from `model_override` when given); `None` when no
    /// judge model is set anywhere.
    pub fn judge_settings(
        &self,
        model_override: Option<&str>,
    ) -> Result<Option<JudgeSettings>, String> {
        let t = self.judge.clone().unwrap_or_default();
        let Some(model) = model_override.map(str::to_owned).or(t.model) else {
            return Ok(None);
        };
        let endpoint = match (&t.harness, &t.base_url) {
            (Some(h), _) => JudgeEndpoint::Harness {
                settings: self.harness_settings(parse_kind(h)?),
            },
            (None, Some(url)) => JudgeEndpoint::Openai {
                base_url: url.clone(),
                api_key_env: t.api_key_env.clone(),
            },
            (None, None) => {
                return Err(format!(
                    "judge {model}: expected [judge] base_url (an OpenAI-compatible endpoint) or [judge] harness, found neither"
                ));
            }
        };
        Ok(Some(JudgeSettings {
            model,
            mode: t.mode.unwrap_or(JudgeMode::Pairwise),
            endpoint,
        }))
    }
}

/// A harness name, or what the names are.
pub fn parse_kind(name: &str) -> Result<HarnessKind, String> {
    HarnessKind::parse(name).ok_or_else(|| {
        format!(
            "expected a harness name ({}), found {name:?}",
            HarnessKind::names()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_become_settings_with_paths_relative_to_the_file() {
        let text = "[run]\nharness = \"openai\"\nmodel = \"m\"\nruns = 3\nsupport_skills = [\"../auth\"]\n\n[harness.openai]\nbase_url = \"http://h/v1\"\napi_key_env = \"K\"\n\n[harness.command]\nprogram = \"./agent.sh\"\n\n[judge]\nmodel = \"j\"\nbase_url = \"http://j/v1\"\n\n[daemon]\nanything = 1\n";
        let c = RunConfig::parse(text, Path::new("/repo/skillwatch.toml")).unwrap();
        assert_eq!(c.run.runs, Some(3));
        assert_eq!(c.run.support_skills, vec![PathBuf::from("/repo/../auth")]);
        let o = c.harness_settings(HarnessKind::Openai);
        assert_eq!(
            (o.base_url.as_deref(), o.api_key_env.as_deref()),
            (Some("http://h/v1"), Some("K"))
        );
        let cmd = c.harness_settings(HarnessKind::Command);
        assert_eq!(cmd.program, Some(PathBuf::from("/repo/./agent.sh")));
        let j = c.judge_settings(None).unwrap().unwrap();
        assert_eq!((j.model.as_str(), j.mode), ("j", JudgeMode::Pairwise));
        assert_eq!(c.judge_settings(Some("k")).unwrap().unwrap().model, "k");
        assert!(RunConfig::default().judge_settings(None).unwrap().is_none());
        assert!(
            RunConfig::default()
                .judge_settings(Some("j"))
                .unwrap_err()
                .contains("base_url")
        );
    }

    #[test]
    fn mistakes_are_located() {
        let e = RunConfig::parse("[harness.openai]\nbase_ulr = \"x\"\n", Path::new("s.toml"))
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("s.toml:2:1: unknown field `base_ulr`"),
            "{msg}"
        );
        let e = RunConfig::parse("[harness.clade]\n", Path::new("s.toml")).unwrap_err();
        assert!(
            e.to_string()
                .contains("[harness.clade]: expected a harness name"),
            "{e}"
        );
        let e = RunConfig::parse("[run]\nruns = \"three\"\n", Path::new("s.toml")).unwrap_err();
        assert!(e.to_string().starts_with("s.toml:2:8:"), "{e}");
    }
}
