//! One trial from start to record: a fresh workspace, the agent (retried into a pristine
//! workspace when the workspace or the agent could not be started), grading, the independent
//! judge, and the [`TrialRecord`] the store keeps.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use skillwatch_core::evalspec::Case;
use skillwatch_core::grading::judge::{self, JudgeClient, Response};
use skillwatch_core::grading::{self, Check, Grading, IndependentScores, TrialInput, Workspace};
use skillwatch_core::trajectory::Trajectory;

use crate::harness::{
    ErrorKind, Harness, HarnessInfo, HostEnv, Plant, SkillToStage, StopRule, TrialError,
    TrialOutcome, TrialSpec, TrialStatus as HarnessStatus,
};
use crate::store::{
    AssertionResult, Condition, Judgment, JudgmentKind, Tokens, Trajectory as StoredTrajectory,
    TrialRecord, TrialStatus, Verdict, time::now_ms,
};

use super::report::GOAL_CRITERION;
use super::workspace::{self, WorkspaceSource};
use crate::runs::{ProgressSink, RunEvent};

/// Everything trials of one run share.
pub(super) struct RunContext {
    /// The harness.
    pub harness: Arc<dyn Harness>,
    /// The skill under test, staged in the with-skill condition.
    pub target: SkillToStage,
    /// Support and decoy skills, staged in every condition.
    pub support: Vec<SkillToStage>,
    /// The plugin arm's skills (the target among them), staged together in the plugin
    /// condition; empty when the run has no plugin arm.
    pub plugin: Vec<SkillToStage>,
    /// The skill folder (setup sources are relative to it).
    pub skill_dir: PathBuf,
    /// The suite's cases (with their run keys).
    pub cases: Vec<(String, Case)>,
    /// The agent's model.
    pub model: String,
    /// Retries of infrastructure failures.
    pub retries: u32,
    /// Per-trial timeout overriding the cases', in seconds.
    pub timeout_secs: Option<u32>,
    /// The environment setup commands draw from.
    pub host: HostEnv,
    /// The judge, when the run is judged.
    pub judge: Option<Arc<dyn JudgeClient>>,
    /// Progress.
    pub progress: ProgressSink,
}

/// A trial to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialJob {
    /// Index into `RunContext::cases`.
    pub case: usize,
    /// Condition.
    pub condition: Condition,
    /// Attempt.
    pub attempt: u32,
}

/// What the judge of a pair needs of one side.
#[derive(Debug, Clone)]
pub struct SideOutput {
    /// The final output.
    pub output: String,
    /// The trajectory.
    pub trajectory: Option<Trajectory>,
    /// Whether the trial finished (not an infrastructure error, not a timeout): only such
    /// pairs are judged.
    pub observed: bool,
}

/// A finished trial.
pub struct FinishedTrial {
    /// The job.
    pub job: TrialJob,
    /// The record to store.
    pub record: TrialRecord,
    /// Retries it took.
    pub retries: u32,
    /// For the pairwise judge.
    pub side: SideOutput,
    /// Trial folders to delete (off the hot path).
    pub folders: Vec<PathBuf>,
    /// The independent judge's failure, if any.
    pub judge_error: Option<String>,
}

/// The skills a trial of `condition` has installed: the support skills always, then the
/// target skill (skill arm) or every skill of the plugin (plugin arm); a plugin skill named
/// like a support skill replaces it, since a harness stages one folder per name.
fn staged_skills(ctx: &RunContext, condition: Condition) -> Vec<SkillToStage> {
    let added: &[SkillToStage] = match condition {
        Condition::Baseline => &[],
        Condition::Skill => std::slice::from_ref(&ctx.target),
        Condition::Plugin => &ctx.plugin,
    };
    let mut skills: Vec<SkillToStage> = ctx
        .support
        .iter()
        .filter(|s| !added.iter().any(|a| a.name == s.name))
        .cloned()
        .collect();
    skills.extend(added.iter().cloned());
    skills
}

