//! `skillwatch import harbor JOB_DIR...`: Harbor job folders into the history
//! (`daemon::harbor`). All jobs are read first, as one import (one run per agent and model, so
//! arms run as separate jobs pair by task); the trials that read are written in one
//! transaction; a trial folder that did not read is named with its reason while the rest import.

use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use skillwatch_core::harbor::ArmRule;
use skillwatch_core::plural::count;
use skillwatch_daemon::harbor::{ImportOptions, JobsImport, Unpaired, describe, read_jobs};
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

/// The JSON report: what each job gave, the runs written, and the tasks left without a
/// partner arm.
#[derive(Serialize)]
struct Outcome<'a> {
    jobs: Vec<JobOutcome>,
    runs: &'a [ExternalReport],
    unpaired: &'a [Unpaired],
}

#[derive(Serialize)]
struct JobOutcome {
    job: String,
    missing: usize,
    damaged: Vec<String>,
}

/// Read every job, then write what read in one transaction: the jobs of one call are one
/// import, so a baseline-only and a with-skill job pair by task. Exit 2 when a job or a trial
/// folder did not read.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = ImportOptions {
        skill: args.skill.clone(),
        arm_from: args.arm_from.clone(),
    };
    let mut store = args.db.open_or_create()?;
    let stored = |id: &str| store.has_external_trial(id).unwrap_or(false);
    let all = match read_jobs(&args.jobs, &opts, &stored) {
        Ok(all) => all,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let reports = store.import_external(&all.runs)?;
    let mut failed = !all.failed.is_empty();
    for e in &all.failed {
        errln!("error: {e}");
    }
    for job in &all.jobs {
        failed |= !job.damaged.is_empty();
    }
    if args.json {
        let outcome = Outcome {
            jobs: all
                .jobs
                .iter()
                .map(|j| JobOutcome {
                    job: j.dir.display().to_string(),
                    missing: j.missing,
                    damaged: j.damaged.clone(),
                })
                .collect(),
            runs: &reports,
            unpaired: &all.unpaired,
        };
        outln!("{}", serde_json::to_string_pretty(&outcome)?)?;
    } else {
        print_text(&all, &reports)?;
        outln!("history: {}", store.path().display())?;
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// One line per job (one job: what it added; several: what the call added, then each job's
/// unfinished trials), the runs, the damaged trials and the tasks without a partner arm.
fn print_text(all: &JobsImport, reports: &[ExternalReport]) -> anyhow::Result<()> {
    let added = reports.iter().map(|r| r.added).sum();
    let already = reports.iter().map(|r| r.already).sum();
    let status = reports
        .first()
        .map_or(skillwatch_daemon::store::RunStatus::Interrupted, |r| {
            r.status
        });
    if let [job] = all.jobs.as_slice() {
        outln!("{}", describe(job, added, already, status))?;
    } else {
        let mut line = format!(
            "{} jobs in one import: {} imported",
            all.jobs.len(),
            count(added, "trial")
        );
        if already > 0 {
            line.push_str(&format!(", {already} already in the history"));
        }
        outln!("{line}")?;
        for job in &all.jobs {
            let mut line = format!("  {}", job.dir.display());
            if job.missing > 0 {
                line.push_str(&format!(
                    ": {} not finished yet (import again later; the run stays {status})",
                    count(job.missing, "trial")
                ));
            }
            outln!("{line}")?;
        }
    }
    for r in reports {
        outln!("  run {} ({})", r.run, r.status)?;
    }
    for job in &all.jobs {
        for d in &job.damaged {
            errln!("error: {d} (not imported; the other trials were)");
        }
    }
    for u in &all.unpaired {
        outln!("  unpaired: {u}")?;
    }
    Ok(())
}
