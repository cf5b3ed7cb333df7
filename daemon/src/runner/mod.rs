//! Paired runs: every case of a skill's suite run with and without the skill on one harness
//! and model, graded, judged, scored and stored; one kind of run on the engine
//! ([`crate::runs`]), which owns the lifecycle (begin, trials, record, end, report) and the
//! budget.
//!
//! # Using it
//!
//! ```no_run
//! # async fn demo() -> Result<(), skillwatch_daemon::runner::RunError> {
//! use std::sync::{Arc, Mutex};
//! use skillwatch_daemon::runner::*;
//! use skillwatch_daemon::store::Store;
//! use tokio_util::sync::CancellationToken;
//!
//! let store = Arc::new(Mutex::new(Store::open("history.sqlite3".as_ref())?));
//! let runner = Runner::new(store);
//! let mut harness = HarnessSettings::new(HarnessKind::Openai);
//! harness.base_url = Some("http://127.0.0.1:11434/v1".into());
//! let request = RunRequest::new("skills/pdf", harness, "qwen3:8b");
//! // Two steps, so a scheduler can record the run id before any trial starts ...
//! let prepared = runner.prepare(&request).await?;
//! let id = prepared.run_id();
//! let cancel = CancellationToken::new(); // cancel() kills the agents in flight
//! let progress: ProgressSink = Arc::new(|event: &RunEvent| eprintln!("{event:?}"));
//! let report = prepared.execute(progress, cancel).await?;
//! assert_eq!(report.run.id, id);
//! // ... or one: runner.run(&request, progress, cancel).await?
//! # Ok(()) }
//! ```
//!
//! # What a paired run does
//!
//! 1. Plan: the suite's cases, keys and fingerprints ([`plan_suite`], shared with the Harbor
//!    export), the harness and its version, the baseline key (harness + version + settings,
//!    model, judge, support skills, grading rules, default timeout).
//! 2. Begin: baseline trials of earlier runs it may reuse are found, and the run starts in the
//!    store (`begin_run`), or an interrupted run is reopened (`resume`).
//! 3. Trials: the reusable baselines are copied, then the remaining trials run, each in a
//!    fresh workspace (test files, setup files, setup commands), the target skill only in the
//!    with-skill condition and the support skills in both, through [`AgentRun`] (a fresh HOME
//!    and config dir, a scrubbed environment, a timeout that kills the agent's process group,
//!    a retry into a pristine workspace when the workspace or the agent could not start).
//!    Each trial is graded, judged (independent scores) and recorded as soon as it ends; each
//!    complete pair is judged pairwise (both orders) when the judge mode asks for it.
//! 4. End: the store scores the run (lift with intervals, U) and a [`RunReport`] is read back.
//!
//! A run the daemon drained ends `interrupted`, to be resumed: a request with `resume:
//! Some(id)` reopens it and runs only the missing trials.

mod config;
mod error;
mod judge;
mod plan;
mod rejudge;
mod report;
mod request;
mod trial;
pub(crate) mod workspace;

pub use crate::runs::{ProgressSink, RunEvent, no_progress};
pub use config::{
    CONFIG_FILE, ConfigError, HarnessTable, JudgeTable, RunConfig, RunTable, parse_kind,
};
pub use error::RunError;
pub use judge::{
    HarnessJudge, JUDGE_TIMEOUT, JudgeMeter, Metered, OpenAiJudge, client as judge_client,
};
pub use plan::{SuitePlan, plan_skill, plan_suite, suite_hash};
pub use rejudge::{RejudgeScope, RejudgeTally, rejudge, stored_judge};
pub use report::{CaseRow, GOAL_CRITERION, INCONSISTENT, RunReport, SideRow, TrialTally};
pub use request::{
    DEFAULT_TIMEOUT_SECS, HarnessKind, HarnessSettings, JudgeEndpoint, JudgeMode, JudgeSettings,
    RunRequest, trial_timeout,
};
pub(crate) use trial::{AgentRun, AgentRunOutcome};
pub use trial::{assertion_rows, independent_judgments};
pub(crate) use workspace::WorkspaceSource;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use skillwatch_core::grading::GRADING_VERSION;
use skillwatch_core::grading::judge::{
    JudgeClient, PairwiseResult, Response, judge_pairwise, magnitude_word,
};
use skillwatch_core::scoring::compat::{PairwiseVerdict, Winner as CompatWinner};
use skillwatch_core::skill::hash_bytes;
use skillwatch_core::trajectory::TokenUsage;
use skillwatch_protocol::Budget;
use tokio::task::JoinSet;

