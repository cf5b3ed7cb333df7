//! Judge verdicts after the fact: what `skillwatch rejudge` reads (each trial's case, checks
//! and judgments) and writes (new verdicts replacing a trial's old ones, with the metrics and
//! outcome they imply), without re-running agents.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::error::{Result, StoreError};
use super::record::{AssertionResult, CaseSpec, Judgment, Verdict};
use super::types::{JudgmentKind, RunId, TrialId, Winner};
use super::write;

/// A judgment as stored, with where it belongs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredJudgment {
    /// The case key.
    pub case: String,
    /// The attempt.
    pub attempt: u32,
    /// The judged trial (independent judgments only).
    pub trial: Option<TrialId>,
    /// The verdict.
    pub judgment: Judgment,
}

/// New judging results for one trial: they replace its independent judgments, its
/// `expected_behavior` checks, the judge-derived metrics and its outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialRejudged {
    /// The trial.
    pub trial: TrialId,
    /// Its new independent judgments (errors included).
    pub judgments: Vec<Judgment>,
    /// Its new judged expectation checks (kind `expected_behavior`).
    pub expectations: Vec<AssertionResult>,
    /// Metric values to set; metrics named in `cleared` are removed.
    pub metrics: BTreeMap<String, f64>,
    /// Metrics no longer scored (a judge error leaves `accuracy` unscored).
    pub cleared: Vec<String>,
    /// The new task outcome.
    pub passed: Option<bool>,
}

/// The cases of a run's suite with their stored definitions, in suite order.
pub fn run_cases(conn: &Connection, run: RunId) -> Result<Vec<CaseSpec>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.case_key, c.content_hash, c.definition FROM runs r
         JOIN suite_cases sc ON sc.suite_id = r.suite_id JOIN cases c ON c.id = sc.case_id
         WHERE r.id = ?1 ORDER BY sc.position",
    )?;
    let rows = stmt.query_map([run], |r| {
        let definition: Option<String> = r.get(2)?;
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, definition))
    })?;
    let mut cases = Vec::new();
    for row in rows {
        let (key, content_hash, definition) = row?;
        let definition = definition
            .map(|d| serde_json::from_str(&d))
            .transpose()
            .map_err(|e| StoreError::Corrupt {
                table: "cases",
                column: "definition",
                found: format!("text that is not JSON ({e})"),
            })?;
        cases.push(CaseSpec {
            key,
            content_hash,
            definition,
        });
    }
    Ok(cases)
}

