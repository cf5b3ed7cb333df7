//! Skill Lift (ACES, seed 001 §3): the paired difference between with-skill and baseline
//! scores, per metric, and two headline numbers over a set of metrics (a [`ScoringProfile`]),
//! for one cell (skill version x harness x model).
//!
//! Formulas, for case i, metric m, and a profile's metric set M:
//!
//! ```text
//! Δ_{i,m}  = S^with_{i,m} − S^base_{i,m}                 (both sides scored, else excluded)
//! Lift_m   = (1/|I_m|) Σ_{i ∈ I_m} Δ_{i,m}
//! Δ_i      = mean of Δ_{i,m} over the m ∈ M scored on case i      (the per-case value)
//! lift     = (1/n) Σ_i Δ_i                                 (the headline, and its intervals)
//! Lift_M   = (1/|M|) Σ_{m ∈ M} Lift_m                      (ACES's formula, shown beside)
//! ```
//!
//! Profiles: [`ScoringProfile::Outcome`] (the default, what verdicts rest on) takes the outcome
//! metrics (`pass`, `accuracy`, `goal_accuracy`, `behavior_check`, and custom metrics the run
//! declares as outcome); [`ScoringProfile::Aces`] takes ACES's six default metrics. Process
//! metrics (`skill_execution`, `skill_efficiency`) never enter the outcome lift: with the target
//! skill withheld, the baseline's execution is 0 and its efficiency at most 0.5 by
//! construction, so they raise the lift of a skill that is loaded and makes every task fail
//! (docs/scoring.md, "Why the verdict rests on outcome").
//!
//! The headline `lift` is the mean of the per-case values, the same estimand its interval
//! and p-value are built on (intervals cut to [-1, 1], the range a lift can take); the paper's Lift_M (mean of metric lifts) is kept as
//! `metric_mean` and differs only when some case lacks some metric.
//!
//! Exclusion rule (the paper's): only cases with both a with-skill and a baseline score for a
//! metric enter that metric's estimate. Missing trials, infrastructure errors and unscored
//! metrics are counted in [`Exclusions`] and left out, never imputed as 0. Timeouts are
//! excluded too (nothing finished to grade), except from `pass`, where a timeout is a failed
//! task (SkillTester §2.2) so that a skill that makes the agent run out of time shows it.
//!
//! Repeated attempts: the paper aggregates "first over scored task cases, then over repeated
//! trials". skillwatch averages a case's complete pairs first (Δ_{i,m} is the mean over that
//! case's attempts) and then averages cases, so that every case weighs the same and the
//! point estimate is the mean of exactly the per-case values its interval is built on: n is
//! the number of cases, attempts only make each case's value less noisy. When every case has
//! the same number of complete attempts (the usual run) the two orders give the same number.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::ScoringError;
use super::case_test::{CaseTest, case_tests};
use super::stats::{DeltaSummary, InferenceParams, binomial_variance_floor, summarize_deltas};
use super::trial::{
    Exclusions, Metric, MetricRole, Pairing, Trial, TrialPair, TrialStatus, case_means, pair_trials,
};

/// Every constant of the lift computation, with the paper's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiftParams {
    /// Confidence level, bootstrap and permutation settings.
    pub inference: InferenceParams,
    /// ACES lift band: overall lift at or above this is PASS (+0.05; diagnostic only).
    pub pass_band: f64,
    /// ACES lift band: overall lift at or below this is FAIL (−0.10; diagnostic only).
    pub fail_band: f64,
    /// Custom (BYOG) metrics the run declares as outcome: they enter the outcome lift.
    #[serde(default)]
    pub outcome_metrics: Vec<String>,
}

impl Default for LiftParams {
    fn default() -> Self {
        Self {
            inference: InferenceParams::default(),
            pass_band: 0.05,
            fail_band: -0.10,
            outcome_metrics: Vec::new(),
        }
    }
}

/// Which metrics a headline lift is built from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum ScoringProfile {
    /// The outcome metrics (see [`MetricRole::Outcome`]); the default, and what every verdict
    /// rests on unless a reader asks for another profile.
    #[default]
    #[serde(alias = "default")]
    Outcome,
    /// ACES's six default metrics, unweighted (seed 001 §3), as the paper reports it.
    Aces,
}

