//! Security probe runs (migration 0006): one row per run, one per probe outcome with its
//! redacted evidence. S and its status are stored as the probe runner computed them, with θs.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use skillwatch_core::probe::ProbeFinding;
use skillwatch_core::scoring::skilltester::{
    ProbeResult, SecurityChange, SecurityGroup, SecurityReport, SecurityStatus, SkillTesterParams,
    security, security_change,
};

use super::error::{Result, StoreError};
use super::record::{SkillIdentity, Trajectory};
use super::time::now_ms;
use super::types::RunStatus;

/// A probe run's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProbeRunId(pub i64);

impl std::fmt::Display for ProbeRunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What identifies a probe run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRunSpec {
    /// The skill version probed.
    pub skill: SkillIdentity,
    /// `v1`, or `v1+author:<hash>`.
    pub suite_version: String,
    /// Harness name.
    pub harness: String,
    /// Harness version.
    pub harness_version: Option<String>,
    /// The agent's model.
    pub model: String,
    /// `skillwatch <version>`.
    pub tool_version: String,
    /// θs of the status label.
    pub theta_s: f64,
}

/// How one probe ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeOutcome {
    /// Nothing unsafe was seen.
    Passed,
    /// Evidence of unsafe behaviour.
    Failed,
    /// The agent could not be run: no observation (left out of S, counted).
    Error,
}

impl ProbeOutcome {
    fn as_str(self) -> &'static str {
        match self {
            ProbeOutcome::Passed => "passed",
            ProbeOutcome::Failed => "failed",
            ProbeOutcome::Error => "error",
        }
    }

    fn parse(s: &str) -> Option<ProbeOutcome> {
        match s {
            "passed" => Some(ProbeOutcome::Passed),
            "failed" => Some(ProbeOutcome::Failed),
            "error" => Some(ProbeOutcome::Error),
            _ => None,
        }
    }
}

/// One probe's stored result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeOutcomeRecord {
    /// Probe id.
    pub probe: String,
    /// Its group.
    pub group: SecurityGroup,
    /// OWASP categories.
    pub owasp: Vec<String>,
    /// How it ended.
    pub outcome: ProbeOutcome,
    /// The evidence (redacted).
    pub findings: Vec<ProbeFinding>,
    /// The agent's answer (redacted).
    pub output: String,
    /// Why it could not be run.
    pub error_message: Option<String>,
    /// The agent's trajectory (redacted), when recorded.
    #[serde(skip)]
    pub trajectory: Option<Trajectory>,
    /// Wall-clock time of the agent.
    pub wall_ms: Option<u64>,
}

/// A stored probe run with its outcomes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRunInfo {
    /// Its id.
    pub id: ProbeRunId,
    /// Skill name.
    pub skill: String,
    /// The skill version's hash.
    pub skill_hash: String,
    /// Suite version.
    pub suite_version: String,
    /// Harness.
    pub harness: String,
    /// Harness version.
    pub harness_version: Option<String>,
    /// Model.
    pub model: String,
    /// Status.
    pub status: RunStatus,
    /// S, when every group had an observed probe.
    pub score: Option<f64>,
    /// The label of S.
    pub security_status: Option<SecurityStatus>,
    /// θs used.
    pub theta_s: f64,
    /// Group pass counts and anything else the runner recorded.
    pub detail: serde_json::Value,
    /// Start, Unix ms.
    pub started_ms: i64,
    /// End, Unix ms.
    pub finished_ms: Option<i64>,
    /// Each probe's outcome, by probe id.
    pub outcomes: Vec<ProbeOutcomeRecord>,
}

/// S and status on two models, each from the newest completed probe run of the skill there:
/// what `compare` reports beside the lift.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecurityComparison {
    /// The reference model's probe run.
    pub reference_run: ProbeRunId,
    /// The candidate model's probe run.
    pub candidate_run: ProbeRunId,
    /// S on the reference model (`None`: not measured).
    pub reference_score: Option<f64>,
    /// Its status.
    pub reference_status: Option<SecurityStatus>,
    /// S on the candidate model.
    pub candidate_score: Option<f64>,
    /// Its status.
    pub candidate_status: Option<SecurityStatus>,
    /// How S moved (`core::scoring::skilltester::security_change`); `None` when either S is
    /// not measured.
    pub change: Option<SecurityChange>,
    /// Probes that passed on the reference model and failed on the candidate.
    pub newly_failed: Vec<String>,
    /// One sentence with the numbers.
    pub reason: String,
}

impl SecurityComparison {
    /// Whether this is a security regression (gated like a lift regression).
    pub fn regresses(&self) -> bool {
        self.change == Some(SecurityChange::Regresses)
    }
}

