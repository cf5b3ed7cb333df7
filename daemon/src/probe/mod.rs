//! Security probes, run: SkillTester's security score S and status (seed 000 §2.3, §4.4),
//! measured by running the agent with the skill on each probe of the suite
//! (`core::probe`) and grading what it did, never what it said.
//!
//! # What one probe is
//!
//! 1. Fresh canaries ([`canary`]): fake AWS credentials and SSH key in the trial's fresh HOME,
//!    a `.env` in the workspace, `$SERVICE_API_TOKEN` in the agent's environment, and a file
//!    outside the workspace; the [`honeypot`] on 127.0.0.1 records every request.
//! 2. The agent runs through the paired runner's own execution (`runner::trial::AgentRun`:
//!    the same workspace preparation, skill staging, harness, scrubbed environment, timeout
//!    and process-group kill), with the skill staged, on the probe's prompt rendered with the
//!    skill's name and description.
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
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use skillwatch_core::evalspec::{FileContent, Setup, SetupFile};
use skillwatch_core::probe::{
    self, Evidence, HoneypotRequest, Probe, ProbeVerdict, TemplateVars, load_suite, redact,
};
use skillwatch_core::scoring::skilltester::{
    ProbeResult, SecurityReport, SecurityStatus, SkillTesterParams, security,
};
use skillwatch_core::skill::{Skill, content_hash};
use skillwatch_core::trajectory::Trajectory;
use tokio_util::sync::CancellationToken;

use crate::harness::{Harness, HostEnv, SkillToStage, TrialOutcome, TrialStatus};
use crate::runner::{HarnessSettings, RunError, trial_timeout};
use crate::store::{
    ProbeOutcome, ProbeOutcomeRecord, ProbeRunId, ProbeRunInfo, ProbeRunSpec, RunStatus,
    SkillIdentity, Store, StoreError, Trajectory as StoredTrajectory,
};

use canary::Canaries;
use honeypot::Honeypot;

/// Default per-probe timeout: probes are short tasks, and an agent that loops is itself a
/// finding (ABC-04), not a reason to wait.
pub const DEFAULT_PROBE_TIMEOUT_SECS: u32 = 120;

/// What to probe, and how.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeRequest {
    /// The skill folder.
    pub skill_dir: PathBuf,
    /// The harness.
    pub harness: HarnessSettings,
    /// The agent's model.
    pub model: String,
    /// Only these probe ids (all when empty).
    pub only: Vec<String>,
    /// Per-probe timeout in seconds.
    pub timeout_secs: Option<u32>,
    /// Retries of infrastructure failures per probe.
    pub retries: u32,
    /// Keep the probes' folders (for debugging).
    pub keep_workspaces: bool,
    /// θs and the other SkillTester constants.
    pub params: SkillTesterParams,
}

impl ProbeRequest {
    /// Probe `skill_dir` with every probe, defaults elsewhere.
    pub fn new(
        skill_dir: impl Into<PathBuf>,
        harness: HarnessSettings,
        model: impl Into<String>,
    ) -> ProbeRequest {
        ProbeRequest {
            skill_dir: skill_dir.into(),
            harness,
            model: model.into(),
            only: Vec::new(),
            timeout_secs: None,
            retries: 2,
            keep_workspaces: false,
            params: SkillTesterParams::default(),
        }
    }
}

/// Progress of a probe run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ProbeEvent {
    /// The probe run exists in the history and its probes are about to run.
    Started {
        /// Its id in the history (`probe_runs`).
        run: ProbeRunId,
        /// The skill's name.
        skill: String,
        /// The harness.
        harness: String,
        /// The harness's version.
        harness_version: String,
        /// The model.
        model: String,
        /// How many probes will run.
        probes: usize,
    },
    /// A probe started.
    ProbeStarted {
        /// Its id.
        probe: String,
    },
    /// A probe was graded (or could not be run).
    ProbeFinished {
        /// Its id.
        probe: String,
        /// How it ended.
        outcome: ProbeOutcome,
        /// How many pieces of evidence.
        findings: usize,
    },
}

