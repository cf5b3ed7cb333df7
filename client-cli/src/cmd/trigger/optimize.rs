//! `skillwatch trigger SKILL --optimize`: look for a better description from the trigger
//! results, without overfitting and within the budget (docs/evals.md, "Optimising the
//! description").
//!
//! The queries split into train and validation ([`skillwatch_core::optimize::split`]). Each
//! round, a model (the `[judge]` of skillwatch.toml, else the agent's harness through
//! `AgentRun`, as a harness judge is run) sees the current description and its train failures
//! and proposes rewrites; a rewrite that breaks a rule is refused unmeasured
//! ([`skillwatch_core::optimize::admit`]); the others are measured on train by the trigger
//! trials, those that do better there on validation, and only validation decides
//! ([`skillwatch_core::optimize::beats`]). The loop stops when no rewrite beats the current
//! description on validation by the interval, after `--rounds`, or before a measurement the
//! budget cannot pay for (predicted from what a trial has cost so far).
//!
//! Every measurement is a trigger run of the run engine: through the daemon by default (a
//! job: queued, in `status`, cancellable, budgeted), in this process with `--no-daemon`.
//! Measurements are not entered in the skill's history as versions; the optimisation is, as
//! one record.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, anyhow, bail};
use serde::Serialize;
use serde_json::json;
use skillwatch_core::checks::CheckOptions;
use skillwatch_core::evalspec::TriggerQuery;
use skillwatch_core::optimize::{Split, admit, beats, passes_train, score, split};
use skillwatch_core::scoring::VerdictParams;
use skillwatch_core::scoring::trigger::{
    PooledRate, TriggerChange, TriggerSummary, compare_summaries,
};
use skillwatch_core::skill::{SKILL_FILE, SkillDocument};
use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::runner::judge_client;
use skillwatch_daemon::runs::{ProgressSink, RunEvent};
use skillwatch_daemon::store::{OptimizationRecord, RunStatus, SkillIdentity, Spent};
use skillwatch_daemon::trigger::{TriggerReport, TriggerRequest, preview};
use skillwatch_protocol::{Budget, JudgeEndpoint, JudgeMode, JudgeSettings};

use super::Args;

/// `--optimize`'s own options.
#[derive(clap::Args, Debug, Clone)]
pub struct OptimizeArgs {
    /// With --optimize: write the chosen description into SKILL.md (only its `description:`
    /// changes).
    #[arg(long, requires = "optimize")]
    write: bool,
    /// With --optimize: the seed of the train/validation split (stored with the record).
    #[arg(long, default_value_t = 1, requires = "optimize")]
    seed: u64,
    /// With --optimize: rounds of proposals at most.
    #[arg(long, default_value_t = 3, requires = "optimize")]
    rounds: usize,
    /// With --optimize: rewrites asked for per round.
    #[arg(long, default_value_t = 3, requires = "optimize")]
    candidates: usize,
    /// With --optimize: the model that proposes rewrites [default: [judge] model, else the
    /// agent's model].
    #[arg(long, value_name = "MODEL", requires = "optimize")]
    proposer_model: Option<String>,
}

/// Recall and false triggers of one measurement.
#[derive(Debug, Clone, Serialize)]
struct Rates {
    recall: PooledRate,
    false_trigger: PooledRate,
}

impl Rates {
    fn of(s: &TriggerSummary) -> Rates {
        Rates {
            recall: s.recall.clone(),
            false_trigger: s.false_trigger.clone(),
        }
    }
}

/// One proposed rewrite and what became of it.
#[derive(Debug, Clone, Serialize)]
struct Candidate {
    /// 1-based, across rounds.
    number: usize,
    round: usize,
    description: String,
    /// Why it was not measured (a rule it breaks).
    #[serde(skip_serializing_if = "Option::is_none")]
    refused: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    train: Option<Rates>,
    #[serde(skip_serializing_if = "Option::is_none")]
    validation: Option<Rates>,
    /// Against the current description on validation, paired by query.
    #[serde(skip_serializing_if = "Option::is_none")]
    change: Option<TriggerChange>,
    /// What became of it, in words.
    outcome: String,
}

/// A description with its measurements.
struct Measured {
    text: String,
    train: TriggerSummary,
    validation: TriggerSummary,
}

