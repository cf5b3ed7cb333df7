//! `skillwatch import harbor JOB_DIR...`: Harbor job folders into the history
//! (`daemon::harbor`). All jobs are read first; the trials that read are written in one
//! transaction; a trial folder that did not read is named with its reason while the rest import.

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use skillwatch_core::harbor::ArmRule;
use skillwatch_daemon::harbor::{ImportOptions, describe, read_job};
use skillwatch_daemon::store::ExternalReport;

use super::history_db::DbArgs;

/// Arguments of `skillwatch import harbor`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Harbor job folders (`jobs/<job-name>`), finished or still running.
    #[arg(required = true, value_name = "JOB_DIR")]
    jobs: Vec<PathBuf>,
    /// How to tell the arms apart: `agent-skills` (the trial's agent entry injects the skill,
    /// what `skillwatch export harbor` writes) or `task-suffix:SUFFIX` (tasks whose name ends
    /// with SUFFIX have the skill baked in, e.g. task-suffix:-skilled).
    #[arg(long, default_value = "agent-skills", value_parser = ArmRule::parse)]
    arm_from: ArmRule,
    /// The skill under test, for jobs skillwatch did not export (default: the one skill the
    /// trials' lock files name).
    #[arg(long)]
    skill: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

#[derive(Serialize)]
struct JobOutcome {
    job: String,
    runs: Vec<ExternalReport>,
    missing: usize,
    damaged: Vec<String>,
}

/// Read every job, then write what read in one transaction; exit 2 when a job or a trial
/// folder did not read.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = ImportOptions {
        skill: args.skill.clone(),
        arm_from: args.arm_from.clone(),
    };
    let mut store = args.db.open_or_create()?;
    let mut failed = false;
    let mut jobs = Vec::new();
    for dir in &args.jobs {
        let stored = |id: &str| store.has_external_trial(id).unwrap_or(false);
        match read_job(dir, &opts, &stored) {
            Ok(j) => jobs.push(j),
            Err(e) => {
                failed = true;
                errln!("error: {e}");
            }
        }
    }
    let runs: Vec<_> = jobs.iter().flat_map(|j| j.runs.iter().cloned()).collect();
    let mut reports = store.import_external(&runs)?.into_iter();
    let mut outcomes = Vec::new();
    for job in &jobs {
        let mine: Vec<ExternalReport> = reports.by_ref().take(job.runs.len()).collect();
        failed |= !job.damaged.is_empty();
        if !args.json {
            let added = mine.iter().map(|r| r.added).sum();
            let already = mine.iter().map(|r| r.already).sum();
            let status = mine
                .first()
                .map_or(skillwatch_daemon::store::RunStatus::Interrupted, |r| {
                    r.status
                });
            outln!("{}", describe(job, added, already, status))?;
            for r in &mine {
                outln!("  run {} ({})", r.run, r.status)?;
            }
            for d in &job.damaged {
                errln!("error: {d} (not imported; the other trials were)");
            }
        }
        outcomes.push(JobOutcome {
            job: job.dir.display().to_string(),
            runs: mine,
            missing: job.missing,
            damaged: job.damaged.clone(),
        });
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&outcomes)?)?;
    } else {
        outln!("history: {}", store.path().display())?;
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
