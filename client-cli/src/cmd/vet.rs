//! `skillwatch vet PATH...` (and `check --vet`): a verdict per skill for someone about to
//! install skills written by others. It runs the check with the behaviour analysis on, under
//! vetting's own settings: no skillwatch.toml (the vetted repository's config must not steer
//! its own vetting), no severity flags, and inline `skillwatch-ignore` comments not honoured
//! (silenced findings still count; see `skillwatch_core::vet::verdict`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use skillwatch_core::checks::check_skill_dirs_each;
use skillwatch_core::skill::Discovered;
use skillwatch_core::vet::{self, SkillVerdict, Verdict};

use crate::report::{Color, Format, card, vet as render};

/// Arguments of `skillwatch vet`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 no skill is malicious, 1 a skill is malicious, 2 bad usage \
or unreadable path.\nEach behaviour rule: `skillwatch check --explain SW320` (SW320-SW328)."
)]
pub struct Args {
    /// Skill folders, SKILL.md files, or folders to search for skills.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,

    /// Output format: `human`, `json`, or `sarif` (SARIF 2.1.0 with `security-severity`).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Shorthand for `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Color in human output: auto, always, never.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,

    /// Print each skill's capability card instead of its evidence: what it makes the agent do
    /// (hosts, secrets, files, commands, packages, agent configuration, persistence,
    /// destruction), each entry with its risk and place; the verdict is the worst entry.
    /// Human text, or JSON with `--json` (schemas/vet-card.schema.json).
    #[arg(long)]
    pub card: bool,

    /// Skills vetted in parallel (default: the number of CPUs).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
}

/// Vet every skill under the given paths.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let format = if args.json { Format::Json } else { args.format };
    if format == Format::Github {
        bail!("vet has no --format github yet: use --format sarif for code scanning");
    }
    if args.card && format == Format::Sarif {
        bail!("vet --card prints text or JSON (--json); SARIF carries the evidence: drop --card");
    }
    let mut dirs = Discovered::default();
    for path in &args.paths {
        if !path.exists() {
            bail!("{}: no such file or folder", path.display());
        }
        let found = Discovered::walk(path);
        if found.is_empty() {
            bail!(
                "{}: no skill found (a skill is a folder with a SKILL.md)",
                path.display()
            );
        }
        dirs.merge(found);
    }
    let threads = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1);
    let verdicts = vet_all(&dirs, threads);
    let written = match format {
        Format::Human if args.card => card::human(&verdicts, args.color.enabled()),
        Format::Json if args.card => card::json(&verdicts),
        Format::Human => render::human(&verdicts, args.color.enabled()),
        Format::Json => render::json(&verdicts),
        Format::Sarif | Format::Github => render::sarif(&verdicts),
    };
    if let Err(error) = written
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(error).context("writing the report");
    }
    let malicious = verdicts.iter().any(|v| v.verdict == Verdict::Malicious);
    Ok(if malicious {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The verdict on each discovered skill, in folder order.
pub fn vet_all(dirs: &Discovered, threads: usize) -> Vec<SkillVerdict> {
    let folders: Vec<PathBuf> = dirs.dirs().cloned().collect();
    let mut verdicts = Vec::with_capacity(folders.len());
    let options = vet::options();
    check_skill_dirs_each(dirs, &options, threads, |reports| {
        let dir = folders.get(verdicts.len()).cloned().unwrap_or_else(|| {
            reports
                .first()
                .and_then(|r| r.path.parent())
                .map(PathBuf::from)
                .unwrap_or_default()
        });
        verdicts.push(vet::verdict(&dir, &reports));
    });
    verdicts
}
