//! `skillwatch run` through the daemon: the same flags and `skillwatch.toml` settings as the
//! in-process run, turned into the runner's request by `cmd::run::request`, queued as a daemon
//! job with the client's values of the variables the run reads (`ClientEnv`: API keys are the
//! client's, never the daemon's), followed through the daemon's events (the runner's own
//! events, shown by the same progress sink as in-process), and reported from the history when
//! it ends. Ctrl-C cancels the job (the daemon kills its agents).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use skillwatch_daemon::client;
use skillwatch_daemon::runner::{
    HarnessSettings, ProgressSink, RunEvent, RunReport, RunRequest, TrialTally,
};
use skillwatch_daemon::store::{RunId, Store};
use skillwatch_protocol::{
    ClientEnv, EventKind, JobId, JobInfo, JobState, JobTrigger, MAX_EVENT_WAIT_MS,
    RunRequest as JobRequest,
};

use super::link::{Daemon, LinkArgs, absolute, ctx, daemon_for};
use super::run::{Args, finish, progress_sink, request};

/// `skillwatch run`: through the daemon for the history `--db` names (started on demand), or
/// in-process with `--no-daemon` or when the running daemon serves another history.
pub fn dispatch(args: Args, link: &LinkArgs) -> anyhow::Result<ExitCode> {
    if let Some(reference) = &args.changed_since
        && !crate::changed::ChangedSince::read(reference, &args.skill)?.touches(&args.skill)
    {
        let note = format!(
            "{}: unchanged since {reference}; not run",
            args.skill.display()
        );
        if args.output() == super::run::RunFormat::Github {
            outln!("::notice::{}", crate::report::github::data(&note))?;
        }
        errln!("{note}");
        return Ok(ExitCode::SUCCESS);
    }
    match daemon_for(link, &args.db)? {
        Some(daemon) => run(&args, daemon, link),
        None => super::run::run(args, link),
    }
}

