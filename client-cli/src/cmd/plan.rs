//! `skillwatch plan SKILL --detect 0.1`: how many cases x attempts a lift needs, and what the
//! suite as it stands can detect. The same numbers are printed before every `skillwatch run`
//! ([`design_note`]), so an author learns that 3 cases can show nothing before paying for
//! the run, not after.
//!
//! The formulas are `core::scoring::plan`'s; the variance is the skill's own (its newest
//! completed run with two cases or more) when the history has one, else the stated default.
//! What a design is expected to spend is the mean trial of this skill on the model in the
//! history (the run engine's `spending` ledger, the prediction its budget starts from) times
//! the design's trials, at the model's price.

use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde::Serialize;
use skillwatch_core::plural::count;
use skillwatch_core::scoring::plan::{
    Detectable, PlanParams, VarianceModel, VarianceSource, cases_needed, detectable,
};
use skillwatch_daemon::runner::{
    HarnessKind, HarnessSettings, PlannedDesign, RunRequest, planned_design,
};
use skillwatch_daemon::store::{RunKind, Store};
use skillwatch_protocol::Price;

use super::history_db::{DbArgs, skill_name};

/// Attempts per case the plan table lists.
const ATTEMPTS: [u32; 5] = [1, 2, 3, 5, 10];

/// Largest suite the plan looks for.
const MAX_CASES: usize = 100_000;

/// Arguments of `skillwatch plan`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The skill folder (its eval cases are counted), or a skill name in the history.
    skill: String,
    /// The lift to detect, on the [0, 1] metric scale (0.1 = ten points of pass rate).
    #[arg(long, value_name = "LIFT")]
    detect: f64,
    /// Attempts per case the current design uses [default: 1].
    #[arg(long)]
    runs: Option<u32>,
    /// Use the variance of runs on this model (default: the skill's newest run).
    #[arg(long)]
    model: Option<String>,
    /// Power sought.
    #[arg(long, default_value_t = 0.8)]
    power: f64,
    /// Confidence level of the verdict.
    #[arg(long, default_value_t = 0.95)]
    level: f64,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

/// What `plan --json` prints.
#[derive(Debug, Serialize)]
struct Plan {
    skill: String,
    /// Cases in the suite now (when SKILL is a folder with eval files), else in the history's
    /// run the variance came from.
    cases: Option<usize>,
    /// Conditions per case and attempt: baseline and skill, and the plugin arm when the suite
    /// has one (a third more trials to pay for).
    conditions: usize,
    runs: u32,
    detect: f64,
    power: f64,
    level: f64,
    variance: VarianceModel,
    /// The run the variance was estimated from.
    variance_run: Option<i64>,
    /// What the current suite detects at `runs` attempts.
    current: Option<Detectable>,
    /// Cases needed per attempts per case; `None` when no suite up to the limit does.
    needed: Vec<(u32, Option<usize>)>,
    /// What one trial is expected to spend, when the history has trials of this skill on the
    /// model.
    per_trial: Option<Expected>,
}

/// What trials are expected to spend.
#[derive(Debug, Clone, Copy, Serialize)]
struct Expected {
    /// Tokens (input and output).
    tokens: f64,
    /// USD at the model's price; `None` when it has no price.
    cost_usd: Option<f64>,
}

impl Expected {
    /// A mean trial of `skill` on `model` from the history, and its cost at `price`.
    fn of(
        store: &Store,
        skill: &str,
        model: &str,
        price: Option<&Price>,
    ) -> anyhow::Result<Option<Expected>> {
        Ok(store
            .typical_usage(RunKind::Paired, skill, model)?
            .map(|u| Expected {
                tokens: u.tokens(),
                cost_usd: price.map(|p| u.cost(p)),
            }))
    }

    /// `about 7,200 tokens, about $0.021` for `trials` trials.
    fn describe(&self, trials: usize) -> String {
        let n = trials as f64;
        let cost = self.cost_usd.map_or_else(
            || "cost unknown (no price for the model)".into(),
            |c| format!("about ${:.3}", c * n),
        );
        format!("about {:.0} tokens, {cost}", self.tokens * n)
    }
}

