//! Editor settings: sent as `initializationOptions` and again with every
//! `workspace/didChangeConfiguration`. Every field is optional with a documented default, like
//! `skillwatch.toml`, whose `[check]` table they apply over (`profile` replaces the file's,
//! `rules` come after the file's).
//!
//! The accepted shape, as JSON (VS Code wraps it in `{"skillwatch": {...}}`; both forms work):
//!
//! ```json
//! { "profile": "default", "rules": { "SW205": "off", "SW101": "error" },
//!   "historyDb": "/path/history.db", "cliPath": "/usr/local/bin/skillwatch",
//!   "diagnosticsDelayMs": 0, "codeLens": true, "historyPollMs": 2000, "daemon": true,
//!   "daemonIdleSecs": 300, "vet": false }
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use skillwatch_core::checks::{CheckOptions, Profile, catalog};
use skillwatch_core::config::{CheckConfig, ConfigError, ProfileName, RuleLevel};

/// How long a daemon started by the server stays without a client or a job.
pub const DEFAULT_DAEMON_IDLE_SECS: u64 = 300;

/// The language server's settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Settings {
    /// The rule set: `default` or `agentskills` (the strict specification); default: the
    /// `[check] profile` of the skill's skillwatch.toml, else `default`.
    pub profile: Option<ProfileName>,
    /// Per-rule severity: rule id to `error`, `warning`, `info`, or `off` to silence it;
    /// applied over the `[check] rules` of the skill's skillwatch.toml.
    pub rules: BTreeMap<String, RuleLevel>,
    /// The history database lenses read; default: the store's default path.
    pub history_db: Option<PathBuf>,
    /// The `skillwatch` binary that lens commands run; default: the running binary.
    pub cli_path: Option<PathBuf>,
    /// Extra quiet time after an edit before diagnostics are computed. Default 0: edits that
    /// arrive while a check runs are coalesced, so only the latest version is ever checked.
    pub diagnostics_delay_ms: u64,
    /// Show lift code lenses (default true).
    pub code_lens: bool,
    /// How often the history database is polled for new results, to refresh lenses; 0 turns
    /// polling off (default 2000).
    pub history_poll_ms: u64,
    /// Connect to the skillwatch daemon (starting it when none runs) for lenses, runs, and
    /// regression warnings (default true; `SKILLWATCH_NO_DAEMON=1` in the environment turns it
    /// off). Without it the server reads the history database itself, read-only.
    pub daemon: bool,
    /// Also run `skillwatch vet`'s behaviour rules (SW320-SW334) on the open SKILL.md, and
    /// show the skill's capability card when hovering `name:`, over what skillwatch.toml's
    /// `[check] vet` says.
    pub vet: bool,
    /// A daemon this server starts exits after this many seconds with no editor connected and
    /// no job queued or running (default 300; 0: it runs until stopped, like one started with
    /// `skillwatch daemon start`).
    pub daemon_idle_secs: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            profile: None,
            rules: BTreeMap::new(),
            history_db: None,
            cli_path: None,
            diagnostics_delay_ms: 0,
            code_lens: true,
            history_poll_ms: 2000,
            daemon: true,
            vet: false,
            daemon_idle_secs: DEFAULT_DAEMON_IDLE_SECS,
        }
    }
}

/// Settings that could not be read; the previous settings stay in force.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// Not the settings' shape: a misspelt key, a wrong type or level.
    #[error("skillwatch settings not applied: {0}")]
    Shape(#[from] serde_json::Error),
    /// `rules` names a rule the catalog does not have (a typo would silence nothing).
    #[error(
        "skillwatch settings not applied: unknown rule `{0}` in rules: see `skillwatch check --list-rules`"
    )]
    UnknownRule(String),
}

impl Settings {
    /// Read settings from the JSON an editor sent: `null` means defaults, a `skillwatch` key
    /// is unwrapped, anything else must be the settings object itself.
    pub fn from_json(value: &serde_json::Value) -> Result<Settings, SettingsError> {
        let value = match value {
            serde_json::Value::Null => return Ok(Settings::default()),
            serde_json::Value::Object(map) if map.contains_key("skillwatch") => &map["skillwatch"],
            other => other,
        };
        if value.is_null() {
            return Ok(Settings::default());
        }
        let settings = Settings::deserialize(value)?;
        if let Some(id) = settings
            .rules
            .keys()
            .find(|id| catalog::rule(&id.to_ascii_uppercase()).is_none())
        {
            return Err(SettingsError::UnknownRule(id.clone()));
        }
        Ok(settings)
    }

