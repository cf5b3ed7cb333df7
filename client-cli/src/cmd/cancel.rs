//! `skillwatch cancel JOB`: cancel a queued or running job; a running job's agents are killed
//! and its finished trials stay in the history.

use std::process::ExitCode;

use skillwatch_protocol::{JobId, JobState};

use super::history_db::DbArgs;
use super::link::{LinkArgs, ctx, daemon_for};
use super::status::print_jobs;

/// Arguments of `skillwatch cancel`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The job id (from `skillwatch status`).
    job: i64,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// Cancel and print the job as it ended.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let id = JobId(args.job);
    let job = match daemon_for(&args.link, &args.db)? {
        Some(d) => d.call(d.rpc.cancel(ctx(), id))??,
        None => {
            // no daemon: nothing runs, so only a queued job can be cancelled, in the table
            let mut store = args.db.open_existing()?;
            store.check_intact()?;
            store.finish_job(
                id,
                JobState::Cancelled,
                Some("cancelled from the command line"),
            )?
        }
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&job)?)?;
    } else {
        print_jobs(std::slice::from_ref(&job))?;
    }
    Ok(ExitCode::SUCCESS)
}
