//! The write path: a run's identity, its trials, its end. Every function here runs inside a
//! transaction the caller (a `Store` method or the importer) owns, so a failure anywhere rolls
//! back everything that call wrote.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use skillwatch_core::scoring::ProbeResult;

use super::error::{Result, StoreError};
use super::record::{CaseSpec, Judgment, RunSpec, SkillIdentity, SuiteSpec, TrialRecord, Verdict};
use super::time::now_ms;
use super::trajectory;
use super::types::{RunId, RunStatus, TrialId};

/// The parts of a run's row that later writes check.
struct RunState {
    status: RunStatus,
    suite_id: i64,
}

/// Insert (or find) the skill, its version, the suite and its cases; insert the run as running.
pub fn begin_run(conn: &Connection, spec: &RunSpec, external_id: Option<&str>) -> Result<RunId> {
    spec.validate()?;
    let now = now_ms();
    let (skill_id, version_id) = upsert_skill(conn, &spec.skill, now)?;
    let suite_id = ensure_suite(conn, skill_id, &spec.suite, now)?;
    insert_run(
        conn,
        spec,
        external_id,
        [skill_id, version_id, suite_id],
        now,
    )
}

/// Insert-or-find the suite; a new suite gets its cases, a known one must list the same cases
/// (a suite hash names one list of cases, or "last result of case C" would be ambiguous).
fn ensure_suite(conn: &Connection, skill_id: i64, suite: &SuiteSpec, now: i64) -> Result<i64> {
    let suite_id = upsert_suite(
        conn,
        skill_id,
        &suite.content_hash,
        suite.source.as_deref(),
        now,
    )?;
    let known = suite_case_hashes(conn, suite_id)?;
    if known.is_empty() {
        insert_cases(conn, skill_id, suite_id, &suite.cases, now)?;
        return Ok(suite_id);
    }
    let same = known.len() == suite.cases.len()
        && suite
            .cases
            .iter()
            .all(|c| known.get(&c.key) == Some(&c.content_hash));
    if !same {
        return Err(StoreError::invalid(
            "run.suite",
            format!(
                "the same cases as the suite already stored under {} (a suite hash names one list of cases)",
                suite.content_hash
            ),
            "a different list of case keys or case hashes",
        ));
    }
    Ok(suite_id)
}

/// Insert-or-find each case and link it to the suite at its position.
fn insert_cases(
    conn: &Connection,
    skill_id: i64,
    suite_id: i64,
    cases: &[CaseSpec],
    now: i64,
) -> Result<()> {
    for (position, case) in cases.iter().enumerate() {
        let definition = case.definition.as_ref().map(|d| d.to_string());
        conn.prepare_cached(
            "INSERT INTO cases (skill_id, case_key, content_hash, definition, created_ms)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
        )?
        .execute(params![
            skill_id,
            case.key,
            case.content_hash,
            definition,
            now
        ])?;
        let case_id: i64 = conn
            .prepare_cached(
                "SELECT id FROM cases WHERE skill_id = ?1 AND case_key = ?2 AND content_hash = ?3",
            )?
            .query_row(params![skill_id, case.key, case.content_hash], |r| r.get(0))?;
        conn.prepare_cached(
            "INSERT INTO suite_cases (suite_id, case_id, position) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![suite_id, case_id, position as i64])?;
    }
    Ok(())
}

/// `case key -> content hash` of a stored suite (empty for a new one).
fn suite_case_hashes(conn: &Connection, suite_id: i64) -> Result<BTreeMap<String, String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.case_key, c.content_hash FROM suite_cases sc JOIN cases c ON c.id = sc.case_id
         WHERE sc.suite_id = ?1",
    )?;
    let rows = stmt.query_map([suite_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<BTreeMap<_, _>>>()?)
}

