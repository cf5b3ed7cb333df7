//! Trigger trials: does the agent pick the skill for the queries it should, and leave it alone
//! for the others? Each trial stages the skill among its sibling skills (the folder it lives
//! in, as an agent would have them installed) and any decoys, sends one query, and stops the
//! agent as soon as its first decision is visible in its event stream
//! ([`skillwatch_core::trajectory::first_decision`]): a skill load, another action, or an
//! answer. Nothing is graded or judged, so a trial costs one model request where a full trial
//! costs a whole task.
//!
//! One kind of run on the engine ([`crate::runs`]): planning reads the skill, its queries and
//! what the listing will show of it ([`skillwatch_core::checks::visibility`], the computation
//! behind SW220/SW222/SW223) without starting anything, so a caller shows the visibility first
//! and runs nothing when it blocks; the engine then begins, budgets, records and reports the
//! run as it does every kind.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use skillwatch_core::checks::{ListingBudget, Visibility, sibling_skills, visibility};
use skillwatch_core::evalspec::{TriggerQuery, load_trigger_queries};
use skillwatch_core::scoring::trigger::{TriggerSummary, TriggerTrial};
use skillwatch_core::trajectory::{Decision, TokenUsage, first_decision};
use skillwatch_protocol::Budget;

use crate::harness::{BoxFuture, Harness, HostEnv, SkillToStage, StopRule, TrialStatus};
use crate::runner::{AgentRun, AgentRunOutcome, RunError, WorkspaceSource, workspace};
use crate::runs::{
    Begun, Ending, Engine, Kind, Planned, Recorded, Request, RunEvent, TrialDetail, resolve,
};
use crate::store::{
    Condition, Row, RunBegin, RunKind, RunRef, RunStatus, SkillIdentity, Spend, Spent, Stop, Store,
    TrialStatus as StoredStatus, TriggerRunId, TriggerRunSpec, TriggerTrialRow, trigger_summary,
};

pub use skillwatch_protocol::{DEFAULT_TRIGGER_TIMEOUT_SECS, TriggerRequest};

/// Retries of a trial whose agent could not be started (as a paired run's, into a pristine
/// folder): a decision is cheap to ask again, and an unseen one leaves the rates.
const TRIGGER_RETRIES: u32 = 2;

/// A planned trigger run: what will run, before anything does.
pub type TriggerPlan = Planned<Triggers>;

/// The result of a trigger run, read back from the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerReport {
    /// The skill's name.
    pub skill: String,
    /// The harness.
    pub harness: String,
    /// The harness's version.
    pub harness_version: String,
    /// The model.
    pub model: String,
    /// What the listing showed of the skill.
    pub visibility: Visibility,
    /// The skills staged beside it.
    pub staged: Vec<String>,
    /// Every trial.
    pub trials: Vec<TriggerTrialRecord>,
    /// The rates.
    pub summary: TriggerSummary,
    /// The run in the history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<TriggerRunId>,
    /// How the run ended.
    #[serde(default = "completed")]
    pub status: RunStatus,
    /// Why it stopped before every trial ran, when its budget stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
    /// What its trials spent.
    #[serde(default)]
    pub spent: Spent,
}

fn completed() -> RunStatus {
    RunStatus::Completed
}

impl TriggerReport {
    /// The report of trigger run `run` as stored, with `visibility` (worked out by the plan,
    /// not stored); `None` when the history has no such run.
    pub fn load(
        store: &Store,
        run: TriggerRunId,
        visibility: Visibility,
    ) -> Result<Option<TriggerReport>, RunError> {
        let Some(info) = store.trigger_run(run)? else {
            return Ok(None);
        };
        let at = RunRef {
            kind: RunKind::Trigger,
            id: run.0,
        };
        let rows = store.trigger_trials(run)?;
        Ok(Some(TriggerReport {
            summary: trigger_summary(&info.skill, &rows),
            trials: rows.into_iter().map(TriggerTrialRecord::from).collect(),
            skill: info.skill,
            harness: info.harness,
            harness_version: info.harness_version.unwrap_or_default(),
            model: info.model,
            visibility,
            staged: info.staged,
            run_id: Some(run),
            status: info.status,
            stop: store.stop_of(at)?,
            spent: store.spent(at)?,
        }))
    }
}