impl ScoringProfile {
    /// `outcome`, `aces`.
    pub fn as_str(self) -> &'static str {
        match self {
            ScoringProfile::Outcome => "outcome",
            ScoringProfile::Aces => "aces",
        }
    }

    /// The profile spelled `name` (`default` is the outcome profile).
    pub fn parse(name: &str) -> Option<ScoringProfile> {
        match name {
            "outcome" | "default" => Some(ScoringProfile::Outcome),
            "aces" => Some(ScoringProfile::Aces),
            _ => None,
        }
    }

    /// The headline's name in reports.
    pub fn label(self) -> &'static str {
        match self {
            ScoringProfile::Outcome => "Skill Lift (outcome)",
            ScoringProfile::Aces => "ACES overall (six metrics)",
        }
    }

    /// Whether `metric` enters this profile's lift.
    pub fn includes(self, metric: &Metric, outcome_custom: &[String]) -> bool {
        match self {
            ScoringProfile::Outcome => metric.role(outcome_custom) == MetricRole::Outcome,
            ScoringProfile::Aces => metric.is_default(),
        }
    }
}

/// ACES's diagnostic reading of an overall lift (SkillEvaluator constants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LiftBand {
    /// Lift ≥ `pass_band`.
    Pass,
    /// Between the bands.
    Neutral,
    /// Lift ≤ `fail_band`.
    Fail,
}

/// The lift of one metric over the cell's cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricLift {
    /// The metric.
    pub metric: Metric,
    /// Lift_m: the mean of per-case deltas.
    pub lift: f64,
    /// Mean per-case baseline score over the same cases.
    pub baseline_mean: f64,
    /// Mean per-case with-skill score over the same cases.
    pub skill_mean: f64,
    /// Complete (case, attempt) pairs that entered.
    pub pairs: usize,
    /// Cases whose delta is > 0 (the paper reports this fraction).
    pub positive_cases: usize,
    /// Mean, intervals and p-value of the per-case deltas (n = cases).
    pub summary: DeltaSummary,
    /// Pairs left out of this metric, by reason.
    pub excluded: Exclusions,
}

/// A headline lift over one profile's metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileLift {
    /// The profile.
    pub profile: ScoringProfile,
    /// The mean of the per-case values: the estimand, and the center of `summary`'s intervals.
    pub lift: f64,
    /// The mean of the profile's metric lifts (ACES's Lift_{s,a} formula); equals `lift` when
    /// every case has every metric.
    pub metric_mean: f64,
    /// The profile's metrics that had at least one pair.
    pub metrics: Vec<Metric>,
    /// Complete (case, attempt) pairs that gave a value; each case's pairs are averaged, so n
    /// (`summary.n`) counts cases.
    pub pairs: usize,
    /// Cases with a per-case value > 0.
    pub positive_cases: usize,
    /// Mean, intervals and p-value of the per-case values (n = cases).
    pub summary: DeltaSummary,
    /// ACES band of `lift` (diagnostic, the paper's constants).
    pub band: LiftBand,
    /// Pairs that gave no per-case value: unmatched, errored, timed out, or with none of the
    /// profile's metrics scored on both sides.
    pub excluded: Exclusions,
}

/// One case's deltas: what a per-case table and a model comparison read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseLift {
    /// The case id.
    pub case_id: String,
    /// Per-metric delta (mean over the case's complete pairs for that metric).
    pub deltas: BTreeMap<Metric, f64>,
    /// Mean of this case's outcome-metric deltas; `None` when no outcome metric paired.
    pub outcome: Option<f64>,
    /// Mean of this case's ACES default-metric deltas; `None` when none paired.
    pub overall: Option<f64>,
    /// The exact test of the case's own trials on the outcome metrics (Holm-adjusted over
    /// the run's cases): whether a report may call this case worse or better.
    #[serde(default)]
    pub outcome_test: Option<CaseTest>,
    /// The same on the ACES metrics.
    #[serde(default)]
    pub aces_test: Option<CaseTest>,
}

impl CaseLift {
    /// The case's value under `profile`.
    pub fn value(&self, profile: ScoringProfile) -> Option<f64> {
        match profile {
            ScoringProfile::Outcome => self.outcome,
            ScoringProfile::Aces => self.overall,
        }
    }

    /// The case's exact test under `profile`.
    pub fn test(&self, profile: ScoringProfile) -> Option<&CaseTest> {
        match profile {
            ScoringProfile::Outcome => self.outcome_test.as_ref(),
            ScoringProfile::Aces => self.aces_test.as_ref(),
        }
    }
}

