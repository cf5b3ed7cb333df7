//! `skillwatch status [JOB]`: the daemon's jobs (queued, running, recent), or one job.

use std::process::ExitCode;

use anyhow::bail;
use skillwatch_core::plural::agree;
use skillwatch_daemon::store::time::{format_age, now_ms};
use skillwatch_protocol::{JobFilter, JobId, JobInfo, JobKind, JobProgress, JobState};

use super::history_db::{DbArgs, signed};
use super::link::{LinkArgs, ctx, daemon_for};

/// Arguments of `skillwatch status`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// One job (its id from `skillwatch run` or this list).
    job: Option<i64>,
    /// Only queued and running jobs.
    #[arg(long)]
    live: bool,
    /// At most this many jobs, newest first.
    #[arg(long, default_value_t = 20)]
    limit: u32,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// Print the jobs.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let filter = JobFilter {
        states: if args.live {
            vec![JobState::Queued, JobState::Running]
        } else {
            Vec::new()
        },
        skill_dir: None,
        limit: Some(args.limit),
    };
    let jobs = match (args.job, daemon_for(&args.link, &args.db)?) {
        (Some(id), Some(d)) => vec![d.call(d.rpc.run_status(ctx(), JobId(id)))??],
        (None, Some(d)) => d.call(d.rpc.list_runs(ctx(), filter))??,
        (job, None) => {
            let store = args.db.open_existing()?;
            match job {
                Some(id) => match store.job(JobId(id))? {
                    Some(job) => vec![job],
                    None => bail!("no job {id} in {}", store.path().display()),
                },
                None => store.jobs(&filter)?,
            }
        }
    };
    if args.json {
        let value = match args.job {
            Some(_) => serde_json::to_value(&jobs[0])?,
            None => serde_json::to_value(&jobs)?,
        };
        outln!("{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        print_jobs(&jobs)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A table of jobs, one line each (and the error of failed ones).
pub fn print_jobs(jobs: &[JobInfo]) -> anyhow::Result<()> {
    if jobs.is_empty() {
        outln!("no jobs")?;
        return Ok(());
    }
    let now = now_ms();
    outln!(
        "{:>5}  {:<11}  {:<20}  {:<24}  {:<12}  {:>22}  {:>6}  {:>7}  queued",
        "job",
        "state",
        "skill",
        "model (harness)",
        "trigger",
        "progress",
        "run",
        "lift"
    )?;
    for job in jobs {
        print_job(job, now)?;
    }
    Ok(())
}

fn print_job(job: &JobInfo, now: i64) -> anyhow::Result<()> {
    let skill = job.skill.clone().unwrap_or_else(|| {
        job.request
            .skill_dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    });
    outln!(
        "{:>5}  {:<11}  {:<20}  {:<24}  {:<12}  {:>22}  {:>6}  {:>7}  {}",
        job.id,
        job.state.as_str(),
        truncate(&skill, 20),
        truncate(
            &format!("{} ({})", job.request.model, job.request.harness),
            24
        ),
        match job.request.kind {
            JobKind::Paired => job.request.trigger.as_str(),
            other => other.as_str(),
        },
        progress(job.request.kind, &job.progress),
        match (job.run, job.probe_run, job.trigger_run) {
            (Some(r), ..) => r.to_string(),
            // a probe or trigger run, as `history` lists them apart
            (None, Some(p), _) => format!("probe {p}"),
            (None, None, Some(t)) => format!("trigger {t}"),
            // a description search: the optimisation record it stored
            (None, None, None) => job
                .optimization
                .map_or_else(|| "—".into(), |o| format!("opt {o}")),
        },
        signed(job.lift),
        format_age(job.created_ms, now)
    )?;
    if let Some(note) = job.note.as_ref().filter(|_| job.state.is_live()) {
        // a description search: its round, step and spend (its trials are child runs)
        outln!("{:>7}{note}", "")?;
    }
    if let Some(error) = &job.error {
        outln!("{:>7}{error}", "")?;
    }
    Ok(())
}

/// `3/12 trials (4 reused)` for a paired run, `1/3 probes` for a probe run; `—` before the
/// job is planned.
fn progress(kind: JobKind, p: &JobProgress) -> String {
    if p.total == 0 {
        return "—".into();
    }
    let counted = format!("{}/{} {}", p.done, p.total, agree(p.total, kind.unit()));
    match p.reused {
        0 => counted,
        r => format!("{counted} ({r} reused)"),
    }
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(done: u32, total: u32, reused: u32) -> JobProgress {
        JobProgress {
            done,
            total,
            reused,
        }
    }

    #[test]
    fn progress_is_counted_in_what_the_job_runs() {
        assert_eq!(
            progress(JobKind::Paired, &at(3, 12, 4)),
            "3/12 trials (4 reused)"
        );
        assert_eq!(progress(JobKind::Paired, &at(0, 1, 0)), "0/1 trial");
        assert_eq!(progress(JobKind::Probe, &at(2, 27, 0)), "2/27 probes");
        assert_eq!(progress(JobKind::Probe, &at(1, 1, 0)), "1/1 probe");
        assert_eq!(progress(JobKind::Probe, &at(0, 0, 0)), "—");
    }
}