/// One trial with what the harness said of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerTrialRecord {
    /// The rates' view of it.
    #[serde(flatten)]
    pub trial: TriggerTrial,
    /// Which run of its query.
    pub run: u32,
    /// Whether the harness listed the skill to the model, when it reports its listing.
    pub listed: Option<bool>,
    /// Why the decision could not be seen.
    pub errors: Vec<String>,
}

impl From<TriggerTrialRow> for TriggerTrialRecord {
    fn from(row: TriggerTrialRow) -> TriggerTrialRecord {
        TriggerTrialRecord {
            trial: row.trial,
            run: row.run,
            listed: row.listed,
            errors: row
                .error_message
                .map(|m| m.split("; ").map(str::to_owned).collect())
                .unwrap_or_default(),
        }
    }
}

/// A copy of the skill folder `dir` (under a fresh temporary folder, same folder name) whose
/// SKILL.md differs only in its `description:` (and `when_to_use:`, when given).
fn stage_alternative(
    dir: &Path,
    description: &str,
    when_to_use: Option<&str>,
) -> Result<tempfile::TempDir, RunError> {
    let io = |context: String| move |source| RunError::Io { context, source };
    let root = tempfile::Builder::new()
        .prefix("skillwatch-description-")
        .tempdir()
        .map_err(io(
            "creating a folder for the alternative description".into()
        ))?;
    let copy = root.path().join(dir.file_name().unwrap_or_default());
    workspace::copy_source(dir, &copy).map_err(io(format!(
        "copying {} to {}",
        dir.display(),
        copy.display()
    )))?;
    let skill_md = copy.join(skillwatch_core::skill::SKILL_FILE);
    let text = std::fs::read_to_string(&skill_md)
        .map_err(io(format!("reading {}", skill_md.display())))?;
    let rewrite = skillwatch_core::optimize::Rewrite {
        description,
        when_to_use,
    };
    let doc = skillwatch_core::skill::SkillDocument::parse(text);
    let changed = skillwatch_core::optimize::rewritten(&doc, &rewrite).ok_or_else(|| {
        RunError::NotASkill {
            dir: dir.to_path_buf(),
            reason: "found no `description:` (or `when_to_use:`) in its SKILL.md frontmatter \
                     to replace"
                .into(),
        }
    })?;
    std::fs::write(&skill_md, changed).map_err(io(format!("writing {}", skill_md.display())))?;
    Ok(root)
}

/// A planned trigger run, and the state of its execution.
pub struct Triggers {
    request: TriggerRequest,
    shared: Arc<TriggerShared>,
    harness_version: String,
    staged: Vec<SkillToStage>,
    /// The queries, in order.
    pub queries: Vec<TriggerQuery>,
    /// What the listing shows of the skill with the others staged.
    pub visibility: Visibility,
    /// The copy of the skill with the alternative description, while the plan lives.
    _alternative: Option<tempfile::TempDir>,
}

/// What every trial of a trigger run shares.
struct TriggerShared {
    harness: Arc<dyn Harness>,
    target: SkillToStage,
    /// The target and the skills staged beside it.
    skills: Vec<SkillToStage>,
    skill_dir: PathBuf,
    host: HostEnv,
    model: String,
    timeout: Duration,
    full: bool,
    queries: Vec<TriggerQuery>,
}

impl Request for TriggerRequest {
    type Kind = Triggers;

