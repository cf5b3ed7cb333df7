//! Trigger trials: does the agent pick the skill for the queries it should, and leave it alone
//! for the others? Each trial stages the skill among its sibling skills (the folder it lives
//! in, as an agent would have them installed) and any decoys, sends one query, and stops the
//! agent as soon as its first decision is visible in its event stream
//! ([`skillwatch_core::trajectory::first_decision`]): a skill load, another action, or an
//! answer. Nothing is graded or judged, so a trial costs one model request where a full trial
//! costs a whole task.
//!
//! Two steps, as for a paired run: [`plan`] reads the skill, its queries and what the listing
//! will show of it ([`skillwatch_core::checks::visibility`], the computation behind
//! SW220/SW222/SW223) without starting anything; [`TriggerPlan::execute`] runs the trials. A
//! caller shows the visibility first and runs nothing when it blocks, unless asked to.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use skillwatch_core::checks::{ListingBudget, Visibility, sibling_skills, visibility};
use skillwatch_core::evalspec::{TriggerQuery, load_trigger_queries};
use skillwatch_core::scoring::trigger::{TriggerSummary, TriggerTrial, summarize};
use skillwatch_core::skill::content_hash;
use skillwatch_core::trajectory::{Decision, first_decision};
use tokio_util::sync::CancellationToken;

use crate::harness::{Harness, HostEnv, SkillToStage, StopRule, TrialStatus};
use crate::runner::{
    AgentRun, AgentRunOutcome, HarnessSettings, RunError, WorkspaceSource, skill_to_stage,
    workspace,
};
use crate::store::{
    RunStatus, SkillIdentity, Store, TriggerRunId, TriggerRunSpec, TriggerTrialRow,
};

/// Seconds a trigger trial may take by default: a decision is one model request away.
pub const DEFAULT_TRIGGER_TIMEOUT_SECS: u32 = 60;

/// Retries of a trial whose agent could not be started (as a paired run's, into a pristine
/// folder): a decision is cheap to ask again, and an unseen one leaves the rates.
const TRIGGER_RETRIES: u32 = 2;

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerRequest {
    /// The skill folder.
    pub skill_dir: PathBuf,
    /// The harness.
    pub harness: HarnessSettings,
    /// The agent's model.
    pub model: String,
    /// Trials per query.
    pub runs: u32,
    /// Trials in flight at once.
    pub jobs: usize,
    /// Seconds per trial.
    pub timeout_secs: Option<u32>,
    /// Stage the skills beside the target too (the default: that is what the agent chooses among).
    pub siblings: bool,
    /// Decoy skill folders staged with it.
    pub decoys: Vec<PathBuf>,
    /// A trigger eval set (skill-creator's JSON list) besides the skill's eval files.
    pub eval_set: Option<PathBuf>,
    /// Let the agent run to its end instead of stopping at the decision (what a full trial
    /// costs, for comparison).
    pub full: bool,
    /// An alternative description: the skill is staged as a copy with only its
    /// `description:` changed (`--description-file`, the A/B arm).
    #[serde(default)]
    pub description: Option<String>,
    /// Record the run in the history (an A/B arm is not: it measures an edit, not a version).
    #[serde(default = "yes")]
    pub record: bool,
    /// Through the daemon: an id the client picks for this call, carried by each trial's
    /// `EventKind::TriggerProgress` so the client can show its own trials as they finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
}

fn yes() -> bool {
    true
}

impl TriggerRequest {
    /// A request with the defaults: one run, one job, siblings staged, early stop.
    pub fn new(
        skill_dir: impl Into<PathBuf>,
        harness: HarnessSettings,
        model: impl Into<String>,
    ) -> TriggerRequest {
        TriggerRequest {
            skill_dir: skill_dir.into(),
            harness,
            model: model.into(),
            runs: 1,
            jobs: 1,
            timeout_secs: None,
            siblings: true,
            decoys: Vec::new(),
            eval_set: None,
            full: false,
            description: None,
            record: true,
            call: None,
        }
    }
}