use crate::harness::{BoxFuture, Harness, SkillToStage};
use crate::runs::{
    Begun, Ctx, Ending, Engine, Kind, Recorded, Request, Started, check_key_vars, resolve,
    with_store,
};
use crate::store::{
    BaselineQuery, Condition, Judgment, JudgmentKind, ReusableTrial, Row, RunEnd, RunId, RunKind,
    RunRef, RunSpec, RunStatus, SkillIdentity, Spend, Store, StoreError, SuiteSpec, Verdict,
    Winner,
};

use trial::{FinishedTrial, RunContext, SideOutput, TrialJob};

/// The engine, under the name it has for paired runs.
pub type Runner = Engine;

/// A paired run begun in the store, ready to execute.
pub type PreparedRun = Started<Paired>;

impl Started<Paired> {
    /// The run's id in the history.
    pub fn run_id(&self) -> RunId {
        RunId(self.run().map_or(0, |r| r.id))
    }

    /// Trials the finished run will hold: cases × conditions × runs.
    pub fn planned(&self) -> usize {
        self.kind().planned()
    }
}

/// A run's design before it starts: its cases, and its conditions per case and attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedDesign {
    /// Cases.
    pub cases: usize,
    /// Conditions: baseline and skill, and the plugin arm when the suite has one.
    pub conditions: usize,
}

/// The design of a run of `request`, so what is printed before a run counts the trials the
/// run will hold (a plugin arm adds a third of them).
pub fn planned_design(request: &RunRequest) -> Result<PlannedDesign, RunError> {
    let plan = plan_suite(&request.skill_dir, &request.cases)?;
    Ok(PlannedDesign {
        cases: plan.cases.len(),
        conditions: 2 + usize::from(plan.plugin.is_some()),
    })
}

impl Request for RunRequest {
    type Kind = Paired;

    fn plan<'a>(&'a self, engine: &'a Engine) -> BoxFuture<'a, Result<Paired, RunError>> {
        Box::pin(async move {
            let suite = plan_suite(&self.skill_dir, &self.cases)?;
            check_key_vars(self.named_key_vars(), engine.host())?;
            let (harness, harness_version) = resolve::harness(&self.harness, engine.host()).await?;
            let support = self
                .support_skills
                .iter()
                .map(|d| plan_skill(d))
                .collect::<Result<Vec<_>, _>>()?;
            let baseline_key = baseline_key(self, harness.as_ref(), &harness_version, &support);
            let (judge, judge_meter) = match &self.judge {
                Some(j) => {
                    let client = judge::client(j, engine.host(), engine.temp_dir().to_path_buf())?;
                    let (client, meter) = judge::Metered::wrap(client, self.budget.judge_price);
                    (Some(client), Some(meter))
                }
                None => (None, None),
            };
            Ok(Paired {
                request: self.clone(),
                suite,
                support: support.into_iter().map(|(s, _)| s).collect(),
                harness,
                harness_version,
                baseline_key,
                judge,
                judge_meter,
                reused: Vec::new(),
                recorded: BTreeSet::new(),
                ctx: None,
                store: engine.store().clone(),
                host: engine.host().clone(),
                sides: BTreeMap::new(),
                judging: JoinSet::new(),
                judge_errors: 0,
            })
        })
    }
}

/// A baseline trial to copy into the new run as `attempt` of case index `case`.
#[derive(Debug, Clone, Copy)]
struct Reuse {
    case: usize,
    attempt: u32,
    from: ReusableTrial,
}

