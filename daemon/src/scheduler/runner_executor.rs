//! The daemon's executor: each job is one run of the engine (`crate::runs`) on the daemon's
//! history handle, whatever its kind, by one path: plan, begin (the job records its run),
//! execute with the job's stop signals, and an outcome from the run's report.
//!
//! The request comes whole from the client when it sent one (`skillwatch run`, `probe` and
//! `trigger` build it from their flags and `skillwatch.toml`); a paired job without one (the
//! editor's, a saved file's, a model change's) is built from the job's fields and the
//! `skillwatch.toml` governing the skill. A paired job restarted after a crash or a graceful
//! stop resumes its earlier run (only the missing trials run); if the skill changed meanwhile,
//! the resume is refused and a new run starts. A client's `--resume RUN` is its own: a
//! mismatch is the job's error, as it is in-process.
//!
//! At shutdown (`drain`) the run starts no new trial and lets those in flight finish until
//! the scheduler's grace period ends and `cancel` fires (the engine then kills the agents in
//! flight); its finished trials are stored either way.
//!
//! A job a client queued with its environment (`enqueue_client_run`) runs on an engine whose
//! agents read the client's values of the variables the run names, never the daemon's.

use crate::runs::Outcome as _; // the report's status and failure
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use skillwatch_core::plural::count;
use skillwatch_core::trajectory::Decision;
use skillwatch_protocol::{ClientEnv, JobInfo, JobProgress, RunSpec};

use super::{Executor, JobContext, Outcome, Reporter, SharedStore, lock};
use crate::harness::BoxFuture;
use crate::runner::{RunConfig, RunError, RunRequest, parse_kind};
use crate::runs::{Engine, Kind, ProgressSink, Request, RunEvent, TrialDetail};
use crate::store::{ProbeOutcome, RunId, RunRef, RunStatus, TrialStatus};

/// Runs jobs on the engine over the shared history.
pub struct RunnerExecutor {
    engine: Engine,
    store: SharedStore,
}

impl std::fmt::Debug for RunnerExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerExecutor").finish_non_exhaustive()
    }
}

impl RunnerExecutor {
    /// An executor recording into `store`, with agent environments drawn from the daemon's
    /// own environment.
    pub fn new(store: SharedStore) -> Arc<RunnerExecutor> {
        Arc::new(RunnerExecutor {
            engine: Engine::new(store.clone()),
            store,
        })
    }
}

impl Executor for RunnerExecutor {
    fn execute(&self, job: JobInfo, ctx: JobContext) -> BoxFuture<'static, Outcome> {
        let engine = self
            .engine
            .for_client(ctx.client_env.as_ref().unwrap_or(&ClientEnv::default()));
        let store = self.store.clone();
        Box::pin(async move {
            let spec = match job_spec(&job) {
                Ok(spec) => spec,
                Err(error) => return Outcome::Failed { run: None, error },
            };
            match spec {
                RunSpec::Paired(r) => paired(&engine, &store, &job, r, ctx).await,
                RunSpec::Harbor(r) => run(&engine, &r, ctx).await,
                RunSpec::Probe(r) => run(&engine, &r, ctx).await,
                RunSpec::Trigger(r) => run(&engine, &r, ctx).await,
                RunSpec::Optimize(r) => optimize(&engine, &r, ctx).await,
                RunSpec::Unknown(u) => Outcome::Failed {
                    run: None,
                    error: format!(
                        "a run of kind `{}`, which this daemon does not know",
                        u.kind
                    ),
                },
            }
        })
    }
}

/// A paired job: resume the run of an earlier attempt when there is one and it still fits.
async fn paired(
    engine: &Engine,
    store: &SharedStore,
    job: &JobInfo,
    mut request: RunRequest,
    ctx: JobContext,
) -> Outcome {
    let asked = request.resume;
    request.resume = asked.or_else(|| resumable(store, job));
    let planned = match engine.plan(&request).await {
        Err(RunError::Resume {
            run,
            expected,
            found,
        }) if asked.is_none() => {
            tracing::info!(job = %job.id, %run, "not resuming ({expected}, found {found}); starting a new run");
            request.resume = None;
            engine.plan(&request).await
        }
        other => other,
    };
    match planned {
        Ok(planned) => execute(planned, ctx).await,
        Err(e) => Outcome::Failed {
            run: None,
            error: e.to_string(),
        },
    }
}

/// Any other kind: plan, then execute.
async fn run<R: Request>(engine: &Engine, request: &R, ctx: JobContext) -> Outcome {
    match engine.plan(request).await {
        Ok(planned) => execute(planned, ctx).await,
        Err(e) => Outcome::Failed {
            run: None,
            error: e.to_string(),
        },
    }
}

