//! The flags every command that runs an agent shares (`run`, `probe`, `trigger`), defined
//! once and flattened into each, and how they resolve over `skillwatch.toml`: the harness and
//! model, how to reach the harness, the timeout, and the budget. Flags win over the file, the
//! file over the defaults.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use skillwatch_daemon::config::Config as DaemonConfig;
use skillwatch_daemon::runner::{HarnessKind, HarnessSettings, RunConfig, parse_kind};
use skillwatch_protocol::Budget;

/// How to run the agent.
#[derive(clap::Args, Debug, Clone)]
pub struct AgentArgs {
    /// Harness: claude-code, codex, gemini-cli, opencode, copilot-cli, openai (built-in loop
    /// over an OpenAI-compatible endpoint) or command [default: [run] harness].
    #[arg(long)]
    pub harness: Option<String>,
    /// The agent's model [default: [run] model].
    #[arg(long)]
    pub model: Option<String>,
    /// API base URL of the harness (openai: `http://host/v1`; claude-code:
    /// ANTHROPIC_BASE_URL; codex: a Responses endpoint).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the harness's API key [default:
    /// OPENAI_API_KEY for openai and codex, ANTHROPIC_API_KEY for claude-code].
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// The harness executable (the program for `command`).
    #[arg(long, value_name = "PATH")]
    pub program: Option<PathBuf>,
    /// An argument for the harness (repeatable; `{prompt}` placeholders for `command`).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// Seconds per trial [default: a case's own `timeout`, else 120; 120 per probe; 60 per
    /// trigger trial].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u32>,
    /// skillwatch.toml to read [default: the nearest one above the skill].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// How often, and how many at once.
#[derive(clap::Args, Debug, Clone)]
pub struct RepeatArgs {
    /// Attempts per case and condition (trials per query for `trigger`) [default: [run] runs,
    /// else 1].
    #[arg(long)]
    pub runs: Option<u32>,
    /// Trials in flight at once [default: [run] jobs, else 1].
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
}

/// What the run may spend. When the next trial would cross a limit, no new trial starts,
/// those in flight finish, and the run ends `stopped: budget` with what it spent.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BudgetArgs {
    /// Start no trial past this many [default: [budget] max_trials].
    #[arg(long, value_name = "N")]
    pub max_trials: Option<u32>,
    /// Start no trial that would take the run's tokens (input and output, as the harness
    /// counts them) past this [default: [budget] max_tokens].
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Start no trial that would take the run's cost past this many USD, at the model's price
    /// (skillwatch's price table, or [prices] of skillwatch.toml); a model with no price is
    /// refused before anything runs [default: [budget] max_cost_usd].
    #[arg(long = "max-cost", value_name = "USD")]
    pub max_cost_usd: Option<f64>,
}

/// The `skillwatch.toml` a command reads: the runner's tables and the daemon's (`[budget]`,
/// `[prices]`), from one file.
pub struct Settings {
    /// `[run]`, `[harness.*]`, `[judge]`.
    pub run: RunConfig,
    /// `[budget]`, `[prices]` (and the daemon's other tables).
    pub daemon: DaemonConfig,
}

impl AgentArgs {
    /// The explicit `--config`, else the nearest skillwatch.toml above `skill`, else defaults.
    pub fn settings(&self, skill: &Path) -> anyhow::Result<Settings> {
        let path = self.config.clone().or_else(|| RunConfig::find(skill));
        Ok(match path {
            Some(path) => Settings {
                run: RunConfig::load(&path)?,
                daemon: DaemonConfig::load(&path)?,
            },
            None => Settings {
                run: RunConfig::default(),
                daemon: DaemonConfig::default(),
            },
        })
    }

    /// The harness and model: the flags, else `[run]`; either missing is an error that names
    /// the flag and the file it could also come from.
    pub fn harness_and_model(&self, config: &RunConfig) -> anyhow::Result<(HarnessKind, String)> {
        let from_file = config
            .path
            .as_ref()
            .map_or(String::new(), |p| format!(" or [run] in {}", p.display()));
        let kind_name = self
            .harness
            .clone()
            .or(config.run.harness.clone())
            .ok_or_else(|| {
                anyhow!(
                    "expected --harness ({}){from_file}, found none",
                    HarnessKind::names()
                )
            })?;
        let kind = parse_kind(&kind_name).map_err(|e| anyhow!("--harness: {e}"))?;
        let model = self
            .model
            .clone()
            .or(config.run.model.clone())
            .ok_or_else(|| anyhow!("expected --model{from_file}, found none"))?;
        Ok((kind, model))
    }

    /// `[harness.KIND]` of `config` with the flags over it.
    pub fn harness(&self, config: &RunConfig, kind: HarnessKind) -> HarnessSettings {
        let mut h = config.harness_settings(kind);
        if self.base_url.is_some() {
            h.base_url.clone_from(&self.base_url);
        }
        if self.api_key_env.is_some() {
            h.api_key_env.clone_from(&self.api_key_env);
        }
        if self.program.is_some() {
            h.program.clone_from(&self.program);
        }
        if !self.args.is_empty() {
            h.args.clone_from(&self.args);
        }
        h
    }

    /// The run's budget on `model`: the flags over `[budget]`, at the model's price. A cost
    /// limit on a model with no price is refused here, before anything runs.
    pub fn budget(&self, settings: &Settings, model: &str) -> anyhow::Result<Budget> {
        let b = &self.budget;
        if let Some(cost) = b.max_cost_usd
            && !(cost.is_finite() && cost >= 0.0)
        {
            bail!("--max-cost: expected a number of USD >= 0, found {cost}");
        }
        let flags = Budget {
            max_trials: b.max_trials,
            max_tokens: b.max_tokens,
            max_cost_usd: b.max_cost_usd,
            price: None,
            judge_price: None,
        };
        let budget = flags.or(settings.daemon.run_budget(model));
        skillwatch_daemon::runs::budget::countable(&budget, model).map_err(|e| anyhow!(e))?;
        Ok(budget)
    }
}

impl RepeatArgs {
    /// Attempts (at least 1): the flag, else `[run] runs`, else 1.
    pub fn runs(&self, config: &RunConfig) -> u32 {
        self.runs.or(config.run.runs).unwrap_or(1).max(1)
    }

    /// Trials at once (at least 1): the flag, else `[run] jobs`, else 1.
    pub fn jobs(&self, config: &RunConfig) -> usize {
        self.jobs.or(config.run.jobs).unwrap_or(1).max(1)
    }
}
