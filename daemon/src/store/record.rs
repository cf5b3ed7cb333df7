//! What a runner (or the importer) hands the store: the identity of a run and the trials it
//! produced. Each type validates itself before anything is written, so the database never holds
//! a half-described run or a metric outside [0, 1].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::error::{Result, StoreError};
use super::types::{Condition, JudgmentKind, TrialStatus, Trigger, Winner};

/// The scoring profile a run is scored with when the caller does not name one: ACES Skill Lift.
pub const DEFAULT_SCORING_PROFILE: &str = "outcome";

/// Which skill, and which version of it, a run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillIdentity {
    /// The skill's name (the SKILL.md `name`); history is grouped by it.
    pub name: String,
    /// Where the skill lived when the run was made (informational; lenses look it up).
    pub path: Option<String>,
    /// `sha256:<hex>` of the whole skill folder (`core::skill::content_hash`), or `unknown`
    /// for imported results that carry no hash.
    pub content_hash: String,
}

/// One eval case as the history identifies it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSpec {
    /// The case's id or name in its eval file; trials name their case by it.
    pub key: String,
    /// `sha256:<hex>` of the case's content: an edited case is a different case, so its old
    /// results are never compared with its new ones as if nothing had changed.
    pub content_hash: String,
    /// The case itself (prompt, assertions, ...) as JSON, kept for `history --trials`.
    pub definition: Option<serde_json::Value>,
}

/// One version of a skill's eval suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteSpec {
    /// `sha256:<hex>` of the eval file (or of its case hashes).
    pub content_hash: String,
    /// The eval file it came from, e.g. `evals/evals.json`.
    pub source: Option<String>,
    /// Its cases, in file order; keys must be unique.
    pub cases: Vec<CaseSpec>,
}

/// Everything that identifies a run: what a number shown to a user can be traced back to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The skill version under test.
    pub skill: SkillIdentity,
    /// The eval suite version it ran.
    pub suite: SuiteSpec,
    /// Harness name: `claude-code`, `codex`, `openai`, `command`, or another tool's name.
    pub harness: String,
    /// The harness's own version (e.g. the Claude Code CLI version), when known.
    pub harness_version: Option<String>,
    /// The model the agent ran on.
    pub model: String,
    /// The judge model, when LLM judging was used.
    pub judge_model: Option<String>,
    /// The scoring profile (and its version), e.g. `aces` or `compat`.
    pub scoring_profile: String,
    /// Why the run happened.
    pub trigger: Trigger,
    /// The run's configuration (runs, jobs, timeouts, support skills...) as JSON.
    pub config: serde_json::Value,
    /// The seed every random choice of the run derives from.
    pub seed: u64,
    /// The skillwatch version that made the run (or the importing tool's name and version).
    pub tool_version: String,
    /// When the run started (epoch ms); `None` means now.
    pub started_ms: Option<i64>,
}

/// Token counts of one trial. `input` includes cached tokens (the ATIF convention), so
/// `cached <= input` whenever both are known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Prompt tokens, cached ones included.
    pub input: Option<u64>,
    /// Completion tokens (reasoning and tool calls included).
    pub output: Option<u64>,
    /// The cached subset of `input`.
    pub cached: Option<u64>,
}

/// The outcome of one deterministic assertion on a trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssertionResult {
    /// The assertion type, e.g. `output_contains` or `expected_behavior`.
    pub kind: String,
    /// What was asserted, for people (e.g. `output contains "done"`).
    pub description: String,
    /// Whether it held.
    pub passed: bool,
    /// Why it failed, or evidence.
    pub message: Option<String>,
}

/// What a judge said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Verdict {
    /// An independent score (e.g. 1-5 for a rubric item).
    Score {
        /// The score as the judge gave it.
        score: f64,
    },
    /// A pairwise preference.
    Preference {
        /// The preferred side.
        winner: Winner,
        /// How much better, e.g. `slightly-better`.
        magnitude: String,
    },
    /// The judge call failed: a judge error, never a skill failure; re-judgeable later.
    Failed {
        /// The failure.
        error: String,
    },
}

/// One judge verdict on one criterion (or overall).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgment {
    /// Independent (one trial) or pairwise (baseline vs skill).
    pub kind: JudgmentKind,
    /// The model that judged.
    pub judge_model: String,
    /// The rubric criterion; `None` for the overall verdict.
    pub criterion: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// The judge's reasoning.
    pub reasoning: Option<String>,
}