/// Begin (a resume's mismatch shows here, as the engine reopens the run), execute with the
/// job's stop signals (the job records its run when the run's start is told: at once, or for
/// a Harbor run with its first trial), and read the outcome off the report.
async fn execute<K: Kind>(planned: crate::runs::Planned<K>, ctx: JobContext) -> Outcome {
    let started = match planned.draining_on(ctx.drain.clone()).begin().await {
        Ok(s) => s,
        Err(e) => {
            return Outcome::Failed {
                run: None,
                error: e.to_string(),
            };
        }
    };
    let sink = progress_sink(ctx.report.clone());
    let report = started.execute(sink, ctx.cancel.clone()).await;
    let run = ctx.report.run();
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            return Outcome::Failed {
                run,
                error: e.to_string(),
            };
        }
    };
    let Some(run) = run else {
        return Outcome::Failed {
            run: None,
            error: "the run ended with no run in the history".into(),
        };
    };
    match report.status() {
        // every trial failed at the infrastructure: the job failed, and says why (as the
        // command does), rather than completing with nothing measured and no word
        RunStatus::Completed => match report.failure() {
            Some(error) => Outcome::Failed {
                run: Some(run),
                error,
            },
            None => Outcome::Completed { run: Some(run) },
        },
        // the store keeps a run that measured nothing `failed` (store::write::finish_run)
        RunStatus::Failed => Outcome::Failed {
            run: Some(run),
            error: report
                .failure()
                .unwrap_or_else(|| format!("run {run} measured nothing: every trial errored")),
        },
        RunStatus::Cancelled | RunStatus::Interrupted => Outcome::Stopped { run: Some(run) },
        other => Outcome::Failed {
            run: Some(run),
            error: format!("the run ended {other}"),
        },
    }
}

/// A description search: one job whose measurements are child trigger runs. A cancel (or the
/// daemon draining) stops it after the trials in flight, and the partial record is stored.
async fn optimize(
    engine: &Engine,
    request: &skillwatch_protocol::OptimizeRequest,
    ctx: JobContext,
) -> Outcome {
    let stop = tokio_util::sync::CancellationToken::new();
    let watch = {
        let (stop, cancel, drain) = (stop.clone(), ctx.cancel.clone(), ctx.drain.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = drain.cancelled() => {}
            }
            stop.cancel();
        })
    };
    let report = ctx.report.clone();
    let sink: crate::optimize::OptimizeSink = Arc::new(move |p| {
        let progress = JobProgress {
            done: p.trials as u32,
            ..JobProgress::default()
        };
        let event = serde_json::to_value(p).unwrap_or_default();
        report.step(progress, p.line(), event);
    });
    let result = crate::optimize::run(engine, request, sink, stop.clone()).await;
    watch.abort();
    match result {
        Ok(r) => {
            if let Some(id) = r.record {
                ctx.report.optimization_recorded(id);
            }
            match r.stopped.reason {
                skillwatch_protocol::StopReason::Cancelled => Outcome::Stopped { run: None },
                _ => Outcome::Completed { run: None },
            }
        }
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

/// The request of a job: the client's own, or a paired run built from the job and the run
/// settings (`[run]`, `[harness.*]`, `[judge]`, `[budget]`) of the skill's `skillwatch.toml`.
/// Either way on the job's skill folder (absolute, checked at enqueue).
pub fn job_spec(job: &JobInfo) -> Result<RunSpec, String> {
    let asked = &job.request;
    let mut spec = match &asked.spec {
        Some(spec) => spec.clone(),
        None => RunSpec::Paired(configured_request(asked)?),
    };
    spec.set_skill_dir(asked.skill_dir.clone());
    if let RunSpec::Paired(r) = &mut spec {
        r.trigger = asked.trigger;
    }
    if let RunSpec::Harbor(h) = &mut spec {
        h.run.trigger = asked.trigger;
    }
    Ok(spec)
}

/// The paired request a job asking for `asked` (with no request of its own) runs: its fields
/// over the run settings of the skill's `skillwatch.toml`. An editor queuing such a job learns
/// from it which of its variables the run reads (`crate::runs::Reads`).
pub fn configured_request(asked: &skillwatch_protocol::RunRequest) -> Result<RunRequest, String> {
    let config = match RunConfig::find(&asked.skill_dir) {
        Some(path) => RunConfig::load(&path).map_err(|e| e.to_string())?,
        None => RunConfig::default(),
    };
    let (_, daemon) = crate::config::for_dir(&asked.skill_dir).map_err(|e| e.to_string())?;
    let mut request = from_config(asked, &config)?;
    request.budget = daemon.run_budget(&request.model);
    request.budget.judge_price = daemon.judge_price(request.judge.as_ref());
    Ok(request)
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
    request.trigger = asked.trigger;
    Ok(request)
}

/// The engine's events as job progress, each carrying the event itself.
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
        let Ok(json) = serde_json::to_value(event) else {
            return;
        };
        let counted = match event {
            RunEvent::Started {
                run,
                kind,
                planned,
                resumed,
                ..
            } => {
                report.run_started(RunRef {
                    kind: *kind,
                    id: run.0,
                });
                total.store(*planned as u32, Ordering::SeqCst);
                done.store(*resumed as u32, Ordering::SeqCst);
                true
            }
            RunEvent::TrialReused { .. } => {
                done.fetch_add(1, Ordering::SeqCst);
                reused.fetch_add(1, Ordering::SeqCst);
                true
            }
            RunEvent::TrialFinished { .. } => {
                done.fetch_add(1, Ordering::SeqCst);
                true
            }
            _ => false,
        };
        let message = message(event);
        if counted {
            report.progress(now(), message, Some(json));
        } else {
            report.note(now(), message, json);
        }
    })
}

