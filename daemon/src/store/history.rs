//! The questions skill authors ask of the history: how has this skill's lift moved (per
//! model), what is the latest lift on each model (the SKILL.md code lens), what did each case
//! last do (the per-case lens), and does the skill still help on a new model (compare).

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use skillwatch_core::scoring::plan::{VarianceModel, variance_from_trials};
use skillwatch_core::scoring::{self, CompareParams, Comparison, LiftReport, ScoringProfile};

use super::error::{Result, StoreError};
use super::read::{self, RunFilter, RunInfo};
use super::summary::{self, RunHeadline, RunSummary};
use super::types::{RunId, RunStatus};

/// One run in a skill's history, with its scored headline (none while it is running).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// The run.
    pub run: RunInfo,
    /// Its lift, intervals and rates; `None` for a run still running.
    pub headline: Option<RunHeadline>,
}

/// The newest completed run of a skill on one (harness, model): what the SKILL.md lens shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelLift {
    /// The newest completed run on this harness and model.
    pub run: RunInfo,
    /// How many completed runs this harness and model have.
    pub completed_runs: usize,
    /// The newest run's lift, interval and rates.
    pub headline: RunHeadline,
}

/// The newest finished run of a skill on one (harness, model), when it failed: the SKILL.md
/// lens says so rather than show an older lift (or "No runs yet") as if nothing happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedRun {
    /// The failed run.
    pub run: RunInfo,
    /// Its trials that errored.
    pub errors: usize,
    /// All its trials.
    pub trials: usize,
}

/// The last result of one case on one (harness, model): what the per-case lens shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// The case key.
    pub case: String,
    /// Harness of the run the result comes from.
    pub harness: String,
    /// Model of that run.
    pub model: String,
    /// The run.
    pub run: RunId,
    /// When that run finished (epoch ms).
    pub finished_ms: Option<i64>,
    /// The case's outcome lift (mean of its outcome-metric deltas).
    pub lift: Option<f64>,
    /// Per-metric deltas of the case.
    pub deltas: BTreeMap<String, f64>,
    /// True when the case has been edited since: the result was measured on other content.
    pub stale: bool,
}

/// A comparison of two runs of one skill, case by case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    /// The reference run (the old model, or the old skill version).
    pub reference: RunInfo,
    /// The candidate run.
    pub candidate: RunInfo,
    /// Cases present in both runs whose content differs: left out, since their lifts measure
    /// different tasks.
    pub changed_cases: Vec<String>,
    /// Per-case lift differences, interval and verdict (`core::scoring::compare`).
    pub comparison: Comparison,
    /// S and status on both models, when both have a completed probe run (model
    /// comparisons only; `compare` fills it in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<super::probes::SecurityComparison>,
    /// Trigger rates on both models, when both have a completed trigger run (model
    /// comparisons only; `compare` fills it in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triggers: Option<super::triggers::TriggerComparison>,
}

/// Newest completed runs scanned per (harness, model) when looking for a case's last result.
pub const CASE_SCAN_RUNS: usize = 20;

/// A finished run's summary, computed and stored if missing or from an older scoring version.
pub fn ensure_summary(conn: &Connection, run: &RunInfo) -> Result<RunSummary> {
    if let Some(found) = summary::get(conn, run.id)? {
        return Ok(found);
    }
    let trials = read::run_trials(conn, run.id)?;
    let probes = read::run_probes(conn, run.id)?;
    let computed = summary::compute(run, &trials, &probes)?;
    summary::put(conn, &computed)?;
    Ok(computed)
}

fn ensure_headline(conn: &Connection, run: &RunInfo) -> Result<RunHeadline> {
    match summary::get_headline(conn, run.id)? {
        Some(h) => Ok(h),
        None => Ok(ensure_summary(conn, run)?.headline),
    }
}

/// The runs of a skill, newest first, each with its headline.
pub fn history(
    conn: &Connection,
    skill: &str,
    filter: &RunFilter<'_>,
) -> Result<Vec<HistoryEntry>> {
    read::runs_of_skill(conn, skill, filter)?
        .into_iter()
        .map(|run| {
            let headline = match run.status {
                RunStatus::Running => None,
                _ => Some(ensure_headline(conn, &run)?),
            };
            Ok(HistoryEntry { run, headline })
        })
        .collect()
}

