//! `tests/skillwatch.json`: what a trial's folder needs to become a skillwatch trial.
//!
//! Written into each exported task's `tests/` (copied into the sandbox only after the agent
//! finished, so the agent never sees the assertions), and copied by `test.sh` to
//! `/logs/verifier/skillwatch.json`, which Harbor brings back from every backend.

use serde::{Deserialize, Serialize};

use crate::evalspec::Case;

/// The file's name, in the task's `tests/` and in the trial's `verifier/`.
pub const MANIFEST_FILE: &str = "skillwatch.json";

/// The value of `format` this build writes and reads.
pub const MANIFEST_FORMAT: &str = "skillwatch-harbor/1";

/// One task's manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Exactly [`MANIFEST_FORMAT`].
    pub format: String,
    /// The skill under test: its name (what history groups by) and skillwatch's content hash
    /// of its folder at export.
    pub skill: SkillRef,
    /// The suite: its hash and every case with its task, so a trial of any case can be
    /// placed even when the trials of other cases never reached their verifier.
    pub suite: SuiteRef,
    /// This task's case.
    pub case: CaseRef,
    /// Which arm this task is: `None` when both arms share it (the arm is the agent entry's
    /// skills); set for the baked layout's two variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<ManifestArm>,
    /// Names of support and decoy skills, given to both arms.
    #[serde(default)]
    pub support: Vec<String>,
}

/// The arm of a baked task variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ManifestArm {
    /// Without the skill.
    Baseline,
    /// With the skill in the image.
    Skill,
}

/// The skill's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillRef {
    /// SKILL.md `name` (or the folder's).
    pub name: String,
    /// `sha256:<hex>` of the folder (`skill::content_hash`).
    pub content_hash: String,
}

/// The suite's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteRef {
    /// The suite hash a local run of the same cases records.
    pub content_hash: String,
    /// The eval file.
    #[serde(default)]
    pub source: Option<String>,
    /// Every case of the export, in suite order.
    pub cases: Vec<SuiteCase>,
}

/// A case of the suite and the Harbor task (or tasks) that runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteCase {
    /// The case's key in runs.
    pub key: String,
    /// Its fingerprint (`evalspec::case_fingerprint`).
    pub content_hash: String,
    /// The `[task].name` of its task (both variants share it in the baked layout, which
    /// tells them apart by [`Manifest::arm`]).
    pub task: String,
}

/// This task's case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseRef {
    /// The case's key.
    pub key: String,
    /// Its fingerprint.
    pub content_hash: String,
    /// The case itself, for grading on import.
    pub definition: Case,
}

impl Manifest {
    /// Parse a manifest, checking its format.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if m.format != MANIFEST_FORMAT {
            return Err(format!(
                "expected format {MANIFEST_FORMAT:?}, found {:?}",
                m.format
            ));
        }
        Ok(m)
    }
}