/// A trajectory to keep with a trial: stored zstd-compressed under the sha256 of `bytes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trajectory {
    /// What the bytes are, e.g. `atif-v1.8` (JSON) or `claude-stream-json`.
    pub format: String,
    /// The uncompressed bytes.
    pub bytes: Vec<u8>,
}

/// One agent execution of one case in one condition, with everything measured about it.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialRecord {
    /// The case key (from the run's [`SuiteSpec`]).
    pub case: String,
    /// Baseline or with-skill.
    pub condition: Condition,
    /// 0-based repetition number within the run.
    pub attempt: u32,
    /// Whether the agent produced an observation (completed) or failed (error, timeout).
    pub status: TrialStatus,
    /// Task outcome from the graders (assertions and constraints all held); `None` when the
    /// trial was not graded (errors, timeouts, or no graders).
    pub passed: Option<bool>,
    /// The agent's final output text.
    pub output: String,
    /// The harness error or timeout message, when `status` is not completed.
    pub error_message: Option<String>,
    /// The end of what the agent wrote on stderr (its own explanation of a failure), kept
    /// because the trial's folders are deleted.
    pub stderr_tail: Option<String>,
    /// Retries of the trial into a fresh workspace before this outcome.
    pub retries: Option<u32>,
    /// Token counts.
    pub tokens: Tokens,
    /// Cost in USD, when the harness reports it.
    pub cost_usd: Option<f64>,
    /// Wall-clock duration in milliseconds.
    pub wall_ms: Option<u64>,
    /// Number of tool calls the agent made.
    pub tool_calls: Option<u32>,
    /// Number of assistant turns.
    pub turns: Option<u32>,
    /// Number of errors observed in the trajectory (failed tool calls, API errors).
    pub errors: Option<u32>,
    /// Whether the agent invoked the target skill (`None` when not detectable).
    pub skill_invoked: Option<bool>,
    /// Metric values on [0, 1], keyed by metric name (ACES: `security`, `skill_execution`,
    /// `skill_efficiency`, `accuracy`, `goal_accuracy`, `behavior_check`). A metric that could
    /// not be scored is absent, never 0.
    pub metrics: BTreeMap<String, f64>,
    /// Deterministic assertion outcomes, in suite order.
    pub assertions: Vec<AssertionResult>,
    /// Independent judge verdicts on this trial.
    pub judgments: Vec<Judgment>,
    /// The trajectory, if kept.
    pub trajectory: Option<Trajectory>,
    /// When the trial started (epoch ms); `None` means now.
    pub started_ms: Option<i64>,
}

impl TrialRecord {
    /// A completed trial with nothing measured yet: the starting point for building one.
    pub fn new(case: impl Into<String>, condition: Condition, attempt: u32) -> TrialRecord {
        TrialRecord {
            case: case.into(),
            condition,
            attempt,
            status: TrialStatus::Completed,
            passed: None,
            output: String::new(),
            error_message: None,
            stderr_tail: None,
            retries: None,
            tokens: Tokens::default(),
            cost_usd: None,
            wall_ms: None,
            tool_calls: None,
            turns: None,
            errors: None,
            skill_invoked: None,
            metrics: BTreeMap::new(),
            assertions: Vec::new(),
            judgments: Vec::new(),
            trajectory: None,
            started_ms: None,
        }
    }
}

fn require_text(field: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(StoreError::invalid(
            field,
            "a non-empty text",
            "an empty one",
        ));
    }
    Ok(())
}

impl RunSpec {
    /// Check the identity before `begin_run` writes it.
    pub fn validate(&self) -> Result<()> {
        require_text("run.skill.name", &self.skill.name)?;
        require_text("run.skill.content_hash", &self.skill.content_hash)?;
        require_text("run.suite.content_hash", &self.suite.content_hash)?;
        require_text("run.harness", &self.harness)?;
        require_text("run.model", &self.model)?;
        require_text("run.scoring_profile", &self.scoring_profile)?;
        require_text("run.tool_version", &self.tool_version)?;
        if self.suite.cases.is_empty() {
            return Err(StoreError::invalid(
                "run.suite.cases",
                "at least one case",
                "none",
            ));
        }
        let mut keys = BTreeSet::new();
        for (i, case) in self.suite.cases.iter().enumerate() {
            require_text(&format!("run.suite.cases[{i}].key"), &case.key)?;
            require_text(
                &format!("run.suite.cases[{i}].content_hash"),
                &case.content_hash,
            )?;
            if !keys.insert(case.key.as_str()) {
                return Err(StoreError::invalid(
                    format!("run.suite.cases[{i}].key"),
                    "case keys unique within a suite",
                    format!("`{}` a second time", case.key),
                ));
            }
        }
        if self.seed > i64::MAX as u64 {
            return Err(StoreError::invalid(
                "run.seed",
                format!("at most {}", i64::MAX),
                self.seed.to_string(),
            ));
        }
        Ok(())
    }
}

