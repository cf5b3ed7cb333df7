//! One lifecycle for every kind of run (migration 0012), with the kind as data: a run is
//! begun, its trials are recorded one transaction each (with what each spent, in the
//! `spending` ledger), and it is finished (with why it stopped short, when a budget stopped
//! it). Paired runs, probe runs and trigger runs keep their own tables, read by their own
//! queries; what the run engine writes goes through here alone.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::error::{Result, StoreError};
use super::probes::{ProbeOutcomeRecord, ProbeRunSpec};
use super::record::{RunSpec, Tokens, TrialRecord};
use super::time::now_ms;
use super::triggers::{TriggerRunSpec, TriggerTrialRow};
use super::types::{RunId, RunKind, RunStatus, StopReason};
use super::{history, probes, read, triggers, write};

/// A run of any kind: its kind and its id in that kind's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunRef {
    /// Its kind.
    pub kind: RunKind,
    /// Its id among runs of that kind.
    pub id: i64,
}

impl RunRef {
    /// A paired run.
    pub fn paired(id: RunId) -> RunRef {
        RunRef {
            kind: RunKind::Paired,
            id: id.0,
        }
    }
}

impl std::fmt::Display for RunRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            RunKind::Paired => write!(f, "run {}", self.id),
            RunKind::Probe => write!(f, "probe run {}", self.id),
            RunKind::Trigger => write!(f, "trigger run {}", self.id),
        }
    }
}

/// What a new run is, per kind.
#[derive(Debug, Clone, Copy)]
pub enum RunBegin<'a> {
    /// A paired run.
    Paired(&'a RunSpec),
    /// A probe run.
    Probe(&'a ProbeRunSpec),
    /// A trigger run.
    Trigger(&'a TriggerRunSpec),
}

/// One finished trial of a run, as its kind stores it.
#[derive(Debug, Clone)]
pub enum Row {
    /// A paired trial.
    Paired(TrialRecord),
    /// A probe's outcome.
    Probe(ProbeOutcomeRecord),
    /// A trigger trial.
    Trigger(TriggerTrialRow),
    /// A trial stored already by another writer (a Harbor trial the importer wrote): only
    /// what it spent is recorded.
    Stored,
}

/// What one agent execution (or one judge call) spent.
#[derive(Debug, Clone, PartialEq)]
pub struct Spend {
    /// The model it ran on.
    pub model: String,
    /// The harness's token counts.
    pub tokens: Tokens,
    /// What they cost at the model's price; `None` when the model has no price.
    pub cost_usd: Option<f64>,
}

/// What a run (or a day) spent: the sum of its `spending` rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    /// Agent executions paid for.
    pub trials: u64,
    /// Input tokens (cached ones included).
    pub tokens_in: u64,
    /// Output tokens.
    pub tokens_out: u64,
    /// Cost in USD of the executions whose model has a price.
    pub cost_usd: f64,
    /// Executions and judge calls whose cost is unknown (no price for their model).
    #[serde(default)]
    pub unpriced: u64,
    /// Judge calls paid for (their tokens and cost are in the sums above; they are not
    /// trials, so `--max-trials` and `max_trials_per_day` do not count them).
    #[serde(default)]
    pub judge_calls: u64,
}

impl Spent {
    /// Input and output tokens together: what `--max-tokens` counts.
    pub fn tokens(&self) -> u64 {
        self.tokens_in + self.tokens_out
    }

    /// This plus one execution's spending.
    pub fn add(&mut self, spend: &Spend) {
        self.trials += 1;
        self.add_tokens(spend);
    }

    /// This plus one judge call's spending.
    pub fn add_judge(&mut self, spend: &Spend) {
        self.judge_calls += 1;
        self.add_tokens(spend);
    }

    fn add_tokens(&mut self, spend: &Spend) {
        self.tokens_in += spend.tokens.input.unwrap_or(0);
        self.tokens_out += spend.tokens.output.unwrap_or(0);
        match spend.cost_usd {
            Some(c) => self.cost_usd += c,
            None => self.unpriced += 1,
        }
    }
}

/// Why a run ended before its plan was done, besides cancelling and crashing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    /// Always `budget` for now: the next trial would have crossed a limit.
    pub reason: StopReason,
    /// Which limit, in words.
    pub detail: String,
    /// The run's limits (`skillwatch_protocol::Budget` as JSON).
    pub limits: serde_json::Value,
}

/// How a run ends.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEnd {
    /// Its final status (not `running`).
    pub status: RunStatus,
    /// Why it stopped short, when a budget stopped it.
    pub stop: Option<Stop>,
}