/// The newest completed probe run of `skill` on `model` (and `harness`, when given).
pub fn latest_completed(
    conn: &Connection,
    skill: &str,
    model: &str,
    harness: Option<&str>,
) -> Result<Option<ProbeRunInfo>> {
    Ok(list(conn, skill, Some(model), LATEST_SCAN)?
        .into_iter()
        .find(|r| r.status == RunStatus::Completed && harness.is_none_or(|h| r.harness == h)))
}

/// Probe runs looked at for the newest completed one on a model.
const LATEST_SCAN: usize = 20;

/// S on `reference` against S on `candidate`, when both models have a completed probe run.
pub fn compare(
    conn: &Connection,
    skill: &str,
    reference: &str,
    candidate: &str,
    harness: Option<&str>,
) -> Result<Option<SecurityComparison>> {
    let (Some(r), Some(c)) = (
        latest_completed(conn, skill, reference, harness)?,
        latest_completed(conn, skill, candidate, harness)?,
    ) else {
        return Ok(None);
    };
    let measured = |run: &ProbeRunInfo| run.score.zip(run.security_status);
    let change = measured(&r)
        .zip(measured(&c))
        .map(|(a, b)| security_change(a, b));
    let passed_on_reference = |probe: &str| {
        r.outcomes
            .iter()
            .any(|o| o.probe == probe && o.outcome == ProbeOutcome::Passed)
    };
    let newly_failed: Vec<String> = c
        .outcomes
        .iter()
        .filter(|o| o.outcome == ProbeOutcome::Failed && passed_on_reference(&o.probe))
        .map(|o| o.probe.clone())
        .collect();
    let shown = |run: &ProbeRunInfo| match measured(run) {
        Some((s, status)) => format!("{s:.1} ({})", status.label()),
        None => "not measured".into(),
    };
    let failed = if newly_failed.is_empty() {
        String::new()
    } else {
        format!("; newly failed: {}", newly_failed.join(", "))
    };
    let reason = format!(
        "security S {} on {reference} (probe run {}) -> {} on {candidate} (probe run {}): {}{failed}",
        shown(&r),
        r.id,
        shown(&c),
        c.id,
        change.map_or("not comparable", SecurityChange::as_str)
    );
    Ok(Some(SecurityComparison {
        reference_run: r.id,
        candidate_run: c.id,
        reference_score: r.score,
        reference_status: r.security_status,
        candidate_score: c.score,
        candidate_status: c.security_status,
        change,
        newly_failed,
        reason,
    }))
}

/// Start a probe run (`running`).
pub fn begin(conn: &Connection, spec: &ProbeRunSpec) -> Result<ProbeRunId> {
    let now = now_ms();
    let (skill_id, version_id) = super::write::upsert_skill(conn, &spec.skill, now)?;
    conn.prepare_cached(
        "INSERT INTO probe_runs (skill_id, skill_version_id, suite_version, harness, harness_version,
                                 model, tool_version, status, theta_s, started_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8, ?9)",
    )?
    .execute(params![
        skill_id,
        version_id,
        spec.suite_version,
        spec.harness,
        spec.harness_version,
        spec.model,
        spec.tool_version,
        spec.theta_s,
        now
    ])?;
    Ok(ProbeRunId(conn.last_insert_rowid()))
}

/// Record one probe's outcome (its trajectory stored content-addressed).
pub fn record(conn: &Connection, run: ProbeRunId, r: &ProbeOutcomeRecord) -> Result<()> {
    let trajectory_id = match &r.trajectory {
        Some(t) => Some(super::trajectory::put(conn, t)?.0),
        None => None,
    };
    conn.prepare_cached(
        "INSERT INTO probe_outcomes (probe_run_id, probe, probe_group, owasp, outcome, findings,
                                     output, error_message, trajectory_id, wall_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        run.0,
        r.probe,
        r.group.as_str(),
        r.owasp.join(","),
        r.outcome.as_str(),
        serde_json::to_string(&r.findings).unwrap_or_else(|_| "[]".into()),
        r.output,
        r.error_message,
        trajectory_id,
        r.wall_ms.map(|w| w as i64),
    ])?;
    Ok(())
}

/// S, its groups and status, computed by the seed's rule (`core::scoring::skilltester`) from
/// the observed outcomes of `run` with its θs (`None` when a group had no observed probe), and
/// how many probes could not be run. What a probe run is finished with and what its report
/// shows, from the same stored rows.
pub fn security_of(run: &ProbeRunInfo) -> (Option<SecurityReport>, usize) {
    let results: Vec<ProbeResult> = run
        .outcomes
        .iter()
        .filter(|o| o.outcome != ProbeOutcome::Error)
        .map(|o| ProbeResult {
            id: o.probe.clone(),
            group: o.group,
            passed: o.outcome == ProbeOutcome::Passed,
        })
        .collect();
    let errors = run.outcomes.len() - results.len();
    let params = SkillTesterParams {
        theta_s: run.theta_s,
        ..SkillTesterParams::default()
    };
    (security(&results, &params).ok(), errors)
}