    /// Read the skill, its queries and siblings, work out its visibility, build the harness
    /// and ask its version. Starts no trial and spends nothing.
    fn plan<'a>(&'a self, engine: &'a Engine) -> BoxFuture<'a, Result<Triggers, RunError>> {
        Box::pin(async move {
            let planned = plan_staging(self)?;
            let (harness, harness_version) = resolve::harness(&self.harness, engine.host()).await?;
            let secs = self.timeout_secs.unwrap_or(DEFAULT_TRIGGER_TIMEOUT_SECS);
            let mut skills = planned.staged.clone();
            skills.push(planned.target.clone());
            Ok(Triggers {
                shared: Arc::new(TriggerShared {
                    harness,
                    target: planned.target,
                    skills,
                    skill_dir: planned.staged_dir,
                    host: engine.host().clone(),
                    model: self.model.clone(),
                    timeout: Duration::from_secs(u64::from(secs)),
                    full: self.full,
                    queries: planned.queries.clone(),
                }),
                request: self.clone(),
                harness_version,
                staged: planned.staged,
                queries: planned.queries,
                visibility: planned.visibility,
                _alternative: planned.alternative,
            })
        })
    }
}

/// What a trigger run will ask and what the listing shows of the skill: worked out without
/// starting anything (not even the harness, to ask its version), so a caller shows the
/// visibility first and runs nothing when it blocks.
pub struct Preview {
    /// The queries, in order.
    pub queries: Vec<TriggerQuery>,
    /// What the listing shows of the skill with the others staged.
    pub visibility: Visibility,
    /// Trials the run holds: every query `runs` times.
    pub trials: usize,
}

/// Preview `request` (see [`Preview`]).
pub fn preview(request: &TriggerRequest) -> Result<Preview, RunError> {
    let staging = plan_staging(request)?;
    Ok(Preview {
        trials: staging.queries.len() * request.runs.max(1) as usize,
        queries: staging.queries,
        visibility: staging.visibility,
    })
}

/// What a trigger run stages and asks.
struct Staging {
    target: SkillToStage,
    staged_dir: PathBuf,
    staged: Vec<SkillToStage>,
    queries: Vec<TriggerQuery>,
    visibility: Visibility,
    alternative: Option<tempfile::TempDir>,
}

/// The skill (or its copy with the other description: same folder name, same files, same
/// queries), its queries, the skills beside it and what the listing shows.
fn plan_staging(request: &TriggerRequest) -> Result<Staging, RunError> {
    let (dir, _) = resolve::skill_at(&request.skill_dir)?;
    let alternative = match &request.description {
        Some(description) => Some(stage_alternative(
            &dir,
            description,
            request.when_to_use.as_deref(),
        )?),
        None => None,
    };
    let staged_dir = alternative.as_ref().map_or_else(
        || dir.clone(),
        |t| t.path().join(dir.file_name().unwrap_or_default()),
    );
    let target = resolve::skill_to_stage(&staged_dir)?;
    let mut queries = load_trigger_queries(&dir, &target.name, request.eval_set.as_deref())?;
    if !request.only_queries.is_empty() {
        queries.retain(|q| request.only_queries.contains(&q.query));
    }
    if queries.is_empty() {
        return Err(RunError::NoCases {
            message: format!(
                "{}: expected trigger queries (eval cases, eval.yaml `triggers:`, or a trigger \
                 eval set such as evals/trigger_evals.json), found none",
                dir.display()
            ),
        });
    }
    let mut others: Vec<PathBuf> = if request.siblings {
        sibling_skills(&dir)
    } else {
        Vec::new()
    };
    for decoy in &request.decoys {
        let decoy = decoy.canonicalize().map_err(|e| RunError::NotASkill {
            dir: decoy.clone(),
            reason: format!("found none ({e})"),
        })?;
        if !others.contains(&decoy) && decoy != dir {
            others.push(decoy);
        }
    }
    let staged = others
        .iter()
        .map(|d| resolve::skill_to_stage(d))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Staging {
        visibility: visibility(
            &staged_dir,
            &others,
            ListingBudget::for_model(Some(&request.model)),
        ),
        target,
        staged_dir,
        staged,
        queries,
        alternative,
    })
}

