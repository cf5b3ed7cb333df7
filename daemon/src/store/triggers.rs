//! Trigger test runs (migration 0008): one row per run, one per trial with its query. The
//! rates are not stored: they are computed from the trials on read
//! ([`skillwatch_core::scoring::trigger::summarize`]), so every rate shown can be traced to the
//! trials behind it, and a comparison pairs two runs by query text.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use skillwatch_core::evalspec::{TriggerKind, TriggerQuery};
use skillwatch_core::scoring::trigger::{
    TriggerChange, TriggerSummary, TriggerTrial, compare_summaries, summarize,
};
use skillwatch_core::scoring::{Verdict, VerdictParams};
use skillwatch_core::trajectory::Decision;

use super::error::{Result, StoreError};
use super::record::SkillIdentity;
use super::time::now_ms;
use super::types::RunStatus;

/// A trigger run's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TriggerRunId(pub i64);

impl std::fmt::Display for TriggerRunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What identifies a trigger run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerRunSpec {
    /// The skill version tested.
    pub skill: SkillIdentity,
    /// Harness name.
    pub harness: String,
    /// Harness version.
    pub harness_version: Option<String>,
    /// The agent's model.
    pub model: String,
    /// `skillwatch <version>`.
    pub tool_version: String,
    /// The skills staged beside it.
    pub staged: Vec<String>,
    /// Whether each agent was stopped at its decision (false: `--full`).
    pub early_stop: bool,
    /// Whether it enters the skill's history (an arm of a description A/B does not).
    pub in_history: bool,
}

/// One stored trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerTrialRow {
    /// The query it sent.
    pub query: TriggerQuery,
    /// Its result (`trial.query` indexes the run's queries).
    pub trial: TriggerTrial,
    /// Which run of its query.
    pub run: u32,
    /// Whether the harness listed the skill, when it reports its listing.
    pub listed: Option<bool>,
    /// Why no decision was seen.
    pub error_message: Option<String>,
}

/// A stored trigger run with its rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerRunInfo {
    /// Its id.
    pub id: TriggerRunId,
    /// Skill name.
    pub skill: String,
    /// The skill version's hash.
    pub skill_hash: String,
    /// Harness.
    pub harness: String,
    /// Harness version.
    pub harness_version: Option<String>,
    /// Model.
    pub model: String,
    /// Status.
    pub status: RunStatus,
    /// The skills staged beside it.
    pub staged: Vec<String>,
    /// Whether each agent was stopped at its decision.
    pub early_stop: bool,
    /// Start, Unix ms.
    pub started_ms: i64,
    /// End, Unix ms.
    pub finished_ms: Option<i64>,
    /// Trials stored.
    pub trials: usize,
    /// The rates, from the stored trials.
    pub summary: TriggerSummary,
}

/// Start a trigger run (`running`).
pub fn begin(conn: &Connection, spec: &TriggerRunSpec) -> Result<TriggerRunId> {
    let now = now_ms();
    let (skill_id, version_id) = super::write::upsert_skill(conn, &spec.skill, now)?;
    conn.prepare_cached(
        "INSERT INTO trigger_runs (skill_id, skill_version_id, harness, harness_version, model,
                                   tool_version, status, staged, early_stop, started_ms,
                                   in_history)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        skill_id,
        version_id,
        spec.harness,
        spec.harness_version,
        spec.model,
        spec.tool_version,
        serde_json::to_string(&spec.staged).unwrap_or_else(|_| "[]".into()),
        spec.early_stop,
        now,
        spec.in_history
    ])?;
    Ok(TriggerRunId(conn.last_insert_rowid()))
}