impl TrialRecord {
    /// Check a trial before `record_trial` writes it: finite metrics on [0, 1], sane counts.
    pub fn validate(&self) -> Result<()> {
        require_text("trial.case", &self.case)?;
        for (name, value) in &self.metrics {
            require_text("trial.metrics key", name)?;
            if !(value.is_finite() && (0.0..=1.0).contains(value)) {
                return Err(StoreError::invalid(
                    format!("trial.metrics.{name}"),
                    "a number on [0, 1]",
                    value.to_string(),
                ));
            }
        }
        if let (Some(input), Some(cached)) = (self.tokens.input, self.tokens.cached)
            && cached > input
        {
            return Err(StoreError::invalid(
                "trial.tokens.cached",
                format!("at most tokens.input ({input}), since input includes cached tokens"),
                cached.to_string(),
            ));
        }
        for (field, value) in [
            ("trial.tokens.input", self.tokens.input),
            ("trial.tokens.output", self.tokens.output),
            ("trial.tokens.cached", self.tokens.cached),
            ("trial.wall_ms", self.wall_ms),
        ] {
            if value.is_some_and(|v| v > i64::MAX as u64) {
                return Err(StoreError::invalid(
                    field,
                    format!("at most {}", i64::MAX),
                    format!("{value:?}"),
                ));
            }
        }
        if let Some(cost) = self.cost_usd
            && !(cost.is_finite() && cost >= 0.0)
        {
            return Err(StoreError::invalid(
                "trial.cost_usd",
                "a finite number >= 0",
                cost.to_string(),
            ));
        }
        for judgment in &self.judgments {
            if judgment.kind != JudgmentKind::Independent {
                return Err(StoreError::invalid(
                    "trial.judgments[].kind",
                    "independent (pairwise verdicts belong to a case and attempt: record_pairwise_judgments)",
                    judgment.kind.as_str(),
                ));
            }
            judgment.validate()?;
        }
        Ok(())
    }
}

impl Judgment {
    /// A verdict must fit its kind: scores for independent, preferences for pairwise.
    pub fn validate(&self) -> Result<()> {
        require_text("judgment.judge_model", &self.judge_model)?;
        match (&self.kind, &self.verdict) {
            (JudgmentKind::Independent, Verdict::Score { score }) if score.is_finite() => Ok(()),
            (JudgmentKind::Independent, Verdict::Score { score }) => Err(StoreError::invalid(
                "judgment.verdict.score",
                "a finite number",
                score.to_string(),
            )),
            (JudgmentKind::Pairwise, Verdict::Preference { .. }) | (_, Verdict::Failed { .. }) => {
                Ok(())
            }
            (kind, verdict) => Err(StoreError::invalid(
                "judgment.verdict",
                format!(
                    "{} for a {kind} judgment",
                    if *kind == JudgmentKind::Independent {
                        "a score"
                    } else {
                        "a preference"
                    }
                ),
                format!("{verdict:?}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_outside_the_unit_interval_are_refused() {
        let mut trial = TrialRecord::new("c1", Condition::Skill, 0);
        trial.metrics.insert("accuracy".into(), 1.0);
        trial.validate().unwrap();
        for bad in [1.5, -0.1, f64::NAN, f64::INFINITY] {
            trial.metrics.insert("accuracy".into(), bad);
            let err = trial.validate().unwrap_err().to_string();
            assert!(
                err.contains("trial.metrics.accuracy") && err.contains("[0, 1]"),
                "{err}"
            );
        }
    }

    #[test]
    fn cached_tokens_cannot_exceed_input() {
        let mut trial = TrialRecord::new("c1", Condition::Baseline, 0);
        trial.tokens = Tokens {
            input: Some(10),
            output: Some(1),
            cached: Some(11),
        };
        assert!(trial.validate().unwrap_err().to_string().contains("cached"));
    }

    #[test]
    fn verdicts_must_fit_their_kind() {
        let pairwise_score = Judgment {
            kind: JudgmentKind::Pairwise,
            judge_model: "j".into(),
            criterion: None,
            verdict: Verdict::Score { score: 3.0 },
            reasoning: None,
        };
        assert!(pairwise_score.validate().is_err());
        let failed = Judgment {
            verdict: Verdict::Failed {
                error: "429".into(),
            },
            ..pairwise_score
        };
        failed.validate().unwrap();
    }
}
