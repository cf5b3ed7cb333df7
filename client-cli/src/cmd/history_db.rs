//! What `history`, `compare` and `import` share: where the history database is, which skill a
//! SKILL argument names, and how an estimate with its interval is printed.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use skillwatch_core::plural::count;
use skillwatch_core::scoring::{Interval, ScoringProfile};
use skillwatch_core::skill::Skill;
use skillwatch_daemon::store::{self, Store};

/// The `--db` option.
#[derive(clap::Args, Debug, Clone)]
pub struct DbArgs {
    /// History database [default: <user data dir>/skillwatch/history.sqlite3].
    #[arg(long, value_name = "PATH", env = "SKILLWATCH_DB")]
    pub db: Option<PathBuf>,
}

impl DbArgs {
    /// The database path: `--db`, `$SKILLWATCH_DB`, or the per-user default.
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        match &self.db {
            Some(p) => Ok(p.clone()),
            None => store::default_path().context(
                "no user data folder is known on this system (is HOME set?); pass --db PATH",
            ),
        }
    }

    /// Open an existing history (read commands must not create an empty one by accident).
    pub fn open_existing(&self) -> anyhow::Result<Store> {
        let path = self.path()?;
        Ok(Store::open_existing(&path)?)
    }

    /// Open the history, creating it if needed (for commands that write).
    pub fn open_or_create(&self) -> anyhow::Result<Store> {
        let path = self.path()?;
        Ok(Store::open(&path)?)
    }
}

/// The skill name a SKILL argument stands for: a skill folder (or its SKILL.md) gives its
/// frontmatter `name` (or the folder name when the name is missing); anything else is taken
/// as a name.
pub fn skill_name(arg: &str) -> anyhow::Result<String> {
    let path = Path::new(arg);
    let dir = if path.file_name().is_some_and(|n| n == "SKILL.md") && path.is_file() {
        path.parent().unwrap_or(Path::new(".")).to_path_buf()
    } else if path.join("SKILL.md").is_file() {
        path.to_path_buf()
    } else {
        if arg.trim().is_empty() {
            bail!("expected a skill name or a skill folder, found an empty argument");
        }
        return Ok(arg.to_string());
    };
    let skill = Skill::load(&dir);
    let from_frontmatter = skill
        .document
        .as_ref()
        .ok()
        .and_then(|d| d.field_str("name"))
        .map(|(name, _)| name.trim().to_string())
        .filter(|n| !n.is_empty());
    match from_frontmatter.or_else(|| skill.dir_name().map(str::to_string)) {
        Some(name) => Ok(name),
        None => bail!(
            "cannot tell the name of the skill in {}: its SKILL.md has no `name` and the folder has no name",
            dir.display()
        ),
    }
}

/// A signed lift such as `+0.213`, or `—` when there is none.
pub fn signed(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_string(), |v| format!("{v:+.3}"))
}

/// `[+0.120, +0.306] 95% t n=12`: an interval always says its level, method and n.
pub fn interval(ci: Option<&Interval>) -> String {
    match ci {
        Some(ci) => format!(
            "[{:+.3}, {:+.3}] {:.0}% {} n={}",
            ci.low,
            ci.high,
            ci.level * 100.0,
            ci.method.label(),
            ci.n
        ),
        None => "no interval (fewer than 2 cases)".to_string(),
    }
}

/// `3 cases` or `5 cases x 3 attempts (averaged within each case)`: what n is.
pub fn design(cases: usize, attempts: u32) -> String {
    let cases = count(cases, "case");
    match attempts {
        0 | 1 => cases,
        a => format!("{cases} x {a} attempts (averaged within each case; n = cases)"),
    }
}

/// A rate as a percentage with its interval: `75% [41%, 93%] n=8`.
pub fn rate(ci: Option<&Interval>) -> String {
    match ci {
        Some(ci) => format!(
            "{:.0}% [{:.0}%, {:.0}%] n={}",
            ci.estimate * 100.0,
            ci.low * 100.0,
            ci.high * 100.0,
            ci.n
        ),
        None => "—".to_string(),
    }
}

/// The `--scoring-profile` flag: which lift verdicts and tables read.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProfileArg {
    /// The outcome lift: task pass, accuracy, goal accuracy, behavior checks (and custom
    /// metrics a run declares as outcome). Invocation and process metrics are shown beside it.
    #[default]
    #[value(alias = "default")]
    Outcome,
    /// ACES's six-metric overall (security, skill execution, skill efficiency, accuracy, goal
    /// accuracy, behavior check), as the paper computes it.
    Aces,
}

impl From<ProfileArg> for ScoringProfile {
    fn from(p: ProfileArg) -> ScoringProfile {
        match p {
            ProfileArg::Outcome => ScoringProfile::Outcome,
            ProfileArg::Aces => ScoringProfile::Aces,
        }
    }
}

/// The first characters of a content hash, for tables (`sha256:5f1c0a7e` -> `5f1c0a7e`).
pub fn short_hash(hash: &str) -> String {
    let bare = hash.strip_prefix("sha256:").unwrap_or(hash);
    bare.chars().take(8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_folder_names_its_skill_and_anything_else_is_a_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("folder-name");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: real-name\ndescription: d\n---\nbody\n",
        )
        .unwrap();
        assert_eq!(skill_name(dir.to_str().unwrap()).unwrap(), "real-name");
        assert_eq!(
            skill_name(dir.join("SKILL.md").to_str().unwrap()).unwrap(),
            "real-name"
        );
        std::fs::write(dir.join("SKILL.md"), "no frontmatter\n").unwrap();
        assert_eq!(skill_name(dir.to_str().unwrap()).unwrap(), "folder-name");
        assert_eq!(skill_name("just-a-name").unwrap(), "just-a-name");
        assert!(skill_name(" ").is_err());
    }

    #[test]
    fn numbers_print_with_sign_method_and_n() {
        assert_eq!(signed(Some(0.2134)), "+0.213");
        assert_eq!(signed(Some(-0.05)), "-0.050");
        assert_eq!(signed(None), "—");
        assert_eq!(short_hash("sha256:5f1c0a7e9d1b"), "5f1c0a7e");
        assert_eq!(short_hash("unknown"), "unknown");
    }
}