/// Skill Lift of one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiftReport {
    /// One entry per metric seen in the trials: `pass`, then the defaults in the paper's
    /// order, then custom metrics by name. A metric with no complete pair is listed in
    /// `unpaired_metrics`.
    pub metrics: Vec<MetricLift>,
    /// Metrics that some trial scored but no complete pair had.
    pub unpaired_metrics: Vec<Metric>,
    /// The outcome lift (the default profile); `None` when no outcome metric had a pair.
    pub outcome: Option<ProfileLift>,
    /// ACES's six-metric overall lift; `None` when no default metric had a pair.
    pub aces: Option<ProfileLift>,
    /// Per-case deltas in case-id order.
    pub cases: Vec<CaseLift>,
    /// The settings used (stored with the result so it can be recomputed).
    pub params: LiftParams,
}

impl LiftReport {
    /// The entry for `metric`, if it had at least one pair.
    pub fn metric(&self, metric: &Metric) -> Option<&MetricLift> {
        self.metrics.iter().find(|m| &m.metric == metric)
    }

    /// The headline of `profile`.
    pub fn profile(&self, profile: ScoringProfile) -> Option<&ProfileLift> {
        match profile {
            ScoringProfile::Outcome => self.outcome.as_ref(),
            ScoringProfile::Aces => self.aces.as_ref(),
        }
    }
}

/// Compute Skill Lift for one cell's trials (one skill version, harness and model). Errors on
/// invalid trials (see [`super::trial::validate_trial`]) or invalid settings.
pub fn skill_lift(trials: &[Trial], params: &LiftParams) -> Result<LiftReport, ScoringError> {
    let pairing = pair_trials(trials)?;
    let mut metrics = Vec::new();
    let mut unpaired_metrics = Vec::new();
    let mut per_case: BTreeMap<&str, BTreeMap<Metric, f64>> = BTreeMap::new();
    for metric in metrics_in(trials) {
        let mut excluded = pairing.unmatched;
        let mut values = Vec::new();
        for pair in &pairing.pairs {
            match paired_scores(pair, &metric) {
                Ok(v) => values.push(v),
                Err(reason) => reason.count(&mut excluded),
            }
        }
        if values.is_empty() {
            unpaired_metrics.push(metric);
            continue;
        }
        let entry = metric_lift(&metric, &values, excluded, params)?;
        for (case, delta) in case_means(values.iter().map(|(c, b, s)| (*c, s - b))) {
            per_case
                .entry(case)
                .or_default()
                .insert(metric.clone(), delta);
        }
        metrics.push(entry);
    }
    let custom = &params.outcome_metrics;
    let mut cases: Vec<CaseLift> = per_case
        .into_iter()
        .map(|(case_id, deltas)| CaseLift {
            case_id: case_id.to_owned(),
            outcome: profile_mean(&deltas, ScoringProfile::Outcome, custom),
            overall: profile_mean(&deltas, ScoringProfile::Aces, custom),
            deltas,
            outcome_test: None,
            aces_test: None,
        })
        .collect();
    for profile in [ScoringProfile::Outcome, ScoringProfile::Aces] {
        test_cases(&mut cases, trials, profile, params);
    }
    let headline = |profile| profile_lift(profile, &metrics, &cases, &pairing, params);
    Ok(LiftReport {
        outcome: headline(ScoringProfile::Outcome)?,
        aces: headline(ScoringProfile::Aces)?,
        metrics,
        unpaired_metrics,
        cases,
        params: params.clone(),
    })
}

/// Every complete pair's value under `profile`: `(case, attempt, value)`, the value being
/// the mean of the profile's metric deltas scored on that pair.
pub fn pair_values(
    trials: &[Trial],
    profile: ScoringProfile,
    outcome_custom: &[String],
) -> Result<Vec<(String, u32, f64)>, ScoringError> {
    Ok(pair_sides(trials, profile, outcome_custom)?
        .into_iter()
        .map(|p| (p.case_id, p.attempt, p.skill - p.baseline))
        .collect())
}

/// One complete pair's two sides under a profile: the mean of the profile's metrics scored on
/// both sides, baseline and with the skill.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSides {
    /// The case.
    pub case_id: String,
    /// The attempt label (arbitrary: nothing that reads sides should depend on it).
    pub attempt: u32,
    /// The baseline's mean score over the pair's metrics.
    pub baseline: f64,
    /// The with-skill mean score over the same metrics.
    pub skill: f64,
}

