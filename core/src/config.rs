//! `skillwatch.toml`: where it is, and its `[check]` table.
//!
//! A repository pins its rule choices once, in the `[check]` table, and every place that
//! checks a skill reads it: `skillwatch check`, the language server and the daemon's checks on
//! save. So the editor, CI and the daemon report the same findings at the same severities.
//! Flags and editor settings still apply on top of the file (`--profile`, `--allow`,
//! `--warn`, `--deny`; the editor's `profile` and `rules`).
//!
//! ```toml
//! [check]
//! profile = "agentskills"      # default | agentskills (default: default)
//! rules = { SW205 = "off", SW201 = "error" }   # error | warning | info | off
//! inline-ignore = "except-security"   # all | except-security | none (default: all)
//! harnesses = ["claude-code", "codex", "copilot-cli"]   # whose loaders SW222-SW224 speak for
//! ```
//!
//! `harnesses` names the harnesses the skill ships to; the per-harness rules (SW222 and SW223
//! for Claude Code's listing, SW223 and SW224 from the measured loader profiles of
//! `skillwatch_core::loaders`) speak only for them. Default: all five profiled harnesses
//! (`claude-code`, `codex`, `copilot-cli`, `gemini-cli`, `opencode`), since an author
//! publishes one skill to all of them and each loader differs.
//!
//! `inline-ignore` says which `skillwatch-ignore` comments in the skills count: `all` for a
//! repository of one's own skills; `except-security` where contributors send skills (a
//! comment cannot silence an SW3xx finding); `none` to vet skills written by others (what
//! `check --no-inline-ignore` does for one run).
//!
//! The other tables belong to the daemon and the runner and are not read here; an unknown key
//! inside `[check]`, an unknown rule id or level is an error with file, line and column, so a
//! typo never silently leaves a rule as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::checks::{CheckOptions, InlineIgnore, Profile, Severity, catalog};
use crate::text::LineIndex;

/// The configuration file's name.
pub const FILE_NAME: &str = "skillwatch.toml";

/// The `skillwatch.toml` that governs `dir`: the nearest one in `dir` or a folder above it.
/// A relative `dir` is made absolute first, so the search goes past the current folder.
pub fn nearest(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .map(|d| d.join(FILE_NAME))
        .find(|p| p.is_file())
}

/// A `skillwatch.toml` that could not be used. One type for every part that reads the file
/// (this `[check]` table, the daemon's and the runner's tables), so its mistakes read alike.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: cannot read: {message}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS reason.
        message: String,
    },
    /// The file is not TOML, or a table holds something it does not accept.
    #[error("{}:{line}:{column}: {message}", .path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What was expected and found.
        message: String,
    },
    /// A value is out of its range or names something that does not exist (found after
    /// parsing, where the position is no longer known).
    #[error("{}: {message}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field, what was expected and what was found.
        message: String,
    },
}

impl ConfigError {
    /// The file at `path` could not be read.
    pub fn read(path: &Path, error: &std::io::Error) -> ConfigError {
        ConfigError::Read {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }

    /// `message` about the byte `offset` of `text`, the content of `path`.
    pub fn at(path: &Path, text: &str, offset: usize, message: String) -> ConfigError {
        let at = LineIndex::new(text).line_col(text, offset);
        ConfigError::Parse {
            path: path.to_path_buf(),
            line: at.line,
            column: at.column,
            message,
        }
    }

    /// The TOML reader's `error` on `text`, the content of `path`, at its position.
    pub fn toml(path: &Path, text: &str, error: &toml::de::Error) -> ConfigError {
        let offset = error.span().map_or(0, |s| s.start);
        ConfigError::at(path, text, offset, error.message().trim().to_string())
    }

    /// A value of `path` that parsed but cannot be used.
    pub fn invalid(path: &Path, message: String) -> ConfigError {
        ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        }
    }
}

/// The profile names users write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfileName {
    /// [`Profile::Default`].
    Default,
    /// [`Profile::AgentSkills`].
    Agentskills,
}

impl From<ProfileName> for Profile {
    fn from(name: ProfileName) -> Profile {
        match name {
            ProfileName::Default => Profile::Default,
            ProfileName::Agentskills => Profile::AgentSkills,
        }
    }
}

/// A severity a user can give a rule, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleLevel {
    /// Report as an error.
    Error,
    /// Report as a warning.
    Warning,
    /// Report as information.
    Info,
    /// Do not report.
    Off,
}