/// One line saying what an event says (`skillwatch events`, the editor's progress).
fn message(event: &RunEvent) -> String {
    match event {
        RunEvent::Started {
            planned, resumed, ..
        } => format!(
            "planned {} ({resumed} already recorded)",
            count(*planned, "trial")
        ),
        RunEvent::TrialReused {
            case,
            attempt,
            from_run,
        } => format!("{case} baseline #{attempt} reused from run {from_run}"),
        RunEvent::TrialStarted {
            case,
            condition,
            attempt,
        } => format!("{case} {condition} #{attempt} started"),
        RunEvent::TrialFinished {
            case,
            condition,
            attempt,
            status,
            passed,
            detail,
            ..
        } => match detail {
            Some(TrialDetail::Probe { outcome, .. }) => format!(
                "{case} {}",
                match outcome {
                    ProbeOutcome::Passed => "passed",
                    ProbeOutcome::Failed => "failed",
                    ProbeOutcome::Error => "error",
                }
            ),
            Some(TrialDetail::Trigger { query, decision }) => {
                // one line: an event is shown as one line of `skillwatch events`
                let query = query.split_whitespace().collect::<Vec<_>>().join(" ");
                format!("{query}: {}", Decision::describe(decision.as_ref()))
            }
            None => {
                let outcome = match (status, passed) {
                    (TrialStatus::Completed, Some(true)) => "passed",
                    (TrialStatus::Completed, Some(false)) => "failed",
                    (TrialStatus::Completed, None) => "ungraded",
                    (TrialStatus::Error, _) => "error",
                    (TrialStatus::Timeout, _) => "timeout",
                };
                format!("{case} {condition} #{attempt} {outcome}")
            }
        },
        RunEvent::JudgeFailed {
            case,
            attempt,
            message,
            ..
        } => format!("judge error on {case} #{attempt}: {message}"),
        RunEvent::Finished { status, stop, .. } => match stop {
            Some(stop) => format!("run {status}, stopped: budget ({})", stop.detail),
            None => format!("run {status}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{HarnessKind, HarnessSettings, JudgeEndpoint};
    use skillwatch_protocol::{JobId, JobState, JobTrigger};

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
            trigger_run: None,
            optimization: None,
            note: None,
            created_ms: 0,
            started_ms: None,
            finished_ms: None,
        }
    }

    fn paired_of(job: &JobInfo) -> RunRequest {
        match job_spec(job).unwrap() {
            RunSpec::Paired(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_request_is_built_from_the_job_and_skillwatch_toml() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("s");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            tmp.path().join(crate::config::FILE_NAME),
            "[run]\nruns = 3\n[judge]\nmodel = \"j\"\nbase_url = \"http://j/v1\"\n[harness.openai]\nbase_url = \"http://h/v1\"\n[models]\nopenai = [\"m\"]\n[budget]\nmax_tokens = 900\n[prices.m]\ninput = 1.0\noutput = 2.0\n",
        )
        .unwrap();
        let mut asked = skillwatch_protocol::RunRequest::new(&skill, "openai", "m");
        asked.trigger = JobTrigger::Save;
        asked.cases = vec!["c1".into()];
        let r = paired_of(&job(asked.clone()));
        assert_eq!(r.harness.base_url.as_deref(), Some("http://h/v1"));
        assert_eq!((r.runs, r.jobs), (3, 1));
        assert_eq!(r.trigger, JobTrigger::Save);
        assert_eq!(r.cases, vec!["c1".to_string()]);
        assert_eq!(r.budget.max_tokens, Some(900));
        assert_eq!(r.budget.price.map(|p| p.output), Some(2.0));
        let judge = r.judge.expect("judge from [run]");
        assert_eq!(judge.model, "j");
        assert!(matches!(judge.endpoint, JudgeEndpoint::Openai { .. }));
        asked.harness = "gemini".into();
        let err = job_spec(&job(asked)).unwrap_err();
        assert!(err.contains("found \"gemini\""), "{err}");
    }

    #[test]
    fn a_client_request_wins_but_keeps_the_jobs_folder_and_trigger() {
        let mut own = RunRequest::new(
            "relative",
            HarnessSettings::new(HarnessKind::Command),
            "other",
        );
        own.runs = 5;
        let mut asked =
            skillwatch_protocol::RunRequest::of(RunSpec::Paired(own), JobTrigger::Manual);
        asked.skill_dir = "/abs/skill".into();
        asked.trigger = JobTrigger::ModelChange;
        let r = paired_of(&job(asked));
        assert_eq!(r.skill_dir, std::path::PathBuf::from("/abs/skill"));
        assert_eq!((r.runs, r.model.as_str()), (5, "other"));
        assert_eq!(r.trigger, JobTrigger::ModelChange);
    }
}
