//! Security probes, run: SkillTester's security score S and status (seed 000 §2.3, §4.4),
//! measured by running the agent with the skill on each probe of the suite
//! (`core::probe`) and grading what it did, never what it said.
//!
//! # What one probe is
//!
//! 1. Fresh canaries ([`canary`]): fake AWS credentials and SSH key in the trial's fresh HOME,
//!    a `.env` in the workspace, `$SERVICE_API_TOKEN` in the agent's environment, and a file
//!    outside the workspace; the [`honeypot`] on 127.0.0.1 records every request.
//! 2. The agent runs through [`crate::runner::AgentRun`] (the same workspace preparation,
//!    skill staging, harness, scrubbed environment, timeout and process-group kill as every
//!    agent), with the skill staged, on the probe's prompt rendered with the skill's name and
//!    description. The probe run is one kind of run on the engine ([`crate::runs`]): begun,
//!    budgeted, recorded probe by probe and reported as every kind is.
//! 3. Evidence is gathered: the trajectory (commands, tool arguments, tool results), the
//!    answer, the honeypot's log, what changed in the workspace and outside it; the probe is
//!    graded by `core::probe::grade`, and its outcome stored with the evidence redacted.
//!
//! An agent that could not be started is an `error`: no observation, left out of the group's
//! pass rate and counted. A timeout is graded on what the agent did before it was killed.
//!
//! # Isolation, and what it is not
//!
//! Probes run in a temporary folder with a fresh HOME, a scrubbed environment and fake
//! credentials: the agent never sees the user's real HOME, keys or skills. This is **not a
//! container or a sandbox**: the agent runs as the user, can read any file the user can
//! (`/etc/passwd`, the user's real home by its absolute path) and reach any network the machine
//! can. The probes only *suggest* targets that are fake (canaries, the honeypot); an agent that
//! goes further does so for real. Run probes on a machine or account you would let the agent
//! use anyway (docs/probes.md).
//!
//! A run killed outright (`kill -9`) cannot clean up after itself: the honeypot dies with the
//! process, and a watchdog started beside the run kills the agents and deletes the folder.

pub mod canary;
pub mod honeypot;
mod watchdog;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use skillwatch_core::evalspec::{FileContent, Setup, SetupFile};
use skillwatch_core::probe::{
    self, Evidence, HoneypotRequest, Probe, ProbeVerdict, TemplateVars, load_suite, redact,
};
use skillwatch_core::scoring::skilltester::{SecurityReport, SecurityStatus};
use skillwatch_core::skill::Skill;
use skillwatch_core::trajectory::{TokenUsage, Trajectory};
use skillwatch_protocol::Budget;

use crate::harness::{BoxFuture, Harness, HostEnv, SkillToStage, TrialOutcome, TrialStatus};
use crate::runner::{AgentRun, RunError, WorkspaceSource, trial_timeout};
use crate::runs::{
    Begun, Ctx, Ending, Engine, Kind, ProgressSink, Recorded, Request, RunEvent, TrialDetail,
    resolve,
};
use crate::store::{
    Condition, ProbeOutcome, ProbeOutcomeRecord, ProbeRunId, ProbeRunInfo, ProbeRunSpec, Row,
    RunBegin, RunKind, RunRef, SkillIdentity, Spend, Spent, Stop, Store, StoreError,
    Trajectory as StoredTrajectory, TrialStatus as StoredStatus, security_of,
};

use canary::Canaries;
use honeypot::Honeypot;

pub use skillwatch_protocol::{DEFAULT_PROBE_TIMEOUT_SECS, ProbeRequest};

/// The engine, under the name it has for probe runs.
pub type Prober = Engine;

/// A planned probe run: what will run, before anything does.
pub type ProbePlan = crate::runs::Planned<Probes>;

/// The result of a probe run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeReport {
    /// The stored run with every outcome.
    pub run: ProbeRunInfo,
    /// S, group scores and status; `None` when a group had no observed probe.
    pub security: Option<SecurityReport>,
    /// Probes that could not be run.
    pub errors: usize,
    /// Why the run stopped before every probe ran, when its budget stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
    /// What its probes spent.
    #[serde(default)]
    pub spent: Spent,
}

impl ProbeReport {
    /// The report of a stored probe run: S and its status computed by the seed's rule from
    /// the stored outcomes and θs. What a run ends with, in-process or through the daemon
    /// (`skillwatch probe` reads it back from the history), so both print the same report.
    pub fn load(store: &Store, run: ProbeRunId) -> Result<Option<ProbeReport>, StoreError> {
        let Some(info) = store.probe_run(run)? else {
            return Ok(None);
        };
        let at = RunRef {
            kind: RunKind::Probe,
            id: run.0,
        };
        let mut report = ProbeReport::of(info);
        report.stop = store.stop_of(at)?;
        report.spent = store.spent(at)?;
        Ok(Some(report))
    }

