//! Does the skill still help? Compare two lift reports of the same skill and suite: two
//! models (the model-update question, ACES §5 "rerun paired evaluations after model
//! updates"), or two versions of the skill on one model.
//!
//! The unit is the case: for every case present in both reports, the difference of its
//! per-case lift `d_i = Δ_i(candidate) − Δ_i(reference)` under the chosen profile (the outcome
//! lift by default). Each case is its own control twice over (baseline vs skill within a
//! report, then reference vs candidate across reports), so a stronger model that raises the
//! baseline does not read as a regression unless the skill's added value actually fell.
//!
//! The verdict on the d_i is [`super::verdict::decide`], the rule every verdict uses: a
//! regression needs enough shared cases for the exact sign-flip test to reach the level, that
//! test and the interval to agree, and a drop of at least `min_effect`.
//!
//! Like the cases, the metrics must be shared: a judged run's outcome lift averages accuracy
//! and goal accuracy in, an unjudged run's cannot, and the difference of two means over
//! different metrics says nothing about the skill. When the two reports' profile metrics
//! differ, both per-case values are recomputed over the metrics both have, and the left-out
//! metrics are listed ([`Comparison::left_out_metrics`]).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::ScoringError;
use super::lift::{LiftReport, ScoringProfile};
use super::stats::{DeltaSummary, InferenceParams, Interval, summarize_deltas};
use super::trial::Metric;
use super::verdict::{Decision, Verdict, VerdictInterval, VerdictParams, decide};

/// Which per-case lift to compare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CompareTarget {
    /// The per-case outcome lift (the default profile).
    #[default]
    Outcome,
    /// The per-case ACES six-metric overall (`--scoring-profile aces`).
    #[serde(alias = "overall")]
    Aces,
    /// One metric's per-case delta.
    Metric(Metric),
}

impl CompareTarget {
    /// The target of a scoring profile.
    pub fn of_profile(profile: ScoringProfile) -> CompareTarget {
        match profile {
            ScoringProfile::Outcome => CompareTarget::Outcome,
            ScoringProfile::Aces => CompareTarget::Aces,
        }
    }

    /// `outcome lift`, `ACES overall lift`, `goal_accuracy lift`.
    pub fn label(&self) -> String {
        match self {
            CompareTarget::Outcome => "outcome lift".into(),
            CompareTarget::Aces => "ACES overall lift".into(),
            CompareTarget::Metric(m) => format!("{m} lift"),
        }
    }
}

/// Every constant of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareParams {
    /// Confidence level and resampling settings.
    pub inference: InferenceParams,
    /// Smallest drop (or gain) in mean per-case lift that counts, on the [0, 1] metric scale.
    /// 0.05 is ACES's lift PASS band and the effect floor regression trackers use.
    pub min_effect: f64,
    /// The interval the verdict reads.
    pub interval: VerdictInterval,
    /// The per-case value compared.
    pub target: CompareTarget,
}

impl Default for CompareParams {
    fn default() -> Self {
        Self {
            inference: InferenceParams::default(),
            min_effect: 0.05,
            interval: VerdictInterval::StudentT,
            target: CompareTarget::Outcome,
        }
    }
}

impl CompareParams {
    /// The verdict rule's settings.
    pub fn verdict(&self) -> VerdictParams {
        VerdictParams {
            level: self.inference.level,
            min_effect: self.min_effect,
            interval: self.interval,
        }
    }
}

/// One shared case's lifts and their difference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseDifference {
    /// Case id.
    pub case_id: String,
    /// Per-case lift under the reference.
    pub reference: f64,
    /// Per-case lift under the candidate.
    pub candidate: f64,
    /// candidate − reference.
    pub difference: f64,
}