/// Insert the run row itself, `running`.
fn insert_run(
    conn: &Connection,
    spec: &RunSpec,
    external_id: Option<&str>,
    [skill_id, version_id, suite_id]: [i64; 3],
    now: i64,
) -> Result<RunId> {
    conn.prepare_cached(
        "INSERT INTO runs (skill_id, skill_version_id, suite_id, harness, harness_version, model,
                           judge_model, scoring_profile, trigger, config, tool_version, seed, status,
                           external_id, started_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'running', ?13, ?14)",
    )?
    .execute(params![
        skill_id,
        version_id,
        suite_id,
        spec.harness,
        spec.harness_version,
        spec.model,
        spec.judge_model,
        spec.scoring_profile,
        spec.trigger.as_str(),
        spec.config.to_string(),
        spec.tool_version,
        spec.seed as i64,
        external_id,
        spec.started_ms.unwrap_or(now),
    ])?;
    Ok(RunId(conn.last_insert_rowid()))
}

/// Insert-or-find one version of a skill.
/// Insert-or-find the skill and this version of it: (skill id, version id). Every kind of run
/// (paired, probe, trigger) hangs from these two rows.
pub(super) fn upsert_skill(
    conn: &Connection,
    skill: &SkillIdentity,
    now: i64,
) -> Result<(i64, i64)> {
    let skill_id: i64 = conn
        .prepare_cached(
            "INSERT INTO skills (name, last_path, created_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (name) DO UPDATE SET last_path = coalesce(excluded.last_path, last_path)
             RETURNING id",
        )?
        .query_row(params![skill.name, skill.path, now], |r| r.get(0))?;
    let version_id = upsert_skill_version(conn, skill_id, &skill.content_hash, now)?;
    Ok((skill_id, version_id))
}

fn upsert_skill_version(conn: &Connection, skill_id: i64, hash: &str, now: i64) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO skill_versions (skill_id, content_hash, created_ms) VALUES (?1, ?2, ?3)
         ON CONFLICT DO NOTHING",
    )?
    .execute(params![skill_id, hash, now])?;
    Ok(conn
        .prepare_cached("SELECT id FROM skill_versions WHERE skill_id = ?1 AND content_hash = ?2")?
        .query_row(params![skill_id, hash], |r| r.get(0))?)
}

/// Insert-or-find one version of a skill's suite.
fn upsert_suite(
    conn: &Connection,
    skill_id: i64,
    hash: &str,
    source: Option<&str>,
    now: i64,
) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO suites (skill_id, content_hash, source, created_ms) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT DO NOTHING",
    )?
    .execute(params![skill_id, hash, source, now])?;
    Ok(conn
        .prepare_cached("SELECT id FROM suites WHERE skill_id = ?1 AND content_hash = ?2")?
        .query_row(params![skill_id, hash], |r| r.get(0))?)
}

fn run_state(conn: &Connection, run: RunId) -> Result<RunState> {
    conn.prepare_cached("SELECT status, suite_id FROM runs WHERE id = ?1")?
        .query_row([run], |r| {
            Ok(RunState {
                status: r.get(0)?,
                suite_id: r.get(1)?,
            })
        })
        .optional()?
        .ok_or(StoreError::UnknownRun(run))
}

fn running_state(conn: &Connection, run: RunId) -> Result<RunState> {
    let state = run_state(conn, run)?;
    if state.status != RunStatus::Running {
        return Err(StoreError::NotRunning {
            run,
            status: state.status,
        });
    }
    Ok(state)
}