/// Print the plan.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(args.detect > 0.0 && args.detect <= 1.0) {
        bail!(
            "--detect must be a lift in (0, 1], e.g. 0.1, found {}",
            args.detect
        );
    }
    let valid = |x: f64, low: f64| x > low && x < 1.0;
    if !(valid(args.power, 0.5) && valid(args.level, 0.0)) {
        bail!(
            "expected --power in (0.5, 1) and --level in (0, 1), found {} and {}",
            args.power,
            args.level
        );
    }
    let params = PlanParams {
        level: args.level,
        power: args.power,
        ..PlanParams::default()
    };
    let skill = skill_name(&args.skill)?;
    let dir = Path::new(&args.skill);
    let (variance, variance_run, per_trial) =
        from_history(&args.db, &skill, args.model.as_deref(), dir)?;
    // A skill named from the history (no folder to count) is planned at the design of the run
    // its variance came from.
    let from_history = match variance.source {
        VarianceSource::History {
            cases, attempts, ..
        } => Some((cases, attempts as u32)),
        VarianceSource::Default => None,
    };
    let design = dir.is_dir().then(|| suite_design(dir)).transpose()?;
    let cases = design.map(|d| d.cases).or(from_history.map(|(c, _)| c));
    let runs = args
        .runs
        .or(from_history.filter(|_| !dir.is_dir()).map(|(_, r)| r))
        .unwrap_or(1)
        .max(1);
    let plan = Plan {
        current: cases.map(|n| detectable(n, runs, &variance, &params)),
        needed: ATTEMPTS
            .iter()
            .map(|&r| {
                (
                    r,
                    cases_needed(args.detect, r, &variance, &params, MAX_CASES),
                )
            })
            .collect(),
        skill,
        cases,
        conditions: design.map_or(2, |d| d.conditions),
        runs,
        detect: args.detect,
        power: args.power,
        level: args.level,
        variance,
        variance_run,
        per_trial,
    };
    let text = if args.json {
        serde_json::to_string_pretty(&plan)? + "\n"
    } else {
        plan_text(&plan)
    };
    crate::out::stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn suite_design(dir: &Path) -> anyhow::Result<PlannedDesign> {
    let request = RunRequest::new(dir, HarnessSettings::new(HarnessKind::Command), "plan");
    planned_design(&request)
        .with_context(|| format!("counting the eval cases of {}", dir.display()))
}

/// The skill's variance from the history, or the default when there is none (or no history),
/// and what a trial is expected to spend on `model` (else the model of the run the variance
/// came from).
fn from_history(
    db: &DbArgs,
    skill: &str,
    model: Option<&str>,
    dir: &Path,
) -> anyhow::Result<(VarianceModel, Option<i64>, Option<Expected>)> {
    let Ok(path) = db.path() else {
        return Ok((VarianceModel::default(), None, None));
    };
    if !path.exists() {
        return Ok((VarianceModel::default(), None, None));
    }
    let store = Store::open_existing(&path)?;
    let (variance, run) = match store.outcome_variance(skill, model)? {
        Some((run, v)) => (v, Some(run)),
        None => (VarianceModel::default(), None),
    };
    let on = model
        .map(str::to_owned)
        .or(run.as_ref().map(|r| r.model.clone()));
    let per_trial = match on {
        Some(m) => Expected::of(&store, skill, &m, price_near(dir, &m).as_ref())?,
        None => None,
    };
    Ok((variance, run.map(|r| r.id.0), per_trial))
}

/// The price of `model` as a run of the skill in `dir` would count it: `[prices]` of the
/// skillwatch.toml governing it over skillwatch's table.
fn price_near(dir: &Path, model: &str) -> Option<Price> {
    let overrides = skillwatch_daemon::config::for_dir(dir)
        .map(|(_, c)| c.prices)
        .unwrap_or_default();
    skillwatch_daemon::runs::prices::price_of(model, &overrides)
}