/// Record one trial.
pub fn record(conn: &Connection, run: TriggerRunId, row: &TriggerTrialRow) -> Result<()> {
    let t = &row.trial;
    conn.prepare_cached(
        "INSERT INTO trigger_trials (trigger_run_id, query_index, run, query, kind, origin,
                                     decision, tokens, turns, wall_ms, stopped_early, listed,
                                     error_message)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        run.0,
        t.query as i64,
        row.run,
        row.query.query,
        kind_code(row.query.kind),
        row.query.origin,
        t.decision
            .as_ref()
            .and_then(|d| serde_json::to_string(d).ok()),
        t.tokens as i64,
        t.turns,
        t.wall_ms as i64,
        t.stopped_early,
        row.listed,
        row.error_message,
    ])?;
    Ok(())
}

/// Finish a trigger run.
pub fn finish(conn: &Connection, run: TriggerRunId, status: RunStatus) -> Result<()> {
    let changed = conn
        .prepare_cached(
            "UPDATE trigger_runs SET status = ?2, finished_ms = ?3
             WHERE id = ?1 AND status = 'running'",
        )?
        .execute(params![run.0, status.as_str(), now_ms()])?;
    if changed == 0 {
        return Err(StoreError::invalid(
            "trigger run",
            "a running trigger run",
            format!("trigger run {run}, not running or unknown"),
        ));
    }
    Ok(())
}

/// One trigger run with its rates.
pub fn get(conn: &Connection, run: TriggerRunId) -> Result<Option<TriggerRunInfo>> {
    let info = conn
        .prepare_cached(&format!("{SELECT_RUN} WHERE t.id = ?1"))?
        .query_row([run.0], run_row)
        .optional()?;
    match info {
        Some(info) => Ok(Some(with_summary(conn, info?)?)),
        None => Ok(None),
    }
}

/// The newest trigger runs of `skill` (optionally on one model and harness), newest first.
pub fn list(
    conn: &Connection,
    skill: &str,
    model: Option<&str>,
    harness: Option<&str>,
    limit: usize,
) -> Result<Vec<TriggerRunInfo>> {
    let mut stmt = conn.prepare_cached(&format!(
        "{SELECT_RUN} WHERE s.name = ?1 AND (?2 IS NULL OR t.model = ?2)
           AND (?3 IS NULL OR t.harness = ?3) AND t.in_history = 1
         ORDER BY t.started_ms DESC, t.id DESC LIMIT ?4"
    ))?;
    let rows = stmt.query_map(params![skill, model, harness, limit as i64], run_row)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(with_summary(conn, row??)?);
    }
    Ok(out)
}

/// The newest completed trigger run of `skill` on `model` (and `harness`, when given).
pub fn latest_completed(
    conn: &Connection,
    skill: &str,
    model: &str,
    harness: Option<&str>,
) -> Result<Option<TriggerRunInfo>> {
    let info = conn
        .prepare_cached(&format!(
            "{SELECT_RUN} WHERE s.name = ?1 AND t.model = ?2 AND (?3 IS NULL OR t.harness = ?3)
               AND t.status = 'completed' AND t.in_history = 1
             ORDER BY t.started_ms DESC, t.id DESC LIMIT 1"
        ))?
        .query_row(params![skill, model, harness], run_row)
        .optional()?;
    match info {
        Some(info) => Ok(Some(with_summary(conn, info?)?)),
        None => Ok(None),
    }
}

/// Trigger rates on two models, each from the newest completed trigger run of the skill
/// there, paired by query: what `compare` reports beside the lift.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerComparison {
    /// The reference run.
    pub reference: TriggerRunInfo,
    /// The candidate run.
    pub candidate: TriggerRunInfo,
    /// Recall and false triggers, each with its interval and verdict.
    pub change: TriggerChange,
    /// The worse of the two verdicts (`regresses` fails CI).
    pub verdict: Verdict,
}

impl TriggerComparison {
    /// Pair two runs' queries ([`compare_summaries`]).
    pub fn of(
        reference: TriggerRunInfo,
        candidate: TriggerRunInfo,
        params: &VerdictParams,
    ) -> TriggerComparison {
        let change = compare_summaries(&reference.summary, &candidate.summary, params);
        TriggerComparison {
            verdict: change.verdict(),
            reference,
            candidate,
            change,
        }
    }

