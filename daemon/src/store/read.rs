//! The read path: runs and trials as stored, for history listings, scoring and `--trials`.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use skillwatch_core::scoring::ProbeResult;

use super::error::{Result, StoreError};
use super::record::Tokens;
use super::types::{Condition, RunId, RunStatus, TrialId, TrialStatus, Trigger};

/// A run as history shows it: its full identity and how many trials it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The run's id.
    pub id: RunId,
    /// The skill's name.
    pub skill: String,
    /// The skill version's content hash.
    pub skill_hash: String,
    /// The suite version's content hash.
    pub suite_hash: String,
    /// Harness name.
    pub harness: String,
    /// Harness version, when known.
    pub harness_version: Option<String>,
    /// Agent model.
    pub model: String,
    /// Judge model, when judged.
    pub judge_model: Option<String>,
    /// The scoring profile the run was read under when it was made (`run --scoring-profile`):
    /// the profile history, the lens and reports read it under unless asked for another
    /// ([`RunInfo::profile`]).
    pub scoring_profile: String,
    /// Why it ran.
    pub trigger: Trigger,
    /// Its lifecycle state.
    pub status: RunStatus,
    /// The run's configuration.
    pub config: serde_json::Value,
    /// The seed of its randomness.
    pub seed: u64,
    /// The tool that made it.
    pub tool_version: String,
    /// Start, epoch ms.
    pub started_ms: i64,
    /// End, epoch ms (none while running).
    pub finished_ms: Option<i64>,
    /// Number of trials recorded.
    pub trial_count: u64,
    /// Custom metrics the run declares as outcome metrics.
    #[serde(default)]
    pub outcome_metrics: Vec<String>,
}

impl RunInfo {
    /// The profile this run is read under by default: the one recorded with it, so `run
    /// --scoring-profile aces`, `history` and the lens say the same verdict of one run.
    pub fn profile(&self) -> skillwatch_core::scoring::ScoringProfile {
        skillwatch_core::scoring::ScoringProfile::parse(&self.scoring_profile).unwrap_or_default()
    }
}

/// One trial as stored, without its (possibly large) output text: what scoring needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredTrial {
    /// The trial's id.
    pub id: TrialId,
    /// The case key.
    pub case: String,
    /// The case's content hash.
    pub case_hash: String,
    /// Baseline or skill.
    pub condition: Condition,
    /// Repetition number.
    pub attempt: u32,
    /// Completed, error or timeout.
    pub status: TrialStatus,
    /// Task outcome, when graded.
    pub passed: Option<bool>,
    /// The error message of a failed trial.
    pub error_message: Option<String>,
    /// The end of the agent's stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
    /// Retries into a fresh workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
    /// Token counts.
    pub tokens: Tokens,
    /// Cost in USD.
    pub cost_usd: Option<f64>,
    /// Wall time in ms.
    pub wall_ms: Option<u64>,
    /// Tool calls.
    pub tool_calls: Option<u32>,
    /// Assistant turns.
    pub turns: Option<u32>,
    /// Errors in the trajectory.
    pub errors: Option<u32>,
    /// Whether the target skill was invoked.
    pub skill_invoked: Option<bool>,
    /// Metric values on [0, 1].
    pub metrics: BTreeMap<String, f64>,
    /// Assertions that held.
    pub assertions_passed: u32,
    /// Assertions checked.
    pub assertions_total: u32,
    /// The trajectory's hash, for `Store::trajectory`.
    pub trajectory_sha256: Option<String>,
    /// Start, epoch ms.
    pub started_ms: i64,
}

/// A skill the history knows, for listings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillInfo {
    /// The skill's name.
    pub name: String,
    /// Where it was last seen.
    pub last_path: Option<String>,
    /// Number of runs of any status.
    pub runs: u64,
    /// Start of its newest run, epoch ms.
    pub last_run_ms: Option<i64>,
}

const RUN_COLUMNS: &str =
    "r.id, s.name, v.content_hash, su.content_hash, r.harness, r.harness_version,
     r.model, r.judge_model, r.scoring_profile, r.trigger, r.status, r.config, r.seed,
     r.tool_version, r.started_ms, r.finished_ms,
     (SELECT count(*) FROM trials t WHERE t.run_id = r.id), r.outcome_metrics";

