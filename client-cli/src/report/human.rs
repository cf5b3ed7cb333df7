//! Compiler-style output: `path:line:col: error[SW101]: message`, the source line, a caret
//! under the offending text, and the fix when there is one.

use std::io::{self, Write};

use skillwatch_core::checks::{Diagnostic, FileReport, Severity};
use skillwatch_core::text::{LineIndex, Span};
use unicode_width::UnicodeWidthStr as _;

/// Lines longer than this are shown as a window around the finding.
const MAX_SHOWN_CHARS: usize = 120;
/// Characters shown before the finding in a windowed line.
const CONTEXT_BEFORE: usize = 30;

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn severity(&self, severity: Severity) -> String {
        let code = match severity {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "1;36",
        };
        self.paint(code, severity.as_str())
    }
}

/// Rules whose finding states a fact about a folder of skills, repeated on each skill it
/// concerns (so the editor shows it on whichever SKILL.md is open): SW222, the folder's
/// listing is over Claude Code's budget. In the terminal it is printed once per folder, not
/// once per skill (2,921 identical lines for one folder); `--json` and SARIF keep every one.
const ONCE_PER_FOLDER: &[&str] = &["SW222"];

/// Human output written file by file, so `skillwatch check` can show a folder's findings
/// while later folders are still being checked.
pub struct Printer<W> {
    out: W,
    style: Style,
    min_severity: Severity,
    /// The (rule, folder of skills) pairs of [`ONCE_PER_FOLDER`] already printed.
    said: std::collections::HashSet<(&'static str, std::path::PathBuf)>,
}

impl<W: Write> Printer<W> {
    /// A printer of findings at or above `min_severity`.
    pub fn new(out: W, color: bool, min_severity: Severity) -> Self {
        Printer {
            out,
            style: Style { on: color },
            min_severity,
            said: Default::default(),
        }
    }

    /// Write the file's shown findings.
    pub fn file(&mut self, file: &FileReport) -> io::Result<()> {
        let min_severity = self.min_severity;
        let shown: Vec<&Diagnostic> = file
            .diagnostics
            .iter()
            .filter(|d| d.severity <= min_severity)
            .filter(|d| self.first_in_folder(d))
            .collect();
        if shown.is_empty() {
            return Ok(());
        }
        let index = file.text.as_deref().map(LineIndex::new);
        for d in shown {
            diagnostic(&mut self.out, &self.style, file, index.as_ref(), d)?;
        }
        Ok(())
    }

    /// False for a [`ONCE_PER_FOLDER`] finding already printed for its folder of skills (the
    /// folder holding the skill's folder).
    fn first_in_folder(&mut self, d: &Diagnostic) -> bool {
        let Some(rule) = ONCE_PER_FOLDER.iter().find(|r| **r == d.rule) else {
            return true;
        };
        let folder = d.path.parent().and_then(|skill| skill.parent());
        let folder = folder.map(|f| f.to_path_buf()).unwrap_or_default();
        self.said.insert((rule, folder))
    }

