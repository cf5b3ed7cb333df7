//! The daemon's part of `skillwatch.toml`: which models tracked skills are measured on, what
//! a save does, how many runs at once, and the daily budget. Every field is optional with a
//! documented default; an unknown key inside these tables is an error (a typo must not
//! silently turn a budget off), reported with file, line and column. The run settings (`[run]`,
//! `[harness.<name>]`, `[judge]`) belong to the runner (`crate::runner::RunConfig`) and are
//! not read here.
//!
//! ```toml
//! [models]                       # models tracked skills are measured on, per harness
//! openai = ["qwen3:8b"]
//!
//! [daemon]
//! rerun_on_save = false          # default for every skill below this file
//! debounce_ms = 300              # quiet time after a save before acting
//! parallel = { openai = 2 }      # runs at once per harness (default 1)
//!
//! [budget]                       # per day (UTC), counted over every trial of every kind
//! max_trials_per_day = 500       # default: no limit
//! max_cost_usd_per_day = 5.0     # default: no limit
//! max_trials = 40                # per run of any kind (--max-trials); default: no limit
//! max_tokens = 2000000           # per run (--max-tokens); default: no limit
//! max_cost_usd = 2.5             # per run (--max-cost); default: no limit
//!
//! [prices."qwen3:8b"]            # USD per million tokens, over skillwatch's price table
//! input = 0.0
//! cached = 0.0                   # default: the input price
//! output = 0.0
//!
//! [skills.invoice-tables]        # per skill, by its SKILL.md name
//! rerun_on_save = true
//! ```
//!
//! The file that governs a skill is the nearest `skillwatch.toml` in the skill's folder or
//! above it. A model listed under `[models]` that the history has not seen for a tracked
//! skill (which has completed runs on another model of that harness) triggers a model-change
//! rerun and a comparison with the previous model.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use skillwatch_protocol::{Budget, JudgeSettings, Price};

pub use skillwatch_core::config::FILE_NAME;

/// The harness names `[models]` and `[daemon] parallel` accept.
pub const HARNESSES: &[&str] = &["claude-code", "codex", "openai", "command"];

/// Default quiet time after a save, in milliseconds.
pub const DEFAULT_DEBOUNCE_MS: u64 = 300;

/// The daemon's tables of one `skillwatch.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Config {
    /// `[models]`: harness name to the models tracked skills are measured on.
    pub models: BTreeMap<String, Vec<String>>,
    /// `[daemon]`.
    pub daemon: DaemonConfig,
    /// `[budget]`.
    pub budget: BudgetConfig,
    /// `[skills.<name>]`, by skill name.
    pub skills: BTreeMap<String, SkillConfig>,
    /// `[prices."<model>"]`: prices over skillwatch's table (`crate::runs::prices`).
    pub prices: BTreeMap<String, Price>,
}

/// `[daemon]`: reacting to saves, and parallelism.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonConfig {
    /// Rerun a skill when its SKILL.md or eval file is saved (default false).
    pub rerun_on_save: bool,
    /// Quiet time after a save before acting, in ms (default 300).
    pub debounce_ms: u64,
    /// Runs at once per harness (default 1 each).
    pub parallel: BTreeMap<String, u32>,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        DaemonConfig {
            rerun_on_save: false,
            debounce_ms: DEFAULT_DEBOUNCE_MS,
            parallel: BTreeMap::new(),
        }
    }
}

/// `[budget]`: limits per UTC day (the daemon's), and the default limits of every run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    /// No job starts once this many trials were recorded today.
    pub max_trials_per_day: Option<u64>,
    /// No job starts once trials recorded today cost this much (USD).
    pub max_cost_usd_per_day: Option<f64>,
    /// A run starts no trial past this many (`--max-trials`).
    pub max_trials: Option<u32>,
    /// A run starts no trial that would take its tokens past this (`--max-tokens`).
    pub max_tokens: Option<u64>,
    /// A run starts no trial that would take its cost past this, in USD (`--max-cost`).
    pub max_cost_usd: Option<f64>,
}

/// `[skills.<name>]`: one skill's settings.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillConfig {
    /// Rerun this skill when its files are saved (overrides `[daemon] rerun_on_save`).
    pub rerun_on_save: Option<bool>,
}

/// A `skillwatch.toml` that could not be used: core's one error type for the file.
pub use skillwatch_core::config::ConfigError;

