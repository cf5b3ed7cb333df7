//! The description optimiser (`skillwatch trigger --optimize`, the editor's "Look for a better
//! description") as one job of the run engine: the CLI and the editor ask for it
//! ([`skillwatch_protocol::OptimizeRequest`]), the daemon's executor runs [`run`] (and
//! `--no-daemon` runs the same function in the client's process), and the job leaves an
//! optimisation record with its typed report ([`skillwatch_protocol::OptimizeReport`]) in the
//! history, whether or not the client that asked is still there.
//!
//! The queries split into train and validation ([`skillwatch_core::optimize::split`]). Each
//! round, a model ([`proposer`]) sees the current description and its train failures and
//! proposes rewrites; a rewrite that breaks a rule is refused unmeasured; the others are
//! measured on train by trigger runs (child runs of the job, each through `AgentRun`), those
//! that do better there on validation, and only validation decides. The search stops when no
//! rewrite beats the current description on validation by the interval, after its rounds,
//! when stopped (a cancel: the trials in flight finish, the partial record is kept), or before
//! a measurement or a proposal the budget cannot pay for.

mod proposer;
mod search;
mod skill;

use skillwatch_core::optimize::split;
use skillwatch_core::scoring::VerdictParams;
use skillwatch_core::scoring::trigger::compare_summaries;
use skillwatch_protocol::{OptimizeReport, OptimizeRequest, Rates, StopReason};
use tokio_util::sync::CancellationToken;

use crate::runner::RunError;
use crate::runs::Engine;
use crate::store::{OptimizationRecord, SkillIdentity};
pub use search::OptimizeSink;
use search::{Measured, Search, stop};
use skill::Skill;

/// Search for a better description of `request`'s skill (see the module docs) and store the
/// optimisation record; its report, with the record's id. `stop` ends the search early: no
/// new trial or proposal starts, the trials in flight finish, the partial record is stored.
pub async fn run(
    engine: &Engine,
    request: &OptimizeRequest,
    progress: OptimizeSink,
    stop: CancellationToken,
) -> Result<OptimizeReport, RunError> {
    let skill = Skill::read(&request.trigger.skill_dir, request.harness())?;
    let planned = crate::trigger::preview(&request.trigger)?;
    let split = split(&planned.queries, request.seed);
    for (side, qs) in [("train", &split.train), ("validation", &split.validation)] {
        if !qs.iter().any(|q| q.kind.should_trigger()) {
            return Err(RunError::Settings {
                message: format!(
                    "{}: expected should-trigger queries on both sides of the split, found \
                     none for {side} ({} queries in all); add queries",
                    skill.dir.display(),
                    planned.queries.len()
                ),
            });
        }
    }
    let mut search = Search::new(engine, request, skill, split, progress, stop)?;
    let start = search.measure_both().await?;
    let best = match &start {
        Some(start) => search.rounds(start).await?,
        None => None,
    };
    finish(engine, search, start, best).await
}

/// The report, stored with the record; the record's id in it.
async fn finish(
    engine: &Engine,
    search: Search<'_>,
    start: Option<Measured>,
    best: Option<Measured>,
) -> Result<OptimizeReport, RunError> {
    let stopped = search
        .stopped
        .clone()
        .unwrap_or_else(|| stop(StopReason::NoBetter, "no candidate".into()));
    let diff = best
        .as_ref()
        .and_then(|b| search.skill.rewritten(&b.rewrite()))
        .map(|(_, diff)| diff);
    let change = match (&start, &best) {
        (Some(s), Some(b)) => Some(compare_summaries(
            &s.validation,
            &b.validation,
            &VerdictParams::default(),
        )),
        _ => None,
    };
    let mut report = OptimizeReport {
        skill: search.skill.name.clone(),
        split: search.split.clone(),
        original: search.skill.description.clone(),
        chosen: best.as_ref().map(|b| b.text.clone()),
        original_when_to_use: search.skill.when_to_use.clone(),
        chosen_when_to_use: best.as_ref().and_then(|b| b.when_to_use.clone()),
        before: start.as_ref().map(|s| Rates::of(&s.validation)),
        after: best.as_ref().map(|b| Rates::of(&b.validation)),
        change,
        candidates: search.candidates.clone(),
        partial: stopped.reason.partial(),
        stopped,
        spent: search.spent_all(),
        diff,
        written: false,
        record: None,
    };
    let record = record_of(&search, &report)?;
    let calls = search.proposer.calls.clone();
    let id = engine
        .with_store(move |s| s.record_optimization(&record, &calls))
        .await?;
    report.record = Some(id);
    Ok(report)
}

/// The optimisation as the history keeps it.
fn record_of(search: &Search<'_>, report: &OptimizeReport) -> Result<OptimizationRecord, RunError> {
    let skill = &search.skill;
    let json = |v: serde_json::Result<serde_json::Value>| {
        v.map_err(|e| RunError::Settings {
            message: format!("the optimisation record: {e}"),
        })
    };
    let s = &report.spent;
    Ok(OptimizationRecord {
        skill: SkillIdentity {
            name: skill.name.clone(),
            path: Some(skill.dir.display().to_string()),
            content_hash: crate::runs::resolve::hash_dir(&skill.dir)?,
        },
        harness: search.request.harness().kind.as_str().to_owned(),
        model: search.request.trigger.model.clone(),
        proposer_model: search.proposer.model().to_owned(),
        seed: search.split.seed,
        split: json(serde_json::to_value(&search.split))?,
        candidates: json(serde_json::to_value(&report.candidates))?,
        original: skill.description.clone(),
        chosen: report.chosen.clone(),
        stopped: format!(
            "{}: {}",
            json(serde_json::to_value(report.stopped.reason))?
                .as_str()
                .unwrap_or_default(),
            report.stopped.detail
        ),
        tokens: s.measurements.tokens,
        cost_usd: s.measurements.cost_usd,
        proposer_calls: s.proposer.count,
        proposer_tokens: s.proposer.tokens,
        proposer_cost_usd: s.proposer.cost_usd,
        report: Some(report.clone()),
    })
}
