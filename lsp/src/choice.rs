//! The harness and model a lens run uses. The skill's skillwatch.toml decides when it says
//! (`[run] harness` and `model`, as for `skillwatch run`; else the first model `[models]`
//! tracks); otherwise the author picks one of those found on this machine
//! (`skillwatch_daemon::harness::discover`) and may keep the choice: [`save`] writes it into
//! skillwatch.toml with a comment saying where it came from, keeping what the file held.

use std::path::{Path, PathBuf};

use skillwatch_core::config::ConfigError;
use skillwatch_daemon::harness::discover::RunTarget;
use skillwatch_daemon::runner::RunConfig;
use toml_edit::{Array, DocumentMut, Item, Table, value};

/// The run target the skill's skillwatch.toml names, if it names one.
pub fn configured(skill_dir: &Path) -> Result<Option<RunTarget>, ConfigError> {
    let Some(path) = RunConfig::find(skill_dir) else {
        return Ok(None);
    };
    let run = RunConfig::load(&path)?;
    let found = |what: &str| format!("{what} in {}", path.display());
    if let (Some(harness), Some(model)) = (&run.run.harness, &run.run.model) {
        return Ok(Some(RunTarget {
            harness: harness.clone(),
            model: model.clone(),
            base_url: None,
            found: found("[run]"),
        }));
    }
    let tracked = skillwatch_daemon::config::Config::load(&path)?;
    Ok(tracked
        .models()
        .into_iter()
        .next()
        .map(|(harness, model)| RunTarget {
            harness,
            model,
            base_url: None,
            found: found("[models]"),
        }))
}

/// Where a choice is saved: the skillwatch.toml governing the skill, else a new one at the
/// root of the repository holding the skill (so one file serves a repository of skills; the
/// daemon watches that folder for it, `watch::config_dirs`), else in the editor's workspace
/// folder holding the skill, else in the skill's folder. Never in the home folder.
pub fn save_path(skill_dir: &Path, workspace_roots: &[PathBuf]) -> PathBuf {
    if let Some(existing) = RunConfig::find(skill_dir) {
        return existing;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let repository = skill_dir
        .ancestors()
        .take_while(|dir| home.as_deref() != Some(*dir) && dir.parent().is_some())
        .find(|dir| dir.join(".git").exists());
    let workspace = || {
        workspace_roots
            .iter()
            .filter(|root| skill_dir.starts_with(root))
            .max_by_key(|root| root.components().count())
            .map(PathBuf::as_path)
    };
    repository
        .or_else(workspace)
        .unwrap_or(skill_dir)
        .join(skillwatch_core::config::FILE_NAME)
}

/// Why a choice could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS reason.
        source: std::io::Error,
    },
    /// The file is not TOML, or a table the choice goes into is not a table: nothing written.
    #[error("{path}: {message}; nothing was written")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The comment above a `[run]` table this module creates.
const RUN_COMMENT: &str = "# Chosen in the editor for the first paired run (skillwatch's \"Run paired eval\").\n\
# `skillwatch run` and lens runs use [run]; the daemon measures tracked skills on every\n\
# model [models] lists: add one there to compare it with this one.\n";

/// Write `target` into the skillwatch.toml at `path` (created when missing): `[run]` harness
/// and model unless the file sets them, the endpoint under `[harness.<name>]` unless set, and
/// the model in `[models]`. Everything the file held stays as it was.
pub fn save(path: &Path, target: &RunTarget) -> Result<(), SaveError> {
    let io = |source| SaveError::Io {
        path: path.to_path_buf(),
        source,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(e)),
    };
    let shape = |message: String| SaveError::Shape {
        path: path.to_path_buf(),
        message,
    };
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| shape(format!("not valid TOML ({e})")))?;
    remember(&mut doc, target).map_err(shape)?;
    let mut out = doc.to_string();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    std::fs::write(path, out).map_err(io)
}

