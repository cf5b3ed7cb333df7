//! Statistics for paired skill evaluations: intervals for a mean of paired deltas, a sign-flip
//! permutation test, an interval for a rate, and unbiased pass@k.
//!
//! Why these: skill evaluations are small (5 to 50 cases), bounded ([0, 1] metrics, so deltas
//! in [-1, 1]) and paired (the same case runs with and without the skill). The t-interval is
//! the textbook answer and what ACES reports; the percentile bootstrap makes no normality
//! assumption and is what skill-validator reports; the sign-flip permutation test is exact
//! for small n, where both intervals are least trustworthy. Every interval carries its
//! method and n ([`Interval`]), so a number shown to a user always says how it was made.
//!
//! All randomness takes an explicit seed and uses [`SplitMix64`], so every interval and
//! p-value is reproducible from the stored trials and the stored seed.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use super::rng::SplitMix64;

/// Why a statistic could not be computed. Each message says what was expected and what was
/// found.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// Too few values for the statistic (a t-interval needs a sample variance).
    #[error("{statistic} needs at least {needed} values, found {found}")]
    TooFewValues {
        /// Which statistic was asked for.
        statistic: &'static str,
        /// The minimum it needs.
        needed: usize,
        /// How many were given.
        found: usize,
    },
    /// A value was NaN or infinite.
    #[error("value #{index} is {value}, expected a finite number")]
    NonFinite {
        /// Zero-based position of the value.
        index: usize,
        /// The value found.
        value: f64,
    },
    /// The confidence level was not strictly between 0 and 1.
    #[error("confidence level {0} is outside (0, 1); use e.g. 0.95")]
    InvalidLevel(f64),
    /// Counts that cannot describe a sample (more successes than trials, k > n, ...).
    #[error("invalid counts: {0}")]
    InvalidCounts(String),
    /// A parameter outside its documented range.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
}

/// How an [`Interval`] was computed, with what it needs to be reproduced.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Student's t interval for a mean: mean ± t(1-(1-level)/2, n-1) · s/√n.
    StudentT,
    /// Percentile bootstrap of the mean: resample the n paired values with replacement
    /// `resamples` times and take two quantiles of the resampled means (linear interpolation
    /// between order statistics, numpy's default): (1-level)/2 and (1+level)/2, or when
    /// `expanded`, Hesterberg's small-sample expansion of those tail probabilities (see
    /// [`BootstrapParams::expanded`]).
    PercentileBootstrap {
        /// Number of bootstrap resamples B.
        resamples: u32,
        /// Seed of the [`SplitMix64`] stream.
        seed: u64,
        /// Whether the tails were expanded for small n.
        #[serde(default)]
        expanded: bool,
    },
    /// Wilson score interval for a binomial rate.
    Wilson,
    /// Wilson score interval of a rate whose trials are clustered by case (several attempts
    /// of one case are not independent): the pooled rate with a cluster-robust variance,
    /// entered as an effective number of trials and a t quantile on cases − 1 degrees of
    /// freedom ([`clustered_wilson_interval`]).
    ClusteredWilson {
        /// Clusters (cases) the rate rests on; `n` counts trials.
        clusters: usize,
    },
    /// Newcombe's hybrid score interval for a difference of two independent rates (his
    /// method 10): the Wilson intervals of both rates combined.
    NewcombeWilson,
    /// Adjusted Wald interval for a difference of rates paired by query: Agresti and Min's
    /// (2005) half an observation added to each cell of the paired table, spread over the
    /// runs of a query ([`super::rate_difference`]).
    PairedAdjustedWald,
    /// skill-validator's bootstrap (anchors-evals.md b1.6): hash-seeded resampling, order
    /// statistics `floor(a/2·B)` and `floor((1-a/2)·B) - 1`. Only the compat profile uses it.
    SkillValidatorBootstrap {
        /// Number of bootstrap resamples B.
        resamples: u32,
    },
}

impl IntervalMethod {
    /// A short human name for reports ("t", "bootstrap", "wilson").
    pub fn label(&self) -> &'static str {
        match self {
            IntervalMethod::StudentT => "t",
            IntervalMethod::PercentileBootstrap { .. } => "bootstrap",
            IntervalMethod::Wilson => "wilson",
            IntervalMethod::ClusteredWilson { .. } => "wilson, clustered by case",
            IntervalMethod::NewcombeWilson => "newcombe",
            IntervalMethod::PairedAdjustedWald => "paired adjusted wald",
            IntervalMethod::SkillValidatorBootstrap { .. } => "skill-validator bootstrap",
        }
    }
}

/// A confidence interval that says how it was made. Reports never show a bare `[low, high]`:
/// the method and n tell the reader how much to trust it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The point estimate the interval is about (the mean, or the rate).
    pub estimate: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Nominal coverage, e.g. 0.95.
    pub level: f64,
    /// How it was computed.
    pub method: IntervalMethod,
    /// Number of independent units it rests on (paired cases, or trials for a rate).
    pub n: usize,
}

impl Interval {
    /// True when 0 lies outside the interval: the effect's sign is established at this level.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }

    /// True when `value` lies inside the closed interval.
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }

    /// The interval cut to the range its quantity can take (a lift lives on [-1, 1], U on
    /// [0, 100]): a bound past it is no value the quantity can have, only the normal
    /// approximation running over. Cutting never removes a possible value, so coverage and
    /// whether 0 is excluded are unchanged.
    pub fn clipped(mut self, low: f64, high: f64) -> Interval {
        self.low = self.low.clamp(low, high);
        self.high = self.high.clamp(low, high);
        self
    }
}

