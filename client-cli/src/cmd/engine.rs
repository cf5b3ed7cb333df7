//! How `run`, `probe` and `trigger` run their request, by one path for every kind: through the
//! daemon for the history `--db` names (started on demand), or in this process with
//! `--no-daemon` or when the running daemon serves another history.
//!
//! Through the daemon, the request is queued as a job with the client's values of the
//! variables it reads (`ClientEnv`: API keys are the client's, never the daemon's), the job is
//! followed through the daemon's events (the engine's own events, shown by the same sink as
//! in-process), and the report is read from the history when it ends; Ctrl-C cancels the job
//! (the daemon kills its agents). In this process, the engine runs it and Ctrl-C cancels it.
//! Either way the report is the one the store holds, so both paths print the same.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use skillwatch_daemon::client;
use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::optimize::{self, OptimizeSink};
use skillwatch_daemon::runner::HarnessSettings;
use skillwatch_daemon::runs::{
    Engine, Kind, ProgressSink, Reads, Request, RunEvent, check_key_vars,
};
use skillwatch_daemon::store::{RunKind, RunRef, Store};
use skillwatch_protocol::{
    ClientEnv, EventKind, JobId, JobInfo, JobKind, JobState, JobTrigger, JudgeEndpoint,
    MAX_EVENT_WAIT_MS, OptimizeProgress, OptimizeReport, OptimizeRequest, RunRequest, RunSpec,
};
use tokio_util::sync::CancellationToken;

use super::history_db::DbArgs;
use super::link::{Daemon, LinkArgs, absolute, ctx, daemon_for};

/// How a run ended, for the command that asked for it.
pub(crate) struct Ran<R> {
    /// Its report, as stored.
    pub report: R,
    /// Through the daemon, the job that ran it.
    pub job: Option<JobInfo>,
}

impl<R> Ran<R> {
    /// The job's error when the daemon says the job failed.
    pub fn job_failure(&self) -> Option<String> {
        let job = self.job.as_ref()?;
        (job.state == JobState::Failed).then(|| {
            format!(
                "job {} failed: {}",
                job.id,
                job.error.as_deref().unwrap_or_default()
            )
        })
    }
}

/// A last look at a request once the history it records into is known.
pub(crate) type Prelude<'a, R> = Box<dyn FnOnce(&Path, &mut R) -> anyhow::Result<()> + 'a>;

/// How a command reads the report of a run a job made from the daemon's history.
pub(crate) type Load<'a, T> = Box<dyn FnOnce(&Store, RunRef, &JobInfo) -> anyhow::Result<T> + 'a>;

/// What a command gives [`execute`] besides its request.
pub(crate) struct Run<'a, R: Request> {
    /// Where the run goes.
    pub link: &'a LinkArgs,
    /// The history.
    pub db: &'a DbArgs,
    /// Where its progress goes.
    pub sink: ProgressSink,
    /// No word about the job on stderr.
    pub quiet: bool,
    /// Once the history the run records into is known, before anything runs: a last look at
    /// the request (`run` prints its design and settles where a Harbor job goes).
    pub prelude: Prelude<'a, R>,
    /// Read the report of the run a job made from the daemon's history.
    pub load: Load<'a, <R::Kind as Kind>::Report>,
}

/// Run `request` (see the module docs).
pub(crate) fn execute<R>(
    mut request: R,
    how: Run<'_, R>,
) -> anyhow::Result<Ran<<R::Kind as Kind>::Report>>
where
    R: Request + Into<RunSpec>,
{
    match daemon_for(how.link, how.db)? {
        Some(daemon) => {
            let db = daemon.call(daemon.rpc.status(ctx()))?.db;
            (how.prelude)(&db, &mut request)?;
            on_daemon(&daemon, &db, request.into(), how.sink, how.quiet, how.load)
        }
        None => {
            (how.prelude)(&how.db.path()?, &mut request)?;
            here(how.db, &request, how.sink)
        }
    }
}

/// In this process, recorded in the history `--db` names.
fn here<R: Request>(
    db: &DbArgs,
    request: &R,
    sink: ProgressSink,
) -> anyhow::Result<Ran<<R::Kind as Kind>::Report>> {
    let store = Arc::new(Mutex::new(db.open_or_create()?));
    let report =
        in_process(|cancel| async move { Engine::new(store).run(request, sink, cancel).await })?;
    Ok(Ran { report, job: None })
}

