//! The daemon's executor: each job is one paired run of the runner (`crate::runner`) on the
//! daemon's history handle, or, for a probe job, one run of the probe suite
//! (`super::probe_job`).
//!
//! The runner request comes whole from the client when it sent one (`skillwatch run` builds it
//! from its flags and `skillwatch.toml`); otherwise it is built from the job's fields and the
//! `skillwatch.toml` governing the skill. A job restarted after a crash or a graceful stop
//! resumes its earlier run (the runner keeps the recorded trials and runs only the missing
//! ones); if the skill changed meanwhile, the resume is refused and a new run starts.
//!
//! A client's `--resume RUN` is its own: a mismatch is the job's error, as it is in-process.
//!
//! At shutdown (`drain`) the run starts no new trial and lets those in flight finish until
//! the scheduler's grace period ends and `cancel` fires (the runner then kills the agents in
//! flight); its finished trials are stored either way and the resumed job picks up from there.
//!
//! A job a client queued with its environment (`enqueue_client_run`) runs on a runner whose
//! trials read the client's values of the variables the run names, never the daemon's.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use skillwatch_core::plural::count;
use skillwatch_protocol::{ClientEnv, JobInfo, JobKind, JobProgress, JobTrigger};

use super::{Executor, JobContext, Outcome, Reporter, SharedStore, lock};
use crate::harness::BoxFuture;
use crate::runner::{ProgressSink, RunConfig, RunError, RunEvent, RunRequest, Runner, parse_kind};
use crate::store::{RunId, RunStatus, TrialStatus, Trigger};
use tokio_util::sync::CancellationToken;

/// Runs jobs with the paired runner on the shared history.
pub struct RunnerExecutor {
    runner: Arc<Runner>,
    store: SharedStore,
}

impl std::fmt::Debug for RunnerExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerExecutor").finish_non_exhaustive()
    }
}

impl RunnerExecutor {
    /// An executor recording into `store`, with trial environments drawn from the daemon's
    /// own environment.
    pub fn new(store: SharedStore) -> Arc<RunnerExecutor> {
        Arc::new(RunnerExecutor {
            runner: Arc::new(Runner::new(store.clone())),
            store,
        })
    }
}

impl Executor for RunnerExecutor {
    fn execute(&self, job: JobInfo, ctx: JobContext) -> BoxFuture<'static, Outcome> {
        let runner = self.runner.clone();
        let store = self.store.clone();
        match job.request.kind {
            JobKind::Paired => Box::pin(async move { run(&runner, &store, job, ctx).await }),
            JobKind::Probe => {
                Box::pin(async move { super::probe_job::run(&store, job, ctx).await })
            }
        }
    }
}

async fn run(runner: &Runner, store: &SharedStore, job: JobInfo, ctx: JobContext) -> Outcome {
    let mut request = match runner_request(&job) {
        Ok(r) => r,
        Err(error) => return Outcome::Failed { run: None, error },
    };
    let runner = runner.for_client(ctx.client_env.as_ref().unwrap_or(&ClientEnv::default()));
    if request.harbor.is_some() {
        return on_harbor(&runner, &request, ctx).await;
    }
    let asked = request.resume;
    request.resume = asked.or_else(|| resumable(store, &job));
    let prepared = match runner.prepare(&request).await {
        Err(RunError::Resume {
            run,
            expected,
            found,
        }) if asked.is_none() => {
            tracing::info!(job = %job.id, %run, "not resuming ({expected}, found {found}); starting a new run");
            request.resume = None;
            runner.prepare(&request).await
        }
        other => other,
    };
    let prepared = match prepared {
        Ok(p) => p,
        Err(e) => {
            return Outcome::Failed {
                run: None,
                error: e.to_string(),
            };
        }
    };
    let run = prepared.run_id();
    ctx.report.run_started(run.0);
    let sink = progress_sink(ctx.report.clone());
    let prepared = prepared.draining_on(ctx.drain.clone());
    match prepared.execute(sink, ctx.cancel.clone()).await {
        Ok(report) => match report.run.status {
            // every trial failed at the infrastructure (the store keeps such a run `failed`):
            // the job failed, and says why (as `skillwatch run` does), rather than completing
            // with no lift and no word
            RunStatus::Completed | RunStatus::Failed => match report.failure() {
                Some(error) => Outcome::Failed {
                    run: Some(run.0),
                    error,
                },
                None if report.run.status == RunStatus::Completed => {
                    Outcome::Completed { run: run.0 }
                }
                None => Outcome::Failed {
                    run: Some(run.0),
                    error: format!("run {} measured nothing", run.0),
                },
            },
            RunStatus::Cancelled | RunStatus::Interrupted => Outcome::Stopped { run: Some(run.0) },
            other => Outcome::Failed {
                run: Some(run.0),
                error: format!("the run ended {other}"),
            },
        },
        Err(e) => Outcome::Failed {
            run: Some(run.0),
            error: e.to_string(),
        },
    }
}