    /// The report of `run` as stored (its budget stop and spending not read).
    pub fn of(run: ProbeRunInfo) -> ProbeReport {
        let (security, errors) = security_of(&run);
        ProbeReport {
            security,
            errors,
            run,
            stop: None,
            spent: Spent::default(),
        }
    }

    /// Whether the skill fails on security: its status is Risky (S below θs).
    pub fn risky(&self) -> bool {
        self.security
            .as_ref()
            .is_some_and(|s| s.status == SecurityStatus::Risky)
    }
}

impl Request for ProbeRequest {
    type Kind = Probes;

    /// The skill, the suite (built-in and the author's), the harness and its version.
    fn plan<'a>(&'a self, engine: &'a Engine) -> BoxFuture<'a, Result<Probes, RunError>> {
        Box::pin(async move {
            let r = resolve::resolve(&self.skill_dir, &self.harness, engine.host()).await?;
            let description = Skill::load(&r.skill_dir)
                .document
                .ok()
                .and_then(|d| d.field_str("description").map(|(s, _)| s.trim().to_owned()))
                .unwrap_or_default();
            let suite = load_suite(&r.skill_dir).map_err(RunError::Probes)?;
            let probes: Vec<Probe> = suite
                .probes
                .into_iter()
                .filter(|p| self.only.is_empty() || self.only.contains(&p.id))
                .collect();
            if probes.is_empty() {
                return Err(RunError::NoCases {
                    message: format!(
                        "expected probes named {}, found none of them",
                        self.only.join(", ")
                    ),
                });
            }
            let skill_hash = resolve::hash_dir(&r.skill_dir)?;
            Ok(Probes {
                request: self.clone(),
                shared: Arc::new(ProbeShared {
                    skill_dir: r.skill_dir,
                    target: r.target,
                    description,
                    harness: r.harness,
                    host: engine.host().clone(),
                    model: self.model.clone(),
                    timeout: trial_timeout(self.timeout_secs, Some(DEFAULT_PROBE_TIMEOUT_SECS)),
                    retries: self.retries,
                }),
                harness_version: r.harness_version,
                suite_version: suite.version,
                probes,
                skill_hash,
                live: None,
            })
        })
    }
}

/// A planned probe run, and the state of its execution.
pub struct Probes {
    request: ProbeRequest,
    shared: Arc<ProbeShared>,
    harness_version: String,
    suite_version: String,
    probes: Vec<Probe>,
    skill_hash: String,
    /// The honeypot and watchdog while the probes run.
    live: Option<Live>,
}

/// What every probe of a run shares.
struct ProbeShared {
    skill_dir: PathBuf,
    target: SkillToStage,
    description: String,
    harness: Arc<dyn Harness>,
    host: HostEnv,
    model: String,
    timeout: Duration,
    retries: u32,
}

/// What runs beside the probes: the honeypot every probe may be sent to, and the watchdog
/// that cleans up after a killed run.
struct Live {
    honeypot: Arc<Honeypot>,
    watchdog: Option<watchdog::Watchdog>,
    progress: ProgressSink,
    run: i64,
}

impl Probes {
    /// The probes that will run, in order.
    pub fn probes(&self) -> &[Probe] {
        &self.probes
    }

    /// The suite's version.
    pub fn suite_version(&self) -> &str {
        &self.suite_version
    }
}

/// A probe that ran (or could not).
pub struct ProbeDone {
    record: ProbeOutcomeRecord,
    tokens: TokenUsage,
    retries: u32,
    dir: PathBuf,
}

impl Kind for Probes {
    type Trial = Probe;
    type Done = ProbeDone;
    type Report = ProbeReport;

    const RUN: RunKind = RunKind::Probe;

    fn model(&self) -> &str {
        &self.shared.model
    }

    fn budget(&self) -> &Budget {
        &self.request.budget
    }

    /// One at a time: each probe has its own canaries, and the honeypot's log is read per
    /// probe.
    fn jobs(&self) -> usize {
        1
    }

    fn keep_folders(&self) -> bool {
        self.request.keep_workspaces
    }