/// Queue `spec` on `daemon`, follow its job, and read its report from the daemon's history.
fn on_daemon<T>(
    daemon: &Daemon,
    db: &Path,
    spec: RunSpec,
    sink: ProgressSink,
    quiet: bool,
    load: impl FnOnce(&Store, RunRef, &JobInfo) -> anyhow::Result<T>,
) -> anyhow::Result<Ran<T>> {
    let kind = spec.kind();
    let finished = queue_and_follow(daemon, spec, quiet, |event| {
        let event: RunEvent =
            serde_json::from_value(event).context("reading a progress event of the daemon")?;
        sink(&event);
        Ok(())
    })?;
    let run = match (kind, finished.run, finished.probe_run, finished.trigger_run) {
        (JobKind::Paired | JobKind::Harbor, Some(id), ..) => {
            RunRef::paired(skillwatch_protocol::RunId(id))
        }
        (JobKind::Probe, _, Some(id), _) => RunRef {
            kind: RunKind::Probe,
            id,
        },
        (JobKind::Trigger, _, _, Some(id)) => RunRef {
            kind: RunKind::Trigger,
            id,
        },
        _ => bail!(
            "job {} {}: {}",
            finished.id,
            finished.state,
            finished.error.as_deref().unwrap_or("no run was made")
        ),
    };
    let store = Store::open_existing(db)?;
    let report = load(&store, run, &finished)
        .with_context(|| format!("{run} of job {} in {}", finished.id, db.display()))?;
    Ok(Ran {
        report,
        job: Some(finished),
    })
}

/// A description search (`trigger --optimize`), one job of the engine: through the daemon,
/// its report is read from the optimisation record the job stored; in this process (with
/// `--no-daemon`), the same job code runs here and Ctrl-C stops it after the trials in flight.
pub(crate) fn optimize(
    mut request: OptimizeRequest,
    link: &LinkArgs,
    db: &DbArgs,
    sink: OptimizeSink,
    quiet: bool,
) -> anyhow::Result<Ran<OptimizeReport>> {
    let Some(daemon) = daemon_for(link, db)? else {
        let store = Arc::new(Mutex::new(db.open_or_create()?));
        let report = in_process(|stop| async move {
            optimize::run(&Engine::new(store), &request, sink, stop).await
        })?;
        return Ok(Ran { report, job: None });
    };
    let db = daemon.call(daemon.rpc.status(ctx()))?.db;
    request.trigger.record = false;
    let finished = queue_and_follow(&daemon, request.into(), quiet, |event| {
        let p: OptimizeProgress =
            serde_json::from_value(event).context("reading a progress event of the daemon")?;
        sink(&p);
        Ok(())
    })?;
    let Some(id) = finished.optimization else {
        bail!(
            "job {} {}: {}",
            finished.id,
            finished.state,
            finished
                .error
                .as_deref()
                .unwrap_or("no optimisation was recorded")
        );
    };
    let store = Store::open_existing(&db)?;
    let report = store
        .optimization(id)?
        .and_then(|o| o.record.report)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "optimisation {id} of job {}: no report in {}",
                finished.id,
                db.display()
            )
        })?;
    Ok(Ran {
        report,
        job: Some(finished),
    })
}

/// Run `work` on a runtime in this process; Ctrl-C fires the token it is given.
fn in_process<T, F>(work: impl FnOnce(CancellationToken) -> F) -> anyhow::Result<T>
where
    F: std::future::Future<Output = Result<T, skillwatch_daemon::runner::RunError>>,
{
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    Ok(runtime.block_on(async {
        let cancel = CancellationToken::new();
        let on_interrupt = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                errln!("\ninterrupted: stopping the trials in flight…");
                on_interrupt.cancel();
            }
        });
        work(cancel).await
    })?)
}

/// Queue `spec` on `daemon` with the client's values of the variables it reads, and follow
/// its job to its end (each of its progress events to `on_event`): the one way every kind of
/// job is asked of the daemon.
fn queue_and_follow(
    daemon: &Daemon,
    mut spec: RunSpec,
    quiet: bool,
    on_event: impl Fn(serde_json::Value) -> anyhow::Result<()>,
) -> anyhow::Result<JobInfo> {
    absolute_paths(&mut spec)?;
    let env = ClientEnv::capture(spec.client_vars().iter().map(String::as_str));
    if let RunSpec::Paired(r) | RunSpec::Harbor(skillwatch_protocol::HarborRun { run: r, .. }) =
        &spec
    {
        // a named key variable that is unset fails here, as in-process, before any job is
        // queued
        let host = HostEnv::from_pairs(
            env.vars()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        );
        check_key_vars(r.named_key_vars(), &host)?;
    }
    let cursor = latest_event(daemon)?;
    let job = RunRequest::of(spec, JobTrigger::Manual);
    let queued = daemon.call(daemon.rpc.enqueue_client_run(ctx(), job, env))??;
    if !quiet {
        errln!(
            "queued as job {} on the skillwatch daemon (`skillwatch cancel {}` to stop it)",
            queued.id,
            queued.id
        );
    }
    follow(daemon, queued.id, cursor, on_event)
}

