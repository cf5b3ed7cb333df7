//! The deterministic assertions of eval.yaml (skill-validator's types, anchors-evals.md b1.1),
//! checked against the agent's final output and the files it left in the workspace.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::evalspec::Assertion;

use super::glob;
use super::{Check, CheckGroup};

/// Files larger than this are read only up to this size by `file_contains`: an agent that
/// wrote a huge file must not exhaust memory, and eval values sit near the start of files.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// How much of the output a failure message quotes.
const QUOTE_CHARS: usize = 160;

/// Where a trial's files are, for the `file_*` assertions.
#[derive(Debug, Clone, Copy)]
pub struct Workspace<'a> {
    /// The trial's working directory.
    pub root: &'a Path,
    /// Folders (relative to `root`) the agent did not write: the staged skills. A glob like
    /// `**/SKILL.md` must not pass only because the with-skill condition staged a skill.
    pub skip: &'a [PathBuf],
}

/// Check one assertion.
pub fn check(assertion: &Assertion, output: &str, ws: Workspace<'_>) -> Check {
    let result = match assertion {
        Assertion::OutputContains { value } => {
            contains_ci(output, value).then_some(()).ok_or_else(|| {
                format!(
                    "expected the output to contain {value:?} (ignoring case), found {}",
                    quote(output)
                )
            })
        }
        Assertion::OutputNotContains { value } => {
            (!contains_ci(output, value)).then_some(()).ok_or_else(|| {
                format!(
                    "expected the output not to contain {value:?} (ignoring case), found it in {}",
                    quote(output)
                )
            })
        }
        Assertion::OutputMatches { pattern } => regex_match(pattern, output).and_then(|m| {
            m.then_some(()).ok_or_else(|| {
                format!(
                    "expected the output to match /{pattern}/i, found {}",
                    quote(output)
                )
            })
        }),
        Assertion::OutputNotMatches { pattern } => regex_match(pattern, output).and_then(|m| {
            (!m).then_some(()).ok_or_else(|| {
                format!(
                    "expected the output not to match /{pattern}/i, found a match in {}",
                    quote(output)
                )
            })
        }),
        Assertion::FileExists { path } => file_exists(ws, path),
        Assertion::FileNotExists { path } => file_not_exists(ws, path),
        Assertion::FileContains { path, value } => file_contains(ws, path, value),
        Assertion::FileNotContains { path, value } => file_not_contains(ws, path, value),
        Assertion::ExitSuccess => (!output.trim().is_empty())
            .then_some(())
            .ok_or_else(|| "expected a non-empty final output, found none".to_owned()),
    };
    decided(assertion, result)
}

/// The check of `assertion` given its result (`Err`: why it failed), however it was decided.
pub fn decided(assertion: &Assertion, result: Result<(), String>) -> Check {
    let (kind, description) = label(assertion);
    Check {
        group: CheckGroup::Assertion,
        kind: kind.to_owned(),
        description,
        passed: result.is_ok(),
        message: result.err(),
    }
}

/// An assertion's kind and its description for people.
pub fn label(assertion: &Assertion) -> (&'static str, String) {
    match assertion {
        Assertion::OutputContains { value } => {
            ("output_contains", format!("output contains {value:?}"))
        }
        Assertion::OutputNotContains { value } => (
            "output_not_contains",
            format!("output does not contain {value:?}"),
        ),
        Assertion::OutputMatches { pattern } => {
            ("output_matches", format!("output matches /{pattern}/i"))
        }
        Assertion::OutputNotMatches { pattern } => (
            "output_not_matches",
            format!("output does not match /{pattern}/i"),
        ),
        Assertion::FileExists { path } => ("file_exists", format!("a file matches {path}")),
        Assertion::FileNotExists { path } => ("file_not_exists", format!("no file matches {path}")),
        Assertion::FileContains { path, value } => (
            "file_contains",
            format!("a file matching {path} contains {value:?}"),
        ),
        Assertion::FileNotContains { path, value } => (
            "file_not_contains",
            format!("no file matching {path} contains {value:?}"),
        ),
        Assertion::ExitSuccess => (
            "exit_success",
            "the agent produced a final output".to_owned(),
        ),
    }
}

fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

/// A match, or why the regex engine gave up (its backtracking limit on a pathological input).
fn regex_match(pattern: &crate::evalspec::Pattern, text: &str) -> Result<bool, String> {
    pattern
        .compile()
        .is_match(text)
        .map_err(|e| format!("could not match /{pattern}/i against the output: {e}"))
}

fn file_exists(ws: Workspace<'_>, path: &str) -> Result<(), String> {
    let found = glob::find(ws.root, path, ws.skip);
    if found.is_empty() {
        return Err(format!(
            "expected a file matching {path} in the workspace, found none"
        ));
    }
    Ok(())
}

