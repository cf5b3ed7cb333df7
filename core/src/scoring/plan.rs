//! Planning a paired run: the smallest lift a design (cases x attempts) can detect, and the
//! cases a lift needs. Printed before every run and by `skillwatch plan`, because at the sizes
//! authors use (a median of 3 cases, one attempt) a real drop of 0.2 is caught a few percent
//! of the time, and without this nothing tells them.
//!
//! Model: a case's per-case value (the mean over its r attempts of the paired outcome delta)
//! varies across cases with variance
//!
//! ```text
//! Var(Δ_i) = τ² + σ²_w / r
//! ```
//!
//! where τ² is the spread of the skill's true effect from case to case (more attempts cannot
//! shrink it) and σ²_w the attempt-to-attempt noise of one paired difference. The smallest
//! detectable lift at n cases, 80% power, two-sided level 1 − α, is the usual paired-t
//! approximation
//!
//! ```text
//! MDE = (t(1 − α/2, n − 1) + t(power, n − 1)) · √(Var(Δ_i) / n)
//! ```
//!
//! floored at the verdict's `min_effect` (a smaller mean never gives a verdict) and only for
//! n ≥ [`min_cases`] (below it the exact sign-flip test cannot reach the level at all). It is
//! an approximation: the verdict also needs the exact sign-flip test, which loses a little
//! power on discrete scores at small n; the calibration bench prints simulated power beside
//! it (docs/scoring.md).
//!
//! The variance comes from the skill's history when it has a run with at least two cases
//! ([`variance_from_trials`]), else from [`VarianceModel::default`], a stated worst case.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ScoringError;
use super::lift::{ScoringProfile, pair_sides};
use super::stats::{binomial_variance_floor, t_quantile};
use super::trial::Trial;
use super::verdict::min_cases;

/// Where a variance model came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VarianceSource {
    /// No history: [`VarianceModel::default`].
    Default,
    /// Estimated from stored trials.
    History {
        /// Cases in the run it was estimated from.
        cases: usize,
        /// Most attempts any case had.
        attempts: usize,
        /// False when every case had one attempt: the attempt noise cannot be seen, and the
        /// binomial variance at the run's rates stands in for it.
        separated: bool,
    },
}

/// The two variance components of a per-case paired value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VarianceModel {
    /// τ²: variance of the true per-case effect across cases.
    pub between: f64,
    /// σ²_w: variance of one attempt's paired difference around its case's mean.
    pub within: f64,
    /// Where the numbers came from.
    pub source: VarianceSource,
}

impl Default for VarianceModel {
    /// The stated default: pass/fail outcomes at 50%, the noisiest a paired difference of two
    /// independent 0/1 results can be (σ²_w = 0.5), and a case-to-case spread of the effect
    /// with standard deviation 0.1 (τ² = 0.01).
    fn default() -> Self {
        VarianceModel {
            between: 0.01,
            within: 0.5,
            source: VarianceSource::Default,
        }
    }
}

impl VarianceModel {
    /// Var(Δ_i) with `attempts` attempts per case.
    pub fn per_case(&self, attempts: u32) -> f64 {
        self.between + self.within / f64::from(attempts.max(1))
    }
}

/// The settings of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlanParams {
    /// Confidence level of the verdict (0.95).
    pub level: f64,
    /// Power sought (0.8).
    pub power: f64,
    /// The verdict's effect floor (0.05).
    pub min_effect: f64,
}

impl Default for PlanParams {
    fn default() -> Self {
        PlanParams {
            level: 0.95,
            power: 0.8,
            min_effect: 0.05,
        }
    }
}

/// What a design can detect.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Detectable {
    /// Below the sign-flip floor: no lift can be shown.
    TooFewCases {
        /// The smallest number of cases that can show a difference.
        needed: usize,
    },
    /// Lifts of at least this size are detected with the planned power.
    Lift {
        /// The smallest detectable lift, on the [0, 1] scale.
        mde: f64,
    },
    /// Even a lift of 1 (every task flipped) is detected with less than the planned power.
    Nothing,
}

