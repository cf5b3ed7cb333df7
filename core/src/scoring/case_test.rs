//! Per-case judgements: may a report call one case worse (a failing JUnit test case, a red
//! cell, a drawn interval)? Only when an exact test on that case's own trials says so at the
//! run's level, after Holm's correction for testing every case of the suite.
//!
//! Why: with 3 trials a side, one trial that failed with the skill gives the case a lift of
//! −0.33 and nothing else: Fisher's exact p is 1.0. Reporting every negative case as a
//! failure failed 36 of 40 A/A runs of an 87-case suite in CI while the run itself exited 0
//! (issue 35). And with 87 cases tested at once, even exact tests at 5% each fail some case
//! in most runs that change nothing; Holm's step-down correction keeps the chance that any
//! case of a no-effect run is called worse at most 1 − level.
//!
//! The test: the case's baseline and with-skill trials are two samples; under "the skill does
//! nothing for this case" their labels are exchangeable, so the permutation distribution of
//! the with-skill sum is exact. For pass/fail trials that is Fisher's exact test (the
//! hypergeometric distribution); for scores on [0, 1] every split of the trials is counted
//! (Monte-Carlo past [`MAX_EXACT_SPLITS`]). The p-value is two-sided: twice the smaller
//! one-sided p, at most 1. Attempts are not paired by their labels: which baseline attempt is
//! called #2 is arbitrary, so nothing here depends on it.

use serde::{Deserialize, Serialize};
use statrs::function::factorial::ln_binomial;

use super::rng::SplitMix64;
use super::stats::{Interval, newcombe_interval};

/// Largest number of splits counted exactly; above it the p-value is Monte-Carlo.
pub const MAX_EXACT_SPLITS: f64 = 1_048_576.0;

/// Random splits for the Monte-Carlo p-value.
pub const MONTE_CARLO_SPLITS: u32 = 20_000;

/// One arm of a case: how many trials, and the sum of their values (the passes, for pass/fail).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ArmSample {
    /// Trials with a value.
    pub trials: usize,
    /// Sum of their values.
    pub sum: f64,
}

impl ArmSample {
    /// The mean value (the pass rate, for pass/fail); `None` without trials.
    pub fn mean(&self) -> Option<f64> {
        (self.trials > 0).then(|| self.sum / self.trials as f64)
    }
}

/// How a case's p-value was computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CaseTestMethod {
    /// Fisher's exact test (pass/fail trials).
    Fisher,
    /// Every split of the case's trials into the two arms counted.
    ExactPermutation {
        /// The number of splits.
        splits: u64,
    },
    /// Random splits; p = (b + 1) / (m + 1).
    MonteCarloPermutation {
        /// m.
        resamples: u32,
        /// Seed of the stream.
        seed: u64,
    },
}

impl CaseTestMethod {
    /// `Fisher's exact test`, `exact permutation test`, ...
    pub fn label(&self) -> &'static str {
        match self {
            CaseTestMethod::Fisher => "Fisher's exact test",
            CaseTestMethod::ExactPermutation { .. } => "exact permutation test",
            CaseTestMethod::MonteCarloPermutation { .. } => "Monte-Carlo permutation test",
        }
    }
}

/// What a report may say about one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseFinding {
    /// Shown worse with the skill: the only per-case finding that fails a CI job.
    Worse,
    /// Shown better with the skill.
    Better,
    /// Not shown either way at the run's level: reported, never failed.
    NotShown,
}

/// The exact test of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseTest {
    /// The baseline trials.
    pub baseline: ArmSample,
    /// The with-skill trials.
    pub skill: ArmSample,
    /// Two-sided exact p-value of this case alone.
    pub p: f64,
    /// Holm's adjusted p over every tested case of the run.
    pub adjusted_p: f64,
    /// How `p` was computed.
    pub method: CaseTestMethod,
    /// The finding at the run's level.
    pub finding: CaseFinding,
    /// Newcombe's interval of the difference of pass rates, for pass/fail trials; a report
    /// draws it only for a case with a finding.
    pub interval: Option<Interval>,
}