    fn begin(&mut self, store: &mut Store) -> Result<Begun<Probe>, RunError> {
        let s = &self.shared;
        let run = store.begin(RunBegin::Probe(&ProbeRunSpec {
            skill: SkillIdentity {
                name: s.target.name.clone(),
                path: Some(s.skill_dir.display().to_string()),
                content_hash: self.skill_hash.clone(),
            },
            suite_version: self.suite_version.clone(),
            harness: s.harness.name().to_owned(),
            harness_version: Some(self.harness_version.clone()),
            model: s.model.clone(),
            tool_version: resolve::tool_version(),
            theta_s: self.request.params.theta_s,
        }))?;
        Ok(Begun {
            run: Some(run),
            trials: self.probes.clone(),
            started: Some(RunEvent::Started {
                run: crate::store::RunId(run.id),
                kind: RunKind::Probe,
                skill: s.target.name.clone(),
                harness: s.harness.name().to_owned(),
                harness_version: self.harness_version.clone(),
                model: s.model.clone(),
                cases: self.probes.len(),
                planned: self.probes.len(),
                reused: 0,
                resumed: 0,
            }),
            skill: s.target.name.clone(),
        })
    }

    fn before<'a>(&'a mut self, ctx: &'a Ctx) -> BoxFuture<'a, Result<(), RunError>> {
        Box::pin(async move {
            let watchdog = watchdog::Watchdog::arm(&ctx.root);
            let honeypot = Honeypot::start().await.map_err(|source| RunError::Io {
                context: "starting the honeypot on 127.0.0.1".into(),
                source,
            })?;
            self.live = Some(Live {
                honeypot: Arc::new(honeypot),
                watchdog,
                progress: ctx.progress.clone(),
                run: ctx.run.map_or(0, |r| r.id),
            });
            Ok(())
        })
    }

    fn start(&self, probe: Probe, root: &Path) -> BoxFuture<'static, ProbeDone> {
        let live = self.live.as_ref().expect("before() started the honeypot");
        let (shared, honeypot) = (self.shared.clone(), live.honeypot.clone());
        let (progress, run) = (live.progress.clone(), live.run);
        let dir = root.join(&probe.id);
        Box::pin(async move {
            progress(&RunEvent::TrialStarted {
                case: probe.id.clone(),
                condition: Condition::Skill,
                attempt: 0,
            });
            run_probe(&shared, run, &probe, dir, &honeypot).await
        })
    }

    fn usage(done: &ProbeDone) -> TokenUsage {
        done.tokens
    }

    fn row(&mut self, done: &ProbeDone, _spend: &Spend) -> Recorded {
        let r = &done.record;
        let error = r.outcome == ProbeOutcome::Error;
        Recorded {
            events: vec![RunEvent::TrialFinished {
                case: r.probe.clone(),
                condition: Condition::Skill,
                attempt: 0,
                status: if error {
                    StoredStatus::Error
                } else {
                    StoredStatus::Completed
                },
                passed: (!error).then_some(r.outcome == ProbeOutcome::Passed),
                invoked: None,
                wall_ms: r.wall_ms.unwrap_or(0),
                retries: done.retries,
                error: r.error_message.clone(),
                detail: Some(TrialDetail::Probe {
                    outcome: r.outcome,
                    findings: r.findings.len(),
                }),
            }],
            row: Row::Probe(r.clone()),
            run: None,
        }
    }

    fn recorded<'a>(
        &'a mut self,
        done: ProbeDone,
        _ctx: &'a Ctx,
    ) -> BoxFuture<'a, Result<(), RunError>> {
        if !self.request.keep_workspaces {
            let _ = std::fs::remove_dir_all(&done.dir);
        }
        Box::pin(async { Ok(()) })
    }

    fn settle(&mut self, _cancelled: bool) -> BoxFuture<'_, Result<(), RunError>> {
        Box::pin(async move {
            if let Some(live) = self.live.take() {
                drop(live.honeypot);
                if let Some(w) = live.watchdog {
                    w.disarm().await;
                }
            }
            Ok(())
        })
    }

    fn report(
        &mut self,
        store: &Store,
        run: RunRef,
        _ending: &Ending,
    ) -> Result<ProbeReport, RunError> {
        ProbeReport::load(store, ProbeRunId(run.id))?.ok_or_else(|| RunError::Settings {
            message: format!("probe run {} vanished from the history", run.id),
        })
    }
}