    /// Write the closing summary line and flush.
    pub fn summary(&mut self, line: &str) -> io::Result<()> {
        writeln!(self.out, "{}", self.style.paint("1", line))?;
        self.out.flush()
    }
}

fn diagnostic(
    out: &mut impl Write,
    style: &Style,
    file: &FileReport,
    index: Option<&LineIndex>,
    d: &Diagnostic,
) -> io::Result<()> {
    let head = format!("{}[{}]", style.severity(d.severity), d.rule);
    let (Some(text), Some(index)) = (file.text.as_deref(), index) else {
        writeln!(out, "{}: {head}: {}", d.path.display(), d.message)?;
        return writeln!(out);
    };
    let at = index.line_col(text, d.span.start);
    writeln!(
        out,
        "{}:{}:{}: {head}: {}",
        d.path.display(),
        at.line,
        at.column,
        d.message
    )?;
    let line = index.line_of(d.span.start);
    let (shown, caret_at, caret_len) = window(text, index, line, d.span);
    let number = (line + 1).to_string();
    let gutter = " ".repeat(number.len());
    let bar = style.paint("1;34", "|");
    writeln!(out, "{} {bar} {shown}", style.paint("1;34", &number))?;
    let mut marker = format!("{}{}", " ".repeat(caret_at), "^".repeat(caret_len));
    if let Some(fix) = &d.fix {
        marker.push_str(&format!(" fix: {}", fix.title));
    }
    let marker = match d.severity {
        Severity::Error => style.paint("1;31", &marker),
        Severity::Warning => style.paint("1;33", &marker),
        Severity::Info => style.paint("1;36", &marker),
    };
    writeln!(out, "{gutter} {bar} {marker}")?;
    writeln!(out)
}

/// The line to show (windowed when long, tabs and control characters as spaces), the caret's
/// column in it and the caret's length, in terminal columns: a CJK character or an emoji takes
/// two, a combining mark none (`unicode-width`), so the caret sits under the span whatever
/// comes before it on the line.
fn window(text: &str, index: &LineIndex, line: usize, span: Span) -> (String, usize, usize) {
    let (shown, at, len) = window_chars(text, index, line, span);
    let chars: Vec<char> = shown.chars().collect();
    let width = |cs: &[char]| cs.iter().collect::<String>().width();
    let at_end = (at + len).min(chars.len());
    let caret_at = width(&chars[..at.min(chars.len())]);
    let caret_len = width(&chars[at.min(chars.len())..at_end]).max(1);
    (shown, caret_at, caret_len)
}

/// [`window`] in characters.
fn window_chars(text: &str, index: &LineIndex, line: usize, span: Span) -> (String, usize, usize) {
    let bounds = index.line_span(text, line);
    let chars: Vec<char> = text[bounds.start..bounds.end]
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let start_col = index.line_col(text, span.start).column as usize - 1;
    let end = span.end.min(bounds.end).max(span.start);
    let end_col = index.line_col(text, end).column as usize - 1;
    let caret_len = end_col.saturating_sub(start_col).max(1);
    if chars.len() <= MAX_SHOWN_CHARS {
        return (chars.iter().collect(), start_col, caret_len);
    }
    let from = start_col.saturating_sub(CONTEXT_BEFORE);
    let to = (from + MAX_SHOWN_CHARS).min(chars.len());
    let mut shown = String::new();
    let mut caret_at = start_col - from;
    if from > 0 {
        shown.push('…');
        caret_at += 1;
    }
    shown.extend(&chars[from..to]);
    if to < chars.len() {
        shown.push('…');
    }
    let caret_len = caret_len.min(to.saturating_sub(start_col).max(1));
    (shown, caret_at, caret_len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_width::UnicodeWidthChar as _;

    #[test]
    fn a_folder_finding_is_printed_once_per_folder() {
        let report = |path: &str, rule: &'static str| FileReport {
            path: path.into(),
            text: None,
            diagnostics: vec![Diagnostic {
                rule,
                severity: Severity::Info,
                path: path.into(),
                span: Span::new(0, 0),
                message: "over budget".into(),
                fix: None,
            }],
            ignored: Vec::new(),
            dialect: None,
            capabilities: Vec::new(),
        };
        let mut out = Vec::new();
        let mut printer = Printer::new(&mut out, false, Severity::Info);
        for path in ["a/s1/SKILL.md", "a/s2/SKILL.md", "b/s3/SKILL.md"] {
            printer.file(&report(path, "SW222")).unwrap();
            printer.file(&report(path, "SW208")).unwrap();
        }
        let out = String::from_utf8(out).unwrap();
        let said = |rule: &str| out.matches(&format!("[{rule}]")).count();
        assert_eq!((said("SW222"), said("SW208")), (2, 3), "{out}");
        assert!(
            out.contains("a/s1/SKILL.md: info[SW222]")
                && out.contains("b/s3/SKILL.md: info[SW222]")
        );
    }

    #[test]
    fn caret_sits_under_the_span() {
        let text = "---\nname: Bad_Name\n---\n";
        let index = LineIndex::new(text);
        let start = text.find("Bad").unwrap();
        let (shown, at, len) = window(text, &index, 1, Span::new(start, start + 8));
        assert_eq!(shown, "name: Bad_Name");
        assert_eq!((at, len), (6, 8));
    }

    #[test]
    fn long_lines_are_windowed_around_the_span() {
        let text = format!(
            "description: {}TARGET{}\n",
            "a".repeat(300),
            "b".repeat(300)
        );
        let index = LineIndex::new(&text);
        let start = text.find("TARGET").unwrap();
        let (shown, at, len) = window(&text, &index, 0, Span::new(start, start + 6));
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        let caret: String = shown.chars().skip(at).take(len).collect();
        assert_eq!(caret, "TARGET");
    }

    /// The caret's columns are the terminal's: after CJK and emoji (two columns each) and
    /// combining marks (none) it still sits under the span.
    #[test]
    fn carets_count_terminal_columns_after_wide_and_combining_characters() {
        for (line, target, expected_at) in [
            ("description: 日本語の説明 BAD", "BAD", 26),
            ("description: Reads 😀 PDFs: fast", ": fast", 26),
            ("name: cafe\u{301} BAD", "BAD", 11),
            ("名前: 表 BAD", "BAD", 9),
        ] {
            let text = format!("{line}\n");
            let index = LineIndex::new(&text);
            let start = text.find(target).unwrap();
            let (shown, at, len) = window(&text, &index, 0, Span::new(start, start + target.len()));
            assert_eq!(at, expected_at, "{line}");
            assert_eq!(len, target.width(), "{line}");
            // what the terminal shows at those columns is the span
            let mut col = 0;
            let under: String = shown
                .chars()
                .filter(|c| {
                    let here = col;
                    col += c.width().unwrap_or(0);
                    here >= at && here < at + len
                })
                .collect();
            assert_eq!(under, target, "{line}");
        }
    }

    #[test]
    fn empty_spans_get_one_caret_and_tabs_become_spaces() {
        let text = "\tx\n";
        let index = LineIndex::new(text);
        let (shown, at, len) = window(text, &index, 0, Span::empty(1));
        assert_eq!((shown.as_str(), at, len), (" x", 1, 1));
    }
}