impl CaseTest {
    /// `Fisher's exact test p = 1.000, Holm-adjusted over 87 cases 1.000`.
    pub fn describe(&self, cases: usize) -> String {
        format!(
            "{} p = {:.3}, Holm-adjusted over {cases} cases {:.3}",
            self.method.label(),
            self.p,
            self.adjusted_p
        )
    }
}

/// Test every case: `cases` holds each case's baseline and with-skill trial values (on
/// [0, 1]); `level` is the run's confidence level; `seed` seeds the Monte-Carlo tests.
/// Returns one test per case with trials on both sides, in the given order (`None` for the
/// others).
pub fn case_tests(cases: &[(Vec<f64>, Vec<f64>)], level: f64, seed: u64) -> Vec<Option<CaseTest>> {
    let raw: Vec<Option<(f64, CaseTestMethod)>> = cases
        .iter()
        .map(|(b, s)| two_sample_p(b, s, seed))
        .collect();
    let tested: Vec<f64> = raw.iter().flatten().map(|(p, _)| *p).collect();
    let mut adjusted = holm(&tested).into_iter();
    let alpha = 1.0 - level;
    cases
        .iter()
        .zip(raw)
        .map(|((b, s), raw)| {
            let (p, method) = raw?;
            let adjusted_p = adjusted.next().unwrap_or(1.0);
            let baseline = sample(b);
            let skill = sample(s);
            let finding =
                match skill.sum / skill.trials as f64 - baseline.sum / baseline.trials as f64 {
                    d if adjusted_p < alpha && d < 0.0 => CaseFinding::Worse,
                    d if adjusted_p < alpha && d > 0.0 => CaseFinding::Better,
                    _ => CaseFinding::NotShown,
                };
            let interval = (method == CaseTestMethod::Fisher)
                .then(|| {
                    newcombe_interval(
                        (skill.sum.round() as u64, skill.trials as u64),
                        (baseline.sum.round() as u64, baseline.trials as u64),
                        level,
                    )
                    .ok()
                })
                .flatten();
            Some(CaseTest {
                baseline,
                skill,
                p,
                adjusted_p,
                method,
                finding,
                interval,
            })
        })
        .collect()
}

fn sample(values: &[f64]) -> ArmSample {
    ArmSample {
        trials: values.len(),
        sum: values.iter().sum(),
    }
}

/// Holm's step-down adjusted p-values, in the order given: the k-th smallest p becomes
/// max over j ≤ k of min(1, (m − j + 1) · p_(j)).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    let mut adjusted = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The two-sided exact p of "both samples come from one distribution" on the with-skill sum;
/// `None` when a side has no trial.
pub fn two_sample_p(baseline: &[f64], skill: &[f64], seed: u64) -> Option<(f64, CaseTestMethod)> {
    if baseline.is_empty() || skill.is_empty() {
        return None;
    }
    let binary = baseline.iter().chain(skill).all(|v| *v == 0.0 || *v == 1.0);
    let (lower, upper, method) = if binary {
        let (l, u) = fisher_tails(baseline, skill);
        (l, u, CaseTestMethod::Fisher)
    } else {
        permutation_tails(baseline, skill, seed)
    };
    Some(((2.0 * lower.min(upper)).min(1.0), method))
}

/// P(X ≤ x) and P(X ≥ x) for the with-skill passes X under the hypergeometric law.
fn fisher_tails(baseline: &[f64], skill: &[f64]) -> (f64, f64) {
    let count = |v: &[f64]| v.iter().filter(|x| **x == 1.0).count() as u64;
    let (nb, ns) = (baseline.len() as u64, skill.len() as u64);
    let observed = count(skill);
    let passes = count(baseline) + observed;
    let total = nb + ns;
    let lowest = passes.saturating_sub(nb);
    let highest = passes.min(ns);
    let pmf = |k: u64| {
        (ln_binomial(passes, k) + ln_binomial(total - passes, ns - k) - ln_binomial(total, ns))
            .exp()
    };
    let lower: f64 = (lowest..=observed).map(pmf).sum();
    let upper: f64 = (observed..=highest).map(pmf).sum();
    (lower.min(1.0), upper.min(1.0))
}

