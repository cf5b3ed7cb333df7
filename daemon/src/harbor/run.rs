//! `skillwatch run --on harbor`: a paired run whose trials Harbor executes; one kind of run on
//! the engine ([`crate::runs`]), whose trials an outside runner starts. The suite is planned by
//! the same seam as a local run (`runner::plan_suite`), exported (`export_suite`), and the job
//! started with the real `harbor` in its own process group; while it runs, its job folder is
//! read every second and each newly finished trial is imported (`read_job`, the same mapping
//! and grading as `skillwatch import harbor`) and handed to the engine, which tells it as a
//! runner event and counts what it spent, so the progress, the daemon's job progress, the
//! budget and the final report are those of a local run. A crash or a stop loses nothing
//! Harbor finished: the job folder stays, and importing it again (or resuming it with
//! `harbor jobs resume`) adds only what is new. Harbor starts its trials itself: when the
//! budget (or a cancel, or the daemon draining) stops the run, Harbor is stopped, and trials it
//! had in flight end with it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use skillwatch_core::harbor::{ArmRule, JOB_CONFIG, Layout, SKILLED_SUFFIX};
use skillwatch_core::trajectory::TokenUsage;
use skillwatch_protocol::{Budget, HarborRun, HarborTarget};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{ExportOptions, ImportOptions, JobImport, export_suite, read_job, write_export};
use crate::harness::{BoxFuture, HostEnv};
use crate::runner::{
    HarnessKind, RunError, RunReport, RunRequest, SuitePlan, TrialTally, plan_suite,
};
use crate::runs::{Begun, Ctx, Ending, Engine, Kind, Outside, Recorded, Request, RunEvent, lock};
use crate::store::{
    Condition, Row, RunEnd, RunId, RunKind, RunRef, RunStatus, Spend, Store, StoreError,
    TrialRecord,
};

/// The job's name inside its folder (`<dir>/jobs/<JOB_NAME>`).
const JOB_NAME: &str = "job";

/// How often the job folder is read while Harbor runs.
const POLL: Duration = Duration::from_secs(1);