impl Detectable {
    /// `0.41`, `none: 3 cases cannot show a difference at 95%; at least 6 are needed`, ...
    pub fn describe(&self, cases: usize, level: f64) -> String {
        match self {
            Detectable::Lift { mde } => format!("{mde:.2}"),
            Detectable::TooFewCases { needed } => format!(
                "none: {cases} case{} cannot show a difference at {:.0}%; at least {needed} are needed",
                if cases == 1 { "" } else { "s" },
                level * 100.0
            ),
            Detectable::Nothing => {
                "none: even a lift of 1.0 would be missed more often than not".into()
            }
        }
    }
}

/// The smallest lift `cases` x `attempts` detects with `params.power`.
pub fn detectable(
    cases: usize,
    attempts: u32,
    variance: &VarianceModel,
    params: &PlanParams,
) -> Detectable {
    let needed = min_cases(params.level);
    if cases < needed {
        return Detectable::TooFewCases { needed };
    }
    let df = (cases - 1) as f64;
    let factor = t_quantile(1.0 - (1.0 - params.level) / 2.0, df) + t_quantile(params.power, df);
    let mde = factor * (variance.per_case(attempts) / cases as f64).sqrt();
    let mde = mde.max(params.min_effect);
    if mde > 1.0 {
        Detectable::Nothing
    } else {
        Detectable::Lift { mde }
    }
}

/// The fewest cases that detect `lift` with `attempts` attempts each; `None` when no suite
/// of at most `max_cases` does (a lift at or below the effect floor, for one).
pub fn cases_needed(
    lift: f64,
    attempts: u32,
    variance: &VarianceModel,
    params: &PlanParams,
    max_cases: usize,
) -> Option<usize> {
    let lowest = min_cases(params.level);
    (lowest..=max_cases).find(|&n| {
        matches!(detectable(n, attempts, variance, params), Detectable::Lift { mde } if mde <= lift + 1e-12)
    })
}