    /// The check options for a skill governed by `config` (its skillwatch.toml's `[check]`
    /// table): the editor's profile replaces the file's, the editor's rules come after the
    /// file's, so the editor wins where both speak.
    pub fn check_options(&self, config: Option<&CheckConfig>) -> CheckOptions {
        let mut options = config.map(CheckConfig::options).unwrap_or_default();
        if let Some(profile) = self.profile {
            options.profile = Profile::from(profile);
        }
        options.vet |= self.vet;
        options.overrides.extend(
            self.rules
                .iter()
                .map(|(id, level)| (id.to_ascii_uppercase(), level.severity())),
        );
        options
    }

    /// The check options for a skill in `dir`: the `[check]` table of the skillwatch.toml
    /// governing it, under these settings. The file is read at every check (a few stats and
    /// a small read), so an edit to it applies at the next check with no cache to go stale.
    /// A broken table is left out and its error returned, for the caller to show.
    pub fn options_for(&self, dir: &std::path::Path) -> (CheckOptions, Option<ConfigError>) {
        match CheckConfig::for_dir(dir) {
            Ok(config) => (self.check_options(config.as_ref()), None),
            Err(e) => (self.check_options(None), Some(e)),
        }
    }

    /// [`Settings::diagnostics_delay_ms`] as a duration.
    pub fn diagnostics_delay(&self) -> Duration {
        Duration::from_millis(self.diagnostics_delay_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use skillwatch_core::checks::{Diagnostic, Severity};
    use skillwatch_core::text::Span;

    fn diagnostic(rule: &'static str) -> Diagnostic {
        Diagnostic {
            rule,
            severity: Severity::Warning,
            path: "SKILL.md".into(),
            span: Span::new(0, 0),
            message: String::new(),
            fix: None,
        }
    }

    #[test]
    fn wrapped_flat_and_null_settings() {
        let wrapped =
            Settings::from_json(&json!({"skillwatch": {"rules": {"SW102": "off"}}})).unwrap();
        let flat = Settings::from_json(&json!({"rules": {"SW102": "off"}})).unwrap();
        assert_eq!(wrapped, flat);
        assert_eq!(
            Settings::from_json(&json!(null)).unwrap(),
            Settings::default()
        );
        let options = flat.check_options(None);
        assert_eq!(options.overrides, vec![("SW102".to_string(), None)]);
    }

    #[test]
    fn the_editor_speaks_after_the_file() {
        let file = CheckConfig::parse(
            "[check]\nprofile = \"agentskills\"\nrules = { SW205 = \"off\", SW201 = \"error\" }\n",
            std::path::Path::new("/repo/skillwatch.toml"),
        )
        .unwrap();
        let quiet = Settings::default().check_options(Some(&file));
        assert_eq!(quiet.profile, Profile::AgentSkills);
        assert_eq!(quiet.overrides, file.rules);
        let editor =
            Settings::from_json(&json!({"profile": "default", "rules": {"sw201": "info"}}))
                .unwrap()
                .check_options(Some(&file));
        assert_eq!(editor.profile, Profile::Default);
        let mut findings = vec![
            diagnostic("SW201"),
            diagnostic("SW205"),
            diagnostic("SW204"),
        ];
        editor.apply_overrides(&mut findings);
        let left: Vec<_> = findings.iter().map(|d| (d.rule, d.severity)).collect();
        assert_eq!(
            left,
            vec![("SW201", Severity::Info), ("SW204", Severity::Warning)]
        );
    }

    #[test]
    fn bad_settings_say_what_is_wrong() {
        let err = Settings::from_json(&json!({"rules": {"SW102": "loud"}})).unwrap_err();
        assert!(err.to_string().contains("loud"), "{err}");
        let err = Settings::from_json(&json!({"histroyDb": "x"})).unwrap_err();
        assert!(err.to_string().contains("histroyDb"), "{err}");
        let err = Settings::from_json(&json!({"rules": {"SW1O2": "off"}})).unwrap_err();
        assert!(err.to_string().contains("unknown rule `SW1O2`"), "{err}");
    }
}