/// The sequence number of the daemon's newest event, so following a job starts after it.
pub(crate) fn latest_event(daemon: &Daemon) -> anyhow::Result<u64> {
    let mut cursor = 0;
    loop {
        let batch = daemon.call(daemon.rpc.next_events(ctx(), cursor, 0))?;
        if batch.events.is_empty() {
            return Ok(batch.next);
        }
        cursor = batch.next;
    }
}

/// Follow the job's events until it ends, handing each of its progress events (the engine's
/// own, as JSON) to `on_event`, which shows it as an in-process run does; Ctrl-C cancels it.
/// The one loop every command that follows a job uses.
pub(crate) fn follow(
    daemon: &Daemon,
    job: JobId,
    mut cursor: u64,
    on_event: impl Fn(serde_json::Value) -> anyhow::Result<()>,
) -> anyhow::Result<JobInfo> {
    let interrupted = daemon.runtime.spawn(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    let mut draining = false;
    let cancelled = loop {
        let wait = if draining {
            0
        } else {
            1_000.min(MAX_EVENT_WAIT_MS)
        };
        let call = daemon.rpc.next_events(
            client::context(Duration::from_millis(wait + 10_000)),
            cursor,
            wait,
        );
        let batch = daemon.call(call)?;
        if batch.missed {
            errln!(
                "note: some of the daemon's progress events were missed (it is busy); the report below is complete"
            );
        }
        cursor = batch.next;
        let more = !batch.events.is_empty();
        for event in batch.events {
            if let EventKind::Progress {
                job: j,
                event: Some(event),
                ..
            } = event.kind
                && j == job
            {
                on_event(event)?;
            }
        }
        if draining {
            if more {
                continue;
            }
            break false;
        }
        if interrupted.is_finished() {
            break true;
        }
        // once the job has ended, what is left of its events is read without waiting
        draining = !daemon
            .call(daemon.rpc.run_status(ctx(), job))??
            .state
            .is_live();
    };
    interrupted.abort();
    if cancelled {
        errln!("\ninterrupted: cancelling job {job}…");
        return Ok(daemon.call(daemon.rpc.cancel(ctx(), job))??);
    }
    Ok(daemon.call(daemon.rpc.run_status(ctx(), job))??)
}

/// The daemon works in its own directory: the skill and every path given on the command line
/// must reach it absolute (`.` as the folder's own name, which events and lenses show). A
/// bare program name (`claude`) stays one, for the PATH lookup.
fn absolute_paths(spec: &mut RunSpec) -> anyhow::Result<()> {
    let skill = spec.skill_dir().map(Path::to_path_buf).unwrap_or_default();
    let canonical = absolute(&skill)
        .canonicalize()
        .with_context(|| format!("{}: expected a skill folder", skill.display()))?;
    spec.set_skill_dir(canonical);
    match spec {
        RunSpec::Paired(r) => {
            absolute_program(&mut r.harness);
            r.support_skills = r.support_skills.iter().map(|p| absolute(p)).collect();
        }
        RunSpec::Harbor(h) => {
            absolute_program(&mut h.run.harness);
            h.run.support_skills = h.run.support_skills.iter().map(|p| absolute(p)).collect();
            h.harbor.program = absolute(&h.harbor.program);
            h.harbor.dir = h.harbor.dir.as_deref().map(absolute);
        }
        RunSpec::Probe(r) => absolute_program(&mut r.harness),
        RunSpec::Optimize(o) => {
            absolute_trigger(&mut o.trigger);
            if let JudgeEndpoint::Harness { settings } = &mut o.proposer.endpoint {
                absolute_program(settings);
            }
        }
        RunSpec::Trigger(r) => absolute_trigger(r),
        RunSpec::Unknown(_) => {}
    }
    Ok(())
}

/// A trigger request's paths made absolute for the daemon (a description search's
/// measurements start from one too).
fn absolute_trigger(r: &mut skillwatch_protocol::TriggerRequest) {
    let full = |p: &Path| p.canonicalize().unwrap_or_else(|_| absolute(p));
    absolute_program(&mut r.harness);
    r.decoys = r.decoys.iter().map(|d| full(d)).collect();
    r.eval_set = r.eval_set.as_deref().map(full);
}

/// The harness program made absolute for the daemon; a bare name (`claude`) stays one, for
/// the PATH lookup.
fn absolute_program(h: &mut HarnessSettings) {
    if let Some(program) = &h.program
        && program.components().count() > 1
    {
        h.program = Some(absolute(program));
    }
}
