//! Why a run could not be made. Trial failures are not here: they are recorded as trials with
//! status `error` or `timeout` and the run goes on.

use std::path::PathBuf;

use crate::store::{RunId, StoreError};

/// A failure that stops a run (or prevents it from starting).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The skill folder is not a skill.
    #[error("{}: expected a skill folder with a SKILL.md, {reason}", .dir.display())]
    NotASkill {
        /// The folder.
        dir: PathBuf,
        /// What was found.
        reason: String,
    },
    /// The eval file could not be read (its own message says file:line:col).
    #[error(transparent)]
    Suite(#[from] skillwatch_core::evalspec::LoadSuiteError),
    /// A probe file could not be read (its own message says file:line:col).
    #[error("{0}")]
    Probes(skillwatch_core::probe::ProbeLoadError),
    /// No case is left to run (empty suite, or a case filter that matched nothing).
    #[error("{message}")]
    NoCases {
        /// What was expected and found.
        message: String,
    },
    /// Settings are incomplete or contradictory.
    #[error("{message}")]
    Settings {
        /// What is missing or wrong.
        message: String,
    },
    /// The harness could not tell its version (it is not installed, or not runnable).
    #[error("harness {harness}: {message}")]
    Harness {
        /// The harness.
        harness: String,
        /// Why.
        message: String,
    },
    /// A resumed run does not match the request.
    #[error("cannot resume run {run}: expected {expected}, found {found}")]
    Resume {
        /// The run.
        run: RunId,
        /// What the request implies.
        expected: String,
        /// What the stored run is.
        found: String,
    },
    /// The history store refused or failed a write; the run stops there (recorded trials stay).
    #[error("history store: {0}")]
    Store(#[from] StoreError),
    /// Local I/O (temporary folders).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// Why it failed.
        source: std::io::Error,
    },
}
