//! `skillwatch probe` through the daemon: the same flags and `skillwatch.toml` settings as the
//! in-process probe, turned into the prober's request by `cmd::probe::request`, queued as a
//! probe job with the client's values of the variables it reads, followed through the
//! daemon's events (the prober's own, shown as in-process), and reported from the history
//! when it ends. Ctrl-C cancels the job (the daemon kills its agents).

use anyhow::{Context, bail};
use skillwatch_daemon::probe::{ProbeEvent, ProbeProgress, ProbeReport, ProbeRequest};
use skillwatch_daemon::store::{ProbeRunId, Store};
use skillwatch_protocol::{ClientEnv, JobKind, JobState, JobTrigger, RunRequest as JobRequest};

use super::link::{Daemon, absolute, ctx};
use super::run_daemon::{absolute_program, follow, latest_event};

/// Queue `request` as a probe job on `daemon`, follow it with `progress`, and return its
/// report as stored.
pub fn probe(
    daemon: &Daemon,
    mut request: ProbeRequest,
    progress: ProbeProgress,
    quiet: bool,
) -> anyhow::Result<ProbeReport> {
    absolute_paths(&mut request)?;
    let mut job = JobRequest::new(
        &request.skill_dir,
        request.harness.kind.as_str(),
        &request.model,
    );
    job.trigger = JobTrigger::Manual;
    job.kind = JobKind::Probe;
    job.runner = Some(serde_json::to_value(&request)?);
    let env = ClientEnv::capture(request.harness.host_vars().iter().map(String::as_str));
    let db = daemon.call(daemon.rpc.status(ctx()))?.db;
    let cursor = latest_event(daemon)?;
    let queued = daemon.call(daemon.rpc.enqueue_client_run(ctx(), job, env))??;
    if !quiet {
        errln!(
            "queued as job {} on the skillwatch daemon (`skillwatch cancel {}` to stop it)",
            queued.id,
            queued.id
        );
    }
    let finished = follow(daemon, queued.id, cursor, |event| {
        let event: ProbeEvent =
            serde_json::from_value(event).context("reading a progress event of the daemon")?;
        progress(&event);
        Ok(())
    })?;
    let (Some(run), JobState::Completed | JobState::Cancelled) =
        (finished.probe_run, finished.state)
    else {
        bail!(
            "job {} {}: {}",
            finished.id,
            finished.state,
            finished.error.as_deref().unwrap_or("no probe run was made")
        );
    };
    let store = Store::open_existing(&db)?;
    ProbeReport::load(&store, ProbeRunId(run))?.with_context(|| {
        format!(
            "probe run {run} of job {} is not in {}",
            finished.id,
            db.display()
        )
    })
}

/// The daemon works in its own directory: the skill and the harness program must reach it
/// absolute.
fn absolute_paths(r: &mut ProbeRequest) -> anyhow::Result<()> {
    r.skill_dir = absolute(&r.skill_dir)
        .canonicalize()
        .with_context(|| format!("{}: expected a skill folder", r.skill_dir.display()))?;
    absolute_program(&mut r.harness);
    Ok(())
}
