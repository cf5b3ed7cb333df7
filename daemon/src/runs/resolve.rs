//! The first step of every plan: the skill a request names (its folder made canonical, the
//! name the agent will see, its content hash) and the harness it runs on, built and asked its
//! version (part of every result's identity).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skillwatch_core::skill::{Skill, content_hash};
use skillwatch_protocol::HarnessSettings;

use crate::harness::{Harness, HostEnv, SkillToStage};
use crate::runner::RunError;

/// A skill and a harness, resolved.
pub struct Resolved {
    /// The skill folder, canonical.
    pub skill_dir: PathBuf,
    /// The skill as it will be staged.
    pub target: SkillToStage,
    /// The harness.
    pub harness: Arc<dyn Harness>,
    /// Its version.
    pub harness_version: String,
}

/// Resolve the skill in `skill_dir` and the harness `settings` describe (whose key, when the
/// settings name its variable, must be set in `host`).
pub async fn resolve(
    skill_dir: &Path,
    settings: &HarnessSettings,
    host: &HostEnv,
) -> Result<Resolved, RunError> {
    let (skill_dir, target) = skill_at(skill_dir)?;
    let (harness, harness_version) = harness(settings, host).await?;
    Ok(Resolved {
        skill_dir,
        target,
        harness,
        harness_version,
    })
}

/// The harness `settings` describe, drawing from `host`, with its version.
pub async fn harness(
    settings: &HarnessSettings,
    host: &HostEnv,
) -> Result<(Arc<dyn Harness>, String), RunError> {
    let named = settings.api_key_env.as_deref().map(|v| ("the harness", v));
    super::check_key_vars(named, host)?;
    let harness = crate::harness::settings::build(settings, host)
        .map_err(|message| RunError::Settings { message })?;
    let version = harness.version().await.map_err(|e| RunError::Harness {
        harness: harness.name().to_owned(),
        message: e.to_string(),
    })?;
    Ok((harness, version))
}

/// The skill a request names: its folder made canonical, and the skill as it will be staged.
pub fn skill_at(dir: &Path) -> Result<(PathBuf, SkillToStage), RunError> {
    let canonical = dir.canonicalize().map_err(|e| RunError::NotASkill {
        dir: dir.to_path_buf(),
        reason: format!("found none ({e})"),
    })?;
    let target = skill_to_stage(&canonical)?;
    Ok((canonical, target))
}

/// The skill in `dir` under the name the agent will see (its SKILL.md `name` when that is a
/// plain folder name, else the folder's name).
pub fn skill_to_stage(dir: &Path) -> Result<SkillToStage, RunError> {
    let skill = Skill::load(dir);
    let doc = skill.document.as_ref().map_err(|e| RunError::NotASkill {
        dir: dir.to_path_buf(),
        reason: format!("found an unreadable SKILL.md ({e})"),
    })?;
    let name = doc
        .field_str("name")
        .map(|(n, _)| n.trim().to_owned())
        .filter(|n| !n.is_empty() && !n.contains(['/', '\\']) && n != "." && n != "..")
        .or_else(|| skill.dir_name().map(str::to_owned))
        .ok_or_else(|| RunError::NotASkill {
            dir: dir.to_path_buf(),
            reason: "found no name (no `name` field and no folder name)".into(),
        })?;
    Ok(SkillToStage {
        name,
        source: dir.to_path_buf(),
    })
}

/// `sha256:<hex>` of a skill folder.
pub fn hash_dir(dir: &Path) -> Result<String, RunError> {
    content_hash(dir).map_err(|source| RunError::Io {
        context: format!("hashing {}", dir.display()),
        source,
    })
}

/// What every stored run records as the tool that made it.
pub fn tool_version() -> String {
    format!("skillwatch {}", env!("CARGO_PKG_VERSION"))
}