/// How long Harbor gets to cancel its trials and remove their containers after SIGINT.
const STOP_GRACE: Duration = Duration::from_secs(60);

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
) -> Result<tokio::process::Child, String> {
    let out = std::fs::File::create(log).map_err(|e| format!("creating {}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("opening {}: {e}", log.display()))?;
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
    // SAFETY: the hook only calls signal(2), which is async-signal-safe.
    unsafe {
        cmd.pre_exec(sigint_at_default);
    }
    if host.get("LITELLM_LOCAL_MODEL_COST_MAP").is_none() {
        // else every run first tries to download LiteLLM's price list
        cmd.env("LITELLM_LOCAL_MODEL_COST_MAP", "True");
    }
    cmd.spawn().map_err(|e| {
        format!(
            "starting {} (Harbor: pip install harbor, or --harbor PATH): {e}",
            target.program.display()
        )
    })
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
    if let Some(key) = crate::harness::settings::api_key(h, host) {
        env.push((key_var.to_owned(), key));
    }
    env
}

/// [`stop`] asks Harbor to stop with SIGINT, which Python turns into KeyboardInterrupt only if
/// SIGINT was not ignored when it started. A process a non-interactive shell starts in the
/// background (`skillwatch run ... &` in a CI script) starts with SIGINT ignored and passes that
/// on through exec, so Harbor would ignore the stop, run its job whole, and be killed after
/// [`STOP_GRACE`] with its containers left behind. Run in the child between fork and exec
/// (`pre_exec`); public for the tests that start `harbor` themselves and stop it the same way.
pub fn sigint_at_default() -> std::io::Result<()> {
    // SAFETY: signal(2) is async-signal-safe and only changes this process's disposition.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
    Ok(())
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

/// A trial Harbor finished, as imported.
pub struct HarborDone {
    /// The run it was imported into.
    run: RunId,
    /// The run's start, told with its first trial.
    started: Option<RunEvent>,
    /// What finished.
    finished: RunEvent,
    /// What its agent used.
    tokens: TokenUsage,
}

/// The job folder as it fills: what was imported, and the run it went to.
struct Follower {
    job_dir: PathBuf,
    opts: ImportOptions,
    store: Arc<Mutex<Store>>,
    finished: mpsc::UnboundedSender<HarborDone>,
    planned: usize,
    cases: usize,
    run: Option<RunId>,
    /// Next attempt number per case and condition, as the import numbers them.
    attempts: BTreeMap<(String, Condition), u32>,
    damaged: BTreeSet<String>,
}

impl Follower {
    /// Import what finished since the last look and hand it on; `Some(why)` when the folder
    /// is not (yet) a job.
    async fn poll(&mut self) -> Result<Option<String>, RunError> {
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
            let mut started = None;
            if self.run.is_none() {
                self.run = Some(report.run);
                started = Some(RunEvent::Started {
                    run: report.run,
                    kind: RunKind::Paired,
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
                let done = self.done(report.run, started.take(), t);
                let _ = self.finished.send(done);
            }
        }
        Ok(None)
    }

    fn done(&mut self, run: RunId, started: Option<RunEvent>, t: &TrialRecord) -> HarborDone {
        let n = self
            .attempts
            .entry((t.case.clone(), t.condition))
            .or_default();
        let attempt = *n;
        *n += 1;
        HarborDone {
            run,
            started,
            finished: RunEvent::TrialFinished {
                case: t.case.clone(),
                condition: t.condition,
                attempt,
                status: t.status,
                passed: t.passed,
                invoked: t.skill_invoked,
                wall_ms: t.wall_ms.unwrap_or(0),
                retries: 0,
                error: t.error_message.clone(),
                detail: None,
            },
            tokens: TokenUsage {
                input: t.tokens.input.unwrap_or(0),
                output: t.tokens.output.unwrap_or(0),
                cached: t.tokens.cached.unwrap_or(0),
            },
        }
    }
}

impl Request for HarborRun {
    type Kind = Harbor;

    /// The suite planned as a local run plans it, exported as Harbor tasks and a two-arm job.
    fn plan<'a>(&'a self, engine: &'a Engine) -> BoxFuture<'a, Result<Harbor, RunError>> {
        Box::pin(async move {
            let request = &self.run;
            let kind = request.harness.kind;
            let agent = self
                .harbor
                .agent_for(kind)
                .map_err(|message| RunError::Settings { message })?;
            let plan = plan_suite(&request.skill_dir, &request.cases)?;
            let mut target = self.harbor.clone();
            if target.dir.is_none() {
                let history = lock(engine.store()).path().to_path_buf();
                target.dir = Some(default_dir(&history, &plan.target.name));
            }
            Ok(Harbor {
                request: request.clone(),
                target,
                agent,
                plan,
                host: engine.host().clone(),
                why: Arc::new(Mutex::new(None)),
            })
        })
    }
}

/// A planned Harbor run.
pub struct Harbor {
    request: RunRequest,
    target: HarborTarget,
    agent: String,
    plan: SuitePlan,
    host: HostEnv,
    /// Why no trial was imported, when none was (said by the follower).
    why: Arc<Mutex<Option<String>>>,
}

impl Harbor {
    /// Trials the finished run holds: cases × conditions × runs.
    pub fn planned(&self) -> usize {
        self.plan.cases.len() * 2 * self.request.runs as usize
    }

    /// Export the suite, start Harbor on it, and import its trials as they finish until it
    /// exits or `stop` fires.
    fn launch(
        &self,
        store: Arc<Mutex<Store>>,
        finished: mpsc::UnboundedSender<HarborDone>,
        stop: CancellationToken,
    ) -> Result<(), RunError> {
        let r = &self.request;
        let opts = ExportOptions {
            support: r.support_skills.clone(),
            agent: self.agent.clone(),
            model: Some(harbor_model(r.harness.kind, &r.model)),
            attempts: r.runs,
            timeout_secs: r.timeout_secs,
            base_image: self.target.base_image.clone(),
            host_network: self.target.host_network,
            agent_env: Vec::new(),
            layout: None,
        };
        let exported = export_suite(&self.plan, &opts)?;
        let dir = self.target.dir.clone().unwrap_or_default();
        write_export(&dir, &exported)?;
        let arm_from = match exported.layout {
            Layout::AgentSkills => ArmRule::AgentSkills,
            Layout::Baked => ArmRule::TaskSuffix(SKILLED_SUFFIX.into()),
        };
        let follower = Follower {
            job_dir: dir.join("jobs").join(JOB_NAME),
            opts: ImportOptions {
                skill: Some(self.plan.target.name.clone()),
                arm_from,
            },
            store,
            finished,
            planned: self.planned(),
            cases: self.plan.cases.len(),
            run: None,
            attempts: BTreeMap::new(),
            damaged: BTreeSet::new(),
        };
        let (target, request, host, why) = (
            self.target.clone(),
            r.clone(),
            self.host.clone(),
            self.why.clone(),
        );
        tokio::spawn(async move {
            let mut follower = follower;
            let said = follow(&mut follower, &target, &request, &host, &dir, stop).await;
            *why.lock().unwrap_or_else(|p| p.into_inner()) = said;
            // the channel closes here, after the reason is in place
            drop(follower);
        });
        Ok(())
    }
}

/// Run Harbor on the exported job in `dir` and import its trials as they finish; why no
/// trial was imported, when none was.
async fn follow(
    follower: &mut Follower,
    target: &HarborTarget,
    request: &RunRequest,
    host: &HostEnv,
    dir: &Path,
    stop: CancellationToken,
) -> Option<String> {
    let log = dir.join("harbor.log");
    let mut child = match spawn(target, request, host, dir, &log) {
        Ok(c) => c,
        Err(why) => return Some(why),
    };
    let mut tick = tokio::time::interval(POLL);
    let exit = loop {
        tokio::select! {
            status = child.wait() => break status.ok(),
            _ = stop.cancelled() => {
                self::stop(&mut child).await;
                break None;
            }
            _ = tick.tick() => {
                if let Err(e) = follower.poll().await {
                    return Some(e.to_string());
                }
            }
        }
    };
    let last = match follower.poll().await {
        Ok(l) => l,
        Err(e) => return Some(e.to_string()),
    };
    for d in &follower.damaged {
        tracing::warn!("harbor trial not imported: {d}");
    }
    if let Some(status) = exit.filter(|s| !s.success()) {
        tracing::warn!(
            "harbor exited {status} (log: {}); the trials it finished are imported",
            log.display()
        );
    }
    if follower.run.is_some() {
        return None;
    }
    let why = match (&exit, last) {
        (_, Some(e)) => e,
        (Some(s), None) => format!("harbor exited ({s}) before any trial finished"),
        (None, None) => "stopped before any trial finished".into(),
    };
    Some(format!("{why}; its log: {}\n{}", log.display(), tail(&log)))
}

impl Kind for Harbor {
    type Trial = ();
    type Done = HarborDone;
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

    /// Nothing in the store yet: the importer begins the run with Harbor's first trial.
    fn begin(&mut self, _store: &mut Store) -> Result<Begun<()>, RunError> {
        Ok(Begun {
            run: None,
            trials: Vec::new(),
            started: None,
            skill: self.plan.target.name.clone(),
        })
    }

    fn outside(&mut self, ctx: &Ctx) -> Result<Option<Outside<HarborDone>>, RunError> {
        let (finished, receiver) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        self.launch(ctx.store.clone(), finished, stop.clone())?;
        Ok(Some(Outside {
            finished: receiver,
            stop,
        }))
    }

    fn start(&self, _: (), _root: &Path) -> BoxFuture<'static, HarborDone> {
        unreachable!("Harbor starts its own trials")
    }

    fn usage(done: &HarborDone) -> TokenUsage {
        done.tokens
    }

    fn row(&mut self, done: &HarborDone, _spend: &Spend) -> Recorded {
        Recorded {
            row: Row::Stored,
            events: done
                .started
                .iter()
                .chain([&done.finished])
                .cloned()
                .collect(),
            run: Some(RunRef::paired(done.run)),
        }
    }

    /// The importer ended the run: completed with the job, else interrupted (to be imported
    /// again once the job is resumed). A run the budget stopped ran to its own end: it is
    /// completed with its stop, as every kind's is.
    fn end(&mut self, store: &mut Store, run: RunRef, end: &RunEnd) -> Result<(), StoreError> {
        let short = end.status == RunStatus::Completed && end.stop.is_some();
        if !short || store.run_status(run)? == Some(RunStatus::Completed) {
            return Ok(());
        }
        store.reopen_run(RunId(run.id))?;
        store.finish(run, end)
    }

    fn never_recorded(&mut self) -> RunError {
        let why = self.why.lock().unwrap_or_else(|p| p.into_inner()).take();
        RunError::Harness {
            harness: "harbor".into(),
            message: why.unwrap_or_else(|| "no trial finished".into()),
        }
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
            ..TrialTally::default()
        };
        Ok(RunReport::load(
            store,
            RunId(run.id),
            tally,
            ending.wall_ms,
        )?)
    }
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
        let err = t.agent_for(HarnessKind::Openai).unwrap_err();
        assert!(err.contains("--harbor-agent"), "{err}");
        t.agent = Some("opencode".into());
        assert_eq!(t.agent_for(HarnessKind::Openai).unwrap(), "opencode");
    }

    /// Whether SIGINT is ignored in a child started by `cmd` (from its /proc status).
    fn child_ignores_sigint(cmd: &mut std::process::Command) -> bool {
        let out = cmd.arg("/proc/self/status").output().unwrap();
        let status = String::from_utf8(out.stdout).unwrap();
        let mask = status
            .lines()
            .find_map(|l| l.strip_prefix("SigIgn:"))
            .map(|m| u64::from_str_radix(m.trim(), 16).unwrap())
            .unwrap();
        mask & (1 << (libc::SIGINT - 1)) != 0
    }

    /// Started from a process that ignores SIGINT (as a background job of a script does),
    /// Harbor still gets the default, so the SIGINT that stops it is not lost.
    #[test]
    fn a_child_ignoring_sigint_by_inheritance_gets_the_default_back() {
        use std::os::unix::process::CommandExt;
        let ignoring = || {
            let mut cmd = std::process::Command::new("cat");
            // SAFETY: signal(2) is async-signal-safe; it stands in for an inherited SIG_IGN.
            unsafe {
                cmd.pre_exec(|| {
                    libc::signal(libc::SIGINT, libc::SIG_IGN);
                    Ok(())
                });
            }
            cmd
        };
        assert!(
            child_ignores_sigint(&mut ignoring()),
            "the control ignores it"
        );
        let mut restored = ignoring();
        // SAFETY: as in `spawn`.
        unsafe {
            restored.pre_exec(sigint_at_default);
        }
        assert!(!child_ignores_sigint(&mut restored));
    }
}
