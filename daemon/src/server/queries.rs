//! The read questions clients ask (history, compare, compare --all, lenses), answered from a
//! [`Store`]. The daemon answers them over RPC and the CLI's `--no-daemon` path calls the same
//! functions, so both print the same numbers.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use skillwatch_core::scoring::CompareParams;
use skillwatch_core::skill::{SKILL_FILE, load_document};
use skillwatch_protocol::{
    CompareAllRequest, CompareRequest, CompareWhat, HistoryQuery, LensCase, LensFailed, LensLift,
    LensSecurity, LensTrigger, Lenses, ModelComparison,
};

use crate::store::{
    self, HistoryEntry, ModelLift, RunComparison, RunFilter, RunId, RunStatus, SecurityComparison,
    Store, StoreError, StoredTrial, model_comparison,
};

/// Why a query has no answer.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The history has no skill of this name.
    #[error("no history for skill `{skill}` in {db} (skills with history: {known})")]
    NoSkill {
        /// The name asked for.
        skill: String,
        /// The database.
        db: PathBuf,
        /// Skills it does have, comma-separated, or `none yet`.
        known: String,
    },
    /// The request contradicts the history (e.g. a run of another skill).
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::StoreError),
}

/// `skillwatch history --json`: the latest lift per model and the recent runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryReport {
    /// The skill.
    pub skill: String,
    /// The database read.
    pub db: String,
    /// Newest completed run per (harness, model), filtered like the runs.
    pub latest_per_model: Vec<ModelLift>,
    /// Runs, newest first.
    pub runs: Vec<RunWithTrials>,
    /// Security probe runs (`skillwatch probe`), newest first, filtered like the runs.
    #[serde(default)]
    pub probe_runs: Vec<crate::store::ProbeRunInfo>,
    /// Trigger test runs (`skillwatch trigger`), newest first, filtered like the runs.
    #[serde(default)]
    pub trigger_runs: Vec<crate::store::TriggerRunInfo>,
}

/// A history entry, with its trials when asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunWithTrials {
    /// The run and its headline.
    #[serde(flatten)]
    pub entry: HistoryEntry,
    /// Its trials (`history --trials`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<Vec<StoredTrial>>,
}

/// Fail with the known skills when the history has none named `skill`.
pub fn require_skill(store: &Store, skill: &str) -> Result<(), QueryError> {
    if store.has_skill(skill)? {
        return Ok(());
    }
    let known: Vec<String> = store.skills()?.into_iter().map(|s| s.name).collect();
    Err(QueryError::NoSkill {
        skill: skill.to_string(),
        db: store.path().to_path_buf(),
        known: if known.is_empty() {
            "none yet".to_string()
        } else {
            known.join(", ")
        },
    })
}

/// Answer `skillwatch history`.
pub fn history(store: &Store, query: &HistoryQuery) -> Result<HistoryReport, QueryError> {
    require_skill(store, &query.skill)?;
    let filter = RunFilter {
        model: query.model.as_deref(),
        harness: query.harness.as_deref(),
        status: None,
        limit: Some(query.limit),
    };
    let mut latest = store.latest_lift_per_model(&query.skill)?;
    latest.retain(|l| {
        query.model.as_ref().is_none_or(|m| &l.run.model == m)
            && query.harness.as_ref().is_none_or(|h| &l.run.harness == h)
    });
    let runs = store
        .history(&query.skill, &filter)?
        .into_iter()
        .map(|entry| {
            let trials = match query.trials {
                true => Some(store.run_trials(entry.run.id)?),
                false => None,
            };
            Ok(RunWithTrials { entry, trials })
        })
        .collect::<Result<Vec<_>, QueryError>>()?;
    let mut probe_runs =
        store.probe_runs(&query.skill, query.model.as_deref(), query.limit as usize)?;
    probe_runs.retain(|r| query.harness.as_ref().is_none_or(|h| &r.harness == h));
    let trigger_runs = store.trigger_runs(
        &query.skill,
        query.model.as_deref(),
        query.harness.as_deref(),
        query.limit as usize,
    )?;
    Ok(HistoryReport {
        skill: query.skill.clone(),
        db: store.path().display().to_string(),
        latest_per_model: latest,
        runs,
        probe_runs,
        trigger_runs,
    })
}

