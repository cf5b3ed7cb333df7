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

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skillwatch_core::checks::CheckOptions;
use skillwatch_core::loaders::profiles::reads_when_to_use;
use skillwatch_core::optimize::{Rewrite, admit_rewrite, beats, rewritten, score, split};
use skillwatch_core::scoring::VerdictParams;
use skillwatch_core::scoring::trigger::compare_summaries;
use skillwatch_core::skill::{SKILL_FILE, SkillDocument};
use skillwatch_protocol::{
    Candidate, HarnessSettings, OptimizeProgress, OptimizeReport, OptimizeRequest, Rates,
    StopReason,
};
use tokio_util::sync::CancellationToken;

use crate::runner::RunError;
use crate::runs::Engine;
use crate::store::{OptimizationRecord, SkillIdentity};
use search::{Measured, Search, stop};

/// Where a search reports where it is. Called from the engine's task; keep it quick.
pub type OptimizeSink = Arc<dyn Fn(&OptimizeProgress) + Send + Sync>;

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

/// The skill as the search read it.
pub(crate) struct Skill {
    /// Its folder, canonical.
    pub(crate) dir: PathBuf,
    /// Its SKILL.md text.
    pub(crate) text: String,
    /// Its `name:`.
    pub(crate) name: String,
    /// Its `description:`, trimmed.
    pub(crate) description: String,
    /// Its `when_to_use:`, when the harness the search measures on reads it (and the skill
    /// has one): then the proposer may rewrite it too.
    pub(crate) when_to_use: Option<String>,
}

impl Skill {
    fn read(dir: &Path, harness: &HarnessSettings) -> Result<Skill, RunError> {
        let settings = |message: String| RunError::Settings { message };
        let dir = dir
            .canonicalize()
            .map_err(|e| settings(format!("{}: expected a skill folder ({e})", dir.display())))?;
        let path = dir.join(SKILL_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| settings(format!("reading {}: {e}", path.display())))?;
        let doc = SkillDocument::parse(text.clone());
        let field = |f: &str| doc.field_str(f).map(|(v, _)| v.trim().to_owned());
        let description = field("description").ok_or_else(|| {
            settings(format!(
                "{}: expected a `description:`, found none",
                dir.display()
            ))
        })?;
        let name = field("name").unwrap_or_default();
        let when_to_use = field("when_to_use").filter(|_| reads_when_to_use(harness.kind.as_str()));
        Ok(Skill {
            dir,
            text,
            name,
            description,
            when_to_use,
        })
    }

    /// Whether `rewrite` may be measured (the rules of every target harness, the spec,
    /// `check`); why not.
    pub(crate) fn admit(&self, rewrite: &Rewrite<'_>) -> Result<(), String> {
        admit_rewrite(
            &self.dir,
            &self.text,
            rewrite,
            &[],
            &CheckOptions::default(),
        )
        .map(drop)
        .map_err(|r| r.reason)
    }

    /// SKILL.md with `rewrite`, and the diff to it.
    fn rewritten(&self, rewrite: &Rewrite<'_>) -> Option<(String, String)> {
        let after = rewritten(&SkillDocument::parse(self.text.clone()), rewrite)?;
        let diff = similar::TextDiff::from_lines(&self.text, &after)
            .unified_diff()
            .header("a/SKILL.md", "b/SKILL.md")
            .to_string();
        Some((after, diff))
    }
}

/// The best of a round's winners: the highest validation score, the shorter on a tie.
fn rank(mut winners: Vec<Measured>) -> Option<Measured> {
    winners.sort_by(|x, y| {
        score(&y.validation)
            .total_cmp(&score(&x.validation))
            .then(x.text.len().cmp(&y.text.len()))
    });
    winners.into_iter().next()
}

/// Decide a candidate measured on both sides against `current`, on validation only.
fn decide(
    c: &mut Candidate,
    current: &Measured,
    train: skillwatch_core::scoring::trigger::TriggerSummary,
    validation: skillwatch_core::scoring::trigger::TriggerSummary,
) -> Option<Measured> {
    c.validation = Some(Rates::of(&validation));
    let change = compare_summaries(&current.validation, &validation, &VerdictParams::default());
    let verdict = beats(&change);
    c.change = Some(change);
    match verdict {
        Ok(()) => {
            c.outcome = "beats the current description on validation".into();
            Some(Measured {
                text: c.description.clone(),
                when_to_use: c.when_to_use.clone(),
                train,
                validation,
            })
        }
        Err(why) => {
            c.outcome = format!("rejected on validation: {why}");
            None
        }
    }
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
    let id = engine
        .with_store(move |s| s.record_optimization(&record))
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
