//! The paired runner: every case of a skill's suite run with and without the skill on one
//! harness and model, graded, judged, scored and stored.
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
//! # What a run does
//!
//! 1. [`Runner::prepare`]: reads the skill and its suite, asks the harness its version,
//!    computes the baseline key (harness + version + settings, model, judge, support skills,
//!    grading rules, default timeout), finds baseline trials of earlier runs it may reuse, and
//!    starts the run in the store (`begin_run`): its id is known from here on.
//! 2. [`PreparedRun::execute`]: copies the reusable baselines, then runs the remaining trials,
//!    at most `jobs` at once. Each trial gets a fresh workspace under the system temp dir
//!    (test files, setup files, setup commands), the target skill only in the with-skill
//!    condition and the support skills in both; the harness adds a fresh HOME and config dir,
//!    a scrubbed environment and a timeout that kills the agent's process group. A trial whose
//!    workspace or agent could not be started is retried into a pristine workspace. Each
//!    trial is graded, judged (independent scores), and recorded as soon as it ends, so a
//!    crash loses at most the trials in flight; each complete pair is judged pairwise (both
//!    orders) when the judge mode asks for it.
//! 3. The run is finished in the store (which scores it: lift with intervals, U) and a
//!    [`RunReport`] is built from what was stored.
//!
//! Cancellation (the token) stops scheduling, kills the agents in flight with their process
//! groups, and finishes the run as `cancelled`: the report then holds what was recorded. A
//! run interrupted by a crash stays `running` until the daemon marks it `interrupted`; a
//! request with `resume: Some(id)` reopens it and runs only the missing trials.

mod config;
mod error;
mod events;
mod judge;
mod plan;
mod rejudge;
mod report;
mod request;
mod trial;
pub(crate) mod workspace;

pub use config::{
    CONFIG_FILE, ConfigError, HarnessTable, JudgeTable, RunConfig, RunTable, parse_kind,
};
pub use error::RunError;
pub use events::{ProgressSink, RunEvent, no_progress};
pub use judge::{HarnessJudge, JUDGE_TIMEOUT, OpenAiJudge, client as judge_client};
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
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::json;
use skillwatch_core::evalspec::{Case, case_fingerprint, load_suite};
use skillwatch_core::grading::GRADING_VERSION;
use skillwatch_core::grading::judge::{
    JudgeClient, PairwiseResult, Response, judge_pairwise, magnitude_word,
};
use skillwatch_core::scoring::compat::{PairwiseVerdict, Winner as CompatWinner};
use skillwatch_core::skill::{Skill, content_hash, hash_bytes};
use skillwatch_protocol::ClientEnv;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::harness::{Harness, HostEnv, SkillToStage};
use crate::store::{
    BaselineQuery, CaseSpec, Condition, Judgment, JudgmentKind, ReusableTrial, RunId, RunSpec,
    RunStatus, SkillIdentity, Store, StoreError, SuiteSpec, Verdict, Winner,
};

use trial::{FinishedTrial, RunContext, SideOutput, TrialJob};

/// Runs paired evaluations against one history store. Cheap to clone the pieces it holds;
/// one runner can run several requests at once.
pub struct Runner {
    store: Arc<Mutex<Store>>,
    host: HostEnv,
    temp_dir: PathBuf,
}

impl Runner {
    /// A runner recording into `store`, drawing trial environments from this process's
    /// environment, with trial folders under the system temp dir.
    pub fn new(store: Arc<Mutex<Store>>) -> Runner {
        Runner {
            store,
            host: HostEnv::current(),
            temp_dir: std::env::temp_dir(),
        }
    }

    /// Draw trial environments (allowed variables, API keys) from `host` instead.
    pub fn with_host_env(mut self, host: HostEnv) -> Runner {
        self.host = host;
        self
    }

    /// Put trial folders under `dir` (it must have no agent files above it).
    pub fn with_temp_dir(mut self, dir: impl Into<PathBuf>) -> Runner {
        self.temp_dir = dir.into();
        self
    }