fn file_not_exists(ws: Workspace<'_>, path: &str) -> Result<(), String> {
    let found = glob::find(ws.root, path, ws.skip);
    match found.first() {
        None => Ok(()),
        Some(f) => Err(format!(
            "expected no file matching {path}, found {} ({} in all)",
            rel(ws.root, f),
            found.len()
        )),
    }
}

fn file_contains(ws: Workspace<'_>, path: &str, value: &str) -> Result<(), String> {
    let found = glob::find(ws.root, path, ws.skip);
    if found.is_empty() {
        return Err(format!(
            "expected a file matching {path} containing {value:?}, found no file matching {path}"
        ));
    }
    if found.iter().any(|f| read_text(f).contains(value)) {
        return Ok(());
    }
    let names: Vec<String> = found.iter().take(5).map(|f| rel(ws.root, f)).collect();
    Err(format!(
        "expected a file matching {path} to contain {value:?} (case-sensitive), found it in none of {}",
        names.join(", ")
    ))
}

fn file_not_contains(ws: Workspace<'_>, path: &str, value: &str) -> Result<(), String> {
    let found = glob::find(ws.root, path, ws.skip);
    match found.iter().find(|f| read_text(f).contains(value)) {
        None => Ok(()),
        Some(f) => Err(format!(
            "expected no file matching {path} to contain {value:?}, found it in {}",
            rel(ws.root, f)
        )),
    }
}

/// A file's first [`MAX_FILE_BYTES`] as text (invalid UTF-8 replaced); unreadable reads as
/// empty.
fn read_text(path: &Path) -> String {
    let mut bytes = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(MAX_FILE_BYTES).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The output, shortened, for a message.
pub(super) fn quote(output: &str) -> String {
    let trimmed = output.trim();
    if trimmed.is_empty() {
        return "an empty output".to_owned();
    }
    let mut q: String = trimmed.chars().take(QUOTE_CHARS).collect();
    if trimmed.chars().count() > QUOTE_CHARS {
        q.push('…');
    }
    format!("{q:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalspec::Pattern;

    fn ws(root: &Path) -> Workspace<'_> {
        Workspace { root, skip: &[] }
    }

    #[test]
    fn output_assertions_ignore_case_and_explain_failures() {
        let tmp = tempfile::tempdir().unwrap();
        let w = ws(tmp.path());
        let out = "Created Invoice.CSV with 3 rows";
        let ok = check(
            &Assertion::OutputContains {
                value: "invoice.csv".into(),
            },
            out,
            w,
        );
        assert!(ok.passed && ok.message.is_none());
        let bad = check(
            &Assertion::OutputNotContains {
                value: "ROWS".into(),
            },
            out,
            w,
        );
        assert!(!bad.passed);
        assert!(bad.message.unwrap().contains("not to contain \"ROWS\""));
        let m = check(
            &Assertion::OutputMatches {
                pattern: Pattern::new(r"\d+ ROWS").unwrap(),
            },
            out,
            w,
        );
        assert!(m.passed);
        let nm = check(
            &Assertion::OutputNotMatches {
                pattern: Pattern::new("error").unwrap(),
            },
            out,
            w,
        );
        assert!(nm.passed);
        let e = check(&Assertion::ExitSuccess, "  \n", w);
        assert!(!e.passed && e.message.unwrap().contains("non-empty final output"));
    }

    #[test]
    fn file_assertions_use_globs_and_skip_staged_skills() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::write(root.join("out/a.csv"), "x,y\n1,2\n").unwrap();
        std::fs::create_dir_all(root.join(".claude/skills/s")).unwrap();
        std::fs::write(root.join(".claude/skills/s/SKILL.md"), "secret").unwrap();
        let skip = [PathBuf::from(".claude/skills")];
        let w = Workspace { root, skip: &skip };
        let exists = |p: &str| check(&Assertion::FileExists { path: p.into() }, "", w);
        assert!(exists("out/*.csv").passed);
        assert!(
            !exists("**/SKILL.md").passed,
            "staged skills are not the agent's files"
        );
        let not = check(
            &Assertion::FileNotExists {
                path: "**/*.csv".into(),
            },
            "",
            w,
        );
        assert!(!not.passed && not.message.unwrap().contains("out/a.csv"));
        let c = |v: &str| {
            check(
                &Assertion::FileContains {
                    path: "out/*.csv".into(),
                    value: v.into(),
                },
                "",
                w,
            )
        };
        assert!(c("1,2").passed);
        assert!(!c("X,Y").passed, "file_contains is case-sensitive");
        let nc = check(
            &Assertion::FileNotContains {
                path: "**/*.md".into(),
                value: "secret".into(),
            },
            "",
            w,
        );
        assert!(nc.passed, "the staged SKILL.md is skipped");
        let none = check(
            &Assertion::FileContains {
                path: "missing/*".into(),
                value: "x".into(),
            },
            "",
            w,
        );
        assert!(
            none.message
                .unwrap()
                .contains("found no file matching missing/*")
        );
    }
}
