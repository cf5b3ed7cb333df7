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
use super::stats::t_quantile;
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
    /// σ²_w as the run showed it: the pooled within-case variance (0 with one attempt per
    /// case, where it cannot be seen). Planning never uses less than [`Self::floor`] gives.
    pub within: f64,
    /// The outcome totals of the run the model came from, for the planning floor; `None` for
    /// the stated default (its `within` is already the worst case).
    #[serde(default)]
    pub floor: Option<PlanningFloor>,
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
            floor: None,
            source: VarianceSource::Default,
        }
    }
}

impl VarianceModel {
    /// σ²_w to plan a lift of `lift` with: the observed within-case variance, never below the
    /// planning floor at that lift.
    pub fn within_at(&self, lift: f64) -> f64 {
        let floor = self.floor.as_ref().map_or(0.0, |f| f.at(lift));
        self.within.max(floor)
    }

    /// Var(Δ_i) with `attempts` attempts per case, planning a lift of `lift`.
    pub fn per_case(&self, attempts: u32, lift: f64) -> f64 {
        self.between + self.within_at(lift) / f64::from(attempts.max(1))
    }
}

/// One arm's outcome total in the run a variance came from (pass = 1, or a score on [0, 1]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ArmTotal {
    /// Sum of the arm's outcomes.
    pub sum: f64,
    /// Trials in the arm.
    pub trials: f64,
}

impl ArmTotal {
    /// E[q(1 − q)] for q = p + `shift`, p the arm's rate under a uniform prior updated by the
    /// run (Beta(sum + 1, trials − sum + 1)): (m + h)(1 − m − h) − Var(p). This is the
    /// noise a pass/fail trial at that rate has, averaged over the rates the run leaves
    /// plausible; 0 where the shifted mean leaves [0, 1].
    fn expected_variance(self, shift: f64) -> f64 {
        let (a, b) = (self.sum + 1.0, self.trials - self.sum + 1.0);
        let m = a / (a + b);
        let spread = a * b / ((a + b) * (a + b) * (a + b + 1.0));
        let q = m + shift;
        (q * (1.0 - q) - spread).max(0.0)
    }
}

/// The floor under σ²_w when planning: the binomial noise of one paired difference at the
/// rates the next run will have if the planned lift is real.
///
/// Why not the verdict's floor ([`super::stats::binomial_variance_floor`]): that one must not under-state
/// noise (it guards "no change"), so it shrinks hard (8/8 read as 10/12); planned with it, an
/// all-pass history over-powers every design by 10-15 points. Why not the observed rates
/// alone: a planned lift moves an arm, and moving a rate of 0.95 towards 0.5 adds noise the
/// history never showed; planned without it, a drop from an all-pass history is
/// under-powered. So: the rates as the history leaves them plausible (posterior under a
/// uniform prior, averaged), with one arm moved by the lift, up or down, whichever adds the
/// most noise (the direction of a lift is not known when planning). docs/scoring.md gives
/// the simulated power of this rule over a range of true rates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlanningFloor {
    /// The baseline arm's total.
    pub baseline: ArmTotal,
    /// The with-skill arm's total.
    pub skill: ArmTotal,
}