/// Newest completed run id and completed-run count per (harness, model) of a skill.
fn latest_completed(conn: &Connection, skill: &str) -> Result<Vec<(RunId, usize)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, n FROM (
             SELECT r.id AS id, count(*) OVER w AS n,
                    row_number() OVER (w ORDER BY r.started_ms DESC, r.id DESC) AS rn
             FROM runs r JOIN skills s ON s.id = r.skill_id
             WHERE s.name = ?1 AND r.status = 'completed'
             WINDOW w AS (PARTITION BY r.harness, r.model))
         WHERE rn = 1",
    )?;
    let rows = stmt.query_map([skill], |r| {
        Ok((r.get::<_, RunId>(0)?, r.get::<_, i64>(1)? as usize))
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The latest lift of a skill on every (harness, model) it has completed runs on, by model.
pub fn latest_lift_per_model(conn: &Connection, skill: &str) -> Result<Vec<ModelLift>> {
    let mut lifts = latest_completed(conn, skill)?
        .into_iter()
        .map(|(id, completed_runs)| {
            let run = read::run(conn, id)?;
            let headline = ensure_headline(conn, &run)?;
            Ok(ModelLift {
                run,
                completed_runs,
                headline,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    lifts.sort_by(|a, b| (&a.run.model, &a.run.harness).cmp(&(&b.run.model, &b.run.harness)));
    Ok(lifts)
}

/// Per (harness, model) of a skill whose newest completed-or-failed run failed: that run, by
/// model.
pub fn latest_failed_per_model(conn: &Connection, skill: &str) -> Result<Vec<FailedRun>> {
    let mut stmt = conn.prepare_cached(
        "SELECT x.run,
                (SELECT count(*) FROM trials t WHERE t.run_id = x.run AND t.status = 'error'),
                (SELECT count(*) FROM trials t WHERE t.run_id = x.run)
         FROM (
             SELECT r.id AS run, r.status AS status,
                    row_number() OVER (PARTITION BY r.harness, r.model
                                       ORDER BY r.started_ms DESC, r.id DESC) AS rn
             FROM runs r JOIN skills s ON s.id = r.skill_id
             WHERE s.name = ?1 AND r.status IN ('completed', 'failed')) x
         WHERE x.rn = 1 AND x.status = 'failed'",
    )?;
    let rows = stmt.query_map([skill], |r| {
        Ok((
            r.get::<_, RunId>(0)?,
            r.get::<_, i64>(1)? as usize,
            r.get::<_, i64>(2)? as usize,
        ))
    })?;
    let mut failed = rows
        .collect::<rusqlite::Result<Vec<_>>>()?
        .into_iter()
        .map(|(id, errors, trials)| {
            Ok(FailedRun {
                run: read::run(conn, id)?,
                errors,
                trials,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    failed.sort_by(|a, b| (&a.run.model, &a.run.harness).cmp(&(&b.run.model, &b.run.harness)));
    Ok(failed)
}

/// `case key -> content hash` of a run's suite.
fn suite_cases(conn: &Connection, run: RunId) -> Result<BTreeMap<String, String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.case_key, c.content_hash FROM runs r
         JOIN suite_cases sc ON sc.suite_id = r.suite_id JOIN cases c ON c.id = sc.case_id
         WHERE r.id = ?1",
    )?;
    let rows = stmt.query_map([run], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<BTreeMap<_, _>>>()?)
}

/// The last result of every case of the skill's current suite (the suite of its newest run),
/// per (harness, model), looking back at most [`CASE_SCAN_RUNS`] completed runs.
pub fn case_results(conn: &Connection, skill: &str) -> Result<Vec<CaseResult>> {
    let newest = read::runs_of_skill(
        conn,
        skill,
        &RunFilter {
            limit: Some(1),
            ..RunFilter::default()
        },
    )?;
    let Some(newest) = newest.first() else {
        return Ok(Vec::new());
    };
    let current = suite_cases(conn, newest.id)?;
    let mut results = Vec::new();
    for (latest, _) in latest_completed(conn, skill)? {
        let group = read::run(conn, latest)?;
        let filter = RunFilter {
            model: Some(&group.model),
            harness: Some(&group.harness),
            status: Some(RunStatus::Completed),
            limit: Some(CASE_SCAN_RUNS as u32),
        };
        let mut missing: BTreeSet<&String> = current.keys().collect();
        for run in read::runs_of_skill(conn, skill, &filter)? {
            if missing.is_empty() {
                break;
            }
            let hashes = suite_cases(conn, run.id)?;
            let summary = ensure_summary(conn, &run)?;
            for case in &summary.lift.cases {
                if !missing.remove(&case.case_id) {
                    continue;
                }
                results.push(CaseResult {
                    case: case.case_id.clone(),
                    harness: run.harness.clone(),
                    model: run.model.clone(),
                    run: run.id,
                    finished_ms: run.finished_ms,
                    lift: case.outcome,
                    deltas: case
                        .deltas
                        .iter()
                        .map(|(m, d)| (m.name().to_string(), *d))
                        .collect(),
                    stale: hashes.get(&case.case_id) != current.get(&case.case_id),
                });
            }
        }
    }
    results.sort_by(|a, b| (&a.case, &a.model, &a.harness).cmp(&(&b.case, &b.model, &b.harness)));
    Ok(results)
}

/// The newest completed run of a skill on `model` (and `harness`, when given).
pub fn latest_completed_run(
    conn: &Connection,
    skill: &str,
    model: &str,
    harness: Option<&str>,
) -> Result<Option<RunInfo>> {
    let filter = RunFilter {
        model: Some(model),
        harness,
        status: Some(RunStatus::Completed),
        limit: Some(1),
    };
    Ok(read::runs_of_skill(conn, skill, &filter)?
        .into_iter()
        .next())
}

/// The variance components of a skill's outcome lift, from its newest completed run (on
/// `model` when given and it has one there, else on any model) that has at least two cases:
/// what planning uses instead of its stated default. `None` when there is no such run.
pub fn outcome_variance(
    conn: &Connection,
    skill: &str,
    model: Option<&str>,
) -> Result<Option<(RunInfo, VarianceModel)>> {
    let filter = |model| RunFilter {
        model,
        status: Some(RunStatus::Completed),
        limit: Some(CASE_SCAN_RUNS as u32),
        ..RunFilter::default()
    };
    let mut runs = read::runs_of_skill(conn, skill, &filter(model))?;
    if model.is_some() {
        runs.extend(read::runs_of_skill(conn, skill, &filter(None))?);
    }
    for run in runs {
        let trials: Vec<_> = read::run_trials(conn, run.id)?
            .iter()
            .map(summary::scoring_trial)
            .collect();
        let estimated =
            variance_from_trials(&trials, ScoringProfile::Outcome, &run.outcome_metrics).map_err(
                |e| StoreError::Scoring {
                    run: run.id,
                    reason: e.to_string(),
                },
            )?;
        if let Some(v) = estimated {
            return Ok(Some((run, v)));
        }
    }
    Ok(None)
}

/// Models with at least one completed run of the skill, for "did you mean" messages.
pub fn models_of_skill(conn: &Connection, skill: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT r.model FROM runs r JOIN skills s ON s.id = r.skill_id
         WHERE s.name = ?1 AND r.status = 'completed' ORDER BY r.model",
    )?;
    let rows = stmt.query_map([skill], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Compare two runs case by case. Cases whose content differs between the runs are left out
/// and listed, so an edited case never reads as a model regression.
pub fn compare_runs(
    conn: &Connection,
    reference: RunId,
    candidate: RunId,
    params: &CompareParams,
) -> Result<RunComparison> {
    let reference = read::run(conn, reference)?;
    let candidate = read::run(conn, candidate)?;
    let ref_hashes = suite_cases(conn, reference.id)?;
    let cand_hashes = suite_cases(conn, candidate.id)?;
    let changed_cases: Vec<String> = ref_hashes
        .iter()
        .filter(|(k, h)| cand_hashes.get(*k).is_some_and(|c| c != *h))
        .map(|(k, _)| k.clone())
        .collect();
    let without_changed = |mut report: LiftReport| {
        report.cases.retain(|c| !changed_cases.contains(&c.case_id));
        report
    };
    let ref_lift = without_changed(ensure_summary(conn, &reference)?.lift);
    let cand_lift = without_changed(ensure_summary(conn, &candidate)?.lift);
    let comparison =
        scoring::compare_lifts(&ref_lift, &cand_lift, params).map_err(|e| StoreError::Scoring {
            run: candidate.id,
            reason: format!("comparing with run {}: {e}", reference.id),
        })?;
    Ok(RunComparison {
        reference,
        candidate,
        changed_cases,
        comparison,
        security: None,
        triggers: None,
    })
}
