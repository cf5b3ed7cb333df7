//! The description optimiser as a job of the run engine (`skillwatch trigger --optimize`, the
//! editor's "Look for a better description"): what a client asks for ([`OptimizeRequest`])
//! and what the job leaves in the history ([`OptimizeReport`]), both typed so the CLI, the
//! editor and the daemon read the same fields (docs/evals.md, "Optimising the description").

use serde::{Deserialize, Serialize};
use skillwatch_core::optimize::Split;
use skillwatch_core::scoring::trigger::{PooledRate, TriggerChange, TriggerSummary};

use crate::{Budget, HarnessSettings, JudgeSettings, Price, TriggerRequest};

/// Rounds of proposals at most, by default.
pub const DEFAULT_ROUNDS: usize = 3;

/// Rewrites asked for per round, by default.
pub const DEFAULT_CANDIDATES: usize = 3;

/// A description search: its measurements are trigger runs of `trigger` (each a child run of
/// the job), its rewrites come from `proposer`; the job's budget is `trigger.budget`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimizeRequest {
    /// The trigger run every measurement starts from (skill, harness, model, runs, budget).
    pub trigger: TriggerRequest,
    /// The seed of the train/validation split.
    pub seed: u64,
    /// Rounds of proposals at most.
    pub rounds: usize,
    /// Rewrites asked for per round.
    pub candidates: usize,
    /// The model that proposes rewrites, and how it is reached.
    pub proposer: JudgeSettings,
    /// The proposer model's price (its calls count against `--max-cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposer_price: Option<Price>,
}

impl OptimizeRequest {
    /// The harness the measurements run on.
    pub fn harness(&self) -> &HarnessSettings {
        &self.trigger.harness
    }

    /// What the whole search may spend.
    pub fn budget(&self) -> Budget {
        self.trigger.budget
    }
}

/// Recall and false triggers of one measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    /// Should-trigger queries that triggered.
    pub recall: PooledRate,
    /// Should-not-trigger queries that triggered.
    pub false_trigger: PooledRate,
}

impl Rates {
    /// The rates of a measurement.
    pub fn of(s: &TriggerSummary) -> Rates {
        Rates {
            recall: s.recall.clone(),
            false_trigger: s.false_trigger.clone(),
        }
    }
}

/// One proposed rewrite and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// 1-based, across rounds.
    pub number: usize,
    /// The round that proposed it.
    pub round: usize,
    /// The rewrite.
    pub description: String,
    /// The rewrite of `when_to_use`, where the harness reads it and the skill has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_to_use: Option<String>,
    /// Why it was not measured (a rule it breaks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Its rates on train.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train: Option<Rates>,
    /// Its rates on validation (measured only when it did better on train).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Rates>,
    /// Against the current description on validation, paired by query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<TriggerChange>,
    /// What became of it, in words.
    pub outcome: String,
}

/// Why the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The next measurement or proposal would cross the budget.
    Budget,
    /// A client cancelled the job (or a measurement was cancelled).
    Cancelled,
    /// No candidate of a round beat the current description on validation.
    NoBetter,
    /// Every round was done.
    Rounds,
}

impl StopReason {
    /// Whether the result is partial: the search was cut short.
    pub fn partial(self) -> bool {
        matches!(self, StopReason::Budget | StopReason::Cancelled)
    }
}

/// Why the search ended, and the detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stopped {
    /// Why.
    pub reason: StopReason,
    /// In words.
    pub detail: String,
}

/// What one side spent.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Share {
    /// Trials (measurements) or calls (the proposer).
    pub count: u64,
    /// Input and output tokens.
    pub tokens: u64,
    /// USD, of the priced ones.
    pub cost_usd: f64,
    /// Of `count`, those whose cost is unknown.
    pub unpriced: u64,
}

/// What the search spent: the measurements' trials and the proposer's calls, both counted
/// by the budget.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct OptimizeSpent {
    /// Trials of the measurements.
    pub trials: u64,
    /// Tokens in all (what `--max-tokens` counts).
    pub tokens: u64,
    /// USD in all (what `--max-cost` counts).
    pub cost_usd: f64,
    /// Trials and calls whose cost is unknown.
    pub unpriced: u64,
    /// The measurements' share.
    pub measurements: Share,
    /// The proposer's share (`count`: its calls).
    pub proposer: Share,
}

impl OptimizeSpent {
    /// The totals of two shares.
    pub fn of(measurements: Share, proposer: Share) -> OptimizeSpent {
        OptimizeSpent {
            trials: measurements.count,
            tokens: measurements.tokens + proposer.tokens,
            cost_usd: measurements.cost_usd + proposer.cost_usd,
            unpriced: measurements.unpriced + proposer.unpriced,
            measurements,
            proposer,
        }
    }
}

/// What a description search found, as the job stores it and clients show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimizeReport {
    /// The skill's name.
    pub skill: String,
    /// The split, with its seed.
    pub split: Split,
    /// The description it started from.
    pub original: String,
    /// The chosen description; `None` when none beat the original on validation.
    pub chosen: Option<String>,
    /// The skill's `when_to_use`, when the search could rewrite it (the harness reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_when_to_use: Option<String>,
    /// The chosen `when_to_use`, when the chosen rewrite changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_when_to_use: Option<String>,
    /// The original's rates on validation.
    pub before: Option<Rates>,
    /// The chosen one's rates on validation.
    pub after: Option<Rates>,
    /// The chosen against the original on validation, paired by query.
    pub change: Option<TriggerChange>,
    /// Every candidate.
    pub candidates: Vec<Candidate>,
    /// Why it ended.
    pub stopped: Stopped,
    /// Cut short by the budget or a cancel: the result is the best found before.
    pub partial: bool,
    /// What it spent.
    pub spent: OptimizeSpent,
    /// The diff of SKILL.md that applies the chosen description.
    pub diff: Option<String>,
    /// Whether the client wrote it (`--write`).
    #[serde(default)]
    pub written: bool,
    /// The optimisation's id in the history.
    pub record: Option<i64>,
}

/// Where a running search is: told as the job's progress (the event carries it), shown by
/// `status`, the CLI and the editor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimizeProgress {
    /// The round (0 while the current description is measured).
    pub round: usize,
    /// The candidate the step is about, when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<usize>,
    /// What it is doing or just did, in words.
    pub step: String,
    /// Trials measured so far.
    pub trials: u64,
    /// On a finished trial: trials done and planned of the measurement in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measuring: Option<[u64; 2]>,
    /// What it spent so far (the trial in flight not yet counted).
    pub spent: OptimizeSpent,
}

impl OptimizeProgress {
    /// One line for `status`: round, step, spent.
    pub fn line(&self) -> String {
        let cost = if self.spent.cost_usd > 0.0 {
            format!(", ${:.4}", self.spent.cost_usd)
        } else {
            String::new()
        };
        format!(
            "round {}: {} ({} tokens{cost} spent)",
            self.round, self.step, self.spent.tokens
        )
    }
}