const RUN_FROM: &str = "FROM runs r JOIN skills s ON s.id = r.skill_id
     JOIN skill_versions v ON v.id = r.skill_version_id JOIN suites su ON su.id = r.suite_id";

/// A JSON column as a value; a damaged one reads as a conversion error naming the column.
fn json_column(r: &Row<'_>, idx: usize) -> rusqlite::Result<serde_json::Value> {
    let text: String = r.get(idx)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn run_row(r: &Row<'_>) -> rusqlite::Result<RunInfo> {
    Ok(RunInfo {
        id: r.get(0)?,
        skill: r.get(1)?,
        skill_hash: r.get(2)?,
        suite_hash: r.get(3)?,
        harness: r.get(4)?,
        harness_version: r.get(5)?,
        model: r.get(6)?,
        judge_model: r.get(7)?,
        scoring_profile: r.get(8)?,
        trigger: r.get(9)?,
        status: r.get(10)?,
        config: json_column(r, 11)?,
        seed: r.get::<_, i64>(12)? as u64,
        tool_version: r.get(13)?,
        started_ms: r.get(14)?,
        finished_ms: r.get(15)?,
        trial_count: r.get::<_, i64>(16)? as u64,
        outcome_metrics: serde_json::from_value(json_column(r, 17)?).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(17, rusqlite::types::Type::Text, Box::new(e))
        })?,
    })
}

/// A run's security probe results, by probe id.
pub fn run_probes(conn: &Connection, run: RunId) -> Result<Vec<ProbeResult>> {
    let mut stmt = conn.prepare_cached(
        "SELECT probe, probe_group, passed FROM probe_results WHERE run_id = ?1 ORDER BY probe",
    )?;
    let rows = stmt.query_map([run], |r| {
        let group: String = r.get(1)?;
        Ok((r.get::<_, String>(0)?, group, r.get::<_, bool>(2)?))
    })?;
    let mut probes = Vec::new();
    for row in rows {
        let (id, group, passed) = row?;
        let group =
            serde_json::from_value(serde_json::Value::String(group.clone())).map_err(|_| {
                StoreError::Corrupt {
                    table: "probe_results",
                    column: "probe_group",
                    found: group,
                }
            })?;
        probes.push(ProbeResult { id, group, passed });
    }
    Ok(probes)
}

/// One run by id.
pub fn run(conn: &Connection, run: RunId) -> Result<RunInfo> {
    let sql = format!("SELECT {RUN_COLUMNS} {RUN_FROM} WHERE r.id = ?1");
    conn.prepare_cached(&sql)?
        .query_row([run], run_row)
        .optional()?
        .ok_or(StoreError::UnknownRun(run))
}

/// Which runs of a skill to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter<'a> {
    /// Only this model.
    pub model: Option<&'a str>,
    /// Only this harness.
    pub harness: Option<&'a str>,
    /// Only runs with this status.
    pub status: Option<RunStatus>,
    /// At most this many (newest first); `None` for all.
    pub limit: Option<u32>,
}

/// Runs of the skill named `skill`, newest first (by start time, then id).
pub fn runs_of_skill(
    conn: &Connection,
    skill: &str,
    filter: &RunFilter<'_>,
) -> Result<Vec<RunInfo>> {
    let sql = format!(
        "SELECT {RUN_COLUMNS} {RUN_FROM}
         WHERE s.name = ?1 AND (?2 IS NULL OR r.model = ?2) AND (?3 IS NULL OR r.harness = ?3)
           AND (?4 IS NULL OR r.status = ?4)
         ORDER BY r.started_ms DESC, r.id DESC LIMIT ?5"
    );
    let limit = filter.limit.map_or(-1, i64::from);
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        params![skill, filter.model, filter.harness, filter.status, limit],
        run_row,
    )?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Every skill in the history, by name.