/// Settings of the percentile bootstrap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BootstrapParams {
    /// Number of resamples B. 10,000 (skill-validator's choice) puts the Monte-Carlo error of a
    /// 95% bound at about 3% of the standard error of the mean.
    pub resamples: u32,
    /// Seed of the resampling stream; stored with every run so the interval can be recomputed.
    pub seed: u64,
    /// Expanded percentile interval (Hesterberg 2015, "What teachers should know about the
    /// bootstrap", §5): take the tail probability Φ(−√(n/(n−1))·t(1−(1−level)/2, n−1))
    /// instead of (1−level)/2. The plain percentile interval is too narrow for small n (it
    /// ignores both the n−1 in the standard deviation and the t distribution's tails); at 10
    /// cases its "95%" interval excludes 0 in about 10% of no-effect skills (calibration
    /// bench). The expansion fixes that and vanishes as n grows. Default true.
    #[serde(default = "default_true")]
    pub expanded: bool,
    /// Fewest cases for which the bootstrap interval is offered at all. Below it the
    /// percentile bootstrap undercovers however it is expanded: with n values the resampled
    /// means cannot leave [min, max] of the data, an interval that holds the true mean only
    /// 1 − 2^(1−n) of the time (75% at 3 cases), and the expansion pushes both bounds onto
    /// those extremes at n ≤ 4. The default comes from the calibration bench (docs/scoring.md).
    #[serde(default = "default_bootstrap_min_cases")]
    pub min_cases: usize,
}

fn default_true() -> bool {
    true
}

/// See [`BootstrapParams::min_cases`].
pub const BOOTSTRAP_MIN_CASES: usize = 10;

fn default_bootstrap_min_cases() -> usize {
    BOOTSTRAP_MIN_CASES
}

impl Default for BootstrapParams {
    fn default() -> Self {
        Self {
            resamples: 10_000,
            seed: DEFAULT_SEED,
            expanded: true,
            min_cases: BOOTSTRAP_MIN_CASES,
        }
    }
}

/// Settings of the sign-flip permutation test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PermutationParams {
    /// Largest n for which all 2^n sign patterns are counted (exact p-value). 24 by default:
    /// the count splits the values in two halves and pairs their 2^12 partial sums, so even
    /// 2^24 patterns take well under a millisecond, and no verdict up to 24 cases depends on
    /// a random stream. At most [`MAX_EXACT_PERMUTATION_N`].
    pub exact_max_n: usize,
    /// Number of random sign patterns above `exact_max_n`; p = (b + 1) / (m + 1).
    pub resamples: u32,
    /// Seed of the Monte-Carlo stream.
    pub seed: u64,
}

impl Default for PermutationParams {
    fn default() -> Self {
        Self {
            exact_max_n: MAX_EXACT_PERMUTATION_N,
            resamples: 10_000,
            seed: DEFAULT_SEED,
        }
    }
}

/// The seed used when the caller has no reason to choose another. Any fixed value works;
/// what matters is that it is stored with the result.
pub const DEFAULT_SEED: u64 = 0x5EED_5C0E;

/// Upper limit on [`PermutationParams::exact_max_n`]: two halves of 2^12 partial sums.
pub const MAX_EXACT_PERMUTATION_N: usize = 24;

/// How a [`PValue`] was computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PermutationMethod {
    /// All 2^n sign patterns enumerated; p = (patterns at least as extreme) / 2^n.
    ExactSignFlip {
        /// 2^n.
        patterns: u64,
    },
    /// Random sign patterns; p = (b + 1) / (m + 1), never 0 (Phipson and Smyth 2010).
    MonteCarloSignFlip {
        /// m.
        resamples: u32,
        /// Seed of the [`SplitMix64`] stream.
        seed: u64,
    },
}

/// A two-sided p-value for "the mean paired delta is 0", with its method and n.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PValue {
    /// The p-value.
    pub p: f64,
    /// How it was computed.
    pub method: PermutationMethod,
    /// Number of paired deltas.
    pub n: usize,
}

/// Relative tolerance when comparing a permuted statistic with the observed one, so that
/// patterns equal to the observed sum up to rounding count as "at least as extreme".
pub const PERMUTATION_TIE_TOLERANCE: f64 = 1e-12;

/// The confidence level and resampling settings every paired estimate uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct InferenceParams {
    /// Nominal coverage of every interval, 0.95 by default (ACES and skill-validator).
    pub level: f64,
    /// Percentile bootstrap settings.
    pub bootstrap: BootstrapParams,
    /// Sign-flip permutation test settings.
    pub permutation: PermutationParams,
}

impl Default for InferenceParams {
    fn default() -> Self {
        Self {
            level: 0.95,
            bootstrap: BootstrapParams::default(),
            permutation: PermutationParams::default(),
        }
    }
}

/// Everything reported about one set of per-case paired deltas: the mean, both intervals and
/// the permutation p-value. A field is `None` when there are too few cases for it (the t
/// interval needs two, the bootstrap [`BootstrapParams::min_cases`], the p-value one), never a
/// made-up value.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DeltaSummary {
    /// Number of cases (independent units).
    pub n: usize,
    /// Mean delta; `None` when there are no cases.
    pub mean: Option<f64>,
    /// Student's t interval of the mean.
    pub t_interval: Option<Interval>,
    /// Percentile bootstrap interval of the mean.
    pub bootstrap_interval: Option<Interval>,
    /// Two-sided sign-flip permutation p-value for mean 0.
    pub p_value: Option<PValue>,
    /// Sample standard deviation of the per-case values (n − 1); `None` below two cases.
    #[serde(default)]
    pub sd: Option<f64>,
    /// The smallest variance of one per-case value the data allow, whatever the sample shows:
    /// the binomial variance at the arms' observed (shrunk) rates over the case's attempts
    /// ([`binomial_variance_floor`]). The equivalence test behind "no change" reads
    /// max(sd², floor), so cases that all moved alike (sd = 0) never rule out a change by
    /// themselves. `None` when the values came without their trials; then "no change" cannot
    /// be shown.
    #[serde(default)]
    pub variance_floor: Option<f64>,
}

