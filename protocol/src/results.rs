//! Results as the daemon serves them: code lens numbers, model comparisons (regressions), and
//! the history and compare queries of the CLI.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use skillwatch_core::scoring::skilltester::SecurityStatus;
use skillwatch_core::scoring::trigger::PooledRate;
use skillwatch_core::scoring::{CompareParams, Decision, Interval, Verdict};

/// The newest lift of a skill on one (harness, model): one SKILL.md code lens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LensLift {
    /// The agent model.
    pub model: String,
    /// The harness the runs used.
    pub harness: String,
    /// Outcome Skill Lift of the newest completed run; `None` when no case had a full pair.
    pub lift: Option<f64>,
    /// Its interval, when the run had enough cases.
    pub interval: Option<Interval>,
    /// The verdict on it (`core::scoring::verdict`), so a lens can tell "inconclusive (n too
    /// small)" from "no change".
    #[serde(default)]
    pub verdict: Option<Decision>,
    /// Completed runs on this (harness, model).
    pub runs: usize,
    /// When the newest run finished (epoch ms).
    pub finished_ms: i64,
    /// The newest completed probe run on the same (harness, model), for the security lens.
    #[serde(default)]
    pub security: Option<LensSecurity>,
    /// The plugin arm's lift over the baseline in the same run, when it had a plugin arm (a
    /// Vally experiment's: every skill of the plugin installed together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin_lift: Option<f64>,
}

/// The newest finished run of a skill on one (harness, model), when it failed (measured
/// nothing): a SKILL.md code lens says so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LensFailed {
    /// The agent model.
    pub model: String,
    /// The harness.
    pub harness: String,
    /// The run (`skillwatch show RUN` lists its trials and errors).
    pub run: i64,
    /// Its trials that errored.
    pub errors: usize,
    /// All its trials.
    pub trials: usize,
    /// When it finished (epoch ms).
    pub finished_ms: i64,
}

/// S and its status from the newest completed probe run of a skill on one (harness, model):
/// the "Security 92 · Caution" lens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LensSecurity {
    /// The probe run (`skillwatch history` lists it).
    pub probe_run: i64,
    /// S; `None` when a group had no probe that ran.
    pub score: Option<f64>,
    /// Its status.
    pub status: Option<SecurityStatus>,
    /// Probes that failed.
    pub failed: Vec<String>,
    /// When it finished (epoch ms).
    pub finished_ms: i64,
}

/// The last result of one case on one (harness, model): one eval-file code lens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LensCase {
    /// The case's name or id.
    pub case: String,
    /// The agent model.
    pub model: String,
    /// The harness.
    pub harness: String,
    /// The case's outcome lift in that run.
    pub lift: Option<f64>,
    /// The case was edited since that run.
    pub stale: bool,
    /// When that run finished (epoch ms).
    pub finished_ms: i64,
}

/// A skill compared across models: the outcome of a model-change rerun. `verdict ==
/// Regresses` is what the SW501 diagnostic and the regression event report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelComparison {
    /// The skill's name.
    pub skill: String,
    /// Its folder, when known.
    pub skill_dir: Option<PathBuf>,
    /// The harness both runs used.
    pub harness: String,
    /// The model compared against (the previous one).
    pub reference_model: String,
    /// The new model.
    pub candidate_model: String,
    /// The reference run's id in the history.
    pub reference_run: i64,
    /// The candidate run's id.
    pub candidate_run: i64,
    /// Mean per-case lift on the reference model (shared cases).
    pub reference_lift: Option<f64>,
    /// Mean per-case lift on the candidate model (shared cases).
    pub candidate_lift: Option<f64>,
    /// Mean per-case difference, candidate − reference.
    pub difference: Option<f64>,
    /// The interval of the difference the verdict rests on.
    pub interval: Option<Interval>,
    /// The verdict on the change (`core::scoring::verdict`); `regresses` is SW501.
    pub verdict: Verdict,
    /// One sentence with the numbers (from `core::scoring::compare`).
    pub reason: String,
    /// When it was computed (epoch ms).
    pub compared_ms: i64,
}

