//! The result of a run as a person reads it: per case baseline vs skill, the headline lift with
//! its interval, U, the verdict, and (with a judge) skill-validator's compat score. Built from
//! the store, so a report of a run read back later (or re-judged) shows the same numbers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skillwatch_core::scoring::compat::{
    self, CompatParams, CompatVerdict, Magnitude, PairwiseJudgment, PairwiseRecord,
    PairwiseVerdict, Winner as CompatWinner,
};
use skillwatch_core::scoring::trial::JudgeScores;
use skillwatch_core::scoring::{Interval, Metric};

use crate::store::{
    Condition, JudgmentKind, RunId, RunInfo, RunStatus, RunSummary, Store, StoreError,
    StoredJudgment, StoredTrial, TrialStatus, Verdict, Winner, scoring_trial,
};

/// The criterion under which the independent judge's goal score is stored (rubric criteria
/// are the case's own texts, the overall score has no criterion).
pub const GOAL_CRITERION: &str = "(goal) outcome matches the expected output";

/// The magnitude stored with a position-swap inconsistent pairwise verdict: such a verdict is
/// kept for the record but not used in scores.
pub const INCONSISTENT: &str = "inconsistent";

/// What a run says about the skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunVerdict {
    /// Lift ≥ +0.05 (ACES pass band) and its interval lies above 0.
    Improves,
    /// Lift below 0 and its interval lies below 0.
    Regresses,
    /// Measured, but neither of the above (too few cases, or an interval spanning 0).
    Inconclusive,
    /// No pair could be scored.
    NotMeasured,
}

impl RunVerdict {
    /// The verdict for an overall lift and its interval.
    pub fn of(lift: Option<f64>, interval: Option<&Interval>) -> RunVerdict {
        match (lift, interval) {
            (None, _) => RunVerdict::NotMeasured,
            (Some(l), Some(i)) if l >= 0.05 && i.low > 0.0 => RunVerdict::Improves,
            (Some(l), Some(i)) if l < 0.0 && i.high < 0.0 => RunVerdict::Regresses,
            _ => RunVerdict::Inconclusive,
        }
    }

    /// `improves`, `regresses`, `inconclusive`, `not measured`.
    pub fn word(self) -> &'static str {
        match self {
            RunVerdict::Improves => "improves",
            RunVerdict::Regresses => "regresses",
            RunVerdict::Inconclusive => "inconclusive",
            RunVerdict::NotMeasured => "not measured",
        }
    }
}

/// One condition of one case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideRow {
    /// Trials.
    pub trials: u32,
    /// Graded trials that passed.
    pub passed: u32,
    /// Graded trials.
    pub graded: u32,
    /// Mean over trials of the mean of their default metrics.
    pub score: Option<f64>,
    /// Trials whose agent loaded the skill under test.
    pub invoked: u32,
    /// Infrastructure errors.
    pub errors: u32,
    /// Timeouts.
    pub timeouts: u32,
}

/// One case's line of the summary table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRow {
    /// Case id.
    pub case: String,
    /// Baseline side.
    pub baseline: SideRow,
    /// With-skill side.
    pub skill: SideRow,
    /// The case's overall delta (mean over its complete pairs).
    pub lift: Option<f64>,
}

/// How many trials the run holds, by origin and outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialTally {
    /// Trials the plan called for.
    pub planned: usize,
    /// Trials run by this invocation.
    pub ran: usize,
    /// Baseline trials copied from earlier runs.
    pub reused: usize,
    /// Trials already recorded before a resume.
    pub resumed: usize,
    /// Infrastructure errors recorded.
    pub errors: usize,
    /// Timeouts recorded.
    pub timeouts: usize,
    /// Retries into fresh workspaces.
    pub retries: usize,
    /// Judge calls that failed after their retries.
    pub judge_errors: usize,
}

/// Everything a run produced, for people and machines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// The run's identity as stored.
    pub run: RunInfo,
    /// The verdict from the overall lift and its interval.
    pub verdict: RunVerdict,
    /// The stored summary (ACES lift per metric and overall, intervals, p, U, rates); `None`
    /// while running or when scoring failed (see `summary_error`).
    pub summary: Option<RunSummary>,
    /// Why there is no summary.
    pub summary_error: Option<String>,
    /// Per case, in suite order.
    pub cases: Vec<CaseRow>,
    /// Trial counts.
    pub tally: TrialTally,
    /// skill-validator's improvement score and verdict, when the run was judged.
    pub compat: Option<CompatVerdict>,
    /// Wall time of this invocation.
    pub wall_ms: u64,
    /// Where the trial workspaces and logs were kept (`keep_workspaces`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspaces: Option<std::path::PathBuf>,
}