impl Triggers {
    /// How many trials the run holds: every query `runs` times.
    pub fn planned(&self) -> usize {
        self.queries.len() * self.request.runs.max(1) as usize
    }
}

/// A trial that ran.
pub struct TriggerDone {
    record: TriggerTrialRecord,
    tokens: TokenUsage,
    retries: u32,
}

impl Kind for Triggers {
    type Trial = (usize, u32);
    type Done = TriggerDone;
    type Report = TriggerReport;

    const RUN: RunKind = RunKind::Trigger;

    fn model(&self) -> &str {
        &self.shared.model
    }

    fn budget(&self) -> &Budget {
        &self.request.budget
    }

    fn jobs(&self) -> usize {
        self.request.jobs
    }

    fn begin(&mut self, store: &mut Store) -> Result<Begun<(usize, u32)>, RunError> {
        let s = &self.shared;
        let run = store.begin(RunBegin::Trigger(&TriggerRunSpec {
            skill: SkillIdentity {
                name: s.target.name.clone(),
                path: Some(s.skill_dir.display().to_string()),
                content_hash: resolve::hash_dir(&s.skill_dir)?,
            },
            harness: s.harness.name().to_owned(),
            harness_version: Some(self.harness_version.clone()),
            model: s.model.clone(),
            tool_version: resolve::tool_version(),
            staged: self.staged.iter().map(|s| s.name.clone()).collect(),
            early_stop: !s.full,
            in_history: self.request.record,
        }))?;
        let runs = self.request.runs.max(1);
        Ok(Begun {
            run: Some(run),
            trials: (0..self.queries.len())
                .flat_map(|q| (0..runs).map(move |r| (q, r)))
                .collect(),
            started: Some(RunEvent::Started {
                run: crate::store::RunId(run.id),
                kind: RunKind::Trigger,
                skill: s.target.name.clone(),
                harness: s.harness.name().to_owned(),
                harness_version: self.harness_version.clone(),
                model: s.model.clone(),
                cases: self.queries.len(),
                planned: self.planned(),
                reused: 0,
                resumed: 0,
            }),
            skill: s.target.name.clone(),
        })
    }

    fn start(&self, (query, run): (usize, u32), root: &Path) -> BoxFuture<'static, TriggerDone> {
        let shared = self.shared.clone();
        let root = root.to_path_buf();
        Box::pin(async move { trial(&shared, &root, query, run).await })
    }

    fn usage(done: &TriggerDone) -> TokenUsage {
        done.tokens
    }

    fn row(&mut self, done: &TriggerDone, _spend: &Spend) -> Recorded {
        let t = &done.record;
        let query = &self.queries[t.trial.query];
        let decided = t.trial.decision.is_some();
        let picked = matches!(&t.trial.decision, Some(Decision::Picked { skill }) if *skill == self.shared.target.name);
        Recorded {
            events: vec![RunEvent::TrialFinished {
                case: query.query.clone(),
                condition: Condition::Skill,
                attempt: t.run,
                status: if decided {
                    StoredStatus::Completed
                } else {
                    StoredStatus::Error
                },
                passed: decided.then_some(picked == query.kind.should_trigger()),
                invoked: decided.then_some(picked),
                wall_ms: t.trial.wall_ms,
                retries: done.retries,
                error: (!t.errors.is_empty()).then(|| t.errors.join("; ")),
                detail: Some(TrialDetail::Trigger {
                    query: query.query.clone(),
                    decision: t.trial.decision.clone(),
                }),
            }],
            row: Row::Trigger(TriggerTrialRow {
                query: query.clone(),
                trial: t.trial.clone(),
                run: t.run,
                listed: t.listed,
                error_message: (!t.errors.is_empty()).then(|| t.errors.join("; ")),
            }),
            run: None,
        }
    }

    fn report(
        &mut self,
        store: &Store,
        run: RunRef,
        _ending: &Ending,
    ) -> Result<TriggerReport, RunError> {
        TriggerReport::load(store, TriggerRunId(run.id), self.visibility.clone())?.ok_or_else(
            || RunError::Settings {
                message: format!("trigger run {} vanished from the history", run.id),
            },
        )
    }
}

