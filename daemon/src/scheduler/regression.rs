//! After a model-change rerun: does the skill still help? The new run is compared case by
//! case with the skill's newest completed run on the previous model (same harness), and the
//! comparison is kept and announced.

use std::path::Path;

use skillwatch_core::scoring::CompareParams;
use skillwatch_protocol::ModelComparison;

use crate::store::{self, RunFilter, RunId, RunStatus, Store, model_comparison};

/// Compare `candidate` (a completed run) with the newest completed run of the same skill and
/// harness on another model that started before it. `None` when there is no such run.
pub fn compare_with_previous(
    store: &mut Store,
    candidate: i64,
    skill_dir: Option<&Path>,
) -> store::Result<Option<ModelComparison>> {
    let run = store.run(RunId(candidate))?;
    let filter = RunFilter {
        model: None,
        harness: Some(&run.harness),
        status: Some(RunStatus::Completed),
        limit: None,
    };
    let previous = store
        .runs(&run.skill, &filter)?
        .into_iter()
        .find(|r| r.model != run.model && (r.started_ms, r.id) < (run.started_ms, run.id));
    let Some(previous) = previous else {
        return Ok(None);
    };
    let result = store.compare_runs(previous.id, run.id, &CompareParams::default())?;
    let comparison = model_comparison(&result, skill_dir);
    store.record_model_comparison(&comparison)?;
    Ok(Some(comparison))
}
