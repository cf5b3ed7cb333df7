//! `skillwatch run --on harbor`: a run whose trials Harbor executes. The suite is planned by
//! the same seam as a local run (`runner::plan_suite`), exported (`export_suite`), and the job
//! started with the real `harbor` in its own process group; while it runs, its job folder is
//! read every second and each newly finished trial is imported (`read_job`, the same mapping
//! and grading as `skillwatch import harbor`) and reported as a runner event, so the progress
//! bar, the daemon's job progress and the final report are those of a local run. A crash or a
//! stop loses nothing Harbor finished: the job folder stays, and importing it again (or
//! resuming it with `harbor jobs resume`) adds only what is new.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use skillwatch_core::harbor::{ArmRule, JOB_CONFIG, Layout, SKILLED_SUFFIX};
use tokio_util::sync::CancellationToken;

use super::{ExportOptions, ImportOptions, JobImport, export_suite, read_job, write_export};
use crate::harness::HostEnv;
use crate::runner::{
    HarnessKind, ProgressSink, RunError, RunEvent, RunReport, RunRequest, TrialTally, plan_suite,
};
use crate::store::{Condition, RunId, Store};

/// The job's name inside its folder (`<dir>/jobs/<JOB_NAME>`).
const JOB_NAME: &str = "job";

/// How often the job folder is read while Harbor runs.
const POLL: Duration = Duration::from_secs(1);

/// How long Harbor gets to cancel its trials and remove their containers after SIGINT.
const STOP_GRACE: Duration = Duration::from_secs(60);

/// Variables Harbor and the tools it drives read (Docker, remote backends' credentials, a
/// custom agent's module path): a run through the daemon takes them from the client.
pub const HARBOR_VARS: &[&str] = &[
    "PATH",
    "DOCKER_CONFIG",
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "PYTHONPATH",
    "LITELLM_LOCAL_MODEL_COST_MAP",
    "DAYTONA_API_KEY",
    "DAYTONA_API_URL",
    "MODAL_TOKEN_ID",
    "MODAL_TOKEN_SECRET",
    "E2B_API_KEY",
    "RUNLOOP_API_KEY",
    "GCP_PROJECT",
    "KUBECONFIG",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_PROFILE",
];

/// Where and how a run's trials go to Harbor (`RunRequest::harbor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarborTarget {
    /// The `harbor` executable.
    pub program: PathBuf,
    /// Harbor's environment type (`-e`): docker, daytona, modal, e2b, ...
    pub env: String,
    /// Harbor's agent (`-a`); `None`: the harness's own name (claude-code, codex).
    #[serde(default)]
    pub agent: Option<String>,
    /// The image the tasks build `FROM` (for a remote backend, one in a registry).
    pub base_image: String,
    /// `network_mode: host`, so a model served on the host's 127.0.0.1 is reachable.
    #[serde(default)]
    pub host_network: bool,
    /// Folder for the export and the job; `None`: `harbor/<skill>-<time>` beside the history.
    #[serde(default)]
    pub dir: Option<PathBuf>,
}

impl HarborTarget {
    /// Harbor's `-a` for a run on `kind`.
    pub fn agent_for(&self, kind: HarnessKind) -> Result<String, RunError> {
        if let Some(a) = &self.agent {
            return Ok(a.clone());
        }
        match kind {
            HarnessKind::ClaudeCode | HarnessKind::Codex => Ok(kind.as_str().to_owned()),
            other => Err(RunError::Settings {
                message: format!(
                    "harness {} has no Harbor agent of that name: expected --harbor-agent (claude-code, codex, opencode, gemini-cli, ..., or module:Class)",
                    other.as_str()
                ),
            }),
        }
    }
}

/// The model as Harbor names it (`provider/model`): a bare name gets the harness's provider.
pub fn harbor_model(kind: HarnessKind, model: &str) -> String {
    if model.contains('/') {
        return model.to_owned();
    }
    match kind {
        HarnessKind::ClaudeCode => format!("anthropic/{model}"),
        HarnessKind::Codex | HarnessKind::Openai | HarnessKind::CopilotCli => {
            format!("openai/{model}")
        }
        HarnessKind::GeminiCli => format!("gemini/{model}"),
        HarnessKind::Command | HarnessKind::Opencode => model.to_owned(),
    }
}