/// Estimate τ² and σ²_w from one run's trials, on `profile`'s per-pair sides. `None` when
/// fewer than two cases have a value.
///
/// σ²_w is the within-case variance of the baseline scores plus that of the with-skill scores
/// (pooled over cases): the variance of one attempt's paired difference when the two sides
/// are independent, computed without pairing attempts by their labels (which baseline
/// attempt is "#2" is arbitrary, and pairing by it made the estimate change under
/// relabelling). It is never below the binomial variance at the arms' observed (shrunk)
/// rates ([`binomial_variance_floor`]): a run whose cases all moved alike shows no spread,
/// but pass/fail outcomes at its rates have that much noise whatever one run showed, so no
/// design is promised power that noise would not give. τ² is the rest of the spread of the
/// per-case means. With one attempt per case the within-case variance cannot be seen and the
/// floor stands in for it.
pub fn variance_from_trials(
    trials: &[Trial],
    profile: ScoringProfile,
    outcome_custom: &[String],
) -> Result<Option<VarianceModel>, ScoringError> {
    let mut by_case: BTreeMap<String, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for p in pair_sides(trials, profile, outcome_custom)? {
        let entry = by_case.entry(p.case_id).or_default();
        entry.0.push(p.baseline);
        entry.1.push(p.skill);
    }
    if by_case.len() < 2 {
        return Ok(None);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let means: Vec<f64> = by_case.values().map(|(b, s)| mean(s) - mean(b)).collect();
    let total_var = super::stats::sample_sd(&means).map_or(0.0, |s| s * s);
    let (mut ss, mut df) = (0.0, 0usize);
    for (b, s) in by_case.values() {
        for side in [b, s] {
            let m = mean(side);
            ss += side.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
        }
        df += b.len() - 1;
    }
    let attempts: Vec<usize> = by_case.values().map(|(b, _)| b.len()).collect();
    let sums = by_case.values().fold((0.0, 0.0), |(b, s), (cb, cs)| {
        (b + cb.iter().sum::<f64>(), s + cs.iter().sum::<f64>())
    });
    let trials_per_arm = attempts.iter().sum::<usize>() as f64;
    // The floor of one pair's variance: attempts of 1.
    let floor = binomial_variance_floor(sums.0, sums.1, (trials_per_arm, trials_per_arm), &[1])
        .unwrap_or(0.0);
    let separated = df > 0;
    // ss pools both sides over df per side: the sum of the two sides' pooled variances.
    let observed = if separated { ss / df as f64 } else { 0.0 };
    let within = observed.max(floor);
    let inverse_r = attempts.iter().map(|r| 1.0 / *r as f64).sum::<f64>() / attempts.len() as f64;
    Ok(Some(VarianceModel {
        between: (total_var - within * inverse_r).max(0.0),
        within,
        source: VarianceSource::History {
            cases: by_case.len(),
            attempts: attempts.iter().copied().max().unwrap_or(1),
            separated,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::trial::Condition::{Baseline, Skill};
    use crate::scoring::trial::tests::trial;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn small_designs_detect_nothing_and_say_why() {
        let v = VarianceModel::default();
        let p = PlanParams::default();
        let d = detectable(3, 1, &v, &p);
        assert_eq!(d, Detectable::TooFewCases { needed: 6 });
        assert_eq!(
            d.describe(3, 0.95),
            "none: 3 cases cannot show a difference at 95%; at least 6 are needed"
        );
        // Six pass/fail cases at 50%: the standard error alone is about 0.29.
        assert_eq!(detectable(6, 1, &v, &p), Detectable::Nothing);
    }

    #[test]
    fn mde_matches_the_paired_t_formula_and_shrinks_with_cases_and_attempts() {
        let v = VarianceModel::default();
        let p = PlanParams::default();
        // n = 30, r = 1: (t(.975, 29) + t(.8, 29)) * sqrt(0.51 / 30).
        let t80 = t_quantile(0.8, 29.0);
        assert!(close(t80, 0.854, 1e-3), "{t80}");
        let expected = (2.045_229_642_132_703 + t80) * (0.51f64 / 30.0).sqrt();
        let Detectable::Lift { mde } = detectable(30, 1, &v, &p) else {
            panic!()
        };
        assert!(close(mde, expected, 1e-9), "{mde} {expected}");
        let Detectable::Lift { mde: more_runs } = detectable(30, 3, &v, &p) else {
            panic!()
        };
        assert!(more_runs < mde);
        let Detectable::Lift { mde: more_cases } = detectable(60, 1, &v, &p) else {
            panic!()
        };
        assert!(more_cases < mde);
        // Never below the verdict's effect floor.
        let quiet = VarianceModel {
            between: 0.0,
            within: 0.0,
            ..VarianceModel::default()
        };
        assert_eq!(
            detectable(10, 1, &quiet, &p),
            Detectable::Lift { mde: 0.05 }
        );
    }

    #[test]
    fn cases_needed_is_the_first_design_that_detects_the_lift() {
        let v = VarianceModel::default();
        let p = PlanParams::default();
        let n = cases_needed(0.2, 1, &v, &p, 10_000).unwrap();
        assert!(matches!(detectable(n, 1, &v, &p), Detectable::Lift { mde } if mde <= 0.2));
        assert!(!matches!(detectable(n - 1, 1, &v, &p), Detectable::Lift { mde } if mde <= 0.2));
        assert!(cases_needed(0.2, 5, &v, &p, 10_000).unwrap() < n);
        assert_eq!(cases_needed(0.01, 1, &v, &p, 10_000), None);
    }

    /// Two attempts per case on `pass`; `cases` gives each case's (baseline, skill) passes
    /// by attempt.
    fn run_of(cases: &[(&str, [bool; 2], [bool; 2])]) -> Vec<Trial> {
        let mut trials = Vec::new();
        for (case, base, skill) in cases {
            for attempt in 0..2 {
                let mut b = trial(case, Baseline, attempt as u32, &[]);
                b.passed = Some(base[attempt]);
                let mut s = trial(case, Skill, attempt as u32, &[]);
                s.passed = Some(skill[attempt]);
                trials.extend([b, s]);
            }
        }
        trials
    }

    #[test]
    fn variance_components_from_repeated_attempts() {
        // Case a: baseline {0, 0}, skill {1, 0}; b: {0, 0} {0, 0}; c: {1, 1} {1, 1}.
        let trials = run_of(&[
            ("a", [false, false], [true, false]),
            ("b", [false, false], [false, false]),
            ("c", [true, true], [true, true]),
        ]);
        let v = variance_from_trials(&trials, ScoringProfile::Outcome, &[])
            .unwrap()
            .unwrap();
        // Observed within: only a's skill side varies, SS = 0.5 over 3 df: 1/6. The floor at
        // the shrunk rates (2 + 2) / (6 + 4) and (3 + 2) / (6 + 4): 0.24 + 0.25 = 0.49.
        assert!(close(v.within, 0.49, 1e-12), "{v:?}");
        // Case means 0.5, 0, 0: variance 1/12, less the within part over 2 attempts.
        assert!(close(
            v.between,
            (1.0f64 / 12.0 - 0.49 / 2.0).max(0.0),
            1e-12
        ));
        assert_eq!(
            v.source,
            VarianceSource::History {
                cases: 3,
                attempts: 2,
                separated: true
            }
        );
        // One attempt per case: the floor stands in for the noise it cannot see.
        let single: Vec<Trial> = trials.iter().filter(|t| t.attempt == 0).cloned().collect();
        let v = variance_from_trials(&single, ScoringProfile::Outcome, &[])
            .unwrap()
            .unwrap();
        // rates (1 + 2) / (3 + 4) and (2 + 2) / (3 + 4)
        let floor = 3.0 / 7.0 * 4.0 / 7.0 + 4.0 / 7.0 * 3.0 / 7.0;
        assert!(close(v.within, floor, 1e-12), "{v:?}");
        assert!(
            variance_from_trials(&single[..2], ScoringProfile::Outcome, &[])
                .unwrap()
                .is_none()
        );
    }

    /// The issue's degenerate run: every case moved alike (here: all passed on both sides),
    /// no spread at all. The plan still assumes the binomial noise of the observed rates, so
    /// it promises nothing a real suite would not give.
    #[test]
    fn a_run_without_spread_still_has_binomial_noise() {
        let trials = run_of(&[("a", [true; 2], [true; 2]); 1]);
        let cases: Vec<Trial> = (0..8)
            .flat_map(|i| {
                trials.iter().cloned().map(move |mut t| {
                    t.case_id = format!("c{i}");
                    t
                })
            })
            .collect();
        let v = variance_from_trials(&cases, ScoringProfile::Outcome, &[])
            .unwrap()
            .unwrap();
        // 16 of 16 each side: (16 + 2) / (16 + 4) = 0.9, variance 0.09 per side.
        assert!(close(v.within, 0.18, 1e-12), "{v:?}");
        assert_eq!(v.between, 0.0);
        let p = PlanParams::default();
        assert!(!matches!(detectable(8, 1, &v, &p), Detectable::Lift { mde } if mde < 0.3));
    }

    /// Relabelling attempts within a case changes nothing.
    #[test]
    fn attempt_labels_do_not_matter() {
        let a = run_of(&[
            ("a", [true, false], [false, true]),
            ("b", [false, true], [true, true]),
            ("c", [true, true], [false, true]),
        ]);
        let b = run_of(&[
            ("a", [false, true], [false, true]),
            ("b", [true, false], [true, true]),
            ("c", [true, true], [true, false]),
        ]);
        let va = variance_from_trials(&a, ScoringProfile::Outcome, &[]).unwrap();
        let vb = variance_from_trials(&b, ScoringProfile::Outcome, &[]).unwrap();
        assert_eq!(va, vb);
    }
}
