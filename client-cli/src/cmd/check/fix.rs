//! `skillwatch check --fix`: write the findings' fixes into the files, check again, and repeat
//! until nothing more applies. A fix is a repair the rule marks safe without review (the same
//! ones the editor offers as quick fixes); findings silenced by `--allow` or `[check]` are not
//! fixed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use skillwatch_core::checks::{CheckOptions, apply_fixes, check_skill_dirs};
use skillwatch_core::skill::Discovered;
use skillwatch_core::text::LineIndex;

use crate::report::plural;

/// Rounds at most. Fixes that touch each other wait for the next round (their spans were
/// computed for the old text); a repair that never settles is stopped here.
const MAX_ROUNDS: usize = 10;

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
            plural(self.applied.len(), "finding"),
            plural(self.files.len(), "file")
        )
    }
}

/// Check `dirs`, write every fix that applies, and repeat while something changed.
pub fn fix_all(dirs: &Discovered, options: &CheckOptions, threads: usize) -> anyhow::Result<Fixed> {
    let mut fixed = Fixed::default();
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for report in check_skill_dirs(dirs, options, threads) {
            let Some(text) = &report.text else { continue };
            let Some((new, taken)) = apply_fixes(text, &report.diagnostics) else {
                continue;
            };
            if write_fixed(&report.path, text, &new)? {
                let lines = LineIndex::new(text);
                for d in taken {
                    let at = lines.line_col(text, d.span.start);
                    fixed.applied.push(Applied {
                        path: report.path.clone(),
                        line: at.line,
                        column: at.column,
                        rule: d.rule,
                        title: d.fix.as_ref().map_or(String::new(), |f| f.title.clone()),
                    });
                }
                fixed.files.insert(report.path);
                changed = true;
            } else {
                fixed.changed_meanwhile.insert(report.path);
            }
        }
        if !changed {
            break;
        }
    }
    Ok(fixed)
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
    const BOM: &[u8] = "\u{feff}".as_bytes();
    let kept = match on_disk.strip_prefix(BOM) {
        Some(rest) if rest == checked.as_bytes() => BOM,
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