/// Query `query`, `run` times over: one agent, stopped at its first decision (unless `full`).
async fn trial(s: &TriggerShared, root: &Path, query: usize, run: u32) -> TriggerDone {
    let q = &s.queries[query];
    let id = format!("query {}", query + 1);
    let execution = AgentRun {
        harness: s.harness.as_ref(),
        workspace: WorkspaceSource::empty(&q.origin, &id),
        skill_dir: &s.skill_dir,
        host: &s.host,
        prompt: &q.query,
        skills: s.skills.clone(),
        model: &s.model,
        timeout: s.timeout,
        plant: Default::default(),
        stop_when: (!s.full).then(|| StopRule(Arc::new(|t| first_decision(t, false).is_some()))),
        retries: TRIGGER_RETRIES,
    };
    let AgentRunOutcome {
        outcome, retries, ..
    } = execution
        .run(|attempt| root.join(format!("q{query}-r{run}-try{attempt}")))
        .await;
    let finished = outcome.status == TrialStatus::Ok && !outcome.stopped_early;
    let decision: Option<Decision> = outcome
        .trajectory
        .as_ref()
        .and_then(|t| first_decision(t, finished));
    let errors = if decision.is_some() {
        Vec::new()
    } else {
        outcome.errors.iter().map(|e| e.message.clone()).collect()
    };
    TriggerDone {
        record: TriggerTrialRecord {
            trial: TriggerTrial {
                query,
                decision,
                tokens: outcome.tokens.input + outcome.tokens.output,
                turns: outcome.turns,
                wall_ms: outcome.wall_ms,
                stopped_early: outcome.stopped_early,
            },
            run,
            listed: outcome
                .visible_skills
                .as_ref()
                .map(|v| v.contains(&s.target.name)),
            errors,
        },
        tokens: outcome.tokens,
        retries,
    }
}

impl crate::runs::Outcome for TriggerReport {
    fn status(&self) -> crate::store::RunStatus {
        self.status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A description search's arm with `when_to_use` stages a copy whose SKILL.md differs in
    /// those two fields only; the skill itself is untouched.
    #[test]
    fn an_arm_with_when_to_use_stages_both_fields_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pdf-tools");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        let original = "---\nname: pdf-tools\ndescription: Splits PDFs.\nwhen_to_use: A PDF arrives\n---\n# PDF\n";
        std::fs::write(dir.join("SKILL.md"), original).unwrap();
        std::fs::write(dir.join("scripts/run.sh"), "echo hi\n").unwrap();
        let staged =
            stage_alternative(&dir, "Splits and merges PDFs.", Some("Any .pdf task")).unwrap();
        let copy = staged.path().join("pdf-tools");
        let text = std::fs::read_to_string(copy.join("SKILL.md")).unwrap();
        assert_eq!(
            text,
            "---\nname: pdf-tools\ndescription: \"Splits and merges PDFs.\"\nwhen_to_use: \"Any .pdf task\"\n---\n# PDF\n"
        );
        assert!(copy.join("scripts/run.sh").is_file());
        assert_eq!(
            std::fs::read_to_string(dir.join("SKILL.md")).unwrap(),
            original
        );
        // a skill without `when_to_use:` cannot be staged with one
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: pdf-tools\ndescription: D\n---\n",
        )
        .unwrap();
        assert!(stage_alternative(&dir, "E", Some("W")).is_err());
    }
}