/// Run, grade and judge one trial, its folders under `root`. Never fails: failures are
/// recorded in the trial.
pub(super) async fn run_trial(ctx: Arc<RunContext>, job: TrialJob, root: PathBuf) -> FinishedTrial {
    let (key, case) = &ctx.cases[job.case];
    (ctx.progress)(&RunEvent::TrialStarted {
        case: key.clone(),
        condition: job.condition,
        attempt: job.attempt,
    });
    let started_ms = now_ms();
    let skills = staged_skills(&ctx, job.condition);
    let execution = AgentRun {
        harness: ctx.harness.as_ref(),
        workspace: WorkspaceSource::of(case),
        skill_dir: &ctx.skill_dir,
        host: &ctx.host,
        prompt: &case.prompt,
        skills,
        model: &ctx.model,
        timeout: timeout(&ctx, case),
        plant: Plant::default(),
        stop_when: None,
        retries: ctx.retries,
    };
    let AgentRunOutcome {
        outcome,
        workspace: workspace_dir,
        folders,
        retries,
    } = execution
        .run(|attempt| {
            root.join(format!(
                "c{}-{}-a{}-try{attempt}",
                job.case,
                job.condition.as_str(),
                job.attempt
            ))
        })
        .await;
    let graded = (outcome.status != HarnessStatus::Error).then(|| {
        let skip = [ctx.harness.skills_dir().to_path_buf()];
        grading::grade(
            case,
            &ctx.target.name,
            TrialInput {
                output: &outcome.final_output,
                trajectory: outcome.trajectory.as_ref(),
                tokens: Some(outcome.tokens.input + outcome.tokens.output),
                turns: outcome.turns,
                finished: outcome.status == HarnessStatus::Ok,
                workspace: Workspace {
                    root: &workspace_dir,
                    skip: &skip,
                },
            },
        )
    });
    // Only finished trials are judged: scores exclude timed-out pairs, so judging a partial
    // trajectory would cost a call and change nothing.
    let finished = outcome.status == HarnessStatus::Ok;
    let (judged, judge_error) = match (&ctx.judge, finished) {
        (Some(j), true) => {
            let response = Response {
                output: &outcome.final_output,
                trajectory: outcome.trajectory.as_ref(),
            };
            match judge::judge_independent(j.as_ref(), case, response).await {
                Ok(s) => (Some(s), None),
                Err(e) => (None, Some(e.message)),
            }
        }
        _ => (None, None),
    };
    let judgments = ctx
        .judge
        .as_ref()
        .filter(|_| finished)
        .map(|j| independent_judgments(j.model(), judged.as_ref(), judge_error.as_deref()))
        .unwrap_or_default();
    let mut record = record(
        key,
        case,
        job,
        &outcome,
        graded.as_ref(),
        judged.as_ref(),
        judgments,
        started_ms,
    );
    record.retries = Some(retries);
    FinishedTrial {
        job,
        side: SideOutput {
            output: outcome.final_output.clone(),
            trajectory: outcome.trajectory.clone(),
            observed: finished,
        },
        record,
        retries,
        folders,
        judge_error,
    }
}

/// One agent execution: a fresh workspace, the skills, the harness, retried into a pristine
/// folder when the workspace or the agent could not be started. The only way an agent is
/// started: paired trials, security probes (`crate::probe`), trigger trials (`crate::trigger`)
/// and a judge that is a harness (`super::judge::HarnessJudge`) all run through it.
pub(crate) struct AgentRun<'a> {
    /// The harness.
    pub harness: &'a dyn Harness,
    /// What the workspace is made from.
    pub workspace: WorkspaceSource<'a>,
    /// The skill folder (setup sources are relative to it).
    pub skill_dir: &'a Path,
    /// The environment setup commands draw from.
    pub host: &'a HostEnv,
    /// The task.
    pub prompt: &'a str,
    /// Skills to stage.
    pub skills: Vec<SkillToStage>,
    /// The agent's model.
    pub model: &'a str,
    /// The agent's timeout.
    pub timeout: std::time::Duration,
    /// Canaries for a security probe.
    pub plant: Plant,
    /// When to stop the agent before its end (a trigger trial stops at its first decision).
    pub stop_when: Option<StopRule>,
    /// Retries of infrastructure failures.
    pub retries: u32,
}

