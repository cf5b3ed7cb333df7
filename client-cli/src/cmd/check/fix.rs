//! `skillwatch check --fix` and `--diff`: take the findings' fixes round by round in memory,
//! then write the files (`--fix`) or print the change as a patch (`--diff`). A fix is a repair
//! the rule marks safe without review (the same ones the editor offers as quick fixes);
//! findings silenced by `--allow` or `[check]` are not fixed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use skillwatch_core::checks::{
    CheckOptions, Diagnostic, FileReport, MAX_FIX_ROUNDS, Shape, check_eval_text,
    check_skill_dirs_each, check_skill_document, fix_rounds,
};
use skillwatch_core::skill::{Discovered, SKILL_FILE, SkillDocument};
use skillwatch_core::text::{BOM, LineIndex};

use skillwatch_core::plural::count;

/// One fix written: where (in the text it was applied to), by which rule, and what it did.
/// Listed so a bulk edit can be reviewed; in the JSON report as `fixed`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Applied {
    /// The file.
    pub path: PathBuf,
    /// 1-based line of the finding.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// The rule whose fix it was.
    pub rule: &'static str,
    /// The fix's title ("Move `version` under `metadata`").
    pub title: String,
}

impl std::fmt::Display for Applied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (path, line, column) = (self.path.display(), self.line, self.column);
        write!(
            f,
            "{path}:{line}:{column}: fixed {}: {}",
            self.rule, self.title
        )
    }
}

/// What `--fix` did.
#[derive(Debug, Default)]
pub struct Fixed {
    /// Each fix applied, over every round.
    pub applied: Vec<Applied>,
    /// Files written.
    pub files: BTreeSet<PathBuf>,
    /// Files left alone because they changed on disk while being checked.
    pub changed_meanwhile: BTreeSet<PathBuf>,
}

impl Fixed {
    /// The line printed after fixing, e.g. "fixed 3 findings in 2 files".
    pub fn summary(&self) -> String {
        if self.applied.is_empty() {
            return "no finding has a fix to apply".into();
        }
        format!(
            "fixed {} in {}",
            count(self.applied.len(), "finding"),
            count(self.files.len(), "file")
        )
    }
}

/// Check `dirs`, write every fix that applies, and check again while something changed (a
/// fix in one file can change another file's findings: an eval file's `skill` follows the
/// SKILL.md's `name`).
pub fn fix_all(dirs: &Discovered, options: &CheckOptions, threads: usize) -> anyhow::Result<Fixed> {
    let mut fixed = Fixed::default();
    for _ in 0..MAX_FIX_ROUNDS {
        let mut changed = false;
        for fix in planned(dirs, options, threads) {
            if write_fixed(&fix.path, &fix.before, &fix.after)? {
                fixed.applied.extend(fix.applied);
                fixed.files.insert(fix.path);
                changed = true;
            } else {
                fixed.changed_meanwhile.insert(fix.path);
            }
        }
        if !changed {
            break;
        }
    }
    Ok(fixed)
}

/// What `--fix` would change, file by file, with nothing written: `--diff`.
pub fn planned(dirs: &Discovered, options: &CheckOptions, threads: usize) -> Vec<FileFix> {
    let mut fixes = Vec::new();
    // each folder's files are fixed as they arrive, so only the texts that change are held
    check_skill_dirs_each(dirs, options, threads, |reports| {
        // a folder's first report is its SKILL.md, directly in the folder
        let Some(dir) = reports.first().and_then(|r| r.path.parent()) else {
            return;
        };
        let dir = dir.to_path_buf();
        fixes.extend(
            reports
                .into_iter()
                .filter_map(|r| fix_file(r, &dir, options)),
        );
    });
    fixes
}

/// One file's text before and after its fixes.
#[derive(Debug)]
pub struct FileFix {
    /// The file.
    pub path: PathBuf,
    /// The text checked (without a leading BOM, which is kept when writing).
    pub before: String,
    /// The text once every fix applied.
    pub after: String,
    /// The fixes, in the order taken; rounds after the first point into the text as the
    /// rounds before left it.
    pub applied: Vec<Applied>,
}

impl FileFix {
    /// The change as a unified diff whose headers name the file as it was found (relative
    /// paths stay relative, so `git apply -p0` or `patch -p0` in the same folder takes it),
    /// colored as git colors one when `color`.
    pub fn diff(&self, color: bool) -> String {
        let plain = self.unified_diff();
        if !color {
            return plain;
        }
        plain
            .split_inclusive('\n')
            .map(|line| {
                let code = if line.starts_with("---") || line.starts_with("+++") {
                    "1"
                } else if line.starts_with("@@") {
                    "36"
                } else if line.starts_with('-') {
                    "31"
                } else if line.starts_with('+') {
                    "32"
                } else {
                    return line.to_string();
                };
                let (text, end) = match line.strip_suffix('\n') {
                    Some(text) => (text, "\n"),
                    None => (line, ""),
                };
                format!("\x1b[{code}m{text}\x1b[0m{end}")
            })
            .collect()
    }