/// Every complete pair's sides under `profile`. What [`super::plan`] reads to tell attempt
/// noise from case-to-case spread, and the variance floor's source.
pub fn pair_sides(
    trials: &[Trial],
    profile: ScoringProfile,
    outcome_custom: &[String],
) -> Result<Vec<PairSides>, ScoringError> {
    let pairing = pair_trials(trials)?;
    let metrics: Vec<Metric> = metrics_in(trials)
        .into_iter()
        .filter(|m| profile.includes(m, outcome_custom))
        .collect();
    Ok(sides_of(&pairing, &metrics)
        .into_iter()
        .map(|(pair, baseline, skill)| PairSides {
            case_id: pair.case_id.to_owned(),
            attempt: pair.attempt,
            baseline,
            skill,
        })
        .collect())
}

/// Each pair with a value under `metrics`: the pair, its baseline mean and its with-skill
/// mean over the metrics scored on both sides.
fn sides_of<'p, 'a>(
    pairing: &'p Pairing<'a>,
    metrics: &[Metric],
) -> Vec<(&'p TrialPair<'a>, f64, f64)> {
    pairing
        .pairs
        .iter()
        .filter_map(|pair| {
            let scored: Vec<(f64, f64)> = metrics
                .iter()
                .filter_map(|m| paired_scores(pair, m).ok())
                .map(|(_, b, s)| (b, s))
                .collect();
            let n = scored.len() as f64;
            (n > 0.0).then(|| {
                let (b, s) = scored
                    .iter()
                    .fold((0.0, 0.0), |(x, y), (b, s)| (x + b, y + s));
                (pair, b / n, s / n)
            })
        })
        .collect()
}

/// The binomial variance floor of per-case values built from `(case, baseline, skill)` pair
/// sides ([`binomial_variance_floor`]).
pub(crate) fn floor_of<'a>(sides: impl IntoIterator<Item = (&'a str, f64, f64)>) -> Option<f64> {
    let mut attempts: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut b, mut s, mut n) = (0.0, 0.0, 0.0);
    for (case, base, skill) in sides {
        *attempts.entry(case).or_default() += 1;
        b += base;
        s += skill;
        n += 1.0;
    }
    let r: Vec<usize> = attempts.into_values().collect();
    binomial_variance_floor(b, s, (n, n), &r)
}

/// Fill each case's exact test under `profile`, on the trial values of the profile metrics
/// its lift used, Holm-adjusted over the cases.
fn test_cases(
    cases: &mut [CaseLift],
    trials: &[Trial],
    profile: ScoringProfile,
    params: &LiftParams,
) {
    let custom = &params.outcome_metrics;
    let samples: Vec<(Vec<f64>, Vec<f64>)> = cases
        .iter()
        .map(|case| {
            let metrics: Vec<&Metric> = case
                .deltas
                .keys()
                .filter(|m| profile.includes(m, custom))
                .collect();
            let values = |condition| -> Vec<f64> {
                trials
                    .iter()
                    .filter(|t| t.case_id == case.case_id && t.condition == condition)
                    .filter_map(|t| trial_value(t, &metrics))
                    .collect()
            };
            (
                values(super::trial::Condition::Baseline),
                values(super::trial::Condition::Skill),
            )
        })
        .collect();
    let inference = &params.inference;
    let tests = case_tests(&samples, inference.level, inference.permutation.seed);
    for (case, test) in cases.iter_mut().zip(tests) {
        match profile {
            ScoringProfile::Outcome => case.outcome_test = test,
            ScoringProfile::Aces => case.aces_test = test,
        }
    }
}

/// One trial's value on `metrics`: the mean of those it scored; a timeout scores only `pass`
/// (a failed task; nothing finished to grade); an error has none.
fn trial_value(trial: &Trial, metrics: &[&Metric]) -> Option<f64> {
    let scored: Vec<f64> = metrics
        .iter()
        .filter(|m| match trial.status {
            TrialStatus::Completed => true,
            TrialStatus::Timeout => ***m == Metric::Pass,
            TrialStatus::Error => false,
        })
        .filter_map(|m| trial.metric(m))
        .collect();
    super::stats::mean(&scored)
}

/// Why a complete pair cannot give a metric's delta.
enum Excluded {
    Errored,
    TimedOut,
    Unscored,
}

impl Excluded {
    fn count(self, into: &mut Exclusions) {
        match self {
            Excluded::Errored => into.errored += 1,
            Excluded::TimedOut => into.timed_out += 1,
            Excluded::Unscored => into.unscored += 1,
        }
    }
}