/// Summarize per-case deltas. Errors only on non-finite values or invalid settings; too few
/// cases give `None` fields.
pub fn summarize_deltas(
    values: &[f64],
    params: &InferenceParams,
) -> Result<DeltaSummary, StatsError> {
    check_finite(values)?;
    check_level(params.level)?;
    let n = values.len();
    let enough = n >= 2;
    Ok(DeltaSummary {
        n,
        mean: mean(values),
        t_interval: enough
            .then(|| t_interval(values, params.level))
            .transpose()?,
        bootstrap_interval: (enough && n >= params.bootstrap.min_cases)
            .then(|| bootstrap_interval(values, params.level, &params.bootstrap))
            .transpose()?,
        p_value: (n >= 1)
            .then(|| sign_flip_p_value(values, &params.permutation))
            .transpose()?,
        sd: sample_sd(values),
        variance_floor: None,
    })
}

impl DeltaSummary {
    /// Both intervals cut to [`low`, `high`], the range of the mean (see [`Interval::clipped`]).
    pub fn clipped(mut self, low: f64, high: f64) -> DeltaSummary {
        self.t_interval = self.t_interval.map(|i| i.clipped(low, high));
        self.bootstrap_interval = self.bootstrap_interval.map(|i| i.clipped(low, high));
        self
    }

    /// The summary with its [`DeltaSummary::variance_floor`].
    pub fn with_floor(mut self, floor: Option<f64>) -> DeltaSummary {
        self.variance_floor = floor;
        self
    }
}

/// Pseudo-observations added to each side of a rate before its binomial variance is taken for
/// a floor: two successes and two failures (the Agresti-Coull centre, close to the 95% Wilson
/// interval's), so a rate seen as 8/8 counts as 10/12, never as a certainty.
pub const FLOOR_PSEUDO: f64 = 2.0;

/// The binomial variance floor of a per-case paired value: with the baseline and with-skill
/// scores summing to `baseline_sum` and `skill_sum` over `trials_per_arm` trials each, and
/// case i averaging `attempts[i]` pairs, the mean over cases of
/// (v(base) + v(skill)) / r_i, with v(p) = p(1 − p) at the shrunk rate
/// (sum + 2) / (trials + 4). For pass/fail outcomes v is the variance of one trial at the
/// arm's rate (pooled over cases, which by Jensen's inequality is at least the mean of the
/// cases' own); for a score on [0, 1] it is the largest variance a score with that mean can
/// have. `None` without attempts.
pub fn binomial_variance_floor(
    baseline_sum: f64,
    skill_sum: f64,
    trials_per_arm: (f64, f64),
    attempts: &[usize],
) -> Option<f64> {
    if attempts.is_empty() || attempts.contains(&0) {
        return None;
    }
    let v = |sum: f64, n: f64| {
        let p = (sum + FLOOR_PSEUDO) / (n + 2.0 * FLOOR_PSEUDO);
        p * (1.0 - p)
    };
    let inverse_r = attempts.iter().map(|r| 1.0 / *r as f64).sum::<f64>() / attempts.len() as f64;
    Some((v(baseline_sum, trials_per_arm.0) + v(skill_sum, trials_per_arm.1)) * inverse_r)
}

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        None
    } else {
        Some(values.iter().sum::<f64>() / values.len() as f64)
    }
}

/// Sample standard deviation (n - 1 denominator); `None` below two values.
pub fn sample_sd(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    let ss: f64 = values.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

/// Student's t interval for the mean of `values` (paired deltas): the interval ACES reports
/// and the one a reader can check with a calculator. Needs at least two values.
pub fn t_interval(values: &[f64], level: f64) -> Result<Interval, StatsError> {
    check_level(level)?;
    check_finite(values)?;
    let n = values.len();
    if n < 2 {
        return Err(StatsError::TooFewValues {
            statistic: "a t-interval",
            needed: 2,
            found: n,
        });
    }
    let m = mean(values).unwrap_or(0.0);
    let se = sample_sd(values).unwrap_or(0.0) / (n as f64).sqrt();
    let half = t_quantile(1.0 - (1.0 - level) / 2.0, (n - 1) as f64) * se;
    Ok(Interval {
        estimate: m,
        low: m - half,
        high: m + half,
        level,
        method: IntervalMethod::StudentT,
        n,
    })
}

/// The `p` quantile of Student's t with `df` degrees of freedom. statrs inverts the
/// regularized incomplete beta function to about 1e-9; two Newton steps on the CDF bring the
/// quantile to the CDF's own precision (about 1e-14), so intervals agree with scipy to 1e-12.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let dist = StudentsT::new(0.0, 1.0, df).expect("df > 0 and unit scale are valid");
    let mut x = dist.inverse_cdf(p);
    for _ in 0..2 {
        let density = statrs::distribution::Continuous::pdf(&dist, x);
        if density > 0.0 && density.is_finite() {
            x -= (dist.cdf(x) - p) / density;
        }
    }
    x
}

