//! What scoring reads: one [`Trial`] per (case, condition, attempt), and the pairing of
//! baseline and with-skill trials that every paired score starts from.
//!
//! These are plain data with serde derives so the store can map its rows to them and
//! `skillwatch import` can read them from JSON. Scoring never sees a process, a file or a
//! database: give it trials, get numbers.
//!
//! Pairing rule (ACES §3, and the project's): a baseline trial and a with-skill trial pair
//! when they have the same `case_id` and `attempt`. A pair missing a side is excluded and
//! counted, never imputed as a failure or a zero.
//!
//! A run may have a third arm, [`Condition::Plugin`] (a Vally experiment's plugin arm: every
//! skill of the plugin installed together). Its lift against the baseline goes through the
//! same scorers, pairing rule and intervals: [`versus_baseline`] hands them the plugin trials
//! as the treated side, so there is no second scorer to drift from the first.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Which side of a paired run a trial is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Condition {
    /// The target skill withheld; support and decoy skills still installed.
    Baseline,
    /// The target skill available.
    Skill,
    /// The whole plugin the skill belongs to available (the target skill among its skills).
    /// Only runs whose suite asks for a plugin arm have such trials; the skill lift never
    /// reads them.
    Plugin,
}

impl Condition {
    /// The lowercase word used in JSON, the store and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Condition::Baseline => "baseline",
            Condition::Skill => "skill",
            Condition::Plugin => "plugin",
        }
    }
}

/// A treated arm, measured against the baseline. Its own type (not a [`Condition`]) so
/// "the baseline against itself" cannot be asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    /// The skill under test alone.
    Skill,
    /// The whole plugin.
    Plugin,
}

impl Arm {
    /// The condition whose trials are this arm's.
    pub fn condition(self) -> Condition {
        match self {
            Arm::Skill => Condition::Skill,
            Arm::Plugin => Condition::Plugin,
        }
    }
}

/// The trials of `arm` against the baseline, as the paired scorers read them: the baseline
/// trials unchanged and `arm`'s trials as the treated side ([`Condition::Skill`]); the other
/// arm's trials left out. Every paired scorer pairs baseline with skill by case and attempt,
/// so the plugin lift is that same computation on these trials (same pairing, same
/// exclusions, same intervals and verdict), not a copy of it.
pub fn versus_baseline(trials: &[Trial], arm: Arm) -> Vec<Trial> {
    let treated = arm.condition();
    trials
        .iter()
        .filter(|t| t.condition == Condition::Baseline || t.condition == treated)
        .map(|t| Trial {
            condition: if t.condition == treated {
                Condition::Skill
            } else {
                Condition::Baseline
            },
            ..t.clone()
        })
        .collect()
}

/// Whether any trial ran in the plugin arm: a run without one is scored exactly as before.
pub fn has_plugin_arm(trials: &[Trial]) -> bool {
    trials.iter().any(|t| t.condition == Condition::Plugin)
}

/// How a trial ended. Timeouts and errors are different facts: a timeout is an observation
/// (the agent did not finish in time), an error is the absence of one (the harness, the model
/// API or the grader failed). Scorers treat them as their papers say (see each scorer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrialStatus {
    /// The agent finished; `passed` and `metrics` hold the grading.
    Completed,
    /// The agent was stopped at the time limit.
    Timeout,
    /// Infrastructure failed; nothing was observed about the skill.
    Error,
}

/// One of the six ACES default metrics, task success (`pass`), or a bring-your-own-grader
/// metric. All are on [0, 1], 1 best. Serialized as its snake_case name (`goal_accuracy`,
/// `pass`, or the custom name).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Metric {
    /// Deterministic trace scan: 1 when no unsafe pattern, 0.5 minor, 0 critical.
    Security,
    /// Activation, expected script, workflow order, error recovery.
    SkillExecution,
    /// Routing and productive tool calls.
    SkillEfficiency,
    /// LLM judge of the final answer against the ground truth.
    Accuracy,
    /// Reference-based goal match.
    GoalAccuracy,
    /// Fraction of expected_behavior assertions satisfied.
    BehaviorCheck,
    /// Task success: 1 when the trial passed its suite's criteria, 0 when it failed or timed
    /// out (a timeout did not complete the task). Derived from [`Trial::passed`] unless a
    /// trial gives it explicitly; `pass` is therefore a reserved metric name.
    Pass,
    /// A custom (BYOG) metric; reported separately, part of the outcome lift only when the run
    /// declares it an outcome, never part of the ACES overall.
    Custom(String),
}