/// `(case, baseline score, skill score)` of a pair for a metric, or why not. An error on
/// either side outranks a timeout, which outranks a missing score; `pass` reads a timeout as
/// a failed task instead of excluding it.
fn paired_scores<'a>(
    pair: &TrialPair<'a>,
    metric: &Metric,
) -> Result<(&'a str, f64, f64), Excluded> {
    let statuses = [pair.baseline.status, pair.skill.status];
    if statuses.contains(&TrialStatus::Error) {
        return Err(Excluded::Errored);
    }
    if statuses.contains(&TrialStatus::Timeout) && *metric != Metric::Pass {
        return Err(Excluded::TimedOut);
    }
    match (pair.baseline.metric(metric), pair.skill.metric(metric)) {
        (Some(b), Some(s)) => Ok((pair.case_id, b, s)),
        _ => Err(Excluded::Unscored),
    }
}

/// Every metric any baseline or skill trial scored: `pass`, the defaults in the paper's order,
/// then custom ones by name. A plugin arm's trials are not this lift's
/// (`trial::versus_baseline` gives them their own), so their metrics are not listed as
/// unpaired here.
fn metrics_in(trials: &[Trial]) -> Vec<Metric> {
    let seen: BTreeSet<Metric> = trials
        .iter()
        .filter(|t| t.condition != super::trial::Condition::Plugin)
        .flat_map(Trial::metric_names)
        .collect();
    let known = std::iter::once(Metric::Pass)
        .chain(Metric::DEFAULTS)
        .filter(|m| seen.contains(m));
    let custom = seen
        .iter()
        .filter(|m| matches!(m, Metric::Custom(_)))
        .cloned();
    known.chain(custom).collect()
}

fn metric_lift(
    metric: &Metric,
    values: &[(&str, f64, f64)],
    excluded: Exclusions,
    params: &LiftParams,
) -> Result<MetricLift, ScoringError> {
    let baselines = case_means(values.iter().map(|(c, b, _)| (*c, *b)));
    let skills = case_means(values.iter().map(|(c, _, s)| (*c, *s)));
    let deltas: Vec<f64> = case_means(values.iter().map(|(c, b, s)| (*c, s - b)))
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    let floor = floor_of(values.iter().copied());
    let summary = summarize_deltas(&deltas, &params.inference)?
        .clipped(-1.0, 1.0)
        .with_floor(floor);
    Ok(MetricLift {
        metric: metric.clone(),
        lift: summary.mean.unwrap_or(0.0),
        baseline_mean: mean_of(&baselines),
        skill_mean: mean_of(&skills),
        pairs: values.len(),
        positive_cases: deltas.iter().filter(|d| **d > 0.0).count(),
        summary,
        excluded,
    })
}

fn profile_lift(
    profile: ScoringProfile,
    metrics: &[MetricLift],
    cases: &[CaseLift],
    pairing: &Pairing<'_>,
    params: &LiftParams,
) -> Result<Option<ProfileLift>, ScoringError> {
    let custom = &params.outcome_metrics;
    let included: Vec<&MetricLift> = metrics
        .iter()
        .filter(|m| profile.includes(&m.metric, custom))
        .collect();
    let values: Vec<f64> = cases.iter().filter_map(|c| c.value(profile)).collect();
    if included.is_empty() || values.is_empty() {
        return Ok(None);
    }
    let names: Vec<Metric> = included.iter().map(|m| m.metric.clone()).collect();
    let floor = floor_of(
        sides_of(pairing, &names)
            .into_iter()
            .map(|(pair, b, s)| (pair.case_id, b, s)),
    );
    let summary = summarize_deltas(&values, &params.inference)?
        .clipped(-1.0, 1.0)
        .with_floor(floor);
    let lift = summary.mean.unwrap_or(0.0);
    let band = if lift >= params.pass_band {
        LiftBand::Pass
    } else if lift <= params.fail_band {
        LiftBand::Fail
    } else {
        LiftBand::Neutral
    };
    let (pairs, excluded) = profile_pairs(pairing, &names);
    Ok(Some(ProfileLift {
        profile,
        lift,
        metric_mean: included.iter().map(|m| m.lift).sum::<f64>() / included.len() as f64,
        metrics: names,
        pairs,
        positive_cases: values.iter().filter(|d| **d > 0.0).count(),
        summary,
        band,
        excluded,
    }))
}