    fn unified_diff(&self) -> String {
        let path = self.path.display().to_string();
        // a BOM the checked text leaves out must be in the patch, or a hunk on the first
        // line would not match the file; only the patch needs it, so only it reads the file
        let kept = !self.before.starts_with(BOM) && starts_with_bom(&self.path);
        let bom = if kept { BOM } else { "" };
        let (before, after) = (
            format!("{bom}{}", self.before),
            format!("{bom}{}", self.after),
        );
        similar::TextDiff::from_lines(&before, &after)
            .unified_diff()
            .header(&path, &path)
            .to_string()
    }
}

/// `report`'s fixes taken round by round in memory ([`fix_rounds`]), the file checked again
/// after each. None when nothing applies.
fn fix_file(report: FileReport, dir: &Path, options: &CheckOptions) -> Option<FileFix> {
    let FileReport {
        path,
        text,
        diagnostics,
        ..
    } = report;
    let before = text?;
    let (rounds, after) = fix_rounds(Shape::of_path(&path), &before, diagnostics, |text| {
        recheck(&path, text, dir, options)
    })?;
    let mut applied = Vec::new();
    for round in &rounds {
        let lines = LineIndex::new(&round.text);
        applied.extend(round.taken.iter().map(|d| {
            let at = lines.line_col(&round.text, d.span.start);
            Applied {
                path: path.clone(),
                line: at.line,
                column: at.column,
                rule: d.rule,
                title: d.fix.as_ref().map_or(String::new(), |f| f.title.clone()),
            }
        }));
    }
    Some(FileFix {
        path,
        before,
        after,
        applied,
    })
}

/// The findings in `text` as `path`'s content: a SKILL.md or an eval file (other files, whose
/// findings carry no fixes, yield none).
fn recheck(path: &Path, text: &str, dir: &Path, options: &CheckOptions) -> Vec<Diagnostic> {
    if path.file_name().is_some_and(|n| n == SKILL_FILE) {
        let doc = SkillDocument::parse(text.to_owned());
        check_skill_document(dir, path, &doc, options)
    } else {
        check_eval_text(path, text, dir, options)
    }
}

/// Whether the file at `path` starts with a [`BOM`].
fn starts_with_bom(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 3];
    std::fs::File::open(path)
        .and_then(|mut file| file.read_exact(&mut head))
        .is_ok_and(|()| head == BOM.as_bytes())
}

/// Replace the content of `path` by `new`, only while it still holds `checked` (the text the
/// fixes were computed for; a leading BOM, which the check does not see, is kept). The new
/// content is written to a file beside it and renamed over it, so a failure midway leaves the
/// old content whole. Returns false when the file changed meanwhile and was left alone.
fn write_fixed(path: &Path, checked: &str, new: &str) -> anyhow::Result<bool> {
    // a symlinked file is rewritten where it lives, and the link kept
    let real = path
        .canonicalize()
        .with_context(|| format!("{}: cannot fix", path.display()))?;
    let on_disk =
        std::fs::read(&real).with_context(|| format!("{}: cannot read", path.display()))?;
    let kept = match on_disk.strip_prefix(BOM.as_bytes()) {
        Some(rest) if rest == checked.as_bytes() => BOM.as_bytes(),
        _ if on_disk == checked.as_bytes() => &[][..],
        _ => return Ok(false),
    };
    let name = real
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    let temporary = real.with_file_name(format!(".{name}.skillwatch-fix"));
    let write = || -> std::io::Result<()> {
        let mut content = kept.to_vec();
        content.extend_from_slice(new.as_bytes());
        std::fs::write(&temporary, content)?;
        std::fs::set_permissions(&temporary, std::fs::metadata(&real)?.permissions())?;
        std::fs::rename(&temporary, &real)
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&temporary);
        return Err(e).with_context(|| format!("{}: cannot write the fixes", path.display()));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_is_colored_line_by_line_only_when_asked() {
        let fix = FileFix {
            path: PathBuf::from("a/SKILL.md"),
            before: "---\nname: A\n---\n".into(),
            after: "---\nname: a\n---\n".into(),
            applied: Vec::new(),
        };
        let plain = fix.diff(false);
        assert_eq!(
            plain,
            "--- a/SKILL.md\n+++ a/SKILL.md\n@@ -1,3 +1,3 @@\n ---\n-name: A\n+name: a\n ---\n"
        );
        let colored = fix.diff(true);
        assert!(colored.contains("\n\x1b[31m-name: A\x1b[0m\n\x1b[32m+name: a\x1b[0m\n ---\n"));
        assert!(colored.starts_with("\x1b[1m--- a/SKILL.md\x1b[0m\n"));
        let stripped = colored.replace("\x1b[0m", "");
        let stripped = ["\x1b[1m", "\x1b[36m", "\x1b[31m", "\x1b[32m"]
            .iter()
            .fold(stripped, |text, code| text.replace(code, ""));
        assert_eq!(stripped, plain);
    }

    #[test]
    fn only_the_checked_text_is_replaced_and_a_bom_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("SKILL.md");
        std::fs::write(&file, "\u{feff}name: a\n").unwrap();
        assert!(write_fixed(&file, "name: a\n", "name: b\n").unwrap());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "\u{feff}name: b\n");
        // changed on disk since the check: left alone
        assert!(!write_fixed(&file, "name: a\n", "name: c\n").unwrap());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "\u{feff}name: b\n");
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_stays_a_link_and_permissions_stay() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("real.md");
        std::fs::write(&target, "x\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = tmp.path().join("SKILL.md");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(write_fixed(&link, "x\n", "y\n").unwrap());
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "y\n");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
}
