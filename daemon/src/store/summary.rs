//! Run summaries: a finished run's trials scored by `core::scoring` (ACES Skill Lift with its
//! intervals, SkillTester utility, pass and invocation rates), stored as one row so history and
//! lenses never re-score thousands of trials. A summary is derived data: it is recomputed
//! whenever [`summary_version`] changes, and its randomness (bootstrap, permutation) is seeded
//! with the run's stored seed, so recomputing gives the same numbers.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use skillwatch_core::scoring::lift::LiftBand;
use skillwatch_core::scoring::passk::{PassAtK, pass_at_k_of, pass_rate, rate_by_case};
use skillwatch_core::scoring::skilltester::{ProbeResult, SecurityReport};
use skillwatch_core::scoring::stats::InferenceParams;
use skillwatch_core::scoring::trial::{
    Arm, AssertionCounts, TokenUsage, has_plugin_arm, pair_trials, versus_baseline,
};
use skillwatch_core::scoring::{
    self, Decision, Exclusions, Interval, LiftParams, LiftReport, Metric, MetricRole, PValue,
    ScoringProfile, SkillTesterParams, UtilityReport, VerdictParams,
};

use super::error::{Result, StoreError};
use super::read::{RunInfo, StoredTrial};
use super::time::now_ms;
use super::types::{Condition, RunId, TrialStatus};

/// Version of this module's mapping from stored trials to scoring inputs and of the summary's
/// shape. Bump it when either changes a stored number or field.
pub const SUMMARY_MAPPING_VERSION: &str = "store-summary-3";

/// The version stored with every summary: `core::scoring`'s version plus this module's, so a
/// change in either recomputes stored summaries on their next read.
pub fn summary_version() -> String {
    format!("{}+{SUMMARY_MAPPING_VERSION}", scoring::SCORING_VERSION)
}

/// Trials of one condition by how they ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    /// Finished trials.
    pub completed: usize,
    /// Infrastructure errors.
    pub error: usize,
    /// Timeouts.
    pub timeout: usize,
}

/// Trial counts per condition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialCounts {
    /// Baseline trials.
    pub baseline: StatusCounts,
    /// With-skill trials.
    pub skill: StatusCounts,
    /// Plugin-arm trials; absent (all zero) for a run without a plugin arm.
    #[serde(default, skip_serializing_if = "StatusCounts::is_empty")]
    pub plugin: StatusCounts,
}

impl StatusCounts {
    /// No trial at all.
    pub fn is_empty(&self) -> bool {
        *self == StatusCounts::default()
    }
}

/// The plugin arm against the baseline: the same headline figures the skill arm has, from
/// the same scorer (`core::scoring::trial::versus_baseline`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmHeadline {
    /// The outcome lift of the plugin arm over the baseline, with its verdict.
    pub outcome: ProfileHeadline,
    /// ACES's six-metric overall of the plugin arm over the baseline.
    pub aces: ProfileHeadline,
    /// Wilson interval of the plugin trials' pass rate, clustered by case.
    pub pass_rate: Option<Interval>,
}

impl ArmHeadline {
    /// The headline of `profile`.
    pub fn profile(&self, profile: ScoringProfile) -> &ProfileHeadline {
        match profile {
            ScoringProfile::Outcome => &self.outcome,
            ScoringProfile::Aces => &self.aces,
        }
    }
}

/// One profile's headline: the lift, its intervals and test, and the verdict on them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileHeadline {
    /// Which metrics the lift is built from.
    pub profile: ScoringProfile,
    /// The lift: the mean of the per-case values, the estimand of `interval`, `p_value` and
    /// `verdict`; `None` when no case had one of the profile's metrics on both sides.
    pub lift: Option<f64>,
    /// The mean of the profile's metric lifts (ACES's Lift_{s,a} formula); differs from `lift`
    /// only when some case lacks some metric.
    pub metric_mean: Option<f64>,
    /// The metrics it is built from.
    pub metrics: Vec<Metric>,
    /// Student's t interval of `lift` (n = cases).
    pub interval: Option<Interval>,
    /// Expanded percentile bootstrap interval, where it is offered (enough cases).
    pub bootstrap_interval: Option<Interval>,
    /// Sign-flip permutation p-value of the per-case values.
    pub p_value: Option<PValue>,
    /// Cases with a value: n.
    pub cases: usize,
    /// (case, attempt) pairs behind them; a case's pairs are averaged first.
    pub pairs: usize,
    /// (case, attempt) pairs left out, by reason.
    pub excluded: Exclusions,
    /// ACES's diagnostic band of `lift`.
    pub band: Option<LiftBand>,
    /// The verdict (`core::scoring::verdict`, the rule every verdict uses).
    pub verdict: Decision,
}

