//! The skill a description search works on, as it read it: what a rewrite may change, under
//! which rules (core::optimize::admit_rewrite), and the SKILL.md a rewrite makes.

use std::path::{Path, PathBuf};

use skillwatch_core::checks::CheckOptions;
use skillwatch_core::loaders::profiles::reads_when_to_use;
use skillwatch_core::optimize::{Rewrite, admit_rewrite, rewritten};
use skillwatch_core::skill::{SKILL_FILE, SkillDocument};
use skillwatch_protocol::HarnessSettings;

use crate::runner::RunError;

/// The skill as the search read it.
pub(crate) struct Skill {
    /// Its folder, canonical.
    pub(crate) dir: PathBuf,
    /// Its SKILL.md text.
    pub(crate) text: String,
    /// Its `name:`.
    pub(crate) name: String,
    /// Its `description:`, trimmed.
    pub(crate) description: String,
    /// Its `when_to_use:`, when the harness the search measures on reads it (and the skill
    /// has one): then the proposer may rewrite it too.
    pub(crate) when_to_use: Option<String>,
}

impl Skill {
    pub(crate) fn read(dir: &Path, harness: &HarnessSettings) -> Result<Skill, RunError> {
        let settings = |message: String| RunError::Settings { message };
        let dir = dir
            .canonicalize()
            .map_err(|e| settings(format!("{}: expected a skill folder ({e})", dir.display())))?;
        let path = dir.join(SKILL_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| settings(format!("reading {}: {e}", path.display())))?;
        let doc = SkillDocument::parse(text.clone());
        let field = |f: &str| doc.field_str(f).map(|(v, _)| v.trim().to_owned());
        let description = field("description").ok_or_else(|| {
            settings(format!(
                "{}: expected a `description:`, found none",
                dir.display()
            ))
        })?;
        let name = field("name").unwrap_or_default();
        let when_to_use = field("when_to_use").filter(|_| reads_when_to_use(harness.kind.as_str()));
        Ok(Skill {
            dir,
            text,
            name,
            description,
            when_to_use,
        })
    }

    /// Whether `rewrite` may be measured (the rules of every target harness, the spec,
    /// `check`); why not.
    pub(crate) fn admit(&self, rewrite: &Rewrite<'_>) -> Result<(), String> {
        admit_rewrite(
            &self.dir,
            &self.text,
            rewrite,
            &[],
            &CheckOptions::default(),
        )
        .map(drop)
        .map_err(|r| r.reason)
    }

    /// SKILL.md with `rewrite`, and the diff to it.
    pub(crate) fn rewritten(&self, rewrite: &Rewrite<'_>) -> Option<(String, String)> {
        let after = rewritten(&SkillDocument::parse(self.text.clone()), rewrite)?;
        let diff = similar::TextDiff::from_lines(&self.text, &after)
            .unified_diff()
            .header("a/SKILL.md", "b/SKILL.md")
            .to_string();
        Some((after, diff))
    }
}
