//! A probe job: the security probe suite of `skillwatch probe`, run by the daemon's queue.
//!
//! The prober's request comes whole from the client (`RunRequest::runner`), built from its
//! flags and `skillwatch.toml` exactly as an in-process `skillwatch probe` builds it, so both
//! paths probe alike. Its agents read the client's values of the variables it names. Progress
//! events carry the prober's own events (`ProbeEvent`), so a client shows a probe job as the
//! in-process run shows itself.
//!
//! A probe run is not resumed: a job the daemon stopped (drain) or lost (crash) starts a new
//! probe run when it runs again (probes are short, and the half run stays in the history as
//! cancelled or interrupted).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use skillwatch_core::plural::count;
use skillwatch_protocol::{JobInfo, JobProgress};

use super::{JobContext, Outcome, Reporter, SharedStore};
use crate::harness::HostEnv;
use crate::probe::{ProbeEvent, ProbeProgress, ProbeRequest, Prober};
use crate::store::{ProbeOutcome, RunStatus};

/// Run `job`'s probe suite to its end.
pub(super) async fn run(store: &SharedStore, job: JobInfo, ctx: JobContext) -> Outcome {
    let request = match probe_request(&job) {
        Ok(r) => r,
        Err(error) => return Outcome::Failed { run: None, error },
    };
    let client = ctx.client_env.clone().unwrap_or_default();
    let prober = Prober::new(store.clone()).with_host_env(HostEnv::current().with_client(&client));
    let plan = match prober.plan(&request).await {
        Ok(p) => p.draining_on(ctx.drain.clone()),
        Err(e) => {
            return Outcome::Failed {
                run: None,
                error: e.to_string(),
            };
        }
    };
    let report = plan
        .execute(progress_sink(ctx.report.clone()), ctx.cancel.clone())
        .await;
    let run = ctx.report.probe_run();
    match report {
        Ok(report) => match report.run.status {
            RunStatus::Completed => Outcome::Completed {
                run: report.run.id.0,
            },
            RunStatus::Cancelled | RunStatus::Interrupted => Outcome::Stopped {
                run: Some(report.run.id.0),
            },
            other => Outcome::Failed {
                run: Some(report.run.id.0),
                error: format!("the probe run ended {other}"),
            },
        },
        Err(e) => Outcome::Failed {
            run,
            error: e.to_string(),
        },
    }
}

/// The prober's request the client sent, with the job's folder (absolute, checked at enqueue).
pub fn probe_request(job: &JobInfo) -> Result<ProbeRequest, String> {
    let value = job.request.runner.clone().ok_or_else(|| {
        "a probe job: expected the prober's request (`runner`), found none".to_owned()
    })?;
    let mut request: ProbeRequest = serde_json::from_value(value)
        .map_err(|e| format!("the job's probe request is not one this daemon understands: {e}"))?;
    request.skill_dir = job.request.skill_dir.clone();
    Ok(request)
}

/// The prober's events as job progress (done / total in probes), each carrying the event.
fn progress_sink(report: Reporter) -> ProbeProgress {
    let done = Arc::new(AtomicU32::new(0));
    let total = Arc::new(AtomicU32::new(0));
    Arc::new(move |event: &ProbeEvent| {
        let json = serde_json::to_value(event).ok();
        let message = match event {
            ProbeEvent::Started { run, probes, .. } => {
                report.probe_run_started(run.0);
                total.store(*probes as u32, Ordering::SeqCst);
                format!("probe run {run}: {} planned", count(*probes, "probe"))
            }
            ProbeEvent::ProbeStarted { probe } => {
                let now = JobProgress {
                    done: done.load(Ordering::SeqCst),
                    total: total.load(Ordering::SeqCst),
                    reused: 0,
                };
                if let Some(json) = json {
                    report.note(now, format!("{probe} started"), json);
                }
                return;
            }
            ProbeEvent::ProbeFinished { probe, outcome, .. } => {
                done.fetch_add(1, Ordering::SeqCst);
                let word = match outcome {
                    ProbeOutcome::Passed => "passed",
                    ProbeOutcome::Failed => "failed",
                    ProbeOutcome::Error => "error",
                };
                format!("{probe} {word}")
            }
        };
        let now = JobProgress {
            done: done.load(Ordering::SeqCst),
            total: total.load(Ordering::SeqCst),
            reused: 0,
        };
        report.progress(now, message, json);
    })
}
