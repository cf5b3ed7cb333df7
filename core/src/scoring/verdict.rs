//! The verdict rule: the one function every place that says "improves", "regresses", "no
//! change" or "inconclusive" calls (a run's summary, `compare`, SW501, code lenses, JUnit,
//! markdown, exit codes). Nothing else in skillwatch turns numbers into a verdict.
//!
//! It reads the per-case paired values of one estimand (a run's per-case outcome deltas, or a
//! comparison's per-case lift differences) through their [`DeltaSummary`], and answers:
//!
//! 1. **not measured** when no case had a scored pair;
//! 2. **inconclusive (n too small)** when the design cannot show a difference at all: with n
//!    cases the exact sign-flip test cannot go below 2^(1−n), so below [`min_cases`] (6 at
//!    95%) no data, however lopsided, is evidence at that level;
//! 3. **improves / regresses** when the exact sign-flip p is below 1 − level, the chosen
//!    interval excludes 0, and the mean moves by at least `min_effect`. Requiring the exact
//!    test as well as the interval is what keeps a zero-width interval (every case moved by
//!    the same amount) from deciding alone: its width says nothing about the spread, while
//!    the test's p = 2^(1−n) says exactly how likely that pattern is under no effect;
//! 4. **no change** only from an equivalence test that can fail: both one-sided tests
//!    (TOST) reject a change of `min_effect` or more at 1 − level, with the variance of a
//!    per-case value taken as max(sd², floor), the floor being the binomial variance at the
//!    arms' observed (shrunk) rates ([`DeltaSummary::variance_floor`]). Cases that all moved
//!    by exactly 0 have no spread, but eight passes a side do not rule out a drop of 0.2:
//!    the floor says so, and the verdict is "inconclusive";
//! 5. **inconclusive** otherwise.
//!
//! The sign-flip test is exact under "the skill does nothing" (baseline and with-skill trials
//! of a case exchangeable), so rule 3 cannot fire on more than 1 − level of no-effect skills,
//! whatever the interval does at small n. The calibration bench measures it
//! (`cargo bench -p skillwatch-core --bench calibration`, docs/scoring.md).

use serde::{Deserialize, Serialize};

use super::stats::{DeltaSummary, Interval, IntervalMethod};

/// What a verdict says about the skill (or, in a comparison, about the change of its lift).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Established and material gain.
    #[serde(alias = "improved")]
    Improves,
    /// Established and material loss: the CI failure.
    #[serde(alias = "regressed")]
    Regresses,
    /// The data rule out a material change.
    #[serde(alias = "unchanged")]
    NoChange,
    /// The data cannot tell (too few cases, or an interval too wide).
    Inconclusive,
    /// Nothing was scored.
    NotMeasured,
}

impl Verdict {
    /// The words shown to people: `improves`, `regresses`, `no change`, `inconclusive`,
    /// `not measured`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improves => "improves",
            Verdict::Regresses => "regresses",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotMeasured => "not measured",
        }
    }

    /// The spelling in JSON and the history database: `improves`, `regresses`, `no_change`,
    /// `inconclusive`, `not_measured`.
    pub fn code(self) -> &'static str {
        match self {
            Verdict::Improves => "improves",
            Verdict::Regresses => "regresses",
            Verdict::NoChange => "no_change",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotMeasured => "not_measured",
        }
    }

    /// The one verdict that fails a CI job (exit status 1, a JUnit failure, SW501).
    pub fn fails(self) -> bool {
        self == Verdict::Regresses
    }
}

/// Which interval a verdict reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum VerdictInterval {
    /// Student's t (the default).
    #[default]
    StudentT,
    /// The expanded percentile bootstrap, where it is offered (see
    /// [`super::stats::BootstrapParams::min_cases`]); below that, the t interval is used and
    /// the reason says so.
    Bootstrap,
}

