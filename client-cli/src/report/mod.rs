//! Renderers for `skillwatch check`: human (compiler-style), JSON and SARIF 2.1.0, plus the
//! rule list and `--explain`. They only format: every finding arrives as a core `FileReport`.

pub mod card;
pub mod github;
pub mod human;
mod json;
mod sarif;
pub mod vet;

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use skillwatch_core::checks::{FileReport, Profile, Rule, Severity, catalog};
use skillwatch_core::plural::count;

/// Output formats of `skillwatch check`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// `path:line:col: severity[ID]: message`, the source line and a caret.
    Human,
    /// One JSON document (docs/check.md; schemas/check-output.schema.json).
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// GitHub Actions annotations (workflow commands) on stdout and a markdown summary for
    /// `$GITHUB_STEP_SUMMARY` (docs/ci.md).
    Github,
}

/// Whether human output uses ANSI colors.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// When stdout is a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Color {
    /// Whether to color, deciding `auto` by the terminal and `NO_COLOR`.
    pub fn enabled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }
}

/// Everything one `check` run produced.
pub struct Outcome<'a> {
    /// Number of skills checked.
    pub skills: usize,
    /// One report per file checked.
    pub files: &'a [FileReport],
    /// The profile the checks ran under.
    pub profile: Profile,
    /// The skillwatch.toml whose `[check]` table applied, if any.
    pub config: Option<&'a Path>,
    /// Under `--fix`, the fixes written before this check.
    pub fixed: Option<&'a [crate::cmd::check::Applied]>,
    /// Findings below this severity are not printed (but are counted).
    pub min_severity: Severity,
}

/// Counts of findings by severity, and of those `skillwatch-ignore` comments silenced.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Findings of severity error.
    pub errors: usize,
    /// Findings of severity warning.
    pub warnings: usize,
    /// Findings of severity info.
    pub infos: usize,
    /// Findings silenced by `skillwatch-ignore` comments (in none of the above).
    pub ignored: usize,
}

impl Counts {
    /// Count one file's findings in.
    pub fn add(&mut self, file: &FileReport) {
        for d in &file.diagnostics {
            match d.severity {
                Severity::Error => self.errors += 1,
                Severity::Warning => self.warnings += 1,
                Severity::Info => self.infos += 1,
            }
        }
        self.ignored += file.ignored.len();
    }
}

impl Outcome<'_> {
    /// Counts over every file.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for file in self.files {
            counts.add(file);
        }
        counts
    }

    fn profile_name(&self) -> &'static str {
        profile_name(self.profile)
    }
}

/// The profile's name as `--profile` spells it.
pub fn profile_name(profile: Profile) -> &'static str {
    match profile {
        Profile::Default => "default",
        Profile::AgentSkills => "agentskills",
    }
}

/// The formats written as one document once every file is checked (human output is written
/// file by file instead: see [`human::Printer`]).
#[derive(Clone, Copy)]
pub enum Document {
    /// `--format json`.
    Json,
    /// `--format sarif`.
    Sarif,
    /// `--format github`.
    Github,
}

/// Write the outcome to stdout as `document`.
pub fn render(outcome: &Outcome<'_>, document: Document) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match document {
        Document::Json => json::render(&mut out, outcome)?,
        Document::Sarif => sarif::render(&mut out, outcome)?,
        Document::Github => github::render(&mut out, outcome)?,
    }
    out.flush()
}

/// `--list-rules`.
pub fn list_rules(format: Format) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if format != Format::Human {
        let rules: Vec<_> = catalog::all_rules().map(json::rule_json).collect();
        serde_json::to_writer_pretty(&mut out, &rules)?;
        return writeln!(out);
    }
    for rule in catalog::all_rules() {
        writeln!(
            out,
            "{}  {:<7}  {:<8}  {:<30}  {}",
            rule.id,
            rule.severity.as_str(),
            category_name(rule),
            rule.name,
            rule.summary
        )?;
    }
    Ok(())
}

/// `--explain ID`.
pub fn explain(id: &str, format: Format) -> io::Result<()> {
    let Some(rule) = catalog::rule(id) else {
        return Ok(());
    };
    let mut out = io::stdout().lock();
    if format != Format::Human {
        let mut value = json::rule_json(rule);
        value["explanation"] = catalog::explain(id).unwrap_or(rule.summary).into();
        serde_json::to_writer_pretty(&mut out, &value)?;
        return writeln!(out);
    }
    writeln!(out, "{} {} ({})", rule.id, rule.name, category_name(rule))?;
    writeln!(out)?;
    writeln!(out, "{}", rule.summary)?;
    if let Some(text) = catalog::explain(id).filter(|t| *t != rule.summary) {
        writeln!(out)?;
        writeln!(out, "{text}")?;
    }
    writeln!(out)?;
    for profile in [Profile::Default, Profile::AgentSkills] {
        writeln!(
            out,
            "severity under --profile {}: {}",
            profile_name(profile),
            catalog::severity(id, profile).as_str()
        )?;
    }
    Ok(())
}

/// The category as a lowercase word.
pub fn category_name(rule: &Rule) -> &'static str {
    use skillwatch_core::checks::Category;
    match rule.category {
        Category::Spec => "spec",
        Category::Quality => "quality",
        Category::Security => "security",
        Category::Eval => "eval",
        Category::Results => "results",
        Category::Directive => "directive",
    }
}

/// The summary line closing the human output. It names the skillwatch.toml applied, so a rule
/// it silenced is not a mystery.
pub fn summary_line(
    skills: usize,
    files: usize,
    profile: Profile,
    config: Option<&Path>,
    c: Counts,
) -> String {
    let from = config.map_or(String::new(), |p| {
        format!(", settings from {}", p.display())
    });
    let ignored = match c.ignored {
        0 => String::new(),
        n => format!("; {n} silenced by skillwatch-ignore comments"),
    };
    format!(
        "checked {} ({}, profile {}{from}): {}, {}, {}{ignored}",
        count(skills, "skill"),
        count(files, "file"),
        profile_name(profile),
        count(c.errors, "error"),
        count(c.warnings, "warning"),
        count(c.infos, "info")
    )
}
