//! `skillwatch check PATH...`: static checks of skills and their eval files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use skillwatch_core::checks::{
    CheckOptions, FileReport, InlineIgnore, Profile, Severity, catalog, check_skill_dirs,
    check_skill_dirs_each,
};
use skillwatch_core::config::{self, CheckConfig};
use skillwatch_core::plural::count;
use skillwatch_core::skill::Discovered;

use crate::changed::ChangedSince;
use crate::report::{self, Color, Counts, Document, Format, Outcome};

mod fix;

pub use fix::Applied;

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

    /// Output format: `human` (compiler-style, with source lines), `json`, `sarif` (SARIF
    /// 2.1.0, for GitHub code scanning), or `github` (Actions annotations and a step summary).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    /// Shorthand for `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,

    /// Rule set: `default` (the Agent Skills specification plus Claude Code's documented
    /// fields; other fields warn) or `agentskills` (the strict specification, as skills-ref)
    /// [default: skillwatch.toml's `[check] profile`, else `default`].
    #[arg(long, value_enum)]
    profile: Option<ProfileArg>,

    /// The skillwatch.toml whose `[check]` table (profile, rule levels) applies under the
    /// flags [default: the nearest one in or above the checked paths].
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    config: Option<PathBuf>,

    /// Read no skillwatch.toml: only the flags and the built-in defaults.
    #[arg(long)]
    no_config: bool,

    /// Vet skills someone else wrote: their `skillwatch-ignore` comments silence nothing
    /// (findings they cover are reported, marked), and a skillwatch.toml in or below a checked
    /// path (one the skills brought along) is not read. For third-party skills before
    /// installing them and CI on pull requests from outside.
    #[arg(long)]
    no_inline_ignore: bool,

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

    /// Apply every fix the findings carry (the editor's quick fixes) to the files, checking
    /// again until none is left, then report what remains.
    #[arg(long)]
    fix: bool,

    /// Print what `--fix` would change, as a unified diff, and write nothing. Exit status 1
    /// when there is something to fix (for CI), 0 when not.
    #[arg(long, conflicts_with_all = ["format", "json", "level"])]
    diff: bool,

    /// Check only the skills whose folder (SKILL.md, eval files, anything in it) changed in
    /// git since REF: from the merge base of REF and HEAD to the working tree, untracked files
    /// included (e.g. `origin/main` on a pull request).
    #[arg(long, value_name = "REF")]
    changed_since: Option<String>,

    /// Skills checked in parallel (default: the number of CPUs).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,

    /// Vet the skills as `skillwatch vet` does (behaviour analysis, a verdict per skill, no
    /// skillwatch.toml, inline ignores not honoured); exit 1 when any skill is malicious.
    #[arg(long, conflicts_with_all = ["fix", "diff", "explain", "list_rules", "profile", "deny", "warn", "allow", "level"])]
    vet: bool,

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
    if args.vet {
        return super::vet::run(super::vet::Args {
            paths: args.paths,
            format,
            json: false,
            card: false,
            color: args.color,
            jobs: args.jobs,
        });
    }
    if let Some(id) = &args.explain {
        report::explain(known_rule(id)?, format)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.list_rules {
        report::list_rules(format)?;
        return Ok(ExitCode::SUCCESS);
    }
    let config = check_config(&args)?;
    let options = options(&args, config.as_ref())?;
    let config_path = config.as_ref().map(|c| c.path.as_path());
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
    if let Some(reference) = &args.changed_since {
        dirs = changed_only(dirs, reference, &args.paths[0])?;
    }
    let skills = dirs.len();
    let threads = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1);
    if args.diff {
        return diff(&dirs, &options, threads, args.color.enabled());
    }
    let fixed = if args.fix {
        let fixed = fix::fix_all(&dirs, &options, threads)?;
        for applied in &fixed.applied {
            errln!("{applied}");
        }
        for path in &fixed.changed_meanwhile {
            errln!("{}: changed while being checked; not fixed", path.display());
        }
        errln!("{}", fixed.summary());
        Some(fixed)
    } else {
        None
    };
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
        Format::Github => Some(Document::Github),
    };
    let (counts, written) = match document {
        None => {
            let shown_config = config_path.map(below_current_folder);
            let printing = Printing {
                min_severity,
                color: args.color,
                config: shown_config.as_deref(),
            };
            human(&dirs, &options, threads, printing, promote)
        }
        Some(document) => {
            let mut files = check_skill_dirs(&dirs, &options, threads);
            promote(&mut files);
            let outcome = Outcome {
                skills,
                files: &files,
                profile: options.profile,
                config: config_path,
                fixed: fixed.as_ref().map(|f| f.applied.as_slice()),
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

/// The skills of `dirs` changed since `reference` (said on stderr, so a quiet run is not a
/// mystery).
fn changed_only(dirs: Discovered, reference: &str, at: &Path) -> anyhow::Result<Discovered> {
    let changed = ChangedSince::read(reference, at)?;
    let kept = changed.select(dirs.dirs());
    errln!(
        "--changed-since {reference}: {} of {} changed ({} since {})",
        count(kept.len(), "skill"),
        dirs.len(),
        count(changed.len(), "file"),
        &changed.base[..changed.base.len().min(12)]
    );
    Ok(Discovered::listed(kept))
}

/// `--diff`: the changes `--fix` would make, on stdout (colored as `--color` says); the count
/// on stderr.
fn diff(
    dirs: &Discovered,
    options: &CheckOptions,
    threads: usize,
    color: bool,
) -> anyhow::Result<ExitCode> {
    let fixes = fix::planned(dirs, options, threads);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for fix in &fixes {
        if let Err(error) = write!(out, "{}", fix.diff(color)).and_then(|()| out.flush()) {
            if error.kind() == std::io::ErrorKind::BrokenPipe {
                break;
            }
            return Err(error).context("writing the diff");
        }
    }
    let findings: usize = fixes.iter().map(|f| f.applied.len()).sum();
    if fixes.is_empty() {
        errln!("no finding has a fix to apply");
        return Ok(ExitCode::SUCCESS);
    }
    errln!(
        "would fix {} in {} (run with --fix to apply)",
        count(findings, "finding"),
        count(fixes.len(), "file")
    );
    Ok(ExitCode::from(1))
}

/// Check and print in human form, each folder's findings as soon as it and the folders before
/// it are checked (so a long run shows findings at once, and no checked text is held longer
/// than needed), then the summary line. The counts are of every finding, shown or not.
fn human(
    dirs: &Discovered,
    options: &CheckOptions,
    threads: usize,
    printing: Printing<'_>,
    promote: impl Fn(&mut Vec<FileReport>) + Sync,
) -> (Counts, std::io::Result<()>) {
    let out = std::io::BufWriter::new(std::io::stdout());
    let mut printer =
        report::human::Printer::new(out, printing.color.enabled(), printing.min_severity);
    let mut counts = Counts::default();
    let mut files = 0;
    // The first write error (a closed pipe) stops the printing, not the counting: the exit
    // status still says whether any error was found.
    let mut written = Ok(());
    check_skill_dirs_each(dirs, options, threads, |mut reports| {
        promote(&mut reports);
        for file in &reports {
            counts.add(file);
            if written.is_ok() {
                written = printer.file(file);
            }
        }
        files += reports.len();
    });
    if written.is_ok() {
        let line =
            report::summary_line(dirs.len(), files, options.profile, printing.config, counts);
        written = printer.summary(&line);
    }
    (counts, written)
}

/// `path` relative to the current folder when it lies below it (`skillwatch.toml` rather than
/// its absolute path, in the summary a person reads), else as it is.
fn below_current_folder(path: &Path) -> PathBuf {
    std::env::current_dir()
        .and_then(|cwd| cwd.canonicalize())
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
}

/// How the human report is printed.
#[derive(Clone, Copy)]
struct Printing<'a> {
    min_severity: Severity,
    color: Color,
    /// The skillwatch.toml applied, named in the summary line.
    config: Option<&'a Path>,
}

/// The `[check]` table that applies: `--config`'s, none under `--no-config`, else that of the
/// one skillwatch.toml governing every checked path. Paths governed by different files are
/// refused rather than checked under one of them.
fn check_config(args: &Args) -> anyhow::Result<Option<CheckConfig>> {
    if args.no_config {
        return Ok(None);
    }
    if let Some(path) = &args.config {
        return Ok(Some(CheckConfig::load(path)?));
    }
    let mut governing: Vec<PathBuf> = args
        .paths
        .iter()
        .filter_map(|p| governing_config(p, args.no_inline_ignore))
        .collect();
    governing.sort();
    governing.dedup();
    match governing.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(CheckConfig::load(one)?)),
        [a, b, ..] => bail!(
            "the checked paths are governed by different {} files ({} and {}): check them \
             separately, or choose one with --config (or none with --no-config)",
            config::FILE_NAME,
            a.display(),
            b.display()
        ),
    }
}

