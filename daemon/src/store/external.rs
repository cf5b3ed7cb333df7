//! Trials imported one by one from another tool's job (`external_trials`, migration 0005): a
//! Harbor job is imported as it stands, and imported again as more of its trials finish. Each
//! trial is known by the tool's own trial id, so a trial is stored once however often its job
//! is imported; a run stays `interrupted` until its job is complete.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Connection, OptionalExtension, params};

use super::error::Result;
use super::record::{RunSpec, TrialRecord};
use super::types::{Condition, RunId, RunStatus};
use super::{history, read, reuse, write};

/// One run of an external job as it stands.
#[derive(Debug, Clone)]
pub struct ExternalRun {
    /// The run's identity across imports, e.g. `harbor:<job id>:<agent>:<model>`.
    pub external_id: String,
    /// The run (used when it is new).
    pub spec: RunSpec,
    /// Finished trials with their external ids, in the order attempts are numbered.
    pub trials: Vec<(String, TrialRecord)>,
    /// Finished trials the caller left out because they are stored already.
    pub stored: usize,
    /// Whether the job ended with every trial read: the run is then completed.
    pub complete: bool,
    /// When the job finished (epoch ms).
    pub finished_ms: Option<i64>,
}

/// What importing an [`ExternalRun`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ExternalReport {
    /// The run.
    pub run: RunId,
    /// Whether the run is new.
    pub created: bool,
    /// Trials added now.
    pub added: usize,
    /// Trials already stored, left alone.
    pub already: usize,
    /// The run's status after the import.
    pub status: RunStatus,
}

/// Write `run`'s new trials in one transaction (the caller's).
pub fn import(tx: &Connection, run: &ExternalRun) -> Result<ExternalReport> {
    let existing: Option<(RunId, RunStatus)> = tx
        .query_row(
            "SELECT id, status FROM runs WHERE external_id = ?1",
            [&run.external_id],
            |r| Ok((RunId(r.get(0)?), r.get(1)?)),
        )
        .optional()?;
    let (id, created, status) = match existing {
        Some((id, status)) => (id, false, status),
        None => (
            write::begin_run(tx, &run.spec, Some(&run.external_id))?,
            true,
            RunStatus::Running,
        ),
    };
    let known: BTreeSet<String> = {
        let mut stmt =
            tx.prepare_cached("SELECT external_id FROM external_trials WHERE run_id = ?1")?;
        let rows = stmt.query_map([id.0], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let new: Vec<&(String, TrialRecord)> = run
        .trials
        .iter()
        .filter(|(e, _)| !known.contains(e))
        .collect();
    let target = if run.complete {
        RunStatus::Completed
    } else {
        RunStatus::Interrupted
    };
    let report = |added, status| ExternalReport {
        run: id,
        created,
        added,
        already: run.stored + run.trials.len() - added,
        status,
    };
    if !created && (new.is_empty() && status == target || status == RunStatus::Completed) {
        return Ok(report(0, status));
    }
    if !created {
        reuse::reopen_run(tx, id)?;
    }
    let mut next: BTreeMap<(String, Condition), u32> = BTreeMap::new();
    for t in read::run_trials(tx, id)? {
        let n = next.entry((t.case, t.condition)).or_default();
        *n = (*n).max(t.attempt + 1);
    }
    for (external, record) in &new {
        let n = next
            .entry((record.case.clone(), record.condition))
            .or_default();
        let mut record = record.clone();
        record.attempt = *n;
        *n += 1;
        let trial = write::record_trial(tx, id, &record)?;
        tx.prepare_cached(
            "INSERT INTO external_trials (trial_id, run_id, external_id) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![trial.0, id.0, external])?;
    }
    let stored = write::finish_run(tx, id, target, run.finished_ms)?;
    history::ensure_summary(tx, &read::run(tx, id)?)?;
    Ok(report(new.len(), stored))
}

/// Whether a trial with this external id is stored.
pub fn has_trial(conn: &Connection, external_id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM external_trials WHERE external_id = ?1")?
        .query_row([external_id], |_| Ok(()))
        .optional()?
        .is_some())
}