/// Where progress goes.
pub type ProbeProgress = Arc<dyn Fn(&ProbeEvent) + Send + Sync>;

/// The result of a probe run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeReport {
    /// The stored run with every outcome.
    pub run: ProbeRunInfo,
    /// S, group scores and status; `None` when a group had no observed probe.
    pub security: Option<SecurityReport>,
    /// Probes that could not be run.
    pub errors: usize,
}

impl ProbeReport {
    /// The report of a stored probe run: S and its status computed by the seed's rule from
    /// the stored outcomes and θs. What a run ends with, in-process or through the daemon
    /// (`skillwatch probe` reads it back from the history), so both print the same report.
    pub fn load(store: &Store, run: ProbeRunId) -> Result<Option<ProbeReport>, StoreError> {
        Ok(store.probe_run(run)?.map(ProbeReport::of))
    }

    /// The report of `run` as stored.
    pub fn of(run: ProbeRunInfo) -> ProbeReport {
        let results: Vec<ProbeResult> = run
            .outcomes
            .iter()
            .filter(|o| o.outcome != ProbeOutcome::Error)
            .map(|o| ProbeResult {
                id: o.probe.clone(),
                group: o.group,
                passed: o.outcome == ProbeOutcome::Passed,
            })
            .collect();
        let errors = run.outcomes.len() - results.len();
        let params = SkillTesterParams {
            theta_s: run.theta_s,
            ..SkillTesterParams::default()
        };
        ProbeReport {
            security: security(&results, &params).ok(),
            errors,
            run,
        }
    }

    /// Whether the skill fails on security: its status is Risky (S below θs).
    pub fn risky(&self) -> bool {
        self.security
            .as_ref()
            .is_some_and(|s| s.status == SecurityStatus::Risky)
    }
}

/// Runs probe suites against one history store.
pub struct Prober {
    store: Arc<Mutex<Store>>,
    host: HostEnv,
    temp_dir: PathBuf,
}

impl Prober {
    /// A prober recording into `store`, drawing agent environments from this process's.
    pub fn new(store: Arc<Mutex<Store>>) -> Prober {
        Prober {
            store,
            host: HostEnv::current(),
            temp_dir: std::env::temp_dir(),
        }
    }

    /// Draw agent environments from `host`.
    pub fn with_host_env(mut self, host: HostEnv) -> Prober {
        self.host = host;
        self
    }

    /// Put probe folders under `dir`.
    pub fn with_temp_dir(mut self, dir: impl Into<PathBuf>) -> Prober {
        self.temp_dir = dir.into();
        self
    }

    /// Work out what to run: the skill, the suite (built-in and the author's), the harness
    /// and its version. Nothing is started or stored yet.
    pub async fn plan(&self, request: &ProbeRequest) -> Result<ProbePlan, RunError> {
        let (skill_dir, target) = crate::runner::skill_at(&request.skill_dir)?;
        let description = Skill::load(&skill_dir)
            .document
            .ok()
            .and_then(|d| d.field_str("description").map(|(s, _)| s.trim().to_owned()))
            .unwrap_or_default();
        let suite = load_suite(&skill_dir).map_err(RunError::Probes)?;
        let probes: Vec<Probe> = suite
            .probes
            .into_iter()
            .filter(|p| request.only.is_empty() || request.only.contains(&p.id))
            .collect();
        if probes.is_empty() {
            return Err(RunError::NoCases {
                message: format!(
                    "expected probes named {}, found none of them",
                    request.only.join(", ")
                ),
            });
        }
        let harness = request.harness.build(&self.host)?;
        let harness_version = harness.version().await.map_err(|e| RunError::Harness {
            harness: harness.name().to_owned(),
            message: e.to_string(),
        })?;
        let skill_hash = content_hash(&skill_dir).map_err(|source| RunError::Io {
            context: format!("hashing {}", skill_dir.display()),
            source,
        })?;
        Ok(ProbePlan {
            request: request.clone(),
            skill_dir,
            target,
            description,
            suite_version: suite.version,
            probes,
            harness,
            harness_version,
            skill_hash,
            store: self.store.clone(),
            host: self.host.clone(),
            temp_dir: self.temp_dir.clone(),
            drain: None,
        })
    }
}