impl ModelComparison {
    /// "lift fell from +0.21 to -0.02 on model X: regresses", plus the interval: the text of
    /// the SW501 diagnostic and of the CLI's regression lines.
    pub fn headline(&self) -> String {
        let lift = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:+.2}"));
        let moved = match (self.reference_lift, self.candidate_lift) {
            (Some(r), Some(c)) if c < r => "fell",
            (Some(r), Some(c)) if c > r => "rose",
            _ => "went",
        };
        let interval = self.interval.as_ref().map_or_else(String::new, |i| {
            format!(
                " (change {:+.2}, {:.0}% interval [{:+.2}, {:+.2}], n={}, vs {})",
                i.estimate,
                i.level * 100.0,
                i.low,
                i.high,
                i.n,
                self.reference_model
            )
        });
        format!(
            "lift {moved} from {} to {} on model {}: {}{interval}",
            lift(self.reference_lift),
            lift(self.candidate_lift),
            self.candidate_model,
            self.verdict.as_str()
        )
    }
}

/// Everything the editor shows about one skill: lens numbers, the latest model comparison per
/// harness, and the skill's live jobs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Lenses {
    /// The skill's name in the history (`None` when it has no runs).
    pub skill: Option<String>,
    /// Newest lift per (harness, model), by model.
    pub lifts: Vec<LensLift>,
    /// Last result per case and (harness, model).
    pub cases: Vec<LensCase>,
    /// The newest model comparison per harness; regressed ones become SW501 diagnostics.
    pub comparisons: Vec<ModelComparison>,
    /// Jobs of this skill that are queued or running.
    pub jobs: Vec<super::JobInfo>,
    /// The newest completed trigger run per (harness, model): the `description:` line's lens.
    #[serde(default)]
    pub triggers: Vec<LensTrigger>,
    /// Per (harness, model) whose newest finished run failed: that run (protocol 5).
    #[serde(default)]
    pub failed: Vec<LensFailed>,
}

/// The newest trigger rates of a skill on one (harness, model): one lens on the
/// `description:` line of its SKILL.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LensTrigger {
    /// The agent model.
    pub model: String,
    /// The harness.
    pub harness: String,
    /// Recall over the positive queries, with its Wilson interval.
    pub recall: PooledRate,
    /// Triggers over the negative and near-miss queries.
    pub false_trigger: PooledRate,
    /// When the run finished (epoch ms).
    pub finished_ms: i64,
}

impl LensTrigger {
    /// `Triggers 18/20 [0.70, 0.97] · false 1/10`: recall with its 95% Wilson interval, then
    /// the false triggers.
    pub fn title(&self) -> String {
        let interval = self
            .recall
            .interval
            .as_ref()
            .map_or_else(String::new, |i| format!(" [{:.2}, {:.2}]", i.low, i.high));
        format!(
            "Triggers {}/{}{interval} · false {}/{}",
            self.recall.hits,
            self.recall.trials,
            self.false_trigger.hits,
            self.false_trigger.trials
        )
    }
}

/// `skillwatch history` through the daemon.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistoryQuery {
    /// The skill's name.
    pub skill: String,
    /// Only this model.
    pub model: Option<String>,
    /// Only this harness.
    pub harness: Option<String>,
    /// At most this many runs.
    pub limit: u32,
    /// Include every trial of the runs listed.
    pub trials: bool,
}

/// What two runs to compare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CompareWhat {
    /// The newest completed run on each model: reference, candidate.
    Models(String, String),
    /// Two run ids: reference, candidate.
    Runs(i64, i64),
    /// The newest completed trigger run on each model: reference, candidate (the answer is
    /// a `skillwatch_daemon::server::queries::TriggerComparison`).
    TriggerModels(String, String),
}

/// `skillwatch compare SKILL` through the daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRequest {
    /// The skill's name.
    pub skill: String,
    /// The runs or models.
    pub what: CompareWhat,
    /// Only runs on this harness.
    pub harness: Option<String>,
    /// Effect floor, level, interval and target.
    pub params: CompareParams,
}

/// `skillwatch compare --all --since-model A`: every skill with history on A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareAllRequest {
    /// The reference model.
    pub since_model: String,
    /// The candidate model; default: each skill's newest other model with a completed run.
    pub model: Option<String>,
    /// Only runs on this harness.
    pub harness: Option<String>,
    /// Effect floor, level, interval and target.
    pub params: CompareParams,
}
