//! `skillwatch run` through the daemon: the same flags and `skillwatch.toml` settings as the
//! in-process run, turned into the runner's request by `cmd::run::request`, queued as a daemon
//! job, followed through the daemon's events (progress on stderr), and reported from the
//! history when it ends. Ctrl-C cancels the job (the daemon kills its agents).

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use skillwatch_core::protocol::{
    EventKind, JobId, JobInfo, JobState, JobTrigger, MAX_EVENT_WAIT_MS, RunRequest as JobRequest,
};
use skillwatch_daemon::client;
use skillwatch_daemon::runner::{RunReport, RunRequest, TrialTally};
use skillwatch_daemon::store::{RunId, Store};

use super::link::{Daemon, LinkArgs, absolute, ctx, daemon_for};
use super::run::{Args, finish, request};

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
            println!("::notice::{}", crate::report::github::data(&note));
        }
        eprintln!("{note}");
        return Ok(ExitCode::SUCCESS);
    }
    match daemon_for(link, &args.db)? {
        Some(daemon) => run(&args, daemon),
        None => super::run::run(args),
    }
}

/// Queue the run on `daemon`, follow it, and print its report.
fn run(args: &Args, daemon: Daemon) -> anyhow::Result<ExitCode> {
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
    if let Ok(store) = Store::open_existing(&db) {
        eprintln!("{}", super::plan::design_note(&store, &request)?);
    }
    job.runner = Some(serde_json::to_value(&request)?);
    let queued = daemon.call(daemon.rpc.enqueue_run(ctx(), job))??;
    if !json {
        eprintln!(
            "queued as job {} on the skillwatch daemon (`skillwatch cancel {}` to stop it)",
            queued.id, queued.id
        );
    }
    let finished = follow(&daemon, queued.id, json)?;
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
    let code = finish(&report, args)?;
    if finished.state == JobState::Failed {
        bail!(
            "job {} failed: {}",
            finished.id,
            finished.error.unwrap_or_default()
        );
    }
    Ok(code)
}

/// Follow the job's events until it ends; Ctrl-C cancels it.
fn follow(daemon: &Daemon, job: JobId, json: bool) -> anyhow::Result<JobInfo> {
    let tty = std::io::stderr().is_terminal() && !json;
    let interrupted = daemon.runtime.spawn(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    let mut cursor = 0;
    let mut last_line = Instant::now() - Duration::from_secs(10);
    loop {
        if interrupted.is_finished() {
            eprintln!("\ninterrupted: cancelling job {job}…");
            return Ok(daemon.call(daemon.rpc.cancel(ctx(), job))??);
        }
        let wait = 1_000.min(MAX_EVENT_WAIT_MS);
        let call = daemon.rpc.next_events(
            client::context(Duration::from_millis(wait + 10_000)),
            cursor,
            wait,
        );
        let batch = daemon.call(call)?;
        cursor = batch.next;
        for event in &batch.events {
            if let EventKind::Progress {
                job: j,
                done,
                total,
                message,
                ..
            } = &event.kind
                && *j == job
                && !json
            {
                // a line per trial on a terminal, at most one a second otherwise
                if tty || last_line.elapsed() >= Duration::from_secs(1) {
                    eprintln!("[{done}/{total}] {message}");
                    last_line = Instant::now();
                }
            }
        }
        let state = daemon.call(daemon.rpc.run_status(ctx(), job))??;
        if !state.state.is_live() {
            interrupted.abort();
            return Ok(state);
        }
    }
}

/// The daemon works in its own directory: the skill and every path given on the command line
/// must reach it absolute. A bare program name (`claude`) stays one, for the PATH lookup.
fn absolute_paths(r: &mut RunRequest) -> anyhow::Result<()> {
    r.skill_dir = absolute(&r.skill_dir)
        .canonicalize()
        .with_context(|| format!("{}: expected a skill folder", r.skill_dir.display()))?;
    if let Some(program) = &r.harness.program
        && program.components().count() > 1
    {
        r.harness.program = Some(absolute(program));
    }
    r.support_skills = r.support_skills.iter().map(|p| absolute(p)).collect();
    Ok(())
}