/// Start a run of any kind (`running`).
pub(super) fn begin(conn: &Connection, spec: RunBegin<'_>) -> Result<RunRef> {
    Ok(match spec {
        RunBegin::Paired(s) => RunRef::paired(write::begin_run(conn, s, None)?),
        RunBegin::Probe(s) => RunRef {
            kind: RunKind::Probe,
            id: probes::begin(conn, s)?.0,
        },
        RunBegin::Trigger(s) => RunRef {
            kind: RunKind::Trigger,
            id: triggers::begin(conn, s)?.0,
        },
    })
}

/// What a `spending` row paid for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Item {
    /// An agent execution.
    Trial,
    /// A call to the run's judge.
    Judge,
    /// A call to a description optimisation's proposer.
    Proposer,
}

impl Item {
    fn as_str(self) -> &'static str {
        match self {
            Item::Trial => "trial",
            Item::Judge => "judge",
            Item::Proposer => "proposer",
        }
    }
}

/// Record judge calls of `run` and what they spent.
pub(super) fn record_judge_calls(conn: &Connection, run: RunRef, calls: &[Spend]) -> Result<()> {
    calls
        .iter()
        .try_for_each(|s| spend_row(conn, (run.kind.as_str(), run.id), s, Item::Judge))
}

/// Record the proposer calls of description optimisation `id` and what they spent.
pub(super) fn record_proposer_calls(conn: &Connection, id: i64, calls: &[Spend]) -> Result<()> {
    calls
        .iter()
        .try_for_each(|s| spend_row(conn, ("optimization", id), s, Item::Proposer))
}

/// Record a finished trial and what it spent.
pub(super) fn record(
    conn: &Connection,
    run: RunRef,
    row: &Row,
    spend: Option<&Spend>,
) -> Result<()> {
    match (row, run.kind) {
        (Row::Paired(t), RunKind::Paired) => drop(write::record_trial(conn, RunId(run.id), t)?),
        (Row::Probe(o), RunKind::Probe) => probes::record(conn, probes::ProbeRunId(run.id), o)?,
        (Row::Trigger(t), RunKind::Trigger) => {
            triggers::record(conn, triggers::TriggerRunId(run.id), t)?
        }
        (Row::Stored, _) => {}
        (_, kind) => {
            return Err(StoreError::invalid(
                format!("a trial of {run}"),
                format!("a {kind} trial"),
                "a trial of another kind of run",
            ));
        }
    }
    if let Some(s) = spend {
        spend_row(conn, (run.kind.as_str(), run.id), s, Item::Trial)?;
    }
    Ok(())
}

/// One `spending` row of `owner` (a run kind or `optimization`, and its id).
fn spend_row(conn: &Connection, owner: (&str, i64), s: &Spend, item: Item) -> Result<()> {
    let tokens = |n: Option<u64>| n.unwrap_or(0).min(i64::MAX as u64) as i64;
    conn.prepare_cached(
        "INSERT INTO spending (run_kind, run_id, model, tokens_in, tokens_out, tokens_cached,
                               cost_usd, at_ms, item)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        owner.0,
        owner.1,
        s.model,
        tokens(s.tokens.input),
        tokens(s.tokens.output),
        tokens(s.tokens.cached),
        s.cost_usd.filter(|c| c.is_finite() && *c >= 0.0),
        now_ms(),
        item.as_str()
    ])?;
    Ok(())
}