/// What a metric measures, which decides where it enters: the outcome lift (the verdict), or
/// beside it. See docs/scoring.md, "Why the verdict rests on outcome".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricRole {
    /// Did the task get done: `pass`, `accuracy`, `goal_accuracy`, `behavior_check`, and
    /// custom metrics a run declares as outcome.
    Outcome,
    /// How the agent went about it: `skill_execution`, `skill_efficiency`. With the target
    /// skill withheld, the baseline cannot load it, so these favour the with-skill side by
    /// construction; they are shown beside the outcome lift, never inside it.
    Process,
    /// The trace security scan; shown beside, a guard rather than a measure of help.
    Safety,
    /// A custom metric not declared as outcome: reported on its own.
    Custom,
}

impl Metric {
    /// The six ACES default metrics in the paper's order (Table 1).
    pub const DEFAULTS: [Metric; 6] = [
        Metric::Security,
        Metric::SkillExecution,
        Metric::SkillEfficiency,
        Metric::Accuracy,
        Metric::GoalAccuracy,
        Metric::BehaviorCheck,
    ];

    /// The snake_case name used in JSON and the store.
    pub fn name(&self) -> &str {
        match self {
            Metric::Security => "security",
            Metric::SkillExecution => "skill_execution",
            Metric::SkillEfficiency => "skill_efficiency",
            Metric::Accuracy => "accuracy",
            Metric::GoalAccuracy => "goal_accuracy",
            Metric::BehaviorCheck => "behavior_check",
            Metric::Pass => "pass",
            Metric::Custom(name) => name,
        }
    }

    /// True for the six metrics that make up the ACES overall score.
    pub fn is_default(&self) -> bool {
        !matches!(self, Metric::Custom(_) | Metric::Pass)
    }

    /// The metric's role; `outcome_custom` lists the custom metrics declared as outcome.
    pub fn role(&self, outcome_custom: &[String]) -> MetricRole {
        match self {
            Metric::Pass | Metric::Accuracy | Metric::GoalAccuracy | Metric::BehaviorCheck => {
                MetricRole::Outcome
            }
            Metric::SkillExecution | Metric::SkillEfficiency => MetricRole::Process,
            Metric::Security => MetricRole::Safety,
            Metric::Custom(name) if outcome_custom.iter().any(|o| o == name) => MetricRole::Outcome,
            Metric::Custom(_) => MetricRole::Custom,
        }
    }
}

impl From<String> for Metric {
    fn from(name: String) -> Self {
        match name.as_str() {
            "security" => Metric::Security,
            "skill_execution" => Metric::SkillExecution,
            "skill_efficiency" => Metric::SkillEfficiency,
            "accuracy" => Metric::Accuracy,
            "goal_accuracy" => Metric::GoalAccuracy,
            "behavior_check" => Metric::BehaviorCheck,
            "pass" => Metric::Pass,
            _ => Metric::Custom(name),
        }
    }
}

impl From<Metric> for String {
    fn from(metric: Metric) -> Self {
        metric.name().to_owned()
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Token counts of one trial, normalized by the harness adapter. `input` INCLUDES cached
/// tokens (ATIF's `prompt_tokens` convention), so `input + output` is the total processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens, cached ones included.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
    /// The part of `input` served from a cache.
    #[serde(default)]
    pub cached: u64,
}

impl TokenUsage {
    /// Input plus output: the token cost SkillTester and skill-validator compare.
    pub fn total(&self) -> u64 {
        self.input.saturating_add(self.output)
    }
}

/// Passed and total deterministic or judged assertions of one trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssertionCounts {
    /// Assertions satisfied.
    pub passed: u32,
    /// Assertions evaluated.
    pub total: u32,
}

/// Scores from an independent 1-5 LLM judge (skill-validator's independent mode), used only by
/// the compat profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeScores {
    /// One score per rubric criterion, each on 1-5.
    pub rubric: Vec<f64>,
    /// The overall score on 1-5.
    pub overall: f64,
}