impl RunReport {
    /// Build the report of `run` from the store.
    pub fn load(
        store: &Store,
        run: RunId,
        tally: TrialTally,
        wall_ms: u64,
    ) -> Result<RunReport, StoreError> {
        let info = store.run(run)?;
        let trials = store.run_trials(run)?;
        let (summary, summary_error) = match store.summary(run) {
            Ok(s) => (s, None),
            Err(StoreError::Scoring { reason, .. }) => (None, Some(reason)),
            Err(e) => return Err(e),
        };
        let headline = summary.as_ref().map(|s| &s.headline);
        let verdict = RunVerdict::of(
            headline.and_then(|h| h.lift),
            headline.and_then(|h| h.interval.as_ref()),
        );
        let case_order: Vec<String> = store.run_cases(run)?.into_iter().map(|c| c.key).collect();
        let cases = case_rows(&case_order, &trials, summary.as_ref());
        let judgments = store.run_judgments(run)?;
        let compat = if info.judge_model.is_some() && info.status != RunStatus::Running {
            compat_verdict(&trials, &judgments)
        } else {
            None
        };
        Ok(RunReport {
            run: info,
            verdict,
            summary,
            summary_error,
            cases,
            tally,
            compat,
            wall_ms,
            workspaces: None,
        })
    }
}

fn case_rows(
    order: &[String],
    trials: &[StoredTrial],
    summary: Option<&RunSummary>,
) -> Vec<CaseRow> {
    let lifts: BTreeMap<&str, Option<f64>> = summary
        .map(|s| {
            s.lift
                .cases
                .iter()
                .map(|c| (c.case_id.as_str(), c.overall))
                .collect()
        })
        .unwrap_or_default();
    order
        .iter()
        .filter(|case| trials.iter().any(|t| &t.case == *case))
        .map(|case| {
            let side = |c: Condition| {
                side_row(
                    trials
                        .iter()
                        .filter(|t| &t.case == case && t.condition == c),
                )
            };
            CaseRow {
                case: case.clone(),
                baseline: side(Condition::Baseline),
                skill: side(Condition::Skill),
                lift: lifts.get(case.as_str()).copied().flatten(),
            }
        })
        .collect()
}

