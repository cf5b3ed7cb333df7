//! `skillwatch rerun --all --model M`: queue a model-change run of every tracked skill (every
//! skill with evals under the daemon's watched roots) on model M. When each finishes, the
//! daemon compares it with the skill's previous model and reports regressions
//! (`skillwatch events`, the editor's SW501 warning, `skillwatch compare --all`).

use std::process::ExitCode;

use anyhow::bail;
use skillwatch_core::plural::count;
use skillwatch_protocol::JobId;

use super::history_db::DbArgs;
use super::link::{LinkArgs, ctx, daemon_for};
use super::status::print_jobs;

/// Arguments of `skillwatch rerun`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Every tracked skill (the only form for now).
    #[arg(long, required = true)]
    all: bool,
    /// The new model.
    #[arg(long)]
    model: String,
    /// Only this harness (default: every harness the skill's skillwatch.toml lists models for).
    #[arg(long)]
    harness: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// Queue the runs and print the jobs.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _ = args.all;
    let Some(daemon) = daemon_for(&args.link, &args.db)? else {
        bail!(
            "rerun needs the daemon (it owns the tracked skills and runs the jobs); drop --no-daemon"
        );
    };
    let jobs = daemon.call(daemon.rpc.rerun_all(
        ctx(),
        args.model.clone(),
        args.harness.clone(),
    ))??;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&jobs)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if jobs.is_empty() {
        outln!(
            "no tracked skill to rerun (the daemon tracks skills with eval files under its watched roots; \
             add one with `skillwatch daemon start --root DIR`, and list models per harness in skillwatch.toml)"
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    print_jobs(&jobs)?;
    let ids: Vec<String> = jobs
        .iter()
        .map(|j: &skillwatch_protocol::JobInfo| JobId::to_string(&j.id))
        .collect();
    outln!(
        "queued {} on {}; follow them with `skillwatch events --follow` (jobs {})",
        count(jobs.len(), "run"),
        args.model,
        ids.join(", ")
    )?;
    Ok(ExitCode::SUCCESS)
}
