//! Symlinks in a skill folder. A skill is a folder that is copied, zipped and installed
//! elsewhere; a link in it either breaks there or, worse, points at whatever the target path
//! holds on the machine that reads it (`SKILL.md -> /etc/passwd`, `references/x.md ->
//! ~/.ssh/id_rsa`). Seed 002's archive rule refuses archives with symlinks. skillwatch reports
//! every link, and never reads what is behind one that leaves the skill folder: the content
//! is not the skill's, and printing it (a source line under a finding) would leak it.

use std::path::{Component, Path, PathBuf};

/// Where a symlink in a skill folder leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkTarget {
    /// To an existing file or folder inside the skill folder.
    Inside,
    /// Out of the skill folder (or through a loop, or to nothing with a path that leaves it).
    Outside,
    /// To nothing, by a path that stays inside the folder.
    Dangling,
}

/// Where the symlink at `link` (inside the skill folder `dir`) leads. Only the file system's
/// metadata is asked (`readlink`, `realpath`); nothing is read.
pub fn target_of(dir: &Path, link: &Path) -> LinkTarget {
    let Ok(root) = dir.canonicalize() else {
        return LinkTarget::Outside;
    };
    match link.canonicalize() {
        Ok(real) if real.starts_with(&root) => LinkTarget::Inside,
        Ok(_) => LinkTarget::Outside,
        Err(_) => {
            let written = std::fs::read_link(link).unwrap_or_default();
            let parent = link.parent().unwrap_or(dir);
            match lexically_inside(dir, &parent.join(written)) {
                true => LinkTarget::Dangling,
                false => LinkTarget::Outside,
            }
        }
    }
}

/// Whether reading `path` (a path into the skill folder `dir`, which may pass through
/// symlinks) reads a file inside the folder. A path that does not resolve is not inside.
pub fn resolves_inside(dir: &Path, path: &Path) -> bool {
    match (dir.canonicalize(), path.canonicalize()) {
        (Ok(root), Ok(real)) => real.starts_with(root),
        _ => false,
    }
}

/// The path a symlink holds, as written (for messages), or an empty path when unreadable.
pub fn written_target(link: &Path) -> PathBuf {
    std::fs::read_link(link).unwrap_or_default()
}

/// Whether `path` stays under `dir` once `.` and `..` are resolved without the file system.
fn lexically_inside(dir: &Path, path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix(dir) else {
        return false;
    };
    let mut depth = 0usize;
    for part in rest.components() {
        match part {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => return false,
        }
    }
    true
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_are_told_apart_without_reading() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("skill");
        std::fs::create_dir_all(dir.join("references")).unwrap();
        std::fs::write(dir.join("references/guide.md"), "x").unwrap();
        std::fs::write(tmp.path().join("outside.txt"), "secret").unwrap();
        let link = |name: &str, to: &str| {
            let path = dir.join(name);
            symlink(to, &path).unwrap();
            path
        };
        let inside = link("alias.md", "references/guide.md");
        let out = link("out.txt", "../outside.txt");
        let absolute = link("passwd", "/etc/passwd");
        let dangling = link("gone.md", "references/gone.md");
        let dangling_out = link("gone-out.md", "../../nowhere.md");
        let folder = link("refs", "references");
        assert_eq!(target_of(&dir, &inside), LinkTarget::Inside);
        assert_eq!(target_of(&dir, &folder), LinkTarget::Inside);
        assert_eq!(target_of(&dir, &out), LinkTarget::Outside);
        assert_eq!(target_of(&dir, &absolute), LinkTarget::Outside);
        assert_eq!(target_of(&dir, &dangling), LinkTarget::Dangling);
        assert_eq!(target_of(&dir, &dangling_out), LinkTarget::Outside);
        assert!(resolves_inside(&dir, &dir.join("refs/guide.md")));
        assert!(!resolves_inside(&dir, &out));
        assert_eq!(written_target(&absolute), PathBuf::from("/etc/passwd"));
    }
}
