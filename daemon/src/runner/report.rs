//! The result of a run as a person reads it: per case baseline vs skill, the headline lift with
//! its interval, U, the verdict, and (with a judge) skill-validator's compat score. Built from
//! the store, so a report of a run read back later (or re-judged) shows the same numbers.
//!
//! The verdict is the stored summary's, made by `core::scoring::verdict` for the chosen
//! scoring profile (the outcome lift unless a reader asks for ACES's overall): this module
//! never turns numbers into a verdict itself.
//!
//! Position-swap inconsistent pairwise verdicts: skill-validator forces them to a tie, which
//! zeroes the two quality terms (70% of the score's weight). That is the `compat` score, and
//! only that rule is called compat. skillwatch also reports the same score with those pairs
//! falling back to the independent judge's scores (`judge_fallback`), labelled as such.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skillwatch_core::plural::count;
use skillwatch_core::scoring::compat::{
    self, CompatParams, CompatVerdict, Magnitude, PairwiseJudgment, PairwiseRecord,
    PairwiseVerdict, Winner as CompatWinner,
};
use skillwatch_core::scoring::trial::JudgeScores;
use skillwatch_core::scoring::{self, Decision, MetricRole, ScoringProfile};

use crate::store::{
    Condition, JudgmentKind, RunId, RunInfo, RunRef, RunStatus, RunSummary, Spent, Stop, Store,
    StoreError, StoredJudgment, StoredTrial, TrialStatus, Verdict, Winner, scoring_trial,
};

/// The criterion under which the independent judge's goal score is stored (rubric criteria
/// are the case's own texts, the overall score has no criterion).
pub const GOAL_CRITERION: &str = "(goal) outcome matches the expected output";

/// The magnitude stored with a position-swap inconsistent pairwise verdict: such a verdict is
/// kept for the record but not used in scores.
pub const INCONSISTENT: &str = "inconsistent";

/// One condition of one case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideRow {
    /// Trials.
    pub trials: u32,
    /// Graded trials that passed.
    pub passed: u32,
    /// Graded trials.
    pub graded: u32,
    /// Mean over trials of the mean of their outcome metrics (pass, accuracy, goal accuracy,
    /// behavior check, declared custom outcome metrics).
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
    /// The case's lift under the report's profile (mean over its complete pairs).
    pub lift: Option<f64>,
    /// Plugin-arm side, for a run with a plugin arm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<SideRow>,
    /// The case's plugin-arm lift over the baseline under the report's profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin_lift: Option<f64>,
}

/// How many trials the run holds, by origin and outcome. The first four describe the
/// invocation that made the report; the outcome counts are read from the stored run
/// ([`RunReport::load`]), so every path to a report (in-process, through the daemon, read
/// back later) counts them alike.
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
    /// Trials recorded as infrastructure errors.
    pub errors: usize,
    /// Trials recorded as timeouts.
    pub timeouts: usize,
    /// Retries of the run's trials into fresh workspaces.
    pub retries: usize,
    /// Judge calls recorded as failed (after their retries).
    pub judge_errors: usize,
}

impl TrialTally {
    /// This invocation's counts with the outcome counts of the stored run.
    fn with_stored(mut self, trials: &[StoredTrial], judgments: &[StoredJudgment]) -> TrialTally {
        let with = |s: TrialStatus| trials.iter().filter(|t| t.status == s).count();
        self.errors = with(TrialStatus::Error);
        self.timeouts = with(TrialStatus::Timeout);
        self.retries = trials.iter().map(|t| t.retries.unwrap_or(0) as usize).sum();
        self.judge_errors = judgments
            .iter()
            .filter(|j| matches!(j.judgment.verdict, Verdict::Failed { .. }))
            .count();
        self
    }
}

