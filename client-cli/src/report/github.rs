//! `--format github`: GitHub Actions workflow commands, one line per finding
//! (`::error file=F,line=L,col=C,endLine=..,endColumn=..,title=T::message`), which GitHub
//! turns into annotations on the pull request's diff; and a markdown summary, appended to
//! the file `$GITHUB_STEP_SUMMARY` names (the job's summary page), or printed on stderr
//! outside Actions. `check`, `run` and `compare` share this module, so every annotation is
//! escaped one way: the syntax is GitHub's toolkit (`@actions/core` `command.ts`): in the
//! message `%`, CR and LF are percent-encoded; in properties also `:` and `,`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use skillwatch_core::checks::Severity;
use skillwatch_core::text::LineIndex;

use super::{Outcome, profile_name};
use skillwatch_core::plural::count;

/// An annotation's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// `::error`.
    Error,
    /// `::warning`.
    Warning,
    /// `::notice`.
    Notice,
}

impl Level {
    fn command(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

impl From<Severity> for Level {
    fn from(s: Severity) -> Level {
        match s {
            Severity::Error => Level::Error,
            Severity::Warning => Level::Warning,
            Severity::Info => Level::Notice,
        }
    }
}

/// Where an annotation points: a file, with a range when known.
#[derive(Debug, Clone, Default)]
pub struct Place {
    /// The file, relative to the working folder when below it (the repository root in CI).
    pub file: Option<PathBuf>,
    /// 1-based start line and column, end line and column.
    pub range: Option<(u32, u32, u32, u32)>,
}

/// One workflow command line (without the newline).
pub fn annotation(level: Level, place: &Place, title: &str, message: &str) -> String {
    let mut props = Vec::new();
    if let Some(file) = &place.file {
        props.push(format!("file={}", property(&file.to_string_lossy())));
    }
    if let Some((line, col, end_line, end_col)) = place.range {
        props.push(format!("line={line}"));
        props.push(format!("endLine={end_line}"));
        // GitHub reads columns only on a one-line range.
        if line == end_line {
            props.push(format!("col={col}"));
            props.push(format!("endColumn={}", end_col.max(col)));
        }
    }
    if !title.is_empty() {
        props.push(format!("title={}", property(title)));
    }
    let props = if props.is_empty() {
        String::new()
    } else {
        format!(" {}", props.join(","))
    };
    format!("::{}{props}::{}", level.command(), data(message))
}

/// Escape a command's message.
pub fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape a property value.
pub fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `path` relative to the current folder when below it.
pub fn relative(path: &Path) -> PathBuf {
    let cwd = std::env::current_dir().ok();
    let canonical = path.canonicalize().ok();
    cwd.as_deref()
        .and_then(|c| {
            let c = c.canonicalize().ok()?;
            canonical
                .as_deref()?
                .strip_prefix(c)
                .ok()
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| path.to_path_buf())
}

/// Append `markdown` to `$GITHUB_STEP_SUMMARY`, or print it on stderr when unset.
pub fn step_summary(markdown: &str) -> io::Result<()> {
    match std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        Some(path) => {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)?;
            file.write_all(markdown.as_bytes())
        }
        None => io::stderr().write_all(markdown.as_bytes()),
    }
}

/// `check --format github`: an annotation per shown finding on stdout, the summary table for
/// the step summary.
pub fn render(out: &mut impl Write, outcome: &Outcome<'_>) -> io::Result<()> {
    let mut rows = Vec::new();
    for file in outcome.files {
        let index = file.text.as_deref().map(LineIndex::new);
        let shown_file = relative(&file.path);
        for d in &file.diagnostics {
            if d.severity > outcome.min_severity {
                continue;
            }
            let range = match (&index, file.text.as_deref()) {
                (Some(index), Some(text)) => {
                    let a = index.line_col(text, d.span.start);
                    let b = index.line_col(text, d.span.end);
                    Some((a.line, a.column, b.line, b.column))
                }
                _ => None,
            };
            let place = Place {
                file: Some(shown_file.clone()),
                range,
            };
            let name = skillwatch_core::checks::catalog::rule(d.rule).map_or("", |r| r.name);
            let title = format!("{} {name}", d.rule);
            writeln!(
                out,
                "{}",
                annotation(d.severity.into(), &place, title.trim(), &d.message)
            )?;
            rows.push(format!(
                "| {} | `{}:{}` | {} | {} |\n",
                d.severity.as_str(),
                cell(&shown_file.to_string_lossy()),
                range.map_or(1, |r| r.0),
                d.rule,
                cell(&d.message)
            ));
        }
    }
    out.flush()?;
    let c = outcome.counts();
    let mut md = format!(
        "### skillwatch check\n\n{} checked (profile {}): **{}**, {}, {}\n\n",
        count(outcome.skills, "skill"),
        profile_name(outcome.profile),
        count(c.errors, "error"),
        count(c.warnings, "warning"),
        count(c.infos, "info"),
    );
    if !rows.is_empty() {
        md.push_str("| severity | where | rule | finding |\n|---|---|---|---|\n");
        for row in &rows {
            md.push_str(row);
        }
        md.push('\n');
    }
    step_summary(&md)
}

/// Text safe in a markdown table cell.
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_are_escaped() {
        let place = Place {
            file: Some("a,b:c.md".into()),
            range: Some((3, 2, 3, 9)),
        };
        assert_eq!(
            annotation(Level::Warning, &place, "SW1 x", "100% sure\nnext: a,b"),
            "::warning file=a%2Cb%3Ac.md,line=3,endLine=3,col=2,endColumn=9,title=SW1 x::100%25 sure%0Anext: a,b"
        );
    }

    #[test]
    fn columns_only_on_one_line_ranges() {
        let place = Place {
            file: Some("f".into()),
            range: Some((1, 4, 2, 1)),
        };
        assert_eq!(
            annotation(Level::Error, &place, "", "m"),
            "::error file=f,line=1,endLine=2::m"
        );
        assert_eq!(
            annotation(Level::Notice, &Place::default(), "", "m"),
            "::notice::m"
        );
    }
}