fn side_row<'a>(trials: impl Iterator<Item = &'a StoredTrial>) -> SideRow {
    let mut row = SideRow::default();
    let mut scores = Vec::new();
    for t in trials {
        row.trials += 1;
        match t.status {
            TrialStatus::Error => row.errors += 1,
            TrialStatus::Timeout => row.timeouts += 1,
            TrialStatus::Completed => {}
        }
        if let Some(p) = t.passed {
            row.graded += 1;
            row.passed += u32::from(p);
        }
        row.invoked += u32::from(t.skill_invoked == Some(true));
        if t.status == TrialStatus::Completed {
            let defaults: Vec<f64> = t
                .metrics
                .iter()
                .filter(|(name, _)| Metric::from((*name).clone()).is_default())
                .map(|(_, v)| *v)
                .collect();
            if !defaults.is_empty() {
                scores.push(defaults.iter().sum::<f64>() / defaults.len() as f64);
            }
        }
    }
    row.score = (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
    row
}

/// The compat verdict from the stored trials and judgments; `None` when no pair has
/// independent judge scores on both sides.
fn compat_verdict(trials: &[StoredTrial], judgments: &[StoredJudgment]) -> Option<CompatVerdict> {
    let scored: Vec<_> = trials
        .iter()
        .map(|t| {
            let mut s = scoring_trial(t);
            s.judge = judge_scores(t, judgments);
            s
        })
        .collect();
    let pairwise = pairwise_records(judgments);
    let (scenarios, _) = compat::scenarios_from_trials(&scored, &pairwise).ok()?;
    if scenarios.is_empty() {
        return None;
    }
    compat::verdict(&scenarios, &CompatParams::default()).ok()
}

fn judge_scores(t: &StoredTrial, judgments: &[StoredJudgment]) -> Option<JudgeScores> {
    let mine: Vec<&StoredJudgment> = judgments
        .iter()
        .filter(|j| j.trial == Some(t.id) && j.judgment.kind == JudgmentKind::Independent)
        .collect();
    let score = |j: &&StoredJudgment| match j.judgment.verdict {
        Verdict::Score { score } => Some(score),
        _ => None,
    };
    let overall = mine
        .iter()
        .filter(|j| j.judgment.criterion.is_none())
        .find_map(score)?;
    let rubric = mine
        .iter()
        .filter(|j| {
            j.judgment
                .criterion
                .as_deref()
                .is_some_and(|c| c != GOAL_CRITERION)
        })
        .filter_map(score)
        .collect();
    Some(JudgeScores { rubric, overall })
}

/// Consistent pairwise verdicts as compat reads them; inconsistent and failed ones are left
/// out, so those pairs fall back to the independent scores.
fn pairwise_records(judgments: &[StoredJudgment]) -> Vec<PairwiseRecord> {
    let mut by_pair: BTreeMap<(String, u32), Vec<&StoredJudgment>> = BTreeMap::new();
    for j in judgments
        .iter()
        .filter(|j| j.judgment.kind == JudgmentKind::Pairwise)
    {
        by_pair
            .entry((j.case.clone(), j.attempt))
            .or_default()
            .push(j);
    }
    by_pair
        .into_iter()
        .filter_map(|((case_id, attempt), rows)| {
            let overall = rows
                .iter()
                .find(|j| j.judgment.criterion.is_none())
                .and_then(|j| preference(&j.judgment.verdict))?;
            let rubric = rows
                .iter()
                .filter(|j| j.judgment.criterion.is_some())
                .map(|j| {
                    preference(&j.judgment.verdict).unwrap_or(PairwiseVerdict {
                        winner: CompatWinner::Tie,
                        magnitude: Magnitude::Equal,
                    })
                })
                .collect();
            Some(PairwiseRecord {
                case_id,
                attempt,
                judgment: PairwiseJudgment {
                    rubric,
                    overall,
                    position_swap_consistent: true,
                },
            })
        })
        .collect()
}

/// A stored preference as compat's verdict; `None` for errors and inconsistent verdicts.
fn preference(v: &Verdict) -> Option<PairwiseVerdict> {
    let Verdict::Preference { winner, magnitude } = v else {
        return None;
    };
    if magnitude == INCONSISTENT {
        return None;
    }
    let winner = match winner {
        Winner::Baseline => CompatWinner::Baseline,
        Winner::Skill => CompatWinner::Skill,
        Winner::Tie => CompatWinner::Tie,
    };
    let magnitude = match magnitude.as_str() {
        "much-better" => Magnitude::MuchBetter,
        "slightly-better" => Magnitude::SlightlyBetter,
        "slightly-worse" => Magnitude::SlightlyWorse,
        "much-worse" => Magnitude::MuchWorse,
        _ => Magnitude::Equal,
    };
    Some(PairwiseVerdict { winner, magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillwatch_core::scoring::IntervalMethod;

    fn interval(low: f64, high: f64) -> Interval {
        Interval {
            estimate: (low + high) / 2.0,
            low,
            high,
            level: 0.95,
            method: IntervalMethod::StudentT,
            n: 5,
        }
    }

    #[test]
    fn verdicts_need_an_interval_on_one_side_of_zero() {
        assert_eq!(RunVerdict::of(None, None), RunVerdict::NotMeasured);
        assert_eq!(RunVerdict::of(Some(0.5), None), RunVerdict::Inconclusive);
        assert_eq!(
            RunVerdict::of(Some(0.3), Some(&interval(0.1, 0.5))),
            RunVerdict::Improves
        );
        assert_eq!(
            RunVerdict::of(Some(0.03), Some(&interval(0.01, 0.05))),
            RunVerdict::Inconclusive
        );
        assert_eq!(
            RunVerdict::of(Some(0.3), Some(&interval(-0.1, 0.7))),
            RunVerdict::Inconclusive
        );
        assert_eq!(
            RunVerdict::of(Some(-0.2), Some(&interval(-0.3, -0.1))),
            RunVerdict::Regresses
        );
    }
}
