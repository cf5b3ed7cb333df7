//! The skill model: a folder with a SKILL.md, its parsed frontmatter and body with source spans,
//! and the content hash that identifies one version of it in the history.

mod discover;
mod document;
mod hash;
pub mod link;
mod root;

pub use discover::{Discovered, SKIPPED_DIRS, discover};
pub use document::{
    Frontmatter, LineEnding, LoadError, MAX_SKILL_MD_BYTES, SkillDocument, decode, load_document,
};
pub(crate) use document::{frontmatter_text, read_bounded, read_bounded_file, read_skill_md};
pub use hash::{content_hash, hash_bytes};
pub use root::{PROJECT_MARKERS, holds_skills, skill_root, skill_root_here};

use std::path::{Path, PathBuf};

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// One skill on disk: its folder and its parsed SKILL.md (or why it could not be read).
#[derive(Debug)]
pub struct Skill {
    /// The skill's folder; its name is what the `name` field must equal.
    pub dir: PathBuf,
    /// The SKILL.md inside `dir`.
    pub skill_md: PathBuf,
    /// The parsed document, or the reason the file could not be turned into text.
    pub document: Result<SkillDocument, LoadError>,
}

impl Skill {
    /// Read and parse the skill in `dir`. Never fails: an unreadable SKILL.md is kept as a
    /// [`LoadError`] so it can be reported like any other finding.
    pub fn load(dir: &Path) -> Skill {
        let skill_md = dir.join(SKILL_FILE);
        let document = load_document(&skill_md);
        Skill {
            dir: dir.to_path_buf(),
            skill_md,
            document,
        }
    }

    /// The folder's name, which the spec requires `name` to equal.
    pub fn dir_name(&self) -> Option<&str> {
        self.dir.file_name().and_then(|n| n.to_str())
    }
}