/// Percentile bootstrap interval for the mean of paired `values`. The pairs were formed before
/// (one delta per case), so resampling deltas resamples pairs: the pairing is kept.
/// Needs at least two values.
pub fn bootstrap_interval(
    values: &[f64],
    level: f64,
    params: &BootstrapParams,
) -> Result<Interval, StatsError> {
    check_level(level)?;
    check_finite(values)?;
    let n = values.len();
    if n < 2 {
        return Err(StatsError::TooFewValues {
            statistic: "a bootstrap interval",
            needed: 2,
            found: n,
        });
    }
    if params.resamples < 2 {
        return Err(StatsError::InvalidParameter(format!(
            "bootstrap resamples is {}, expected at least 2 (10,000 is the default)",
            params.resamples
        )));
    }
    let mut rng = SplitMix64::new(params.seed);
    let mut means = Vec::with_capacity(params.resamples as usize);
    for _ in 0..params.resamples {
        let mut sum = 0.0;
        for _ in 0..n {
            sum += values[rng.below(n as u64) as usize];
        }
        means.push(sum / n as f64);
    }
    means.sort_by(f64::total_cmp);
    let tail = if params.expanded {
        expanded_tail(level, n)
    } else {
        (1.0 - level) / 2.0
    };
    Ok(Interval {
        estimate: mean(values).unwrap_or(0.0),
        low: quantile_sorted(&means, tail),
        high: quantile_sorted(&means, 1.0 - tail),
        level,
        method: IntervalMethod::PercentileBootstrap {
            resamples: params.resamples,
            seed: params.seed,
            expanded: params.expanded,
        },
        n,
    })
}

/// Hesterberg's expanded lower tail probability for a `level` interval from n values:
/// Φ(−√(n/(n−1))·t(1−(1−level)/2, n−1)). Smaller than (1−level)/2, approaching it as n grows.
pub fn expanded_tail(level: f64, n: usize) -> f64 {
    let n = n as f64;
    let t = t_quantile(1.0 - (1.0 - level) / 2.0, n - 1.0);
    Normal::new(0.0, 1.0)
        .expect("the standard normal is valid")
        .cdf(-(n / (n - 1.0)).sqrt() * t)
}

/// The `q` quantile of sorted data with linear interpolation between order statistics
/// (Hyndman and Fan type 7, numpy's default), so reference scripts can reproduce it.
/// `sorted` must not be empty.
pub(crate) fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    let fraction = position - below as f64;
    sorted[below] + fraction * (sorted[above] - sorted[below])
}

/// Two-sided sign-flip permutation p-value for "the paired deltas are symmetric around 0".
/// Under that null each delta's sign is a fair coin, so the observed |sum| is compared with
/// the |sum| of every sign pattern (exact, n <= `exact_max_n`) or of random patterns. Zero
/// deltas are kept (they flip to themselves). Needs at least one value.
pub fn sign_flip_p_value(values: &[f64], params: &PermutationParams) -> Result<PValue, StatsError> {
    check_finite(values)?;
    let n = values.len();
    if n == 0 {
        return Err(StatsError::TooFewValues {
            statistic: "a permutation test",
            needed: 1,
            found: 0,
        });
    }
    if params.exact_max_n > MAX_EXACT_PERMUTATION_N {
        return Err(StatsError::InvalidParameter(format!(
            "exact_max_n is {}, expected at most {MAX_EXACT_PERMUTATION_N}",
            params.exact_max_n
        )));
    }
    let observed = values.iter().sum::<f64>().abs();
    let scale: f64 = values.iter().map(|v| v.abs()).sum();
    let threshold = observed - PERMUTATION_TIE_TOLERANCE * scale.max(1.0);
    if n <= params.exact_max_n {
        let patterns = 1u64 << n;
        let extreme = extreme_patterns(values, threshold);
        return Ok(PValue {
            p: extreme as f64 / patterns as f64,
            method: PermutationMethod::ExactSignFlip { patterns },
            n,
        });
    }
    if params.resamples == 0 {
        return Err(StatsError::InvalidParameter(
            "permutation resamples is 0, expected at least 1 (10,000 is the default)".into(),
        ));
    }
    // One 64-bit draw supplies the signs of 64 consecutive values.
    let mut rng = SplitMix64::new(params.seed);
    let mut signs = vec![0u64; n.div_ceil(64)];
    let mut extreme = 0u32;
    for _ in 0..params.resamples {
        signs.iter_mut().for_each(|word| *word = rng.next_u64());
        if flipped_abs_sum(values, |i| signs[i / 64] >> (i % 64) & 1 == 1) >= threshold {
            extreme += 1;
        }
    }
    Ok(PValue {
        p: (f64::from(extreme) + 1.0) / (f64::from(params.resamples) + 1.0),
        method: PermutationMethod::MonteCarloSignFlip {
            resamples: params.resamples,
            seed: params.seed,
        },
        n,
    })
}

/// The number of sign patterns whose |Σ ±v_i| reaches `threshold`, counted exactly by
/// meeting in the middle: every partial sum of the first half is paired with the sorted
/// partial sums of the second half, and the pairs with |a + b| ≥ threshold are counted by two
/// binary searches. O(2^(n/2) · n) instead of O(2^n · n).
fn extreme_patterns(values: &[f64], threshold: f64) -> u64 {
    let (left, right) = values.split_at(values.len() / 2);
    let left = partial_sums(left);
    let mut right = partial_sums(right);
    right.sort_by(f64::total_cmp);
    left.iter()
        .map(|a| {
            // b >= threshold - a, or b <= -threshold - a.
            let high = right.len() - right.partition_point(|b| *b < threshold - a);
            let low = right.partition_point(|b| *b <= -threshold - a);
            // With threshold <= 0 every pattern counts once (the two ranges overlap).
            if threshold <= 0.0 {
                right.len() as u64
            } else {
                (high + low) as u64
            }
        })
        .sum()
}

/// Σ ±v_i for every sign pattern of `values` (2^len of them).
fn partial_sums(values: &[f64]) -> Vec<f64> {
    let mut sums = vec![0.0];
    for v in values {
        let flipped: Vec<f64> = sums.iter().map(|s| s - v).collect();
        sums.iter_mut().for_each(|s| *s += v);
        sums.extend(flipped);
    }
    sums
}