/// The settings of the rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VerdictParams {
    /// Confidence level; 1 − level is the test's size. It must be the level the summary's
    /// intervals were built at.
    pub level: f64,
    /// The smallest change that counts, on the [0, 1] metric scale (0.05: ACES's lift PASS
    /// band, the effect floor regression trackers use).
    pub min_effect: f64,
    /// The interval the rule reads.
    pub interval: VerdictInterval,
}

impl Default for VerdictParams {
    fn default() -> Self {
        Self {
            level: 0.95,
            min_effect: 0.05,
            interval: VerdictInterval::StudentT,
        }
    }
}

/// A verdict with everything behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The verdict.
    pub verdict: Verdict,
    /// Independent units (cases) the values rest on.
    pub n: usize,
    /// When the design is too small to show any difference: the smallest n that can.
    pub needed_cases: Option<usize>,
    /// The mean of the per-case values.
    pub estimate: Option<f64>,
    /// The interval the rule read.
    pub interval: Option<Interval>,
    /// The exact (or Monte-Carlo) sign-flip p-value.
    pub p: Option<f64>,
    /// One sentence with the numbers, starting with the verdict.
    pub reason: String,
    /// The equivalence test behind "no change" (absent below the sign-flip floor or without
    /// a variance floor).
    #[serde(default)]
    pub equivalence: Option<Equivalence>,
}

/// Both one-sided tests of "the change is at least `margin`" (TOST), on the per-case values
/// with a variance that cannot be zero.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Equivalence {
    /// The margin: `min_effect`.
    pub margin: f64,
    /// mean − t(level, n − 1)·se: the lower bound of the (2·level − 1) interval.
    pub low: f64,
    /// mean + t(level, n − 1)·se.
    pub high: f64,
    /// The standard error used: √(max(sd², floor) / n).
    pub se: f64,
    /// Whether the floor, not the sample's own spread, set the standard error.
    pub floored: bool,
    /// Both one-sided tests reject: the change lies within ±margin at the level.
    pub shown: bool,
}

/// The equivalence test of `summary` at `level` against ±`margin`; `None` without a variance
/// floor or below two cases.
pub fn equivalence(summary: &DeltaSummary, level: f64, margin: f64) -> Option<Equivalence> {
    let mean = summary.mean?;
    let floor = summary.variance_floor?;
    if summary.n < 2 {
        return None;
    }
    let sample = summary.sd.unwrap_or(0.0).powi(2);
    let n = summary.n as f64;
    let se = (sample.max(floor) / n).sqrt();
    let half = super::stats::t_quantile(level, n - 1.0) * se;
    let (low, high) = (mean - half, mean + half);
    Some(Equivalence {
        margin,
        low,
        high,
        se,
        floored: floor > sample,
        shown: low > -margin && high < margin,
    })
}

impl Decision {
    /// The short label for lenses and tables: the verdict's words, with "(n too small)" when
    /// the design could not show a difference at all.
    pub fn label(&self) -> String {
        if self.needed_cases.is_some() {
            format!("{} (n too small)", self.verdict.as_str())
        } else {
            self.verdict.as_str().to_owned()
        }
    }
}

/// The smallest number of cases whose exact sign-flip test can reach p < 1 − `level`:
/// the smallest n with 2^(1−n) < 1 − level (6 at 95%, 5 at 90%, 8 at 99%).
pub fn min_cases(level: f64) -> usize {
    let alpha = 1.0 - level;
    (1..=64usize)
        .find(|&n| 2f64.powi(1 - n as i32) < alpha)
        .unwrap_or(64)
}

