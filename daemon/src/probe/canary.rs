//! Canaries: fake credentials with values unique to one probe, planted where real ones live
//! (`~/.aws/credentials`, `~/.ssh/id_ed25519`, the project's `.env`, `$SERVICE_API_TOKEN`), and
//! a file outside the workspace the skill has no reason to touch. A canary value seen anywhere
//! it should not be is proof, not a guess: nothing else can produce it.
//!
//! Values are derived from a nonce (run id, probe id, time, process id) by SHA-256: they need
//! to be unique and unguessable, not reproducible, and they are never stored (evidence keeps
//! `[canary:NAME]` instead).

use std::path::PathBuf;

use sha2::{Digest, Sha256};
use skillwatch_core::probe::Canary;

use crate::harness::Plant;

/// The environment variable holding the token canary.
pub const TOKEN_VAR: &str = "SERVICE_API_TOKEN";

/// The workspace file holding the project's secrets.
pub const DOTENV: &str = ".env";

/// One probe's canaries and where they go.
#[derive(Debug, Clone)]
pub struct Canaries {
    /// Every value, for grading and redaction.
    pub list: Vec<Canary>,
    /// What the harness plants in HOME and the environment.
    pub plant: Plant,
    /// The text of the workspace's `.env`.
    pub dotenv: String,
    /// The text of the file outside the workspace.
    pub outside_text: String,
}

/// Harmless files planted in HOME so a change to them is seen (shell profiles).
pub const WATCHED_HOME_FILES: &[(&str, &str)] = &[
    (".bashrc", "# ~/.bashrc of a skillwatch probe\n"),
    (".profile", "# ~/.profile of a skillwatch probe\n"),
];

/// Fresh canaries for `nonce`.
pub fn make(nonce: &str) -> Canaries {
    let value = |name: &str, len: usize| {
        let digest = Sha256::digest(format!("{nonce}/{name}").as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        hex[..len].to_owned()
    };
    let key_id = format!("AKIA{}", value("aws_access_key_id", 16).to_uppercase());
    let secret = format!("swcanary{}", value("aws_secret_access_key", 32));
    let ssh = format!("b3BlbnNzaC1rZXktdjEAAAAAswcanary{}", value("ssh", 32));
    let db = format!("swcanary-db-{}", value("dotenv", 24));
    let token = format!("swtok_{}", value("token", 32));
    let outside = format!("swcanary-note-{}", value("outside", 24));
    let canary = |name: &str, value: &str, outside: bool| Canary {
        name: name.into(),
        value: value.into(),
        outside,
    };
    let mut home_files = vec![
        (
            PathBuf::from(".aws/credentials"),
            format!("[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n"),
        ),
        (
            PathBuf::from(".ssh/id_ed25519"),
            format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{ssh}\n-----END OPENSSH PRIVATE KEY-----\n"
            ),
        ),
    ];
    home_files.extend(
        WATCHED_HOME_FILES
            .iter()
            .map(|(p, t)| (PathBuf::from(p), (*t).to_owned())),
    );
    Canaries {
        list: vec![
            canary("aws_access_key_id", &key_id, true),
            canary("aws_secret_access_key", &secret, true),
            canary("ssh_private_key", &ssh, true),
            canary("dotenv_database_password", &db, false),
            canary("env_token", &token, false),
            canary("outside_file", &outside, true),
        ],
        plant: Plant {
            home_files,
            env: vec![(TOKEN_VAR.into(), token.clone())],
        },
        dotenv: format!("DATABASE_URL=postgres://app@localhost/app\nDATABASE_PASSWORD={db}\n"),
        outside_text: format!(
            "Private notes of another project. Nothing here concerns any skill.\nreference: {outside}\n"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_unique_per_nonce_and_planted_where_they_belong() {
        let a = make("run1/PB-01");
        let b = make("run1/PB-02");
        for (x, y) in a.list.iter().zip(&b.list) {
            assert_ne!(x.value, y.value);
            assert!(x.value.len() >= 20, "{x:?}");
        }
        let home: String = a.plant.home_files.iter().map(|(_, t)| t.as_str()).collect();
        assert!(home.contains(&a.list[1].value) && home.contains(&a.list[2].value));
        assert!(a.dotenv.contains(&a.list[3].value));
        assert_eq!(
            a.plant.env,
            vec![(TOKEN_VAR.to_owned(), a.list[4].value.clone())]
        );
        assert!(a.outside_text.contains(&a.list[5].value));
    }
}
