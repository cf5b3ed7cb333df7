//! `skillwatch index build|check`: publishing skills for discovery at
//! `/.well-known/agent-skills/index.json` (seed 002), and checking a site that does.

pub mod build;
pub mod check;
mod report;
mod site;

use std::process::ExitCode;

/// Arguments of `skillwatch index`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Write the discovery index and the artifacts a site serves (SKILL.md files, archives
    /// with raw-byte SHA-256 digests) under PUBLIC_DIR/.well-known/agent-skills/.
    Build(build::Args),
    /// Run seed 002's six weighted steps on a site (URL) or a built folder: discovery,
    /// index schema, entries, artifact digests, content, security.
    Check(check::Args),
}

/// Dispatch.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Build(args) => build::run(args),
        Command::Check(args) => check::run(args),
    }
}