/// Finish a running probe run with `status`, and its S and status from its stored outcomes.
pub fn finish(conn: &Connection, run: ProbeRunId, status: RunStatus) -> Result<()> {
    let info = get(conn, run)?.filter(|r| r.status == RunStatus::Running);
    let Some(info) = info else {
        return Err(StoreError::invalid(
            "probe run",
            "a running probe run",
            format!("probe run {run}, not running or unknown"),
        ));
    };
    let (report, errors) = security_of(&info);
    let detail = serde_json::json!({
        "groups": report.as_ref().map(|r| &r.groups),
        "errors": errors,
        "probes": info.outcomes.len(),
    });
    conn.prepare_cached(
        "UPDATE probe_runs SET status = ?2, score = ?3, security_status = ?4, detail = ?5,
                               finished_ms = ?6
         WHERE id = ?1",
    )?
    .execute(params![
        run.0,
        status.as_str(),
        report.as_ref().map(|r| r.score),
        report.as_ref().map(|r| status_text(r.status)),
        detail.to_string(),
        now_ms()
    ])?;
    Ok(())
}

fn status_text(s: SecurityStatus) -> &'static str {
    match s {
        SecurityStatus::Pass => "pass",
        SecurityStatus::Caution => "caution",
        SecurityStatus::Risky => "risky",
    }
}

fn parse_status(s: &str) -> Option<SecurityStatus> {
    match s {
        "pass" => Some(SecurityStatus::Pass),
        "caution" => Some(SecurityStatus::Caution),
        "risky" => Some(SecurityStatus::Risky),
        _ => None,
    }
}

/// One probe run with its outcomes.
pub fn get(conn: &Connection, run: ProbeRunId) -> Result<Option<ProbeRunInfo>> {
    let info = conn
        .prepare_cached(&format!("{SELECT_RUN} WHERE p.id = ?1"))?
        .query_row([run.0], run_row)
        .optional()?;
    let Some(info) = info else {
        return Ok(None);
    };
    let mut info = info?;
    info.outcomes = outcomes(conn, run)?;
    Ok(Some(info))
}

/// The newest probe runs of `skill` (optionally on one model), newest first.
pub fn list(
    conn: &Connection,
    skill: &str,
    model: Option<&str>,
    limit: usize,
) -> Result<Vec<ProbeRunInfo>> {
    let mut stmt = conn.prepare_cached(&format!(
        "{SELECT_RUN} WHERE s.name = ?1 AND (?2 IS NULL OR p.model = ?2)
         ORDER BY p.started_ms DESC, p.id DESC LIMIT ?3"
    ))?;
    let rows = stmt.query_map(params![skill, model, limit as i64], run_row)?;
    let mut out = Vec::new();
    for row in rows {
        let mut info = row??;
        info.outcomes = outcomes(conn, info.id)?;
        out.push(info);
    }
    Ok(out)
}

const SELECT_RUN: &str = "SELECT p.id, s.name, v.content_hash, p.suite_version, p.harness,
        p.harness_version, p.model, p.status, p.score, p.security_status, p.theta_s, p.detail,
        p.started_ms, p.finished_ms
     FROM probe_runs p JOIN skills s ON s.id = p.skill_id
     JOIN skill_versions v ON v.id = p.skill_version_id";

fn unexpected(column: &'static str, found: String) -> StoreError {
    StoreError::invalid(
        format!("probe_runs.{column}"),
        "a value skillwatch writes",
        found,
    )
}

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<ProbeRunInfo>> {
    let status: String = r.get(7)?;
    let security: Option<String> = r.get(9)?;
    let detail: String = r.get(11)?;
    Ok((|| {
        Ok(ProbeRunInfo {
            id: ProbeRunId(r.get(0)?),
            skill: r.get(1)?,
            skill_hash: r.get(2)?,
            suite_version: r.get(3)?,
            harness: r.get(4)?,
            harness_version: r.get(5)?,
            model: r.get(6)?,
            status: RunStatus::parse(&status).ok_or_else(|| unexpected("status", status))?,
            score: r.get(8)?,
            security_status: match security {
                Some(s) => Some(parse_status(&s).ok_or_else(|| unexpected("security_status", s))?),
                None => None,
            },
            theta_s: r.get(10)?,
            detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::Null),
            started_ms: r.get(12)?,
            finished_ms: r.get(13)?,
            outcomes: Vec::new(),
        })
    })())
}

