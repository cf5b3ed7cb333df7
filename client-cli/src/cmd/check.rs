//! `skillwatch check PATH...`: static checks of skills and their eval files.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use skillwatch_core::checks::{
    CheckOptions, FileReport, Profile, Severity, catalog, check_skill_dirs, check_skill_dirs_each,
};
use skillwatch_core::skill::Discovered;

use crate::report::{self, Color, Counts, Document, Format, Outcome};

/// Arguments of `skillwatch check`.
#[derive(clap::Args)]
#[command(
    after_help = "Exit status: 0 no errors, 1 errors found (or warnings with \
`--deny warnings`), 2 bad usage or unreadable path.\nRules: `skillwatch check --list-rules`; \
one rule in depth: `skillwatch check --explain SW116`."
)]
pub struct Args {
    /// Skill folders, SKILL.md files, or folders to search for skills (recursively; .git,
    /// node_modules and target are skipped).
    #[arg(required_unless_present_any = ["explain", "list_rules"])]
    paths: Vec<PathBuf>,

    /// Output format: `human` (compiler-style, with source lines), `json`, or `sarif` (SARIF
    /// 2.1.0, for GitHub code scanning).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    /// Shorthand for `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,

    /// Rule set: `default` (the Agent Skills specification plus Claude Code's documented
    /// fields; other fields warn) or `agentskills` (the strict specification, as skills-ref).
    #[arg(long, value_enum, default_value_t = ProfileArg::Default)]
    profile: ProfileArg,

    /// Treat a rule as an error, or `warnings` to treat every warning as an error.
    #[arg(long, value_name = "RULE|warnings")]
    deny: Vec<String>,

    /// Report a rule as a warning.
    #[arg(long, value_name = "RULE")]
    warn: Vec<String>,

    /// Silence a rule.
    #[arg(long, value_name = "RULE")]
    allow: Vec<String>,

    /// Print only findings at or above this severity (the summary still counts all).
    #[arg(long, value_enum, default_value_t = Level::Info)]
    level: Level,

    /// Color in human output: auto (when stdout is a terminal and NO_COLOR is unset),
    /// always, never.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,

    /// Skills checked in parallel (default: the number of CPUs).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,

    /// Explain one rule (e.g. `SW116`) and exit.
    #[arg(long, value_name = "RULE")]
    explain: Option<String>,

    /// List every rule (with `--json`, as JSON) and exit.
    #[arg(long)]
    list_rules: bool,
}

/// `--profile` values.
#[derive(Clone, Copy, clap::ValueEnum)]
enum ProfileArg {
    Default,
    Agentskills,
}

/// `--level` values.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Level {
    Info,
    Warning,
    Error,
}

/// Discover and check every skill under the given paths.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let format = if args.json { Format::Json } else { args.format };
    if let Some(id) = &args.explain {
        report::explain(known_rule(id)?, format)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.list_rules {
        report::list_rules(format)?;
        return Ok(ExitCode::SUCCESS);
    }
    let options = options(&args)?;
    let deny_warnings = args.deny.iter().any(|d| d == "warnings");
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
    let skills = dirs.len();
    let threads = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1);
    let min_severity = match args.level {
        Level::Info => Severity::Info,
        Level::Warning => Severity::Warning,
        Level::Error => Severity::Error,
    };
    let promote = |reports: &mut Vec<FileReport>| {
        if deny_warnings {
            for d in reports.iter_mut().flat_map(|f| f.diagnostics.iter_mut()) {
                if d.severity == Severity::Warning {
                    d.severity = Severity::Error;
                }
            }
        }
    };
    let document = match format {
        Format::Human => None,
        Format::Json => Some(Document::Json),
        Format::Sarif => Some(Document::Sarif),
    };
    let (counts, written) = match document {
        None => human(&dirs, &options, threads, min_severity, args.color, promote),
        Some(document) => {
            let mut files = check_skill_dirs(&dirs, &options, threads);
            promote(&mut files);
            let outcome = Outcome {
                skills,
                files: &files,
                profile: options.profile,
                min_severity,
            };
            (outcome.counts(), report::render(&outcome, document))
        }
    };
    if let Err(error) = written {
        // `skillwatch check ... | head` closes the pipe early; that is not a failure.
        if error.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(error).context("writing the report");
        }
    }
    Ok(if counts.errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Check and print in human form, each folder's findings as soon as it and the folders before
/// it are checked (so a long run shows findings at once, and no checked text is held longer
/// than needed), then the summary line. The counts are of every finding, shown or not.
fn human(
    dirs: &Discovered,
    options: &CheckOptions,
    threads: usize,
    min_severity: Severity,
    color: Color,
    promote: impl Fn(&mut Vec<FileReport>) + Sync,
) -> (Counts, std::io::Result<()>) {
    let out = std::io::BufWriter::new(std::io::stdout());
    let mut printer = report::human::Printer::new(out, color.enabled(), min_severity);
    let mut counts = Counts::default();
    let mut files = 0;
    // The first write error (a closed pipe) stops the printing, not the counting: the exit
    // status still says whether any error was found.
    let mut written = Ok(());
    check_skill_dirs_each(dirs, options, threads, |mut reports| {
        promote(&mut reports);
        for file in &reports {
            counts.add(&file.diagnostics);
            if written.is_ok() {
                written = printer.file(file);
            }
        }
        files += reports.len();
    });
    if written.is_ok() {
        let line = report::summary_line(dirs.len(), files, options.profile, counts);
        written = printer.summary(&line);
    }
    (counts, written)
}

fn options(args: &Args) -> anyhow::Result<CheckOptions> {
    let mut overrides = Vec::new();
    for id in &args.allow {
        overrides.push((known_rule(id)?.to_string(), None));
    }
    for id in &args.warn {
        overrides.push((known_rule(id)?.to_string(), Some(Severity::Warning)));
    }
    for id in args.deny.iter().filter(|d| *d != "warnings") {
        overrides.push((known_rule(id)?.to_string(), Some(Severity::Error)));
    }
    Ok(CheckOptions {
        profile: match args.profile {
            ProfileArg::Default => Profile::Default,
            ProfileArg::Agentskills => Profile::AgentSkills,
        },
        overrides,
    })
}

fn known_rule(id: &str) -> anyhow::Result<&'static str> {
    let upper = id.to_ascii_uppercase();
    match catalog::rule(&upper) {
        Some(rule) => Ok(rule.id),
        None => bail!("unknown rule `{id}`: see `skillwatch check --list-rules`"),
    }
}