impl RuleLevel {
    /// The severity findings get, `None` to drop them (the shape of [`CheckOptions::overrides`]).
    pub fn severity(self) -> Option<Severity> {
        match self {
            RuleLevel::Error => Some(Severity::Error),
            RuleLevel::Warning => Some(Severity::Warning),
            RuleLevel::Info => Some(Severity::Info),
            RuleLevel::Off => None,
        }
    }
}

/// The `[check]` table of one `skillwatch.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckConfig {
    /// The file it came from (for messages: "profile from skillwatch.toml").
    pub path: PathBuf,
    /// `profile`, when the file sets one.
    pub profile: Option<Profile>,
    /// `rules`, as `(rule id, severity or None for off)`, rule ids in the catalog's spelling.
    pub rules: Vec<(String, Option<Severity>)>,
    /// `vet = true`: every check (CLI, editor, daemon) also runs `skillwatch vet`'s behaviour
    /// rules (SW320-SW328). Off by default: they are for skills written by others.
    pub vet: bool,
    /// `inline-ignore`, when the file sets it.
    pub inline_ignore: Option<InlineIgnore>,
    /// `harnesses`: the harnesses whose loaders the per-harness rules speak for.
    pub harnesses: Option<Vec<String>>,
}

/// The `inline-ignore` values users write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum InlineIgnoreName {
    All,
    ExceptSecurity,
    None,
}

impl From<InlineIgnoreName> for InlineIgnore {
    fn from(name: InlineIgnoreName) -> InlineIgnore {
        match name {
            InlineIgnoreName::All => InlineIgnore::All,
            InlineIgnoreName::ExceptSecurity => InlineIgnore::ExceptSecurity,
            InlineIgnoreName::None => InlineIgnore::None,
        }
    }
}

#[derive(Deserialize)]
struct FileShape {
    #[serde(default)]
    check: Option<CheckTable>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckTable {
    profile: Option<ProfileName>,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, RuleLevel>,
    #[serde(rename = "inline-ignore")]
    inline_ignore: Option<InlineIgnoreName>,
    #[serde(default)]
    vet: bool,
    harnesses: Option<Vec<Spanned<String>>>,
}

impl CheckConfig {
    /// The `[check]` table governing `dir` (see [`nearest`]), `None` when no file governs it. A
    /// file without the table gives an empty configuration.
    pub fn for_dir(dir: &Path) -> Result<Option<CheckConfig>, ConfigError> {
        nearest(dir)
            .map(|path| CheckConfig::load(&path))
            .transpose()
    }