/// Apply the rule to `summary`, the per-case values of one estimand; `what` names it in the
/// reason ("lift", "lift change").
pub fn decide(summary: &DeltaSummary, params: &VerdictParams, what: &str) -> Decision {
    let n = summary.n;
    let mut d = Decision {
        verdict: Verdict::NotMeasured,
        n,
        needed_cases: None,
        estimate: summary.mean,
        interval: None,
        p: summary.p_value.map(|p| p.p),
        reason: String::new(),
        equivalence: None,
    };
    let Some(mean) = summary.mean else {
        d.reason = "not measured: no case had a scored pair".into();
        return d;
    };
    let level = percent(params.level);
    let needed = min_cases(params.level);
    if n < needed {
        d.verdict = Verdict::Inconclusive;
        d.needed_cases = Some(needed);
        d.interval = summary.t_interval;
        d.reason = format!(
            "inconclusive: {n} case{} cannot show a difference at {level}; at least {needed} are needed",
            if n == 1 { "" } else { "s" }
        );
        return d;
    }
    let (interval, note) = chosen_interval(summary, params);
    d.interval = interval;
    let (Some(ci), Some(p)) = (interval, d.p) else {
        d.verdict = Verdict::Inconclusive;
        d.reason = format!("inconclusive: no interval for {n} cases");
        return d;
    };
    let eq = equivalence(summary, params.level, params.min_effect);
    d.equivalence = eq;
    let shown = described(what, mean, &ci, p, note.as_deref());
    (d.verdict, d.reason) = judge(mean, &ci, p, eq, params, &shown);
    d
}

/// Rules 3 to 5 on a summary with enough cases: the verdict and its reason; `shown` describes
/// the estimate, interval and test.
fn judge(
    mean: f64,
    ci: &Interval,
    p: f64,
    eq: Option<Equivalence>,
    params: &VerdictParams,
    shown: &str,
) -> (Verdict, String) {
    let alpha = 1.0 - params.level;
    let m = params.min_effect;
    let significant = p < alpha && ci.excludes_zero();
    let real = |tail: &str| {
        if significant {
            format!("the change is real but smaller than {m}{tail}")
        } else {
            String::new()
        }
    };
    if significant && mean.abs() >= m {
        let v = if mean > 0.0 {
            Verdict::Improves
        } else {
            Verdict::Regresses
        };
        return (v, format!("{}: {shown}", v.as_str()));
    }
    if let Some(e) = eq.filter(|e| e.shown) {
        return (
            Verdict::NoChange,
            format!(
                "no change: {shown}; {}the equivalence test rules out changes of {m} or more ({})",
                real(": "),
                bounds(&e, params.level)
            ),
        );
    }
    let reason = if significant || (ci.low > -m && ci.high < m) {
        let test = eq.map_or_else(
            || "no equivalence test is possible without the trials' variance".to_string(),
            |e| {
                let why = if e.floored {
                    ", the variance no smaller than the binomial variance at the observed rates"
                } else {
                    ""
                };
                format!(
                    "the equivalence test cannot rule out changes of {m} ({}{why})",
                    bounds(&e, params.level)
                )
            },
        );
        format!("{}{test}", real(", and "))
    } else if ci.excludes_zero() {
        format!(
            "the interval excludes 0 but the exact sign-flip test does not reach p < {alpha:.2}"
        )
    } else {
        format!("the interval includes 0 and changes of {m} or more")
    };
    (
        Verdict::Inconclusive,
        format!("inconclusive: {shown}; {reason}"),
    )
}

/// `90% equivalence bounds [-0.031, +0.028]`.
fn bounds(e: &Equivalence, level: f64) -> String {
    format!(
        "{} equivalence bounds [{:+.3}, {:+.3}]",
        percent(2.0 * level - 1.0),
        e.low,
        e.high
    )
}

/// The interval the rule reads, and a note when the bootstrap was asked for but not offered.
fn chosen_interval(
    summary: &DeltaSummary,
    params: &VerdictParams,
) -> (Option<Interval>, Option<String>) {
    match params.interval {
        VerdictInterval::StudentT => (summary.t_interval, None),
        VerdictInterval::Bootstrap => match summary.bootstrap_interval {
            Some(b) => (Some(b), None),
            None => (
                summary.t_interval,
                Some(format!(
                    "the bootstrap is not offered for {} cases (it undercovers there), so the t interval is used",
                    summary.n
                )),
            ),
        },
    }
}

