//! The one root of a folder of skills: the folder an editor starts its language server for
//! and the daemon watches, so skills side by side share one server and one watched root
//! instead of one each (the usual `~/.claude/skills` is no repository and has no
//! skillwatch.toml).
//!
//! The rule (editors/nvim's `root_dir` says the same in Lua):
//! 1. the folder holding the skill, when it is a folder of skills: it is named `skills`, or
//!    at least half of its subfolders (hidden and [`SKIPPED_DIRS`] ones aside) hold a SKILL.md;
//! 2. else the nearest folder at or above the skill holding `.git` or `skillwatch.toml`;
//! 3. else the skill's own folder.
//!
//! The home folder and the filesystem's root are never a root: watching either would watch
//! everything the user has.

use std::path::{Path, PathBuf};

use super::{SKILL_FILE, SKIPPED_DIRS};

/// What marks a project folder (rule 2).
pub const PROJECT_MARKERS: &[&str] = &[".git", crate::config::FILE_NAME];

/// The root for the skill in `skill_dir` (see the module doc), with `home` the user's home
/// folder.
pub fn skill_root(skill_dir: &Path, home: Option<&Path>) -> PathBuf {
    let too_wide = |dir: &Path| dir.parent().is_none() || home.is_some_and(|h| h == dir);
    if let Some(parent) = skill_dir.parent()
        && !too_wide(parent)
        && holds_skills(parent)
    {
        return parent.to_path_buf();
    }
    skill_dir
        .ancestors()
        .take_while(|dir| !too_wide(dir))
        .find(|dir| PROJECT_MARKERS.iter().any(|m| dir.join(m).exists()))
        .unwrap_or(skill_dir)
        .to_path_buf()
}

/// [`skill_root`] with the home folder of this process's user (`$HOME`).
pub fn skill_root_here(skill_dir: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    skill_root(skill_dir, home.as_deref())
}

/// Whether `dir` is a folder of skills (rule 1).
pub fn holds_skills(dir: &Path) -> bool {
    if dir.file_name().is_some_and(|n| n == "skills") {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let (mut folders, mut skills) = (0usize, 0usize);
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') || SKIPPED_DIRS.contains(&name) {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            folders += 1;
            skills += usize::from(entry.path().join(SKILL_FILE).is_file());
        }
    }
    skills > 0 && skills * 2 >= folders
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(SKILL_FILE), "---\nname: x\n---\n").unwrap();
        dir.to_path_buf()
    }

    #[test]
    fn skills_side_by_side_share_their_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let mine = home.join("my-skills");
        let dirs: Vec<PathBuf> = ["a", "b", "c"]
            .iter()
            .map(|n| skill(&mine.join(n)))
            .collect();
        std::fs::create_dir_all(mine.join("notes")).unwrap();
        for dir in &dirs {
            assert_eq!(skill_root(dir, Some(&home)), mine);
        }
        // a folder named `skills` counts whatever else it holds
        let named = skill(&home.join(".claude/skills/one"));
        for other in ["x", "y", "z"] {
            std::fs::create_dir_all(home.join(".claude/skills").join(other)).unwrap();
        }
        assert_eq!(skill_root(&named, Some(&home)), home.join(".claude/skills"));
    }

    #[test]
    fn a_lone_skill_goes_to_its_project_or_stays_alone_never_home() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        // a skill among other folders of a repository: the repository
        let repo = home.join("src/repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        let in_repo = skill(&repo.join("tool"));
        assert_eq!(skill_root(&in_repo, Some(&home)), repo);
        // a skill right in the home folder, which is a dotfiles repository: not home
        std::fs::create_dir_all(home.join(".git")).unwrap();
        std::fs::create_dir_all(home.join("Documents")).unwrap();
        std::fs::create_dir_all(home.join("Downloads")).unwrap();
        let at_home = skill(&home.join("mine"));
        assert_eq!(skill_root(&at_home, Some(&home)), at_home);
        // a skill with its own skillwatch.toml in a plain folder: itself
        let plain = tmp.path().join("elsewhere/work");
        std::fs::create_dir_all(plain.join("other")).unwrap();
        std::fs::create_dir_all(plain.join("more")).unwrap();
        let own = skill(&plain.join("own"));
        std::fs::write(own.join("skillwatch.toml"), "").unwrap();
        assert_eq!(skill_root(&own, Some(&home)), own);
    }
}
