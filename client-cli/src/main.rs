//! `skillwatch`: the one binary. Each subcommand lives in its own module under `cmd/`; this file
//! only parses arguments, dispatches, and prints the error a command ends with.

#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `println!` through [`out::stdout`]: an error instead of a panic, and a closed pipe is fine.
macro_rules! outln {
    () => {
        $crate::out::stdout("\n")
    };
    ($($arg:tt)*) => {
        $crate::out::stdout(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` through [`out::stdout`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::stdout(&format!($($arg)*))
    };
}

/// `eprint!` through [`out::stderr`]: best effort, never a panic.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::out::stderr(&format!($($arg)*))
    };
}

/// `eprintln!` through [`out::stderr`]: best effort, never a panic.
macro_rules! errln {
    () => {
        $crate::out::stderr("\n")
    };
    ($($arg:tt)*) => {
        $crate::out::stderr(&format!("{}\n", format_args!($($arg)*)))
    };
}

mod allocator;
mod changed;
mod cmd;
mod history_report;
mod out;
mod report;
mod run_report;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

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
    /// Publish skills for discovery (`index build`) or check a site that does (`index
    /// check`): the Agent Skills discovery index at /.well-known/agent-skills/index.json.
    Index(cmd::index::Args),
    /// Run the language server on stdin/stdout (started by editors).
    Lsp(cmd::lsp::Args),
    /// Print the JSON Schema of an eval file format (for yaml-language-server and editors).
    Schema(cmd::schema::Args),
    /// Show a skill's lift history per model from the history store.
    History(cmd::history::Args),
    /// Show a stored run's trials, or one trial whole (output, error and the agent's stderr,
    /// checks, judgments, trajectory).
    Show(cmd::show::Args),
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
    /// Write the history as one HTML page with charts: lift per case, over time and per
    /// model, pass rates, security, and every trial of the latest runs down to its trajectory.
    Report(cmd::report::Args),
    /// Security score S and status (SkillTester): run the agent with the skill on security
    /// probes and grade what it did; exit 1 when Risky.
    Probe(cmd::probe::Args),
    /// Ask a stored run's judge again (failed verdicts, or all) without re-running agents.
    Rejudge(cmd::rejudge::Args),
    /// Does the agent pick the skill for the queries it should? Stops each agent at its choice.
    Trigger(cmd::trigger::Args),
    /// Will these skills load, and how, in each agent CLI installed here? Runs each CLI once
    /// against a local capture server and reads back the skill listing it sent.
    Loads(cmd::loads::Args),
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
        Command::Index(args) => cmd::index::run(args),
        Command::Lsp(args) => cmd::lsp::run(args),
        Command::Schema(args) => cmd::schema::run(args),
        Command::History(args) => cmd::history::run(args),
        Command::Show(args) => cmd::show::run(args),
        Command::Compare(args) => cmd::compare::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Daemon(args) => cmd::daemon::run(args),
        Command::Status(args) => cmd::status::run(args),
        Command::Cancel(args) => cmd::cancel::run(args),
        Command::Events(args) => cmd::events::run(args),
        Command::Rerun(args) => cmd::rerun::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Run(run) => cmd::run::dispatch(*run.args, &run.link),
        Command::Probe(args) => cmd::probe::run(args),
        Command::Rejudge(args) => cmd::rejudge::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Trigger(args) => cmd::trigger::run(args),
        Command::Loads(args) => cmd::loads::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            errln!("error: {}", render(&err));
            ExitCode::from(2)
        }
    }
}

/// An error with its causes, each said once: a wrapper whose message already quotes its
/// cause (`history store: <the store's error>`) would otherwise print the cause twice.
fn render(err: &anyhow::Error) -> String {
    let mut said = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if said.contains(&text) {
            continue;
        }
        if !said.is_empty() {
            said.push_str(": ");
        }
        said.push_str(&text);
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    enum Wrapper {
        #[error("history store: {0}")]
        Store(#[from] std::io::Error),
    }

    #[test]
    fn each_cause_is_said_once() {
        let io = std::io::Error::other("disk I/O error");
        let err = anyhow::Error::from(Wrapper::from(io)).context("recording trial 3");
        assert_eq!(
            render(&err),
            "recording trial 3: history store: disk I/O error"
        );
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(render(&plain), "outer: inner");
    }
}
