//! Description optimisations (migration 0013): what `skillwatch trigger --optimize` tried and
//! chose, kept so a later model change can re-measure the chosen description on the same
//! validation queries. The candidates and the split are stored as JSON: they are read whole,
//! never queried by field.

use rusqlite::params;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use skillwatch_protocol::OptimizeReport;

use super::error::Result;
use super::record::SkillIdentity;
use super::time::now_ms;
use super::{Spend, Store};

/// One optimisation, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimizationRecord {
    /// The skill version it started from.
    pub skill: SkillIdentity,
    /// The harness it measured on.
    pub harness: String,
    /// The agent model it measured on.
    pub model: String,
    /// The model that proposed the rewrites.
    pub proposer_model: String,
    /// The split's seed.
    pub seed: u64,
    /// The split: `{"train": [...], "validation": [...]}` of queries.
    pub split: Value,
    /// Every candidate with its rates, or why it was refused.
    pub candidates: Value,
    /// The description it started from.
    pub original: String,
    /// The chosen description; `None` when none beat the original on validation.
    pub chosen: Option<String>,
    /// Why the loop ended.
    pub stopped: String,
    /// Tokens spent by its trials.
    pub tokens: u64,
    /// Cost in USD of its trials (0 when unpriced).
    pub cost_usd: f64,
    /// Calls to the proposer (migration 0014; 0 in records made before it).
    #[serde(default)]
    pub proposer_calls: u64,
    /// Tokens spent by the proposer's calls.
    #[serde(default)]
    pub proposer_tokens: u64,
    /// Cost in USD of the proposer's calls (0 when unpriced).
    #[serde(default)]
    pub proposer_cost_usd: f64,
    /// The job's report (migration 0014; `None` in records made before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<OptimizeReport>,
}

/// A stored optimisation with its id and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredOptimization {
    /// Its id.
    pub id: i64,
    /// When it was recorded, Unix ms.
    pub created_ms: i64,
    /// What was recorded.
    #[serde(flatten)]
    pub record: OptimizationRecord,
}

impl Store {
    /// Record an optimisation and what its proposer's `calls` spent (in the ledger the daily
    /// cap sums; its measurements' trials are there already, as trigger runs); its id.
    pub fn record_optimization(&mut self, r: &OptimizationRecord, calls: &[Spend]) -> Result<i64> {
        let now = now_ms();
        let tx = self.conn.transaction()?;
        let (skill_id, version_id) = super::write::upsert_skill(&tx, &r.skill, now)?;
        tx.execute(
            "INSERT INTO description_optimizations (skill_id, skill_version_id, harness, model,
                 proposer_model, seed, split, candidates, original, chosen, stopped, tokens,
                 cost_usd, created_ms, proposer_calls, proposer_tokens, proposer_cost_usd, report)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                     ?18)",
            params![
                skill_id,
                version_id,
                r.harness,
                r.model,
                r.proposer_model,
                r.seed as i64,
                r.split.to_string(),
                r.candidates.to_string(),
                r.original,
                r.chosen,
                r.stopped,
                r.tokens as i64,
                r.cost_usd,
                now,
                r.proposer_calls as i64,
                r.proposer_tokens as i64,
                r.proposer_cost_usd,
                r.report
                    .as_ref()
                    .map(|rep| serde_json::to_string(rep).unwrap_or_default())
            ],
        )?;
        let id = tx.last_insert_rowid();
        super::lifecycle::record_proposer_calls(&tx, id, calls)?;
        tx.commit()?;
        Ok(id)
    }

    /// The optimisations of skill `name`, newest first.
    pub fn optimizations(&self, name: &str) -> Result<Vec<StoredOptimization>> {
        self.read_optimizations("s.name = ?1", rusqlite::types::Value::Text(name.to_owned()))
    }

    /// The optimisation `id` (what an optimize job stored).
    pub fn optimization(&self, id: i64) -> Result<Option<StoredOptimization>> {
        let found = self.read_optimizations("o.id = ?1", rusqlite::types::Value::Integer(id))?;
        Ok(found.into_iter().next())
    }

    fn read_optimizations(
        &self,
        filter: &str,
        value: rusqlite::types::Value,
    ) -> Result<Vec<StoredOptimization>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT o.id, o.created_ms, s.name, s.last_path, v.content_hash, o.harness, o.model,
                    o.proposer_model, o.seed, o.split, o.candidates, o.original, o.chosen,
                    o.stopped, o.tokens, o.cost_usd, o.proposer_calls, o.proposer_tokens,
                    o.proposer_cost_usd, o.report
             FROM description_optimizations o
             JOIN skills s ON s.id = o.skill_id
             JOIN skill_versions v ON v.id = o.skill_version_id
             WHERE {filter} ORDER BY o.created_ms DESC, o.id DESC"
        ))?;
        let json = |t: String| serde_json::from_str(&t).unwrap_or(Value::Null);
        let rows = stmt.query_map(params![value], |r| {
            let id: i64 = r.get(0)?;
            Ok(StoredOptimization {
                id,
                created_ms: r.get(1)?,
                record: OptimizationRecord {
                    skill: SkillIdentity {
                        name: r.get(2)?,
                        path: r.get(3)?,
                        content_hash: r.get(4)?,
                    },
                    harness: r.get(5)?,
                    model: r.get(6)?,
                    proposer_model: r.get(7)?,
                    seed: r.get::<_, i64>(8)? as u64,
                    split: json(r.get(9)?),
                    candidates: json(r.get(10)?),
                    original: r.get(11)?,
                    chosen: r.get(12)?,
                    stopped: r.get(13)?,
                    tokens: r.get::<_, i64>(14)? as u64,
                    cost_usd: r.get(15)?,
                    proposer_calls: r.get::<_, i64>(16)? as u64,
                    proposer_tokens: r.get::<_, i64>(17)? as u64,
                    proposer_cost_usd: r.get(18)?,
                    // the report is stored before its row has an id: it is the row's
                    report: r
                        .get::<_, Option<String>>(19)?
                        .and_then(|t| serde_json::from_str::<OptimizeReport>(&t).ok())
                        .map(|rep| OptimizeReport {
                            record: Some(id),
                            ..rep
                        }),
                },
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}