/// The result of comparing a candidate (new model, new skill version) with a reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// What was compared.
    pub target: CompareTarget,
    /// Shared cases in case-id order.
    pub cases: Vec<CaseDifference>,
    /// Cases with a lift only in the reference (excluded, listed).
    pub only_in_reference: Vec<String>,
    /// Cases with a lift only in the candidate (excluded, listed).
    pub only_in_candidate: Vec<String>,
    /// The metrics each per-case value is the mean of (the target's metrics both reports
    /// have; the one metric of a metric target).
    #[serde(default)]
    pub metrics: Vec<Metric>,
    /// Metrics of the target that only one report has (e.g. a judged run's accuracy against
    /// an unjudged run): left out of both sides, listed.
    #[serde(default)]
    pub left_out_metrics: Vec<Metric>,
    /// Mean reference lift over the shared cases.
    pub reference_lift: Option<f64>,
    /// Mean candidate lift over the shared cases.
    pub candidate_lift: Option<f64>,
    /// Mean difference, both intervals and the permutation p-value (n = shared cases).
    pub summary: DeltaSummary,
    /// The interval the verdict used.
    pub interval: Option<Interval>,
    /// The verdict.
    pub verdict: Verdict,
    /// The verdict with its reasons (n, the cases needed, p).
    pub decision: Decision,
    /// One sentence saying why, with the numbers.
    pub reason: String,
    /// The settings used.
    pub params: CompareParams,
}

/// Compare per-case lifts of `candidate` against `reference` (same skill and suite).
pub fn compare_lifts(
    reference: &LiftReport,
    candidate: &LiftReport,
    params: &CompareParams,
) -> Result<Comparison, ScoringError> {
    if !(params.min_effect >= 0.0 && params.min_effect.is_finite()) {
        return Err(ScoringError::InvalidParams(format!(
            "min_effect is {}, expected a finite number >= 0 (e.g. 0.05)",
            params.min_effect
        )));
    }
    let (ref_metrics, cand_metrics) = (
        target_metrics(reference, &params.target),
        target_metrics(candidate, &params.target),
    );
    let metrics: BTreeSet<Metric> = ref_metrics.intersection(&cand_metrics).cloned().collect();
    let left_out_metrics: Vec<Metric> = ref_metrics
        .symmetric_difference(&cand_metrics)
        .cloned()
        .collect();
    let shared = (!left_out_metrics.is_empty()).then_some(&metrics);
    let ref_values = per_case(reference, &params.target, shared);
    let cand_values = per_case(candidate, &params.target, shared);
    let mut cases = Vec::new();
    let mut only_in_reference = Vec::new();
    for (case_id, r) in &ref_values {
        match cand_values.iter().find(|(c, _)| c == case_id) {
            Some((_, c)) => cases.push(CaseDifference {
                case_id: case_id.clone(),
                reference: *r,
                candidate: *c,
                difference: c - r,
            }),
            None => only_in_reference.push(case_id.clone()),
        }
    }
    let only_in_candidate = cand_values
        .iter()
        .filter(|(c, _)| !ref_values.iter().any(|(r, _)| r == c))
        .map(|(c, _)| c.clone())
        .collect();
    let differences: Vec<f64> = cases.iter().map(|c| c.difference).collect();
    // A lift lives on [-1, 1], so a change of lift on [-2, 2].
    // Two runs' noise: the difference's variance floor is the sum of both runs' floors.
    let floor = match (
        target_floor(reference, &params.target),
        target_floor(candidate, &params.target),
    ) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    let summary = summarize_deltas(&differences, &params.inference)?
        .clipped(-2.0, 2.0)
        .with_floor(floor);
    let decision = decide(&summary, &params.verdict(), "lift change");
    let mean_of = |f: fn(&CaseDifference) -> f64| {
        super::stats::mean(&cases.iter().map(f).collect::<Vec<_>>())
    };
    Ok(Comparison {
        target: params.target.clone(),
        reference_lift: mean_of(|c| c.reference),
        candidate_lift: mean_of(|c| c.candidate),
        cases,
        only_in_reference,
        only_in_candidate,
        metrics: metrics.into_iter().collect(),
        left_out_metrics,
        summary,
        interval: decision.interval,
        verdict: decision.verdict,
        reason: decision.reason.clone(),
        decision,
        params: params.clone(),
    })
}

