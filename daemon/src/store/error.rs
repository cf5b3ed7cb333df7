//! What can go wrong with the history store, worded so the person reading it knows what was
//! expected, what was found, and where.

use std::path::PathBuf;

use super::types::{RunId, RunStatus};

/// Every failure of the store. Input that the store refuses is reported before anything is
/// written: each write is one transaction, so a refused or failed call leaves no partial rows.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened or read as SQLite at all.
    #[error("cannot open the history database {path}: {source}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// SQLite's reason.
        source: rusqlite::Error,
    },
    /// `open_existing` was asked for a database that does not exist.
    #[error(
        "no history database at {path} (nothing has been run or imported yet; run `skillwatch import FILE` or pass --db)"
    )]
    Missing {
        /// The path that was looked for.
        path: PathBuf,
    },
    /// The file is SQLite but was not written by skillwatch; it is left untouched.
    #[error("{path} is not a skillwatch history database: {reason}; the file was not modified")]
    Foreign {
        /// The database file.
        path: PathBuf,
        /// What gave it away.
        reason: String,
    },
    /// The database was written by a newer skillwatch; it is left untouched.
    #[error(
        "the history database {path} has schema version {found}, but this skillwatch knows versions up to {known}; \
         upgrade skillwatch to read it (the file was not modified)"
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// The `user_version` found in the file.
        found: u32,
        /// The newest migration this build carries.
        known: u32,
    },
    /// A migration failed; its transaction was rolled back, so the file stays at the previous
    /// version.
    #[error(
        "upgrading {path} with migration {migration} failed (the database stays at the previous version): {source}"
    )]
    Migration {
        /// The database file.
        path: PathBuf,
        /// The migration's file name, e.g. `0002_run_summaries.sql`.
        migration: &'static str,
        /// SQLite's reason.
        source: rusqlite::Error,
    },
    /// A value handed to the store breaks the history's rules.
    #[error("invalid {field}: expected {expected}, found {found}")]
    Invalid {
        /// Which field, e.g. `trial.metrics.accuracy`.
        field: String,
        /// What would have been accepted.
        expected: String,
        /// What was given.
        found: String,
    },
    /// No run has this id.
    #[error("no run with id {0} in the history")]
    UnknownRun(RunId),
    /// A trial names a case that is not in its run's suite.
    #[error("run {run} has no case `{case}` in its suite (known cases: {known})")]
    UnknownCase {
        /// The run.
        run: RunId,
        /// The case key the trial gave.
        case: String,
        /// The suite's case keys, comma-separated.
        known: String,
    },
    /// Trials can only be added to, and a run only finished from, the running state.
    #[error("run {run} is {status}; expected a running run")]
    NotRunning {
        /// The run.
        run: RunId,
        /// Its current status.
        status: RunStatus,
    },
    /// The same (case, condition, attempt) was recorded twice in one run.
    #[error("run {run} already has a trial for case `{case}`, {condition}, attempt {attempt}")]
    DuplicateTrial {
        /// The run.
        run: RunId,
        /// The case key.
        case: String,
        /// `baseline` or `skill`.
        condition: String,
        /// The attempt number.
        attempt: u32,
    },
    /// A stored trajectory no longer matches its hash or cannot be decompressed.
    #[error("trajectory {sha256} is damaged: {reason}")]
    Trajectory {
        /// The hash it was stored under.
        sha256: String,
        /// What failed.
        reason: String,
    },
    /// A row read back does not have the shape the schema promises (e.g. edited by hand).
    #[error("the history database holds an unexpected value in {table}.{column}: {found}")]
    Corrupt {
        /// The table.
        table: &'static str,
        /// The column.
        column: &'static str,
        /// The offending value.
        found: String,
    },
    /// A comparison asked for a model the skill has no completed run on.
    #[error(
        "no completed run of skill `{skill}` on model `{model}` in the history (models with completed runs: {known})"
    )]
    NoCompletedRun {
        /// The skill.
        skill: String,
        /// The model asked for.
        model: String,
        /// Models that do have completed runs, comma-separated (or `none`).
        known: String,
    },
    /// Scoring a run's trials failed.
    #[error("scoring run {run} failed: {reason}")]
    Scoring {
        /// The run.
        run: RunId,
        /// Why.
        reason: String,
    },
    /// Creating the database's folder failed.
    #[error("cannot create the folder for the history database {path}: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// The OS reason.
        source: std::io::Error,
    },
    /// SQLite found the file damaged; nothing is written to it.
    #[error(
        "the history database {path} is damaged ({problems}); nothing was written to it. \
         Recover what is readable into a new file with `sqlite3 {path} .recover | sqlite3 {path}.recovered`, \
         check it with `skillwatch history --db {path}.recovered`, then put it in place of the damaged one"
    )]
    Damaged {
        /// The database file.
        path: PathBuf,
        /// What SQLite reported.
        problems: String,
    },
    /// Any other SQLite error (disk full, locked past the busy timeout, ...).
    #[error("history database error: {0}{hint}", hint = damage_hint(.0))]
    Sql(#[from] rusqlite::Error),
}

/// Whether SQLite says the file is damaged or not a database at all.
pub(crate) fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// For an error that says the file is damaged: what to do about it.
fn damage_hint(e: &rusqlite::Error) -> &'static str {
    if is_damage(e) {
        " (the file is damaged: recover what is readable with `sqlite3 FILE .recover | sqlite3 NEW_FILE`)"
    } else {
        ""
    }
}

impl StoreError {
    /// Shorthand for [`StoreError::Invalid`].
    pub(crate) fn invalid(
        field: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> StoreError {
        StoreError::Invalid {
            field: field.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