/// Everything a run produced, for people and machines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// The run's identity as stored.
    pub run: RunInfo,
    /// The scoring profile the verdict and the per-case lifts are read under.
    pub profile: ScoringProfile,
    /// The verdict of that profile's lift, with its reasons.
    pub verdict: Decision,
    /// The verdict of the plugin arm's lift over the baseline under that profile, for a run
    /// with a plugin arm (the exit status and CI gates read `verdict` alone: the skill is
    /// what is measured, the plugin arm is beside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin_verdict: Option<Decision>,
    /// The stored summary (ACES lift per metric and overall, intervals, p, U, rates); `None`
    /// while running or when scoring failed (see `summary_error`).
    pub summary: Option<RunSummary>,
    /// Why there is no summary.
    pub summary_error: Option<String>,
    /// Per case, in suite order.
    pub cases: Vec<CaseRow>,
    /// Trial counts.
    pub tally: TrialTally,
    /// skill-validator's improvement score and verdict, when the run was judged, with its own
    /// rule for position-swap inconsistent pairwise verdicts (a tie).
    pub compat: Option<CompatVerdict>,
    /// The same score with inconsistent pairs scored by the independent judge instead; only
    /// when some pairwise verdict was inconsistent (otherwise it equals `compat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_fallback: Option<CompatVerdict>,
    /// Wall time of this invocation.
    pub wall_ms: u64,
    /// Where the trial workspaces and logs were kept (`keep_workspaces`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspaces: Option<std::path::PathBuf>,
    /// The error message of the run's first failed trial (in suite order), so a run that
    /// failed says why without a look at the history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Why the run stopped before its plan was done, when its budget stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
    /// What its trials spent (reused baselines cost nothing).
    #[serde(default)]
    pub spent: Spent,
}

impl RunReport {
    /// Build the report of `run` from the store, read under the default (outcome) profile.
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
        let case_order: Vec<String> = store.run_cases(run)?.into_iter().map(|c| c.key).collect();
        let judgments = store.run_judgments(run)?;
        let judged = info.judge_model.is_some() && info.status != RunStatus::Running;
        let (compat, judge_fallback) = if judged {
            compat_verdicts(&trials, &judgments)
        } else {
            (None, None)
        };
        let cases = case_rows(&case_order, &trials, &info.outcome_metrics);
        let first_error = trials
            .iter()
            .find(|t| t.status == TrialStatus::Error)
            .map(|t| {
                let message = t.error_message.as_deref().unwrap_or("no message recorded");
                format!("{} {} #{}: {message}", t.case, t.condition, t.attempt)
            });
        let report = RunReport {
            run: info,
            profile: ScoringProfile::Outcome,
            verdict: not_scored(summary_error.as_deref()),
            plugin_verdict: None,
            summary,
            summary_error,
            cases,
            tally: tally.with_stored(&trials, &judgments),
            compat,
            judge_fallback,
            wall_ms,
            workspaces: None,
            first_error,
            stop: store.stop_of(RunRef::paired(run))?,
            spent: store.spent(RunRef::paired(run))?,
        };
        Ok(report.with_profile(ScoringProfile::Outcome))
    }

    /// The same report read under `profile`: its verdict and per-case lifts.
    pub fn with_profile(mut self, profile: ScoringProfile) -> RunReport {
        self.profile = profile;
        if let Some(s) = &self.summary {
            self.verdict = s.headline.profile(profile).verdict.clone();
            self.plugin_verdict = s
                .headline
                .plugin
                .as_ref()
                .map(|p| p.profile(profile).verdict.clone());
            let lifts = case_lifts(Some(&s.lift), profile);
            let plugin_lifts = case_lifts(s.plugin_lift.as_ref(), profile);
            for row in &mut self.cases {
                row.lift = lifts.get(&row.case).copied().flatten();
                row.plugin_lift = plugin_lifts.get(&row.case).copied().flatten();
            }
        }
        self
    }

    /// Whether the run fails a CI job: the verdict regresses, or the run did not complete.
    pub fn fails(&self) -> bool {
        self.verdict.verdict.fails() || self.run.status != RunStatus::Completed
    }

    /// Why the run failed as a measurement, beyond any verdict: it measured nothing because
    /// its trials failed at the infrastructure (the agent could not start, the model API
    /// failed, ...). Such a run must not pass in CI as if it had found no change; `None`
    /// when the run measured something or had no errors.
    pub fn failure(&self) -> Option<String> {
        if self.verdict.verdict != scoring::Verdict::NotMeasured || self.tally.errors == 0 {
            return None;
        }
        let first = self
            .first_error
            .as_deref()
            .map_or_else(String::new, |e| format!("; the first: {e}"));
        Some(format!(
            "run {} measured nothing: {} of its {} failed with an error, so no case has a scored pair{first}",
            self.run.id,
            self.tally.errors,
            count(
                self.cases
                    .iter()
                    .map(|c| c.baseline.trials
                        + c.skill.trials
                        + c.plugin.as_ref().map_or(0, |p| p.trials))
                    .sum::<u32>(),
                "trial"
            )
        ))
    }
}

