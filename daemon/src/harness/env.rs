//! The environment an agent sees: an allow-list of the host's variables plus fresh, per-trial
//! HOME, TMPDIR and XDG directories.
//!
//! Inheriting the host environment would leak the user's skills (`~/.claude/skills`,
//! `~/.agents/skills`), settings, credentials of unrelated services and nesting markers
//! (`CLAUDECODE`) into trials, and make baseline and with-skill trials depend on who runs them.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use skillwatch_protocol::ClientEnv;

/// Host variables every harness may see: locale, terminal, user name, proxies and CA bundles
/// (a corporate proxy is part of the network, not of the user's agent setup).
pub const BASE_ALLOW: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TERM",
    "USER",
    "LOGNAME",
    "SHELL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// The environment trials draw from: the daemon's own by default. Tests give a fake one (with
/// a HOME full of skills) to prove none of it reaches a trial.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostEnv(BTreeMap<String, String>);

impl HostEnv {
    /// The current process's environment (non-UTF-8 variables are skipped).
    pub fn current() -> HostEnv {
        HostEnv(std::env::vars().collect())
    }

    /// An environment made of `pairs`.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> HostEnv {
        HostEnv(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// Every variable.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// This environment with `client`'s variables in place of its own: each variable the
    /// client names takes the client's value, or is unset when the client does not set it,
    /// so a run for a client never falls back on the daemon's own key.
    pub fn with_client(&self, client: &ClientEnv) -> HostEnv {
        let mut vars = self.0.clone();
        for (name, value) in client.vars() {
            match value {
                Some(v) => vars.insert(name.to_owned(), v.to_owned()),
                None => vars.remove(name),
            };
        }
        HostEnv(vars)
    }
}

/// The environment of one trial, built up from the allow-list and the trial's own directories.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrialEnv(BTreeMap<String, String>);

impl TrialEnv {
    /// The allowed host variables: [`BASE_ALLOW`], then the harness's and the user's extras.
    pub(crate) fn scrubbed(
        host: &HostEnv,
        harness_allow: &[&str],
        user_allow: &[String],
    ) -> TrialEnv {
        let names = BASE_ALLOW
            .iter()
            .chain(harness_allow)
            .copied()
            .chain(user_allow.iter().map(String::as_str));
        let vars = names
            .filter_map(|n| host.get(n).map(|v| (n.to_owned(), v.to_owned())))
            .collect();
        TrialEnv(vars)
    }

    /// Set `key` (overriding the host's value).
    pub(crate) fn set(&mut self, key: &str, value: impl Into<String>) {
        self.0.insert(key.to_owned(), value.into());
    }

    /// Point HOME, TMPDIR and the XDG directories at the trial's fresh directories.
    pub(super) fn isolate(&mut self, dirs: &TrialDirs) {
        let home = dirs.home.display().to_string();
        self.set("HOME", home.clone());
        self.set("TMPDIR", dirs.tmp.display().to_string());
        self.set("XDG_CONFIG_HOME", format!("{home}/.config"));
        self.set("XDG_DATA_HOME", format!("{home}/.local/share"));
        self.set("XDG_CACHE_HOME", format!("{home}/.cache"));
        self.set("XDG_STATE_HOME", format!("{home}/.local/state"));
        for (k, v) in &dirs.planted_env {
            self.set(k, v.clone());
        }
    }

    /// The variables, ready for [`super::Invocation`].
    pub(crate) fn into_vec(self) -> Vec<(String, String)> {
        self.0.into_iter().collect()
    }

    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
}

/// A trial's private directories inside its scratch directory.
#[derive(Debug, Clone)]
pub(super) struct TrialDirs {
    /// The fresh HOME.
    pub home: PathBuf,
    /// The fresh TMPDIR.
    pub tmp: PathBuf,
    /// Variables a security probe planted ([`super::Plant`]), set last.
    pub planted_env: Vec<(String, String)>,
}

impl TrialDirs {
    /// Create `scratch/home` and `scratch/tmp`. An existing non-empty HOME is refused rather than
    /// reused or wiped: reuse would leak one trial into the next, wiping a wrongly configured
    /// scratch could delete a user's files.
    pub(super) fn create(scratch: &Path) -> io::Result<TrialDirs> {
        let home = super::trial_home(scratch);
        let tmp = scratch.join("tmp");
        if home.exists() && std::fs::read_dir(&home)?.next().is_some() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{}: expected a fresh trial HOME, found a non-empty directory (scratch dirs are one per trial)",
                    home.display()
                ),
            ));
        }
        std::fs::create_dir_all(&home)?;
        std::fs::create_dir_all(&tmp)?;
        Ok(TrialDirs {
            home,
            tmp,
            planted_env: Vec::new(),
        })
    }

    /// A fresh directory `name` inside the scratch dir (a harness's config dir).
    pub(super) fn config_dir(scratch: &Path, name: &str) -> io::Result<PathBuf> {
        let dir = scratch.join(name);
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allowed_variables_pass_and_home_is_replaced() {
        let host = HostEnv::from_pairs([
            ("PATH", "/bin"),
            ("HOME", "/home/me"),
            ("CLAUDECODE", "1"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("ANTHROPIC_API_KEY", "k"),
            ("MY_VAR", "v"),
        ]);
        let tmp = tempfile::tempdir().unwrap();
        let dirs = TrialDirs::create(tmp.path()).unwrap();
        let mut env = TrialEnv::scrubbed(&host, &["ANTHROPIC_API_KEY"], &["MY_VAR".into()]);
        env.isolate(&dirs);
        let vars: BTreeMap<_, _> = env.into_vec().into_iter().collect();
        assert_eq!(vars["PATH"], "/bin");
        assert_eq!(vars["ANTHROPIC_API_KEY"], "k");
        assert_eq!(vars["MY_VAR"], "v");
        assert_eq!(vars["HOME"], dirs.home.display().to_string());
        assert!(!vars.contains_key("CLAUDECODE"));
        assert!(!vars.contains_key("AWS_SECRET_ACCESS_KEY"));
    }

    #[test]
    fn a_client_env_replaces_the_named_variables_and_unsets_what_it_lacks() {
        let host = HostEnv::from_pairs([
            ("PATH", "/bin"),
            ("ANTHROPIC_API_KEY", "daemon-key"),
            ("MYKEY", "daemon-mykey"),
        ]);
        let client: ClientEnv = serde_json::from_value(serde_json::json!({
            "ANTHROPIC_API_KEY": "client-key",
            "MYKEY": null,
        }))
        .unwrap();
        let env = host.with_client(&client);
        assert_eq!(env.get("ANTHROPIC_API_KEY"), Some("client-key"));
        assert_eq!(
            env.get("MYKEY"),
            None,
            "unset on the client: unset in the run"
        );
        assert_eq!(
            env.get("PATH"),
            Some("/bin"),
            "what the client does not name stays"
        );
        assert_eq!(host.with_client(&ClientEnv::default()), host);
    }

    #[test]
    fn a_used_home_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        TrialDirs::create(tmp.path()).unwrap();
        std::fs::write(tmp.path().join("home/.bashrc"), "x").unwrap();
        let err = TrialDirs::create(tmp.path()).unwrap_err();
        assert!(
            err.to_string().contains("expected a fresh trial HOME"),
            "{err}"
        );
    }
}