/// Queue the run on `daemon`, follow it, and print its report.
fn run(args: &Args, daemon: Daemon, link: &LinkArgs) -> anyhow::Result<ExitCode> {
    let mut request = request(args)?;
    absolute_paths(&mut request)?;
    let json = args.output() == super::run::RunFormat::Json;
    let mut job = JobRequest::new(
        &request.skill_dir,
        request.harness.kind.as_str(),
        &request.model,
    );
    job.trigger = JobTrigger::Manual;
    let db = daemon.call(daemon.rpc.status(ctx()))?.db;
    super::run::harbor_dir(&mut request, &db, json);
    if let Ok(store) = Store::open_existing(&db) {
        errln!("{}", super::plan::design_note(&store, &request)?);
    }
    job.runner = Some(serde_json::to_value(&request)?);
    let env = ClientEnv::capture(request.client_vars().iter().map(String::as_str));
    // a named key variable that is unset fails here, as in-process, before any job is queued
    let host = skillwatch_daemon::harness::HostEnv::from_pairs(
        env.vars()
            .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
    );
    request.check_named_vars(&host)?;
    let cursor = latest_event(&daemon)?;
    let queued = daemon.call(daemon.rpc.enqueue_client_run(ctx(), job, env))??;
    if !json {
        errln!(
            "queued as job {} on the skillwatch daemon (`skillwatch cancel {}` to stop it)",
            queued.id,
            queued.id
        );
    }
    let sink: ProgressSink = progress_sink(0, json);
    let finished = follow(&daemon, queued.id, cursor, |event| {
        let event: RunEvent =
            serde_json::from_value(event).context("reading a progress event of the daemon")?;
        sink(&event);
        Ok(())
    })?;
    let Some(run) = finished.run else {
        bail!(
            "job {} {}: {}",
            finished.id,
            finished.state,
            finished.error.as_deref().unwrap_or("no run was made")
        );
    };
    let store = Store::open_existing(&db)?;
    let tally = TrialTally {
        planned: finished.progress.total as usize,
        ran: (finished.progress.done - finished.progress.reused) as usize,
        reused: finished.progress.reused as usize,
        ..TrialTally::default()
    };
    let wall = finished
        .finished_ms
        .zip(finished.started_ms)
        .map_or(0, |(f, s)| (f - s).max(0) as u64);
    let report =
        RunReport::load(&store, RunId(run), tally, wall)?.with_profile(args.scoring_profile.into());
    if finished.state == JobState::Failed {
        finish(&report, args, link)?;
        bail!(
            "job {} failed: {}",
            finished.id,
            finished.error.unwrap_or_default()
        );
    }
    finish(&report, args, link)
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

/// Follow the job's events until it ends, handing each of its progress events (the runner's
/// or the prober's own, as JSON) to `on_event`, which shows it as an in-process run does;
/// Ctrl-C cancels it.
pub(crate) fn follow(
    daemon: &Daemon,
    job: JobId,
    cursor: u64,
    on_event: impl Fn(serde_json::Value) -> anyhow::Result<()>,
) -> anyhow::Result<JobInfo> {
    let interrupted = daemon.runtime.spawn(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    let mut ended = None;
    let events = |kind: EventKind| match kind {
        EventKind::Progress {
            job: j,
            event: Some(event),
            ..
        } if j == job => on_event(event),
        _ => Ok(()),
    };
    read_events(daemon, cursor, events, || {
        if interrupted.is_finished() {
            return Ok(Reading::Stop);
        }
        let state = daemon.call(daemon.rpc.run_status(ctx(), job))??;
        Ok(match state.state.is_live() {
            true => Reading::Wait,
            false => {
                ended = Some(state);
                Reading::Drain
            }
        })
    })?;
    interrupted.abort();
    match ended {
        Some(state) => Ok(state),
        None => {
            errln!("\ninterrupted: cancelling job {job}…");
            Ok(daemon.call(daemon.rpc.cancel(ctx(), job))??)
        }
    }
}

/// How [`read_events`] goes on after a batch.
pub(crate) enum Reading {
    /// Read the next batch, waiting up to a second for it.
    Wait,
    /// What is followed has ended: read what is left without waiting, until none is.
    Drain,
    /// Stop now.
    Stop,
}

/// Read the daemon's events from `cursor`, handing each to `on_event`, and after each batch
/// ask `next` how to go on (once it says [`Reading::Drain`], it is not asked again). What a
/// job and a trigger call follow: the events they publish as they go.
pub(crate) fn read_events(
    daemon: &Daemon,
    mut cursor: u64,
    mut on_event: impl FnMut(EventKind) -> anyhow::Result<()>,
    mut next: impl FnMut() -> anyhow::Result<Reading>,
) -> anyhow::Result<()> {
    let mut draining = false;
    loop {
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
            on_event(event.kind)?;
        }
        if draining {
            if more {
                continue;
            }
            return Ok(());
        }
        match next()? {
            Reading::Wait => {}
            Reading::Drain => draining = true,
            Reading::Stop => return Ok(()),
        }
    }
}

/// The daemon works in its own directory: the skill and every path given on the command line
/// must reach it absolute. A bare program name (`claude`) stays one, for the PATH lookup.
fn absolute_paths(r: &mut RunRequest) -> anyhow::Result<()> {
    r.skill_dir = absolute(&r.skill_dir)
        .canonicalize()
        .with_context(|| format!("{}: expected a skill folder", r.skill_dir.display()))?;
    absolute_program(&mut r.harness);
    r.support_skills = r.support_skills.iter().map(|p| absolute(p)).collect();
    if let Some(h) = &mut r.harbor {
        h.program = absolute(&h.program);
        h.dir = h.dir.as_deref().map(absolute);
    }
    Ok(())
}

/// The harness program made absolute for the daemon; a bare name (`claude`) stays one, for
/// the PATH lookup.
pub(crate) fn absolute_program(h: &mut HarnessSettings) {
    if let Some(program) = &h.program
        && program.components().count() > 1
    {
        h.program = Some(absolute(program));
    }
}