/// Lower and upper tails of the with-skill sum over splits of all the trials.
fn permutation_tails(baseline: &[f64], skill: &[f64], seed: u64) -> (f64, f64, CaseTestMethod) {
    let all: Vec<f64> = baseline.iter().chain(skill).copied().collect();
    let k = skill.len();
    let observed: f64 = skill.iter().sum();
    let scale: f64 = all.iter().map(|v| v.abs()).sum::<f64>().max(1.0);
    let tol = super::stats::PERMUTATION_TIE_TOLERANCE * scale;
    let splits = ln_binomial(all.len() as u64, k as u64).exp();
    if splits <= MAX_EXACT_SPLITS {
        let (mut low, mut high, mut count) = (0u64, 0u64, 0u64);
        each_split_sum(&all, k, 0, 0.0, &mut |sum| {
            count += 1;
            low += u64::from(sum <= observed + tol);
            high += u64::from(sum >= observed - tol);
        });
        let c = count as f64;
        return (
            low as f64 / c,
            high as f64 / c,
            CaseTestMethod::ExactPermutation { splits: count },
        );
    }
    let mut rng = SplitMix64::new(seed);
    let mut shuffled = all.clone();
    let (mut low, mut high) = (0u32, 0u32);
    for _ in 0..MONTE_CARLO_SPLITS {
        // A partial Fisher-Yates shuffle puts a uniform random k-subset first.
        for i in 0..k {
            let j = i + rng.below((shuffled.len() - i) as u64) as usize;
            shuffled.swap(i, j);
        }
        let sum: f64 = shuffled[..k].iter().sum();
        low += u32::from(sum <= observed + tol);
        high += u32::from(sum >= observed - tol);
    }
    let m = f64::from(MONTE_CARLO_SPLITS);
    (
        (f64::from(low) + 1.0) / (m + 1.0),
        (f64::from(high) + 1.0) / (m + 1.0),
        CaseTestMethod::MonteCarloPermutation {
            resamples: MONTE_CARLO_SPLITS,
            seed,
        },
    )
}