pub use crate::store::TriggerComparison;

/// Answer `skillwatch compare SKILL --triggers`: the newest completed trigger run on each
/// model, compared query by query.
pub fn compare_triggers(
    store: &Store,
    skill: &str,
    reference: &str,
    candidate: &str,
    harness: Option<&str>,
    params: &CompareParams,
) -> Result<TriggerComparison, QueryError> {
    require_skill(store, skill)?;
    if let Some(found) = store.compare_triggers(skill, reference, candidate, harness, params)? {
        return Ok(found);
    }
    let missing = match store.latest_trigger_run(skill, reference, harness)? {
        None => reference,
        Some(_) => candidate,
    };
    Err(QueryError::Invalid(format!(
        "no completed trigger run of `{skill}` on {missing}{} (run `skillwatch trigger SKILL \
         --model {missing}` first)",
        harness.map_or_else(String::new, |h| format!(" with {h}"))
    )))
}

/// Answer `skillwatch compare SKILL` as the JSON the daemon sends: a [`RunComparison`], or a
/// [`TriggerComparison`] for [`CompareWhat::TriggerModels`].
pub fn compare_value(
    store: &Store,
    request: &CompareRequest,
) -> Result<serde_json::Value, QueryError> {
    let value = match &request.what {
        CompareWhat::TriggerModels(reference, candidate) => serde_json::to_value(compare_triggers(
            store,
            &request.skill,
            reference,
            candidate,
            request.harness.as_deref(),
            &request.params,
        )?),
        _ => serde_json::to_value(compare(store, request)?),
    };
    value.map_err(|e| QueryError::Invalid(e.to_string()))
}

/// Answer `skillwatch compare SKILL`.
pub fn compare(store: &Store, request: &CompareRequest) -> Result<RunComparison, QueryError> {
    require_skill(store, &request.skill)?;
    match &request.what {
        CompareWhat::TriggerModels(..) => Err(QueryError::Invalid(
            "a trigger comparison is not a comparison of paired runs".into(),
        )),
        CompareWhat::Models(reference, candidate) => compare_models(
            store,
            &request.skill,
            reference,
            candidate,
            request.harness.as_deref(),
            &request.params,
        )?
        .into_run_comparison(),
        CompareWhat::Runs(reference, candidate) => {
            let result =
                store.compare_runs(RunId(*reference), RunId(*candidate), &request.params)?;
            for run in [&result.reference, &result.candidate] {
                if run.skill != request.skill {
                    return Err(QueryError::Invalid(format!(
                        "run {} is a run of skill `{}`, not `{}`",
                        run.id, run.skill, request.skill
                    )));
                }
            }
            Ok(result)
        }
    }
}

/// One skill on two models: everything `compare` weighs, each part present when both models
/// have what it needs. `compare SKILL --model A --model B` is one of these, and `compare
/// --all` one per skill.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillComparison {
    /// The lift of the newest completed paired run on each model, or why there is none.
    pub lift: Result<RunComparison, String>,
    /// S and status of the newest completed probe run on each model.
    pub security: Option<SecurityComparison>,
    /// Trigger rates of the newest completed trigger run on each model, paired by query.
    pub triggers: Option<TriggerComparison>,
}

impl SkillComparison {
    /// What regressed: `lift`, `security`, `triggers`, in that order (empty: nothing).
    pub fn regressions(&self) -> Vec<&'static str> {
        let lift = matches!(&self.lift, Ok(r) if r.comparison.verdict.fails());
        [
            ("lift", lift),
            (
                "security",
                self.security.as_ref().is_some_and(|s| s.regresses()),
            ),
            (
                "triggers",
                self.triggers.as_ref().is_some_and(|t| t.regresses()),
            ),
        ]
        .into_iter()
        .filter_map(|(name, regressed)| regressed.then_some(name))
        .collect()
    }

    /// The paired-run comparison with the security and trigger changes in it (`compare
    /// SKILL`, which needs a paired run on both models).
    pub fn into_run_comparison(self) -> Result<RunComparison, QueryError> {
        let mut result = self.lift.map_err(QueryError::Invalid)?;
        result.security = self.security;
        result.triggers = self.triggers;
        Ok(result)
    }
}

