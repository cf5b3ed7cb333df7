//! A change of trigger rate paired by query: the same queries asked with two descriptions of a
//! skill (`skillwatch trigger --description-file`), or of one skill version on two models
//! (`skillwatch compare --triggers`). The estimand is the mean over queries of the change in
//! each query's trigger probability, the queries standing for the prompts users type.
//!
//! Queries, not trials, are the independent units: two runs of one query share its wording,
//! so pooling trials would treat them as independent and make the interval too narrow.
//! Per query the change is d = rate after − rate before, in [−1, 1]; with one run per query
//! d is −1, 0 or +1 and the pairs form the paired 2×2 table of McNemar.
//!
//! The interval is Agresti and Min's (2005) adjusted Wald interval for paired proportions:
//! half an observation added to each of the table's four cells (a pseudo-query of +1, one of
//! −1 and two of 0, each of weight 1/2) before the Wald interval of the mean. The plain Wald
//! or t interval of d collapses to a point when every query moved alike (all d = 0 with a
//! rate near 0 or 1 is the common case here) and undercovers there; the adjustment keeps a
//! width that reflects how few queries there are. With r runs per query each query's d is an
//! average of r trials, so the pseudo-observations are worth 1/r of a query (half a trial per
//! cell): adding whole pseudo-queries overcovers (99% and more at 95% with three runs). The
//! coverage is checked by simulation below and reported in docs/scoring.md.
//!
//! The verdict comes from [`super::verdict::decide`], as every verdict does: it reads this
//! interval and the exact sign-flip test of the per-query changes.

use serde::{Deserialize, Serialize};

use super::stats::{
    DeltaSummary, Interval, IntervalMethod, PermutationParams, binomial_variance_floor,
    normal_quantile, sample_sd, sign_flip_p_value,
};
use super::verdict::{Decision, VerdictParams, decide};

/// One query's triggered and decided trials in one arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Trials where the agent picked the skill.
    pub hits: u64,
    /// Trials whose decision was seen.
    pub trials: u64,
}

impl Counts {
    fn rate(self) -> Option<f64> {
        (self.trials > 0).then(|| self.hits as f64 / self.trials as f64)
    }
}

/// One query in both arms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairedQuery {
    /// The reference arm (the skill's own description, or the reference model).
    pub before: Counts,
    /// The candidate arm.
    pub after: Counts,
}

/// Which way of a rate is good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Recall: a rise is an improvement.
    Higher,
    /// A false-trigger rate: a rise is a regression.
    Lower,
}

/// The change of one rate between the arms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateChange {
    /// Queries decided in both arms (the others are left out).
    pub queries: usize,
    /// Mean per-query rate before.
    pub before: Option<f64>,
    /// Mean per-query rate after.
    pub after: Option<f64>,
    /// The interval of after − before (its estimate is the mean per-query change).
    pub interval: Option<Interval>,
    /// The verdict on the change (improves when recall rises or false triggers fall).
    pub decision: Decision,
}

/// The adjusted Wald interval of the mean of `changes` (per-query rate changes, each an
/// average of `runs` trials per arm on average); `None` with no query.
pub fn paired_interval(changes: &[f64], runs: f64, level: f64) -> Option<Interval> {
    let n = changes.len();
    if n == 0 || !(level > 0.0 && level < 1.0) || changes.iter().any(|d| !d.is_finite()) {
        return None;
    }
    let weight = 1.0 / runs.max(1.0);
    // Half an observation per cell, a query worth `runs` trials: +1 and −1 of weight w/2
    // each, 0 of weight w.
    let total = n as f64 + 2.0 * weight;
    let sum: f64 = changes.iter().sum();
    let squares: f64 = changes.iter().map(|d| d * d).sum::<f64>() + weight;
    let centre = sum / total;
    let variance = (squares / total - centre * centre).max(0.0);
    let half = normal_quantile(1.0 - (1.0 - level) / 2.0) * (variance / total).sqrt();
    Some(Interval {
        estimate: sum / n as f64,
        low: (centre - half).max(-1.0),
        high: (centre + half).min(1.0),
        level,
        method: IntervalMethod::PairedAdjustedWald,
        n,
    })
}

