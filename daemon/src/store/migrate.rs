//! Schema migrations: the plain SQL files in the top-level `migrations/` folder, applied in
//! order at open, each in its own transaction together with the `user_version` bump that
//! records it. A crash mid-migration therefore leaves the file at the previous version, and the
//! next open simply retries. Each transaction holds the write lock from its start and reads the
//! version again under it, so processes opening one new file at once apply each migration once.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::error::{Result, StoreError};

/// One migration: the file name (for messages) and its SQL.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// File name in `migrations/`, e.g. `0001_init.sql`.
    pub name: &'static str,
    /// The SQL, run as one batch.
    pub sql: &'static str,
}

/// Every migration this build knows, oldest first. Migration `i` (0-based) brings the schema to
/// `user_version = i + 1`. Files are never edited once they have landed on `main`.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        name: "0001_init.sql",
        sql: include_str!("../../../migrations/0001_init.sql"),
    },
    Migration {
        name: "0002_run_summaries.sql",
        sql: include_str!("../../../migrations/0002_run_summaries.sql"),
    },
    Migration {
        name: "0003_daemon_jobs.sql",
        sql: include_str!("../../../migrations/0003_daemon_jobs.sql"),
    },
    Migration {
        name: "0004_verdicts.sql",
        sql: include_str!("../../../migrations/0004_verdicts.sql"),
    },
    Migration {
        name: "0005_trial_stderr.sql",
        sql: include_str!("../../../migrations/0005_trial_stderr.sql"),
    },
    Migration {
        name: "0006_probe_runs.sql",
        sql: include_str!("../../../migrations/0006_probe_runs.sql"),
    },
    Migration {
        name: "0007_external_trials.sql",
        sql: include_str!("../../../migrations/0007_external_trials.sql"),
    },
    Migration {
        name: "0008_trigger_runs.sql",
        sql: include_str!("../../../migrations/0008_trigger_runs.sql"),
    },
    Migration {
        name: "0009_probe_jobs.sql",
        sql: include_str!("../../../migrations/0009_probe_jobs.sql"),
    },
    Migration {
        name: "0010_watched_roots_used.sql",
        sql: include_str!("../../../migrations/0010_watched_roots_used.sql"),
    },
    Migration {
        name: "0011_failed_runs.sql",
        sql: include_str!("../../../migrations/0011_failed_runs.sql"),
    },
    Migration {
        name: "0012_run_engine.sql",
        sql: include_str!("../../../migrations/0012_run_engine.sql"),
    },
    Migration {
        name: "0013_description_optimizations.sql",
        sql: include_str!("../../../migrations/0013_description_optimizations.sql"),
    },
    Migration {
        name: "0014_optimization_jobs.sql",
        sql: include_str!("../../../migrations/0014_optimization_jobs.sql"),
    },
    Migration {
        name: "0015_plugin_arm.sql",
        sql: include_str!("../../../migrations/0015_plugin_arm.sql"),
    },
    Migration {
        name: "0016_judge_spending.sql",
        sql: include_str!("../../../migrations/0016_judge_spending.sql"),
    },
];

/// `PRAGMA application_id` of a skillwatch history ("SKWH"), so another program's SQLite file
/// is recognised and left alone.
pub const APPLICATION_ID: i32 = 0x534b_5748;

/// The schema version this build writes.
pub fn latest_version() -> u32 {
    MIGRATIONS.len() as u32
}

/// Read the schema version and refuse files this build must not touch: a newer schema, or an
/// SQLite file that belongs to someone else. Reads only; writes nothing.
pub fn check_version(conn: &Connection, path: &Path, known: u32) -> Result<u32> {
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    // One read transaction for every read below: another process may commit the first
    // migration between two of them, and a version read before it with tables counted after
    // it looks like someone else's file.
    let snapshot = conn.unchecked_transaction().map_err(open_err)?;
    let version: i64 = snapshot
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(open_err)?;
    let app_id: i32 = snapshot
        .pragma_query_value(None, "application_id", |r| r.get(0))
        .map_err(open_err)?;
    let version = u32::try_from(version).map_err(|_| StoreError::Foreign {
        path: path.to_path_buf(),
        reason: format!("its user_version is {version}"),
    })?;
    if version == 0 {
        let tables: i64 = snapshot
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .map_err(open_err)?;
        if tables > 0 {
            return Err(StoreError::Foreign {
                path: path.to_path_buf(),
                reason: format!("it has {tables} tables but no skillwatch schema version"),
            });
        }
    } else if app_id != APPLICATION_ID {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
            reason: format!("its application_id is {app_id:#x}, expected {APPLICATION_ID:#x}"),
        });
    }
    if version > known {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: version,
            known,
        });
    }
    Ok(version)
}

/// Apply `migrations[from..]`, each with its version bump in one transaction.
///
/// Foreign keys are off while they run and checked before each commit: SQLite's way to change
/// a table's constraints is to rebuild it (0015 widens `trials.condition`), and dropping a
/// table others refer to with foreign keys on would delete or refuse their rows. The pragma
/// cannot change inside a transaction, so it is set around them; a migration that leaves a
/// dangling reference is rolled back.
pub fn apply(
    conn: &mut Connection,
    path: &Path,
    from: u32,
    migrations: &[Migration],
) -> Result<()> {
    if from as usize >= migrations.len() {
        return Ok(());
    }
    let enforced: bool = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
    conn.pragma_update(None, "foreign_keys", false)?;
    let applied = apply_each(conn, path, from, migrations);
    conn.pragma_update(None, "foreign_keys", enforced)?;
    applied
}

fn apply_each(
    conn: &mut Connection,
    path: &Path,
    from: u32,
    migrations: &[Migration],
) -> Result<()> {
    for (index, migration) in migrations.iter().enumerate().skip(from as usize) {
        let fail = |source| StoreError::Migration {
            path: path.to_path_buf(),
            migration: migration.name,
            source,
        };
        // The write lock is taken before the version is read again: another process opening
        // the same new file (the editor's server, a CLI, the daemon it started) may have
        // applied this migration since `from` was read, and running it twice fails
        // (`duplicate column name`) or worse.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let current: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(fail)?;
        if current > index as i64 {
            continue;
        }
        tx.execute_batch(migration.sql).map_err(fail)?;
        if let Some(table) = dangling_reference(&tx).map_err(fail)? {
            return Err(fail(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY),
                Some(format!("a row of {table} refers to a row that is gone")),
            )));
        }
        if index == 0 {
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(fail)?;
        }
        tx.pragma_update(None, "user_version", index as i64 + 1)
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
    }
    Ok(())
}

/// The first table with a row whose foreign key points at nothing (`PRAGMA
/// foreign_key_check`), if any.
fn dangling_reference(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let mut check = conn.prepare("PRAGMA foreign_key_check")?;
    let mut rows = check.query([])?;
    rows.next()?.map(|r| r.get(0)).transpose()
}