/// Pairs that gave a value for any of `metrics`, and those that gave none, by reason.
fn profile_pairs(pairing: &Pairing<'_>, metrics: &[Metric]) -> (usize, Exclusions) {
    let mut excluded = pairing.unmatched;
    let mut entered = 0;
    for pair in &pairing.pairs {
        let results: Vec<_> = metrics.iter().map(|m| paired_scores(pair, m)).collect();
        if results.iter().any(Result::is_ok) {
            entered += 1;
            continue;
        }
        // No metric gave a value: an error outranks a timeout, which outranks a missing score.
        let rank = |r: &Excluded| match r {
            Excluded::Errored => 0,
            Excluded::TimedOut => 1,
            Excluded::Unscored => 2,
        };
        results
            .into_iter()
            .filter_map(Result::err)
            .min_by_key(rank)
            .unwrap_or(Excluded::Unscored)
            .count(&mut excluded);
    }
    (entered, excluded)
}

fn profile_mean(
    deltas: &BTreeMap<Metric, f64>,
    profile: ScoringProfile,
    custom: &[String],
) -> Option<f64> {
    let values: Vec<f64> = deltas
        .iter()
        .filter(|(m, _)| profile.includes(m, custom))
        .map(|(_, d)| *d)
        .collect();
    super::stats::mean(&values)
}