/// One agent run of one case under one condition: everything scoring needs, nothing it
/// does not (outputs and trajectories stay in the store).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// The case's id within its suite (`C_01`, an evals.json id, an eval.yaml scenario name).
    pub case_id: String,
    /// Baseline or with-skill.
    pub condition: Condition,
    /// 0-based repetition index; baseline attempt k pairs with skill attempt k.
    #[serde(default)]
    pub attempt: u32,
    /// How the run ended.
    pub status: TrialStatus,
    /// Task success under the suite's pass criteria; `None` when not graded.
    #[serde(default)]
    pub passed: Option<bool>,
    /// Metric scores on [0, 1]. A metric absent here was not scored (never read as 0).
    #[serde(default)]
    pub metrics: BTreeMap<Metric, f64>,
    /// Token usage, when the harness reported it.
    #[serde(default)]
    pub tokens: Option<TokenUsage>,
    /// Wall-clock duration in milliseconds.
    #[serde(default)]
    pub wall_ms: Option<u64>,
    /// Whether the target skill was actually invoked (with-skill trials); `None` = unknown.
    #[serde(default)]
    pub invoked: Option<bool>,
    /// Assertion results; the source of `behavior_check` when no explicit score is given.
    #[serde(default)]
    pub assertions: Option<AssertionCounts>,
    /// Number of tool calls.
    #[serde(default)]
    pub tool_calls: Option<u32>,
    /// Number of assistant turns.
    #[serde(default)]
    pub turns: Option<u32>,
    /// Number of error events during the run (tool failures, session errors).
    #[serde(default)]
    pub errors: Option<u32>,
    /// Independent 1-5 judge scores (compat profile only).
    #[serde(default)]
    pub judge: Option<JudgeScores>,
}

impl Trial {
    /// The metric's score for this trial: the explicit score; for `behavior_check` the
    /// fraction of assertions passed when assertions were evaluated and no score was given;
    /// for `pass` the task outcome ([`Trial::task_outcome`]) as 1 or 0.
    pub fn metric(&self, metric: &Metric) -> Option<f64> {
        if let Some(value) = self.metrics.get(metric) {
            return Some(*value);
        }
        match (metric, self.assertions) {
            (Metric::BehaviorCheck, Some(a)) if a.total > 0 => {
                Some(f64::from(a.passed) / f64::from(a.total))
            }
            (Metric::Pass, _) => self.task_outcome().map(|p| if p { 1.0 } else { 0.0 }),
            _ => None,
        }
    }

    /// Whether the task got done: `passed` for a finished trial, false for a timeout (the
    /// agent did not finish; SkillTester §2.2 counts it a failed outcome), `None` for an
    /// infrastructure error or an ungraded trial. Pass rates, pass@k, U and the `pass` metric
    /// all read this one rule, so a timeout is in every denominator.
    pub fn task_outcome(&self) -> Option<bool> {
        match self.status {
            TrialStatus::Completed => self.passed,
            TrialStatus::Timeout => Some(false),
            TrialStatus::Error => None,
        }
    }

    /// Every metric this trial has a score for (explicit or derived).
    pub fn metric_names(&self) -> impl Iterator<Item = Metric> + '_ {
        let behavior = (self.assertions.is_some_and(|a| a.total > 0)
            && !self.metrics.contains_key(&Metric::BehaviorCheck))
        .then_some(Metric::BehaviorCheck);
        let pass = (self.task_outcome().is_some() && !self.metrics.contains_key(&Metric::Pass))
            .then_some(Metric::Pass);
        self.metrics.keys().cloned().chain(behavior).chain(pass)
    }

    /// Where this trial is, for error messages: `case C_01, skill, attempt 0`.
    pub fn location(&self) -> String {
        format!(
            "case {}, {}, attempt {}",
            self.case_id,
            self.condition.as_str(),
            self.attempt
        )
    }
}

/// A trial whose values cannot be scored. Scoring refuses the whole input rather than guess.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrialError {
    /// A metric outside [0, 1] or not finite.
    #[error("{location}: metric {metric} is {value}, expected a number in [0, 1]")]
    MetricOutOfRange {
        /// Which trial.
        location: String,
        /// Which metric.
        metric: Metric,
        /// The value found.
        value: f64,
    },
    /// More assertions passed than evaluated.
    #[error("{location}: {passed} of {total} assertions passed; expected passed <= total")]
    AssertionCounts {
        /// Which trial.
        location: String,
        /// Passed.
        passed: u32,
        /// Total.
        total: u32,
    },
    /// Two trials for the same case, condition and attempt.
    #[error("{location} appears twice; expected one trial per case, condition and attempt")]
    Duplicate {
        /// Which trial.
        location: String,
    },
    /// An empty case id.
    #[error("a {condition} trial (attempt {attempt}) has an empty case_id")]
    EmptyCaseId {
        /// Condition of the offending trial.
        condition: &'static str,
        /// Attempt of the offending trial.
        attempt: u32,
    },
}