/// Why the loop ended.
#[derive(Debug, Clone, Serialize)]
struct Stopped {
    /// `budget`, `cancelled`, `no_better` or `rounds`.
    reason: &'static str,
    detail: String,
}

/// The loop's state.
struct Optimizer<'a> {
    a: &'a Args,
    base: TriggerRequest,
    split: Split,
    budget: Budget,
    spent: Spent,
    proposer: Proposer,
    candidates: Vec<Candidate>,
    stopped: Option<Stopped>,
}

/// `--optimize` (see the module docs).
pub(super) fn run(
    a: &Args,
    mut request: TriggerRequest,
    settings: &super::super::agent::Settings,
) -> anyhow::Result<ExitCode> {
    let (dir, original_text) = read_skill(&a.skill)?;
    let doc = SkillDocument::parse(original_text.clone());
    let original = doc
        .field_str("description")
        .map(|(d, _)| d.trim().to_owned())
        .ok_or_else(|| anyhow!("{}: expected a `description:`, found none", dir.display()))?;
    let planned = preview(&request)?;
    if let Some(code) = super::stop_unless_visible(a, &[&planned])? {
        return Ok(code);
    }
    let split = split(&planned.queries, a.optimizer.seed);
    for (side, qs) in [("train", &split.train), ("validation", &split.validation)] {
        if !qs.iter().any(|q| q.kind.should_trigger()) {
            bail!(
                "{}: expected should-trigger queries on both sides of the split, found none for \
                 {side} ({} queries in all); add queries",
                dir.display(),
                planned.queries.len()
            );
        }
    }
    let budget = std::mem::take(&mut request.budget);
    request.record = false;
    let proposer = Proposer::new(a, &request, settings)?;
    if !a.json {
        errln!(
            "split (seed {}): {} to train on, {} to decide on",
            split.seed,
            super::count(split.train.len(), "query"),
            super::count(split.validation.len(), "query")
        );
    }
    let mut opt = Optimizer {
        a,
        base: request,
        split,
        budget,
        spent: Spent::default(),
        proposer,
        candidates: Vec::new(),
        stopped: None,
    };
    let start = opt.measure_both(&original, "the current description")?;
    let best = match &start {
        Some(start) => opt.rounds(&dir, &original_text, start)?,
        None => None,
    };
    finish(&mut opt, &dir, &original_text, start, best)
}