/// Each case's lift under `profile` in a lift report (none without one).
fn case_lifts(
    lift: Option<&scoring::LiftReport>,
    profile: ScoringProfile,
) -> BTreeMap<String, Option<f64>> {
    lift.map(|l| &l.cases)
        .into_iter()
        .flatten()
        .map(|c| (c.case_id.clone(), c.value(profile)))
        .collect()
}

/// The verdict of a run without a summary.
fn not_scored(why: Option<&str>) -> Decision {
    Decision {
        verdict: scoring::Verdict::NotMeasured,
        n: 0,
        needed_cases: None,
        estimate: None,
        interval: None,
        p: None,
        reason: format!(
            "not measured: {}",
            why.unwrap_or("the run has no scored summary")
        ),
        equivalence: None,
    }
}

/// Case rows in suite order; their lifts are filled in by [`RunReport::with_profile`].
fn case_rows(order: &[String], trials: &[StoredTrial], custom: &[String]) -> Vec<CaseRow> {
    order
        .iter()
        .filter(|case| trials.iter().any(|t| &t.case == *case))
        .map(|case| {
            let side = |c: Condition| {
                side_row(
                    trials
                        .iter()
                        .filter(|t| &t.case == case && t.condition == c),
                    custom,
                )
            };
            let plugin = side(Condition::Plugin);
            CaseRow {
                case: case.clone(),
                baseline: side(Condition::Baseline),
                skill: side(Condition::Skill),
                lift: None,
                plugin: (plugin.trials > 0).then_some(plugin),
                plugin_lift: None,
            }
        })
        .collect()
}