    /// Whether this is a trigger regression (gated like a lift regression).
    pub fn regresses(&self) -> bool {
        self.verdict == Verdict::Regresses
    }
}

/// The trials of a run, in (query, run) order.
pub fn trials(conn: &Connection, run: TriggerRunId) -> Result<Vec<TriggerTrialRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT query_index, run, query, kind, origin, decision, tokens, turns, wall_ms,
                stopped_early, listed, error_message
         FROM trigger_trials WHERE trigger_run_id = ?1 ORDER BY query_index, run",
    )?;
    let rows = stmt.query_map([run.0], |r| {
        let kind: String = r.get(3)?;
        let decision: Option<String> = r.get(5)?;
        Ok((
            kind,
            decision,
            TriggerTrialRow {
                query: TriggerQuery {
                    query: r.get(2)?,
                    kind: TriggerKind::Positive,
                    origin: r.get(4)?,
                },
                trial: TriggerTrial {
                    query: r.get::<_, i64>(0)? as usize,
                    decision: None,
                    tokens: r.get::<_, i64>(6)? as u64,
                    turns: r.get(7)?,
                    wall_ms: r.get::<_, i64>(8)? as u64,
                    stopped_early: r.get(9)?,
                },
                run: r.get(1)?,
                listed: r.get(10)?,
                error_message: r.get(11)?,
            },
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (kind, decision, mut row) = row?;
        row.query.kind = parse_kind(&kind).ok_or_else(|| unexpected("kind", kind))?;
        row.trial.decision = match decision {
            Some(d) => {
                Some(serde_json::from_str::<Decision>(&d).map_err(|_| unexpected("decision", d))?)
            }
            None => None,
        };
        out.push(row);
    }
    Ok(out)
}

/// The rates of `rows` for `skill`: queries in index order, from the trials themselves.
pub fn summary_of(skill: &str, rows: &[TriggerTrialRow]) -> TriggerSummary {
    let mut queries: Vec<TriggerQuery> = Vec::new();
    let mut trials = Vec::with_capacity(rows.len());
    for row in rows {
        // Rows come in query order; a gap (a query with no stored trial) is closed by
        // renumbering, so every query in the summary is one that was tried.
        if queries.last() != Some(&row.query) {
            queries.push(row.query.clone());
        }
        let mut t = row.trial.clone();
        t.query = queries.len() - 1;
        trials.push(t);
    }
    summarize(skill, &queries, &trials)
}

fn with_summary(conn: &Connection, mut info: TriggerRunInfo) -> Result<TriggerRunInfo> {
    let rows = trials(conn, info.id)?;
    info.trials = rows.len();
    info.summary = summary_of(&info.skill, &rows);
    Ok(info)
}

fn kind_code(kind: TriggerKind) -> &'static str {
    match kind {
        TriggerKind::Positive => "positive",
        TriggerKind::Negative => "negative",
        TriggerKind::NearMiss => "near_miss",
    }
}

fn parse_kind(s: &str) -> Option<TriggerKind> {
    match s {
        "positive" => Some(TriggerKind::Positive),
        "negative" => Some(TriggerKind::Negative),
        "near_miss" => Some(TriggerKind::NearMiss),
        _ => None,
    }
}

const SELECT_RUN: &str = "SELECT t.id, s.name, v.content_hash, t.harness, t.harness_version,
        t.model, t.status, t.staged, t.early_stop, t.started_ms, t.finished_ms
     FROM trigger_runs t JOIN skills s ON s.id = t.skill_id
     JOIN skill_versions v ON v.id = t.skill_version_id";

fn unexpected(column: &'static str, found: String) -> StoreError {
    StoreError::invalid(
        format!("trigger_runs.{column}"),
        "a value skillwatch writes",
        found,
    )
}

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<TriggerRunInfo>> {
    let status: String = r.get(6)?;
    let staged: String = r.get(7)?;
    Ok((|| {
        Ok(TriggerRunInfo {
            id: TriggerRunId(r.get(0)?),
            skill: r.get(1)?,
            skill_hash: r.get(2)?,
            harness: r.get(3)?,
            harness_version: r.get(4)?,
            model: r.get(5)?,
            status: RunStatus::parse(&status).ok_or_else(|| unexpected("status", status))?,
            staged: serde_json::from_str(&staged).unwrap_or_default(),
            early_stop: r.get(8)?,
            started_ms: r.get(9)?,
            finished_ms: r.get(10)?,
            trials: 0,
            summary: summarize("", &[], &[]),
        })
    })())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Row, RunBegin, RunEnd, Store};

    fn spec(model: &str) -> TriggerRunSpec {
        TriggerRunSpec {
            skill: SkillIdentity {
                name: "pdf".into(),
                path: None,
                content_hash: "sha256:aa".into(),
            },
            harness: "claude-code".into(),
            harness_version: Some("2.1.328".into()),
            model: model.into(),
            tool_version: "skillwatch test".into(),
            staged: vec!["docx".into()],
            early_stop: true,
            in_history: true,
        }
    }

    fn row(
        query: usize,
        text: &str,
        kind: TriggerKind,
        decision: Option<Decision>,
    ) -> TriggerTrialRow {
        TriggerTrialRow {
            query: TriggerQuery {
                query: text.into(),
                kind,
                origin: "tests/eval.yaml#/triggers".into(),
            },
            trial: TriggerTrial {
                query,
                decision,
                tokens: 3040,
                turns: 1,
                wall_ms: 900,
                stopped_early: true,
            },
            run: 0,
            listed: Some(true),
            error_message: None,
        }
    }

    #[test]
    fn trigger_runs_round_trip_with_rates_from_their_trials() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = Store::open(&tmp.path().join("h.sqlite3")).unwrap();
        let at = store.begin(RunBegin::Trigger(&spec("m1"))).unwrap();
        let run = TriggerRunId(at.id);
        let pick = |s: &str| Some(Decision::Picked { skill: s.into() });
        let rows = [
            row(0, "split a pdf", TriggerKind::Positive, pick("pdf")),
            row(
                1,
                "merge pdfs",
                TriggerKind::Positive,
                Some(Decision::Answered),
            ),
            row(2, "edit a docx", TriggerKind::NearMiss, pick("docx")),
            row(3, "a haiku", TriggerKind::Negative, None),
        ];
        for r in &rows {
            store.record(at, &Row::Trigger(r.clone()), None).unwrap();
        }
        let end = RunEnd {
            status: RunStatus::Completed,
            stop: None,
        };
        store.finish(at, &end).unwrap();
        assert!(store.finish(at, &end).is_err());
        let got = store.trigger_run(run).unwrap().unwrap();
        assert_eq!(got.status, RunStatus::Completed);
        assert_eq!(got.trials, 4);
        assert_eq!((got.summary.recall.hits, got.summary.recall.trials), (1, 2));
        assert_eq!(
            (
                got.summary.false_trigger.hits,
                got.summary.false_trigger.trials
            ),
            (0, 1)
        );
        assert_eq!(got.summary.undecided, 1);
        assert_eq!(store.trigger_trials(run).unwrap(), rows.to_vec());
        let crashed = store.begin(RunBegin::Trigger(&spec("m2"))).unwrap();
        assert_eq!(store.interrupt_running_runs().unwrap(), 1);
        let got = store
            .trigger_run(TriggerRunId(crashed.id))
            .unwrap()
            .unwrap();
        assert_eq!(got.status, RunStatus::Interrupted);
        let m1: Vec<TriggerRunId> = store
            .trigger_runs("pdf", Some("m1"), None, 10)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(m1, vec![run]);
        assert_eq!(store.trigger_runs("pdf", None, None, 10).unwrap().len(), 2);
    }
}