/// A planned paired run, and the state of its execution.
pub struct Paired {
    request: RunRequest,
    suite: SuitePlan,
    support: Vec<SkillToStage>,
    harness: Arc<dyn Harness>,
    harness_version: String,
    baseline_key: String,
    judge: Option<Arc<dyn JudgeClient>>,
    /// What the judge's calls spent, for the engine to record and budget.
    judge_meter: Option<judge::JudgeMeter>,
    /// Baselines copied instead of run.
    reused: Vec<Reuse>,
    /// What a resumed run holds already.
    recorded: BTreeSet<(String, Condition, u32)>,
    /// What trials share, once the run's folders exist.
    ctx: Option<Arc<RunContext>>,
    store: Arc<std::sync::Mutex<Store>>,
    host: crate::harness::HostEnv,
    /// One side of each pair still waiting for the other (pairwise judging).
    sides: BTreeMap<(usize, u32), [Option<SideOutput>; 2]>,
    /// Pairwise judge calls in flight; each says whether it failed.
    judging: JoinSet<Result<bool, RunError>>,
    judge_errors: usize,
}

impl Paired {
    /// Trials the finished run will hold: cases × conditions × runs.
    pub fn planned(&self) -> usize {
        self.suite.cases.len() * self.conditions().len() * self.request.runs as usize
    }

    /// The run's conditions: baseline and skill, and the plugin arm when the suite has one.
    fn conditions(&self) -> Vec<Condition> {
        let mut conditions = vec![Condition::Baseline, Condition::Skill];
        if self.suite.plugin.is_some() {
            conditions.push(Condition::Plugin);
        }
        conditions
    }

    /// The run's config JSON: the request's settings, what the baseline key hashed, the reused
    /// baselines, and the plugin arm's skills with their hashes when it has one (a two-arm
    /// run's config has no `plugin` key, as before).
    fn config(&self, reused: &[Reuse]) -> serde_json::Value {
        let r = &self.request;
        let cases = &self.suite.cases;
        let mut config = json!({
            "runs": r.runs,
            "jobs": r.jobs,
            "timeout_secs": r.timeout_secs,
            "retries": r.retries,
            "cases": r.cases,
            "harness": r.harness,
            "judge": r.judge,
            "judge_identity": r.judge.as_ref().map(JudgeSettings::identity),
            "support_skills": self.support.iter().map(|s| json!({"name": s.name, "path": s.source})).collect::<Vec<_>>(),
            "grading_version": GRADING_VERSION,
            "baseline_key": self.baseline_key,
            "budget": r.budget,
            "reused": reused.iter().map(|u| json!({
                "case": cases[u.case].0, "attempt": u.attempt,
                "from_trial": u.from.trial, "from_run": u.from.run,
            })).collect::<Vec<_>>(),
        });
        if let Some(plugin) = &self.suite.plugin {
            config["plugin"] = json!({
                "name": plugin.name,
                "skills": plugin.skills.iter().map(|(s, hash)| json!({
                    "name": s.name, "path": s.source, "content_hash": hash,
                })).collect::<Vec<_>>(),
            });
        }
        config
    }

    fn run_spec(&self, reused: &[Reuse]) -> RunSpec {
        let r = &self.request;
        RunSpec {
            skill: SkillIdentity {
                name: self.suite.target.name.clone(),
                path: Some(self.suite.skill_dir.display().to_string()),
                content_hash: self.suite.skill_hash.clone(),
            },
            suite: SuiteSpec {
                content_hash: self.suite.suite_hash(),
                source: self.suite.source(),
                cases: self.suite.case_specs(),
            },
            harness: self.harness.name().to_owned(),
            harness_version: Some(self.harness_version.clone()),
            model: r.model.clone(),
            judge_model: r.judge.as_ref().map(|j| j.model.clone()),
            scoring_profile: crate::store::DEFAULT_SCORING_PROFILE.into(),
            trigger: r.trigger.into(),
            config: self.config(reused),
            seed: r.seed,
            tool_version: resolve::tool_version(),
            started_ms: None,
        }
    }