/// The change of the rate over `pairs`, its interval at `params.level` and the verdict;
/// `what` names the rate in the verdict's reason ("recall", "false-trigger rate").
pub fn rate_change(
    pairs: &[PairedQuery],
    better: Better,
    params: &VerdictParams,
    what: &str,
) -> RateChange {
    let decided: Vec<(f64, f64, f64)> = pairs
        .iter()
        .filter_map(|p| {
            let runs = (p.before.trials + p.after.trials) as f64 / 2.0;
            Some((p.before.rate()?, p.after.rate()?, runs))
        })
        .collect();
    let n = decided.len();
    let mean = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
        (n > 0).then(|| decided.iter().map(f).sum::<f64>() / n as f64)
    };
    let changes: Vec<f64> = decided.iter().map(|(b, a, _)| a - b).collect();
    let runs = mean(&|d| d.2).unwrap_or(1.0);
    let interval = paired_interval(&changes, runs, params.level);
    // The verdict reads the change in the good direction, so "regresses" means worse
    // whichever way the rate is good.
    let sign = match better {
        Better::Higher => 1.0,
        Better::Lower => -1.0,
    };
    let signed: Vec<f64> = changes.iter().map(|d| sign * d).collect();
    let oriented = interval.map(|i| {
        let (low, high) = if sign > 0.0 {
            (i.low, i.high)
        } else {
            (-i.high, -i.low)
        };
        Interval {
            estimate: sign * i.estimate,
            low,
            high,
            ..i
        }
    });
    let summary = DeltaSummary {
        n,
        mean: oriented.map(|i| i.estimate),
        t_interval: oriented,
        bootstrap_interval: None,
        p_value: (n > 0)
            .then(|| sign_flip_p_value(&signed, &PermutationParams::default()).ok())
            .flatten(),
        sd: sample_sd(&signed),
        variance_floor: floor(pairs),
    };
    let named = match better {
        Better::Higher => format!("{what} change"),
        Better::Lower => format!("{what} fall"),
    };
    RateChange {
        queries: n,
        before: mean(&|d| d.0),
        after: mean(&|d| d.1),
        interval,
        decision: decide(&summary, params, &named),
    }
}

