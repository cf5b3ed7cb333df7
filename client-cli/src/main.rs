//! `skillwatch`: the one binary. Each subcommand lives in its own module under `cmd/`; this file
//! only parses arguments and dispatches.

mod cmd;
mod report;
mod run_report;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// mimalloc instead of glibc's malloc: a check allocates many small strings and vectors per
/// skill, and mimalloc serves them with fewer instructions (docs/benchmarks.md) and without
/// glibc's arena contention when `check` runs on every core.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Check, measure and watch agent skills.
#[derive(Parser)]
#[command(name = "skillwatch", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check skills for spec violations, quality problems and security risks.
    Check(cmd::check::Args),
    /// Vet skills written by others before installing them: a verdict per skill (malicious,
    /// suspicious, clean) with its evidence; exit 1 when any is malicious.
    Vet(cmd::vet::Args),
    /// Create a new skill folder: SKILL.md, eval cases and a commented skillwatch.toml.
    Init(cmd::init::Args),
    /// Run the language server on stdin/stdout (started by editors).
    Lsp(cmd::lsp::Args),
    /// Print the JSON Schema of an eval file format (for yaml-language-server and editors).
    Schema(cmd::schema::Args),
    /// Show a skill's lift history per model from the history store.
    History(cmd::history::Args),
    /// Compare a skill's per-case lift on two models; exit 1 if it regressed.
    Compare(cmd::compare::Args),
    /// How many cases x attempts a lift needs, and what the suite can detect now.
    Plan(cmd::plan::Args),
    /// Run the per-user daemon (foreground), or start, stop or ask the status of it.
    Daemon(cmd::daemon::Args),
    /// Show the daemon's jobs (queued, running, recent), or one job.
    Status(cmd::status::Args),
    /// Cancel a queued or running job (its agents are killed; finished trials are kept).
    Cancel(cmd::cancel::Args),
    /// Print the daemon's events: progress, finished runs, regressions, checked saves.
    Events(cmd::events::Args),
    /// Rerun every tracked skill on a new model and compare with the previous one.
    Rerun(cmd::rerun::Args),
    /// Write a skill's suite for another runner: `export harbor` writes Harbor tasks and a job.
    Export(cmd::export::Args),
    /// Load trials from trial files (docs/trial-format.md) into the history store.
    Import(cmd::import::Args),
    /// Measure a skill's lift: run its eval cases with and without it on an agent harness.
    Run(RunCmd),
    /// Ask a stored run's judge again (failed verdicts, or all) without re-running agents.
    Rejudge(cmd::rejudge::Args),
}

/// `skillwatch run`'s flags plus `--no-daemon`: the run goes through the daemon (started on
/// demand) unless told otherwise.
#[derive(clap::Args)]
struct RunCmd {
    #[command(flatten)]
    link: cmd::link::LinkArgs,
    #[command(flatten)]
    args: Box<cmd::run::Args>,
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Vet(args) => cmd::vet::run(args),
        Command::Init(args) => cmd::init::run(args),
        Command::Lsp(args) => cmd::lsp::run(args),
        Command::Schema(args) => cmd::schema::run(args),
        Command::History(args) => cmd::history::run(args),
        Command::Compare(args) => cmd::compare::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Daemon(args) => cmd::daemon::run(args),
        Command::Status(args) => cmd::status::run(args),
        Command::Cancel(args) => cmd::cancel::run(args),
        Command::Events(args) => cmd::events::run(args),
        Command::Rerun(args) => cmd::rerun::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Run(run) => cmd::run_daemon::dispatch(*run.args, &run.link),
        Command::Rejudge(args) => cmd::rejudge::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