fn plan_text(p: &Plan) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: planning for {:.0}% power at {:.0}%",
        p.skill,
        p.power * 100.0,
        p.level * 100.0
    );
    let _ = writeln!(
        o,
        "  variance: {}",
        variance_text(&p.variance, p.variance_run)
    );
    if let (Some(cases), Some(current)) = (p.cases, &p.current) {
        let _ = writeln!(
            o,
            "  this suite ({} x {}) detects lifts of: {}",
            count(cases, "case"),
            count(p.runs, "attempt"),
            current.describe(cases, p.level)
        );
    }
    let _ = writeln!(o, "\nto detect a lift of {:.2}:", p.detect);
    let _ = writeln!(
        o,
        "  {:>8}  {:>12}  {:>8}  expected spending",
        "attempts", "cases needed", "trials"
    );
    for (runs, needed) in &p.needed {
        let (cases, trials, spend) = match needed {
            Some(n) => {
                let trials = p.conditions * n * *runs as usize;
                let spend = p.per_trial.map_or_else(
                    || "unknown (no trials of this skill on the model in the history)".into(),
                    |e| e.describe(trials),
                );
                (n.to_string(), trials.to_string(), spend)
            }
            None => (format!("> {MAX_CASES}"), "—".into(), "—".into()),
        };
        let _ = writeln!(o, "  {runs:>8}  {cases:>12}  {trials:>8}  {spend}");
    }
    if matches!(
        p.variance.source,
        VarianceSource::History {
            separated: false,
            ..
        }
    ) {
        let _ = writeln!(
            o,
            "\nthe history has one attempt per case, so its attempt noise cannot be seen: the binomial variance at \
             its pass rates stands in for it. One run with --runs 2 measures it."
        );
    }
    o
}

/// `from run 12 (3 cases x 2 attempts): case-to-case sd 0.12, attempt sd 0.45`. The attempt
/// sd is never below the binomial one at the run's pass rates (`core::scoring::plan`).
pub fn variance_text(v: &VarianceModel, run: Option<i64>) -> String {
    let spread = format!(
        "case-to-case sd {:.2}, attempt sd {:.2}",
        v.between.sqrt(),
        v.within_at(0.0).sqrt()
    );
    match (&v.source, run) {
        (
            VarianceSource::History {
                cases, attempts, ..
            },
            Some(run),
        ) => {
            format!(
                "from run {run} of this skill ({} x {}): {spread}",
                count(*cases, "case"),
                count(*attempts, "attempt")
            )
        }
        _ => format!(
            "the stated default (pass/fail outcomes at 50%, no history for this skill): {spread}"
        ),
    }
}

/// The lines printed before a run: the design, the smallest lift it can detect, and what it
/// is expected to spend (from `store`, the history it records into, when it exists).
pub fn design_note(store: Option<&Store>, request: &RunRequest) -> anyhow::Result<String> {
    let design = planned_design(request)?;
    let cases = design.cases;
    let skill = skill_name(&request.skill_dir.display().to_string())?;
    let history = match store {
        Some(s) => s.outcome_variance(&skill, Some(&request.model))?,
        None => None,
    };
    let (variance, run) = match history {
        Some((run, v)) => (v, Some(run.id.0)),
        None => (VarianceModel::default(), None),
    };
    let params = PlanParams::default();
    let d = detectable(cases, request.runs, &variance, &params);
    let trials = design.conditions * cases * request.runs as usize;
    let per_trial = match store {
        Some(s) => Expected::of(s, &skill, &request.model, request.budget.price.as_ref())?,
        None => None,
    };
    let spend = per_trial.map_or_else(
        || "unknown until a run of this skill on this model is in the history".into(),
        |e| e.describe(trials),
    );
    Ok(format!(
        "design: {} x {}; smallest lift it can detect (80% power, 95%): {}\n  variance {}\n  expected spending of its {}: {spend}",
        count(cases, "case"),
        count(request.runs, "attempt"),
        d.describe(cases, params.level),
        variance_text(&variance, run),
        count(trials, "trial")
    ))
}