/// The binomial variance floor of the per-query changes: the trigger rates pooled per arm,
/// each query's change averaging its runs.
fn floor(pairs: &[PairedQuery]) -> Option<f64> {
    let decided: Vec<&PairedQuery> = pairs
        .iter()
        .filter(|p| p.before.trials > 0 && p.after.trials > 0)
        .collect();
    let total = |f: fn(&PairedQuery) -> Counts| {
        decided.iter().fold((0.0, 0.0), |(h, t), p| {
            (h + f(p).hits as f64, t + f(p).trials as f64)
        })
    };
    let (before, after) = (total(|p| p.before), total(|p| p.after));
    let runs: Vec<usize> = decided
        .iter()
        .map(|p| {
            ((p.before.trials + p.after.trials) as f64 / 2.0)
                .round()
                .max(1.0) as usize
        })
        .collect();
    binomial_variance_floor(before.0, after.0, (before.1, after.1), &runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::rng::SplitMix64;
    use crate::scoring::verdict::Verdict;

    fn pair(before: (u64, u64), after: (u64, u64)) -> PairedQuery {
        PairedQuery {
            before: Counts {
                hits: before.0,
                trials: before.1,
            },
            after: Counts {
                hits: after.0,
                trials: after.1,
            },
        }
    }

    /// One run per query: Agresti and Min's interval from the paired table. 20 queries,
    /// 8 moved up, 1 down, 11 alike: centre (8 − 1)/22, variance (9 + 1)/22 − centre².
    #[test]
    fn one_run_per_query_is_agresti_and_mins_interval() {
        let mut pairs = vec![pair((0, 1), (1, 1)); 8];
        pairs.push(pair((1, 1), (0, 1)));
        pairs.extend(vec![pair((1, 1), (1, 1)); 6]);
        pairs.extend(vec![pair((0, 1), (0, 1)); 5]);
        let c = rate_change(&pairs, Better::Higher, &VerdictParams::default(), "recall");
        let i = c.interval.unwrap();
        let centre: f64 = 7.0 / 22.0;
        let half = 1.959963984540054 * ((10.0 / 22.0 - centre * centre) / 22.0).sqrt();
        assert!((i.low - (centre - half)).abs() < 1e-12, "{i:?}");
        assert!((i.high - (centre + half)).abs() < 1e-12, "{i:?}");
        assert!((i.estimate - 0.35).abs() < 1e-12);
        assert_eq!(c.queries, 20);
        assert!((c.before.unwrap() - 0.35).abs() < 1e-12 && (c.after.unwrap() - 0.7).abs() < 1e-12);
        // 9 queries moved, 8 of them up: sign-flip p = 20/512 (estimated from 10,000 random
        // patterns at 20 queries).
        assert_eq!(
            c.decision.verdict,
            Verdict::Improves,
            "{}",
            c.decision.reason
        );
        assert!((c.decision.p.unwrap() - 20.0 / 512.0).abs() < 0.01);
    }

    #[test]
    fn a_rise_in_false_triggers_is_a_regression_and_undecided_queries_are_left_out() {
        let mut pairs = vec![pair((0, 2), (2, 2)); 8];
        pairs.extend(vec![pair((0, 2), (0, 2)); 4]);
        pairs.push(pair((0, 0), (2, 2)));
        let c = rate_change(
            &pairs,
            Better::Lower,
            &VerdictParams::default(),
            "false-trigger rate",
        );
        assert_eq!(c.queries, 12);
        let i = c.interval.unwrap();
        assert!(
            i.low > 0.0 && (i.estimate - 8.0 / 12.0).abs() < 1e-12,
            "{i:?}"
        );
        assert_eq!(
            c.decision.verdict,
            Verdict::Regresses,
            "{}",
            c.decision.reason
        );
        let none = rate_change(&[], Better::Higher, &VerdictParams::default(), "recall");
        assert_eq!(none.decision.verdict, Verdict::NotMeasured);
        assert!(none.interval.is_none());
    }

    #[test]
    fn the_interval_stays_inside_minus_one_to_one_and_has_width_when_no_query_moved() {
        let same = vec![pair((3, 3), (3, 3)); 20];
        let i = rate_change(&same, Better::Higher, &VerdictParams::default(), "recall")
            .interval
            .unwrap();
        assert!(
            i.low < 0.0 && i.high > 0.0 && i.high - i.low > 0.01,
            "{i:?}"
        );
        let up = vec![pair((0, 1), (1, 1)); 3];
        let i = paired_interval(&[1.0, 1.0, 1.0], 1.0, 0.95).unwrap();
        assert!(i.high <= 1.0 && i.low > 0.0, "{i:?} {up:?}");
    }

    /// Populations of queries with known trigger probabilities (before, after): each
    /// simulated query draws one pair, the truth is the population's mean change.
    const POPULATIONS: [(&str, &[(f64, f64)]); 6] = [
        (
            "the edit helps",
            &[
                (0.2, 0.5),
                (0.5, 0.8),
                (0.7, 0.9),
                (0.4, 0.4),
                (0.9, 0.95),
                (0.1, 0.3),
            ],
        ),
        (
            "no change",
            &[(0.3, 0.3), (0.6, 0.6), (0.8, 0.8), (0.5, 0.5), (0.1, 0.1)],
        ),
        (
            "the edit hurts",
            &[(0.9, 0.6), (0.7, 0.7), (0.5, 0.2), (0.8, 0.85), (0.6, 0.3)],
        ),
        ("mixed", &[(0.2, 0.8), (0.8, 0.2), (0.5, 0.6), (0.4, 0.7)]),
        (
            "near 1",
            &[(0.85, 0.95), (0.9, 0.9), (0.7, 0.95), (0.95, 0.99)],
        ),
        ("rare", &[(0.05, 0.15), (0.1, 0.1), (0.2, 0.3), (0.02, 0.1)]),
    ];

    /// How often the 95% interval holds the true mean change, over `reps` simulated A/B
    /// runs of `queries` queries with `runs` trials per query and arm.
    fn coverage(
        population: &[(f64, f64)],
        queries: usize,
        runs: u64,
        reps: usize,
        rng: &mut SplitMix64,
    ) -> f64 {
        let truth = population.iter().map(|(b, a)| a - b).sum::<f64>() / population.len() as f64;
        let mut held = 0;
        for _ in 0..reps {
            let changes: Vec<f64> = (0..queries)
                .map(|_| {
                    let (b, a) = population[rng.below(population.len() as u64) as usize];
                    let hits = |p: f64, rng: &mut SplitMix64| {
                        (0..runs).filter(|_| rng.bernoulli(p)).count() as f64
                    };
                    let before = hits(b, rng);
                    (hits(a, rng) - before) / runs as f64
                })
                .collect();
            let interval = paired_interval(&changes, runs as f64, 0.95);
            if interval.is_some_and(|i| i.contains(truth)) {
                held += 1;
            }
        }
        held as f64 / reps as f64
    }

    /// The acceptance of issue 24: a scripted model with known trigger probabilities, the
    /// 95% interval's coverage within 93-97% (20 and 40 queries, one and three runs per
    /// query; 10 queries near 0 or 1 overcover, docs/scoring.md).
    #[test]
    fn the_ab_interval_covers_within_93_to_97_percent_at_95() {
        let mut rng = SplitMix64::new(24);
        let mut failures = Vec::new();
        for (name, population) in POPULATIONS {
            for queries in [10, 20, 40] {
                for runs in [1, 3] {
                    let c = coverage(population, queries, runs, 5000, &mut rng);
                    eprintln!("{name:<15} {queries:>2} queries × {runs} run(s): {c:.3}");
                    // 10 queries: printed for docs/scoring.md, not held to the band.
                    if queries >= 20 && !(0.93..=0.97).contains(&c) {
                        failures.push(format!("{name}, {queries} queries, {runs} runs: {c:.3}"));
                    }
                }
            }
        }
        assert!(
            failures.is_empty(),
            "coverage outside 93-97%: {failures:#?}"
        );
    }
}