/// |Σ ±v_i| with v_i negated where `flip(i)`. The sign is flipped by toggling the sign bit
/// rather than by a branch: random signs defeat branch prediction.
fn flipped_abs_sum(values: &[f64], flip: impl Fn(usize) -> bool) -> f64 {
    let mut sum = 0.0;
    for (i, v) in values.iter().enumerate() {
        sum += f64::from_bits(v.to_bits() ^ (u64::from(flip(i)) << 63));
    }
    sum.abs()
}

/// Wilson score interval for a rate of `successes` in `trials`: unlike the normal
/// approximation it stays inside [0, 1] and behaves at 0/n and n/n, which skill pass-rates
/// often are. z is the exact normal quantile for `level`.
pub fn wilson_interval(successes: u64, trials: u64, level: f64) -> Result<Interval, StatsError> {
    check_level(level)?;
    if trials == 0 {
        return Err(StatsError::TooFewValues {
            statistic: "a Wilson interval",
            needed: 1,
            found: 0,
        });
    }
    if successes > trials {
        return Err(StatsError::InvalidCounts(format!(
            "{successes} successes in {trials} trials; expected successes <= trials"
        )));
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0);
    let z2 = z * z;
    let center = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Ok(Interval {
        estimate: p,
        // The bounds are exactly 0 and 1 at the boundaries; the closed form rounds to 1e-17.
        low: if successes == 0 {
            0.0
        } else {
            (center - half).max(0.0)
        },
        high: if successes == trials {
            1.0
        } else {
            (center + half).min(1.0)
        },
        level,
        method: IntervalMethod::Wilson,
        n: trials as usize,
    })
}

/// Wilson interval of a rate over trials clustered by case: `clusters` holds each case's
/// (successes, trials). Attempts of one case share its difficulty, so pooling them as
/// independent trials makes the interval too narrow (85-90% coverage at three attempts per
/// case, issue 35). The rate is the pooled one (successes / trials, unchanged); its variance
/// is the cluster-robust (ratio-estimator) one, m/(m−1) · Σ(x_i − p̂·n_i)² / N² over m
/// cases; that variance enters Wilson's formula as an effective number of trials
/// n_eff = p̂(1 − p̂) / variance (at most N: clustering never earns more than independent
/// trials). Korn and Graubard's further scaling by (z / t(m − 1))² was tried and left out:
/// with the cap it covered 98-99% at 6-10 cases x 3 attempts in simulation, where this
/// covers 93-96% (docs/scoring.md). With one trial per case this is the plain
/// Wilson interval, to the last bit; with one case of several trials the population of cases
/// is unknown and the interval is [0, 1].
pub fn clustered_wilson_interval(
    clusters: &[(u64, u64)],
    level: f64,
) -> Result<Interval, StatsError> {
    check_level(level)?;
    if let Some((x, n)) = clusters.iter().find(|(x, n)| x > n) {
        return Err(StatsError::InvalidCounts(format!(
            "{x} successes in {n} trials; expected successes <= trials"
        )));
    }
    let used: Vec<(f64, f64)> = clusters
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(x, n)| (*x as f64, *n as f64))
        .collect();
    let (hits, trials) = clusters
        .iter()
        .fold((0u64, 0u64), |(h, t), (x, n)| (h + x, t + n));
    if used.iter().all(|(_, n)| *n <= 1.0) {
        return wilson_interval(hits, trials, level);
    }
    let (x, n, m) = (hits as f64, trials as f64, used.len() as f64);
    let p = x / n;
    let method = IntervalMethod::ClusteredWilson {
        clusters: used.len(),
    };
    let whole = Interval {
        estimate: p,
        low: 0.0,
        high: 1.0,
        level,
        method,
        n: trials as usize,
    };
    if used.len() < 2 {
        return Ok(whole);
    }
    let spread: f64 = used.iter().map(|(xi, ni)| (xi - p * ni).powi(2)).sum();
    let variance = m / (m - 1.0) * spread / (n * n);
    let effective = if variance > 0.0 {
        (p * (1.0 - p) / variance).min(n)
    } else {
        n
    };
    let z = normal_quantile(1.0 - (1.0 - level) / 2.0);
    let n_star = effective;
    let z2 = z * z;
    let center = (p + z2 / (2.0 * n_star)) / (1.0 + z2 / n_star);
    let half =
        z / (1.0 + z2 / n_star) * (p * (1.0 - p) / n_star + z2 / (4.0 * n_star * n_star)).sqrt();
    Ok(Interval {
        low: if hits == 0 {
            0.0
        } else {
            (center - half).max(0.0)
        },
        high: if hits == trials {
            1.0
        } else {
            (center + half).min(1.0)
        },
        ..whole
    })
}

/// Newcombe's hybrid score interval (his method 10) for the difference `a − b` of two
/// independent rates, `a` = (successes, trials), from the two Wilson intervals. It stays
/// inside [−1, 1] and keeps a width at 0/n and n/n, where the Wald interval collapses.
pub fn newcombe_interval(a: (u64, u64), b: (u64, u64), level: f64) -> Result<Interval, StatsError> {
    let wa = wilson_interval(a.0, a.1, level)?;
    let wb = wilson_interval(b.0, b.1, level)?;
    let d = wa.estimate - wb.estimate;
    let low = d - ((wa.estimate - wa.low).powi(2) + (wb.high - wb.estimate).powi(2)).sqrt();
    let high = d + ((wa.high - wa.estimate).powi(2) + (wb.estimate - wb.low).powi(2)).sqrt();
    Ok(Interval {
        estimate: d,
        low: low.max(-1.0),
        high: high.min(1.0),
        level,
        method: IntervalMethod::NewcombeWilson,
        n: (a.1 + b.1) as usize,
    })
}