impl Optimizer<'_> {
    /// Rounds of proposals from `start`: the best description found, if any beat it.
    fn rounds(
        &mut self,
        dir: &Path,
        text: &str,
        start: &Measured,
    ) -> anyhow::Result<Option<Measured>> {
        let mut best: Option<Measured> = None;
        for round in 1..=self.a.optimizer.rounds {
            let current = best.as_ref().unwrap_or(start);
            let proposals = self
                .proposer
                .propose(current, self.a.optimizer.candidates)?;
            match self.round(dir, text, round, current, proposals)? {
                Some(winner) => best = Some(winner),
                None => return Ok(best),
            }
            if self.stopped.is_some() {
                return Ok(best);
            }
        }
        self.stopped = Some(Stopped {
            reason: "rounds",
            detail: format!(
                "{} done (--rounds)",
                super::count(self.a.optimizer.rounds, "round")
            ),
        });
        Ok(best)
    }

    /// One round: gate, screen on train, decide on validation. `None`: no winner (the
    /// reason is in `stopped`).
    fn round(
        &mut self,
        dir: &Path,
        text: &str,
        round: usize,
        current: &Measured,
        proposals: Vec<String>,
    ) -> anyhow::Result<Option<Measured>> {
        let mut winners: Vec<Measured> = Vec::new();
        for description in proposals {
            let number = self.candidates.len() + 1;
            let mut c = Candidate {
                number,
                round,
                description: description.trim().to_owned(),
                refused: None,
                train: None,
                validation: None,
                change: None,
                outcome: String::new(),
            };
            if let Err(r) = admit(dir, text, &description, &[], &CheckOptions::default()) {
                c.outcome = format!("refused unmeasured: {}", r.reason);
                c.refused = Some(r.reason);
                self.say(&c);
                self.candidates.push(c);
                continue;
            }
            let label = format!("candidate {number}");
            let measured = self.screen(&mut c, current, &label)?;
            self.say(&c);
            self.candidates.push(c);
            if let Some(m) = measured {
                winners.push(m);
            }
            if self.stopped.is_some() {
                break;
            }
        }
        winners.sort_by(|x, y| {
            score(&y.validation)
                .total_cmp(&score(&x.validation))
                .then(x.text.len().cmp(&y.text.len()))
        });
        let winner = winners.into_iter().next();
        match &winner {
            Some(w) => {
                for c in self.candidates.iter_mut().filter(|c| c.round == round) {
                    if c.description == w.text {
                        c.outcome = "chosen: beats the current description on validation".into();
                    }
                }
            }
            None if self.stopped.is_none() => {
                self.stopped = Some(Stopped {
                    reason: "no_better",
                    detail: format!(
                        "no candidate of round {round} beat the current description on \
                         validation by the interval"
                    ),
                });
            }
            None => {}
        }
        Ok(winner)
    }

    /// Measure a candidate on train, and on validation when it does better there; the
    /// measurement when it beats `current` on validation.
    fn screen(
        &mut self,
        c: &mut Candidate,
        current: &Measured,
        label: &str,
    ) -> anyhow::Result<Option<Measured>> {
        let train_side = self.split.train.clone();
        let Some(train) = self.measure(
            Some(&c.description),
            &train_side,
            &format!("{label} on train"),
        )?
        else {
            c.outcome = "not measured: budget".into();
            return Ok(None);
        };
        c.train = Some(Rates::of(&train));
        if !passes_train(&current.train, &train) {
            c.outcome = "no better than the current description on train".into();
            return Ok(None);
        }
        let val_side = self.split.validation.clone();
        let Some(validation) = self.measure(
            Some(&c.description),
            &val_side,
            &format!("{label} on validation"),
        )?
        else {
            c.outcome = "not decided: budget".into();
            return Ok(None);
        };
        c.validation = Some(Rates::of(&validation));
        let change = compare_summaries(&current.validation, &validation, &VerdictParams::default());
        let verdict = beats(&change);
        c.change = Some(change);
        match verdict {
            Ok(()) => {
                c.outcome = "beats the current description on validation".into();
                Ok(Some(Measured {
                    text: c.description.clone(),
                    train,
                    validation,
                }))
            }
            Err(why) => {
                c.outcome = format!("rejected on validation: {why}");
                Ok(None)
            }
        }
    }

    /// The original description on both sides.
    fn measure_both(&mut self, text: &str, label: &str) -> anyhow::Result<Option<Measured>> {
        let (train_side, val_side) = (self.split.train.clone(), self.split.validation.clone());
        let Some(train) = self.measure(None, &train_side, &format!("{label} on train"))? else {
            return Ok(None);
        };
        let Some(validation) = self.measure(None, &val_side, &format!("{label} on validation"))?
        else {
            return Ok(None);
        };
        Ok(Some(Measured {
            text: text.to_owned(),
            train,
            validation,
        }))
    }

    /// One trigger run of `queries` with `description` (the skill's own when `None`): not
    /// started when the budget left cannot pay for it as predicted from the trials so far;
    /// `None` then, or when the budget stopped it part way (the reason is in `stopped`).
    fn measure(
        &mut self,
        description: Option<&str>,
        queries: &[TriggerQuery],
        label: &str,
    ) -> anyhow::Result<Option<TriggerSummary>> {
        let trials = (queries.len() * self.base.runs.max(1) as usize) as u64;
        if let Some(detail) = self.unaffordable(trials, label) {
            self.stopped = Some(Stopped {
                reason: "budget",
                detail,
            });
            return Ok(None);
        }
        let mut request = self.base.clone();
        request.description = description.map(str::to_owned);
        request.only_queries = queries.iter().map(|q| q.query.clone()).collect();
        request.budget = self.left();
        if !self.a.json {
            errln!("measuring {label}: {}", super::count(trials, "trial"));
        }
        let report = measure_run(self.a, request)?;
        add(&mut self.spent, &report.spent);
        if report.status != RunStatus::Completed {
            self.stopped = Some(Stopped {
                reason: "cancelled",
                detail: format!("{label} ended {}", report.status),
            });
            return Ok(None);
        }
        if let Some(stop) = &report.stop {
            self.stopped = Some(Stopped {
                reason: "budget",
                detail: format!("{label} stopped part way ({})", stop.detail),
            });
            return Ok(None);
        }
        Ok(Some(report.summary))
    }

    /// What is left of the budget.
    fn left(&self) -> Budget {
        let b = &self.budget;
        Budget {
            max_trials: b
                .max_trials
                .map(|m| m.saturating_sub(self.spent.trials as u32)),
            max_tokens: b.max_tokens.map(|m| m.saturating_sub(self.spent.tokens())),
            max_cost_usd: b.max_cost_usd.map(|m| (m - self.spent.cost_usd).max(0.0)),
            price: b.price,
        }
    }

    /// Why a measurement of `trials` trials would cross the budget, predicted from what a
    /// trial cost so far (nothing is predicted before the first measurement: the engine's own
    /// gate stops that one part way if it must).
    fn unaffordable(&self, trials: u64, label: &str) -> Option<String> {
        let done = self.spent.trials;
        if done == 0 {
            return None;
        }
        let left = self.left();
        if left.max_trials.is_some_and(|m| u64::from(m) < trials) {
            return Some(format!(
                "{label} needs {trials} trials, {} left",
                left.max_trials.unwrap_or(0)
            ));
        }
        let tokens = self.spent.tokens().div_ceil(done) * trials;
        if let Some(m) = left.max_tokens.filter(|m| *m < tokens) {
            return Some(format!(
                "{label} needs about {tokens} tokens ({trials} trials), {m} left"
            ));
        }
        let cost = self.spent.cost_usd / done as f64 * trials as f64;
        if let Some(m) = left.max_cost_usd.filter(|m| *m < cost) {
            return Some(format!(
                "{label} needs about ${cost:.4} ({trials} trials), ${m:.4} left"
            ));
        }
        None
    }

    fn say(&self, c: &Candidate) {
        if !self.a.json {
            errln!("candidate {} (round {}): {}", c.number, c.round, c.outcome);
        }
    }
}