/// Compare `skill` on `reference` and `candidate` (on `harness`, when given): the lift, the
/// security change and the trigger change. A model with no paired run leaves the lift out
/// (with the reason), not the rest.
pub fn compare_models(
    store: &Store,
    skill: &str,
    reference: &str,
    candidate: &str,
    harness: Option<&str>,
    params: &CompareParams,
) -> Result<SkillComparison, QueryError> {
    let lift = match store.compare_models(skill, reference, candidate, harness, params) {
        Ok(result) => Ok(result),
        Err(e @ (StoreError::NoCompletedRun { .. } | StoreError::Scoring { .. })) => {
            Err(e.to_string())
        }
        Err(e) => return Err(e.into()),
    };
    Ok(SkillComparison {
        lift,
        security: store.compare_security(skill, reference, candidate, harness)?,
        triggers: store.compare_triggers(skill, reference, candidate, harness, params)?,
    })
}

/// One skill's line of `compare --all`: the lift as a model-change comparison (or why there
/// is none), the security change and the trigger change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareAllRow {
    /// The skill.
    pub skill: String,
    /// The candidate model (`None`: the skill has no other model to compare with).
    #[serde(default)]
    pub candidate_model: Option<String>,
    /// The lift comparison, or why there is none.
    pub outcome: Result<ModelComparison, String>,
    /// S and status on both models, when both have a completed probe run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<SecurityComparison>,
    /// Trigger rates on both models, when both have a completed trigger run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triggers: Option<TriggerComparison>,
    /// What regressed: `lift`, `security`, `triggers` (empty: nothing; exit 1 otherwise).
    #[serde(default)]
    pub regressed: Vec<String>,
}

/// Answer `skillwatch compare --all --since-model A [--model B]`: one row per skill with a
/// completed paired, probe or trigger run on A, by skill name, each the skill's
/// [`compare_models`].
pub fn compare_all(
    store: &Store,
    request: &CompareAllRequest,
) -> Result<Vec<CompareAllRow>, QueryError> {
    let mut rows = Vec::new();
    for skill in store.skills()? {
        let Some(pair) = pair_for(store, &skill.name, request)? else {
            continue;
        };
        let row = match pair.candidate {
            Err(why) => CompareAllRow {
                skill: skill.name,
                candidate_model: None,
                outcome: Err(why),
                security: None,
                triggers: None,
                regressed: Vec::new(),
            },
            Ok(candidate) => {
                let found = compare_models(
                    store,
                    &skill.name,
                    &request.since_model,
                    &candidate,
                    pair.harness.as_deref(),
                    &request.params,
                )?;
                let dir = skill.last_path.as_deref().map(Path::new);
                CompareAllRow {
                    skill: skill.name,
                    candidate_model: Some(candidate),
                    regressed: found.regressions().into_iter().map(String::from).collect(),
                    outcome: found.lift.map(|result| model_comparison(&result, dir)),
                    security: found.security,
                    triggers: found.triggers,
                }
            }
        };
        rows.push(row);
    }
    Ok(rows)
}

/// Who `compare --all` compares one skill with, and on which harness.
struct Pair {
    /// The candidate model, or why there is none.
    candidate: Result<String, String>,
    /// The harness both models are read on: `--harness`, else that of the newest completed
    /// paired run on the reference model (a lift is compared like with like), else any.
    harness: Option<String>,
}

/// Newest probe and trigger runs looked at for the models a skill has results on.
const OTHER_RUNS_SCAN: usize = 20;

