//! The state one SKILL.md check threads through the rule modules: what is checked, under which
//! options, and the findings so far.

use std::borrow::Cow;
use std::path::Path;
use std::sync::OnceLock;

use super::files::SkillFiles;
use super::{CheckOptions, Diagnostic, Fix, Severity, catalog};
use crate::skill::SkillDocument;
use crate::text::{LineIndex, Span};

/// One check of one SKILL.md. Rule modules read the document through it and report through
/// [`Ctx::report`], which looks the severity up in the catalog for the active profile, so no
/// rule module decides severities on its own.
pub(crate) struct Ctx<'a> {
    /// The skill's folder (file references resolve against it).
    pub dir: &'a Path,
    /// The SKILL.md path the diagnostics are attached to.
    pub path: &'a Path,
    /// The parsed document.
    pub doc: &'a SkillDocument,
    /// Profile and overrides.
    pub options: &'a CheckOptions,
    /// The folder's name as the spec compares it with `name` (None for `/` and the like).
    pub dir_name: Option<String>,
    /// The folder's files as one walk found them (`skillwatch check`), or None to ask the
    /// file system each time (the editor's check of one buffer).
    files: Option<&'a SkillFiles>,
    lines: OnceLock<LineIndex>,
    out: Vec<Diagnostic>,
}

impl<'a> Ctx<'a> {
    /// Start a check.
    pub fn new(
        dir: &'a Path,
        path: &'a Path,
        doc: &'a SkillDocument,
        options: &'a CheckOptions,
        files: Option<&'a SkillFiles>,
    ) -> Ctx<'a> {
        Ctx {
            dir,
            path,
            doc,
            options,
            dir_name: folder_name(dir),
            files,
            lines: OnceLock::new(),
            out: Vec::new(),
        }
    }

    /// Record a finding of `rule` at `span`, at the rule's severity under the active profile.
    pub fn report(&mut self, rule: &'static str, span: Span, message: String) {
        self.report_fix(rule, span, message, None);
    }

    /// Record a finding with a mechanical repair.
    pub fn report_fix(
        &mut self,
        rule: &'static str,
        span: Span,
        message: String,
        fix: Option<Fix>,
    ) {
        let severity = catalog::severity(rule, self.options.profile);
        self.report_as(rule, severity, span, message, fix);
    }

    /// Record a finding at an explicit severity, for rules whose grade depends on the evidence
    /// (e.g. a placeholder-looking secret is a warning, a real-looking one an error).
    pub fn report_as(
        &mut self,
        rule: &'static str,
        severity: Severity,
        span: Span,
        message: String,
        fix: Option<Fix>,
    ) {
        debug_assert!(catalog::rule(rule).is_some(), "rule {rule} not in catalog");
        self.out.push(Diagnostic {
            rule,
            severity,
            path: self.path.to_path_buf(),
            span,
            message,
            fix,
        });
    }

    /// Line starts of the document, computed on first use.
    pub fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(&self.doc.text))
    }

    /// 1-based line number of `offset`, for messages that point at a second place.
    pub fn line_number(&self, offset: usize) -> usize {
        self.lines().line_of(offset) + 1
    }

    /// The line ending to use in inserted text, so a fix keeps a CRLF file CRLF.
    pub fn newline(&self) -> &'static str {
        match self.doc.line_ending {
            crate::skill::LineEnding::CrLf => "\r\n",
            _ => "\n",
        }
    }

    /// Whether `rel` (relative to the skill folder) is a file, symlinks followed.
    pub fn is_file(&self, rel: &str) -> bool {
        match self.files {
            Some(files) => files.is_file(self.dir, rel),
            None => self.dir.join(rel).is_file(),
        }
    }

    /// Whether `rel` is a folder, symlinks followed.
    pub fn is_dir(&self, rel: &str) -> bool {
        match self.files {
            Some(files) => files.is_dir(self.dir, rel),
            None => self.dir.join(rel).is_dir(),
        }
    }

    /// Whether anything is at `rel`, symlinks followed.
    pub fn exists(&self, rel: &str) -> bool {
        match self.files {
            Some(files) => files.exists(self.dir, rel),
            None => self.dir.join(rel).exists(),
        }
    }

    /// The text of the file at `rel`, if it is UTF-8 and at most `limit` bytes.
    pub fn text(&self, rel: &str, limit: u64) -> Option<Cow<'a, str>> {
        match self.files {
            Some(files) => files.text(self.dir, rel, limit),
            None => super::files::read_inside(self.dir, rel, limit),
        }
    }

    /// The files below the folder `rel`, when the walk listed all of them.
    pub fn listing_below(&self, rel: &str) -> Option<Vec<(&'a str, &'a super::files::Entry)>> {
        self.files?.below(rel)
    }

    /// The findings, in the order reported.
    pub fn finish(self) -> Vec<Diagnostic> {
        self.out
    }
}

/// The name of a skill folder. `.` and `..` are resolved through the file system, so
/// `skillwatch check .` inside a skill still compares `name` with the real folder name.
pub(crate) fn folder_name(dir: &Path) -> Option<String> {
    if let Some(name) = dir.file_name() {
        return Some(name.to_string_lossy().into_owned());
    }
    let real = dir.canonicalize().ok()?;
    real.file_name().map(|n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_resolve_dot() {
        assert_eq!(folder_name(Path::new("a/b")).as_deref(), Some("b"));
        let tmp = tempfile::tempdir().unwrap();
        let inner = tmp.path().join("my-skill");
        std::fs::create_dir_all(inner.join("sub")).unwrap();
        assert_eq!(
            folder_name(&inner.join("sub/..")).as_deref(),
            Some("my-skill")
        );
        assert_eq!(folder_name(Path::new("/")), None);
    }
}