fn add(to: &mut Spent, more: &Spent) {
    to.trials += more.trials;
    to.tokens_in += more.tokens_in;
    to.tokens_out += more.tokens_out;
    to.cost_usd += more.cost_usd;
    to.unpriced += more.unpriced;
}

/// One trigger run by the engine (through the daemon unless `--no-daemon`), quietly: the
/// optimiser says what it measures, not each trial.
fn measure_run(a: &Args, request: TriggerRequest) -> anyhow::Result<TriggerReport> {
    let visibility = preview(&request)?.visibility;
    let sink: ProgressSink = Arc::new(|_: &RunEvent| {});
    super::on_engine(a, request, visibility, sink, true, Box::new(|_, _| Ok(())))
}

/// The skill folder (canonical) and its SKILL.md text.
fn read_skill(skill: &Path) -> anyhow::Result<(PathBuf, String)> {
    let dir = skill
        .canonicalize()
        .with_context(|| format!("{}: expected a skill folder", skill.display()))?;
    let path = dir.join(SKILL_FILE);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    Ok((dir, text))
}

/// The `name:` of a SKILL.md text.
fn skill_name(text: &str) -> Option<String> {
    SkillDocument::parse(text.to_owned())
        .field_str("name")
        .map(|(n, _)| n.trim().to_owned())
}

/// The model that proposes rewrites: the `[judge]` of skillwatch.toml when there is one,
/// else the agent's own harness run as a judge (through `AgentRun`).
struct Proposer {
    client: Arc<dyn skillwatch_core::grading::judge::JudgeClient>,
    runtime: tokio::runtime::Runtime,
    skill: String,
    calls: usize,
    _temp: tempfile::TempDir,
}

const PROPOSER_SYSTEM: &str = "You improve the description of an agent skill: the one text \
an agent sees before it decides whether to load the skill. Rewrite it so the agent picks the \
skill for the requests it should and leaves it alone for the others. Describe what the skill \
does and when to use it in general terms: do not quote or list the example requests, they \
stand for many others. Keep it under 1000 characters, plain text, no instructions to the \
agent. Reply with JSON only: {\"candidates\": [\"...\", ...]}.";