/// The pair for `skill`; `None` when it has no completed run of any kind on the reference
/// model. Without `--model`, the candidate is the newest other model with a completed paired
/// run on the harness, else the newest other model with a completed probe or trigger run.
fn pair_for(
    store: &Store,
    skill: &str,
    request: &CompareAllRequest,
) -> Result<Option<Pair>, QueryError> {
    let reference = request.since_model.as_str();
    let paired = store.runs(
        skill,
        &RunFilter {
            model: None,
            harness: request.harness.as_deref(),
            status: Some(RunStatus::Completed),
            limit: None,
        },
    )?;
    let harness = request.harness.clone().or_else(|| {
        paired
            .iter()
            .find(|r| r.model == reference)
            .map(|r| r.harness.clone())
    });
    let on = |run_harness: &str| harness.as_deref().is_none_or(|h| h == run_harness);
    // (started, model) of the completed probe and trigger runs on the harness, newest first
    let mut others: Vec<(i64, String)> = store
        .probe_runs(skill, None, OTHER_RUNS_SCAN)?
        .into_iter()
        .filter(|r| r.status == RunStatus::Completed && on(&r.harness))
        .map(|r| (r.started_ms, r.model))
        .chain(
            store
                .trigger_runs(skill, None, harness.as_deref(), OTHER_RUNS_SCAN)?
                .into_iter()
                .filter(|r| r.status == RunStatus::Completed)
                .map(|r| (r.started_ms, r.model)),
        )
        .collect();
    others.sort_by_key(|o| std::cmp::Reverse(o.0));
    let paired_on_harness = || paired.iter().filter(|r| on(&r.harness));
    let on_reference = paired_on_harness().any(|r| r.model == reference)
        || others.iter().any(|(_, m)| m == reference);
    if !on_reference {
        return Ok(None);
    }
    let candidate = match &request.model {
        Some(model) => Ok(model.clone()),
        None => paired_on_harness()
            .map(|r| &r.model)
            .chain(others.iter().map(|(_, m)| m))
            .find(|m| *m != reference)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "no completed run on another model than {reference}{}",
                    harness
                        .as_deref()
                        .map_or_else(String::new, |h| format!(" ({h})"))
                )
            }),
    };
    Ok(Some(Pair { candidate, harness }))
}

/// The names the history may know the skill in `skill_dir` by: its folder name, then its
/// SKILL.md `name` (the two differ when a folder was renamed).
pub fn candidate_names(skill_dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(dir) = skill_dir.file_name().and_then(|n| n.to_str()) {
        names.push(dir.to_string());
    }
    if let Ok(doc) = load_document(&skill_dir.join(SKILL_FILE))
        && let Some((name, _)) = doc.field_str("name")
        && !names.iter().any(|n| n == name.trim())
    {
        names.push(name.trim().to_string());
    }
    names
}

/// The newest lift of `skill` per (harness, model), under each run's own profile, with the
/// plugin arm's beside it: what the `name:` lens shows, whichever way the editor reads it.
pub fn lens_lifts(store: &Store, skill: &str) -> Result<Vec<LensLift>, QueryError> {
    let mut lifts = Vec::new();
    for l in store.latest_lift_per_model(skill)? {
        let profile = l.run.profile();
        let read = l.headline.profile(profile).clone();
        lifts.push(LensLift {
            security: lens_security(store, skill, &l.run.model, &l.run.harness)?,
            plugin_lift: l
                .headline
                .plugin
                .as_ref()
                .and_then(|p| p.profile(profile).lift),
            model: l.run.model,
            harness: l.run.harness,
            lift: read.lift,
            interval: read.interval,
            verdict: Some(read.verdict),
            runs: l.completed_runs,
            finished_ms: l.run.finished_ms.unwrap_or(l.run.started_ms),
        });
    }
    Ok(lifts)
}