/// Run `request` (whose `harbor` is set) on Harbor: export, start the job, import its trials
/// as they finish, and report the run as a local run is reported. `started` hears the run's id
/// once the first trial is stored. Cancelling stops Harbor (SIGINT, then SIGKILL after a grace
/// period) and ends the run `interrupted` with what finished.
pub async fn execute(
    store: Arc<Mutex<Store>>,
    host: &HostEnv,
    request: &RunRequest,
    progress: ProgressSink,
    cancel: CancellationToken,
    started: &(dyn Fn(RunId) + Send + Sync),
) -> Result<RunReport, RunError> {
    let clock = Instant::now();
    let target = request.harbor.as_ref().ok_or_else(|| RunError::Settings {
        message: "expected a Harbor target in the request, found none".into(),
    })?;
    let kind = request.harness.kind;
    let agent = target.agent_for(kind)?;
    let plan = plan_suite(&request.skill_dir, &request.cases)?;
    let opts = ExportOptions {
        support: request.support_skills.clone(),
        agent: agent.clone(),
        model: Some(harbor_model(kind, &request.model)),
        attempts: request.runs,
        timeout_secs: request.timeout_secs,
        base_image: target.base_image.clone(),
        host_network: target.host_network,
        agent_env: Vec::new(),
        layout: None,
    };
    let exported = export_suite(&plan, &opts)?;
    let dir = match &target.dir {
        Some(d) => d.clone(),
        None => default_dir(lock(&store).path(), &plan.target.name),
    };
    write_export(&dir, &exported)?;
    let arm_from = match exported.layout {
        Layout::AgentSkills => ArmRule::AgentSkills,
        Layout::Baked => ArmRule::TaskSuffix(SKILLED_SUFFIX.into()),
    };
    let mut follower = Follower {
        job_dir: dir.join("jobs").join(JOB_NAME),
        opts: ImportOptions {
            skill: Some(plan.target.name.clone()),
            arm_from,
        },
        store: store.clone(),
        progress: progress.clone(),
        planned: plan.cases.len() * 2 * request.runs as usize,
        cases: plan.cases.len(),
        run: None,
        ran: 0,
        attempts: BTreeMap::new(),
        damaged: BTreeSet::new(),
    };
    let log = dir.join("harbor.log");
    let mut child = spawn(target, request, host, &dir, &log)?;
    let mut tick = tokio::time::interval(POLL);
    let exit = loop {
        tokio::select! {
            status = child.wait() => break Some(status.map_err(|source| RunError::Io {
                context: format!("waiting for {}", target.program.display()),
                source,
            })?),
            _ = cancel.cancelled() => {
                stop(&mut child).await;
                break None;
            }
            _ = tick.tick() => {
                follower.poll(started).await?;
            }
        }
    };
    let last = follower.poll(started).await?;
    let Some(run) = follower.run else {
        let why = match (&exit, last) {
            (_, Some(e)) => e,
            (Some(s), None) => format!("harbor exited ({s}) before any trial finished"),
            (None, None) => "stopped before any trial finished".into(),
        };
        return Err(RunError::Harness {
            harness: "harbor".into(),
            message: format!("{why}; its log: {}\n{}", log.display(), tail(&log)),
        });
    };
    for d in &follower.damaged {
        tracing::warn!("harbor trial not imported: {d}");
    }
    let tally = TrialTally {
        planned: follower.planned,
        ran: follower.ran,
        ..TrialTally::default()
    };
    let wall_ms = clock.elapsed().as_millis() as u64;
    let report = {
        let store = store.clone();
        tokio::task::spawn_blocking(move || RunReport::load(&lock(&store), run, tally, wall_ms))
            .await
            .map_err(|e| RunError::Io {
                context: "loading the run's report".into(),
                source: std::io::Error::other(e.to_string()),
            })??
    };
    if let Some(status) = exit.filter(|s| !s.success()) {
        tracing::warn!(
            "harbor exited {status} (log: {}); the trials it finished are imported",
            log.display()
        );
    }
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

/// `harbor/<skill>-<epoch ms>` in the folder of the history at `history`.
pub fn default_dir(history: &Path, skill: &str) -> PathBuf {
    let base = history
        .parent()
        .map_or_else(std::env::temp_dir, Path::to_path_buf);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    base.join("harbor").join(format!("{skill}-{now}"))
}

/// Start `harbor run` on the exported job, its output in `log`. Its environment is `host` (the
/// client's, through the daemon) with the harness's endpoint and key under the names Harbor's
/// agents read.
fn spawn(
    target: &HarborTarget,
    request: &RunRequest,
    host: &HostEnv,
    dir: &Path,
    log: &Path,
) -> Result<tokio::process::Child, RunError> {
    let io = |context: String| move |source| RunError::Io { context, source };
    let out = std::fs::File::create(log).map_err(io(format!("creating {}", log.display())))?;
    let err = out
        .try_clone()
        .map_err(io(format!("opening {}", log.display())))?;
    let mut cmd = tokio::process::Command::new(&target.program);
    cmd.args([
        "run",
        "-c",
        JOB_CONFIG,
        "-o",
        "jobs",
        "--job-name",
        JOB_NAME,
        "-y",
    ])
    .args(["-e", &target.env, "-n", &request.jobs.max(1).to_string()])
    .current_dir(dir)
    .env_clear()
    .envs(host.vars())
    .envs(harness_env(request, host))
    .stdin(Stdio::null())
    .stdout(out)
    .stderr(err)
    .process_group(0)
    .kill_on_drop(true);
    if host.get("LITELLM_LOCAL_MODEL_COST_MAP").is_none() {
        // else every run first tries to download LiteLLM's price list
        cmd.env("LITELLM_LOCAL_MODEL_COST_MAP", "True");
    }
    cmd.spawn().map_err(io(format!(
        "starting {} (Harbor: pip install harbor, or --harbor PATH)",
        target.program.display()
    )))
}

/// The harness's base URL and key under the variables Harbor's agent reads.
fn harness_env(request: &RunRequest, host: &HostEnv) -> Vec<(String, String)> {
    let h = &request.harness;
    let (url_var, key_var) = match h.kind {
        HarnessKind::ClaudeCode => ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
        HarnessKind::Codex | HarnessKind::Openai | HarnessKind::Opencode => {
            ("OPENAI_BASE_URL", "OPENAI_API_KEY")
        }
        HarnessKind::GeminiCli => ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"),
        HarnessKind::CopilotCli => ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_API_KEY"),
        HarnessKind::Command => return Vec::new(),
    };
    let mut env = Vec::new();
    if let Some(url) = &h.base_url {
        env.push((url_var.to_owned(), url.clone()));
    }
    if let Some(key) = h.api_key(host) {
        env.push((key_var.to_owned(), key));
    }
    env
}

/// SIGINT to Harbor's group (it cancels its trials and removes their containers), SIGKILL
/// after [`STOP_GRACE`].
async fn stop(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id() {
        // SAFETY: killpg has no memory effects; ESRCH (group gone) is fine.
        unsafe {
            libc::killpg(pid as libc::pid_t, libc::SIGINT);
        }
        if tokio::time::timeout(STOP_GRACE, child.wait()).await.is_ok() {
            return;
        }
        // SAFETY: as above.
        unsafe {
            libc::killpg(pid as libc::pid_t, libc::SIGKILL);
        }
    }
    let _ = child.wait().await;
}

/// The last lines of Harbor's log, for an error message.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// The job folder as it fills: what was imported, and the run it went to.
struct Follower {
    job_dir: PathBuf,
    opts: ImportOptions,
    store: Arc<Mutex<Store>>,
    progress: ProgressSink,
    planned: usize,
    cases: usize,
    run: Option<RunId>,
    ran: usize,
    /// Next attempt number per case and condition, as the import numbers them.
    attempts: BTreeMap<(String, Condition), u32>,
    damaged: BTreeSet<String>,
}

impl Follower {
    /// Import what finished since the last look and report it; `Some(why)` when the folder
    /// is not (yet) a job.
    async fn poll(
        &mut self,
        started: &(dyn Fn(RunId) + Send + Sync),
    ) -> Result<Option<String>, RunError> {
        let (dir, opts, store) = (self.job_dir.clone(), self.opts.clone(), self.store.clone());
        let read = tokio::task::spawn_blocking(move || -> Result<_, RunError> {
            if !dir.is_dir() {
                return Ok(Err(format!("{}: no job folder yet", dir.display())));
            }
            let stored = |id: &str| lock(&store).has_external_trial(id).unwrap_or(false);
            let mut job: JobImport = match read_job(&dir, &opts, &stored) {
                Ok(j) => j,
                Err(e) => return Ok(Err(e.to_string())),
            };
            for run in &mut job.runs {
                run.spec.config["harbor"]["job_dir"] = dir.display().to_string().into();
            }
            let reports = lock(&store).import_external(&job.runs)?;
            Ok(Ok((job, reports)))
        })
        .await
        .map_err(|e| RunError::Io {
            context: "reading the Harbor job".into(),
            source: std::io::Error::other(e.to_string()),
        })??;
        let (job, reports) = match read {
            Ok(x) => x,
            Err(why) => return Ok(Some(why)),
        };
        self.damaged.extend(job.damaged.iter().cloned());
        for (run, report) in job.runs.iter().zip(&reports) {
            if self.run.is_none() {
                self.run = Some(report.run);
                started(report.run);
                (self.progress)(&RunEvent::Started {
                    run: report.run,
                    skill: run.spec.skill.name.clone(),
                    harness: run.spec.harness.clone(),
                    harness_version: run.spec.harness_version.clone().unwrap_or_default(),
                    model: run.spec.model.clone(),
                    cases: self.cases,
                    planned: self.planned,
                    reused: 0,
                    resumed: report.already,
                });
            }
            if Some(report.run) != self.run {
                continue;
            }
            for (_, t) in &run.trials {
                self.ran += 1;
                let n = self
                    .attempts
                    .entry((t.case.clone(), t.condition))
                    .or_default();
                let attempt = *n;
                *n += 1;
                (self.progress)(&RunEvent::TrialFinished {
                    case: t.case.clone(),
                    condition: t.condition,
                    attempt,
                    status: t.status,
                    passed: t.passed,
                    invoked: t.skill_invoked,
                    wall_ms: t.wall_ms.unwrap_or(0),
                    retries: 0,
                    error: t.error_message.clone(),
                });
            }
        }
        Ok(None)
    }
}

fn lock(store: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    store
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_get_the_harness_provider_unless_they_name_one() {
        assert_eq!(
            harbor_model(HarnessKind::ClaudeCode, "claude-sonnet-4-5"),
            "anthropic/claude-sonnet-4-5"
        );
        assert_eq!(harbor_model(HarnessKind::Codex, "gpt-5"), "openai/gpt-5");
        assert_eq!(
            harbor_model(HarnessKind::ClaudeCode, "bedrock/claude"),
            "bedrock/claude"
        );
    }

    #[test]
    fn the_agent_is_the_harness_unless_named() {
        let mut t = HarborTarget {
            program: "harbor".into(),
            env: "docker".into(),
            agent: None,
            base_image: "debian:bookworm-slim".into(),
            host_network: false,
            dir: None,
        };
        assert_eq!(t.agent_for(HarnessKind::Codex).unwrap(), "codex");
        let err = t.agent_for(HarnessKind::Openai).unwrap_err().to_string();
        assert!(err.contains("--harbor-agent"), "{err}");
        t.agent = Some("opencode".into());
        assert_eq!(t.agent_for(HarnessKind::Openai).unwrap(), "opencode");
    }
}
