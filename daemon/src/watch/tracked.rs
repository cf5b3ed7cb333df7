//! Tracked skills: every skill folder under the watched roots, with what its `skillwatch.toml`
//! says about it.

use std::path::{Path, PathBuf};

use skillwatch_core::checks::CheckOptions;
use skillwatch_core::config::{CheckConfig, ConfigError};
use skillwatch_core::evalspec::find_eval_files;
use skillwatch_core::skill::discover;
use skillwatch_protocol::TrackedSkill;

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
    let (config_path, config) = match config::for_dir(dir) {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!("{e}");
            (config::find_for(dir), config::Config::default())
        }
    };
    tracked_under(dir, root, config_path, &config)
}

/// A saved skill folder as tracked, and the options of the `[check]` table governing it: what
/// a save needs, from one read of its skillwatch.toml. A table that does not parse gives its
/// defaults, with a warning (the broken file was reported when it was saved).
pub fn tracked_and_check_options(dir: &Path, root: &Path) -> (TrackedSkill, CheckOptions) {
    let path = config::find_for(dir);
    let text = path.as_deref().and_then(|p| {
        std::fs::read_to_string(p)
            .map_err(|e| tracing::warn!("{}", ConfigError::read(p, &e)))
            .ok()
    });
    let (config, options) = match (path.as_deref(), text.as_deref()) {
        (Some(path), Some(text)) => (
            config::Config::parse(text, path).unwrap_or_else(|e| {
                tracing::warn!("{e}");
                config::Config::default()
            }),
            CheckConfig::parse(text, path).map_or_else(
                |e| {
                    tracing::warn!("{e}; checking under the default rules");
                    CheckOptions::default()
                },
                |check| check.options(),
            ),
        ),
        _ => (config::Config::default(), CheckOptions::default()),
    };
    (tracked_under(dir, root, path, &config), options)
}

fn tracked_under(
    dir: &Path,
    root: &Path,
    config_path: Option<PathBuf>,
    config: &config::Config,
) -> TrackedSkill {
    let name = skill_name(dir).unwrap_or_else(|| dir.display().to_string());
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

    #[test]
    fn a_save_reads_the_tables_and_check_once_and_a_broken_check_keeps_the_models() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let dir = root.join("alpha");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: alpha\ndescription: d\n---\n",
        )
        .unwrap();
        let file = root.join(config::FILE_NAME);
        std::fs::write(
            &file,
            "[models]\nopenai = [\"m1\"]\n[check]\nprofile = \"agentskills\"\n\
             rules = { SW205 = \"off\" }\n",
        )
        .unwrap();
        let (skill, options) = tracked_and_check_options(&dir, &root);
        assert_eq!(skill.models, vec![("openai".into(), "m1".into())]);
        assert_eq!(skill.config, Some(file.clone()));
        assert_eq!(
            options.profile,
            skillwatch_core::checks::Profile::AgentSkills
        );
        assert_eq!(options.overrides, vec![("SW205".to_string(), None)]);

        std::fs::write(
            &file,
            "[models]\nopenai = [\"m1\"]\n[check]\nrules = { SW1166 = \"off\" }\n",
        )
        .unwrap();
        let (skill, options) = tracked_and_check_options(&dir, &root);
        assert_eq!(skill.models, vec![("openai".into(), "m1".into())]);
        assert!(options.overrides.is_empty(), "the defaults: {options:?}");

        std::fs::remove_file(&file).unwrap();
        let (skill, options) = tracked_and_check_options(&dir, &root);
        assert!(skill.models.is_empty() && skill.config.is_none());
        assert_eq!(options.profile, skillwatch_core::checks::Profile::Default);
    }
}
