//! `skillwatch import FILE...`: load trials from files in the documented trial format
//! (docs/trial-format.md) into the history, so results from other tools, or from before the
//! runner existed, feed history, lenses and comparisons.

use std::path::PathBuf;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use skillwatch_core::plural::count;
use skillwatch_daemon::store::{ImportReport, read_trial_file};

use super::history_db::DbArgs;

/// Arguments of `skillwatch import`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    source: Option<Source>,
    /// Trial files (`skillwatch-trials/1` JSON). Each file is imported whole or not at all.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

/// One file's outcome, for `--json`.
#[derive(Serialize)]
struct FileOutcome {
    file: String,
    #[serde(flatten)]
    report: Option<ImportReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Where trials come from besides trial files.
#[derive(clap::Subcommand, Debug)]
enum Source {
    /// Import Harbor job folders (docs/harbor.md): each finished trial becomes a trial.
    Harbor(super::import_harbor::Args),
}

/// Import each file in its own transaction; report every file; exit 2 if any failed.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(Source::Harbor(h)) = args.source {
        return super::import_harbor::run(h);
    }
    let mut store = args.db.open_or_create()?;
    let mut outcomes = Vec::new();
    for path in &args.files {
        let result = read_trial_file(path).and_then(|file| {
            let bar = progress_bar(file.trial_count() as u64);
            let report = store.import(&file, &mut |done, _| bar.set_position(done as u64));
            bar.finish_and_clear();
            report
        });
        let outcome = match result {
            Ok(report) => FileOutcome {
                file: path.display().to_string(),
                report: Some(report),
                error: None,
            },
            Err(err) => FileOutcome {
                file: path.display().to_string(),
                report: None,
                error: Some(err.to_string()),
            },
        };
        if !args.json {
            print_outcome(&outcome)?;
        }
        outcomes.push(outcome);
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&outcomes)?)?;
    } else {
        outln!("history: {}", store.path().display())?;
    }
    Ok(if outcomes.iter().any(|o| o.error.is_some()) {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// A bar on stderr for large files; invisible when stderr is not a terminal.
fn progress_bar(total: u64) -> ProgressBar {
    if total < 10_000 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("importing {bar:40} {pos}/{len} trials ({eta})")
    {
        bar.set_style(style);
    }
    bar
}

fn print_outcome(outcome: &FileOutcome) -> anyhow::Result<()> {
    match (&outcome.report, &outcome.error) {
        (Some(r), _) => {
            outln!(
                "{}: imported {} ({}){}",
                outcome.file,
                count(r.imported.len(), "run"),
                count(r.trials, "trial"),
                if r.skipped.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; skipped {} already in the history ({})",
                        count(r.skipped.len(), "run"),
                        r.skipped.join(", ")
                    )
                }
            )?;
        }
        (None, Some(e)) => errln!("error: {e}"),
        (None, None) => {}
    }
    Ok(())
}