/// The `p` quantile of the standard normal distribution.
pub fn normal_quantile(p: f64) -> f64 {
    Normal::new(0.0, 1.0)
        .expect("the standard normal is valid")
        .inverse_cdf(p)
}

/// Unbiased pass@k (Chen et al. 2021): the probability that at least one of k attempts drawn
/// without replacement from `n` attempts, `c` of which passed, passes:
/// 1 - C(n-c, k) / C(n, k). Computed as a product so it never overflows.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> Result<f64, StatsError> {
    check_counts(n, c, k)?;
    if n - c < k {
        return Ok(1.0);
    }
    let all_fail: f64 = ((n - c + 1)..=n)
        .map(|i| 1.0 - k as f64 / i as f64)
        .product();
    Ok(1.0 - all_fail)
}

/// Unbiased pass^k: the probability that all of k attempts drawn without replacement pass,
/// C(c, k) / C(n, k). The reliability counterpart of pass@k.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> Result<f64, StatsError> {
    check_counts(n, c, k)?;
    if c < k {
        return Ok(0.0);
    }
    Ok((0..k).map(|i| (c - i) as f64 / (n - i) as f64).product())
}

fn check_counts(n: u64, c: u64, k: u64) -> Result<(), StatsError> {
    if c > n || k == 0 || k > n {
        return Err(StatsError::InvalidCounts(format!(
            "n = {n} attempts, c = {c} passed, k = {k}; expected c <= n and 1 <= k <= n"
        )));
    }
    Ok(())
}

fn check_level(level: f64) -> Result<(), StatsError> {
    if level > 0.0 && level < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidLevel(level))
    }
}