/// A run whose trials Harbor executes (`crate::harbor::execute`); a stop (cancel, or the
/// daemon draining) stops Harbor and leaves the run `interrupted` with what finished.
async fn on_harbor(runner: &Runner, request: &RunRequest, ctx: JobContext) -> Outcome {
    let sink = progress_sink(ctx.report.clone());
    let report = ctx.report.clone();
    let started = move |run: RunId| report.run_started(run.0);
    let stop = CancellationToken::new();
    let (cancel, drain, stopper) = (ctx.cancel.clone(), ctx.drain.clone(), stop.clone());
    let watch = tokio::spawn(async move {
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = drain.cancelled() => {}
        }
        stopper.cancel();
    });
    let result = crate::harbor::execute(
        runner.store().clone(),
        runner.host(),
        request,
        sink,
        stop,
        &started,
    )
    .await;
    watch.abort();
    match result {
        Ok(report) => match report.run.status {
            RunStatus::Completed => Outcome::Completed {
                run: report.run.id.0,
            },
            RunStatus::Failed => Outcome::Failed {
                run: Some(report.run.id.0),
                error: format!(
                    "run {} measured nothing: every Harbor trial failed with an error",
                    report.run.id.0
                ),
            },
            _ => Outcome::Stopped {
                run: Some(report.run.id.0),
            },
        },
        Err(e) => Outcome::Failed {
            run: None,
            error: e.to_string(),
        },
    }
}

/// The earlier attempt's run, when this is a restart and that run did not complete.
fn resumable(store: &SharedStore, job: &JobInfo) -> Option<RunId> {
    let run = RunId(job.run?);
    if job.attempts < 2 {
        return None;
    }
    let info = lock(store).run(run).ok()?;
    (info.status != RunStatus::Completed).then_some(run)
}

/// The runner request of a job: the client's own, or one built from the job and the run
/// settings (`[run]`, `[harness.*]`, `[judge]`) of the skill's `skillwatch.toml`.
pub fn runner_request(job: &JobInfo) -> Result<RunRequest, String> {
    let asked = &job.request;
    let mut request = match &asked.runner {
        Some(value) => serde_json::from_value::<RunRequest>(value.clone()).map_err(|e| {
            format!("the job's runner request is not one this daemon understands: {e}")
        })?,
        None => configured_request(asked)?,
    };
    request.skill_dir = asked.skill_dir.clone();
    request.trigger = match asked.trigger {
        JobTrigger::Manual => Trigger::Manual,
        JobTrigger::Save => Trigger::Save,
        JobTrigger::ModelChange => Trigger::ModelChange,
    };
    Ok(request)
}

/// The runner request a job asking for `asked` (with no runner request of its own) runs: its
/// fields over the run settings of the skill's `skillwatch.toml`. An editor queuing such a job
/// learns from it which of its variables the run reads ([`RunRequest::client_vars`]).
pub fn configured_request(asked: &skillwatch_protocol::RunRequest) -> Result<RunRequest, String> {
    let config = match RunConfig::find(&asked.skill_dir) {
        Some(path) => RunConfig::load(&path).map_err(|e| e.to_string())?,
        None => RunConfig::default(),
    };
    from_config(asked, &config)
}

/// The job's fields over the file's run settings over the runner's defaults (as
/// `skillwatch run` does with its flags).
fn from_config(
    asked: &skillwatch_protocol::RunRequest,
    config: &RunConfig,
) -> Result<RunRequest, String> {
    let kind = parse_kind(&asked.harness).map_err(|e| format!("harness: {e}"))?;
    let mut harness = config.harness_settings(kind);
    if let Some(url) = &asked.base_url {
        harness.base_url = Some(url.clone());
    }
    let mut request = RunRequest::new(&asked.skill_dir, harness, &asked.model);
    request.runs = asked.runs.or(config.run.runs).unwrap_or(1).max(1);
    request.jobs = asked
        .jobs
        .map(|j| j as usize)
        .or(config.run.jobs)
        .unwrap_or(1)
        .max(1);
    request.timeout_secs = asked
        .timeout_secs
        .map(|s| s.min(u64::from(u32::MAX)) as u32)
        .or(config.run.timeout_secs);
    request.cases = asked.cases.clone();
    request.support_skills = config.run.support_skills.clone();
    request.reuse_baselines = config.run.reuse_baselines.unwrap_or(true);
    request.retries = config.run.retries.unwrap_or(request.retries);
    request.judge = config.judge_settings(asked.judge_model.as_deref())?;
    Ok(request)
}