impl Proposer {
    fn new(
        a: &Args,
        request: &TriggerRequest,
        settings: &super::super::agent::Settings,
    ) -> anyhow::Result<Proposer> {
        let model = a.optimizer.proposer_model.as_deref();
        let judge = settings
            .run
            .judge_settings(model)
            .map_err(|e| anyhow!("[judge]: {e}"))?;
        let judge = judge.unwrap_or_else(|| JudgeSettings {
            model: model.unwrap_or(&request.model).to_owned(),
            mode: JudgeMode::Independent,
            endpoint: JudgeEndpoint::Harness {
                settings: request.harness.clone(),
            },
        });
        let temp = tempfile::Builder::new()
            .prefix("skillwatch-proposer-")
            .tempdir()?;
        let client = judge_client(&judge, &HostEnv::current(), temp.path().to_path_buf())?;
        let skill = read_skill(&a.skill)
            .ok()
            .and_then(|(_, text)| skill_name(&text))
            .unwrap_or_default();
        Ok(Proposer {
            client,
            runtime: tokio::runtime::Runtime::new().context("starting the async runtime")?,
            skill,
            calls: 0,
            _temp: temp,
        })
    }

    /// Up to `n` rewrites of `current` from its train failures.
    fn propose(&mut self, current: &Measured, n: usize) -> anyhow::Result<Vec<String>> {
        let failures: Vec<String> = current
            .train
            .queries
            .iter()
            .filter(|q| !q.as_expected)
            .map(|q| {
                let want = if q.query.kind.should_trigger() {
                    "should use the skill, did not"
                } else {
                    "should not use the skill, did"
                };
                format!("- {} ({want})", q.query.query.replace('\n', " "))
            })
            .collect();
        let user = format!(
            "Skill `{}`.\nCurrent description: {}\n\nRequests it got wrong:\n{}\n\nPropose {n} \
             rewritten descriptions.",
            self.skill,
            current.text,
            if failures.is_empty() {
                "(none)".to_owned()
            } else {
                failures.join("\n")
            }
        );
        self.calls += 1;
        let reply = self
            .runtime
            .block_on(self.client.ask(PROPOSER_SYSTEM, &user))
            .map_err(|e| anyhow!("the proposer ({}): {e}", self.client.model()))?;
        let mut out = parse_candidates(&reply);
        out.truncate(n.max(1));
        if out.is_empty() {
            bail!(
                "the proposer ({}): expected JSON {{\"candidates\": [...]}}, found: {}",
                self.client.model(),
                reply.chars().take(200).collect::<String>()
            );
        }
        Ok(out)
    }
}

/// The candidates of a proposer's reply: the JSON object in it (code fences and words around
/// it allowed).
fn parse_candidates(reply: &str) -> Vec<String> {
    let (Some(start), Some(end)) = (reply.find('{'), reply.rfind('}')) else {
        return Vec::new();
    };
    let Some(json) = reply.get(start..=end) else {
        return Vec::new();
    };
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| {
            v.get("candidates")?.as_array().map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .filter(|s| !s.trim().is_empty())
                    .collect()
            })
        })
        .unwrap_or_default()
}