fn outcomes(conn: &Connection, run: ProbeRunId) -> Result<Vec<ProbeOutcomeRecord>> {
    let mut stmt = conn.prepare_cached(
        "SELECT probe, probe_group, owasp, outcome, findings, output, error_message, wall_ms
         FROM probe_outcomes WHERE probe_run_id = ?1 ORDER BY probe",
    )?;
    let rows = stmt.query_map([run.0], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, Option<String>>(6)?,
            r.get::<_, Option<i64>>(7)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (probe, group, owasp, outcome, findings, output, error_message, wall_ms) = row?;
        let group = serde_json::from_value(serde_json::Value::String(group.clone()))
            .map_err(|_| unexpected("probe_group", group))?;
        out.push(ProbeOutcomeRecord {
            probe,
            group,
            owasp: owasp.split(',').map(str::to_owned).collect(),
            outcome: ProbeOutcome::parse(&outcome).ok_or_else(|| unexpected("outcome", outcome))?,
            findings: serde_json::from_str(&findings).unwrap_or_default(),
            output,
            error_message,
            trajectory: None,
            wall_ms: wall_ms.map(|w| w as u64),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Row, RunBegin, RunEnd, Store};
    use skillwatch_core::probe::FindingKind;

    fn spec(model: &str) -> ProbeRunSpec {
        ProbeRunSpec {
            skill: SkillIdentity {
                name: "pdf".into(),
                path: None,
                content_hash: "sha256:aa".into(),
            },
            suite_version: "v1".into(),
            harness: "claude-code".into(),
            harness_version: Some("2.1.328".into()),
            model: model.into(),
            tool_version: "skillwatch test".into(),
            theta_s: 80.0,
        }
    }

    fn outcome(probe: &str, group: SecurityGroup, outcome: ProbeOutcome) -> ProbeOutcomeRecord {
        ProbeOutcomeRecord {
            probe: probe.into(),
            group,
            owasp: vec!["ASI02".into(), "ASI05".into()],
            outcome,
            findings: match outcome {
                ProbeOutcome::Failed => vec![ProbeFinding {
                    kind: FindingKind::Command,
                    location: "step 2 Bash command".into(),
                    evidence: "rm -rf ~/x".into(),
                }],
                _ => Vec::new(),
            },
            output: "done".into(),
            error_message: None,
            trajectory: Some(Trajectory {
                format: "atif-v1.8".into(),
                bytes: b"{}".to_vec(),
            }),
            wall_ms: Some(12),
        }
    }

    #[test]
    fn probe_runs_round_trip_scored_from_their_outcomes_and_crashed_ones_are_interrupted() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = Store::open(&tmp.path().join("h.sqlite3")).unwrap();
        let at = store.begin(RunBegin::Probe(&spec("m1"))).unwrap();
        let run = ProbeRunId(at.id);
        let failed = outcome(
            "ABC-02",
            SecurityGroup::AbnormalBehaviorControl,
            ProbeOutcome::Failed,
        );
        let passed = outcome(
            "PB-01",
            SecurityGroup::PermissionBoundary,
            ProbeOutcome::Passed,
        );
        let also = outcome(
            "SDP-01",
            SecurityGroup::SensitiveDataProtection,
            ProbeOutcome::Passed,
        );
        for o in [&failed, &passed, &also] {
            store.record(at, &Row::Probe(o.clone()), None).unwrap();
        }
        let end = RunEnd {
            status: RunStatus::Completed,
            stop: None,
        };
        store.finish(at, &end).unwrap();
        let got = store.probe_run(run).unwrap().unwrap();
        // S = (0 + 100 + 100) / 3 < θs = 80
        assert!((got.score.unwrap() - 200.0 / 3.0).abs() < 1e-9, "{got:?}");
        assert_eq!(
            (got.security_status, got.status),
            (Some(SecurityStatus::Risky), RunStatus::Completed)
        );
        assert_eq!(got.detail["probes"], 3);
        let stripped = |mut o: ProbeOutcomeRecord| {
            o.trajectory = None;
            o
        };
        assert_eq!(
            got.outcomes,
            vec![stripped(failed), stripped(passed), stripped(also)]
        );
        assert!(
            store.finish(at, &end).is_err(),
            "a finished run is not finished twice"
        );
        let crashed = store.begin(RunBegin::Probe(&spec("m2"))).unwrap();
        assert_eq!(store.interrupt_running_runs().unwrap(), 1);
        let got = store.probe_run(ProbeRunId(crashed.id)).unwrap().unwrap();
        assert_eq!((got.status, got.score), (RunStatus::Interrupted, None));
        let m1: Vec<ProbeRunId> = store
            .probe_runs("pdf", Some("m1"), 10)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(m1, vec![run]);
        assert_eq!(store.probe_runs("pdf", None, 10).unwrap().len(), 2);
    }
}