    /// A runner like this one whose trials read `client`'s values of the variables it names
    /// (a run the daemon makes for `skillwatch run`) instead of this runner's.
    pub fn for_client(&self, client: &ClientEnv) -> Runner {
        Runner {
            store: self.store.clone(),
            host: self.host.with_client(client),
            temp_dir: self.temp_dir.clone(),
        }
    }

    /// The environment this runner's trials draw from.
    pub fn host(&self) -> &HostEnv {
        &self.host
    }

    /// The history this runner records into.
    pub fn store(&self) -> &Arc<Mutex<Store>> {
        &self.store
    }

    /// Prepare and execute `request` (see the module docs).
    pub async fn run(
        &self,
        request: &RunRequest,
        progress: ProgressSink,
        cancel: CancellationToken,
    ) -> Result<RunReport, RunError> {
        self.prepare(request).await?.execute(progress, cancel).await
    }

    /// Check the request, start (or reopen) the run in the store, and plan its trials.
    pub async fn prepare(&self, request: &RunRequest) -> Result<PreparedRun, RunError> {
        let (skill_dir, target) = skill_at(&request.skill_dir)?;
        let cases = suite_cases(&skill_dir, &request.cases)?;
        request.check_named_vars(&self.host)?;
        let harness = request.harness.build(&self.host)?;
        let harness_version = harness.version().await.map_err(|e| RunError::Harness {
            harness: harness.name().to_owned(),
            message: e.to_string(),
        })?;
        let support = request
            .support_skills
            .iter()
            .map(|d| skill_to_stage(d))
            .collect::<Result<Vec<_>, _>>()?;
        let skill_hash = hash_dir(&skill_dir)?;
        let fingerprints: Vec<String> = cases
            .iter()
            .map(|(_, c)| case_fingerprint(c, &skill_dir))
            .collect();
        let baseline_key = baseline_key(request, harness.as_ref(), &harness_version, &support)?;
        let judge = request
            .judge
            .as_ref()
            .map(|j| judge::client(j, &self.host, self.temp_dir.clone()))
            .transpose()?;
        let plan = Plan {
            request: request.clone(),
            skill_dir,
            target,
            support,
            cases,
            fingerprints,
            skill_hash,
            harness,
            harness_version,
            baseline_key,
        };
        let (run, reused, recorded) = {
            let mut store = lock(&self.store);
            match request.resume {
                Some(id) => (id, Vec::new(), plan.reopen(&mut store, id)?),
                None => {
                    let reused = if request.reuse_baselines {
                        plan.reusable(&store)?
                    } else {
                        Vec::new()
                    };
                    (
                        store.begin_run(&plan.run_spec(&reused))?,
                        reused,
                        BTreeSet::new(),
                    )
                }
            }
        };
        Ok(PreparedRun {
            run,
            plan,
            reused,
            recorded,
            judge,
            drain: CancellationToken::new(),
            store: self.store.clone(),
            host: self.host.clone(),
            temp_dir: self.temp_dir.clone(),
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

/// What `prepare` worked out about a request.
struct Plan {
    request: RunRequest,
    skill_dir: PathBuf,
    target: SkillToStage,
    support: Vec<SkillToStage>,
    cases: Vec<(String, Case)>,
    fingerprints: Vec<String>,
    skill_hash: String,
    harness: Arc<dyn Harness>,
    harness_version: String,
    baseline_key: String,
}

impl Plan {
    fn run_spec(&self, reused: &[Reuse]) -> RunSpec {
        let cases = self
            .cases
            .iter()
            .zip(&self.fingerprints)
            .map(|((key, case), hash)| CaseSpec {
                key: key.clone(),
                content_hash: hash.clone(),
                definition: serde_json::to_value(case).ok(),
            })
            .collect::<Vec<_>>();
        let suite_hash = suite_hash(&cases);
        let r = &self.request;
        RunSpec {
            skill: SkillIdentity {
                name: self.target.name.clone(),
                path: Some(self.skill_dir.display().to_string()),
                content_hash: self.skill_hash.clone(),
            },
            suite: SuiteSpec {
                content_hash: suite_hash,
                source: self.cases.first().map(|(_, c)| c.origin.file.clone()),
                cases,
            },
            harness: self.harness.name().to_owned(),
            harness_version: Some(self.harness_version.clone()),
            model: r.model.clone(),
            judge_model: r.judge.as_ref().map(|j| j.model.clone()),
            scoring_profile: crate::store::DEFAULT_SCORING_PROFILE.into(),
            trigger: r.trigger,
            config: json!({
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
                "reused": reused.iter().map(|u| json!({
                    "case": self.cases[u.case].0, "attempt": u.attempt,
                    "from_trial": u.from.trial, "from_run": u.from.run,
                })).collect::<Vec<_>>(),
            }),
            seed: r.seed,
            tool_version: format!("skillwatch {}", env!("CARGO_PKG_VERSION")),
            started_ms: None,
        }
    }

    /// Baseline trials of earlier runs this run may copy, up to `runs` per case.
    fn reusable(&self, store: &Store) -> Result<Vec<Reuse>, RunError> {
        let mut out = Vec::new();
        for (i, ((key, _), hash)) in self.cases.iter().zip(&self.fingerprints).enumerate() {
            let found = store.find_baselines(&BaselineQuery {
                skill: &self.target.name,
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
        if info.skill != self.target.name {
            return Err(mismatch("skill", &self.target.name, &info.skill));
        }
        if info.skill_hash != self.skill_hash {
            return Err(mismatch(
                "skill version",
                &self.skill_hash,
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
        let expected_suite = self.run_spec(&[]).suite.content_hash;
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
}

/// A run started in the store, ready to execute.
pub struct PreparedRun {
    run: RunId,
    plan: Plan,
    reused: Vec<Reuse>,
    recorded: BTreeSet<(String, Condition, u32)>,
    judge: Option<Arc<dyn JudgeClient>>,
    drain: CancellationToken,
    store: Arc<Mutex<Store>>,
    host: HostEnv,
    temp_dir: PathBuf,
}

impl PreparedRun {
    /// The run's id in the history.
    pub fn run_id(&self) -> RunId {
        self.run
    }

    /// Start no new trial once `drain` fires (the daemon is stopping): trials in flight
    /// finish and are recorded, and a run left with trials to do ends `interrupted`, to be
    /// resumed.
    pub fn draining_on(mut self, drain: CancellationToken) -> PreparedRun {
        self.drain = drain;
        self
    }

    /// Trials the finished run will hold: cases × conditions × runs.
    pub fn planned(&self) -> usize {
        self.plan.cases.len() * 2 * self.plan.request.runs as usize
    }

    /// Run the planned trials (see the module docs). Returns the report of the finished run
    /// (status `completed`, or `cancelled` when `cancel` fired); an error only when the store
    /// fails, after which the recorded trials remain and the run can be resumed.
    pub async fn execute(
        self,
        progress: ProgressSink,
        cancel: CancellationToken,
    ) -> Result<RunReport, RunError> {
        let started = Instant::now();
        let temp = tempfile::Builder::new()
            .prefix(&format!("skillwatch-run{}-", self.run))
            .tempdir_in(&self.temp_dir)
            .map_err(|source| RunError::Io {
                context: format!("creating trial folders in {}", self.temp_dir.display()),
                source,
            })?;
        let mut exec = Execution::new(&self, temp.path(), progress.clone(), cancel.clone());
        progress(&RunEvent::Started {
            run: self.run,
            skill: self.plan.target.name.clone(),
            harness: self.plan.harness.name().to_owned(),
            harness_version: self.plan.harness_version.clone(),
            model: self.plan.request.model.clone(),
            cases: self.plan.cases.len(),
            planned: self.planned(),
            reused: self.reused.len(),
            resumed: self.recorded.len(),
        });
        let outcome = exec.run_all(&self).await;
        let status = if cancel.is_cancelled() {
            RunStatus::Cancelled
        } else if outcome.is_err() {
            RunStatus::Failed
        } else if exec.left_undone > 0 {
            RunStatus::Interrupted
        } else {
            RunStatus::Completed
        };
        let run = self.run;
        let finished = with_store(&self.store, move |s| match s.finish_run(run, status) {
            Ok(_) | Err(StoreError::Scoring { .. }) => Ok(()),
            Err(e) => Err(e),
        })
        .await;
        let kept = if self.plan.request.keep_workspaces {
            Some(temp.keep())
        } else {
            let _ = tokio::task::spawn_blocking(move || drop(temp)).await;
            None
        };
        outcome?;
        finished?;
        let mut tally = exec.tally;
        tally.planned = self.planned();
        tally.reused = self.reused.len();
        tally.resumed = self.recorded.len();
        let wall_ms = started.elapsed().as_millis() as u64;
        let mut report = with_store(&self.store, move |s| {
            RunReport::load(s, run, tally, wall_ms)
        })
        .await?;
        report.workspaces = kept;
        progress(&RunEvent::Finished {
            run,
            status: report.run.status,
            lift: report
                .summary
                .as_ref()
                .and_then(|s| s.headline.outcome.lift),
        });
        Ok(report)
    }
}

/// The moving parts of one execution.
struct Execution {
    ctx: Arc<RunContext>,
    store: Arc<Mutex<Store>>,
    run: RunId,
    cancel: CancellationToken,
    drain: CancellationToken,
    /// Trials not started because the run was drained.
    left_undone: usize,
    jobs: usize,
    pairwise: bool,
    keep_workspaces: bool,
    sides: BTreeMap<(usize, u32), [Option<SideOutput>; 2]>,
    tally: TrialTally,
}

impl Execution {
    fn new(
        p: &PreparedRun,
        temp: &Path,
        progress: ProgressSink,
        cancel: CancellationToken,
    ) -> Execution {
        let r = &p.plan.request;
        let ctx = RunContext {
            harness: p.plan.harness.clone(),
            target: p.plan.target.clone(),
            support: p.plan.support.clone(),
            skill_dir: p.plan.skill_dir.clone(),
            cases: p.plan.cases.clone(),
            model: r.model.clone(),
            retries: r.retries,
            timeout_secs: r.timeout_secs,
            temp_root: temp.to_path_buf(),
            host: p.host.clone(),
            judge: p.judge.clone(),
            progress,
        };
        Execution {
            ctx: Arc::new(ctx),
            store: p.store.clone(),
            run: p.run,
            cancel,
            drain: p.drain.clone(),
            left_undone: 0,
            jobs: r.jobs.max(1),
            pairwise: r
                .judge
                .as_ref()
                .is_some_and(|j| j.mode == JudgeMode::Pairwise),
            keep_workspaces: r.keep_workspaces,
            sides: BTreeMap::new(),
            tally: TrialTally::default(),
        }
    }

    async fn run_all(&mut self, p: &PreparedRun) -> Result<(), RunError> {
        let mut judging: JoinSet<Result<bool, RunError>> = JoinSet::new();
        for u in &p.reused {
            self.copy_reused(*u, &mut judging).await?;
        }
        let mut pending = self.pending_jobs(p).into_iter();
        let mut trials: JoinSet<FinishedTrial> = JoinSet::new();
        loop {
            while trials.len() < self.jobs
                && !self.cancel.is_cancelled()
                && !self.drain.is_cancelled()
            {
                let Some(job) = pending.next() else { break };
                trials.spawn(trial::run_trial(self.ctx.clone(), job));
            }
            if trials.is_empty() && judging.is_empty() {
                if self.drain.is_cancelled() {
                    self.left_undone = pending.len();
                }
                return Ok(());
            }
            tokio::select! {
                _ = self.cancel.cancelled() => {
                    trials.shutdown().await;
                    judging.shutdown().await;
                    return Ok(());
                }
                Some(done) = trials.join_next(), if !trials.is_empty() => {
                    let done = done.map_err(|e| RunError::Io {
                        context: "a trial task".into(),
                        source: std::io::Error::other(e.to_string()),
                    })?;
                    self.record(done, &mut judging).await?;
                }
                Some(judged) = judging.join_next(), if !judging.is_empty() => {
                    let failed = judged.map_err(|e| RunError::Io {
                        context: "a judge task".into(),
                        source: std::io::Error::other(e.to_string()),
                    })??;
                    self.tally.judge_errors += usize::from(failed);
                }
            }
        }
    }

    /// Trials still to run, attempt by attempt, baseline then skill per case, so a partial
    /// run holds complete pairs.
    fn pending_jobs(&self, p: &PreparedRun) -> Vec<TrialJob> {
        let reused: BTreeSet<(usize, u32)> = p.reused.iter().map(|u| (u.case, u.attempt)).collect();
        let mut jobs = Vec::new();
        for attempt in 0..p.plan.request.runs {
            for (i, (key, _)) in p.plan.cases.iter().enumerate() {
                for condition in [Condition::Baseline, Condition::Skill] {
                    let copied = condition == Condition::Baseline && reused.contains(&(i, attempt));
                    if copied || p.recorded.contains(&(key.clone(), condition, attempt)) {
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

    async fn copy_reused(
        &mut self,
        u: Reuse,
        judging: &mut JoinSet<Result<bool, RunError>>,
    ) -> Result<(), RunError> {
        let run = self.run;
        let pairwise = self.pairwise;
        let side = with_store(&self.store, move |s| {
            let id = s.copy_trial(u.from.trial, run, u.attempt)?;
            if !pairwise {
                return Ok(None);
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
        (self.ctx.progress)(&RunEvent::TrialReused {
            case: self.ctx.cases[u.case].0.clone(),
            attempt: u.attempt,
            from_run: u.from.run,
        });
        if let Some(side) = side {
            self.pair_side(u.case, u.attempt, Condition::Baseline, side, judging);
        }
        Ok(())
    }

    async fn record(
        &mut self,
        done: FinishedTrial,
        judging: &mut JoinSet<Result<bool, RunError>>,
    ) -> Result<(), RunError> {
        let FinishedTrial {
            job,
            record,
            retries,
            side,
            folders,
            judge_error,
        } = done;
        let run = self.run;
        let event = RunEvent::TrialFinished {
            case: record.case.clone(),
            condition: record.condition,
            attempt: record.attempt,
            status: record.status,
            passed: record.passed,
            invoked: record.skill_invoked,
            wall_ms: record.wall_ms.unwrap_or(0),
            retries,
            error: record.error_message.clone(),
        };
        self.tally.ran += 1;
        self.tally.retries += retries as usize;
        match record.status {
            crate::store::TrialStatus::Error => self.tally.errors += 1,
            crate::store::TrialStatus::Timeout => self.tally.timeouts += 1,
            crate::store::TrialStatus::Completed => {}
        }
        with_store(&self.store, move |s| {
            s.record_trial(run, &record).map(|_| ())
        })
        .await?;
        (self.ctx.progress)(&event);
        if let Some(message) = judge_error {
            self.tally.judge_errors += 1;
            (self.ctx.progress)(&RunEvent::JudgeFailed {
                case: self.ctx.cases[job.case].0.clone(),
                attempt: job.attempt,
                condition: Some(job.condition),
                message,
            });
        }
        if !self.keep_workspaces {
            tokio::task::spawn_blocking(move || {
                for f in folders {
                    let _ = std::fs::remove_dir_all(f);
                }
            });
        }
        if self.pairwise {
            self.pair_side(job.case, job.attempt, job.condition, side, judging);
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
        judging: &mut JoinSet<Result<bool, RunError>>,
    ) {
        let slot = self.sides.entry((case, attempt)).or_default();
        slot[usize::from(condition == Condition::Skill)] = Some(side);
        let [Some(b), Some(s)] = slot.clone() else {
            return;
        };
        self.sides.remove(&(case, attempt));
        let Some(judge) = self.ctx.judge.clone() else {
            return;
        };
        if !(b.observed && s.observed) {
            return;
        }
        let ctx = self.ctx.clone();
        let store = self.store.clone();
        let run = self.run;
        judging.spawn(async move {
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

/// The skill a request names: its folder made canonical, and the skill as it will be staged.
/// The first step of every plan (paired run, trigger trials, probes).
pub(crate) fn skill_at(dir: &Path) -> Result<(PathBuf, SkillToStage), RunError> {
    let canonical = dir.canonicalize().map_err(|e| RunError::NotASkill {
        dir: dir.to_path_buf(),
        reason: format!("found none ({e})"),
    })?;
    let target = skill_to_stage(&canonical)?;
    Ok((canonical, target))
}

/// The skill in `dir` under the name the agent will see (its SKILL.md `name` when that is a
/// plain folder name, else the folder's name).
pub(crate) fn skill_to_stage(dir: &Path) -> Result<SkillToStage, RunError> {
    let skill = Skill::load(dir);
    let doc = skill.document.as_ref().map_err(|e| RunError::NotASkill {
        dir: dir.to_path_buf(),
        reason: format!("found an unreadable SKILL.md ({e})"),
    })?;
    let name = doc
        .field_str("name")
        .map(|(n, _)| n.trim().to_owned())
        .filter(|n| !n.is_empty() && !n.contains(['/', '\\']) && n != "." && n != "..")
        .or_else(|| skill.dir_name().map(str::to_owned))
        .ok_or_else(|| RunError::NotASkill {
            dir: dir.to_path_buf(),
            reason: "found no name (no `name` field and no folder name)".into(),
        })?;
    Ok(SkillToStage {
        name,
        source: dir.to_path_buf(),
    })
}

/// How many cases a run of `request` will have: what the design printed before a run, and
/// `skillwatch plan`, count.
pub fn planned_cases(request: &RunRequest) -> Result<usize, RunError> {
    Ok(suite_cases(&request.skill_dir, &request.cases)?.len())
}

/// The suite's cases with their keys in the run: case ids, made unique across eval files by
/// suffixing a repeated id with its file; filtered by `only` (all when empty).
fn suite_cases(skill_dir: &Path, only: &[String]) -> Result<Vec<(String, Case)>, RunError> {
    let suite = load_suite(skill_dir)?;
    let mut seen = BTreeSet::new();
    let mut cases = Vec::new();
    for case in suite.cases {
        let key = if seen.insert(case.id.clone()) {
            case.id.clone()
        } else {
            format!("{} ({})", case.id, case.origin.file)
        };
        if only.is_empty() || only.contains(&case.id) || only.contains(&key) {
            cases.push((key, case));
        }
    }
    if cases.is_empty() {
        let message = if only.is_empty() {
            format!(
                "{}: expected at least one eval case, found none",
                skill_dir.display()
            )
        } else {
            format!(
                "{}: expected cases named {}, found none of them",
                skill_dir.display(),
                only.join(", ")
            )
        };
        return Err(RunError::NoCases { message });
    }
    Ok(cases)
}

fn hash_dir(dir: &Path) -> Result<String, RunError> {
    content_hash(dir).map_err(|source| RunError::Io {
        context: format!("hashing {}", dir.display()),
        source,
    })
}

/// Everything a baseline trial depends on besides its case, hashed (see the module docs).
fn baseline_key(
    r: &RunRequest,
    harness: &dyn Harness,
    version: &str,
    support: &[SkillToStage],
) -> Result<String, RunError> {
    let support = support
        .iter()
        .map(|s| Ok(json!({"name": s.name, "hash": hash_dir(&s.source)?})))
        .collect::<Result<Vec<_>, RunError>>()?;
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
    Ok(hash_bytes(key.to_string().as_bytes()))
}

fn lock(store: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    store
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Run a store call on the blocking pool (SQLite commits fsync).
async fn with_store<T: Send + 'static>(
    store: &Arc<Mutex<Store>>,
    f: impl FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, RunError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || f(&mut lock(&store)))
        .await
        .map_err(|e| RunError::Io {
            context: "a history store call".into(),
            source: std::io::Error::other(e.to_string()),
        })?
        .map_err(RunError::Store)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            judge,
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