/// `lift -0.500, 95% t interval [-0.690, -0.310] over 8 cases, sign-flip p = 0.0078`, or for a
/// zero-width interval `all 8 cases moved by exactly -1.000 (the interval has no width), ...`.
fn described(what: &str, mean: f64, ci: &Interval, p: f64, note: Option<&str>) -> String {
    let test = format!("sign-flip p = {}", p_text(p));
    let note = note.map_or_else(String::new, |n| format!(" ({n})"));
    if ci.high - ci.low <= f64::EPSILON * mean.abs().max(1.0) {
        return format!(
            "all {} cases moved by exactly {mean:+.3} (the {} interval has no width{note}), {test}",
            ci.n,
            ci.method.label()
        );
    }
    let method = match ci.method {
        IntervalMethod::PercentileBootstrap { .. } => "bootstrap",
        _ => ci.method.label(),
    };
    format!(
        "{what} {mean:+.3}, {} {method} interval [{:+.3}, {:+.3}] over {} cases{note}, {test}",
        percent(ci.level),
        ci.low,
        ci.high,
        ci.n
    )
}

fn percent(level: f64) -> String {
    let p = level * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

fn p_text(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.4}")
    } else {
        format!("{p:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::stats::{InferenceParams, summarize_deltas};

    fn decide_on(values: &[f64]) -> Decision {
        let s = summarize_deltas(values, &InferenceParams::default()).unwrap();
        decide(&s, &VerdictParams::default(), "lift")
    }

    fn decide_floored(values: &[f64], floor: f64) -> Decision {
        let s = summarize_deltas(values, &InferenceParams::default())
            .unwrap()
            .with_floor(Some(floor));
        decide(&s, &VerdictParams::default(), "lift")
    }

    /// The "no change" from nothing: eight cases that passed on both sides moved by
    /// exactly 0, yet eight passes a side do not rule out a drop of 0.2. The floor at 8/8
    /// (shrunk to 10/12) keeps the equivalence test honest: inconclusive, and why.
    #[test]
    fn no_change_needs_an_equivalence_test_that_can_fail() {
        let floor =
            crate::scoring::stats::binomial_variance_floor(8.0, 8.0, (8.0, 8.0), &[1; 8]).unwrap();
        let d = decide_floored(&[0.0; 8], floor);
        assert_eq!(d.verdict, Verdict::Inconclusive, "{}", d.reason);
        let e = d.equivalence.unwrap();
        assert!(e.floored && !e.shown && e.low < -0.3, "{e:?}");
        assert!(
            d.reason.contains("all 8 cases moved by exactly +0.000")
                && d.reason
                    .contains("the equivalence test cannot rule out changes of 0.05")
                && d.reason.contains("90% equivalence bounds ["),
            "{}",
            d.reason
        );
        // Without a floor there is no test, so no "no change" either.
        let d = decide_on(&[0.0; 8]);
        assert_eq!(d.verdict, Verdict::Inconclusive, "{}", d.reason);
        assert!(d.equivalence.is_none());
        // 200 cases x 1 at 200/200 a side: now a drop of 0.05 is ruled out.
        let floor =
            crate::scoring::stats::binomial_variance_floor(200.0, 200.0, (200.0, 200.0), &[1; 200])
                .unwrap();
        let d = decide_floored(&[0.0; 200], floor);
        assert_eq!(d.verdict, Verdict::NoChange, "{}", d.reason);
        assert!(
            d.reason
                .contains("the equivalence test rules out changes of 0.05 or more"),
            "{}",
            d.reason
        );
    }

    #[test]
    fn min_cases_follows_the_sign_flip_floor() {
        assert_eq!(min_cases(0.95), 6);
        assert_eq!(min_cases(0.90), 5);
        assert_eq!(min_cases(0.99), 8);
        // 2^(1-n) at the minimum is below alpha, one case fewer is not.
        for level in [0.8, 0.9, 0.95, 0.99, 0.999] {
            let n = min_cases(level) as i32;
            assert!(2f64.powi(1 - n) < 1.0 - level);
            assert!(2f64.powi(2 - n) >= 1.0 - level);
        }
    }

    #[test]
    fn too_few_cases_are_inconclusive_whatever_the_data() {
        // The example: two cases that both gained exactly 1.0.
        let d = decide_on(&[1.0, 1.0]);
        assert_eq!(d.verdict, Verdict::Inconclusive);
        assert_eq!(d.needed_cases, Some(6));
        assert_eq!(
            d.reason,
            "inconclusive: 2 cases cannot show a difference at 95%; at least 6 are needed"
        );
        assert_eq!(d.label(), "inconclusive (n too small)");
        let d = decide_on(&[-0.9, -0.8, -1.0]);
        assert_eq!(
            d.reason,
            "inconclusive: 3 cases cannot show a difference at 95%; at least 6 are needed"
        );
        assert_eq!(
            decide_on(&[0.5]).reason.split(':').nth(1).unwrap(),
            " 1 case cannot show a difference at 95%; at least 6 are needed"
        );
    }

    #[test]
    fn a_zero_width_interval_never_decides_alone() {
        // Six cases all losing 1.0: the interval has no width, the exact p = 2/64 decides.
        let d = decide_on(&[-1.0; 6]);
        assert_eq!(d.verdict, Verdict::Regresses, "{}", d.reason);
        assert!(
            d.reason.contains("all 6 cases moved by exactly -1.000"),
            "{}",
            d.reason
        );
        assert!(d.reason.contains("p = 0.0312"), "{}", d.reason);
        // One case without change: five nonzero deltas cannot reach p < 0.05 (2/32).
        let mut values = vec![-1.0; 5];
        values.push(0.0);
        let d = decide_on(&values);
        assert_ne!(d.verdict, Verdict::Regresses, "{}", d.reason);
        // Every case unchanged: not "no change" from a zero-width interval.
        let d = decide_on(&[0.0; 8]);
        assert_eq!(d.verdict, Verdict::Inconclusive, "{}", d.reason);
    }

    #[test]
    fn clear_effects_need_the_test_the_interval_and_the_floor() {
        let gain = [0.3, 0.5, 0.2, 0.4, 0.6, 0.3, 0.35, 0.45];
        let d = decide_on(&gain);
        assert_eq!(d.verdict, Verdict::Improves, "{}", d.reason);
        assert!(
            d.reason
                .starts_with("improves: lift +0.388, 95% t interval ["),
            "{}",
            d.reason
        );
        let loss: Vec<f64> = gain.iter().map(|v| -v).collect();
        assert_eq!(decide_on(&loss).verdict, Verdict::Regresses);
        // Real but tiny: no change.
        let tiny = [0.02, 0.03, 0.02, 0.025, 0.03, 0.02, 0.03, 0.02];
        let d = decide_floored(&tiny, 0.001);
        assert_eq!(d.verdict, Verdict::NoChange, "{}", d.reason);
        assert!(d.reason.contains("smaller than 0.05"), "{}", d.reason);
        // With pass/fail noise behind it, the same values show a real change that an
        // equivalence test cannot bound: inconclusive.
        let d = decide_floored(&tiny, 0.5);
        assert_eq!(d.verdict, Verdict::Inconclusive, "{}", d.reason);
        assert!(
            d.reason.contains("real but smaller than 0.05"),
            "{}",
            d.reason
        );
        // Noisy: inconclusive, not no change.
        let noisy = [0.9, -0.8, 0.3, -0.4, 0.6, -0.7, 0.1, 0.2];
        let d = decide_on(&noisy);
        assert_eq!(d.verdict, Verdict::Inconclusive, "{}", d.reason);
        assert_eq!(d.needed_cases, None);
        assert_eq!(d.label(), "inconclusive");
        // Tight around 0: no change.
        let flat = [0.01, -0.01, 0.0, 0.02, -0.02, 0.01, 0.0, -0.01, 0.01, 0.0];
        assert_eq!(decide_floored(&flat, 0.001).verdict, Verdict::NoChange);
        assert_eq!(
            decide(
                &summarize_deltas(&[], &InferenceParams::default()).unwrap(),
                &VerdictParams::default(),
                "lift"
            )
            .verdict,
            Verdict::NotMeasured
        );
    }

    #[test]
    fn bootstrap_below_its_minimum_falls_back_to_t_and_says_so() {
        let values = [0.3, 0.5, 0.2, 0.4, 0.6, 0.3, 0.35];
        let s = summarize_deltas(&values, &InferenceParams::default()).unwrap();
        let params = VerdictParams {
            interval: VerdictInterval::Bootstrap,
            ..VerdictParams::default()
        };
        let d = decide(&s, &params, "lift");
        if s.bootstrap_interval.is_none() {
            assert_eq!(d.interval.unwrap().method, IntervalMethod::StudentT);
            assert!(
                d.reason.contains("bootstrap is not offered for 7 cases"),
                "{}",
                d.reason
            );
        }
        assert_eq!(d.verdict, Verdict::Improves);
    }

    #[test]
    fn verdict_words_and_old_spellings() {
        assert_eq!(Verdict::NoChange.as_str(), "no change");
        assert_eq!(
            serde_json::to_string(&Verdict::NoChange).unwrap(),
            "\"no_change\""
        );
        for (old, new) in [
            ("\"regressed\"", Verdict::Regresses),
            ("\"improved\"", Verdict::Improves),
            ("\"unchanged\"", Verdict::NoChange),
        ] {
            assert_eq!(serde_json::from_str::<Verdict>(old).unwrap(), new);
        }
        assert!(Verdict::Regresses.fails() && !Verdict::Inconclusive.fails());
        for v in [
            Verdict::Improves,
            Verdict::Regresses,
            Verdict::NoChange,
            Verdict::Inconclusive,
            Verdict::NotMeasured,
        ] {
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                format!("\"{}\"", v.code())
            );
        }
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;
    use crate::scoring::stats::{InferenceParams, summarize_deltas};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Below the sign-flip floor no data gives a verdict; a verdict always has p below
        /// alpha, an interval on its side of 0 and a material mean.
        #[test]
        fn verdicts_only_with_floor_test_interval_and_effect(values in prop::collection::vec(-1.0f64..=1.0, 0..14), floor in 0.0f64..0.5) {
            let s = summarize_deltas(&values, &InferenceParams::default()).unwrap().with_floor(Some(floor));
            let d = decide(&s, &VerdictParams::default(), "lift");
            match d.verdict {
                Verdict::Improves | Verdict::Regresses => {
                    prop_assert!(values.len() >= 6);
                    prop_assert!(d.p.unwrap() < 0.05);
                    prop_assert!(d.interval.unwrap().excludes_zero());
                    let m = d.estimate.unwrap();
                    prop_assert!(m.abs() >= 0.05);
                    prop_assert_eq!(d.verdict == Verdict::Improves, m > 0.0);
                }
                Verdict::NotMeasured => prop_assert!(values.is_empty()),
                Verdict::NoChange => prop_assert!(d.equivalence.is_some_and(|e| e.shown)),
                Verdict::Inconclusive => {}
            }
            if !values.is_empty() && values.len() < 6 {
                prop_assert_eq!(d.verdict, Verdict::Inconclusive);
            }
            // Negating every value mirrors the verdict.
            let negated: Vec<f64> = values.iter().map(|v| -v).collect();
            let s2 = summarize_deltas(&negated, &InferenceParams::default()).unwrap().with_floor(Some(floor));
            let d2 = decide(&s2, &VerdictParams::default(), "lift");
            let mirrored = match d.verdict {
                Verdict::Improves => Verdict::Regresses,
                Verdict::Regresses => Verdict::Improves,
                v => v,
            };
            prop_assert_eq!(d2.verdict, mirrored);
        }
    }
}