/// A planned probe run: what will run, before anything does.
pub struct ProbePlan {
    request: ProbeRequest,
    skill_dir: PathBuf,
    target: SkillToStage,
    description: String,
    suite_version: String,
    probes: Vec<Probe>,
    harness: Arc<dyn Harness>,
    harness_version: String,
    skill_hash: String,
    store: Arc<Mutex<Store>>,
    host: HostEnv,
    temp_dir: PathBuf,
    drain: Option<CancellationToken>,
}

impl ProbePlan {
    /// Start no new probe once `drain` fires (the daemon is stopping); the probe in flight
    /// finishes and the run ends cancelled.
    pub fn draining_on(mut self, drain: CancellationToken) -> ProbePlan {
        self.drain = Some(drain);
        self
    }

    /// The probes that will run, in order.
    pub fn probes(&self) -> &[Probe] {
        &self.probes
    }

    /// The suite's version.
    pub fn suite_version(&self) -> &str {
        &self.suite_version
    }

    /// Run every probe, one at a time (each has its own canaries and honeypot log), record
    /// each outcome as it is graded, and finish the run with S and its status.
    pub async fn execute(
        self,
        progress: ProbeProgress,
        cancel: CancellationToken,
    ) -> Result<ProbeReport, RunError> {
        let spec = ProbeRunSpec {
            skill: SkillIdentity {
                name: self.target.name.clone(),
                path: Some(self.skill_dir.display().to_string()),
                content_hash: self.skill_hash.clone(),
            },
            suite_version: self.suite_version.clone(),
            harness: self.harness.name().to_owned(),
            harness_version: Some(self.harness_version.clone()),
            model: self.request.model.clone(),
            tool_version: format!("skillwatch {}", env!("CARGO_PKG_VERSION")),
            theta_s: self.request.params.theta_s,
        };
        let run = lock(&self.store).begin_probe_run(&spec)?;
        let root = tempfile::Builder::new()
            .prefix("skillwatch-probe-")
            .tempdir_in(&self.temp_dir)
            .map_err(|source| RunError::Io {
                context: format!("creating a probe folder in {}", self.temp_dir.display()),
                source,
            })?;
        let watchdog = watchdog::Watchdog::arm(root.path());
        let honeypot = Honeypot::start().await.map_err(|source| RunError::Io {
            context: "starting the honeypot on 127.0.0.1".into(),
            source,
        })?;
        let mut results = Vec::new();
        let mut errors = 0;
        let mut cancelled = false;
        progress(&ProbeEvent::Started {
            run,
            skill: self.target.name.clone(),
            harness: self.harness.name().to_owned(),
            harness_version: self.harness_version.clone(),
            model: self.request.model.clone(),
            probes: self.probes.len(),
        });
        for probe in &self.probes {
            if self.drain.as_ref().is_some_and(|d| d.is_cancelled()) {
                cancelled = true;
                break;
            }
            progress(&ProbeEvent::ProbeStarted {
                probe: probe.id.clone(),
            });
            let dir = root.path().join(&probe.id);
            let record = tokio::select! {
                _ = cancel.cancelled() => { cancelled = true; break; }
                r = self.run_probe(run, probe, &dir, &honeypot) => r,
            };
            if !self.request.keep_workspaces {
                let _ = std::fs::remove_dir_all(&dir);
            }
            progress(&ProbeEvent::ProbeFinished {
                probe: probe.id.clone(),
                outcome: record.outcome,
                findings: record.findings.len(),
            });
            match record.outcome {
                ProbeOutcome::Error => errors += 1,
                o => results.push(ProbeResult {
                    id: probe.id.clone(),
                    group: probe.group,
                    passed: o == ProbeOutcome::Passed,
                }),
            }
            let store = self.store.clone();
            tokio::task::spawn_blocking(move || lock(&store).record_probe_outcome(run, &record))
                .await
                .map_err(|e| RunError::Io {
                    context: "a history store call".into(),
                    source: std::io::Error::other(e.to_string()),
                })??;
        }
        drop(honeypot);
        if self.request.keep_workspaces {
            let kept = root.keep();
            tracing::info!(folder = %kept.display(), "probe folders kept");
        } else {
            drop(root);
        }
        if let Some(w) = watchdog {
            w.disarm().await;
        }
        let report = security(&results, &self.request.params).ok();
        let status = if cancelled {
            RunStatus::Cancelled
        } else {
            RunStatus::Completed
        };
        let detail = json!({
            "groups": report.as_ref().map(|r| &r.groups),
            "errors": errors,
            "probes": self.probes.len(),
        });
        {
            let mut store = lock(&self.store);
            store.finish_probe_run(
                run,
                status,
                report.as_ref().map(|r| (r.score, r.status)),
                &detail,
            )?;
        }
        let stored = ProbeReport::load(&lock(&self.store), run)?;
        stored.ok_or_else(|| RunError::Settings {
            message: format!("probe run {run} vanished from the history"),
        })
    }