/// What a history line or a lens shows about a run: small, read without the full report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunHeadline {
    /// The outcome lift (the default profile): what verdicts, exit codes, lenses and SW501
    /// read unless `--scoring-profile aces` is asked for.
    pub outcome: ProfileHeadline,
    /// ACES's six-metric overall, as the paper computes it.
    pub aces: ProfileHeadline,
    /// Process metrics shown beside the lift, never inside it: name -> lift.
    pub process: BTreeMap<String, f64>,
    /// Most complete pairs any case had (the run's attempts per case).
    pub attempts: u32,
    /// Trials per condition and status.
    pub trials: TrialCounts,
    /// Wilson interval of the baseline trials' pass rate, clustered by case (a timeout is a
    /// failed task; errors and ungraded trials are left out).
    pub baseline_pass_rate: Option<Interval>,
    /// Wilson interval of the with-skill trials' pass rate (same rule).
    pub skill_pass_rate: Option<Interval>,
    /// Wilson interval, clustered by case, of the rate at which with-skill trials read the
    /// skill (a failed read is not an invocation).
    pub invocation_rate: Option<Interval>,
    /// pass@k and pass^k per condition, with k = the attempts per case, when above 1.
    pub pass_at_k: Vec<PassAtK>,
    /// SkillTester utility U on [0, 100], when any task was scorable.
    pub utility: Option<f64>,
    /// Its t interval over cases, clipped to [0, 100].
    pub utility_interval: Option<Interval>,
    /// SkillTester security S and status, from the run's probe results, when it has some in
    /// every group.
    pub security: Option<SecurityReport>,
    /// The plugin arm's lift over the baseline, for a run that has one (a Vally experiment's
    /// plugin arm); absent otherwise, so a two-arm run's headline is what it always was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<ArmHeadline>,
}

impl RunHeadline {
    /// The headline of `profile`.
    pub fn profile(&self, profile: ScoringProfile) -> &ProfileHeadline {
        match profile {
            ScoringProfile::Outcome => &self.outcome,
            ScoringProfile::Aces => &self.aces,
        }
    }
}

/// Everything scored about one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run.
    pub run: RunId,
    /// [`summary_version`] at computation.
    pub scoring_version: String,
    /// When it was computed (epoch ms).
    pub computed_ms: i64,
    /// The short form.
    pub headline: RunHeadline,
    /// The full ACES Skill Lift report (per metric and per case).
    pub lift: LiftReport,
    /// The SkillTester utility report; `None` when U could not be computed, with the reason
    /// in `utility_error`.
    pub utility: Option<UtilityReport>,
    /// Why U could not be computed.
    pub utility_error: Option<String>,
    /// The full Skill Lift report of the plugin arm over the baseline, when the run has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin_lift: Option<LiftReport>,
}

/// A stored trial as `core::scoring` reads it.
pub fn scoring_trial(t: &StoredTrial) -> scoring::Trial {
    scoring::Trial {
        case_id: t.case.clone(),
        condition: match t.condition {
            Condition::Baseline => scoring::Condition::Baseline,
            Condition::Skill => scoring::Condition::Skill,
            Condition::Plugin => scoring::Condition::Plugin,
        },
        attempt: t.attempt,
        status: match t.status {
            TrialStatus::Completed => scoring::TrialStatus::Completed,
            TrialStatus::Error => scoring::TrialStatus::Error,
            TrialStatus::Timeout => scoring::TrialStatus::Timeout,
        },
        passed: t.passed,
        metrics: t
            .metrics
            .iter()
            .map(|(name, value)| (scoring::Metric::from(name.clone()), *value))
            .collect(),
        tokens: match (t.tokens.input, t.tokens.output) {
            (Some(input), Some(output)) => Some(TokenUsage {
                input,
                output,
                cached: t.tokens.cached.unwrap_or(0),
            }),
            _ => None,
        },
        wall_ms: t.wall_ms,
        invoked: t.skill_invoked,
        assertions: (t.assertions_total > 0).then_some(AssertionCounts {
            passed: t.assertions_passed,
            total: t.assertions_total,
        }),
        tool_calls: t.tool_calls,
        turns: t.turns,
        errors: t.errors,
        judge: None,
    }
}

/// The inference settings of a run: the defaults, seeded with the run's seed.
pub fn inference_params(run: &RunInfo) -> InferenceParams {
    let mut params = InferenceParams::default();
    params.bootstrap.seed = run.seed;
    params.permutation.seed = run.seed;
    params
}