pub fn skills(conn: &Connection) -> Result<Vec<SkillInfo>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.name, s.last_path, count(r.id), max(r.started_ms)
         FROM skills s LEFT JOIN runs r ON r.skill_id = s.id GROUP BY s.id ORDER BY s.name",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(SkillInfo {
            name: r.get(0)?,
            last_path: r.get(1)?,
            runs: r.get::<_, i64>(2)? as u64,
            last_run_ms: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Whether a skill of this name has any history: a run of any kind that is in it (an arm of a
/// description A/B is not).
pub fn skill_exists(conn: &Connection, skill: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM skills s WHERE s.name = ?1
               AND (EXISTS (SELECT 1 FROM runs r WHERE r.skill_id = s.id)
                 OR EXISTS (SELECT 1 FROM probe_runs p WHERE p.skill_id = s.id)
                 OR EXISTS (SELECT 1 FROM trigger_runs t
                            WHERE t.skill_id = s.id AND t.in_history = 1))",
        )?
        .query_row([skill], |_| Ok(()))
        .optional()?
        .is_some())
}

fn trial_row(r: &Row<'_>) -> rusqlite::Result<StoredTrial> {
    let count = |idx| -> rusqlite::Result<Option<u32>> {
        Ok(r.get::<_, Option<i64>>(idx)?.map(|v| v as u32))
    };
    let tokens = |idx| -> rusqlite::Result<Option<u64>> {
        Ok(r.get::<_, Option<i64>>(idx)?.map(|v| v as u64))
    };
    Ok(StoredTrial {
        id: r.get(0)?,
        case: r.get(1)?,
        case_hash: r.get(2)?,
        condition: r.get(3)?,
        attempt: r.get(4)?,
        status: r.get(5)?,
        passed: r.get(6)?,
        error_message: r.get(7)?,
        tokens: Tokens {
            input: tokens(8)?,
            output: tokens(9)?,
            cached: tokens(10)?,
        },
        cost_usd: r.get(11)?,
        wall_ms: tokens(12)?,
        tool_calls: count(13)?,
        turns: count(14)?,
        errors: count(15)?,
        skill_invoked: r.get(16)?,
        trajectory_sha256: r.get(17)?,
        started_ms: r.get(18)?,
        assertions_passed: r.get(19)?,
        assertions_total: r.get(20)?,
        stderr_tail: r.get(21)?,
        retries: count(22)?,
        metrics: BTreeMap::new(),
    })
}

/// Every trial of a run with its metrics, ordered by case position, condition, attempt.
pub fn run_trials(conn: &Connection, run: RunId) -> Result<Vec<StoredTrial>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, c.case_key, c.content_hash, t.condition, t.attempt, t.status, t.passed,
                t.error_message, t.tokens_in, t.tokens_out, t.tokens_cached, t.cost_usd, t.wall_ms,
                t.tool_calls, t.turns, t.errors, t.skill_invoked, j.sha256, t.started_ms,
                (SELECT count(*) FILTER (WHERE a.passed) FROM assertion_results a WHERE a.trial_id = t.id),
                (SELECT count(*) FROM assertion_results a WHERE a.trial_id = t.id),
                t.stderr_tail, t.retries
         FROM trials t JOIN cases c ON c.id = t.case_id
         JOIN runs r ON r.id = t.run_id
         LEFT JOIN suite_cases sc ON sc.suite_id = r.suite_id AND sc.case_id = t.case_id
         LEFT JOIN trajectories j ON j.id = t.trajectory_id
         WHERE t.run_id = ?1
         ORDER BY sc.position, t.condition, t.attempt",
    )?;
    let mut trials = stmt
        .query_map([run], trial_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let index: BTreeMap<i64, usize> = trials
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.0, i))
        .collect();
    let mut metrics = conn.prepare_cached(
        "SELECT m.trial_id, m.metric, m.value FROM metric_scores m
         JOIN trials t ON t.id = m.trial_id WHERE t.run_id = ?1",
    )?;
    let rows = metrics.query_map([run], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, f64>(2)?,
        ))
    })?;
    for row in rows {
        let (trial, metric, value) = row?;
        if let Some(&i) = index.get(&trial) {
            trials[i].metrics.insert(metric, value);
        }
    }
    Ok(trials)
}

/// A trial's output text.
pub fn trial_output(conn: &Connection, trial: TrialId) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT output FROM trials WHERE id = ?1", [trial], |r| {
            r.get(0)
        })
        .optional()?)
}

/// Whether a run with this external id (from an imported file) is already stored.
pub fn external_id_exists(conn: &Connection, external_id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM runs WHERE external_id = ?1")?
        .query_row([external_id], |_| Ok(()))
        .optional()?
        .is_some())
}
