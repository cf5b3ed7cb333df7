//! `skillwatch events [--follow]`: the daemon's event stream (queued, started, progress,
//! finished jobs, model comparisons, checked saves), as text or JSON lines.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use skillwatch_core::plural::count;
use skillwatch_daemon::client;
use skillwatch_daemon::store::time::format_rfc3339;
use skillwatch_protocol::{Event, EventKind, MAX_EVENT_WAIT_MS};

use super::link::running_daemon;

/// Arguments of `skillwatch events`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Keep printing events as they happen (until interrupted).
    #[arg(long, short)]
    follow: bool,
    /// Start after this sequence number (0: every event the daemon still holds).
    #[arg(long, default_value_t = 0)]
    since: u64,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

/// Print events.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(daemon) = running_daemon()? else {
        bail!("no skillwatch daemon is running (start one with `skillwatch daemon start`)");
    };
    let mut cursor = args.since;
    let mut instance: Option<String> = None;
    let wait = if args.follow { MAX_EVENT_WAIT_MS } else { 0 };
    loop {
        let ctx = client::context(Duration::from_millis(wait + 10_000));
        let batch = daemon.call(daemon.rpc.next_events(ctx, cursor, wait))?;
        if instance.as_ref().is_some_and(|i| i != &batch.instance) {
            errln!("note: the daemon restarted; following the new one");
            cursor = 0;
            instance = Some(batch.instance);
            continue;
        }
        instance = Some(batch.instance.clone());
        if batch.missed {
            errln!("note: some events were dropped before they could be read");
        }
        let mut out = std::io::stdout().lock();
        for event in &batch.events {
            if args.json {
                writeln!(out, "{}", serde_json::to_string(event)?)?;
            } else {
                writeln!(out, "{}", describe(event))?;
            }
        }
        out.flush()?;
        cursor = batch.next;
        if !args.follow {
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// One event as a line of text.
pub fn describe(event: &Event) -> String {
    let what = match &event.kind {
        EventKind::JobQueued { job } => format!(
            "job {} queued: {} on {} ({}, {})",
            job.id,
            job.request.skill_dir.display(),
            job.request.model,
            job.request.harness,
            job.request.trigger.as_str()
        ),
        EventKind::JobStarted { job } => format!(
            "job {} started{}",
            job.id,
            job.run.map_or_else(String::new, |r| format!(" (run {r})"))
        ),
        EventKind::Progress {
            job,
            kind,
            skill_dir,
            done,
            total,
            message,
            ..
        } => format!(
            "job {job}, {} of {}: {done}/{total} {message}",
            kind.noun(),
            skill_dir.display()
        ),
        EventKind::JobFinished { job } => format!(
            "job {} {}{}",
            job.id,
            job.state,
            job.error
                .as_ref()
                .map_or_else(String::new, |e| format!(": {e}"))
        ),
        EventKind::Compared { comparison } => {
            format!(
                "{} ({}): {}",
                comparison.skill,
                comparison.harness,
                comparison.headline()
            )
        }
        EventKind::Checked {
            path, diagnostics, ..
        } => format!(
            "checked {}: {}",
            path.display(),
            count(diagnostics.len(), "finding")
        ),
        EventKind::TriggerFinished { skill_dir, run } => format!(
            "trigger run{} of {} finished",
            run.map_or_else(String::new, |r| format!(" {r}")),
            skill_dir.display()
        ),
        EventKind::BudgetExhausted { reason } => format!("jobs held back: {reason}"),
        EventKind::ConfigReloaded { path, error } => match error {
            Some(e) => format!("config {} not applied: {e}", path.display()),
            None => format!("config {} reloaded", path.display()),
        },
    };
    format!("{:>5} {} {what}", event.seq, format_rfc3339(event.at_ms))
}