fn check_finite(values: &[f64]) -> Result<(), StatsError> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(StatsError::NonFinite {
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_tables() {
        // scipy.stats.t.ppf(p, df), scipy 1.x.
        assert!(close(t_quantile(0.975, 1.0), 12.706_204_736_174_694, 1e-10));
        assert!(close(t_quantile(0.975, 9.0), 2.262_157_162_798_205, 1e-12));
        assert!(close(t_quantile(0.975, 29.0), 2.045_229_642_132_703, 1e-12));
        assert!(close(t_quantile(0.995, 4.0), 4.604_094_871_349_992, 1e-12));
    }

    #[test]
    fn t_interval_of_known_sample() {
        // mean 0.2, s = 0.158113883..., n = 5, t(0.975, 4) = 2.776445105...
        let values = [0.0, 0.1, 0.2, 0.3, 0.4];
        let ci = t_interval(&values, 0.95).unwrap();
        let half = 2.776_445_105_197_793 * 0.158_113_883_008_418_97 / 5f64.sqrt();
        assert!(close(ci.estimate, 0.2, 1e-15));
        assert!(close(ci.low, 0.2 - half, 1e-12));
        assert!(close(ci.high, 0.2 + half, 1e-12));
        assert_eq!(ci.n, 5);
        assert_eq!(ci.method, IntervalMethod::StudentT);
    }

    #[test]
    fn t_interval_refuses_one_value_and_nan() {
        assert!(matches!(
            t_interval(&[0.3], 0.95),
            Err(StatsError::TooFewValues {
                needed: 2,
                found: 1,
                ..
            })
        ));
        assert!(matches!(
            t_interval(&[0.3, f64::NAN], 0.95),
            Err(StatsError::NonFinite { index: 1, .. })
        ));
        assert!(matches!(
            t_interval(&[0.1, 0.2], 1.0),
            Err(StatsError::InvalidLevel(_))
        ));
    }

    #[test]
    fn clipping_keeps_every_possible_value_and_the_side_of_zero() {
        // Seven cases at -1 and one at 0: the t interval runs below -1, a lift cannot.
        let mut values = vec![-1.0; 7];
        values.push(0.0);
        let raw = t_interval(&values, 0.95).unwrap();
        assert!(raw.low < -1.0);
        let cut = raw.clipped(-1.0, 1.0);
        assert_eq!(cut.low, -1.0);
        assert_eq!(cut.high, raw.high);
        assert_eq!(cut.excludes_zero(), raw.excludes_zero());
        let s = summarize_deltas(&values, &InferenceParams::default())
            .unwrap()
            .clipped(-1.0, 1.0);
        assert_eq!(s.t_interval.unwrap().low, -1.0);
    }

    #[test]
    fn constant_deltas_give_a_point_interval() {
        let ci = t_interval(&[0.25; 6], 0.95).unwrap();
        assert_eq!((ci.low, ci.high), (0.25, 0.25));
        let boot = bootstrap_interval(&[0.25; 6], 0.95, &BootstrapParams::default()).unwrap();
        assert_eq!((boot.low, boot.high), (0.25, 0.25));
    }

    #[test]
    fn bootstrap_is_reproducible_and_seed_dependent() {
        let values = [0.1, -0.2, 0.5, 0.3, 0.0, 0.4, 0.2, -0.1];
        let p = BootstrapParams {
            resamples: 2_000,
            seed: 42,
            expanded: false,
            min_cases: 2,
        };
        let a = bootstrap_interval(&values, 0.95, &p).unwrap();
        let b = bootstrap_interval(&values, 0.95, &p).unwrap();
        assert_eq!(a, b);
        let c = bootstrap_interval(&values, 0.95, &BootstrapParams { seed: 43, ..p }).unwrap();
        assert_ne!(a.low, c.low);
        // Close to the t-interval for a symmetric sample.
        let t = t_interval(&values, 0.95).unwrap();
        assert!(
            (a.low - t.low).abs() < 0.06 && (a.high - t.high).abs() < 0.06,
            "{a:?} {t:?}"
        );
    }

    #[test]
    fn expanded_tail_matches_scipy_and_widens_small_samples() {
        // scipy: norm.cdf(-sqrt(n/(n-1)) * t.ppf(0.975, n-1)). statrs's normal CDF is good
        // to about 5e-11 relative here, hence 1e-10 at n = 100.
        assert!(close(
            expanded_tail(0.95, 10),
            0.008_550_639_024_406_366,
            1e-12
        ));
        assert!(close(
            expanded_tail(0.95, 30),
            0.018_753_900_278_220_54,
            1e-12
        ));
        assert!(close(
            expanded_tail(0.95, 100),
            0.023_064_387_207_087_644,
            1e-10
        ));
        let values = [0.1, -0.2, 0.5, 0.3, 0.0, 0.4, 0.2, -0.1];
        let plain = BootstrapParams {
            expanded: false,
            ..Default::default()
        };
        let a = bootstrap_interval(&values, 0.95, &plain).unwrap();
        let b = bootstrap_interval(&values, 0.95, &BootstrapParams::default()).unwrap();
        assert!(b.low < a.low && b.high > a.high, "{a:?} {b:?}");
    }

    #[test]
    fn quantile_interpolates_like_numpy() {
        let sorted = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(quantile_sorted(&sorted, 0.0), 1.0);
        assert_eq!(quantile_sorted(&sorted, 1.0), 8.0);
        assert_eq!(quantile_sorted(&sorted, 0.5), 3.0); // numpy.quantile([1,2,4,8], 0.5)
        assert!(close(quantile_sorted(&sorted, 0.9), 6.8, 1e-12)); // 4 + 0.7*4
    }

    #[test]
    fn exact_sign_flip_small_cases() {
        // All positive n=5: only the identity and the all-flipped pattern reach |sum|.
        let p =
            sign_flip_p_value(&[0.1, 0.2, 0.3, 0.4, 0.5], &PermutationParams::default()).unwrap();
        assert!(close(p.p, 2.0 / 32.0, 1e-15));
        assert_eq!(p.method, PermutationMethod::ExactSignFlip { patterns: 32 });
        // All zero: every pattern ties.
        let p = sign_flip_p_value(&[0.0; 4], &PermutationParams::default()).unwrap();
        assert_eq!(p.p, 1.0);
        // [1, -1]: sums are 0, 2, -2, 0 -> |sum| >= 0 always.
        let p = sign_flip_p_value(&[1.0, -1.0], &PermutationParams::default()).unwrap();
        assert_eq!(p.p, 1.0);
        // Ties up to rounding count: 0.1 + 0.2 vs 0.3 flipped.
        let p = sign_flip_p_value(&[0.1, 0.2, -0.3], &PermutationParams::default()).unwrap();
        assert_eq!(p.p, 1.0);
    }

    #[test]
    fn monte_carlo_sign_flip_is_near_exact_value() {
        let values: Vec<f64> = (0..18)
            .map(|i| ((i * 7 % 11) as f64 - 4.0) / 10.0)
            .collect();
        let exact = sign_flip_p_value(
            &values,
            &PermutationParams {
                exact_max_n: 18,
                ..Default::default()
            },
        )
        .unwrap();
        let mc = sign_flip_p_value(
            &values,
            &PermutationParams {
                exact_max_n: 10,
                resamples: 20_000,
                seed: 5,
            },
        )
        .unwrap();
        let se = (exact.p * (1.0 - exact.p) / 20_000.0).sqrt();
        assert!((exact.p - mc.p).abs() < 4.0 * se + 1e-4, "{exact:?} {mc:?}");
        assert!(matches!(
            mc.method,
            PermutationMethod::MonteCarloSignFlip { .. }
        ));
    }

    #[test]
    fn wilson_matches_published_example() {
        // Newcombe (1998), Table I: 81/263 -> 0.2553 to 0.3662 (95%).
        let ci = wilson_interval(81, 263, 0.95).unwrap();
        assert!(
            close(ci.low, 0.2553, 5e-5) && close(ci.high, 0.3662, 5e-5),
            "{ci:?}"
        );
        // 0/10 -> [0, 0.2775] (Newcombe: 0 to 0.2775).
        let ci = wilson_interval(0, 10, 0.95).unwrap();
        assert_eq!(ci.low, 0.0);
        assert!(close(ci.high, 0.2775, 5e-5), "{ci:?}");
        assert!(wilson_interval(3, 2, 0.95).is_err());
        assert!(wilson_interval(0, 0, 0.95).is_err());
    }

    #[test]
    fn clustered_wilson_matches_scipy_and_reduces_to_wilson() {
        // Five cases of three attempts, 9/15 passed, spread between cases: n_eff = 6.35
        // (scipy/numpy: the same formula), where trials pooled would count 15.
        let ci =
            clustered_wilson_interval(&[(3, 3), (1, 3), (0, 3), (2, 3), (3, 3)], 0.95).unwrap();
        assert!(close(ci.low, 0.259_238_992_680_149, 1e-9), "{ci:?}");
        assert!(close(ci.high, 0.865_396_908_956_778_6, 1e-9), "{ci:?}");
        assert_eq!(ci.method, IntervalMethod::ClusteredWilson { clusters: 5 });
        let pooled = wilson_interval(9, 15, 0.95).unwrap();
        assert!(ci.low < pooled.low && ci.high > pooled.high);
        // One trial per case: the plain Wilson interval, bit for bit.
        let single = clustered_wilson_interval(&[(1, 1), (0, 1), (1, 1)], 0.95).unwrap();
        assert_eq!(single, wilson_interval(2, 3, 0.95).unwrap());
        // Every case alike at 3/3: no spread, so n_eff = N and the bound is 1.
        let all = clustered_wilson_interval(&[(3, 3); 4], 0.95).unwrap();
        assert_eq!(
            (all.high, all.low),
            (1.0, wilson_interval(12, 12, 0.95).unwrap().low)
        );
        // One case: the population of cases is unknown.
        let one = clustered_wilson_interval(&[(2, 3)], 0.95).unwrap();
        assert_eq!((one.low, one.high), (0.0, 1.0));
        assert!(clustered_wilson_interval(&[(4, 3)], 0.95).is_err());
    }

    #[test]
    fn newcombe_brackets_the_difference_and_keeps_width_at_the_edges() {
        let ci = newcombe_interval((10, 10), (2, 10), 0.95).unwrap();
        assert!(close(ci.estimate, 0.8, 1e-15));
        assert!(ci.low > 0.35 && ci.high < 1.0, "{ci:?}");
        let edge = newcombe_interval((3, 3), (3, 3), 0.95).unwrap();
        assert!(edge.low < -0.4 && edge.high > 0.4, "{edge:?}");
    }

    #[test]
    fn exact_sign_flip_by_halves_equals_brute_force() {
        let values: Vec<f64> = (0..14).map(|i| ((i * 5 % 9) as f64 - 3.0) / 8.0).collect();
        let observed = values.iter().sum::<f64>().abs();
        let threshold = observed
            - PERMUTATION_TIE_TOLERANCE * values.iter().map(|v| v.abs()).sum::<f64>().max(1.0);
        let brute = (0..1u64 << values.len())
            .filter(|&mask| flipped_abs_sum(&values, |i| mask >> i & 1 == 1) >= threshold)
            .count() as u64;
        assert_eq!(extreme_patterns(&values, threshold), brute);
        // 24 cases count exactly, quickly.
        let many: Vec<f64> = (0..24)
            .map(|i| if i % 5 == 0 { -0.5 } else { 0.5 })
            .collect();
        let p = sign_flip_p_value(&many, &PermutationParams::default()).unwrap();
        assert_eq!(
            p.method,
            PermutationMethod::ExactSignFlip { patterns: 1 << 24 }
        );
    }

    #[test]
    fn pass_at_k_is_unbiased_estimator() {
        // n=5, c=2, k=1 -> 0.4 ; k=2 -> 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7
        assert!(close(pass_at_k(5, 2, 1).unwrap(), 0.4, 1e-15));
        assert!(close(pass_at_k(5, 2, 2).unwrap(), 0.7, 1e-15));
        assert_eq!(pass_at_k(5, 3, 3).unwrap(), 1.0); // n - c < k
        assert_eq!(pass_at_k(5, 0, 3).unwrap(), 0.0);
        // pass^k: C(2,2)/C(5,2) = 0.1
        assert!(close(pass_hat_k(5, 2, 2).unwrap(), 0.1, 1e-15));
        assert_eq!(pass_hat_k(5, 1, 2).unwrap(), 0.0);
        assert!(pass_at_k(3, 4, 1).is_err());
        assert!(pass_at_k(3, 1, 0).is_err());
        assert!(pass_at_k(3, 1, 4).is_err());
        // Large n does not overflow: 200 choose 100.
        let p = pass_at_k(200, 10, 100).unwrap();
        assert!(p > 0.99 && p <= 1.0);
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    fn deltas() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(-1.0f64..=1.0, 2..40)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn intervals_bracket_the_mean_and_stay_in_the_data_range(values in deltas()) {
            let m = mean(&values).unwrap();
            let t = t_interval(&values, 0.95).unwrap();
            prop_assert!(t.low <= m + 1e-12 && m <= t.high + 1e-12);
            let boot = bootstrap_interval(&values, 0.95, &BootstrapParams { resamples: 200, seed: 1, expanded: true, min_cases: 2 }).unwrap();
            let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            prop_assert!(lo - 1e-12 <= boot.low && boot.low <= boot.high && boot.high <= hi + 1e-12);
        }

        #[test]
        fn p_values_are_probabilities(values in deltas()) {
            let params = PermutationParams { exact_max_n: 12, resamples: 200, seed: 3 };
            let p = sign_flip_p_value(&values, &params).unwrap();
            prop_assert!(p.p > 0.0 && p.p <= 1.0);
            // Negating every delta leaves the two-sided p unchanged.
            let negated: Vec<f64> = values.iter().map(|v| -v).collect();
            prop_assert_eq!(sign_flip_p_value(&negated, &params).unwrap().p, p.p);
        }

        #[test]
        fn pass_at_k_grows_with_k_and_pass_hat_k_shrinks(n in 1u64..60, c_frac in 0.0f64..=1.0) {
            let c = (c_frac * n as f64).floor() as u64;
            let mut last_at = 0.0;
            let mut last_hat = 1.0;
            for k in 1..=n {
                let at = pass_at_k(n, c, k).unwrap();
                let hat = pass_hat_k(n, c, k).unwrap();
                prop_assert!((0.0..=1.0).contains(&at) && (0.0..=1.0).contains(&hat));
                prop_assert!(at + 1e-12 >= last_at && hat <= last_hat + 1e-12);
                prop_assert!(hat <= at + 1e-12);
                last_at = at;
                last_hat = hat;
            }
        }

        #[test]
        fn wilson_stays_in_unit_interval(n in 1u64..500, frac in 0.0f64..=1.0) {
            let s = (frac * n as f64).floor() as u64;
            let ci = wilson_interval(s, n, 0.95).unwrap();
            prop_assert!(0.0 <= ci.low && ci.low <= ci.estimate && ci.estimate <= ci.high && ci.high <= 1.0);
        }
    }
}
