//! What to run, apart from how: a skill's cases with their keys and fingerprints, the suite's
//! hash and the skill's identity, worked out once for every way of executing them (local
//! trials here, a Harbor job through `skillwatch export harbor`), so a suite has one identity
//! whichever way it ran.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use skillwatch_core::evalspec::{Case, case_fingerprint, load_suite};
use skillwatch_core::skill::hash_bytes;

use super::RunError;
use crate::harness::SkillToStage;
use crate::runs::resolve::{hash_dir, skill_at, skill_to_stage};
use crate::store::CaseSpec;

/// A skill's suite as a run identifies it.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    /// The skill folder, canonical.
    pub skill_dir: PathBuf,
    /// The skill under test (its name is what history groups by).
    pub target: SkillToStage,
    /// `sha256:<hex>` of the skill folder.
    pub skill_hash: String,
    /// The cases with their keys, in suite order.
    pub cases: Vec<(String, Case)>,
    /// Each case's fingerprint, in the same order.
    pub fingerprints: Vec<String>,
}

impl SuitePlan {
    /// The suite's hash, as every run of these cases records it.
    pub fn suite_hash(&self) -> String {
        suite_hash(&self.case_specs())
    }

    /// The cases as the history stores them.
    pub fn case_specs(&self) -> Vec<CaseSpec> {
        self.cases
            .iter()
            .zip(&self.fingerprints)
            .map(|((key, case), hash)| CaseSpec {
                key: key.clone(),
                content_hash: hash.clone(),
                definition: serde_json::to_value(case).ok(),
            })
            .collect()
    }

    /// The eval file of the first case.
    pub fn source(&self) -> Option<String> {
        self.cases.first().map(|(_, c)| c.origin.file.clone())
    }
}

/// Plan the cases of the skill in `skill_dir` (only those named in `only`, all when empty).
pub fn plan_suite(skill_dir: &Path, only: &[String]) -> Result<SuitePlan, RunError> {
    let (skill_dir, target) = skill_at(skill_dir)?;
    let cases = suite_cases(&skill_dir, only)?;
    let fingerprints = cases
        .iter()
        .map(|(_, c)| case_fingerprint(c, &skill_dir))
        .collect();
    let skill_hash = hash_dir(&skill_dir)?;
    Ok(SuitePlan {
        skill_dir,
        target,
        skill_hash,
        cases,
        fingerprints,
    })
}

/// The identity of a suite version: its case keys and hashes.
pub fn suite_hash(cases: &[CaseSpec]) -> String {
    hash_bytes(
        cases
            .iter()
            .map(|c| format!("{}={}", c.key, c.content_hash))
            .collect::<Vec<_>>()
            .join("\n")
            .as_bytes(),
    )
}

/// A support or decoy skill's name and content hash.
pub fn plan_skill(dir: &Path) -> Result<(SkillToStage, String), RunError> {
    Ok((skill_to_stage(dir)?, hash_dir(dir)?))
}

/// The suite's cases with their keys in the run: case ids, made unique across eval files by
/// suffixing a repeated id with its file; filtered by `only` (all when empty).
fn suite_cases(skill_dir: &Path, only: &[String]) -> Result<Vec<(String, Case)>, RunError> {
    let suite = load_suite(skill_dir)?;
    let mut seen = BTreeSet::new();
    let mut cases = Vec::new();
    for case in suite.cases {
        let key = if seen.insert(case.id.clone()) {
            case.id.clone()
        } else {
            format!("{} ({})", case.id, case.origin.file)
        };
        if only.is_empty() || only.contains(&case.id) || only.contains(&key) {
            cases.push((key, case));
        }
    }
    if cases.is_empty() {
        let message = if only.is_empty() {
            format!(
                "{}: expected at least one eval case, found none",
                skill_dir.display()
            )
        } else {
            format!(
                "{}: expected cases named {}, found none of them",
                skill_dir.display(),
                only.join(", ")
            )
        };
        return Err(RunError::NoCases { message });
    }
    Ok(cases)
}