/// A trial's stored checks, in order.
pub fn trial_checks(conn: &Connection, trial: TrialId) -> Result<Vec<AssertionResult>> {
    let mut stmt = conn.prepare_cached(
        "SELECT kind, description, passed, message FROM assertion_results
         WHERE trial_id = ?1 ORDER BY idx",
    )?;
    let rows = stmt.query_map([trial], |r| {
        Ok(AssertionResult {
            kind: r.get(0)?,
            description: r.get(1)?,
            passed: r.get(2)?,
            message: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Every judgment of a run, oldest first.
pub fn run_judgments(conn: &Connection, run: RunId) -> Result<Vec<StoredJudgment>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.case_key, j.attempt, j.trial_id, j.kind, j.judge_model, j.criterion, j.score,
                j.winner, j.magnitude, j.reasoning, j.error
         FROM judgments j JOIN cases c ON c.id = j.case_id
         WHERE j.run_id = ?1 ORDER BY j.id",
    )?;
    let rows = stmt.query_map([run], |r| {
        let score: Option<f64> = r.get(6)?;
        let winner: Option<Winner> = r.get(7)?;
        let magnitude: Option<String> = r.get(8)?;
        let error: Option<String> = r.get(10)?;
        let verdict = match (error, winner, score) {
            (Some(error), _, _) => Verdict::Failed { error },
            (None, Some(winner), _) => Verdict::Preference {
                winner,
                magnitude: magnitude.unwrap_or_default(),
            },
            (None, None, score) => Verdict::Score {
                score: score.unwrap_or(f64::NAN),
            },
        };
        Ok(StoredJudgment {
            case: r.get(0)?,
            attempt: r.get(1)?,
            trial: r.get(2)?,
            judgment: Judgment {
                kind: r.get::<_, JudgmentKind>(3)?,
                judge_model: r.get(4)?,
                criterion: r.get(5)?,
                verdict,
                reasoning: r.get(9)?,
            },
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Replace one trial's judging results (see [`TrialRejudged`]).
pub fn replace_trial_judging(conn: &Connection, run: RunId, update: &TrialRejudged) -> Result<()> {
    let (case_id, attempt): (i64, u32) = conn
        .query_row(
            "SELECT case_id, attempt FROM trials WHERE id = ?1 AND run_id = ?2",
            params![update.trial, run],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?
        .ok_or_else(|| {
            StoreError::invalid(
                "rejudge",
                format!("a trial of run {run}"),
                format!("trial {}", update.trial),
            )
        })?;
    for (name, value) in &update.metrics {
        if !(value.is_finite() && (0.0..=1.0).contains(value)) {
            return Err(StoreError::invalid(
                format!("trial.metrics.{name}"),
                "a number on [0, 1]",
                value.to_string(),
            ));
        }
    }
    for j in &update.judgments {
        j.validate()?;
    }
    conn.execute(
        "DELETE FROM judgments WHERE trial_id = ?1 AND kind = 'independent'",
        [update.trial],
    )?;
    for j in &update.judgments {
        write::insert_judgment(conn, run, case_id, attempt, Some(update.trial.0), j)?;
    }
    conn.execute(
        "DELETE FROM assertion_results WHERE trial_id = ?1 AND kind = 'expected_behavior'",
        [update.trial],
    )?;
    let next: i64 = conn.query_row(
        "SELECT coalesce(max(idx) + 1, 0) FROM assertion_results WHERE trial_id = ?1",
        [update.trial],
        |r| r.get(0),
    )?;
    for (i, a) in update.expectations.iter().enumerate() {
        conn.execute(
            "INSERT INTO assertion_results (trial_id, idx, kind, description, passed, message)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                update.trial,
                next + i as i64,
                a.kind,
                a.description,
                a.passed,
                a.message
            ],
        )?;
    }
    for name in &update.cleared {
        conn.execute(
            "DELETE FROM metric_scores WHERE trial_id = ?1 AND metric = ?2",
            params![update.trial, name],
        )?;
    }
    for (name, value) in &update.metrics {
        conn.execute(
            "INSERT OR REPLACE INTO metric_scores (trial_id, metric, value) VALUES (?1, ?2, ?3)",
            params![update.trial, name, value],
        )?;
    }
    conn.execute(
        "UPDATE trials SET passed = ?2 WHERE id = ?1",
        params![update.trial, update.passed],
    )?;
    conn.execute("DELETE FROM run_summaries WHERE run_id = ?1", [run])?;
    Ok(())
}

/// Replace the pairwise verdicts of one (case, attempt) of a run.
pub fn replace_pairwise(
    conn: &Connection,
    run: RunId,
    case: &str,
    attempt: u32,
    judgments: &[Judgment],
) -> Result<()> {
    conn.execute(
        "DELETE FROM judgments WHERE run_id = ?1 AND attempt = ?2 AND kind = 'pairwise'
           AND case_id IN (SELECT c.id FROM cases c JOIN suite_cases sc ON sc.case_id = c.id
                           JOIN runs r ON r.suite_id = sc.suite_id
                           WHERE r.id = ?1 AND c.case_key = ?3)",
        params![run, attempt, case],
    )?;
    write::record_pairwise(conn, run, case, attempt, judgments)?;
    conn.execute("DELETE FROM run_summaries WHERE run_id = ?1", [run])?;
    Ok(())
}