/// End a running run: its status, its score where its kind has one (a paired run's summary,
/// a probe run's S from its stored outcomes), and why it stopped short. A paired run whose
/// scoring fails keeps its status; reading its history later retries the summary.
pub(super) fn finish(conn: &Connection, run: RunRef, end: &RunEnd) -> Result<()> {
    match run.kind {
        RunKind::Paired => {
            let id = RunId(run.id);
            write::finish_run(conn, id, end.status, None)?;
            match history::ensure_summary(conn, &read::run(conn, id)?) {
                Ok(_) | Err(StoreError::Scoring { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        RunKind::Probe => probes::finish(conn, probes::ProbeRunId(run.id), end.status)?,
        RunKind::Trigger => triggers::finish(conn, triggers::TriggerRunId(run.id), end.status)?,
    }
    match &end.stop {
        Some(stop) => set_stop(conn, run, stop),
        None => Ok(()),
    }
}

/// Record that a run stopped short on its budget, after it ended by other means (a Harbor run
/// is ended by its importer).
pub(super) fn set_stop(conn: &Connection, run: RunRef, stop: &Stop) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO run_stops (run_kind, run_id, reason, detail, limits)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        run.kind,
        run.id,
        stop.reason,
        stop.detail,
        stop.limits.to_string()
    ])?;
    Ok(())
}

/// What `run` spent.
pub(super) fn spent(conn: &Connection, run: RunRef) -> Result<Spent> {
    sum(
        conn,
        "WHERE run_kind = ?1 AND run_id = ?2",
        params![run.kind, run.id],
    )
}

/// What every run spent since `since_ms` (the daily cap).
pub(super) fn spent_since(conn: &Connection, since_ms: i64) -> Result<Spent> {
    sum(conn, "WHERE at_ms >= ?1", params![since_ms])
}

fn sum(conn: &Connection, filter: &str, args: impl rusqlite::Params) -> Result<Spent> {
    let sql = format!(
        "SELECT total(item = 'trial'), total(tokens_in), total(tokens_out), total(cost_usd),
                count(*) - count(cost_usd), total(item = 'judge')
         FROM spending {filter}"
    );
    let count = |v: f64| v.max(0.0) as u64;
    Ok(conn.prepare_cached(&sql)?.query_row(args, |r| {
        Ok(Spent {
            trials: count(r.get(0)?),
            tokens_in: count(r.get(1)?),
            tokens_out: count(r.get(2)?),
            cost_usd: r.get::<_, f64>(3)?.max(0.0),
            unpriced: r.get::<_, i64>(4)?.max(0) as u64,
            judge_calls: count(r.get(5)?),
        })
    })?)
}

/// The mean spending of the newest trials (at most 50) of `skill`'s runs of `kind` on `model`:
/// what a trial of another such run is expected to take. `None` when there are none.
pub(super) fn typical_usage(
    conn: &Connection,
    kind: RunKind,
    skill: &str,
    model: &str,
) -> Result<Option<(f64, f64, f64)>> {
    let table = table(kind);
    let sql = format!(
        "SELECT count(*), avg(tokens_in), avg(tokens_cached), avg(tokens_out) FROM (
           SELECT sp.tokens_in, sp.tokens_cached, sp.tokens_out FROM spending sp
           JOIN {table} r ON r.id = sp.run_id JOIN skills s ON s.id = r.skill_id
           WHERE sp.run_kind = ?1 AND sp.item = 'trial' AND sp.model = ?2 AND s.name = ?3
           ORDER BY sp.id DESC LIMIT 50)"
    );
    let (n, input, cached, output): (i64, Option<f64>, Option<f64>, Option<f64>) = conn
        .prepare_cached(&sql)?
        .query_row(params![kind, model, skill], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
    Ok((n > 0).then(|| {
        (
            input.unwrap_or(0.0),
            cached.unwrap_or(0.0),
            output.unwrap_or(0.0),
        )
    }))
}

fn table(kind: RunKind) -> &'static str {
    match kind {
        RunKind::Paired => "runs",
        RunKind::Probe => "probe_runs",
        RunKind::Trigger => "trigger_runs",
    }
}

/// Why `run` stopped short, if it did.
pub(super) fn stop(conn: &Connection, run: RunRef) -> Result<Option<Stop>> {
    conn.prepare_cached(
        "SELECT reason, detail, limits FROM run_stops WHERE run_kind = ?1 AND run_id = ?2",
    )?
    .query_row(params![run.kind, run.id], |r| {
        let limits: String = r.get(2)?;
        Ok(Stop {
            reason: r.get(0)?,
            detail: r.get(1)?,
            limits: serde_json::from_str(&limits).unwrap_or_default(),
        })
    })
    .optional()
    .map_err(Into::into)
}

/// Runs of every kind still `running`, marked `interrupted`; how many.
pub(super) fn interrupt_running(conn: &Connection) -> Result<usize> {
    let now = now_ms();
    let mut n = 0;
    for kind in RunKind::ALL {
        n += conn.execute(
            &format!(
                "UPDATE {} SET status = 'interrupted', finished_ms = ?1 WHERE status = 'running'",
                table(*kind)
            ),
            [now],
        )?;
    }
    Ok(n)
}

/// The status of `run`.
pub(super) fn status(conn: &Connection, run: RunRef) -> Result<Option<RunStatus>> {
    conn.prepare_cached(&format!(
        "SELECT status FROM {} WHERE id = ?1",
        table(run.kind)
    ))?
    .query_row([run.id], |r| r.get(0))
    .optional()
    .map_err(Into::into)
}
