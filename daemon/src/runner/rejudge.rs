//! Re-judging a stored run without re-running its agents: the judge is asked again about the
//! stored outputs and trajectories, and each trial's judge-derived metrics (accuracy, goal
//! accuracy, behavior check) and outcome are recomputed from its stored checks and the new
//! verdicts. What judge failures left unjudged can so be judged later (dotnet/skills #899:
//! judge-side failures must never count as skill failures, nor force re-running agents).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use skillwatch_core::evalspec::Case;
use skillwatch_core::grading::judge::{self, JudgeClient, Response};
use skillwatch_core::grading::metrics::{behavior_check, unit};
use skillwatch_core::grading::{Check, CheckGroup, Grading, IndependentScores, task_passed};
use skillwatch_core::trajectory::Trajectory;

use crate::store::{
    Condition, JudgmentKind, RunId, RunRef, Store, StoredJudgment, StoredTrial, TrialRejudged,
    TrialStatus, Verdict,
};

use super::request::{JudgeMode, JudgeSettings};
use super::{RunError, independent_judgments, pairwise_judgments};
use crate::runs::{ProgressSink, RunEvent, with_store};
use skillwatch_protocol::Price;

/// Which verdicts to ask for again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejudgeScope {
    /// Only verdicts that are missing or failed (the default).
    Failed,
    /// Every verdict of the run.
    All,
}

/// What a re-judge did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejudgeTally {
    /// Trials judged again.
    pub trials: usize,
    /// Pairs compared again.
    pub pairs: usize,
    /// Judge calls that failed again (still re-judgeable).
    pub failures: usize,
}

/// The judge settings a run was made with (from its stored config).
pub fn stored_judge(store: &Store, run: RunId) -> Result<Option<JudgeSettings>, RunError> {
    let info = store.run(run)?;
    Ok(info
        .config
        .get("judge")
        .filter(|j| !j.is_null())
        .and_then(|j| serde_json::from_value(j.clone()).ok()))
}

/// One side of a pair as the pairwise judge reads it: output and trajectory.
type Side = (String, Option<Trajectory>);

/// What one re-judge works on.
struct Job {
    store: Arc<Mutex<Store>>,
    run: RunId,
    judge: Arc<dyn JudgeClient>,
    scope: RejudgeScope,
    progress: ProgressSink,
    cases: BTreeMap<String, Case>,
    judgments: Vec<StoredJudgment>,
    tally: RejudgeTally,
}

/// Judge run `run` again with `judge` (which must be the run's judge model). Its calls are
/// the run's spending, at `price` (the judge model's), whether or not the re-judge ends well.
pub async fn rejudge(
    store: Arc<Mutex<Store>>,
    run: RunId,
    (judge, price): (Arc<dyn JudgeClient>, Option<Price>),
    mode: JudgeMode,
    scope: RejudgeScope,
    progress: ProgressSink,
) -> Result<RejudgeTally, RunError> {
    let (judge, meter) = super::Metered::wrap(judge, price);
    let tally = judge_again(store.clone(), run, judge, mode, scope, progress).await;
    let calls = meter.take();
    with_store(&store, move |s| {
        s.record_judge_calls(RunRef::paired(run), &calls)
    })
    .await?;
    tally
}

async fn judge_again(
    store: Arc<Mutex<Store>>,
    run: RunId,
    judge: Arc<dyn JudgeClient>,
    mode: JudgeMode,
    scope: RejudgeScope,
    progress: ProgressSink,
) -> Result<RejudgeTally, RunError> {
    let (info, cases, trials, judgments) = with_store(&store, move |s| {
        Ok::<_, crate::store::StoreError>((
            s.run(run)?,
            s.run_cases(run)?,
            s.run_trials(run)?,
            s.run_judgments(run)?,
        ))
    })
    .await?;
    if info.judge_model.as_deref() != Some(judge.model()) {
        return Err(RunError::Settings {
            message: format!(
                "rejudge of run {run}: expected its judge model {}, found {}",
                info.judge_model
                    .as_deref()
                    .unwrap_or("(none: the run was not judged)"),
                judge.model()
            ),
        });
    }
    let cases = cases
        .into_iter()
        .filter_map(|c| Some((c.key, serde_json::from_value(c.definition?).ok()?)))
        .collect();
    let mut job = Job {
        store,
        run,
        judge,
        scope,
        progress,
        cases,
        judgments,
        tally: RejudgeTally::default(),
    };
    let mut sides: BTreeMap<(String, u32), [Option<Side>; 2]> = BTreeMap::new();
    for t in trials.iter().filter(|t| t.status == TrialStatus::Completed) {
        let side = job.trial(t).await?;
        // the pairwise judge compares the skill arm with the baseline, never the plugin arm
        if t.condition == Condition::Plugin {
            continue;
        }
        let slot = sides.entry((t.case.clone(), t.attempt)).or_default();
        slot[usize::from(t.condition == Condition::Skill)] = side;
    }
    if mode == JudgeMode::Pairwise {
        for ((key, attempt), slot) in sides {
            if let [Some(b), Some(s)] = slot {
                job.pair(key, attempt, b, s).await?;
            }
        }
    }
    Ok(job.tally)
}

