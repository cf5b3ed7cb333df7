//! SW311: symlinks in the skill folder (see [`crate::skill::link`] for why). Each link is
//! reported on its own path: one out of the folder is an error (its content is never read),
//! one inside it or to nothing a warning (a copy or an archive of the skill may not keep it).

use std::path::Path;

use super::super::files::{Kind, SkillFiles};
use super::super::{CheckOptions, Diagnostic, FileReport, Severity};
use crate::skill::link::{LinkTarget, target_of, written_target};
use crate::text::Span;

/// A report for every symlink the walk of `dir` found, except `skip` (a SKILL.md reported
/// already, as unreadable).
pub(crate) fn scan(
    dir: &Path,
    files: &SkillFiles,
    options: &CheckOptions,
    skip: Option<&Path>,
) -> Vec<FileReport> {
    let mut reports = Vec::new();
    for entry in files.entries() {
        if entry.kind != Kind::Symlink || skip == Some(entry.path.as_path()) {
            continue;
        }
        let mut diagnostics = vec![finding(dir, &entry.path)];
        options.apply_overrides(&mut diagnostics);
        if !diagnostics.is_empty() {
            reports.push(FileReport {
                path: entry.path.clone(),
                text: None,
                diagnostics,
                ignored: Vec::new(),
                dialect: None,
                capabilities: Vec::new(),
            });
        }
    }
    reports
}

/// Why a link inside the folder leads nowhere: nothing is there, or only links that never
/// reach a file (a loop: saying "does not exist" of a file the author can see misleads).
fn dangling(link: &Path, written: &str) -> String {
    let next = link.parent().map(|p| p.join(written));
    if next.is_some_and(|n| {
        n.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    }) {
        format!("symlink to `{written}`, a link that never reaches a file (a loop of links)")
    } else {
        format!("symlink to `{written}`, which does not exist")
    }
}

/// The SW311 finding for the symlink at `link`.
pub(crate) fn finding(dir: &Path, link: &Path) -> Diagnostic {
    let written = written_target(link).display().to_string();
    let (severity, message) = match target_of(dir, link) {
        LinkTarget::Outside => (
            Severity::Error,
            format!(
                "symlink to `{written}`, outside the skill folder: what it points at is not \
                 part of the skill and is not read; copy the file in or remove the link"
            ),
        ),
        LinkTarget::Dangling => (Severity::Warning, dangling(link, &written)),
        LinkTarget::Inside => (
            Severity::Warning,
            format!(
                "symlink to `{written}` inside the skill: installers and archives may not keep \
                 links (seed 002 refuses them in archives); copy the file instead"
            ),
        ),
    };
    Diagnostic {
        rule: "SW311",
        severity,
        path: link.to_path_buf(),
        span: Span::empty(0),
        message,
        fix: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_loop_of_links_is_told_from_a_missing_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        symlink("b", dir.join("a")).unwrap();
        symlink("a", dir.join("b")).unwrap();
        symlink("gone.md", dir.join("c")).unwrap();
        let a = finding(dir, &dir.join("a"));
        assert_eq!(a.severity, Severity::Warning);
        assert!(a.message.ends_with("(a loop of links)"), "{}", a.message);
        let c = finding(dir, &dir.join("c"));
        assert_eq!(c.message, "symlink to `gone.md`, which does not exist");
    }
}
