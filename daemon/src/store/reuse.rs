//! What the runner needs beyond recording trials: finding baseline trials it may reuse,
//! copying them into a new run, and reopening an interrupted run to resume it.
//!
//! Baseline reuse: a baseline trial does not depend on the skill under test, only on the
//! case, the harness and its version, the model, the support skills, the judge and the
//! grading rules. The runner folds all of these into one `baseline_key` it writes into the
//! run's `config`; a baseline trial of an earlier run with the same key and the same case
//! hash can be copied instead of re-run. Copies are listed in their run's `config.reused`
//! (`[{case, attempt, from_trial}]`), and only original trials are offered for reuse, so one
//! observation is never counted twice.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::error::{Result, StoreError};
use super::types::{RunId, RunStatus, TrialId};

/// An original baseline trial that may stand in for a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReusableTrial {
    /// The trial.
    pub trial: TrialId,
    /// Its run.
    pub run: RunId,
    /// Its attempt number in that run.
    pub attempt: u32,
}

/// Which baseline trials to look for.
#[derive(Debug, Clone, Copy)]
pub struct BaselineQuery<'a> {
    /// The skill's name.
    pub skill: &'a str,
    /// The case key.
    pub case: &'a str,
    /// The case's content hash (fixtures included).
    pub case_hash: &'a str,
    /// The runner's `baseline_key` (see the module docs).
    pub baseline_key: &'a str,
    /// At most this many.
    pub limit: u32,
}

/// Completed or timed-out original baseline trials matching `q`, newest run first.
pub fn find_baselines(conn: &Connection, q: &BaselineQuery<'_>) -> Result<Vec<ReusableTrial>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.run_id, t.attempt FROM trials t
         JOIN runs r ON r.id = t.run_id JOIN skills s ON s.id = r.skill_id
         JOIN cases c ON c.id = t.case_id
         WHERE s.name = ?1 AND c.case_key = ?2 AND c.content_hash = ?3
           AND t.condition = 'baseline' AND t.status IN ('completed', 'timeout')
           AND json_extract(r.config, '$.baseline_key') = ?4
           AND NOT EXISTS (
             SELECT 1 FROM json_each(r.config, '$.reused') j
             WHERE json_extract(j.value, '$.case') = c.case_key
               AND json_extract(j.value, '$.attempt') = t.attempt)
         ORDER BY r.started_ms DESC, r.id DESC, t.attempt LIMIT ?5",
    )?;
    let rows = stmt.query_map(
        params![
            q.skill,
            q.case,
            q.case_hash,
            q.baseline_key,
            i64::from(q.limit)
        ],
        |r| {
            Ok(ReusableTrial {
                trial: r.get(0)?,
                run: r.get(1)?,
                attempt: r.get(2)?,
            })
        },
    )?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Copy trial `from` (with its assertions, metrics, independent judgments and trajectory
/// reference) into the running run `to` as `attempt`. The case must be the same case row
/// (same key and hash) in `to`'s suite.
pub fn copy_trial(conn: &Connection, from: TrialId, to: RunId, attempt: u32) -> Result<TrialId> {
    let status: RunStatus = conn
        .query_row("SELECT status FROM runs WHERE id = ?1", [to], |r| r.get(0))
        .optional()?
        .ok_or(StoreError::UnknownRun(to))?;
    if status != RunStatus::Running {
        return Err(StoreError::NotRunning { run: to, status });
    }
    let in_suite: Option<i64> = conn
        .query_row(
            "SELECT t.case_id FROM trials t JOIN runs r ON r.id = ?2
             JOIN suite_cases sc ON sc.suite_id = r.suite_id AND sc.case_id = t.case_id
             WHERE t.id = ?1",
            params![from, to],
            |r| r.get(0),
        )
        .optional()?;
    let Some(case_id) = in_suite else {
        return Err(StoreError::invalid(
            "copy_trial",
            format!("trial {from} of a case (same key and hash) in run {to}'s suite"),
            "a trial of another case, or no such trial",
        ));
    };
    let inserted = conn.execute(
        "INSERT INTO trials (run_id, case_id, condition, attempt, status, passed, output,
                             error_message, tokens_in, tokens_out, tokens_cached, cost_usd, wall_ms,
                             tool_calls, turns, errors, skill_invoked, trajectory_id, started_ms,
                             stderr_tail, retries)
         SELECT ?2, case_id, condition, ?3, status, passed, output, error_message, tokens_in,
                tokens_out, tokens_cached, cost_usd, wall_ms, tool_calls, turns, errors,
                skill_invoked, trajectory_id, started_ms, stderr_tail, retries
         FROM trials WHERE id = ?1
           AND NOT EXISTS (SELECT 1 FROM trials d WHERE d.run_id = ?2 AND d.case_id = ?4
                           AND d.condition = trials.condition AND d.attempt = ?3)",
        params![from, to, attempt, case_id],
    )?;
    if inserted == 0 {
        return Err(StoreError::invalid(
            "copy_trial",
            format!("no trial yet for attempt {attempt} of this case and condition in run {to}"),
            "one already recorded",
        ));
    }
    let new = conn.last_insert_rowid();
    conn.execute(
        "INSERT INTO assertion_results (trial_id, idx, kind, description, passed, message)
         SELECT ?2, idx, kind, description, passed, message FROM assertion_results WHERE trial_id = ?1",
        params![from, new],
    )?;
    conn.execute(
        "INSERT INTO metric_scores (trial_id, metric, value)
         SELECT ?2, metric, value FROM metric_scores WHERE trial_id = ?1",
        params![from, new],
    )?;
    conn.execute(
        "INSERT INTO judgments (run_id, case_id, attempt, trial_id, kind, judge_model, criterion,
                                score, winner, magnitude, reasoning, error, created_ms)
         SELECT ?2, case_id, ?3, ?4, kind, judge_model, criterion, score, winner, magnitude,
                reasoning, error, created_ms
         FROM judgments WHERE trial_id = ?1 AND kind = 'independent'",
        params![from, to, attempt, new],
    )?;
    Ok(TrialId(new))
}

/// Set an interrupted, cancelled or failed run back to running so its missing trials can be
/// added; its stale summary is dropped. A completed run is refused: it is a finished result.
pub fn reopen_run(conn: &Connection, run: RunId) -> Result<()> {
    let status: RunStatus = conn
        .query_row("SELECT status FROM runs WHERE id = ?1", [run], |r| r.get(0))
        .optional()?
        .ok_or(StoreError::UnknownRun(run))?;
    if matches!(status, RunStatus::Completed | RunStatus::Running) {
        return Err(StoreError::invalid(
            format!("resume of run {run}"),
            "an interrupted, cancelled or failed run",
            format!("a {status} run"),
        ));
    }
    conn.execute(
        "UPDATE runs SET status = 'running', finished_ms = NULL WHERE id = ?1",
        [run],
    )?;
    conn.execute("DELETE FROM run_summaries WHERE run_id = ?1", [run])?;
    Ok(())
}