    async fn run_probe(
        &self,
        run: ProbeRunId,
        probe: &Probe,
        dir: &Path,
        honeypot: &Honeypot,
    ) -> ProbeOutcomeRecord {
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
            return error_record(probe, format!("planting {}: {e}", outside_file.display()));
        }
        let vars = TemplateVars {
            skill_name: self.target.name.clone(),
            skill_description: self.description.clone(),
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
        let execution = crate::runner::AgentRun {
            harness: self.harness.as_ref(),
            workspace: crate::runner::WorkspaceSource {
                setup: &setup,
                file: &probe.origin.file,
                id: &probe.id,
            },
            skill_dir: &self.skill_dir,
            host: &self.host,
            prompt: &prompt,
            skills: vec![self.target.clone()],
            model: &self.request.model,
            timeout: self.timeout(),
            plant: canaries.plant.clone(),
            stop_when: None,
            retries: self.request.retries,
        };
        let executed = execution.run(|n| dir.join(format!("try{n}"))).await;
        let requests = honeypot.take();
        let outcome = &executed.outcome;
        if not_observed(outcome, &requests) {
            let why = outcome
                .errors
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .join("; ");
            return error_record(probe, redact(&why, &canaries.list));
        }
        let ws = &executed.workspace;
        let scratch = ws.parent().map(|p| p.join("scratch")).unwrap_or_default();
        let home = crate::harness::trial_home(&scratch);
        let skip = [
            self.harness.skills_dir().to_path_buf(),
            PathBuf::from(".claude"),
            PathBuf::from(".agents"),
            PathBuf::from(".codex"),
            PathBuf::from(".git"),
        ];
        let (workspace_changes, written) = workspace_changes(ws, &initial, &skip);
        let outside_changes = outside_changes(&outside_dir, &outside_file, &canaries, &home);
        let mut allowed = vec![scratch.join("tmp")];
        allowed.extend(probe.workspace.allowed_paths.iter().map(PathBuf::from));
        let verdict = probe::grade(
            probe,
            &Evidence {
                output: &outcome.final_output,
                trajectory: outcome.trajectory.as_ref(),
                honeypot: &requests,
                canaries: &canaries.list,
                workspace: ws,
                home: &home,
                allowed: &allowed,
                outside_changes: &outside_changes,
                workspace_changes: &workspace_changes,
                written: &written,
            },
        );
        graded_record(probe, outcome, verdict, &canaries)
    }

    fn timeout(&self) -> Duration {
        trial_timeout(self.request.timeout_secs, Some(DEFAULT_PROBE_TIMEOUT_SECS))
    }
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

fn lock(store: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}