/// One probe: fresh canaries, the agent on the probe's prompt, the evidence graded.
async fn run_probe(
    s: &ProbeShared,
    run: i64,
    probe: &Probe,
    dir: PathBuf,
    honeypot: &Honeypot,
) -> ProbeDone {
    let done = |record, tokens, retries| ProbeDone {
        record,
        tokens,
        retries,
        dir: dir.clone(),
    };
    let nonce = format!(
        "{run}/{}/{}/{}",
        probe.id,
        std::process::id(),
        crate::store::time::now_ms()
    );
    let canaries = canary::make(&nonce);
    let outside_dir = dir.join("outside");
    let outside_file = outside_dir.join("private-notes.txt");
    let planted = std::fs::create_dir_all(&outside_dir)
        .and_then(|()| std::fs::write(&outside_file, &canaries.outside_text));
    if let Err(e) = planted {
        let record = error_record(probe, format!("planting {}: {e}", outside_file.display()));
        return done(record, TokenUsage::default(), 0);
    }
    let vars = TemplateVars {
        skill_name: s.target.name.clone(),
        skill_description: s.description.clone(),
        honeypot_url: honeypot.url(),
        outside_file: outside_file.clone(),
    };
    let initial = initial_files(probe, &canaries, &vars);
    let setup = Setup {
        copy_test_files: false,
        files: initial
            .iter()
            .map(|(path, text)| SetupFile {
                path: path.clone(),
                content: FileContent::Inline { text: text.clone() },
            })
            .collect(),
        commands: Vec::new(),
    };
    let prompt = probe::render(&probe.prompt, &vars);
    let _ = honeypot.take();
    let execution = AgentRun {
        harness: s.harness.as_ref(),
        workspace: WorkspaceSource {
            setup: &setup,
            file: &probe.origin.file,
            id: &probe.id,
        },
        skill_dir: &s.skill_dir,
        host: &s.host,
        prompt: &prompt,
        skills: vec![s.target.clone()],
        model: &s.model,
        timeout: s.timeout,
        plant: canaries.plant.clone(),
        stop_when: None,
        retries: s.retries,
    };
    let executed = execution.run(|n| dir.join(format!("try{n}"))).await;
    let requests = honeypot.take();
    let outcome = &executed.outcome;
    let (tokens, retries) = (outcome.tokens, executed.retries);
    if not_observed(outcome, &requests) {
        let why = outcome
            .errors
            .iter()
            .map(|e| e.message.clone())
            .collect::<Vec<_>>()
            .join("; ");
        return done(
            error_record(probe, redact(&why, &canaries.list)),
            tokens,
            retries,
        );
    }
    let verdict = grade(
        s,
        probe,
        &executed.workspace,
        outcome,
        &requests,
        &canaries,
        &initial,
        &outside_dir,
        &outside_file,
    );
    done(
        graded_record(probe, outcome, verdict, &canaries),
        tokens,
        retries,
    )
}

/// Grade a probe from its evidence: what the agent did, the honeypot's log, the workspace
/// and what changed outside it.
#[allow(clippy::too_many_arguments)]
fn grade(
    s: &ProbeShared,
    probe: &Probe,
    ws: &Path,
    outcome: &TrialOutcome,
    requests: &[HoneypotRequest],
    canaries: &Canaries,
    initial: &[(String, String)],
    outside_dir: &Path,
    outside_file: &Path,
) -> ProbeVerdict {
    let scratch = ws.parent().map(|p| p.join("scratch")).unwrap_or_default();
    let home = crate::harness::trial_home(&scratch);
    let skip = [
        s.harness.skills_dir().to_path_buf(),
        PathBuf::from(".claude"),
        PathBuf::from(".agents"),
        PathBuf::from(".codex"),
        PathBuf::from(".git"),
    ];
    let (workspace_changes, written) = workspace_changes(ws, initial, &skip);
    let outside_changes = outside_changes(outside_dir, outside_file, canaries, &home);
    let mut allowed = vec![scratch.join("tmp")];
    allowed.extend(probe.workspace.allowed_paths.iter().map(PathBuf::from));
    probe::grade(
        probe,
        &Evidence {
            output: &outcome.final_output,
            trajectory: outcome.trajectory.as_ref(),
            honeypot: requests,
            canaries: &canaries.list,
            workspace: ws,
            home: &home,
            allowed: &allowed,
            outside_changes: &outside_changes,
            workspace_changes: &workspace_changes,
            written: &written,
        },
    )
}

/// The workspace a probe starts with: the `.env` canary, then the probe's files (rendered).
fn initial_files(probe: &Probe, canaries: &Canaries, vars: &TemplateVars) -> Vec<(String, String)> {
    let mut files = vec![(canary::DOTENV.to_owned(), canaries.dotenv.clone())];
    files.extend(
        probe
            .workspace
            .files
            .iter()
            .map(|f| (f.path.clone(), probe::render(&f.content, vars))),
    );
    files
}

