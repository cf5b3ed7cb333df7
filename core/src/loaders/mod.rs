//! What each harness's skill loader does with a skill: measured on the real CLIs by
//! `skillwatch loads` (which reads back the listing a CLI sent its model, [`listing`]), kept
//! as one table of loader profiles ([`profiles`]) that the static checks read.

pub mod listing;
pub mod profiles;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use listing::{Listed, listed_skills, request_text};
pub use profiles::{
    DEFAULT_TARGETS, DescriptionLimit, DuplicateKey, Listing, LoaderProfile, MEASURED, PROFILES,
    REMEASURE, YamlRule, profile,
};

use crate::skill::{Frontmatter, SKILL_FILE, load_document};

/// How one skill reached the model in one harness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Listed with its whole description.
    Listed,
    /// Listed with the first `kept` characters of its description (an ellipsis after them).
    DescriptionCut {
        /// Characters of the description shown.
        kept: usize,
    },
    /// Listed by name only: the model does not learn when to use it.
    NameOnly,
    /// Listed with a description that is not the one written (e.g. another value of a
    /// duplicate key).
    DescriptionChanged {
        /// What was shown.
        shown: String,
    },
    /// Not listed although its frontmatter is valid YAML.
    Dropped,
    /// Not listed, and its frontmatter is not valid YAML (or has a key twice): the loader
    /// could not read it.
    NotParsed,
}

/// A skill as written, for comparing with what a listing shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The folder's name.
    pub folder: String,
    /// The `name` field, when there is one.
    pub name: Option<String>,
    /// Every `description` value, in order (more than one when the key is there twice).
    pub descriptions: Vec<String>,
    /// Whether the frontmatter is valid YAML without a repeated key.
    pub valid_yaml: bool,
}

impl Written {
    /// Read the skill in `dir` (a folder with a SKILL.md).
    pub fn read(dir: &Path) -> Written {
        let folder = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut written = Written {
            folder,
            name: None,
            descriptions: Vec::new(),
            valid_yaml: false,
        };
        let Ok(doc) = load_document(&dir.join(SKILL_FILE)) else {
            return written;
        };
        let Frontmatter::Parsed { root, .. } = &doc.frontmatter else {
            if let Frontmatter::Invalid { span, .. } = &doc.frontmatter {
                written.read_lines(&doc.text[span.start..span.end]);
            }
            return written;
        };
        let entries = root.as_mapping().unwrap_or_default();
        let mut keys: Vec<&str> = entries.iter().filter_map(|e| e.key.as_key()).collect();
        let count = keys.len();
        keys.sort_unstable();
        keys.dedup();
        written.valid_yaml = keys.len() == count;
        for e in entries {
            match (e.key.as_key(), e.value.as_str()) {
                (Some("name"), Some(v)) => written.name = Some(v.trim().to_owned()),
                (Some("description"), Some(v)) => written.descriptions.push(v.trim().to_owned()),
                _ => {}
            }
        }
        written
    }

    /// The fields of frontmatter that is not YAML, read line by line as lenient loaders do
    /// (`description: Use when: x` is the text `Use when: x` to them).
    fn read_lines(&mut self, yaml: &str) {
        for line in yaml.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim().trim_matches(|c| c == '"' || c == '\'').trim();
            match key.trim() {
                "name" if !line.starts_with(' ') => self.name = Some(value.to_owned()),
                "description" if !line.starts_with(' ') => self.descriptions.push(value.to_owned()),
                _ => {}
            }
        }
    }

    /// Whether `listed` is this skill's entry.
    fn is(&self, listed: &Listed) -> bool {
        listed.folder.as_deref() == Some(self.folder.as_str())
            || self.name.as_deref() == Some(listed.name.as_str())
            || (self.name.is_none() && listed.name == self.folder)
    }

    /// How `listing` shows this skill.
    pub fn outcome(&self, listing: &[Listed]) -> Outcome {
        let Some(entry) = listing.iter().find(|l| self.is(l)) else {
            return if self.valid_yaml {
                Outcome::Dropped
            } else {
                Outcome::NotParsed
            };
        };
        let Some(shown) = entry.description.as_deref().map(str::trim) else {
            return Outcome::NameOnly;
        };
        let same = |a: &str, b: &str| squash(a) == squash(b);
        if self.descriptions.iter().any(|d| same(d, shown)) {
            return Outcome::Listed;
        }
        let stem = shown
            .strip_suffix('\u{2026}')
            .or_else(|| shown.strip_suffix("..."))
            .unwrap_or(shown);
        if self.descriptions.iter().any(|d| {
            let d = squash(d);
            let s = squash(stem);
            d.len() > s.len() && d.starts_with(&s)
        }) {
            return Outcome::DescriptionCut {
                kept: stem.chars().count(),
            };
        }
        Outcome::DescriptionChanged {
            shown: shown.to_owned(),
        }
    }
}

/// Whitespace runs as one space: listings re-flow line breaks of folded descriptions.
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path, name: &str, frontmatter: &str) -> std::path::PathBuf {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("SKILL.md"), format!("---\n{frontmatter}---\n# x\n")).unwrap();
        d
    }

    fn listed(name: &str, d: Option<&str>) -> Listed {
        Listed {
            name: name.into(),
            folder: None,
            description: d.map(str::to_owned),
        }
    }

    #[test]
    fn each_outcome_from_a_listing() {
        let tmp = tempfile::tempdir().unwrap();
        let long = Written::read(&skill(
            tmp.path(),
            "long",
            "name: long\ndescription: abcdef ghij\n",
        ));
        let dup = Written::read(&skill(
            tmp.path(),
            "dup",
            "name: dup\ndescription: one\ndescription: two\n",
        ));
        let bad = Written::read(&skill(
            tmp.path(),
            "bad",
            "name: bad\ndescription: \"open\n",
        ));
        assert!(!dup.valid_yaml && !bad.valid_yaml && long.valid_yaml);
        let listing = vec![
            listed("long", Some("abcdef g…")),
            listed("dup", Some("two")),
        ];
        assert_eq!(long.outcome(&listing), Outcome::DescriptionCut { kept: 8 });
        assert_eq!(dup.outcome(&listing), Outcome::Listed);
        assert_eq!(bad.outcome(&listing), Outcome::NotParsed);
        assert_eq!(long.outcome(&[listed("long", None)]), Outcome::NameOnly);
        assert_eq!(
            long.outcome(&[listed("long", Some("abcdef ghij"))]),
            Outcome::Listed
        );
        assert_eq!(long.outcome(&[]), Outcome::Dropped);
    }
}