/// The verdict settings of a run's summary: the defaults at the run's level.
pub fn verdict_params(inference: &InferenceParams) -> VerdictParams {
    VerdictParams {
        level: inference.level,
        ..VerdictParams::default()
    }
}

/// Score a run's trials (and its security probes, when it has any).
pub fn compute(
    run: &RunInfo,
    trials: &[StoredTrial],
    probes: &[ProbeResult],
) -> Result<RunSummary> {
    let failed = |reason: String| StoreError::Scoring {
        run: run.id,
        reason,
    };
    let all: Vec<scoring::Trial> = trials.iter().map(scoring_trial).collect();
    // everything but the plugin arm's own figures reads the two arms alone, as before
    let scored = versus_baseline(&all, Arm::Skill);
    let inference = inference_params(run);
    let lift_params = LiftParams {
        inference,
        outcome_metrics: run.outcome_metrics.clone(),
        ..LiftParams::default()
    };
    let lift = scoring::skill_lift(&scored, &lift_params).map_err(|e| failed(e.to_string()))?;
    let params = SkillTesterParams::default();
    let (utility, utility_error) = match scoring::utility(&scored, &params) {
        Ok(report) => (Some(report), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let security = if probes.is_empty() {
        None
    } else {
        Some(scoring::security(probes, &params).map_err(|e| failed(e.to_string()))?)
    };
    let level = inference.level;
    let pass_rate = |c| pass_rate(&scored, c, level).map_err(|e| failed(e.to_string()));
    // Attempts of one case are clustered, for the invocation rate as for pass rates.
    let invocation_rate = rate_by_case(
        scored
            .iter()
            .filter(|t| t.condition == scoring::Condition::Skill)
            .filter_map(|t| Some((t.case_id.as_str(), t.invoked?))),
        level,
    )
    .map_err(|e| failed(e.to_string()))?;
    let verdict = verdict_params(&inference);
    let attempts = attempts_per_case(&scored);
    let (plugin_lift, plugin) = plugin_arm(&all, &lift_params, &verdict)
        .map_err(|e| failed(format!("the plugin arm: {e}")))?;
    let headline = RunHeadline {
        outcome: profile_headline(&lift, ScoringProfile::Outcome, &verdict),
        aces: profile_headline(&lift, ScoringProfile::Aces, &verdict),
        process: lift
            .metrics
            .iter()
            .filter(|m| m.metric.role(&lift.params.outcome_metrics) == MetricRole::Process)
            .map(|m| (m.metric.name().to_owned(), m.lift))
            .collect(),
        attempts,
        trials: count_statuses(trials),
        baseline_pass_rate: pass_rate(scoring::Condition::Baseline)?,
        skill_pass_rate: pass_rate(scoring::Condition::Skill)?,
        invocation_rate,
        pass_at_k: pass_at_k(&scored, attempts).map_err(failed)?,
        utility: utility.as_ref().and_then(|u| u.utility),
        utility_interval: utility.as_ref().and_then(|u| u.interval),
        security,
        plugin,
    };
    Ok(RunSummary {
        run: run.id,
        scoring_version: summary_version(),
        computed_ms: now_ms(),
        headline,
        lift,
        utility,
        utility_error,
        plugin_lift,
    })
}

/// The plugin arm's lift report and headline, for a run with plugin trials: the baseline and
/// the plugin arm through the same scorer, pairing and verdict as the skill arm.
fn plugin_arm(
    all: &[scoring::Trial],
    params: &LiftParams,
    verdict: &VerdictParams,
) -> std::result::Result<(Option<LiftReport>, Option<ArmHeadline>), String> {
    if !has_plugin_arm(all) {
        return Ok((None, None));
    }
    let lift = scoring::skill_lift(&versus_baseline(all, Arm::Plugin), params)
        .map_err(|e| e.to_string())?;
    let pass_rate = pass_rate(all, scoring::Condition::Plugin, params.inference.level)
        .map_err(|e| e.to_string())?;
    let headline = ArmHeadline {
        outcome: profile_headline(&lift, ScoringProfile::Outcome, verdict),
        aces: profile_headline(&lift, ScoringProfile::Aces, verdict),
        pass_rate,
    };
    Ok((Some(lift), Some(headline)))
}

/// One profile's headline with its verdict; a profile with no value is "not measured".
fn profile_headline(
    lift: &LiftReport,
    profile: ScoringProfile,
    verdict: &VerdictParams,
) -> ProfileHeadline {
    let p = lift.profile(profile);
    let summary = p.map(|p| p.summary).unwrap_or_default();
    ProfileHeadline {
        profile,
        lift: p.map(|p| p.lift),
        metric_mean: p.map(|p| p.metric_mean),
        metrics: p.map(|p| p.metrics.clone()).unwrap_or_default(),
        interval: summary.t_interval,
        bootstrap_interval: summary.bootstrap_interval,
        p_value: summary.p_value,
        cases: summary.n,
        pairs: p.map_or(0, |p| p.pairs),
        excluded: p.map_or_else(|| unpaired(lift), |p| p.excluded),
        band: p.map(|p| p.band),
        verdict: scoring::decide(&summary, verdict, "lift"),
    }
}

/// Exclusions when a profile has no value at all: the largest count any metric reports (every
/// pair was left out for some reason).
fn unpaired(lift: &LiftReport) -> Exclusions {
    lift.metrics
        .iter()
        .map(|m| m.excluded)
        .max_by_key(Exclusions::total)
        .unwrap_or_default()
}

/// The most complete (case, attempt) pairs any case of the run had.
fn attempts_per_case(trials: &[scoring::Trial]) -> u32 {
    let Ok(pairing) = pair_trials(trials) else {
        return 0;
    };
    let mut per_case: BTreeMap<&str, u32> = BTreeMap::new();
    for pair in &pairing.pairs {
        *per_case.entry(pair.case_id).or_default() += 1;
    }
    per_case.values().copied().max().unwrap_or(0)
}

/// pass@k and pass^k per condition for k = `attempts`, when a case was tried more than once.
fn pass_at_k(
    trials: &[scoring::Trial],
    attempts: u32,
) -> std::result::Result<Vec<PassAtK>, String> {
    if attempts < 2 {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for condition in [scoring::Condition::Baseline, scoring::Condition::Skill] {
        if let Some(p) =
            pass_at_k_of(trials, condition, u64::from(attempts)).map_err(|e| e.to_string())?
        {
            out.push(p);
        }
    }
    Ok(out)
}

fn count_statuses(trials: &[StoredTrial]) -> TrialCounts {
    let mut counts = TrialCounts::default();
    for t in trials {
        let side = match t.condition {
            Condition::Baseline => &mut counts.baseline,
            Condition::Skill => &mut counts.skill,
            Condition::Plugin => &mut counts.plugin,
        };
        match t.status {
            TrialStatus::Completed => side.completed += 1,
            TrialStatus::Error => side.error += 1,
            TrialStatus::Timeout => side.timeout += 1,
        }
    }
    counts
}

/// Store (or replace) a run's summary.
pub fn put(conn: &Connection, summary: &RunSummary) -> Result<()> {
    let headline = serde_json::to_string(&summary.headline).map_err(|e| StoreError::Scoring {
        run: summary.run,
        reason: format!("cannot serialize the headline: {e}"),
    })?;
    let detail = serde_json::to_string(summary).map_err(|e| StoreError::Scoring {
        run: summary.run,
        reason: format!("cannot serialize the summary: {e}"),
    })?;
    let h = &summary.headline;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO run_summaries (run_id, scoring_version, lift, lift_low, lift_high,
                                               n_cases, n_excluded, headline, detail, computed_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        summary.run,
        summary.scoring_version,
        h.outcome.lift,
        h.outcome.interval.map(|i| i.low),
        h.outcome.interval.map(|i| i.high),
        h.outcome.cases as i64,
        h.outcome.excluded.total() as i64,
        headline,
        detail,
        summary.computed_ms,
    ])?;
    Ok(())
}

/// A run's stored summary if it was computed by the current scoring version.
pub fn get(conn: &Connection, run: RunId) -> Result<Option<RunSummary>> {
    let row: Option<String> = conn
        .prepare_cached(
            "SELECT detail FROM run_summaries WHERE run_id = ?1 AND scoring_version = ?2",
        )?
        .query_row(params![run, summary_version()], |r| r.get(0))
        .optional()?;
    row.map(|text| {
        serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
            table: "run_summaries",
            column: "detail",
            found: format!("JSON that does not parse as a summary ({e})"),
        })
    })
    .transpose()
}

/// A run's stored headline if it was computed by the current scoring version.
pub fn get_headline(conn: &Connection, run: RunId) -> Result<Option<RunHeadline>> {
    let row: Option<String> = conn
        .prepare_cached(
            "SELECT headline FROM run_summaries WHERE run_id = ?1 AND scoring_version = ?2",
        )?
        .query_row(params![run, summary_version()], |r| r.get(0))
        .optional()?;
    row.map(|text| parse_headline(&text)).transpose()
}

/// Parse a stored headline.
pub fn parse_headline(text: &str) -> Result<RunHeadline> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        table: "run_summaries",
        column: "headline",
        found: format!("JSON that does not parse as a headline ({e})"),
    })
}