/// The skillwatch.toml governing the checked `path`: the nearest in or above it, except that
/// when vetting (`--no-inline-ignore`) a file in or below the path came with the skills being
/// vetted, which must not choose their own rules: the search starts above the path.
fn governing_config(path: &Path, vetting: bool) -> Option<PathBuf> {
    let found = config::nearest(path)?;
    if !vetting {
        return Some(found);
    }
    let path = path.canonicalize().ok()?;
    let folder = if path.is_dir() {
        path.as_path()
    } else {
        path.parent()?
    };
    if found.parent().is_some_and(|f| f.starts_with(folder)) {
        return config::nearest(folder.parent()?);
    }
    Some(found)
}

/// The table's options with the flags applied over them: `--profile` replaces its profile,
/// and `--allow`/`--warn`/`--deny` come after its rules, so they win.
fn options(args: &Args, config: Option<&CheckConfig>) -> anyhow::Result<CheckOptions> {
    let mut options = config.map(CheckConfig::options).unwrap_or_default();
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
    if let Some(profile) = args.profile {
        options.profile = match profile {
            ProfileArg::Default => Profile::Default,
            ProfileArg::Agentskills => Profile::AgentSkills,
        };
    }
    options.overrides.extend(overrides);
    if args.no_inline_ignore {
        options.inline_ignore = InlineIgnore::None;
    }
    Ok(options)
}

fn known_rule(id: &str) -> anyhow::Result<&'static str> {
    let upper = id.to_ascii_uppercase();
    match catalog::rule(&upper) {
        Some(rule) => Ok(rule.id),
        None => bail!("unknown rule `{id}`: see `skillwatch check --list-rules`"),
    }
}