/// What the editor shows for the skill in `skill_dir` (jobs left empty: the caller adds them).
pub fn lenses(store: &Store, skill_dir: &Path) -> Result<Lenses, QueryError> {
    let mut skill = None;
    for name in candidate_names(skill_dir) {
        if store.has_skill(&name)? {
            skill = Some(name);
            break;
        }
    }
    let Some(skill) = skill else {
        return Ok(Lenses::default());
    };
    let lifts = lens_lifts(store, &skill)?;
    let cases = store
        .case_results(&skill)?
        .into_iter()
        .map(|c| LensCase {
            case: c.case,
            model: c.model,
            harness: c.harness,
            lift: c.lift,
            stale: c.stale,
            finished_ms: c.finished_ms.unwrap_or(0),
        })
        .collect();
    let comparisons: Vec<ModelComparison> = store.latest_model_comparisons(&skill)?;
    Ok(Lenses {
        failed: lens_failed(store, &skill)?,
        triggers: trigger_lenses(store, &skill)?,
        skill: Some(skill),
        lifts,
        cases,
        comparisons,
        jobs: Vec::new(),
    })
}

/// The failed-run lenses of a skill: per (harness, model) whose newest finished run failed.
/// The daemon's `lenses` and the LSP's direct read of the store both use it.
pub fn lens_failed(store: &Store, skill: &str) -> Result<Vec<LensFailed>, QueryError> {
    Ok(store
        .latest_failed_per_model(skill)?
        .into_iter()
        .map(|f| LensFailed {
            finished_ms: f.run.finished_ms.unwrap_or(f.run.started_ms),
            model: f.run.model,
            harness: f.run.harness,
            run: f.run.id.0,
            errors: f.errors,
            trials: f.trials,
        })
        .collect())
}

/// The security lens beside the lift lens of (`harness`, `model`): the newest completed probe
/// run there. The daemon's `lenses` and the LSP's direct read of the store both use it.
pub fn lens_security(
    store: &Store,
    skill: &str,
    model: &str,
    harness: &str,
) -> Result<Option<LensSecurity>, QueryError> {
    let Some(run) = store.latest_probe_run(skill, model, Some(harness))? else {
        return Ok(None);
    };
    Ok(Some(LensSecurity {
        probe_run: run.id.0,
        score: run.score,
        status: run.security_status,
        failed: run
            .outcomes
            .iter()
            .filter(|o| o.outcome == crate::store::ProbeOutcome::Failed)
            .map(|o| o.probe.clone())
            .collect(),
        finished_ms: run.finished_ms.unwrap_or(run.started_ms),
    }))
}

/// The newest completed trigger run of `skill` per (harness, model), by model.
pub fn trigger_lenses(store: &Store, skill: &str) -> Result<Vec<LensTrigger>, QueryError> {
    let mut out: Vec<LensTrigger> = Vec::new();
    for run in store.trigger_runs(skill, None, None, TRIGGER_LENS_SCAN)? {
        let seen = out
            .iter()
            .any(|l| l.model == run.model && l.harness == run.harness);
        if run.status != RunStatus::Completed || seen {
            continue;
        }
        out.push(LensTrigger {
            model: run.model,
            harness: run.harness,
            recall: run.summary.recall,
            false_trigger: run.summary.false_trigger,
            finished_ms: run.finished_ms.unwrap_or(run.started_ms),
        });
    }
    out.sort_by(|a, b| (&a.model, &a.harness).cmp(&(&b.model, &b.harness)));
    Ok(out)
}

/// Trigger runs scanned for the lenses, newest first.
const TRIGGER_LENS_SCAN: usize = 50;

#[cfg(test)]
mod tests {
    use skillwatch_core::evalspec::{TriggerKind, TriggerQuery};
    use skillwatch_core::scoring::trigger::TriggerTrial;
    use skillwatch_core::trajectory::Decision;

    use super::*;
    use crate::store::{Row, RunBegin, RunEnd, SkillIdentity, TriggerRunSpec, TriggerTrialRow};