    /// Baseline trials of earlier runs this run may copy, up to `runs` per case.
    fn reusable(&self, store: &Store) -> Result<Vec<Reuse>, RunError> {
        let mut out = Vec::new();
        let cases = self.suite.cases.iter().zip(&self.suite.fingerprints);
        for (i, ((key, _), hash)) in cases.enumerate() {
            let found = store.find_baselines(&BaselineQuery {
                skill: &self.suite.target.name,
                case: key,
                case_hash: hash,
                baseline_key: &self.baseline_key,
                limit: self.request.runs,
            })?;
            out.extend(found.into_iter().enumerate().map(|(a, from)| Reuse {
                case: i,
                attempt: a as u32,
                from,
            }));
        }
        Ok(out)
    }

    /// Reopen run `id` for resuming; the (case, condition, attempt) it already holds.
    fn reopen(
        &self,
        store: &mut Store,
        id: RunId,
    ) -> Result<BTreeSet<(String, Condition, u32)>, RunError> {
        let info = store.run(id)?;
        let mismatch = |what: &str, expected: &str, found: &str| RunError::Resume {
            run: id,
            expected: format!("{what} {expected}"),
            found: format!("{what} {found}"),
        };
        let target = &self.suite.target.name;
        if &info.skill != target {
            return Err(mismatch("skill", target, &info.skill));
        }
        if info.skill_hash != self.suite.skill_hash {
            return Err(mismatch(
                "skill version",
                &self.suite.skill_hash,
                &info.skill_hash,
            ));
        }
        if info.harness != self.harness.name()
            || info.harness_version.as_deref() != Some(&self.harness_version)
        {
            let found = format!(
                "{} {}",
                info.harness,
                info.harness_version.unwrap_or_default()
            );
            return Err(mismatch(
                "harness",
                &format!("{} {}", self.harness.name(), self.harness_version),
                &found,
            ));
        }
        if info.model != self.request.model {
            return Err(mismatch("model", &self.request.model, &info.model));
        }
        let expected_suite = self.suite.suite_hash();
        if info.suite_hash != expected_suite {
            return Err(mismatch("suite", &expected_suite, &info.suite_hash));
        }
        store.reopen_run(id)?;
        Ok(store
            .run_trials(id)?
            .into_iter()
            .map(|t| (t.case, t.condition, t.attempt))
            .collect())
    }

    /// Trials still to run, attempt by attempt, baseline then skill (then plugin) per case,
    /// so a partial run holds complete pairs.
    fn pending(&self) -> Vec<TrialJob> {
        let reused: BTreeSet<(usize, u32)> =
            self.reused.iter().map(|u| (u.case, u.attempt)).collect();
        let conditions = self.conditions();
        let mut jobs = Vec::new();
        for attempt in 0..self.request.runs {
            for (i, (key, _)) in self.suite.cases.iter().enumerate() {
                for &condition in &conditions {
                    let copied = condition == Condition::Baseline && reused.contains(&(i, attempt));
                    if copied || self.recorded.contains(&(key.clone(), condition, attempt)) {
                        continue;
                    }
                    jobs.push(TrialJob {
                        case: i,
                        condition,
                        attempt,
                    });
                }
            }
        }
        jobs
    }

    fn pairwise(&self) -> bool {
        self.request
            .judge
            .as_ref()
            .is_some_and(|j| j.mode == JudgeMode::Pairwise)
    }

    async fn copy_reused(&mut self, u: Reuse, ctx: &Ctx) -> Result<(), RunError> {
        let Some(run) = ctx.run else { return Ok(()) };
        let run = RunId(run.id);
        let pairwise = self.pairwise();
        let side = with_store(&self.store, move |s| {
            let id = s.copy_trial(u.from.trial, run, u.attempt)?;
            if !pairwise {
                return Ok::<_, StoreError>(None);
            }
            let output = s.trial_output(id)?.unwrap_or_default();
            let sha = s
                .run_trials(run)?
                .into_iter()
                .find(|t| t.id == id)
                .and_then(|t| t.trajectory_sha256);
            let trajectory = match sha {
                Some(sha) => s
                    .trajectory(&sha)?
                    .and_then(|t| serde_json::from_slice(&t.bytes).ok()),
                None => None,
            };
            Ok(Some(SideOutput {
                output,
                trajectory,
                observed: true,
            }))
        })
        .await?;
        (ctx.progress)(&RunEvent::TrialReused {
            case: self.suite.cases[u.case].0.clone(),
            attempt: u.attempt,
            from_run: u.from.run,
        });
        if let Some(side) = side {
            self.pair_side(u.case, u.attempt, Condition::Baseline, side, run);
        }
        Ok(())
    }

