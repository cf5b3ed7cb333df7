//! Editor settings: sent as `initializationOptions` and again with every
//! `workspace/didChangeConfiguration`. Every field is optional with a documented default, like
//! `skillwatch.toml`.
//!
//! The accepted shape, as JSON (VS Code wraps it in `{"skillwatch": {...}}`; both forms work):
//!
//! ```json
//! { "profile": "default", "rules": { "SW205": "off", "SW101": "error" },
//!   "historyDb": "/path/history.db", "cliPath": "/usr/local/bin/skillwatch",
//!   "diagnosticsDelayMs": 0, "codeLens": true, "historyPollMs": 2000, "daemon": true }
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use skillwatch_core::checks::{CheckOptions, Profile, Severity};

/// The language server's settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Settings {
    /// The rule set: `default` or `agentskills` (the strict specification).
    pub profile: ProfileName,
    /// Per-rule severity: rule id to `error`, `warning`, `info`, or `off` to silence it.
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
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            profile: ProfileName::Default,
            rules: BTreeMap::new(),
            history_db: None,
            cli_path: None,
            diagnostics_delay_ms: 0,
            code_lens: true,
            history_poll_ms: 2000,
            daemon: true,
        }
    }
}

/// The profile names users write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ProfileName {
    /// [`Profile::Default`].
    #[default]
    Default,
    /// [`Profile::AgentSkills`].
    Agentskills,
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

/// Settings that could not be read; the previous settings stay in force.
#[derive(Debug, thiserror::Error)]
#[error("skillwatch settings not applied: {0}")]
pub struct SettingsError(#[from] serde_json::Error);

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
        Ok(Settings::deserialize(value)?)
    }

    /// The check options these settings ask for.
    pub fn check_options(&self) -> CheckOptions {
        let profile = match self.profile {
            ProfileName::Default => Profile::Default,
            ProfileName::Agentskills => Profile::AgentSkills,
        };
        let overrides = self
            .rules
            .iter()
            .map(|(id, level)| {
                let severity = match level {
                    RuleLevel::Error => Some(Severity::Error),
                    RuleLevel::Warning => Some(Severity::Warning),
                    RuleLevel::Info => Some(Severity::Info),
                    RuleLevel::Off => None,
                };
                (id.clone(), severity)
            })
            .collect();
        CheckOptions { profile, overrides }
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
        let options = flat.check_options();
        assert_eq!(options.overrides, vec![("SW102".to_string(), None)]);
    }

    #[test]
    fn bad_settings_say_what_is_wrong() {
        let err = Settings::from_json(&json!({"rules": {"SW102": "loud"}})).unwrap_err();
        assert!(err.to_string().contains("loud"), "{err}");
        let err = Settings::from_json(&json!({"histroyDb": "x"})).unwrap_err();
        assert!(err.to_string().contains("histroyDb"), "{err}");
    }
}
