//! Tracked skills: every skill folder under the watched roots, with what its `skillwatch.toml`
//! says about it.

use std::path::{Path, PathBuf};

use skillwatch_core::evalspec::find_eval_files;
use skillwatch_core::protocol::TrackedSkill;
use skillwatch_core::skill::discover;

use crate::config;
use crate::scheduler::skill_name;

/// The skills under `roots` (each skill once, by folder), with their settings. A skill whose
/// `skillwatch.toml` cannot be read is tracked with no models and no rerun on save; the
/// broken file is reported when it is saved or loaded.
pub fn tracked_skills(roots: &[PathBuf]) -> Vec<TrackedSkill> {
    let mut skills: Vec<TrackedSkill> = Vec::new();
    for root in roots {
        for dir in discover(root) {
            if skills.iter().any(|s| s.dir == dir) {
                continue;
            }
            skills.push(tracked(&dir, root));
        }
    }
    skills.sort_by(|a, b| a.dir.cmp(&b.dir));
    skills
}

/// One skill folder as tracked.
pub fn tracked(dir: &Path, root: &Path) -> TrackedSkill {
    let name = skill_name(dir).unwrap_or_else(|| dir.display().to_string());
    let (config_path, config) = match config::for_dir(dir) {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!("{e}");
            (config::find_for(dir), config::Config::default())
        }
    };
    TrackedSkill {
        rerun_on_save: config.rerun_on_save(&name),
        models: config.models(),
        name,
        dir: dir.to_path_buf(),
        root: root.to_path_buf(),
        config: config_path,
        has_evals: !find_eval_files(dir).is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skills_under_roots_carry_their_config() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        let a = root.join("skills/alpha");
        let b = root.join("skills/beta");
        std::fs::create_dir_all(a.join("evals")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(
            a.join("SKILL.md"),
            "---\nname: alpha\ndescription: d\n---\n",
        )
        .unwrap();
        std::fs::write(a.join("evals/evals.json"), "[]").unwrap();
        std::fs::write(b.join("SKILL.md"), "no frontmatter").unwrap();
        std::fs::write(
            root.join(config::FILE_NAME),
            "[models]\nopenai = [\"m1\"]\n[skills.alpha]\nrerun_on_save = true\n",
        )
        .unwrap();
        let skills = tracked_skills(&[root.clone(), root.join("skills")]);
        assert_eq!(skills.len(), 2, "{skills:?}");
        let alpha = &skills[0];
        assert_eq!(alpha.name, "alpha");
        assert!(alpha.has_evals && alpha.rerun_on_save);
        assert_eq!(alpha.models, vec![("openai".into(), "m1".into())]);
        assert_eq!(alpha.config, Some(root.join(config::FILE_NAME)));
        let beta = &skills[1];
        assert_eq!(beta.name, "beta");
        assert!(!beta.has_evals && !beta.rerun_on_save);
    }
}