/// Check one trial's values. The store calls this before writing an imported trial; the
/// scorers call it on everything they are given.
pub fn validate_trial(trial: &Trial) -> Result<(), TrialError> {
    if trial.case_id.is_empty() {
        return Err(TrialError::EmptyCaseId {
            condition: trial.condition.as_str(),
            attempt: trial.attempt,
        });
    }
    for (metric, value) in &trial.metrics {
        if !(0.0..=1.0).contains(value) {
            return Err(TrialError::MetricOutOfRange {
                location: trial.location(),
                metric: metric.clone(),
                value: *value,
            });
        }
    }
    if let Some(a) = trial.assertions
        && a.passed > a.total
    {
        return Err(TrialError::AssertionCounts {
            location: trial.location(),
            passed: a.passed,
            total: a.total,
        });
    }
    Ok(())
}

/// A baseline and a with-skill trial of the same case and attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrialPair<'a> {
    /// The shared case id.
    pub case_id: &'a str,
    /// The shared attempt index.
    pub attempt: u32,
    /// The baseline side.
    pub baseline: &'a Trial,
    /// The with-skill side.
    pub skill: &'a Trial,
}

/// Why (case, attempt) pairs did not enter an estimate. Reports show these counts next to the
/// number so a reader can see how much evidence was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Exclusions {
    /// A with-skill trial with no baseline trial of the same case and attempt.
    pub missing_baseline: usize,
    /// A baseline trial with no with-skill trial of the same case and attempt.
    pub missing_skill: usize,
    /// Both sides present, but a side timed out (where the scorer excludes timeouts).
    pub timed_out: usize,
    /// Both sides present, but a side ended in an infrastructure error.
    pub errored: usize,
    /// Both sides present and finished, but a side lacks the value the estimate needs (an
    /// unscored metric, ungraded success, missing tokens or time).
    pub unscored: usize,
}

impl Exclusions {
    /// Total pairs left out.
    pub fn total(&self) -> usize {
        self.missing_baseline + self.missing_skill + self.timed_out + self.errored + self.unscored
    }
}

/// The result of pairing: complete pairs in (case, attempt) order, and the unmatched count.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairing<'a> {
    /// Pairs with both sides present, sorted by case id then attempt.
    pub pairs: Vec<TrialPair<'a>>,
    /// Only `missing_baseline` and `missing_skill` are set here; scorers add the rest.
    pub unmatched: Exclusions,
}

/// Validate `trials` and pair them by (case id, attempt). Errors on an invalid trial or a
/// duplicate (case, condition, attempt); never drops data silently.
pub fn pair_trials(trials: &[Trial]) -> Result<Pairing<'_>, TrialError> {
    type Sides<'a> = (Option<&'a Trial>, Option<&'a Trial>);
    let mut by_key: BTreeMap<(&str, u32), Sides<'_>> = BTreeMap::new();
    for trial in trials {
        validate_trial(trial)?;
        // the plugin arm pairs through `versus_baseline`, never beside the skill arm
        if trial.condition == Condition::Plugin {
            continue;
        }
        let sides = by_key
            .entry((trial.case_id.as_str(), trial.attempt))
            .or_default();
        let slot = match trial.condition {
            Condition::Baseline => &mut sides.0,
            Condition::Skill | Condition::Plugin => &mut sides.1,
        };
        if slot.replace(trial).is_some() {
            return Err(TrialError::Duplicate {
                location: trial.location(),
            });
        }
    }
    let mut pairing = Pairing {
        pairs: Vec::new(),
        unmatched: Exclusions::default(),
    };
    for ((case_id, attempt), sides) in by_key {
        match sides {
            (Some(baseline), Some(skill)) => pairing.pairs.push(TrialPair {
                case_id,
                attempt,
                baseline,
                skill,
            }),
            (Some(_), None) => pairing.unmatched.missing_skill += 1,
            (None, Some(_)) => pairing.unmatched.missing_baseline += 1,
            (None, None) => {}
        }
    }
    Ok(pairing)
}

