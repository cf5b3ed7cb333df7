//! `skillwatch.toml`: what the daemon does for the skills below it. Every field is optional
//! with a documented default; an unknown key is an error (a typo must not silently turn a
//! budget off), reported with its file, line and column.
//!
//! ```toml
//! [watch]
//! rerun_on_save = false          # default for every skill below this file
//! debounce_ms = 300              # quiet time after a save before acting
//!
//! [budget]                       # per day (UTC), counted over every trial recorded that day
//! max_trials_per_day = 500       # default: no limit
//! max_cost_usd_per_day = 5.0     # default: no limit
//!
//! [run]                          # defaults of every run (a request's own values win)
//! runs = 1                       # attempts per case and condition
//! jobs = 2                       # trials at once within a run
//! timeout_secs = 600             # per trial
//! judge_model = "gpt-4.1-mini"   # default: no LLM judge
//!
//! [harness.openai]               # one table per harness: openai, claude-code, codex, command
//! base_url = "http://127.0.0.1:11434/v1"
//! api_key_env = "OPENAI_API_KEY"
//! models = ["qwen3:8b"]          # models tracked skills are measured on
//! parallel = 1                   # runs at once on this harness (default 1)
//!
//! [skills.invoice-tables]        # per skill, by its SKILL.md name
//! rerun_on_save = true
//! ```
//!
//! The file that governs a skill is the nearest `skillwatch.toml` in the skill's folder or
//! above it. A model listed under `[harness.X] models` that the history has not seen for a
//! tracked skill (which has completed runs on another model of that harness) triggers a
//! model-change rerun and a comparison with the previous model.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use skillwatch_core::text::LineIndex;

/// The configuration file's name.
pub const FILE_NAME: &str = "skillwatch.toml";

/// Default quiet time after a save, in milliseconds.
pub const DEFAULT_DEBOUNCE_MS: u64 = 300;

/// One `skillwatch.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[watch]`.
    pub watch: WatchConfig,
    /// `[budget]`.
    pub budget: BudgetConfig,
    /// `[run]`.
    pub run: RunDefaults,
    /// `[harness.<name>]`, by harness name.
    pub harness: BTreeMap<String, HarnessConfig>,
    /// `[skills.<name>]`, by skill name.
    pub skills: BTreeMap<String, SkillConfig>,
}

/// `[watch]`: reacting to saves.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WatchConfig {
    /// Rerun a skill when its SKILL.md or eval file is saved (default false).
    pub rerun_on_save: bool,
    /// Quiet time after a save before acting, in ms (default 300).
    pub debounce_ms: u64,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            rerun_on_save: false,
            debounce_ms: DEFAULT_DEBOUNCE_MS,
        }
    }
}

/// `[budget]`: limits per UTC day.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// No job starts once this many trials were recorded today.
    pub max_trials_per_day: Option<u64>,
    /// No job starts once trials recorded today cost this much (USD).
    pub max_cost_usd_per_day: Option<f64>,
}

/// `[run]`: defaults for every run below this file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunDefaults {
    /// Attempts per case and condition.
    pub runs: Option<u32>,
    /// Trials at once within a run.
    pub jobs: Option<u32>,
    /// Per-trial timeout in seconds.
    pub timeout_secs: Option<u64>,
    /// The judge model.
    pub judge_model: Option<String>,
}

/// `[harness.<name>]`: how to reach and run a harness (the runner's harness settings) and
/// which models to track on it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HarnessConfig {
    /// The endpoint (e.g. an OpenAI-compatible base URL, or ANTHROPIC_BASE_URL for claude-code).
    pub base_url: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The executable (`claude`, `codex`, or the `command` harness's program).
    pub program: Option<PathBuf>,
    /// Extra arguments (the whole argument list for `command`).
    pub args: Vec<String>,
    /// Further host environment variables the agent may see.
    pub env_allow: Vec<String>,
    /// `openai`: model calls per trial.
    pub max_turns: Option<u32>,
    /// `openai`: sampling temperature.
    pub temperature: Option<f64>,
    /// `command`: where skills are staged, relative to the workspace.
    pub skills_dir: Option<PathBuf>,
    /// `command`: the version recorded with trials.
    pub version: Option<String>,
    /// Models tracked skills are measured on.
    pub models: Vec<String>,
    /// Runs at once on this harness (default 1).
    pub parallel: Option<u32>,
}

/// `[skills.<name>]`: one skill's settings.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillConfig {
    /// Rerun this skill when its files are saved (overrides `[watch] rerun_on_save`).
    pub rerun_on_save: Option<bool>,
}

/// A `skillwatch.toml` that could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: cannot read: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS reason.
        message: String,
    },
    /// The file is not valid TOML or has a field of the wrong type or name.
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What was expected and found.
        message: String,
    },
    /// A value is out of its range.
    #[error("{path}: {field}: expected {expected}, found {found}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field, e.g. `harness.openai.parallel`.
        field: String,
        /// What would be accepted.
        expected: String,
        /// What was given.
        found: String,
    },
}