    /// A trigger run of `pdf` on `model` whose eight positive queries pick it `picked` times.
    fn trigger_run(store: &mut Store, model: &str, picked: usize, status: RunStatus) {
        let run = store
            .begin(RunBegin::Trigger(&TriggerRunSpec {
                skill: SkillIdentity {
                    name: "pdf".into(),
                    path: None,
                    content_hash: "sha256:aa".into(),
                },
                harness: "openai".into(),
                harness_version: None,
                model: model.into(),
                tool_version: "skillwatch test".into(),
                staged: Vec::new(),
                early_stop: true,
                in_history: true,
            }))
            .unwrap();
        for q in 0..8 {
            let decision = match q < picked {
                true => Decision::Picked {
                    skill: "pdf".into(),
                },
                false => Decision::Answered,
            };
            let row = TriggerTrialRow {
                query: TriggerQuery {
                    query: format!("split report-{q}.pdf"),
                    kind: TriggerKind::Positive,
                    origin: "tests/eval.yaml#/triggers".into(),
                },
                trial: TriggerTrial {
                    query: q,
                    decision: Some(decision),
                    tokens: 10,
                    turns: 1,
                    wall_ms: 1,
                    stopped_early: true,
                },
                run: 0,
                listed: Some(true),
                error_message: None,
            };
            store.record(run, &Row::Trigger(row), None).unwrap();
        }
        store.finish(run, &RunEnd { status, stop: None }).unwrap();
    }

    fn request(since: &str, model: Option<&str>) -> CompareAllRequest {
        CompareAllRequest {
            since_model: since.into(),
            model: model.map(str::to_owned),
            harness: None,
            params: CompareParams::default(),
        }
    }

    /// A skill with trigger runs only is listed by `--all`: its candidate is the newest other
    /// model with a completed trigger run (a cancelled newer one is not), its lift says why it
    /// was not compared, and its trigger fall is what regressed.
    #[test]
    fn compare_all_lists_a_skill_with_trigger_runs_only() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = Store::open(&tmp.path().join("h.sqlite3")).unwrap();
        trigger_run(&mut store, "m1", 8, RunStatus::Completed);
        trigger_run(&mut store, "m2", 0, RunStatus::Completed);
        trigger_run(&mut store, "m3", 8, RunStatus::Cancelled);

        let rows = compare_all(&store, &request("m1", None)).unwrap();
        let [row] = rows.as_slice() else {
            panic!("one row: {rows:#?}")
        };
        assert_eq!(row.candidate_model.as_deref(), Some("m2"));
        let why = row.outcome.as_ref().unwrap_err();
        assert!(why.contains("no completed run of skill `pdf`"), "{why}");
        assert!(row.security.is_none());
        let triggers = row
            .triggers
            .as_ref()
            .expect("both models have trigger runs");
        assert_eq!(
            (
                triggers.reference.model.as_str(),
                triggers.candidate.model.as_str()
            ),
            ("m1", "m2")
        );
        assert_eq!(row.regressed, ["triggers"]);

        // the other way round recall rose; a model with nothing completed lists nothing
        let back = compare_all(&store, &request("m2", Some("m1"))).unwrap();
        assert!(back[0].regressed.is_empty(), "{back:#?}");
        assert!(
            compare_all(&store, &request("m3", None))
                .unwrap()
                .is_empty()
        );
        // against a model without a trigger run there is nothing to compare, and no failure
        let none = compare_all(&store, &request("m1", Some("m3"))).unwrap();
        assert!(none[0].triggers.is_none() && none[0].regressed.is_empty());
    }

    /// `compare SKILL --triggers` names the model that has no completed trigger run.
    #[test]
    fn compare_triggers_names_the_model_without_a_run() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = Store::open(&tmp.path().join("h.sqlite3")).unwrap();
        trigger_run(&mut store, "m1", 8, RunStatus::Completed);
        let params = CompareParams::default();
        let err = compare_triggers(&store, "pdf", "m1", "m9", None, &params).unwrap_err();
        assert!(
            err.to_string()
                .contains("no completed trigger run of `pdf` on m9"),
            "{err}"
        );
        let err = compare_triggers(&store, "pdf", "m9", "m1", None, &params).unwrap_err();
        assert!(err.to_string().contains("on m9"), "{err}");
    }
}