/// The case row of `key` in the run's suite, or an error listing the suite's keys.
fn case_id(conn: &Connection, run: RunId, suite_id: i64, key: &str) -> Result<i64> {
    let found: Option<i64> = conn
        .prepare_cached(
            "SELECT c.id FROM suite_cases sc JOIN cases c ON c.id = sc.case_id
             WHERE sc.suite_id = ?1 AND c.case_key = ?2",
        )?
        .query_row(params![suite_id, key], |r| r.get(0))
        .optional()?;
    if let Some(id) = found {
        return Ok(id);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT c.case_key FROM suite_cases sc JOIN cases c ON c.id = sc.case_id
         WHERE sc.suite_id = ?1 ORDER BY sc.position",
    )?;
    let keys = stmt
        .query_map([suite_id], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Err(StoreError::UnknownCase {
        run,
        case: key.to_string(),
        known: keys.join(", "),
    })
}

/// Write one trial with its assertions, metrics, judgments and trajectory.
pub fn record_trial(conn: &Connection, run: RunId, trial: &TrialRecord) -> Result<TrialId> {
    trial.validate()?;
    let state = running_state(conn, run)?;
    let case_id = case_id(conn, run, state.suite_id, &trial.case)?;
    let duplicate: Option<i64> = conn
        .prepare_cached(
            "SELECT id FROM trials WHERE run_id = ?1 AND case_id = ?2 AND condition = ?3 AND attempt = ?4",
        )?
        .query_row(
            params![run.0, case_id, trial.condition.as_str(), trial.attempt],
            |r| r.get(0),
        )
        .optional()?;
    if duplicate.is_some() {
        return Err(StoreError::DuplicateTrial {
            run,
            case: trial.case.clone(),
            condition: trial.condition.to_string(),
            attempt: trial.attempt,
        });
    }
    let trajectory_id = match &trial.trajectory {
        Some(t) => Some(trajectory::put(conn, t)?.0),
        None => None,
    };
    let as_i64 = |v: Option<u64>| v.map(|v| v as i64);
    conn.prepare_cached(
        "INSERT INTO trials (run_id, case_id, condition, attempt, status, passed, output,
                             error_message, tokens_in, tokens_out, tokens_cached, cost_usd, wall_ms,
                             tool_calls, turns, errors, skill_invoked, trajectory_id, started_ms,
                             stderr_tail, retries)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
                 ?20, ?21)",
    )?
    .execute(params![
        run.0,
        case_id,
        trial.condition.as_str(),
        trial.attempt,
        trial.status.as_str(),
        trial.passed,
        trial.output,
        trial.error_message,
        as_i64(trial.tokens.input),
        as_i64(trial.tokens.output),
        as_i64(trial.tokens.cached),
        trial.cost_usd,
        as_i64(trial.wall_ms),
        trial.tool_calls,
        trial.turns,
        trial.errors,
        trial.skill_invoked,
        trajectory_id,
        trial.started_ms.unwrap_or_else(now_ms),
        trial.stderr_tail,
        trial.retries,
    ])?;
    let trial_id = conn.last_insert_rowid();
    let mut insert_assertion = conn.prepare_cached(
        "INSERT INTO assertion_results (trial_id, idx, kind, description, passed, message)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (idx, a) in trial.assertions.iter().enumerate() {
        insert_assertion.execute(params![
            trial_id,
            idx as i64,
            a.kind,
            a.description,
            a.passed,
            a.message
        ])?;
    }
    let mut insert_metric = conn.prepare_cached(
        "INSERT INTO metric_scores (trial_id, metric, value) VALUES (?1, ?2, ?3)",
    )?;
    for (metric, value) in &trial.metrics {
        insert_metric.execute(params![trial_id, metric, value])?;
    }
    for judgment in &trial.judgments {
        insert_judgment(conn, run, case_id, trial.attempt, Some(trial_id), judgment)?;
    }
    Ok(TrialId(trial_id))
}

/// Write pairwise verdicts on the baseline and skill trials of one (case, attempt). Allowed on
/// finished runs too: re-judging never re-runs agents.
pub fn record_pairwise(
    conn: &Connection,
    run: RunId,
    case: &str,
    attempt: u32,
    judgments: &[Judgment],
) -> Result<()> {
    let state = run_state(conn, run)?;
    let case_id = case_id(conn, run, state.suite_id, case)?;
    for judgment in judgments {
        judgment.validate()?;
        insert_judgment(conn, run, case_id, attempt, None, judgment)?;
    }
    Ok(())
}