impl Job {
    /// Judge one trial again when in scope; its side for the pairwise judge.
    async fn trial(&mut self, t: &StoredTrial) -> Result<Option<Side>, RunError> {
        let Some(case) = self.cases.get(&t.case).cloned() else {
            return Ok(None);
        };
        let (output, trajectory) = load_side(&self.store, t).await?;
        let judged = has_verdict(&self.judgments, |j| j.trial == Some(t.id));
        if self.scope == RejudgeScope::All || !judged {
            let response = Response {
                output: &output,
                trajectory: trajectory.as_ref(),
            };
            let result = judge::judge_independent(self.judge.as_ref(), &case, response).await;
            if let Err(e) = &result {
                self.failed(&t.case, t.attempt, Some(t.condition), &e.message);
            }
            let error = result.as_ref().err().map(|e| e.message.as_str());
            let update = rejudged(
                &self.store,
                t,
                &case,
                self.judge.model(),
                result.as_ref().ok(),
                error,
            )
            .await?;
            let run = self.run;
            with_store(&self.store, move |s| s.replace_trial_judging(run, &update)).await?;
            self.tally.trials += 1;
        }
        Ok(Some((output, trajectory)))
    }

    /// Compare one pair again when in scope.
    async fn pair(&mut self, key: String, attempt: u32, b: Side, s: Side) -> Result<(), RunError> {
        let judged = has_verdict(&self.judgments, |j| {
            j.trial.is_none()
                && j.case == key
                && j.attempt == attempt
                && j.judgment.kind == JudgmentKind::Pairwise
        });
        if self.scope == RejudgeScope::Failed && judged {
            return Ok(());
        }
        let Some(case) = self.cases.get(&key).cloned() else {
            return Ok(());
        };
        let result = judge::judge_pairwise(
            self.judge.as_ref(),
            &case,
            Response {
                output: &b.0,
                trajectory: b.1.as_ref(),
            },
            Response {
                output: &s.0,
                trajectory: s.1.as_ref(),
            },
        )
        .await;
        if let Err(e) = &result {
            self.failed(&key, attempt, None, &e.message);
        }
        let rows = pairwise_judgments(self.judge.model(), &result);
        let run = self.run;
        with_store(&self.store, move |st| {
            st.replace_pairwise_judgments(run, &key, attempt, &rows)
        })
        .await?;
        self.tally.pairs += 1;
        Ok(())
    }

    fn failed(&mut self, case: &str, attempt: u32, condition: Option<Condition>, message: &str) {
        self.tally.failures += 1;
        (self.progress)(&RunEvent::JudgeFailed {
            case: case.to_owned(),
            attempt,
            condition,
            message: message.to_owned(),
        });
    }
}

/// Whether the judgments matching `which` hold a verdict that is not a failure.
fn has_verdict(judgments: &[StoredJudgment], which: impl Fn(&StoredJudgment) -> bool) -> bool {
    let mine: Vec<&StoredJudgment> = judgments.iter().filter(|j| which(j)).collect();
    !mine.is_empty()
        && !mine
            .iter()
            .any(|j| matches!(j.judgment.verdict, Verdict::Failed { .. }))
}

/// A trial's stored output and trajectory (without skillwatch's grading extension).
async fn load_side(
    store: &Arc<Mutex<Store>>,
    t: &StoredTrial,
) -> Result<(String, Option<Trajectory>), RunError> {
    let (id, sha) = (t.id, t.trajectory_sha256.clone());
    with_store(store, move |s| {
        let output = s.trial_output(id)?.unwrap_or_default();
        let trajectory = match sha {
            Some(sha) => s
                .trajectory(&sha)?
                .and_then(|raw| serde_json::from_slice::<Trajectory>(&raw.bytes).ok()),
            None => None,
        };
        Ok::<_, crate::store::StoreError>((
            output,
            trajectory.map(|mut t| {
                if let Some(extra) = t.extra.as_mut() {
                    extra.remove("skillwatch");
                }
                t
            }),
        ))
    })
    .await
}

/// The new judging results of one trial, its metrics recomputed from its stored checks.
async fn rejudged(
    store: &Arc<Mutex<Store>>,
    t: &StoredTrial,
    case: &Case,
    model: &str,
    judged: Option<&IndependentScores>,
    error: Option<&str>,
) -> Result<TrialRejudged, RunError> {
    let id = t.id;
    let stored = with_store(store, move |s| s.trial_checks(id)).await?;
    let mut checks: Vec<Check> = stored
        .into_iter()
        .filter(|a| a.kind != "expected_behavior")
        .map(|a| Check {
            group: Check::group_of_kind(&a.kind),
            kind: a.kind,
            description: a.description,
            passed: a.passed,
            message: a.message,
        })
        .collect();
    let expectations = judged.map(Grading::expectation_checks).unwrap_or_default();
    checks.extend(expectations.iter().cloned());
    let mut metrics = BTreeMap::new();
    if let Some(j) = judged {
        metrics.insert("accuracy".to_owned(), unit(j.overall));
        if let (Some(goal), Some(_)) = (j.goal, &case.judged.expected_output) {
            metrics.insert("goal_accuracy".to_owned(), unit(goal));
        }
    }
    if let Some(b) = behavior_check(&checks) {
        metrics.insert("behavior_check".to_owned(), b);
    }
    let cleared: Vec<String> = ["accuracy", "goal_accuracy", "behavior_check"]
        .into_iter()
        .filter(|m| !metrics.contains_key(*m))
        .map(str::to_owned)
        .collect();
    Ok(TrialRejudged {
        trial: t.id,
        judgments: independent_judgments(model, judged, error),
        expectations: super::assertion_rows(
            &expectations
                .into_iter()
                .filter(|c| c.group == CheckGroup::Expectation)
                .collect::<Vec<_>>(),
        ),
        metrics,
        cleared,
        passed: Some(task_passed(&checks, t.status == TrialStatus::Completed)),
    })
}