    /// Keep one side of a pair; when both are there and observed, judge them pairwise.
    fn pair_side(
        &mut self,
        case: usize,
        attempt: u32,
        condition: Condition,
        side: SideOutput,
        run: RunId,
    ) {
        let slot = self.sides.entry((case, attempt)).or_default();
        slot[usize::from(condition == Condition::Skill)] = Some(side);
        let [Some(b), Some(s)] = slot.clone() else {
            return;
        };
        self.sides.remove(&(case, attempt));
        let (Some(judge), Some(ctx)) = (self.judge.clone(), self.ctx.clone()) else {
            return;
        };
        if !(b.observed && s.observed) {
            return;
        }
        let store = self.store.clone();
        self.judging.spawn(async move {
            let (key, c) = &ctx.cases[case];
            let result = judge_pairwise(
                judge.as_ref(),
                c,
                Response {
                    output: &b.output,
                    trajectory: b.trajectory.as_ref(),
                },
                Response {
                    output: &s.output,
                    trajectory: s.trajectory.as_ref(),
                },
            )
            .await;
            if let Err(e) = &result {
                (ctx.progress)(&RunEvent::JudgeFailed {
                    case: key.clone(),
                    attempt,
                    condition: None,
                    message: e.message.clone(),
                });
            }
            let rows = pairwise_judgments(judge.model(), &result);
            let key = key.clone();
            with_store(&store, move |s| {
                s.record_pairwise_judgments(run, &key, attempt, &rows)
            })
            .await?;
            Ok(result.is_err())
        });
    }
}

impl Kind for Paired {
    type Trial = TrialJob;
    type Done = FinishedTrial;
    type Report = RunReport;

    const RUN: RunKind = RunKind::Paired;

    fn model(&self) -> &str {
        &self.request.model
    }

    fn budget(&self) -> &Budget {
        &self.request.budget
    }

    fn jobs(&self) -> usize {
        self.request.jobs
    }

    fn keep_folders(&self) -> bool {
        self.request.keep_workspaces
    }

    fn begin(&mut self, store: &mut Store) -> Result<Begun<TrialJob>, RunError> {
        let run = match self.request.resume {
            Some(id) => {
                self.recorded = self.reopen(store, id)?;
                id
            }
            None => {
                if self.request.reuse_baselines {
                    self.reused = self.reusable(store)?;
                }
                store.begin_run(&self.run_spec(&self.reused))?
            }
        };
        Ok(Begun {
            run: Some(RunRef::paired(run)),
            trials: self.pending(),
            started: Some(RunEvent::Started {
                run,
                kind: RunKind::Paired,
                skill: self.suite.target.name.clone(),
                harness: self.harness.name().to_owned(),
                harness_version: self.harness_version.clone(),
                model: self.request.model.clone(),
                cases: self.suite.cases.len(),
                planned: self.planned(),
                reused: self.reused.len(),
                resumed: self.recorded.len(),
            }),
            skill: self.suite.target.name.clone(),
        })
    }

    fn before<'a>(&'a mut self, ctx: &'a Ctx) -> BoxFuture<'a, Result<(), RunError>> {
        let r = &self.request;
        self.ctx = Some(Arc::new(RunContext {
            harness: self.harness.clone(),
            target: self.suite.target.clone(),
            support: self.support.clone(),
            plugin: self.suite.plugin.as_ref().map_or_else(Vec::new, |p| {
                p.skills.iter().map(|(s, _)| s.clone()).collect()
            }),
            skill_dir: self.suite.skill_dir.clone(),
            cases: self.suite.cases.clone(),
            model: r.model.clone(),
            retries: r.retries,
            timeout_secs: r.timeout_secs,
            host: self.host.clone(),
            judge: self.judge.clone(),
            progress: ctx.progress.clone(),
        }));
        Box::pin(async move {
            for u in self.reused.clone() {
                self.copy_reused(u, ctx).await?;
            }
            Ok(())
        })
    }