/// Group per-pair values by case and average within each case, in case-id order. Every
/// scorer reduces repeated attempts this way, so a case counts once however many attempts
/// survived: the case is the independent unit that intervals are built on.
pub fn case_means<'a>(values: impl IntoIterator<Item = (&'a str, f64)>) -> Vec<(&'a str, f64)> {
    let mut sums: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
    for (case, value) in values {
        let entry = sums.entry(case).or_default();
        entry.0 += value;
        entry.1 += 1;
    }
    sums.into_iter()
        .map(|(case, (sum, count))| (case, sum / count as f64))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A completed trial with the given metrics, for tests across the scoring modules.
    pub(crate) fn trial(
        case: &str,
        condition: Condition,
        attempt: u32,
        metrics: &[(Metric, f64)],
    ) -> Trial {
        Trial {
            case_id: case.into(),
            condition,
            attempt,
            status: TrialStatus::Completed,
            passed: None,
            metrics: metrics.iter().cloned().collect(),
            tokens: None,
            wall_ms: None,
            invoked: None,
            assertions: None,
            tool_calls: None,
            turns: None,
            errors: None,
            judge: None,
        }
    }

    #[test]
    fn metric_names_round_trip_through_json() {
        let mut t = trial("c1", Condition::Skill, 0, &[(Metric::GoalAccuracy, 0.5)]);
        t.metrics.insert(Metric::Custom("latency_ok".into()), 1.0);
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains("\"goal_accuracy\":0.5"), "{json}");
        assert!(json.contains("\"latency_ok\":1.0"), "{json}");
        let back: Trial = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn minimal_json_trial_parses_with_defaults() {
        let t: Trial =
            serde_json::from_str(r#"{"case_id":"a","condition":"baseline","status":"timeout"}"#)
                .unwrap();
        assert_eq!(t.attempt, 0);
        assert_eq!(t.status, TrialStatus::Timeout);
        assert!(t.metrics.is_empty());
        let err = serde_json::from_str::<Trial>(
            r#"{"case_id":"a","condition":"with","status":"completed"}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown variant `with`"), "{err}");
    }

    #[test]
    fn behavior_check_derives_from_assertions_unless_given() {
        let mut t = trial("c", Condition::Skill, 0, &[]);
        t.assertions = Some(AssertionCounts {
            passed: 3,
            total: 4,
        });
        assert_eq!(t.metric(&Metric::BehaviorCheck), Some(0.75));
        assert_eq!(
            t.metric_names().collect::<Vec<_>>(),
            vec![Metric::BehaviorCheck]
        );
        t.metrics.insert(Metric::BehaviorCheck, 0.5);
        assert_eq!(t.metric(&Metric::BehaviorCheck), Some(0.5));
        assert_eq!(t.metric_names().count(), 1);
        t.assertions = Some(AssertionCounts {
            passed: 0,
            total: 0,
        });
        t.metrics.clear();
        assert_eq!(t.metric(&Metric::BehaviorCheck), None);
    }

    #[test]
    fn pairing_counts_missing_sides_and_refuses_duplicates() {
        let trials = vec![
            trial("a", Condition::Baseline, 0, &[]),
            trial("a", Condition::Skill, 0, &[]),
            trial("a", Condition::Skill, 1, &[]),
            trial("b", Condition::Baseline, 0, &[]),
        ];
        let pairing = pair_trials(&trials).unwrap();
        assert_eq!(pairing.pairs.len(), 1);
        assert_eq!(pairing.unmatched.missing_baseline, 1);
        assert_eq!(pairing.unmatched.missing_skill, 1);

        let dup = vec![
            trial("a", Condition::Skill, 0, &[]),
            trial("a", Condition::Skill, 0, &[]),
        ];
        let err = pair_trials(&dup).unwrap_err();
        assert_eq!(
            err.to_string(),
            "case a, skill, attempt 0 appears twice; expected one trial per case, condition and attempt"
        );
    }

    #[test]
    fn pairing_refuses_out_of_range_metrics() {
        let bad = vec![trial("a", Condition::Skill, 2, &[(Metric::Accuracy, 1.5)])];
        let err = pair_trials(&bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            "case a, skill, attempt 2: metric accuracy is 1.5, expected a number in [0, 1]"
        );
        let nan = vec![trial(
            "a",
            Condition::Skill,
            0,
            &[(Metric::Accuracy, f64::NAN)],
        )];
        assert!(pair_trials(&nan).is_err());
    }

    #[test]
    fn case_means_average_attempts_within_a_case() {
        let means = case_means([("b", 1.0), ("a", 0.5), ("b", 0.0), ("a", 0.5)]);
        assert_eq!(means, vec![("a", 0.5), ("b", 0.5)]);
    }

    /// Three arms over cases with different effects per arm: each arm's lift is the same
    /// scorer over the baseline and that arm, and a plugin arm leaves the skill lift as it
    /// was without one.
    #[test]
    fn each_arm_pairs_with_the_baseline_by_case_and_attempt() {
        use crate::scoring::{LiftParams, skill_lift};
        let mut two = Vec::new();
        let mut plugin = Vec::new();
        for c in 0..6 {
            let case = format!("c{c}");
            for a in 0..2 {
                let v = |x: f64| [(Metric::Pass, x)];
                two.push(trial(&case, Condition::Baseline, a, &v(0.0)));
                two.push(trial(&case, Condition::Skill, a, &v(f64::from(c % 2 == 0))));
                plugin.push(trial(&case, Condition::Plugin, a, &v(1.0)));
            }
        }
        // a plugin trial missing its baseline is counted, not paired
        plugin.push(trial(
            "lonely",
            Condition::Plugin,
            0,
            &[(Metric::Pass, 1.0)],
        ));
        let three: Vec<Trial> = two.iter().chain(&plugin).cloned().collect();
        let params = LiftParams::default();
        let lift = |t: &[Trial]| skill_lift(t, &params).unwrap();
        assert_eq!(
            lift(&three),
            lift(&two),
            "the skill lift ignores the plugin arm"
        );
        assert_eq!(
            lift(&versus_baseline(&three, Arm::Skill)),
            lift(&two),
            "the skill arm against the baseline is the skill lift"
        );
        let p = lift(&versus_baseline(&three, Arm::Plugin));
        let outcome = p.profile(crate::scoring::ScoringProfile::Outcome).unwrap();
        assert_eq!(outcome.lift, 1.0);
        assert_eq!(outcome.pairs, 12);
        assert_eq!(outcome.excluded.missing_baseline, 1);
        let s = lift(&two);
        let skill = s.profile(crate::scoring::ScoringProfile::Outcome).unwrap();
        assert!((skill.lift - 0.5).abs() < 1e-12, "{}", skill.lift);
        assert!(has_plugin_arm(&three) && !has_plugin_arm(&two));
    }

    /// Arbitrary runs of up to 8 cases x 3 attempts with pass/fail outcomes on each arm, some
    /// trials missing.
    fn arms() -> impl proptest::strategy::Strategy<Value = (Vec<Trial>, Vec<Trial>)> {
        use proptest::prelude::*;
        let cell = (0u8..4, 0u8..4, 0u8..4);
        proptest::collection::vec(cell, 1..24).prop_map(|cells| {
            let (mut two, mut plugin) = (Vec::new(), Vec::new());
            for (k, (b, s, p)) in cells.into_iter().enumerate() {
                let (case, attempt) = (format!("c{}", k / 3), (k % 3) as u32);
                // 0 and 1: a fail or a pass; 2: passed; 3: no trial on that arm
                let push = |to: &mut Vec<Trial>, condition, v: u8| {
                    if v < 3 {
                        let pass = f64::from(u8::from(v > 0));
                        to.push(trial(&case, condition, attempt, &[(Metric::Pass, pass)]));
                    }
                };
                push(&mut two, Condition::Baseline, b);
                push(&mut two, Condition::Skill, s);
                push(&mut plugin, Condition::Plugin, p);
            }
            (two, plugin)
        })
    }

    proptest::proptest! {
        /// A plugin arm never changes the skill lift: scoring a run with it gives what the
        /// two arms alone give, and the skill arm against the baseline is those two arms.
        #[test]
        fn the_plugin_arm_leaves_the_skill_lift_as_it_was((two, plugin) in arms()) {
            use crate::scoring::{LiftParams, skill_lift};
            let three: Vec<Trial> = two.iter().chain(&plugin).cloned().collect();
            let params = LiftParams::default();
            let alone = skill_lift(&two, &params).ok();
            proptest::prop_assert_eq!(&skill_lift(&three, &params).ok(), &alone);
            proptest::prop_assert_eq!(versus_baseline(&two, Arm::Skill), two.clone());
            proptest::prop_assert_eq!(versus_baseline(&three, Arm::Skill), two);
        }
    }
}