/// A copy of the skill folder `dir` (under a fresh temporary folder, same folder name) whose
/// SKILL.md differs only in its `description:`.
fn stage_alternative(dir: &Path, description: &str) -> Result<tempfile::TempDir, RunError> {
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
    let changed = skillwatch_core::skill::SkillDocument::parse(text)
        .with_field_str("description", description.trim())
        .ok_or_else(|| RunError::NotASkill {
            dir: dir.to_path_buf(),
            reason: "found no `description:` in its SKILL.md frontmatter to replace".into(),
        })?;
    std::fs::write(&skill_md, changed).map_err(io(format!("writing {}", skill_md.display())))?;
    Ok(root)
}

/// What [`plan`] found: everything a run needs, nothing started.
pub struct TriggerPlan {
    request: TriggerRequest,
    target: SkillToStage,
    staged: Vec<SkillToStage>,
    /// The queries, in order.
    pub queries: Vec<TriggerQuery>,
    /// What the listing shows of the skill with the others staged.
    pub visibility: Visibility,
    harness: Arc<dyn Harness>,
    skill_dir: PathBuf,
    host: HostEnv,
    /// The copy of the skill with the alternative description, while the plan lives.
    _alternative: Option<tempfile::TempDir>,
}

/// The result of a trigger run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerReport {
    /// The skill's name.
    pub skill: String,
    /// The harness and its version.
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
    /// The run in the history, when it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<TriggerRunId>,
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

/// Read the skill, its queries and siblings, work out its visibility and build the harness.
/// Starts nothing and spends nothing.
pub fn plan(request: &TriggerRequest, host: &HostEnv) -> Result<TriggerPlan, RunError> {
    let dir = request
        .skill_dir
        .canonicalize()
        .map_err(|e| RunError::NotASkill {
            dir: request.skill_dir.clone(),
            reason: format!("found none ({e})"),
        })?;
    let alternative = match &request.description {
        Some(description) => Some(stage_alternative(&dir, description)?),
        None => None,
    };
    // The skill as staged: the folder itself, or its copy with the other description (same
    // folder name, same files, same queries).
    let staged_dir = alternative.as_ref().map_or_else(
        || dir.clone(),
        |t| t.path().join(dir.file_name().unwrap_or_default()),
    );
    let target = skill_to_stage(&staged_dir)?;
    let queries = load_trigger_queries(&dir, &target.name, request.eval_set.as_deref())?;
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
        .map(|d| skill_to_stage(d))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(TriggerPlan {
        visibility: visibility(
            &staged_dir,
            &others,
            ListingBudget::for_model(Some(&request.model)),
        ),
        harness: request.harness.build(host)?,
        host: host.clone(),
        skill_dir: staged_dir,
        _alternative: alternative,
        request: request.clone(),
        target,
        staged,
        queries,
    })
}

impl TriggerPlan {
    /// How many trials [`TriggerPlan::execute`] runs.
    pub fn planned(&self) -> usize {
        self.queries.len() * self.request.runs.max(1) as usize
    }

    /// Run every query `runs` times, trial folders under `temp_root`; `progress` is told of
    /// each finished trial, and `store`, when given, records the run (each trial as it
    /// finishes, in its own transaction). Cancelling stops scheduling and kills the agents in
    /// flight; the report then holds the trials that finished (the stored run is `cancelled`).
    pub async fn execute(
        &self,
        temp_root: &Path,
        progress: &(dyn Fn(&TriggerTrialRecord) + Send + Sync),
        cancel: CancellationToken,
        store: Option<Arc<Mutex<Store>>>,
    ) -> Result<TriggerReport, RunError> {
        let harness_version = self
            .harness
            .version()
            .await
            .map_err(|e| RunError::Harness {
                harness: self.harness.name().to_owned(),
                message: e.to_string(),
            })?;
        let store = store.filter(|_| self.request.record);
        let run_id = match &store {
            Some(store) => Some(self.begin(store, &harness_version)?),
            None => None,
        };
        let root = tempfile::Builder::new()
            .prefix("skillwatch-trigger-")
            .tempdir_in(temp_root)
            .map_err(|source| RunError::Io {
                context: format!("creating a trial folder in {}", temp_root.display()),
                source,
            })?;
        let jobs: Vec<(usize, u32)> = (0..self.queries.len())
            .flat_map(|q| (0..self.request.runs.max(1)).map(move |r| (q, r)))
            .collect();
        let mut stream = futures::stream::iter(jobs)
            .map(|(q, r)| self.trial(root.path(), q, r))
            .buffer_unordered(self.request.jobs.max(1));
        let mut trials = Vec::new();
        let mut cancelled = false;
        loop {
            tokio::select! {
                next = stream.next() => match next {
                    Some(t) => {
                        if let (Some(store), Some(run)) = (&store, run_id) {
                            self.record(store, run, &t).await?;
                        }
                        progress(&t);
                        trials.push(t);
                    }
                    None => break,
                },
                _ = cancel.cancelled() => { cancelled = true; break; }
            }
        }
        drop(stream);
        if let (Some(store), Some(run)) = (&store, run_id) {
            let status = if cancelled {
                RunStatus::Cancelled
            } else {
                RunStatus::Completed
            };
            lock(store).finish_trigger_run(run, status)?;
        }
        trials.sort_by_key(|t| (t.trial.query, t.run));
        let rates: Vec<TriggerTrial> = trials.iter().map(|t| t.trial.clone()).collect();
        Ok(TriggerReport {
            summary: summarize(&self.target.name, &self.queries, &rates),
            skill: self.target.name.clone(),
            harness: self.harness.name().to_owned(),
            harness_version,
            model: self.request.model.clone(),
            visibility: self.visibility.clone(),
            staged: self.staged.iter().map(|s| s.name.clone()).collect(),
            trials,
            run_id,
        })
    }