    fn start(&self, job: TrialJob, root: &Path) -> BoxFuture<'static, FinishedTrial> {
        let ctx = self.ctx.clone().expect("before() made the trials' context");
        Box::pin(trial::run_trial(ctx, job, root.to_path_buf()))
    }

    fn usage(done: &FinishedTrial) -> TokenUsage {
        let t = &done.record.tokens;
        TokenUsage {
            input: t.input.unwrap_or(0),
            output: t.output.unwrap_or(0),
            cached: t.cached.unwrap_or(0),
        }
    }

    fn row(&mut self, done: &FinishedTrial, spend: &Spend) -> Recorded {
        let mut record = done.record.clone();
        record.cost_usd = spend.cost_usd;
        Recorded {
            events: vec![RunEvent::TrialFinished {
                case: record.case.clone(),
                condition: record.condition,
                attempt: record.attempt,
                status: record.status,
                passed: record.passed,
                invoked: record.skill_invoked,
                wall_ms: record.wall_ms.unwrap_or(0),
                retries: done.retries,
                error: record.error_message.clone(),
                detail: None,
            }],
            row: Row::Paired(record),
            run: None,
        }
    }

    fn recorded<'a>(
        &'a mut self,
        done: FinishedTrial,
        ctx: &'a Ctx,
    ) -> BoxFuture<'a, Result<(), RunError>> {
        let FinishedTrial {
            job,
            side,
            folders,
            judge_error,
            ..
        } = done;
        if let Some(message) = judge_error {
            (ctx.progress)(&RunEvent::JudgeFailed {
                case: self.suite.cases[job.case].0.clone(),
                attempt: job.attempt,
                condition: Some(job.condition),
                message,
            });
        }
        if !self.request.keep_workspaces {
            tokio::task::spawn_blocking(move || {
                for f in folders {
                    let _ = std::fs::remove_dir_all(f);
                }
            });
        }
        // the pairwise judge compares the skill arm with the baseline; the plugin arm's lift
        // comes from its trials' own grades
        let paired_arm = job.condition != Condition::Plugin;
        if let (true, true, Some(run)) = (self.pairwise(), paired_arm, ctx.run) {
            self.pair_side(job.case, job.attempt, job.condition, side, RunId(run.id));
        }
        Box::pin(async { Ok(()) })
    }

    fn judge_calls(&mut self) -> Vec<Spend> {
        self.judge_meter
            .as_ref()
            .map_or_else(Vec::new, judge::JudgeMeter::take)
    }

    fn settle(&mut self, cancelled: bool) -> BoxFuture<'_, Result<(), RunError>> {
        Box::pin(async move {
            if cancelled {
                self.judging.shutdown().await;
                return Ok(());
            }
            while let Some(judged) = self.judging.join_next().await {
                let failed = judged.map_err(|e| RunError::Io {
                    context: "a judge task".into(),
                    source: std::io::Error::other(e.to_string()),
                })??;
                self.judge_errors += usize::from(failed);
            }
            Ok(())
        })
    }

    fn drained() -> RunStatus {
        RunStatus::Interrupted
    }

    fn end(&mut self, store: &mut Store, run: RunRef, end: &RunEnd) -> Result<(), StoreError> {
        store.finish(run, end)
    }

    fn report(
        &mut self,
        store: &Store,
        run: RunRef,
        ending: &Ending,
    ) -> Result<RunReport, RunError> {
        let tally = TrialTally {
            planned: self.planned(),
            ran: ending.ran,
            reused: self.reused.len(),
            resumed: self.recorded.len(),
            ..TrialTally::default()
        };
        let mut report = RunReport::load(store, RunId(run.id), tally, ending.wall_ms)?;
        report.workspaces = ending.kept.clone();
        Ok(report)
    }
}