fn mean_of(pairs: &[(&str, f64)]) -> f64 {
    pairs.iter().map(|(_, v)| v).sum::<f64>() / pairs.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::trial::Condition::{Baseline, Skill};
    use crate::scoring::trial::tests::trial;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn lift_is_mean_of_paired_deltas_per_metric_and_overall() {
        let g = Metric::GoalAccuracy;
        let b = Metric::BehaviorCheck;
        let trials = vec![
            trial("c1", Baseline, 0, &[(g.clone(), 0.2), (b.clone(), 0.5)]),
            trial("c1", Skill, 0, &[(g.clone(), 0.8), (b.clone(), 1.0)]),
            trial("c2", Baseline, 0, &[(g.clone(), 0.5), (b.clone(), 0.5)]),
            trial("c2", Skill, 0, &[(g.clone(), 0.4), (b.clone(), 0.75)]),
        ];
        let report = skill_lift(&trials, &LiftParams::default()).unwrap();
        let goal = report.metric(&g).unwrap();
        assert!(close(goal.lift, (0.6 + -0.1) / 2.0));
        assert!(close(goal.baseline_mean, 0.35) && close(goal.skill_mean, 0.6));
        assert_eq!(goal.positive_cases, 1);
        let behavior = report.metric(&b).unwrap();
        assert!(close(behavior.lift, (0.5 + 0.25) / 2.0));
        let overall = report.aces.as_ref().unwrap();
        assert!(close(overall.metric_mean, (0.25 + 0.375) / 2.0));
        // Every case has both metrics: the per-case view has the same center.
        assert!(close(overall.lift, overall.metric_mean));
        assert!(close(overall.summary.mean.unwrap(), overall.lift));
        assert_eq!(overall.summary.n, 2);
        assert_eq!(overall.band, LiftBand::Pass);
        // Both metrics are outcome metrics: the outcome lift is the same here.
        let outcome = report.outcome.as_ref().unwrap();
        assert!(close(outcome.lift, overall.lift));
        assert_eq!(outcome.pairs, 2);
    }

    /// The issue's harmful skill: always loaded, pass rate 80% -> 30%. ACES's six-metric
    /// overall rises (execution and efficiency cannot be earned by the baseline); the outcome
    /// lift falls.
    #[test]
    fn a_loaded_but_harmful_skill_has_a_negative_outcome_lift() {
        use Metric::*;
        let mut trials = Vec::new();
        for i in 0..10 {
            let case = format!("c{i}");
            let (b_pass, s_pass) = (i < 8, i < 3);
            let mut b = trial(
                &case,
                Baseline,
                0,
                &[
                    (Security, 1.0),
                    (SkillExecution, 0.0),
                    (SkillEfficiency, 0.5),
                    (BehaviorCheck, if b_pass { 1.0 } else { 0.0 }),
                ],
            );
            b.passed = Some(b_pass);
            let mut s = trial(
                &case,
                Skill,
                0,
                &[
                    (Security, 1.0),
                    (SkillExecution, 1.0),
                    (SkillEfficiency, 1.0),
                    (BehaviorCheck, if s_pass { 1.0 } else { 0.0 }),
                ],
            );
            s.passed = Some(s_pass);
            trials.extend([b, s]);
        }
        let report = skill_lift(&trials, &LiftParams::default()).unwrap();
        let outcome = report.outcome.as_ref().unwrap();
        assert!(close(outcome.lift, -0.5), "{}", outcome.lift);
        assert_eq!(outcome.metrics, vec![Pass, BehaviorCheck]);
        let aces = report.aces.as_ref().unwrap();
        assert!(aces.lift > 0.0, "{}", aces.lift);
        assert_eq!(report.metric(&Pass).unwrap().lift, -0.5);
    }

    #[test]
    fn timeouts_fail_the_pass_metric_and_leave_graded_metrics() {
        let g = Metric::GoalAccuracy;
        let mut b = trial("a", Baseline, 0, &[(g.clone(), 0.5)]);
        b.passed = Some(true);
        let mut s = trial("a", Skill, 0, &[(g.clone(), 0.9)]);
        s.status = TrialStatus::Timeout;
        let report = skill_lift(&[b, s], &LiftParams::default()).unwrap();
        assert_eq!(report.metric(&Metric::Pass).unwrap().lift, -1.0);
        assert!(report.metric(&g).is_none());
        assert_eq!(report.unpaired_metrics, vec![g]);
        let outcome = report.outcome.unwrap();
        assert_eq!(outcome.lift, -1.0);
        assert_eq!(outcome.excluded.total(), 0);
    }

    #[test]
    fn headline_and_interval_are_one_estimand_when_metrics_are_missing() {
        let (a, g) = (Metric::Accuracy, Metric::GoalAccuracy);
        let trials = vec![
            trial("c1", Baseline, 0, &[(a.clone(), 0.0), (g.clone(), 0.0)]),
            trial("c1", Skill, 0, &[(a.clone(), 1.0), (g.clone(), 0.0)]),
            trial("c2", Baseline, 0, &[(a.clone(), 0.0)]),
            trial("c2", Skill, 0, &[(a.clone(), 1.0)]),
        ];
        let report = skill_lift(&trials, &LiftParams::default()).unwrap();
        let o = report.outcome.unwrap();
        // Per case: c1 mean(1, 0) = 0.5, c2 1.0 -> 0.75; metric lifts 1.0 and 0.0 -> 0.5.
        assert!(close(o.lift, 0.75) && close(o.metric_mean, 0.5));
        assert!(close(o.summary.mean.unwrap(), o.lift));
        assert!(close(o.summary.t_interval.unwrap().estimate, o.lift));
    }

    #[test]
    fn declared_custom_outcome_metrics_enter_the_outcome_lift_only() {
        let style = Metric::Custom("house_style".into());
        let trials = vec![
            trial(
                "a",
                Baseline,
                0,
                &[(style.clone(), 0.0), (Metric::Security, 1.0)],
            ),
            trial(
                "a",
                Skill,
                0,
                &[(style.clone(), 1.0), (Metric::Security, 1.0)],
            ),
        ];
        let plain = skill_lift(&trials, &LiftParams::default()).unwrap();
        assert!(plain.outcome.is_none());
        let declared = LiftParams {
            outcome_metrics: vec!["house_style".into()],
            ..LiftParams::default()
        };
        let report = skill_lift(&trials, &declared).unwrap();
        assert_eq!(report.outcome.as_ref().unwrap().lift, 1.0);
        assert_eq!(
            report.aces.as_ref().unwrap().metrics,
            vec![Metric::Security]
        );
    }

    #[test]
    fn missing_sides_timeouts_errors_and_unscored_are_excluded_and_counted() {
        let g = Metric::GoalAccuracy;
        let mut timed_out = trial("c3", Skill, 0, &[(g.clone(), 1.0)]);
        timed_out.status = TrialStatus::Timeout;
        let mut errored = trial("c4", Baseline, 0, &[]);
        errored.status = TrialStatus::Error;
        let trials = vec![
            trial("c1", Baseline, 0, &[(g.clone(), 0.0)]),
            trial("c1", Skill, 0, &[(g.clone(), 1.0)]),
            trial("c2", Skill, 0, &[(g.clone(), 1.0)]), // no baseline
            trial("c3", Baseline, 0, &[(g.clone(), 0.0)]),
            timed_out,
            errored,
            trial("c4", Skill, 0, &[(g.clone(), 1.0)]),
            trial("c5", Baseline, 0, &[]), // unscored
            trial("c5", Skill, 0, &[(g.clone(), 1.0)]),
            trial("c6", Baseline, 0, &[(g.clone(), 1.0)]), // no skill side
        ];
        let report = skill_lift(&trials, &LiftParams::default()).unwrap();
        let goal = report.metric(&g).unwrap();
        // Only c1 enters: lift 1.0 from one case, not dragged down by imputed zeros.
        assert_eq!(goal.lift, 1.0);
        assert_eq!(goal.summary.n, 1);
        assert!(
            goal.summary.t_interval.is_none(),
            "one case gives no interval"
        );
        let e = goal.excluded;
        assert_eq!(
            (
                e.missing_baseline,
                e.missing_skill,
                e.timed_out,
                e.errored,
                e.unscored
            ),
            (1, 1, 1, 1, 1)
        );
        assert_eq!(e.total(), 5);
        // The overall counts the same pairs (goal accuracy is the only default metric).
        assert_eq!(report.aces.unwrap().excluded, e);
        assert_eq!(report.outcome.unwrap().excluded, e);
    }

    #[test]
    fn attempts_average_within_case_before_across_cases() {
        let g = Metric::Accuracy;
        let trials = vec![
            trial("a", Baseline, 0, &[(g.clone(), 0.0)]),
            trial("a", Skill, 0, &[(g.clone(), 1.0)]),
            trial("a", Baseline, 1, &[(g.clone(), 0.0)]),
            trial("a", Skill, 1, &[(g.clone(), 0.0)]),
            trial("b", Baseline, 0, &[(g.clone(), 0.5)]),
            trial("b", Skill, 0, &[(g.clone(), 0.5)]),
            trial("b", Baseline, 1, &[(g.clone(), 0.5)]),
            trial("b", Skill, 1, &[(g.clone(), 0.5)]),
        ];
        let report = skill_lift(&trials, &LiftParams::default()).unwrap();
        let acc = report.metric(&g).unwrap();
        // Case a: mean(1, 0) = 0.5; case b: 0. Balanced, so equal to the paper's
        // attempt-major order: mean(mean(1, 0), mean(0, 0)) = 0.25.
        assert!(close(acc.lift, 0.25));
        assert_eq!(acc.pairs, 4);
        assert_eq!(acc.summary.n, 2);
        assert_eq!(report.cases[0].deltas[&g], 0.5);
    }

    #[test]
    fn custom_metrics_are_reported_but_not_in_overall() {
        let custom = Metric::Custom("house_style".into());
        let trials = vec![
            trial(
                "a",
                Baseline,
                0,
                &[(Metric::Security, 1.0), (custom.clone(), 0.0)],
            ),
            trial(
                "a",
                Skill,
                0,
                &[(Metric::Security, 1.0), (custom.clone(), 1.0)],
            ),
        ];
        let report = skill_lift(&trials, &LiftParams::default()).unwrap();
        assert_eq!(report.metric(&custom).unwrap().lift, 1.0);
        let overall = report.aces.unwrap();
        assert_eq!(overall.lift, 0.0);
        assert_eq!(overall.metrics, vec![Metric::Security]);
        assert!(
            report.outcome.is_none(),
            "an undeclared custom metric is not outcome"
        );
    }

    #[test]
    fn metric_scored_on_one_side_only_is_listed_as_unpaired() {
        let trials = vec![
            trial("a", Baseline, 0, &[(Metric::Security, 1.0)]),
            trial(
                "a",
                Skill,
                0,
                &[(Metric::Security, 1.0), (Metric::SkillExecution, 1.0)],
            ),
        ];
        let report = skill_lift(&trials, &LiftParams::default()).unwrap();
        assert_eq!(report.unpaired_metrics, vec![Metric::SkillExecution]);
        assert!(report.metric(&Metric::SkillExecution).is_none());
    }

    #[test]
    fn no_trials_gives_empty_report_not_a_panic() {
        let report = skill_lift(&[], &LiftParams::default()).unwrap();
        assert!(report.metrics.is_empty() && report.aces.is_none() && report.outcome.is_none());
    }
}

#[cfg(test)]
mod serde_shape {
    use super::*;
    use crate::scoring::trial::Condition::{Baseline, Skill};
    use crate::scoring::trial::tests::trial;

    #[test]
    fn lift_report_round_trips_through_json() {
        let trials: Vec<Trial> = (0..4)
            .flat_map(|i| {
                let case = format!("c{i}");
                let b = 0.1 * i as f64;
                [
                    trial(
                        &case,
                        Baseline,
                        0,
                        &[(Metric::Accuracy, b), (Metric::Custom("x".into()), 0.5)],
                    ),
                    trial(
                        &case,
                        Skill,
                        0,
                        &[
                            (Metric::Accuracy, b + 0.3),
                            (Metric::Custom("x".into()), 0.4),
                        ],
                    ),
                ]
            })
            .collect();
        let report = skill_lift(&trials, &LiftParams::default()).unwrap();
        let json = serde_json::to_string(&report).unwrap();
        assert!(json.contains(r#""method":{"kind":"student_t"}"#), "{json}");
        let back: LiftReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, report);
    }
}