/// Calls `f` with the sum of every `k`-subset of `values[from..]` plus `acc`.
fn each_split_sum(values: &[f64], k: usize, from: usize, acc: f64, f: &mut impl FnMut(f64)) {
    if k == 0 {
        f(acc);
        return;
    }
    for i in from..=values.len() - k {
        each_split_sum(values, k - 1, i + 1, acc + values[i], f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::Condition;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn fisher_matches_published_values() {
        // 3/3 passes without the skill, 0/3 with it: one table of 20 is as extreme each way,
        // one-sided p = 1/20, two-sided 0.1 (scipy.stats.fisher_exact(..., 'less') = 0.05).
        let (p, m) = two_sample_p(&[1.0; 3], &[0.0; 3], 1).unwrap();
        assert!(close(p, 0.1), "{p}");
        assert_eq!(m, CaseTestMethod::Fisher);
        // A single-trial drop: p = 1.
        let (p, _) = two_sample_p(&[1.0], &[0.0], 1).unwrap();
        assert!(close(p, 1.0), "{p}");
        // 10/10 against 2/10: one table is as extreme, C(12, 2) / C(20, 10) = 66 / 184,756
        // (scipy.stats.fisher_exact([[2, 8], [10, 0]], alternative='less')).
        let mut skill = vec![1.0, 1.0];
        skill.extend([0.0; 8]);
        let (p, _) = two_sample_p(&[1.0; 10], &skill, 1).unwrap();
        assert!((p - 2.0 * 66.0 / 184_756.0).abs() < 1e-15, "{p}");
    }

    #[test]
    fn scores_are_tested_by_counting_every_split() {
        // 3 against 3 with no ties: the observed split is the most extreme of 20.
        let (p, m) = two_sample_p(&[0.9, 0.8, 0.7], &[0.1, 0.2, 0.3], 1).unwrap();
        assert!(close(p, 0.1), "{p}");
        assert_eq!(m, CaseTestMethod::ExactPermutation { splits: 20 });
        // On 0/1 values the permutation count and Fisher agree.
        let b = [1.0, 1.0, 0.0, 1.0];
        let s = [0.0, 0.0, 1.0, 0.0, 0.0];
        let (fisher, _) = two_sample_p(&b, &s, 1).unwrap();
        let (low, high, _) = permutation_tails(&b, &s, 1);
        assert!(close(fisher, (2.0 * low.min(high)).min(1.0)));
        // Many trials: Monte-Carlo, near the normal approximation's answer.
        let b: Vec<f64> = (0..30).map(|i| 0.5 + (i % 5) as f64 / 10.0).collect();
        let s: Vec<f64> = b.iter().map(|v| v - 0.3).collect();
        let (p, m) = two_sample_p(&b, &s, 7).unwrap();
        assert!(matches!(m, CaseTestMethod::MonteCarloPermutation { .. }));
        assert!(p < 0.001, "{p}");
    }

    #[test]
    fn holm_adjusts_step_down_and_keeps_order() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.5]);
        // sorted: 0.01*4 = .04, 0.03*3 = .09, 0.04*2 = .08 -> .09 (monotone), 0.5*1 -> .5
        let expected = [0.04, 0.09, 0.09, 0.5];
        for (a, e) in adj.iter().zip(expected) {
            assert!(close(*a, e), "{adj:?}");
        }
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn a_case_is_worse_only_when_its_adjusted_test_says_so() {
        // 87 cases, one with a single-trial drop at 3 attempts, one with 20 attempts that
        // collapsed: only the second is worse.
        let mut cases = vec![(vec![1.0; 3], vec![1.0; 3]); 85];
        cases.push((vec![1.0; 3], vec![1.0, 1.0, 0.0]));
        cases.push((vec![1.0; 20], vec![0.0; 20]));
        let tests = case_tests(&cases, 0.95, 1);
        assert_eq!(tests[85].as_ref().unwrap().finding, CaseFinding::NotShown);
        let worse = tests[86].as_ref().unwrap();
        assert_eq!(worse.finding, CaseFinding::Worse, "{worse:?}");
        assert!(worse.interval.unwrap().high < 0.0);
        assert_eq!(case_tests(&[(vec![], vec![1.0])], 0.95, 1), vec![None]);
    }

    /// Issue 35's SkillsBench shape (tests/fixtures/skillsbench/issue35-tasks.csv): 87 tasks x
    /// 3 attempts a side, 18 with a negative lift, 16 of them single-trial drops. None of the 18
    /// is worse at 95%: a single-trial drop has Fisher's p = 1, and at 3 against 3 no split
    /// reaches a two-sided p below 0.1. (That the JUnit report then fails none of them is
    /// client-cli's junit_check, through the writer itself.)
    #[test]
    fn skillsbench_single_trial_drops_are_not_failed() {
        let table = include_str!("../../../tests/fixtures/skillsbench/issue35-tasks.csv");
        let counts = crate::scoring::calibration::task_counts(table).unwrap();
        assert_eq!(counts.len(), 87);
        let cases: Vec<(Vec<f64>, Vec<f64>)> = counts
            .iter()
            .map(|c| {
                let arm = |condition| c.values(condition);
                (arm(Condition::Baseline), arm(Condition::Skill))
            })
            .collect();
        let single_drops = counts
            .iter()
            .filter(|c| c.baseline_passed == c.skill_passed + 1)
            .count();
        assert_eq!(single_drops, 16);
        let tests = case_tests(&cases, 0.95, 1);
        for (c, t) in counts.iter().zip(&tests) {
            let t = t.as_ref().expect("both arms have trials");
            assert_eq!(t.finding, CaseFinding::NotShown, "{}: {t:?}", c.task);
            if c.baseline_passed == c.skill_passed + 1 {
                assert!(close(t.p, 1.0), "{}: {t:?}", c.task);
            }
            if (c.baseline_passed, c.skill_passed) == (3, 0) {
                assert!(close(t.p, 0.1), "{}: {t:?}", c.task);
            }
        }
    }
}
