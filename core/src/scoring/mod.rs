//! Scoring and statistics: from stored trials to the numbers a skill author reads.
//!
//! Pure functions over plain data, no I/O: the store maps its rows to [`Trial`]s (and
//! [`ProbeResult`]s), calls a scorer, and stores or shows the result. Every constant is a
//! field of a `*Params` struct whose `Default` is the published value, and every interval
//! says its method and n ([`Interval`]).
//!
//! | module | what | source |
//! |---|---|---|
//! | [`trial`] | input types, validation, pairing by (case, attempt), exclusion counts | ACES §3 |
//! | [`lift`] | Skill Lift per metric, the outcome lift and ACES's overall, per cell | seed 001 §3 |
//! | [`verdict`] | the one verdict rule: improves, regresses, no change, inconclusive | |
//! | [`case_test`] | per-case exact tests (Fisher, permutation) with Holm's correction: which cases a report may call worse | |
//! | [`plan`] | power: the smallest lift a design can detect, the cases a lift needs | |
//! | [`skilltester`] | utility U, security S, status | seed 000 §4 |
//! | [`compat`] | skill-validator improvement score, verdict, normalized gain | anchors b1.4-b1.7 |
//! | [`stats`] | t-interval, paired bootstrap, sign-flip permutation p, Wilson, pass@k | |
//! | [`passk`] | pass@k and pass^k per condition from repeated attempts | |
//! | [`compare`] | two models or two skill versions: per-case lift differences and a verdict | |
//! | [`rate_difference`] | a change of trigger rate paired by query (description A/B, two models) | Agresti & Min 2005 |
//! | [`calibration`] | simulations that check the verdicts' error rates and the intervals' coverage | |
//!
//! Typical use by the store (one cell = one skill version x harness x model):
//!
//! ```
//! use skillwatch_core::scoring::{lift::{skill_lift, LiftParams}, trial::Trial};
//! let trials: Vec<Trial> = serde_json::from_str(r#"[
//!   {"case_id": "c1", "condition": "baseline", "status": "completed", "metrics": {"goal_accuracy": 0.25}},
//!   {"case_id": "c1", "condition": "skill", "status": "completed", "metrics": {"goal_accuracy": 0.75}}
//! ]"#).unwrap();
//! let report = skill_lift(&trials, &LiftParams::default()).unwrap();
//! assert_eq!(report.outcome.unwrap().lift, 0.5);
//! ```

pub mod calibration;
pub mod case_test;
pub mod compare;
pub mod compat;
pub mod lift;
pub mod passk;
pub mod plan;
pub mod rate_difference;
pub mod rng;
pub mod skilltester;
pub mod stats;
pub mod trial;
pub mod trigger;
pub mod verdict;

pub use compare::{CompareParams, CompareTarget, Comparison, compare_lifts};
pub use lift::{LiftParams, LiftReport, ProfileLift, ScoringProfile, skill_lift};
pub use skilltester::{
    ProbeResult, SecurityReport, SkillTesterParams, UtilityReport, security, utility,
};
pub use stats::{Interval, IntervalMethod, PValue};
pub use trial::{Arm, Condition, Exclusions, Metric, MetricRole, Trial, TrialError, TrialStatus};
pub use verdict::{Decision, Equivalence, Verdict, VerdictInterval, VerdictParams, decide};

/// Version of every formula, pairing rule, default parameter and the random stream in this
/// module. It changes whenever the same trials and parameters would give a different number,
/// so a stored summary computed under another version can be recognized and recomputed.
pub const SCORING_VERSION: &str = "skillwatch-scoring-3";

/// Why a score could not be computed. Messages say what was expected, what was found and
/// where (case, condition, attempt).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScoringError {
    /// An invalid or duplicate trial.
    #[error(transparent)]
    Trial(#[from] TrialError),
    /// A statistic refused its input or settings.
    #[error(transparent)]
    Stats(#[from] stats::StatsError),
    /// A parameter outside its documented range.
    #[error("invalid parameters: {0}")]
    InvalidParams(String),
    /// A SkillTester security group without any probe result.
    #[error(
        "security group {group} has no probe results; S needs at least one probe in each of the three groups"
    )]
    EmptySecurityGroup {
        /// The empty group's name.
        group: &'static str,
    },
    /// A judge score outside its scale (compat profile).
    #[error("{location}: {what} is {value}, expected a number in [1, 5]")]
    JudgeScoreOutOfRange {
        /// Which trial or run.
        location: String,
        /// Which score.
        what: &'static str,
        /// The value found.
        value: f64,
    },
}