fn side_row<'a>(trials: impl Iterator<Item = &'a StoredTrial>, custom: &[String]) -> SideRow {
    let mut row = SideRow::default();
    let mut scores = Vec::new();
    for t in trials {
        row.trials += 1;
        match t.status {
            TrialStatus::Error => row.errors += 1,
            TrialStatus::Timeout => row.timeouts += 1,
            TrialStatus::Completed => {}
        }
        // A timeout is a failed task (the rule of `Trial::task_outcome`), so it is in the
        // denominator whether or not the trial was graded.
        let outcome = match t.status {
            TrialStatus::Timeout => Some(false),
            TrialStatus::Error => None,
            TrialStatus::Completed => t.passed,
        };
        if let Some(p) = outcome {
            row.graded += 1;
            row.passed += u32::from(p);
        }
        row.invoked += u32::from(t.skill_invoked == Some(true));
        if t.status == TrialStatus::Completed {
            let scored = scoring_trial(t);
            let outcome: Vec<f64> = scored
                .metric_names()
                .filter(|m| m.role(custom) == MetricRole::Outcome)
                .filter_map(|m| scored.metric(&m))
                .collect();
            if !outcome.is_empty() {
                scores.push(outcome.iter().sum::<f64>() / outcome.len() as f64);
            }
        }
    }
    row.score = (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
    row
}

/// The compat verdict (skill-validator's rule: an inconsistent pairwise verdict is a tie) and,
/// when some pairwise verdict was inconsistent, the judge-fallback variant (those pairs scored
/// by the independent judge). `None` when no pair has independent judge scores on both sides.
fn compat_verdicts(
    trials: &[StoredTrial],
    judgments: &[StoredJudgment],
) -> (Option<CompatVerdict>, Option<CompatVerdict>) {
    let scored: Vec<_> = trials
        .iter()
        .map(|t| {
            let mut s = scoring_trial(t);
            s.judge = judge_scores(t, judgments);
            s
        })
        .collect();
    let records = pairwise_records(judgments);
    let score = |records: &[PairwiseRecord]| {
        let (scenarios, _) = compat::scenarios_from_trials(&scored, records).ok()?;
        if scenarios.is_empty() {
            return None;
        }
        compat::verdict(&scenarios, &CompatParams::default()).ok()
    };
    let compat = score(&records);
    let fallback = records
        .iter()
        .any(|r| !r.judgment.position_swap_consistent)
        .then(|| {
            let consistent: Vec<PairwiseRecord> = records
                .iter()
                .filter(|r| r.judgment.position_swap_consistent)
                .cloned()
                .collect();
            score(&consistent)
        })
        .flatten();
    (compat, fallback)
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

/// Pairwise verdicts as compat reads them. A position-swap inconsistent overall verdict
/// becomes skill-validator's tie on every criterion (`position_swap_consistent: false`); a
/// pair whose overall judgment failed is left out (its pairs fall back to the independent
/// scores, as skill-validator does when the pairwise judge errs).
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
    let tie = PairwiseVerdict {
        winner: CompatWinner::Tie,
        magnitude: Magnitude::Equal,
    };
    by_pair
        .into_iter()
        .filter_map(|((case_id, attempt), rows)| {
            let overall = rows.iter().find(|j| j.judgment.criterion.is_none())?;
            let criteria = rows.iter().filter(|j| j.judgment.criterion.is_some());
            let judgment = if is_inconsistent(&overall.judgment.verdict) {
                PairwiseJudgment {
                    rubric: criteria.map(|_| tie).collect(),
                    overall: tie,
                    position_swap_consistent: false,
                }
            } else {
                PairwiseJudgment {
                    rubric: criteria
                        .map(|j| preference(&j.judgment.verdict).unwrap_or(tie))
                        .collect(),
                    overall: preference(&overall.judgment.verdict)?,
                    position_swap_consistent: true,
                }
            };
            Some(PairwiseRecord {
                case_id,
                attempt,
                judgment,
            })
        })
        .collect()
}

fn is_inconsistent(v: &Verdict) -> bool {
    matches!(v, Verdict::Preference { magnitude, .. } if magnitude == INCONSISTENT)
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

impl crate::runs::Outcome for RunReport {
    fn status(&self) -> crate::store::RunStatus {
        self.run.status
    }

    fn failure(&self) -> Option<String> {
        RunReport::failure(self)
    }

    fn lift(&self) -> Option<f64> {
        self.summary.as_ref().and_then(|s| s.headline.outcome.lift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Judgment;

    fn pairwise(
        case: &str,
        criterion: Option<&str>,
        winner: Winner,
        magnitude: &str,
    ) -> StoredJudgment {
        StoredJudgment {
            case: case.into(),
            attempt: 0,
            trial: None,
            judgment: Judgment {
                kind: JudgmentKind::Pairwise,
                judge_model: "j".into(),
                criterion: criterion.map(str::to_owned),
                verdict: Verdict::Preference {
                    winner,
                    magnitude: magnitude.into(),
                },
                reasoning: None,
            },
        }
    }

    /// skill-validator: a position-swap inconsistent verdict is a tie on every criterion, kept
    /// (not dropped, which would let the independent judge decide those pairs).
    #[test]
    fn inconsistent_pairwise_verdicts_are_ties_under_the_compat_rule() {
        let judgments = vec![
            pairwise("a", None, Winner::Tie, INCONSISTENT),
            pairwise("a", Some("clear"), Winner::Skill, "much-better"),
            pairwise("b", None, Winner::Skill, "slightly-better"),
            pairwise("b", Some("clear"), Winner::Baseline, "much-worse"),
        ];
        let records = pairwise_records(&judgments);
        assert_eq!(records.len(), 2);
        let a = &records[0].judgment;
        assert!(!a.position_swap_consistent);
        assert_eq!(a.overall.signed(), 0.0);
        assert_eq!(
            a.rubric.iter().map(|v| v.signed()).collect::<Vec<_>>(),
            vec![0.0]
        );
        let b = &records[1].judgment;
        assert!(b.position_swap_consistent);
        assert_eq!(b.overall.signed(), 0.4);
        assert_eq!(b.rubric[0].signed(), -1.0);
    }
}
