//! Model comparisons of model-change reruns (`model_comparisons`, migration 0003): kept so
//! the editor can show a regression on SKILL.md (SW501) long after the event that announced
//! it, with or without the daemon.

use std::path::Path;

use rusqlite::{OptionalExtension, params};
use skillwatch_protocol::ModelComparison;

use super::Store;
use super::error::{Result, StoreError};
use super::history::RunComparison;
use super::time::now_ms;

/// The protocol's summary of a comparison of two runs of one skill on two models.
pub fn model_comparison(result: &RunComparison, skill_dir: Option<&Path>) -> ModelComparison {
    let cmp = &result.comparison;
    ModelComparison {
        skill: result.candidate.skill.clone(),
        skill_dir: skill_dir.map(Path::to_path_buf),
        harness: result.candidate.harness.clone(),
        reference_model: result.reference.model.clone(),
        candidate_model: result.candidate.model.clone(),
        reference_run: result.reference.id.0,
        candidate_run: result.candidate.id.0,
        reference_lift: cmp.reference_lift,
        candidate_lift: cmp.candidate_lift,
        difference: cmp.summary.mean,
        interval: cmp.interval,
        verdict: cmp.verdict,
        reason: cmp.reason.clone(),
        compared_ms: now_ms(),
    }
}

impl Store {
    /// Keep a model comparison.
    pub fn record_model_comparison(&mut self, comparison: &ModelComparison) -> Result<()> {
        let detail = serde_json::to_string(comparison).map_err(|e| {
            StoreError::invalid(
                "comparison",
                "a comparison serializable as JSON",
                e.to_string(),
            )
        })?;
        let skill_id: i64 = self
            .conn
            .prepare_cached("SELECT id FROM skills WHERE name = ?1")?
            .query_row([&comparison.skill], |r| r.get(0))
            .optional()?
            .ok_or_else(|| {
                StoreError::invalid(
                    "comparison.skill",
                    "a skill with history",
                    comparison.skill.clone(),
                )
            })?;
        self.conn
            .prepare_cached(
                "INSERT INTO model_comparisons (skill_id, harness, reference_run, candidate_run,
                                                verdict, detail, compared_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                skill_id,
                comparison.harness,
                comparison.reference_run,
                comparison.candidate_run,
                comparison.verdict.code(),
                detail,
                comparison.compared_ms
            ])?;
        Ok(())
    }

    /// The newest model comparison of a skill per harness, by harness.
    pub fn latest_model_comparisons(&self, skill: &str) -> Result<Vec<ModelComparison>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT detail FROM (
                 SELECT m.detail AS detail, m.harness AS harness,
                        row_number() OVER (PARTITION BY m.harness
                                           ORDER BY m.compared_ms DESC, m.id DESC) AS rn
                 FROM model_comparisons m JOIN skills s ON s.id = m.skill_id
                 WHERE s.name = ?1)
             WHERE rn = 1 ORDER BY harness",
        )?;
        let rows = stmt.query_map([skill], |r| r.get::<_, String>(0))?;
        let mut found = Vec::new();
        for row in rows {
            let text = row?;
            found.push(
                serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                    table: "model_comparisons",
                    column: "detail",
                    found: e.to_string(),
                })?,
            );
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{
        CaseSpec, Condition, DEFAULT_SCORING_PROFILE, RunSpec, RunStatus, SkillIdentity, SuiteSpec,
        TrialRecord, Trigger,
    };
    use skillwatch_core::scoring::{CompareParams, Verdict};

    fn run(store: &mut Store, model: &str, lifts: &[f64]) {
        let cases: Vec<CaseSpec> = (0..lifts.len())
            .map(|i| CaseSpec {
                key: format!("c{i}"),
                content_hash: format!("sha256:c{i}"),
                definition: None,
            })
            .collect();
        let spec = RunSpec {
            skill: SkillIdentity {
                name: "pdf".into(),
                path: None,
                content_hash: "sha256:aa".into(),
            },
            suite: SuiteSpec {
                content_hash: "sha256:bb".into(),
                source: None,
                cases,
            },
            harness: "openai".into(),
            harness_version: None,
            model: model.into(),
            judge_model: None,
            scoring_profile: DEFAULT_SCORING_PROFILE.into(),
            trigger: Trigger::Manual,
            config: serde_json::json!({}),
            seed: 1,
            tool_version: "t".into(),
            started_ms: None,
        };
        let id = store.begin_run(&spec).unwrap();
        for (i, lift) in lifts.iter().enumerate() {
            for (condition, value) in [(Condition::Baseline, 0.2), (Condition::Skill, 0.2 + lift)] {
                let mut t = TrialRecord::new(format!("c{i}"), condition, 0);
                t.metrics.insert("goal_accuracy".into(), value);
                store.record_trial(id, &t).unwrap();
            }
        }
        store.finish_run(id, RunStatus::Completed).unwrap();
    }

    #[test]
    fn a_regression_is_kept_and_the_newest_per_harness_wins() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("h.sqlite3")).unwrap();
        run(&mut store, "old", &[0.6, 0.7, 0.5, 0.6, 0.65, 0.55]);
        run(&mut store, "new", &[0.0, 0.05, -0.05, 0.0, 0.02, -0.02]);
        let result = store
            .compare_models("pdf", "old", "new", None, &CompareParams::default())
            .unwrap();
        let cmp = model_comparison(&result, Some(Path::new("/s/pdf")));
        assert_eq!(cmp.verdict, Verdict::Regresses);
        assert!(
            cmp.headline()
                .starts_with("lift fell from +0.60 to +0.00 on model new: regresses"),
            "{}",
            cmp.headline()
        );
        assert!(cmp.headline().contains("interval ["), "{}", cmp.headline());
        store.record_model_comparison(&cmp).unwrap();
        let mut later = cmp.clone();
        later.verdict = Verdict::NoChange;
        later.compared_ms += 1;
        store.record_model_comparison(&later).unwrap();
        let latest = store.latest_model_comparisons("pdf").unwrap();
        assert_eq!(latest.len(), 1);
        assert_eq!(latest[0].verdict, Verdict::NoChange);
        assert!(store.latest_model_comparisons("other").unwrap().is_empty());
    }
}