/// The variance floor of a report's per-case values for `target`.
fn target_floor(report: &LiftReport, target: &CompareTarget) -> Option<f64> {
    match target {
        CompareTarget::Outcome => report.outcome.as_ref()?.summary.variance_floor,
        CompareTarget::Aces => report.aces.as_ref()?.summary.variance_floor,
        CompareTarget::Metric(m) => report.metric(m)?.summary.variance_floor,
    }
}

/// The metrics a report's value for `target` is made of.
fn target_metrics(report: &LiftReport, target: &CompareTarget) -> BTreeSet<Metric> {
    let profile = match target {
        CompareTarget::Outcome => ScoringProfile::Outcome,
        CompareTarget::Aces => ScoringProfile::Aces,
        CompareTarget::Metric(m) => return BTreeSet::from([m.clone()]),
    };
    report
        .profile(profile)
        .map(|p| p.metrics.iter().cloned().collect())
        .unwrap_or_default()
}

/// Each case's value for `target`; with `only`, the mean of its deltas over those metrics
/// instead of the report's own profile value.
fn per_case(
    report: &LiftReport,
    target: &CompareTarget,
    only: Option<&BTreeSet<Metric>>,
) -> Vec<(String, f64)> {
    report
        .cases
        .iter()
        .filter_map(|c| {
            let value = match (target, only) {
                (CompareTarget::Metric(m), _) => c.deltas.get(m).copied(),
                (_, Some(only)) => super::stats::mean(
                    &only
                        .iter()
                        .filter_map(|m| c.deltas.get(m).copied())
                        .collect::<Vec<_>>(),
                ),
                (CompareTarget::Outcome, None) => c.outcome,
                (CompareTarget::Aces, None) => c.overall,
            };
            value.map(|v| (c.case_id.clone(), v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::lift::{LiftParams, skill_lift};
    use crate::scoring::trial::Condition::{Baseline, Skill};
    use crate::scoring::trial::Trial;
    use crate::scoring::trial::tests::trial;

    /// A cell whose case i has baseline `base[i]` and skill `skill[i]` goal accuracy.
    fn cell(base: &[f64], skill: &[f64]) -> LiftReport {
        let g = Metric::GoalAccuracy;
        let trials: Vec<Trial> = base
            .iter()
            .zip(skill)
            .enumerate()
            .flat_map(|(i, (b, s))| {
                let case = format!("c{i:02}");
                [
                    trial(&case, Baseline, 0, &[(g.clone(), *b)]),
                    trial(&case, Skill, 0, &[(g.clone(), *s)]),
                ]
            })
            .collect();
        skill_lift(&trials, &LiftParams::default()).unwrap()
    }

    #[test]
    fn clear_drop_is_a_regression() {
        let base = [0.2, 0.3, 0.1, 0.4, 0.2, 0.3, 0.25, 0.35];
        let old_skill = [0.8, 0.9, 0.7, 0.9, 0.8, 0.85, 0.75, 0.9];
        let new_skill = [0.3, 0.4, 0.2, 0.5, 0.25, 0.35, 0.3, 0.45];
        let c = compare_lifts(
            &cell(&base, &old_skill),
            &cell(&base, &new_skill),
            &CompareParams::default(),
        )
        .unwrap();
        assert_eq!(c.verdict, Verdict::Regresses, "{}", c.reason);
        assert_eq!(c.cases.len(), 8);
        assert!(c.summary.mean.unwrap() < -0.4);
        assert!(c.interval.unwrap().high < 0.0);
        assert!(
            c.reason
                .starts_with("regresses: lift change -0.481, 95% t interval"),
            "{}",
            c.reason
        );
    }

    #[test]
    fn stronger_baseline_with_same_added_value_is_unchanged() {
        // The new model raises both sides by 0.2: the skill's lift is the same per case.
        let base_a = [0.1, 0.2, 0.3, 0.2, 0.1, 0.3];
        let skill_a = [0.5, 0.6, 0.65, 0.6, 0.5, 0.7];
        let base_b: Vec<f64> = base_a.iter().map(|x| x + 0.2).collect();
        let skill_b: Vec<f64> = skill_a.iter().map(|x| x + 0.2).collect();
        let c = compare_lifts(
            &cell(&base_a, &skill_a),
            &cell(&base_b, &skill_b),
            &CompareParams::default(),
        )
        .unwrap();
        assert!(c.summary.mean.unwrap().abs() < 1e-12);
        // Not a regression; but six single scores a side cannot rule out a change of 0.05
        // either (issue 35): the equivalence test says so instead of a zero-width interval.
        assert_eq!(c.verdict, Verdict::Inconclusive, "{}", c.reason);
        assert!(
            c.reason
                .contains("the equivalence test cannot rule out changes of 0.05"),
            "{}",
            c.reason
        );
    }

    #[test]
    fn significant_but_small_drop_is_not_a_regression() {
        let base = [0.2; 10];
        let old_skill = [0.6, 0.62, 0.61, 0.6, 0.63, 0.6, 0.61, 0.62, 0.6, 0.61];
        let new_skill: Vec<f64> = old_skill
            .iter()
            .enumerate()
            .map(|(i, x)| x - 0.02 - 0.001 * i as f64)
            .collect();
        let c = compare_lifts(
            &cell(&base, &old_skill),
            &cell(&base, &new_skill),
            &CompareParams::default(),
        )
        .unwrap();
        assert!(c.interval.unwrap().excludes_zero());
        assert_eq!(c.verdict, Verdict::Inconclusive, "{}", c.reason);
        assert!(
            c.reason.contains("real but smaller than 0.05"),
            "{}",
            c.reason
        );
        // With no minimum effect it would be one.
        let strict = CompareParams {
            min_effect: 0.0,
            ..Default::default()
        };
        let c = compare_lifts(&cell(&base, &old_skill), &cell(&base, &new_skill), &strict).unwrap();
        assert_eq!(c.verdict, Verdict::Regresses);
    }

    #[test]
    fn large_but_noisy_drop_is_not_a_regression() {
        let base = [0.2, 0.2, 0.2];
        let old_skill = [0.9, 0.3, 0.8];
        let new_skill = [0.2, 0.4, 0.3];
        let c = compare_lifts(
            &cell(&base, &old_skill),
            &cell(&base, &new_skill),
            &CompareParams::default(),
        )
        .unwrap();
        assert!(c.summary.mean.unwrap() < -0.3);
        assert_eq!(c.verdict, Verdict::Inconclusive, "{}", c.reason);
        assert_eq!(c.decision.needed_cases, Some(6));
    }

    #[test]
    fn clear_gain_is_an_improvement_and_unshared_cases_are_listed() {
        let a = cell(&[0.5; 7], &[0.5, 0.55, 0.5, 0.45, 0.5, 0.52, 0.48]);
        let b = cell(&[0.5; 8], &[0.9, 0.95, 0.85, 0.9, 0.8, 0.92, 0.88, 0.2]);
        let c = compare_lifts(&a, &b, &CompareParams::default()).unwrap();
        assert_eq!(c.only_in_candidate, vec!["c07".to_string()]);
        assert_eq!(c.verdict, Verdict::Improves, "{}", c.reason);
    }

    #[test]
    fn one_shared_case_is_inconclusive_with_reason() {
        let a = cell(&[0.5], &[1.0]);
        let b = cell(&[0.5], &[0.0]);
        let c = compare_lifts(&a, &b, &CompareParams::default()).unwrap();
        assert_eq!(c.verdict, Verdict::Inconclusive);
        assert!(c.interval.is_none());
        assert_eq!(
            c.reason,
            "inconclusive: 1 case cannot show a difference at 95%; at least 6 are needed"
        );
    }

    #[test]
    fn metric_target_and_bootstrap_interval() {
        let base = [0.2, 0.3, 0.1, 0.4, 0.2, 0.3, 0.25, 0.35];
        let old_skill = [0.8, 0.9, 0.7, 0.9, 0.8, 0.85, 0.75, 0.9];
        let new_skill = [0.3, 0.4, 0.2, 0.5, 0.25, 0.35, 0.3, 0.45];
        let params = CompareParams {
            interval: VerdictInterval::Bootstrap,
            target: CompareTarget::Metric(Metric::GoalAccuracy),
            ..Default::default()
        };
        let c = compare_lifts(&cell(&base, &old_skill), &cell(&base, &new_skill), &params).unwrap();
        assert_eq!(c.verdict, Verdict::Regresses);
        // Eight cases: below the bootstrap's minimum, the t interval is used and named.
        assert_eq!(c.interval.unwrap().method.label(), "t");
        assert!(
            c.reason.contains("bootstrap is not offered"),
            "{}",
            c.reason
        );
        let missing = CompareParams {
            target: CompareTarget::Metric(Metric::Security),
            ..Default::default()
        };
        let c =
            compare_lifts(&cell(&base, &old_skill), &cell(&base, &new_skill), &missing).unwrap();
        assert!(c.cases.is_empty());
        assert_eq!(c.verdict, Verdict::NotMeasured);
    }

    /// A cell whose case i scores `pass` `pass[i]` on each side and, when judged, `accuracy`
    /// `judged[i]` (baseline, skill).
    fn mixed(pass: &[(f64, f64)], judged: Option<&[(f64, f64)]>) -> LiftReport {
        let trials: Vec<Trial> = pass
            .iter()
            .enumerate()
            .flat_map(|(i, (b, s))| {
                let case = format!("c{i:02}");
                let mut bm = vec![(Metric::Pass, *b)];
                let mut sm = vec![(Metric::Pass, *s)];
                if let Some(j) = judged {
                    bm.push((Metric::Accuracy, j[i].0));
                    sm.push((Metric::Accuracy, j[i].1));
                }
                [trial(&case, Baseline, 0, &bm), trial(&case, Skill, 0, &sm)]
            })
            .collect();
        skill_lift(&trials, &LiftParams::default()).unwrap()
    }

    #[test]
    fn a_judged_run_is_compared_with_an_unjudged_one_on_their_shared_metrics() {
        let pass: Vec<(f64, f64)> = (0..8)
            .map(|i| (0.0, if i < 6 { 1.0 } else { 0.0 }))
            .collect();
        let accuracy: Vec<(f64, f64)> = (0..8).map(|_| (0.9, 0.1)).collect();
        let judged = mixed(&pass, Some(&accuracy));
        let unjudged = mixed(&pass, None);
        let c = compare_lifts(&judged, &unjudged, &CompareParams::default()).unwrap();
        assert_eq!(c.metrics, vec![Metric::Pass]);
        assert_eq!(c.left_out_metrics, vec![Metric::Accuracy]);
        // the same skill on the same pass results: no change at all once accuracy is out
        assert_eq!(c.summary.mean, Some(0.0));
        assert_eq!(c.reference_lift, c.candidate_lift);
        // mixing the judged run's own outcome value in would have moved it by the accuracy
        let own: Vec<f64> = judged.cases.iter().filter_map(|c| c.outcome).collect();
        let shared: Vec<f64> = unjudged.cases.iter().filter_map(|c| c.outcome).collect();
        assert_ne!(own, shared);
        // two runs with the same metrics compare on their own values, nothing left out
        let same = compare_lifts(&unjudged, &unjudged, &CompareParams::default()).unwrap();
        assert!(same.left_out_metrics.is_empty());
        assert_eq!(same.metrics, vec![Metric::Pass]);
    }
}