/// What an [`AgentRun`] left.
pub(crate) struct AgentRunOutcome {
    /// The last attempt's outcome.
    pub outcome: TrialOutcome,
    /// The last attempt's workspace.
    pub workspace: PathBuf,
    /// Every attempt's folder (to delete).
    pub folders: Vec<PathBuf>,
    /// Retries it took.
    pub retries: u32,
}

impl AgentRun<'_> {
    /// Run it, attempt `n` in the folder `root(n)`.
    pub(crate) async fn run(&self, root: impl Fn(u32) -> PathBuf) -> AgentRunOutcome {
        let mut folders = Vec::new();
        let mut retries = 0;
        loop {
            let root = root(retries);
            folders.push(root.clone());
            let (outcome, workspace) = self.attempt(&root).await;
            if retries < self.retries && infrastructure_failure(&outcome) {
                retries += 1;
                continue;
            }
            return AgentRunOutcome {
                outcome,
                workspace,
                folders,
                retries,
            };
        }
    }

    /// One attempt in a fresh folder: the workspace, then the agent.
    async fn attempt(&self, root: &Path) -> (TrialOutcome, PathBuf) {
        let info = HarnessInfo {
            name: self.harness.name().to_owned(),
            version: self
                .harness
                .version()
                .await
                .unwrap_or_else(|_| "unknown".into()),
        };
        let folders = match workspace::prepare(root, &self.workspace, self.skill_dir, self.host)
            .await
        {
            Ok(f) => f,
            Err(e) => {
                let outcome = TrialOutcome::not_started(info, TrialError::new(ErrorKind::Setup, e));
                return (outcome, root.join("ws"));
            }
        };
        let spec = TrialSpec {
            prompt: self.prompt.to_owned(),
            model: self.model.to_owned(),
            workspace: folders.workspace.clone(),
            scratch: folders.scratch.clone(),
            skills: self.skills.clone(),
            timeout: self.timeout,
            plant: self.plant.clone(),
            stop_when: self.stop_when.clone(),
        };
        (self.harness.run(&spec).await, folders.workspace)
    }
}

fn timeout(ctx: &RunContext, case: &Case) -> std::time::Duration {
    super::request::trial_timeout(ctx.timeout_secs, case.timeout_secs.map(|t| t.get()))
}

/// Failures of the workspace or of starting the agent: retried into a pristine workspace.
fn infrastructure_failure(outcome: &TrialOutcome) -> bool {
    outcome.status == HarnessStatus::Error
        && outcome
            .errors
            .iter()
            .any(|e| matches!(e.kind, ErrorKind::Setup | ErrorKind::Spawn))
}

/// The independent judge's verdicts as stored rows: overall, goal, one per rubric criterion;
/// or one failed row when the judge failed (a judge error, re-judgeable later).
pub fn independent_judgments(
    model: &str,
    judged: Option<&IndependentScores>,
    error: Option<&str>,
) -> Vec<Judgment> {
    let row = |criterion: Option<String>, verdict: Verdict, reasoning: Option<String>| Judgment {
        kind: JudgmentKind::Independent,
        judge_model: model.to_owned(),
        criterion,
        verdict,
        reasoning,
    };
    let Some(j) = judged else {
        let error = error.unwrap_or("the judge gave no verdict").to_owned();
        return vec![row(None, Verdict::Failed { error }, None)];
    };
    let mut rows = vec![row(
        None,
        Verdict::Score { score: j.overall },
        j.overall_reasoning.clone(),
    )];
    if let Some(goal) = j.goal {
        rows.push(row(
            Some(GOAL_CRITERION.into()),
            Verdict::Score { score: goal },
            None,
        ));
    }
    rows.extend(j.rubric.iter().map(|c| {
        row(
            Some(c.criterion.clone()),
            Verdict::Score { score: c.score },
            c.reasoning.clone(),
        )
    }));
    rows
}