impl Config {
    /// Parse the text of the file at `path` (for messages).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let at = e.span().map_or(0, |s| s.start);
            let lc = LineIndex::new(text).line_col(text, at);
            ConfigError::Parse {
                path: path.to_path_buf(),
                line: lc.line,
                column: lc.column,
                message: e.message().trim().to_string(),
            }
        })?;
        config.validate(path)?;
        Ok(config)
    }

    /// Read and parse `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Config::parse(&text, path)
    }

    fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let invalid = |field: String, expected: &str, found: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            field,
            expected: expected.to_string(),
            found,
        };
        for (name, h) in &self.harness {
            if h.parallel == Some(0) {
                return Err(invalid(
                    format!("harness.{name}.parallel"),
                    "at least 1",
                    "0".into(),
                ));
            }
            if let Some(m) = h.models.iter().find(|m| m.trim().is_empty()) {
                return Err(invalid(
                    format!("harness.{name}.models"),
                    "non-empty model names",
                    format!("{m:?}"),
                ));
            }
        }
        if let Some(cost) = self.budget.max_cost_usd_per_day
            && !(cost.is_finite() && cost >= 0.0)
        {
            return Err(invalid(
                "budget.max_cost_usd_per_day".into(),
                "a finite number >= 0",
                cost.to_string(),
            ));
        }
        if self.run.runs == Some(0) || self.run.jobs == Some(0) {
            return Err(invalid(
                "run.runs / run.jobs".into(),
                "at least 1",
                "0".into(),
            ));
        }
        Ok(())
    }

    /// Whether a save reruns the skill named `skill`.
    pub fn rerun_on_save(&self, skill: &str) -> bool {
        self.skills
            .get(skill)
            .and_then(|s| s.rerun_on_save)
            .unwrap_or(self.watch.rerun_on_save)
    }

    /// Every (harness, model) pair the file lists, in file order per harness.
    pub fn models(&self) -> Vec<(String, String)> {
        self.harness
            .iter()
            .flat_map(|(h, c)| c.models.iter().map(move |m| (h.clone(), m.clone())))
            .collect()
    }

    /// Runs at once on `harness` (default 1).
    pub fn parallel(&self, harness: &str) -> usize {
        self.harness
            .get(harness)
            .and_then(|h| h.parallel)
            .unwrap_or(1) as usize
    }
}

/// The `skillwatch.toml` governing `dir`: the nearest one in `dir` or above it.
pub fn find_for(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|d| d.join(FILE_NAME))
        .find(|p| p.is_file())
}

/// The config governing `dir`, its path, or the defaults when there is none. A broken file
/// is an error, never silently the defaults.
pub fn for_dir(dir: &Path) -> Result<(Option<PathBuf>, Config), ConfigError> {
    match find_for(dir) {
        Some(path) => Config::load(&path).map(|c| (Some(path), c)),
        None => Ok((None, Config::default())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_example_parses() {
        let text = include_str!("config.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! "))
            .skip_while(|l| !l.starts_with("```toml"))
            .skip(1)
            .take_while(|l| !l.starts_with("```"))
            .collect::<Vec<_>>()
            .join("\n");
        let config = Config::parse(&text, Path::new("skillwatch.toml")).unwrap();
        assert_eq!(
            config.models(),
            vec![("openai".to_string(), "qwen3:8b".to_string())]
        );
        assert_eq!(config.budget.max_trials_per_day, Some(500));
        assert!(config.rerun_on_save("invoice-tables"));
        assert!(!config.rerun_on_save("other"));
        assert_eq!(config.parallel("openai"), 1);
        assert_eq!(config.parallel("codex"), 1);
    }

    #[test]
    fn an_empty_file_is_all_defaults() {
        let config = Config::parse("", Path::new("x.toml")).unwrap();
        assert_eq!(config, Config::default());
        assert_eq!(config.watch.debounce_ms, DEFAULT_DEBOUNCE_MS);
    }

    #[test]
    fn typos_and_bad_values_say_where() {
        let err = Config::parse("[budget]\nmax_trial_per_day = 3\n", Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.toml:2:1:"), "{err}");
        assert!(err.contains("max_trial_per_day"), "{err}");
        let err = Config::parse("[harness.openai]\nmodels = \"m\"\n", Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.toml:2:"), "{err}");
        let err = Config::parse("[harness.openai]\nparallel = 0\n", Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("harness.openai.parallel"), "{err}");
    }

    #[test]
    fn the_nearest_file_governs() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("a/b/skill");
        std::fs::create_dir_all(&skill).unwrap();
        assert_eq!(for_dir(&skill).unwrap(), (None, Config::default()));
        std::fs::write(
            dir.path().join("a").join(FILE_NAME),
            "[watch]\nrerun_on_save = true\n",
        )
        .unwrap();
        let (path, config) = for_dir(&skill).unwrap();
        assert_eq!(path, Some(dir.path().join("a").join(FILE_NAME)));
        assert!(config.watch.rerun_on_save);
        std::fs::write(dir.path().join("a/b").join(FILE_NAME), "nonsense =").unwrap();
        assert!(for_dir(&skill).is_err());
    }
}