    /// Read the `[check]` table of `path`.
    pub fn load(path: &Path) -> Result<CheckConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::read(path, &e))?;
        CheckConfig::parse(&text, path)
    }

    /// Read the `[check]` table from `text`, the content of `path`.
    pub fn parse(text: &str, path: &Path) -> Result<CheckConfig, ConfigError> {
        let shape: FileShape =
            toml::from_str(text).map_err(|e| ConfigError::toml(path, text, &e))?;
        let table = shape.check.unwrap_or(CheckTable {
            profile: None,
            rules: BTreeMap::new(),
            inline_ignore: None,
            vet: false,
            harnesses: None,
        });
        let mut harnesses = None;
        if let Some(names) = table.harnesses {
            let mut list = Vec::with_capacity(names.len());
            for name in names {
                if crate::loaders::profile(name.get_ref()).is_none() {
                    let known: Vec<&str> =
                        crate::loaders::PROFILES.iter().map(|p| p.harness).collect();
                    let message = format!(
                        "unknown harness `{}` in [check] harnesses: expected one of {}",
                        name.get_ref(),
                        known.join(", ")
                    );
                    return Err(ConfigError::at(path, text, name.span().start, message));
                }
                list.push(name.into_inner());
            }
            harnesses = Some(list);
        }
        let mut rules = Vec::with_capacity(table.rules.len());
        for (id, level) in table.rules {
            let Some(rule) = catalog::rule(&id.get_ref().to_ascii_uppercase()) else {
                let message = format!(
                    "unknown rule `{}` in [check] rules: see `skillwatch check --list-rules`",
                    id.get_ref()
                );
                return Err(ConfigError::at(path, text, id.span().start, message));
            };
            rules.push((rule.id.to_string(), level.severity()));
        }
        Ok(CheckConfig {
            path: path.to_path_buf(),
            profile: table.profile.map(Profile::from),
            rules,
            inline_ignore: table.inline_ignore.map(InlineIgnore::from),
            vet: table.vet,
            harnesses,
        })
    }

    /// The options this table asks for, before flags or editor settings.
    pub fn options(&self) -> CheckOptions {
        CheckOptions {
            profile: self.profile.unwrap_or_default(),
            overrides: self.rules.clone(),
            inline_ignore: self.inline_ignore.unwrap_or_default(),
            vet: self.vet,
            harnesses: self.harnesses.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<CheckConfig, ConfigError> {
        CheckConfig::parse(text, Path::new("/repo/skillwatch.toml"))
    }

    #[test]
    fn the_documented_example_parses() {
        let text: String = include_str!("config.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! "))
            .skip_while(|l| !l.starts_with("```toml"))
            .skip(1)
            .take_while(|l| !l.starts_with("```"))
            .map(|l| format!("{l}\n"))
            .collect();
        let config = parse(&text).unwrap();
        assert_eq!(config.profile, Some(Profile::AgentSkills));
        assert_eq!(
            config.rules,
            vec![
                ("SW201".to_string(), Some(Severity::Error)),
                ("SW205".to_string(), None)
            ]
        );
    }

    #[test]
    fn harnesses_are_checked_against_the_loader_profiles() {
        let config = parse("[check]\nharnesses = [\"codex\", \"copilot-cli\"]\n").unwrap();
        assert_eq!(
            config.options().harnesses,
            Some(vec!["codex".to_string(), "copilot-cli".to_string()])
        );
        let e = parse("[check]\nharnesses = [\"codex\", \"cursor\"]\n").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("unknown harness `cursor`") && text.contains(":2:"),
            "{text}"
        );
    }

    #[test]
    fn other_tables_are_not_read_and_no_table_is_no_choice() {
        let config = parse("[run]\nmodel = \"m\"\n[models]\nopenai = [\"m\"]\n").unwrap();
        assert_eq!(config.profile, None);
        assert!(config.rules.is_empty());
        assert_eq!(config.options().profile, Profile::Default);
    }

    #[test]
    fn rule_ids_are_taken_in_any_case_and_stored_as_the_catalog_spells_them() {
        let config = parse("[check]\nrules = { sw205 = \"warning\" }\n").unwrap();
        assert_eq!(
            config.rules,
            vec![("SW205".to_string(), Some(Severity::Warning))]
        );
    }

    #[test]
    fn mistakes_are_located() {
        let cases = [
            (
                "[check]\nrules = { SW999 = \"off\" }\n",
                2,
                11,
                "unknown rule `SW999`",
            ),
            ("[check]\nprofile = \"strict\"\n", 2, 11, "unknown variant"),
            (
                "[check]\nrules = { SW205 = \"quiet\" }\n",
                2,
                19,
                "unknown variant",
            ),
            ("[check]\nprofiles = \"default\"\n", 2, 1, "unknown field"),
            ("[check\n", 1, 7, ""),
        ];
        for (text, line, column, says) in cases {
            match parse(text) {
                Err(ConfigError::Parse {
                    line: l,
                    column: c,
                    message,
                    ..
                }) => {
                    assert_eq!((l, c), (line, column), "{text:?}: {message}");
                    assert!(message.contains(says), "{text:?}: {message}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_nearest_file_above_a_folder_governs_it() {
        let root = tempfile::tempdir().unwrap();
        let skill = root.path().join("skills/demo");
        std::fs::create_dir_all(&skill).unwrap();
        assert_eq!(CheckConfig::for_dir(&skill).unwrap(), None);
        std::fs::write(
            root.path().join(FILE_NAME),
            "[check]\nprofile = \"agentskills\"\n",
        )
        .unwrap();
        let found = CheckConfig::for_dir(&skill).unwrap().unwrap();
        assert_eq!(found.profile, Some(Profile::AgentSkills));
        std::fs::write(skill.join(FILE_NAME), "[check]\n").unwrap();
        let closer = CheckConfig::for_dir(&skill).unwrap().unwrap();
        assert_eq!(closer.profile, None, "the nearer file wins, whole");
        std::fs::write(skill.join(FILE_NAME), "[check]\nprofile = 1\n").unwrap();
        assert!(matches!(
            CheckConfig::for_dir(&skill),
            Err(ConfigError::Parse { line: 2, .. })
        ));
    }
}