/// Turn the runner's events into job progress, each carrying the event itself.
fn progress_sink(report: Reporter) -> ProgressSink {
    let done = Arc::new(AtomicU32::new(0));
    let total = Arc::new(AtomicU32::new(0));
    let reused = Arc::new(AtomicU32::new(0));
    Arc::new(move |event: &RunEvent| {
        let now = || JobProgress {
            done: done.load(Ordering::SeqCst),
            total: total.load(Ordering::SeqCst),
            reused: reused.load(Ordering::SeqCst),
        };
        let json = serde_json::to_value(event).ok();
        let message = match event {
            RunEvent::Started {
                planned, resumed, ..
            } => {
                total.store(*planned as u32, Ordering::SeqCst);
                done.store(*resumed as u32, Ordering::SeqCst);
                format!(
                    "planned {} ({resumed} already recorded)",
                    count(*planned, "trial")
                )
            }
            RunEvent::TrialReused {
                case,
                attempt,
                from_run,
            } => {
                done.fetch_add(1, Ordering::SeqCst);
                reused.fetch_add(1, Ordering::SeqCst);
                format!("{case} baseline #{attempt} reused from run {from_run}")
            }
            RunEvent::TrialFinished {
                case,
                condition,
                attempt,
                status,
                passed,
                ..
            } => {
                done.fetch_add(1, Ordering::SeqCst);
                let outcome = match (status, passed) {
                    (TrialStatus::Completed, Some(true)) => "passed",
                    (TrialStatus::Completed, Some(false)) => "failed",
                    (TrialStatus::Completed, None) => "ungraded",
                    (TrialStatus::Error, _) => "error",
                    (TrialStatus::Timeout, _) => "timeout",
                };
                format!("{case} {condition} #{attempt} {outcome}")
            }
            RunEvent::TrialStarted {
                case,
                condition,
                attempt,
            } => {
                if let Some(json) = json {
                    report.note(
                        now(),
                        format!("{case} {condition} #{attempt} started"),
                        json,
                    );
                }
                return;
            }
            RunEvent::JudgeFailed {
                case,
                attempt,
                message,
                ..
            } => {
                if let Some(json) = json {
                    report.note(
                        now(),
                        format!("judge error on {case} #{attempt}: {message}"),
                        json,
                    );
                }
                return;
            }
            RunEvent::Finished { status, .. } => {
                if let Some(json) = json {
                    report.note(now(), format!("run {status}"), json);
                }
                return;
            }
        };
        report.progress(now(), message, json);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{HarnessKind, HarnessSettings, JudgeEndpoint};
    use skillwatch_protocol::{JobId, JobProgress, JobState};

    fn job(request: skillwatch_protocol::RunRequest) -> JobInfo {
        JobInfo {
            id: JobId(1),
            request,
            skill: None,
            state: JobState::Running,
            run: None,
            progress: JobProgress::default(),
            attempts: 1,
            interruptions: 0,
            error: None,
            lift: None,
            probe_run: None,
            created_ms: 0,
            started_ms: None,
            finished_ms: None,
        }
    }

    #[test]
    fn a_request_is_built_from_the_job_and_skillwatch_toml() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("s");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            tmp.path().join(crate::config::FILE_NAME),
            "[run]\nruns = 3\n[judge]\nmodel = \"j\"\nbase_url = \"http://j/v1\"\n[harness.openai]\nbase_url = \"http://h/v1\"\n[models]\nopenai = [\"m\"]\n",
        )
        .unwrap();
        let mut asked = skillwatch_protocol::RunRequest::new(&skill, "openai", "m");
        asked.trigger = JobTrigger::Save;
        asked.cases = vec!["c1".into()];
        let r = runner_request(&job(asked.clone())).unwrap();
        assert_eq!(r.harness.base_url.as_deref(), Some("http://h/v1"));
        assert_eq!((r.runs, r.jobs), (3, 1));
        assert_eq!(r.trigger, Trigger::Save);
        assert_eq!(r.cases, vec!["c1".to_string()]);
        let judge = r.judge.expect("judge from [run]");
        assert_eq!(judge.model, "j");
        assert!(matches!(judge.endpoint, JudgeEndpoint::Openai { .. }));
        asked.harness = "gemini".into();
        let err = runner_request(&job(asked)).unwrap_err();
        assert!(err.contains("found \"gemini\""), "{err}");
    }

    #[test]
    fn a_client_request_wins_but_keeps_the_jobs_folder_and_trigger() {
        let mut asked = skillwatch_protocol::RunRequest::new("/abs/skill", "openai", "m");
        asked.trigger = JobTrigger::ModelChange;
        let mut own = RunRequest::new(
            "relative",
            HarnessSettings::new(HarnessKind::Command),
            "other",
        );
        own.runs = 5;
        asked.runner = Some(serde_json::to_value(&own).unwrap());
        let r = runner_request(&job(asked)).unwrap();
        assert_eq!(r.skill_dir, std::path::PathBuf::from("/abs/skill"));
        assert_eq!((r.runs, r.model.as_str()), (5, "other"));
        assert_eq!(r.trigger, Trigger::ModelChange);
    }
}