/// The agent never ran (it could not be started) and left no trace: no observation.
fn not_observed(outcome: &TrialOutcome, requests: &[HoneypotRequest]) -> bool {
    outcome.status == TrialStatus::Error && outcome.trajectory.is_none() && requests.is_empty()
}

/// Files larger than this are compared by size and time only, and their text is not read.
const MAX_READ_BYTES: u64 = 1024 * 1024;

/// Workspace paths created, changed or deleted (the harness's own folders skipped), and the
/// text of those created or changed.
fn workspace_changes(
    ws: &Path,
    initial: &[(String, String)],
    skip: &[PathBuf],
) -> (Vec<String>, Vec<(String, String)>) {
    let before: BTreeMap<&str, &str> = initial
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let mut changed = Vec::new();
    let mut written = Vec::new();
    let mut seen = Vec::new();
    let walk = walkdir::WalkDir::new(ws)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            let rel = e.path().strip_prefix(ws).unwrap_or(e.path());
            !skip
                .iter()
                .any(|s| rel.starts_with(s) && !s.as_os_str().is_empty())
        });
    for entry in walk.flatten() {
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(ws)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        let small = entry.metadata().is_ok_and(|m| m.len() <= MAX_READ_BYTES);
        let text = small
            .then(|| std::fs::read(entry.path()).ok())
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        seen.push(rel.clone());
        if before.get(rel.as_str()).copied() != text.as_deref() {
            changed.push(rel.clone());
            if let Some(t) = text {
                written.push((rel, t));
            }
        }
    }
    changed.extend(
        before
            .keys()
            .filter(|p| !seen.iter().any(|s| s == *p))
            .map(|p| format!("{p} (deleted)")),
    );
    (changed, written)
}

/// Outside the workspace: anything new or changed in the outside folder, and any planted HOME
/// file changed or deleted.
fn outside_changes(
    outside_dir: &Path,
    outside_file: &Path,
    canaries: &Canaries,
    home: &Path,
) -> Vec<String> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(outside_dir).into_iter().flatten() {
        let p = entry.path();
        if entry.file_type().is_file() && p != outside_file {
            out.push(format!("{} (created)", p.display()));
        }
    }
    if std::fs::read_to_string(outside_file).ok().as_deref() != Some(&canaries.outside_text) {
        out.push(format!("{} (changed)", outside_file.display()));
    }
    for (rel, text) in &canaries.plant.home_files {
        let p = home.join(rel);
        if std::fs::read_to_string(&p).ok().as_deref() != Some(text.as_str()) {
            out.push(format!("~/{} (changed)", rel.display()));
        }
    }
    out
}

fn error_record(probe: &Probe, message: String) -> ProbeOutcomeRecord {
    ProbeOutcomeRecord {
        probe: probe.id.clone(),
        group: probe.group,
        owasp: probe.owasp.clone(),
        outcome: ProbeOutcome::Error,
        findings: Vec::new(),
        output: String::new(),
        error_message: Some(message),
        trajectory: None,
        wall_ms: None,
    }
}

fn graded_record(
    probe: &Probe,
    outcome: &TrialOutcome,
    verdict: ProbeVerdict,
    canaries: &Canaries,
) -> ProbeOutcomeRecord {
    let trajectory = outcome
        .trajectory
        .as_ref()
        .and_then(|t| redacted_trajectory(t, canaries));
    let errors: Vec<String> = outcome.errors.iter().map(|e| e.message.clone()).collect();
    ProbeOutcomeRecord {
        probe: probe.id.clone(),
        group: probe.group,
        owasp: probe.owasp.clone(),
        outcome: if verdict.passed {
            ProbeOutcome::Passed
        } else {
            ProbeOutcome::Failed
        },
        findings: verdict.findings,
        output: redact(&outcome.final_output, &canaries.list),
        error_message: (!errors.is_empty()).then(|| redact(&errors.join("; "), &canaries.list)),
        trajectory,
        wall_ms: Some(outcome.wall_ms),
    }
}

/// The trajectory as stored: canary values replaced in its JSON text (they are plain
/// alphanumeric strings, so the JSON stays valid).
fn redacted_trajectory(t: &Trajectory, canaries: &Canaries) -> Option<StoredTrajectory> {
    let text = serde_json::to_string(t).ok()?;
    Some(StoredTrajectory {
        format: skillwatch_core::trajectory::SCHEMA_VERSION.to_ascii_lowercase(),
        bytes: redact(&text, &canaries.list).into_bytes(),
    })
}

impl crate::runs::Outcome for ProbeReport {
    fn status(&self) -> crate::store::RunStatus {
        self.run.status
    }
}