impl Config {
    /// Parse the text of the file at `path` (for messages).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError::toml(path, text, &e))?;
        config.validate(path)?;
        Ok(config)
    }

    /// Read and parse `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::read(path, &e))?;
        Config::parse(&text, path)
    }

    fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let invalid = |field: String, expected: &str, found: String| {
            ConfigError::invalid(path, format!("{field}: expected {expected}, found {found}"))
        };
        let harnesses = self.models.keys().chain(self.daemon.parallel.keys());
        for name in harnesses {
            if !HARNESSES.contains(&name.as_str()) {
                return Err(invalid(
                    format!("harness `{name}`"),
                    &HARNESSES.join(" | "),
                    name.clone(),
                ));
            }
        }
        for (name, models) in &self.models {
            if let Some(m) = models.iter().find(|m| m.trim().is_empty()) {
                return Err(invalid(
                    format!("models.{name}"),
                    "non-empty model names",
                    format!("{m:?}"),
                ));
            }
        }
        if let Some((name, _)) = self.daemon.parallel.iter().find(|(_, n)| **n == 0) {
            return Err(invalid(
                format!("daemon.parallel.{name}"),
                "at least 1",
                "0".into(),
            ));
        }
        let costs = [
            ("max_cost_usd_per_day", self.budget.max_cost_usd_per_day),
            ("max_cost_usd", self.budget.max_cost_usd),
        ];
        for (field, cost) in costs {
            if let Some(cost) = cost
                && !(cost.is_finite() && cost >= 0.0)
            {
                return Err(invalid(
                    format!("budget.{field}"),
                    "a finite number >= 0",
                    cost.to_string(),
                ));
            }
        }
        if let Some((model, _)) = self.prices.iter().find(|(_, p)| !p.is_valid()) {
            return Err(invalid(
                format!("prices.\"{model}\""),
                "finite prices >= 0 (USD per million tokens)",
                format!("{:?}", self.prices[model]),
            ));
        }
        Ok(())
    }

    /// A run's budget on `model`: `[budget]`'s limits and the model's price (`[prices]` over
    /// skillwatch's table).
    pub fn run_budget(&self, model: &str) -> Budget {
        let b = &self.budget;
        Budget {
            max_trials: b.max_trials,
            max_tokens: b.max_tokens,
            max_cost_usd: b.max_cost_usd,
            price: crate::runs::prices::price_of(model, &self.prices),
            judge_price: None,
        }
    }

    /// The price of `judge`'s model (`[prices]` over skillwatch's table): a paired run's
    /// [`Budget::judge_price`], so its limits and the daily cap count its judge calls.
    pub fn judge_price(&self, judge: Option<&JudgeSettings>) -> Option<Price> {
        judge.and_then(|j| crate::runs::prices::price_of(&j.model, &self.prices))
    }

    /// Whether a save reruns the skill named `skill`.
    pub fn rerun_on_save(&self, skill: &str) -> bool {
        self.skills
            .get(skill)
            .and_then(|s| s.rerun_on_save)
            .unwrap_or(self.daemon.rerun_on_save)
    }

    /// Every (harness, model) pair `[models]` lists, by harness, in file order per harness.
    pub fn models(&self) -> Vec<(String, String)> {
        self.models
            .iter()
            .flat_map(|(h, ms)| ms.iter().map(move |m| (h.clone(), m.clone())))
            .collect()
    }

    /// Runs at once on `harness` (default 1).
    pub fn parallel(&self, harness: &str) -> usize {
        self.daemon.parallel.get(harness).copied().unwrap_or(1) as usize
    }
}

/// The `skillwatch.toml` governing `dir`: the nearest one in `dir` or above it.
pub fn find_for(dir: &Path) -> Option<PathBuf> {
    skillwatch_core::config::nearest(dir)
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
        let budget = config.run_budget("qwen3:8b");
        assert_eq!(
            (budget.max_trials, budget.max_tokens),
            (Some(40), Some(2_000_000))
        );
        assert_eq!(budget.price.map(|p| p.output), Some(0.0));
        assert!(config.run_budget("claude-sonnet-4-5").price.is_some());
        assert!(config.rerun_on_save("invoice-tables"));
        assert!(!config.rerun_on_save("other"));
        assert_eq!(config.parallel("openai"), 2);
        assert_eq!(config.parallel("codex"), 1);
    }

    #[test]
    fn the_runners_tables_are_left_to_the_runner() {
        let text = "[run]\nharness = \"openai\"\n[harness.openai]\nbase_url = \"http://h/v1\"\n[judge]\nmodel = \"j\"\n";
        let config = Config::parse(text, Path::new("x.toml")).unwrap();
        assert_eq!(config, Config::default());
        assert_eq!(config.daemon.debounce_ms, DEFAULT_DEBOUNCE_MS);
    }

    #[test]
    fn typos_and_bad_values_say_where() {
        let err = Config::parse("[budget]\nmax_trial_per_day = 3\n", Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.toml:2:1:"), "{err}");
        assert!(err.contains("max_trial_per_day"), "{err}");
        let err = Config::parse("[models]\nopenai = \"m\"\n", Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.toml:2:"), "{err}");
        let err = Config::parse("[daemon]\nparallel = { openai = 0 }\n", Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("daemon.parallel.openai"), "{err}");
        let err = Config::parse("[models]\ngemini = [\"g\"]\n", Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("found gemini"), "{err}");
    }

    #[test]
    fn the_nearest_file_governs() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("a/b/skill");
        std::fs::create_dir_all(&skill).unwrap();
        assert_eq!(for_dir(&skill).unwrap(), (None, Config::default()));
        std::fs::write(
            dir.path().join("a").join(FILE_NAME),
            "[daemon]\nrerun_on_save = true\n",
        )
        .unwrap();
        let (path, config) = for_dir(&skill).unwrap();
        assert_eq!(path, Some(dir.path().join("a").join(FILE_NAME)));
        assert!(config.daemon.rerun_on_save);
        std::fs::write(dir.path().join("a/b").join(FILE_NAME), "nonsense =").unwrap();
        assert!(for_dir(&skill).is_err());
    }
}
