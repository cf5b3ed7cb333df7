//! Model changes: which tracked skills must be rerun because their `skillwatch.toml` lists a
//! model the history has not seen for them.
//!
//! A model is new for a skill when the history holds no run of the skill on that (harness,
//! model) and no model-change job was ever queued for it, while it does hold a completed run
//! on another model of the same harness: there is a previous model to compare with. A skill
//! without history is not run automatically (its first run is the author's call:
//! `skillwatch run`, or `skillwatch rerun --all --model M`).

use skillwatch_protocol::{JobTrigger, RunRequest, TrackedSkill};

use crate::store::{self, RunFilter, RunStatus, Store};

/// The model-change runs to queue now for `skills`.
pub fn plan(store: &Store, skills: &[TrackedSkill]) -> store::Result<Vec<RunRequest>> {
    let mut planned = Vec::new();
    for skill in skills.iter().filter(|s| s.has_evals) {
        for (harness, model) in &skill.models {
            if is_new_model(store, skill, harness, model)? {
                planned.push(request(skill, harness, model));
            }
        }
    }
    Ok(planned)
}

/// Model-change runs of every tracked skill with evals on `model`: on `harness`, or on every
/// harness its config lists models for.
pub fn rerun_all(skills: &[TrackedSkill], model: &str, harness: Option<&str>) -> Vec<RunRequest> {
    let mut planned = Vec::new();
    for skill in skills.iter().filter(|s| s.has_evals) {
        let mut harnesses: Vec<&str> = match harness {
            Some(h) => vec![h],
            None => skill.models.iter().map(|(h, _)| h.as_str()).collect(),
        };
        harnesses.dedup();
        for h in harnesses {
            planned.push(request(skill, h, model));
        }
    }
    planned
}

fn request(skill: &TrackedSkill, harness: &str, model: &str) -> RunRequest {
    let mut request = RunRequest::new(&skill.dir, harness, model);
    request.trigger = JobTrigger::ModelChange;
    request
}

fn is_new_model(
    store: &Store,
    skill: &TrackedSkill,
    harness: &str,
    model: &str,
) -> store::Result<bool> {
    let seen = !store
        .runs(
            &skill.name,
            &RunFilter {
                model: Some(model),
                harness: Some(harness),
                status: None,
                limit: Some(1),
            },
        )?
        .is_empty();
    if seen {
        return Ok(false);
    }
    let queued_before = store
        .latest_job_for(
            &skill.dir,
            harness,
            model,
            Some(JobTrigger::ModelChange),
            &[],
        )?
        .is_some();
    if queued_before {
        return Ok(false);
    }
    let completed = store.runs(
        &skill.name,
        &RunFilter {
            model: None,
            harness: Some(harness),
            status: Some(RunStatus::Completed),
            limit: None,
        },
    )?;
    Ok(completed.iter().any(|r| r.model != model))
}