fn remember(doc: &mut DocumentMut, target: &RunTarget) -> Result<(), String> {
    let lead = if doc.as_table().is_empty() { "" } else { "\n" };
    let run = table(doc.as_table_mut(), "run")?;
    if run.is_empty() {
        run.decor_mut().set_prefix(format!("{lead}{RUN_COMMENT}"));
    }
    if !run.contains_key("harness") && !run.contains_key("model") {
        run.insert("harness", value(&target.harness));
        run.insert("model", value(&target.model));
    }
    if let Some(url) = &target.base_url {
        let harnesses = table(doc.as_table_mut(), "harness")?;
        harnesses.set_implicit(true);
        let settings = table(harnesses, &target.harness)?;
        if !settings.contains_key("base_url") {
            settings.insert("base_url", value(url));
        }
    }
    let models = table(doc.as_table_mut(), "models")?;
    let list = models
        .entry(&target.harness)
        .or_insert_with(|| value(Array::new()))
        .as_array_mut()
        .ok_or_else(|| format!("[models] {}: expected a list of models", target.harness))?;
    if !list
        .iter()
        .any(|m| m.as_str() == Some(target.model.as_str()))
    {
        list.push(target.model.as_str());
    }
    Ok(())
}

/// The table `key` of `parent`, created when missing.
fn table<'t>(parent: &'t mut Table, key: &str) -> Result<&'t mut Table, String> {
    parent
        .entry(key)
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_mut()
        .ok_or_else(|| format!("[{key}] is not a table"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(harness: &str, model: &str, base_url: Option<&str>) -> RunTarget {
        RunTarget {
            harness: harness.into(),
            model: model.into(),
            base_url: base_url.map(str::to_string),
            found: String::new(),
        }
    }

    #[test]
    fn a_new_file_holds_the_choice_and_reads_back_as_configured() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("pdf");
        std::fs::create_dir(&skill).unwrap();
        let path = save_path(&skill, &[dir.path().to_path_buf()]);
        assert_eq!(path, dir.path().join("skillwatch.toml"));
        // in a repository, at its root, whatever folder the editor opened
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("skills/csv")).unwrap();
        assert_eq!(
            save_path(&repo.join("skills/csv"), &[repo.join("skills")]),
            repo.join("skillwatch.toml")
        );
        save(
            &path,
            &target("openai", "qwen3:8b", Some("http://127.0.0.1:9/v1")),
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# Chosen in the editor"), "{text}");
        let run = RunConfig::load(&path).unwrap();
        assert_eq!(run.run.model.as_deref(), Some("qwen3:8b"));
        let openai = run.harness_settings(skillwatch_daemon::runner::HarnessKind::Openai);
        assert_eq!(openai.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        let tracked = skillwatch_daemon::config::Config::load(&path).unwrap();
        assert_eq!(tracked.models(), vec![("openai".into(), "qwen3:8b".into())]);
        let found = configured(&skill).unwrap().unwrap();
        assert_eq!(
            (found.harness.as_str(), found.model.as_str()),
            ("openai", "qwen3:8b")
        );
    }

    #[test]
    fn an_existing_file_keeps_its_text_and_its_own_choices() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skillwatch.toml");
        let before = "# my settings\n[check]\nprofile = \"agentskills\" # strict\n\n[models]\nopenai = [\"old\"]\n";
        std::fs::write(&path, before).unwrap();
        save(&path, &target("openai", "new", None)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(before.trim_end_matches('\n').lines().next().unwrap()));
        assert!(
            text.contains("profile = \"agentskills\" # strict"),
            "{text}"
        );
        assert!(text.contains("openai = [\"old\", \"new\"]"), "{text}");
        // a second save of the same choice changes nothing
        save(&path, &target("openai", "new", None)).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        let broken = dir.path().join("broken.toml");
        std::fs::write(&broken, "[run\n").unwrap();
        assert!(matches!(
            save(&broken, &target("codex", "gpt-5", None)),
            Err(SaveError::Shape { .. })
        ));
        assert_eq!(std::fs::read_to_string(&broken).unwrap(), "[run\n");
    }
}