    /// Start the run in the history.
    fn begin(&self, store: &Mutex<Store>, harness_version: &str) -> Result<TriggerRunId, RunError> {
        let content_hash = content_hash(&self.skill_dir).map_err(|source| RunError::Io {
            context: format!("hashing {}", self.skill_dir.display()),
            source,
        })?;
        let spec = TriggerRunSpec {
            skill: SkillIdentity {
                name: self.target.name.clone(),
                path: Some(self.skill_dir.display().to_string()),
                content_hash,
            },
            harness: self.harness.name().to_owned(),
            harness_version: Some(harness_version.to_owned()),
            model: self.request.model.clone(),
            tool_version: format!("skillwatch {}", env!("CARGO_PKG_VERSION")),
            staged: self.staged.iter().map(|s| s.name.clone()).collect(),
            early_stop: !self.request.full,
        };
        Ok(lock(store).begin_trigger_run(&spec)?)
    }

    /// Record one finished trial, off the async threads.
    async fn record(
        &self,
        store: &Arc<Mutex<Store>>,
        run: TriggerRunId,
        t: &TriggerTrialRecord,
    ) -> Result<(), RunError> {
        let row = TriggerTrialRow {
            query: self.queries[t.trial.query].clone(),
            trial: t.trial.clone(),
            run: t.run,
            listed: t.listed,
            error_message: (!t.errors.is_empty()).then(|| t.errors.join("; ")),
        };
        let store = store.clone();
        tokio::task::spawn_blocking(move || lock(&store).record_trigger_trial(run, &row))
            .await
            .map_err(|e| RunError::Io {
                context: "a history store call".into(),
                source: std::io::Error::other(e.to_string()),
            })??;
        Ok(())
    }

    async fn trial(&self, root: &Path, query: usize, run: u32) -> TriggerTrialRecord {
        let mut skills = self.staged.clone();
        skills.push(self.target.clone());
        let secs = self
            .request
            .timeout_secs
            .unwrap_or(DEFAULT_TRIGGER_TIMEOUT_SECS);
        let q = &self.queries[query];
        let id = format!("query {}", query + 1);
        let execution = AgentRun {
            harness: self.harness.as_ref(),
            workspace: WorkspaceSource::empty(&q.origin, &id),
            skill_dir: &self.skill_dir,
            host: &self.host,
            prompt: &q.query,
            skills,
            model: &self.request.model,
            timeout: Duration::from_secs(u64::from(secs)),
            plant: Default::default(),
            stop_when: (!self.request.full)
                .then(|| StopRule(Arc::new(|t| first_decision(t, false).is_some()))),
            retries: TRIGGER_RETRIES,
        };
        let AgentRunOutcome { outcome, .. } = execution
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
        TriggerTrialRecord {
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
                .map(|v| v.contains(&self.target.name)),
            errors,
        }
    }
}

fn lock(store: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}