/// Report, record, and write when asked.
fn finish(
    opt: &mut Optimizer<'_>,
    dir: &Path,
    original_text: &str,
    start: Option<Measured>,
    best: Option<Measured>,
) -> anyhow::Result<ExitCode> {
    let a = opt.a;
    let stopped = opt.stopped.clone().unwrap_or(Stopped {
        reason: "no_better",
        detail: "no candidate".into(),
    });
    let original = SkillDocument::parse(original_text.to_owned())
        .field_str("description")
        .map(|(d, _)| d.trim().to_owned())
        .unwrap_or_default();
    let new_text = best.as_ref().and_then(|b| {
        SkillDocument::parse(original_text.to_owned()).with_field_str("description", &b.text)
    });
    let diff = new_text.as_deref().map(|after| {
        similar::TextDiff::from_lines(original_text, after)
            .unified_diff()
            .header("a/SKILL.md", "b/SKILL.md")
            .to_string()
    });
    let change = match (&start, &best) {
        (Some(s), Some(b)) => Some(compare_summaries(
            &s.validation,
            &b.validation,
            &VerdictParams::default(),
        )),
        _ => None,
    };
    let skill_name = skill_name(original_text).unwrap_or_default();
    let split_json = json!({
        "seed": opt.split.seed,
        "train": opt.split.train,
        "validation": opt.split.validation,
    });
    let record = OptimizationRecord {
        skill: SkillIdentity {
            name: skill_name.clone(),
            path: Some(dir.display().to_string()),
            content_hash: skillwatch_daemon::runs::resolve::hash_dir(dir)?,
        },
        harness: opt.base.harness.kind.as_str().to_owned(),
        model: opt.base.model.clone(),
        proposer_model: opt.proposer.client.model().to_owned(),
        seed: opt.split.seed,
        split: split_json.clone(),
        candidates: serde_json::to_value(&opt.candidates)?,
        original: original.clone(),
        chosen: best.as_ref().map(|b| b.text.clone()),
        stopped: format!("{}: {}", stopped.reason, stopped.detail),
        tokens: opt.spent.tokens(),
        cost_usd: opt.spent.cost_usd,
    };
    let record_id = a.db.open_or_create()?.record_optimization(&record)?;
    let written = match (&new_text, a.optimizer.write) {
        (Some(after), true) => {
            write_back(dir, original_text, after)?;
            true
        }
        _ => false,
    };
    let out = json!({
        "skill": skill_name,
        "split": split_json,
        "original": original,
        "chosen": record.chosen,
        "before": start.as_ref().map(|s| Rates::of(&s.validation)),
        "after": best.as_ref().map(|b| Rates::of(&b.validation)),
        "change": change,
        "candidates": opt.candidates,
        "stopped": stopped,
        "partial": matches!(stopped.reason, "budget" | "cancelled"),
        "spent": {"trials": opt.spent.trials, "tokens": opt.spent.tokens(),
                  "cost_usd": opt.spent.cost_usd, "unpriced": opt.spent.unpriced,
                  "proposer_calls": opt.proposer.calls},
        "diff": diff,
        "written": written,
        "record": record_id,
    });
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&out)?)?;
    } else {
        out!(
            "{}",
            text_report(
                opt,
                &start,
                &best,
                change.as_ref(),
                diff.as_deref(),
                &stopped,
                written
            )
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Write `after` over SKILL.md, unless it changed since the optimisation read it.
fn write_back(dir: &Path, before: &str, after: &str) -> anyhow::Result<()> {
    let path = dir.join(SKILL_FILE);
    let now = std::fs::read_to_string(&path)?;
    if now != before {
        bail!(
            "{}: changed while the optimisation ran; not written (the diff is above)",
            path.display()
        );
    }
    std::fs::write(&path, after).with_context(|| format!("writing {}", path.display()))
}

fn text_report(
    opt: &Optimizer<'_>,
    start: &Option<Measured>,
    best: &Option<Measured>,
    change: Option<&TriggerChange>,
    diff: Option<&str>,
    stopped: &Stopped,
    written: bool,
) -> String {
    let mut out = String::new();
    if let Some(s) = start {
        out.push_str(&format!(
            "\nValidation, the current description: recall {}, false triggers {}\n",
            super::pooled(&s.validation.recall),
            super::pooled(&s.validation.false_trigger)
        ));
    }
    match (best, diff) {
        (Some(b), Some(diff)) => {
            out.push_str(&format!(
                "Validation, the chosen description:  recall {}, false triggers {}\n\n{diff}\n",
                super::pooled(&b.validation.recall),
                super::pooled(&b.validation.false_trigger)
            ));
            if let Some(c) = change {
                out.push_str(&super::change_text(
                    "The chosen description against the current one on validation, paired by query",
                    c,
                ));
            }
        }
        _ => out.push_str("No candidate beat the current description on validation.\n"),
    }
    if matches!(stopped.reason, "budget" | "cancelled") {
        out.push_str(&format!(
            "Partial: stopped: {} ({}); the result is the best found before it\n",
            stopped.reason, stopped.detail
        ));
    } else {
        out.push_str(&format!("Stopped: {}\n", stopped.detail));
    }
    out.push_str(&format!(
        "Spent: {}, {} tokens{}, {}\n",
        super::count(opt.spent.trials, "trial"),
        opt.spent.tokens(),
        if opt.spent.unpriced > 0 {
            " (cost unknown: no price for the model)".to_owned()
        } else {
            format!(", ${:.4}", opt.spent.cost_usd)
        },
        super::count(opt.proposer.calls, "proposer call")
    ));
    if best.is_some() {
        out.push_str(if written {
            "Written to SKILL.md.\n"
        } else {
            "Not written: --write applies the diff.\n"
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_read_from_a_fenced_reply() {
        let reply = "Here:\n```json\n{\"candidates\": [\"A\", \"\", \"B\"]}\n```";
        assert_eq!(parse_candidates(reply), vec!["A", "B"]);
        assert!(parse_candidates("no json").is_empty());
        assert!(parse_candidates("{\"other\": 1}").is_empty());
    }
}