impl PlanningFloor {
    /// The floor of one pair's variance when planning a lift of `lift`.
    pub fn at(&self, lift: f64) -> f64 {
        let (b, s) = (self.baseline, self.skill);
        let still = b.expected_variance(0.0) + s.expected_variance(0.0);
        [lift, -lift]
            .into_iter()
            .flat_map(|h| {
                [
                    b.expected_variance(h) + s.expected_variance(0.0),
                    b.expected_variance(0.0) + s.expected_variance(h),
                ]
            })
            .fold(still, f64::max)
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

/// The smallest lift `cases` x `attempts` detects with `params.power`. The variance planned
/// depends on the lift (see [`PlanningFloor`]), so this is the smallest lift from the effect
/// floor up that [`detects`] accepts: a scan in steps of 0.001, refined by bisection.
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
    let shown = |lift: f64| required(cases, attempts, lift, variance, params) <= lift;
    let lowest = params.min_effect;
    if shown(lowest) {
        return Detectable::Lift { mde: lowest };
    }
    let steps = ((1.0 - lowest) / 0.001).ceil() as usize;
    let Some(step) = (1..=steps).find(|&i| shown((lowest + i as f64 * 0.001).min(1.0))) else {
        return Detectable::Nothing;
    };
    let (mut missed, mut found) = (
        lowest + (step - 1) as f64 * 0.001,
        (lowest + step as f64 * 0.001).min(1.0),
    );
    for _ in 0..40 {
        let mid = (missed + found) / 2.0;
        if shown(mid) {
            found = mid
        } else {
            missed = mid
        }
    }
    Detectable::Lift { mde: found }
}

/// Whether `cases` x `attempts` detects a lift of `lift` with `params.power`.
pub fn detects(
    cases: usize,
    attempts: u32,
    lift: f64,
    variance: &VarianceModel,
    params: &PlanParams,
) -> bool {
    cases >= min_cases(params.level)
        && lift + 1e-12 >= params.min_effect
        && required(cases, attempts, lift, variance, params) <= lift + 1e-12
}

/// The paired-t approximation's detectable mean, (t(1 − α/2, n − 1) + t(power, n − 1)) ·
/// √(Var(Δ_i) / n), at the variance planned for `lift`.
fn required(
    cases: usize,
    attempts: u32,
    lift: f64,
    variance: &VarianceModel,
    params: &PlanParams,
) -> f64 {
    let df = (cases - 1) as f64;
    let factor = t_quantile(1.0 - (1.0 - params.level) / 2.0, df) + t_quantile(params.power, df);
    factor * (variance.per_case(attempts, lift) / cases as f64).sqrt()
}

/// The fewest cases that detect `lift` with `attempts` attempts each; `None` when no suite
/// of at most `max_cases` does (a lift below the effect floor, for one).
pub fn cases_needed(
    lift: f64,
    attempts: u32,
    variance: &VarianceModel,
    params: &PlanParams,
    max_cases: usize,
) -> Option<usize> {
    let lowest = min_cases(params.level);
    (lowest..=max_cases).find(|&n| detects(n, attempts, lift, variance, params))
}

/// Estimate τ² and σ²_w from one run's trials, on `profile`'s per-pair sides. `None` when
/// fewer than two cases have a value.
///
/// σ²_w is the within-case variance of the baseline scores plus that of the with-skill scores
/// (pooled over cases): the variance of one attempt's paired difference when the two sides
/// are independent, computed without pairing attempts by their labels (which baseline
/// attempt is "#2" is arbitrary, and pairing by it made the estimate change under
/// relabelling). Planning never uses less than the [`PlanningFloor`] of the run's totals: a
/// run whose cases all moved alike shows no spread, but pass/fail outcomes at its rates have
/// that much noise whatever one run showed, so no design is promised power that noise would
/// not give. τ² is the rest of the spread of the per-case means (net of the noise at the
/// run's own rates). With one attempt per case the within-case variance cannot be seen and
/// the floor stands in for it.
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
    let trials = attempts.iter().sum::<usize>() as f64;
    let floor = PlanningFloor {
        baseline: ArmTotal {
            sum: sums.0,
            trials,
        },
        skill: ArmTotal {
            sum: sums.1,
            trials,
        },
    };
    let separated = df > 0;
    // ss pools both sides over df per side: the sum of the two sides' pooled variances.
    let within = if separated { ss / df as f64 } else { 0.0 };
    let inverse_r = attempts.iter().map(|r| 1.0 / *r as f64).sum::<f64>() / attempts.len() as f64;
    let noise = within.max(floor.at(0.0));
    Ok(Some(VarianceModel {
        between: (total_var - noise * inverse_r).max(0.0),
        within,
        floor: Some(floor),
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
        // Observed within: only a's skill side varies, SS = 0.5 over 3 df: 1/6. The planning
        // floor at the run's own rates, 2/6 and 3/6 under a uniform prior (Beta(3, 5) and
        // Beta(4, 4)): E[p(1 - p)] = ab / ((a + b)(a + b + 1)) = 15/72 + 16/72.
        assert!(close(v.within, 1.0 / 6.0, 1e-12), "{v:?}");
        let floor = 31.0 / 72.0;
        assert!(close(v.within_at(0.0), floor, 1e-12), "{v:?}");
        // Case means 0.5, 0, 0: variance 1/12, less the within part over 2 attempts.
        assert!(close(
            v.between,
            (1.0f64 / 12.0 - floor / 2.0).max(0.0),
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
        // 1/3 and 2/3: Beta(2, 3) and Beta(3, 2), 6/30 each; nothing observed within.
        assert_eq!(v.within, 0.0);
        assert!(close(v.within_at(0.0), 0.4, 1e-12), "{v:?}");
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
        // 16 of 16 each side: Beta(17, 1), E[p(1 - p)] = 17 / (18 * 19) per side.
        let still = 2.0 * 17.0 / (18.0 * 19.0);
        assert!(close(v.within_at(0.0), still, 1e-12), "{v:?}");
        assert_eq!(v.between, 0.0);
        // Planning a lift of 0.2, one arm moves to a mean of 17/18 - 0.2, which adds noise:
        // E[(p - 0.2)(1.2 - p)] = E[p(1 - p)] + 0.2 (2 E[p] - 1) - 0.04.
        let moved = 17.0 / (18.0 * 19.0) + 0.2 * (2.0 * 17.0 / 18.0 - 1.0) - 0.04;
        assert!(close(v.within_at(0.2), still / 2.0 + moved, 1e-12), "{v:?}");
        let p = PlanParams::default();
        assert!(!matches!(detectable(8, 1, &v, &p), Detectable::Lift { mde } if mde < 0.3));
        // What the plan states it detects, it detects at the variance planned for that lift.
        let Detectable::Lift { mde } = detectable(100, 1, &v, &p) else {
            panic!()
        };
        assert!(detects(100, 1, mde, &v, &p) && !detects(100, 1, mde - 1e-6, &v, &p));
    }

    /// An all-pass history says little about how noisy a changed arm will be: the planning
    /// floor is never below the noise at the run's own rates, and grows with the planned lift
    /// while the moved arm heads towards 0.5.
    #[test]
    fn the_planning_floor_grows_while_the_moved_arm_heads_to_one_half() {
        let all_pass = PlanningFloor {
            baseline: ArmTotal {
                sum: 8.0,
                trials: 8.0,
            },
            skill: ArmTotal {
                sum: 8.0,
                trials: 8.0,
            },
        };
        let mut last = all_pass.at(0.0);
        for i in 1..=40 {
            let now = all_pass.at(f64::from(i) * 0.01);
            assert!(now >= last - 1e-12, "{i}: {now} < {last}");
            last = now;
        }
        // A half-and-half history: moving an arm away from 0.5 adds nothing.
        let half = PlanningFloor {
            baseline: ArmTotal {
                sum: 4.0,
                trials: 8.0,
            },
            skill: ArmTotal {
                sum: 4.0,
                trials: 8.0,
            },
        };
        assert!(close(half.at(0.1), half.at(0.0), 1e-12));
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