/// Behavior checks as stored assertion rows (activation is stored as `skill_invoked` and in
/// the metrics, not as an assertion).
pub fn assertion_rows(checks: &[Check]) -> Vec<AssertionResult> {
    checks
        .iter()
        .filter(|c| c.group.is_behavior())
        .map(|c| AssertionResult {
            kind: c.kind.clone(),
            description: c.description.clone(),
            passed: c.passed,
            message: c.message.clone(),
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn record(
    key: &str,
    case: &Case,
    job: TrialJob,
    outcome: &TrialOutcome,
    graded: Option<&Grading>,
    judged: Option<&IndependentScores>,
    judgments: Vec<Judgment>,
    started_ms: i64,
) -> TrialRecord {
    let mut r = TrialRecord::new(key, job.condition, job.attempt);
    r.status = match outcome.status {
        HarnessStatus::Ok => TrialStatus::Completed,
        HarnessStatus::Error => TrialStatus::Error,
        HarnessStatus::Timeout => TrialStatus::Timeout,
    };
    r.output = outcome.final_output.clone();
    if !outcome.errors.is_empty() {
        let msgs: Vec<String> = outcome
            .errors
            .iter()
            .map(|e| format!("{}: {}", kind_word(e.kind), e.message))
            .collect();
        r.error_message = Some(msgs.join("; "));
    }
    r.stderr_tail = outcome.stderr_tail.clone();
    let t = outcome.tokens;
    r.tokens = Tokens {
        input: Some(t.input),
        output: Some(t.output),
        cached: Some(t.cached.min(t.input)),
    };
    r.cost_usd = outcome.cost_usd.filter(|c| c.is_finite() && *c >= 0.0);
    r.wall_ms = Some(outcome.wall_ms);
    r.tool_calls = Some(outcome.tool_calls);
    r.turns = Some(outcome.turns);
    r.errors = Some(
        outcome
            .errors
            .iter()
            .filter(|e| e.kind == ErrorKind::Harness)
            .count() as u32,
    );
    r.started_ms = Some(started_ms);
    r.judgments = judgments;
    if let Some(g) = graded {
        r.passed = Some(g.passed(judged));
        r.skill_invoked = outcome
            .trajectory
            .as_ref()
            .map(|_| g.execution.target_invoked);
        r.metrics = g.metrics(case, judged);
        r.assertions = assertion_rows(&g.all_checks(judged));
    }
    r.trajectory = outcome
        .trajectory
        .as_ref()
        .and_then(|t| stored_trajectory(t, outcome, graded));
    r
}

/// The ATIF trajectory as stored: skillwatch's grading evidence (skills loaded, security
/// findings, visible skills, harness notices) in the root `extra`, where ATIF keeps extensions.
fn stored_trajectory(
    t: &Trajectory,
    outcome: &TrialOutcome,
    graded: Option<&Grading>,
) -> Option<StoredTrajectory> {
    let mut t = t.clone();
    let mut extra = t.extra.take().unwrap_or_default();
    extra.insert(
        "skillwatch".into(),
        json!({
            "grading_version": grading::GRADING_VERSION,
            "loaded_skills": graded.map(|g| g.execution.loaded.clone()),
            "failed_skill_reads": graded.map(|g| {
                g.execution
                    .failed_loads
                    .iter()
                    .map(|(skill, why)| json!({"skill": skill, "why": why}))
                    .collect::<Vec<_>>()
            }),
            "security": graded.and_then(|g| g.security.clone()),
            "visible_skills": outcome.visible_skills,
            "notices": outcome.notices,
        }),
    );
    t.extra = Some(extra);
    let bytes = serde_json::to_vec(&t).ok()?;
    Some(StoredTrajectory {
        format: skillwatch_core::trajectory::SCHEMA_VERSION.to_ascii_lowercase(),
        bytes,
    })
}

/// The error kind as one word, the way `ErrorKind` serializes.
fn kind_word(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Setup => "setup",
        ErrorKind::Spawn => "spawn",
        ErrorKind::Exit => "exit",
        ErrorKind::Harness => "harness",
        ErrorKind::Output => "output",
        ErrorKind::Timeout => "timeout",
    }
}
