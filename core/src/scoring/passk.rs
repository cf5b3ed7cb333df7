//! pass@k and pass^k of one condition over a cell's trials: how likely at least one (or
//! every one) of k attempts at a case succeeds, the retry view ACES reports next to lift;
//! and the pass rate per condition with its interval clustered by case ([`pass_rate`]).
//!
//! Per case, from its n graded attempts of which c passed, the unbiased estimators of
//! [`super::stats::pass_at_k`] and [`super::stats::pass_hat_k`]; then the mean over cases.
//! A timeout is a failed attempt; an infrastructure error is no attempt at all; an ungraded
//! completed trial is skipped. Cases with fewer than k graded attempts are skipped and counted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ScoringError;
use super::stats::{Interval, StatsError, clustered_wilson_interval, pass_at_k, pass_hat_k};
use super::trial::{Condition, Trial, TrialStatus, validate_trial};

/// pass@k and pass^k of one condition.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PassAtK {
    /// Which side.
    pub condition: Condition,
    /// k.
    pub k: u64,
    /// Mean over cases of the unbiased pass@k.
    pub pass_at_k: f64,
    /// Mean over cases of the unbiased pass^k.
    pub pass_hat_k: f64,
    /// Cases that entered (at least k graded attempts).
    pub cases: usize,
    /// Cases skipped for having fewer than k graded attempts.
    pub skipped_cases: usize,
}

/// The pass rate of `condition` (task outcomes passed / task outcomes: a timeout is a failed
/// task, errors and ungraded trials are left out) with its Wilson interval clustered by case
/// ([`clustered_wilson_interval`]: the plain Wilson interval when every case has one
/// outcome). `None` when nothing was graded.
pub fn pass_rate(
    trials: &[Trial],
    condition: Condition,
    level: f64,
) -> Result<Option<Interval>, StatsError> {
    rate_by_case(
        trials
            .iter()
            .filter(|t| t.condition == condition)
            .filter_map(|t| Some((t.case_id.as_str(), t.task_outcome()?))),
        level,
    )
}

/// The rate of `true` among `(case, outcome)` observations with its interval clustered by
/// case; `None` without observations. What pass rates and the invocation rate share.
pub fn rate_by_case<'a>(
    outcomes: impl IntoIterator<Item = (&'a str, bool)>,
    level: f64,
) -> Result<Option<Interval>, StatsError> {
    let mut per_case: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (case, hit) in outcomes {
        let entry = per_case.entry(case).or_default();
        entry.0 += u64::from(hit);
        entry.1 += 1;
    }
    if per_case.is_empty() {
        return Ok(None);
    }
    let clusters: Vec<(u64, u64)> = per_case.into_values().collect();
    clustered_wilson_interval(&clusters, level).map(Some)
}

/// pass@k and pass^k of `condition`; `None` when no case has k graded attempts.
pub fn pass_at_k_of(
    trials: &[Trial],
    condition: Condition,
    k: u64,
) -> Result<Option<PassAtK>, ScoringError> {
    if k == 0 {
        return Err(ScoringError::InvalidParams(
            "k is 0, expected k >= 1".into(),
        ));
    }
    let mut per_case: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for trial in trials.iter().filter(|t| t.condition == condition) {
        validate_trial(trial)?;
        let outcome = match trial.status {
            TrialStatus::Timeout => Some(false),
            TrialStatus::Error => None,
            TrialStatus::Completed => trial.passed,
        };
        let entry = per_case.entry(trial.case_id.as_str()).or_default();
        if let Some(passed) = outcome {
            entry.0 += 1;
            entry.1 += u64::from(passed);
        }
    }
    let (mut at, mut hat, mut cases, mut skipped) = (0.0, 0.0, 0usize, 0usize);
    for (n, c) in per_case.into_values() {
        if n < k {
            skipped += 1;
            continue;
        }
        at += pass_at_k(n, c, k)?;
        hat += pass_hat_k(n, c, k)?;
        cases += 1;
    }
    Ok((cases > 0).then(|| PassAtK {
        condition,
        k,
        pass_at_k: at / cases as f64,
        pass_hat_k: hat / cases as f64,
        cases,
        skipped_cases: skipped,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::trial::tests::trial;

    fn attempt(case: &str, i: u32, status: TrialStatus, passed: Option<bool>) -> Trial {
        let mut t = trial(case, Condition::Skill, i, &[]);
        t.status = status;
        t.passed = passed;
        t
    }

    #[test]
    fn per_case_unbiased_estimates_averaged_over_cases() {
        use TrialStatus::*;
        let trials = vec![
            // a: 3 graded attempts (the error is not an attempt), 1 passed.
            attempt("a", 0, Completed, Some(true)),
            attempt("a", 1, Timeout, None),
            attempt("a", 2, Completed, Some(false)),
            attempt("a", 3, Error, None),
            // b: 2 graded, 2 passed.
            attempt("b", 0, Completed, Some(true)),
            attempt("b", 1, Completed, Some(true)),
            // c: 1 graded: skipped for k = 2.
            attempt("c", 0, Completed, Some(true)),
            attempt("c", 1, Completed, None),
        ];
        let r = pass_at_k_of(&trials, Condition::Skill, 2).unwrap().unwrap();
        // a: n=3, c=1: pass@2 = 1 - C(2,2)/C(3,2) = 2/3, pass^2 = 0. b: 1 and 1.
        assert!((r.pass_at_k - (2.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert!((r.pass_hat_k - 0.5).abs() < 1e-12);
        assert_eq!((r.cases, r.skipped_cases), (2, 1));
        assert!(
            pass_at_k_of(&trials, Condition::Baseline, 1)
                .unwrap()
                .is_none()
        );
        assert!(pass_at_k_of(&trials, Condition::Skill, 0).is_err());
    }
}