pub(super) fn insert_judgment(
    conn: &Connection,
    run: RunId,
    case_id: i64,
    attempt: u32,
    trial_id: Option<i64>,
    judgment: &Judgment,
) -> Result<()> {
    let (score, winner, magnitude, error) = match &judgment.verdict {
        Verdict::Score { score } => (Some(*score), None, None, None),
        Verdict::Preference { winner, magnitude } => {
            (None, Some(winner.as_str()), Some(magnitude.as_str()), None)
        }
        Verdict::Failed { error } => (None, None, None, Some(error.as_str())),
    };
    conn.prepare_cached(
        "INSERT INTO judgments (run_id, case_id, attempt, trial_id, kind, judge_model, criterion,
                                score, winner, magnitude, reasoning, error, created_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        run.0,
        case_id,
        attempt,
        trial_id,
        judgment.kind.as_str(),
        judgment.judge_model,
        judgment.criterion,
        score,
        winner,
        magnitude,
        judgment.reasoning,
        error,
        now_ms(),
    ])?;
    Ok(())
}

/// Mark a running run finished with `status` at `finished_ms` (now when `None`).
///
/// A run that would complete with trials that errored and not one case attempt scored on
/// both sides (both trials ran without error) measured nothing: it is stored `failed`, so
/// history, lenses, reports and comparisons never count it among completed runs (issue 36).
/// Answers with the status stored.
pub fn finish_run(
    conn: &Connection,
    run: RunId,
    status: RunStatus,
    finished_ms: Option<i64>,
) -> Result<RunStatus> {
    if status == RunStatus::Running {
        return Err(StoreError::invalid(
            "finish_run status",
            "completed | failed | cancelled | interrupted",
            "running",
        ));
    }
    running_state(conn, run)?;
    let status = if status == RunStatus::Completed && measured_nothing(conn, run)? {
        RunStatus::Failed
    } else {
        status
    };
    conn.prepare_cached("UPDATE runs SET status = ?2, finished_ms = ?3 WHERE id = ?1")?
        .execute(params![
            run.0,
            status.as_str(),
            finished_ms.unwrap_or_else(now_ms)
        ])?;
    Ok(status)
}

/// Whether a run's trials errored with no (case, attempt) scored on both sides. (Migration
/// 0011 applies the same rule to runs stored before it.)
fn measured_nothing(conn: &Connection, run: RunId) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM trials WHERE run_id = ?1 AND status = 'error')
                AND NOT EXISTS (
                    SELECT 1 FROM trials b JOIN trials s
                      ON s.run_id = b.run_id AND s.case_id = b.case_id
                     AND s.attempt = b.attempt AND s.condition = 'skill'
                    WHERE b.run_id = ?1 AND b.condition = 'baseline'
                      AND b.status != 'error' AND s.status != 'error')",
        )?
        .query_row([run.0], |r| r.get(0))?)
}

/// Declare the custom metrics that are outcome metrics of a running run (they enter its
/// outcome lift).
pub fn set_outcome_metrics(conn: &Connection, run: RunId, metrics: &[String]) -> Result<()> {
    running_state(conn, run)?;
    let json = serde_json::Value::from(metrics.to_vec()).to_string();
    conn.prepare_cached("UPDATE runs SET outcome_metrics = ?2 WHERE id = ?1")?
        .execute(params![run.0, json])?;
    Ok(())
}

/// Record the scoring profile a run is read under by default (`run --scoring-profile`).
pub fn set_scoring_profile(conn: &Connection, run: RunId, profile: &str) -> Result<()> {
    conn.prepare_cached("UPDATE runs SET scoring_profile = ?2 WHERE id = ?1")?
        .execute(params![run.0, profile])?;
    Ok(())
}

/// Record a running run's security probe results (one row per probe id).
pub fn record_probes(conn: &Connection, run: RunId, probes: &[ProbeResult]) -> Result<()> {
    running_state(conn, run)?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO probe_results (run_id, probe, probe_group, passed) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for p in probes {
        stmt.execute(params![run.0, p.id, p.group.as_str(), p.passed])?;
    }
    Ok(())
}