/// A pairwise result as stored rows: the overall verdict (criterion `None`) and one per rubric
/// criterion; position-swap inconsistent verdicts are stored as ties with magnitude
/// [`INCONSISTENT`] (kept, never scored); a failed judge is one failed row.
pub fn pairwise_judgments(
    model: &str,
    result: &Result<PairwiseResult, skillwatch_core::grading::JudgeFailure>,
) -> Vec<Judgment> {
    let row = |criterion: Option<String>, verdict: Verdict, reasoning: Option<String>| Judgment {
        kind: JudgmentKind::Pairwise,
        judge_model: model.to_owned(),
        criterion,
        verdict,
        reasoning,
    };
    let p = match result {
        Ok(p) => p,
        Err(e) => {
            return vec![row(
                None,
                Verdict::Failed {
                    error: e.message.clone(),
                },
                None,
            )];
        }
    };
    let preference = |merged: Option<PairwiseVerdict>,
                      f: PairwiseVerdict,
                      r: PairwiseVerdict,
                      why: Option<String>| match merged {
        Some(v) => (
            Verdict::Preference {
                winner: store_winner(v.winner),
                magnitude: magnitude_word(v.magnitude).to_owned(),
            },
            why,
        ),
        None => (
            Verdict::Preference {
                winner: Winner::Tie,
                magnitude: INCONSISTENT.to_owned(),
            },
            Some(PairwiseResult::inconsistency(f, r)),
        ),
    };
    let (v, why) = preference(p.overall, p.forward, p.reverse, p.reasoning.clone());
    let mut rows = vec![row(None, v, why)];
    for c in &p.criteria {
        let (v, why) = preference(c.verdict, c.forward, c.reverse, c.reasoning.clone());
        rows.push(row(Some(c.criterion.clone()), v, why));
    }
    rows
}

fn store_winner(w: CompatWinner) -> Winner {
    match w {
        CompatWinner::Baseline => Winner::Baseline,
        CompatWinner::Skill => Winner::Skill,
        CompatWinner::Tie => Winner::Tie,
    }
}

/// Everything a baseline trial depends on besides its case, hashed (see the module docs).
fn baseline_key(
    r: &RunRequest,
    harness: &dyn Harness,
    version: &str,
    support: &[(SkillToStage, String)],
) -> String {
    let support: Vec<_> = support
        .iter()
        .map(|(s, hash)| json!({"name": s.name, "hash": hash}))
        .collect();
    let h = &r.harness;
    let key = json!({
        "harness": harness.name(),
        "version": version,
        "settings": {"program": h.program, "args": h.args, "base_url": h.base_url,
                     "max_turns": h.max_turns, "temperature": h.temperature,
                     "skills_dir": h.skills_dir},
        "model": r.model,
        "judge": r.judge.as_ref().map(JudgeSettings::identity),
        "support": support,
        "grading": GRADING_VERSION,
        "timeout_secs": r.timeout_secs,
    });
    hash_bytes(key.to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use tokio_util::sync::CancellationToken;

    /// The daemon spawns runs and re-judges on its runtime: their futures must be `Send`.
    #[test]
    fn runs_and_rejudges_can_be_spawned() {
        fn spawnable<T: Send + 'static>(_: &T) {}
        let tmp = tempfile::tempdir().unwrap();
        let store = Arc::new(Mutex::new(
            Store::open(&tmp.path().join("h.sqlite3")).unwrap(),
        ));
        let runner = Runner::new(store.clone());
        let request = RunRequest::new("s", HarnessSettings::new(HarnessKind::Openai), "m");
        let run = async move {
            runner
                .run(&request, no_progress(), CancellationToken::new())
                .await
        };
        spawnable(&run);
        let judge: Arc<dyn JudgeClient> = Arc::new(NoJudge);
        let again = rejudge(
            store,
            RunId(1),
            (judge, None),
            JudgeMode::Pairwise,
            RejudgeScope::Failed,
            no_progress(),
        );
        spawnable(&again);
    }

    struct NoJudge;

    impl JudgeClient for NoJudge {
        fn model(&self) -> &str {
            "j"
        }
        fn ask<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
        ) -> skillwatch_core::grading::judge::JudgeFuture<'a> {
            Box::pin(async { Err("never called".to_owned()) })
        }
    }
}
