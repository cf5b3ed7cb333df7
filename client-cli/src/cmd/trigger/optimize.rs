//! `skillwatch trigger SKILL --optimize`: look for a better description from the trigger
//! results, without overfitting and within the budget (docs/evals.md, "Optimising the
//! description").
//!
//! A thin client of the description search, one job of the run engine
//! (`skillwatch_daemon::optimize`): this command builds the typed request (the trigger run
//! every measurement starts from, the split's seed, the rounds, and the proposer: the `[judge]`
//! of skillwatch.toml, else the agent's own harness), queues it on the daemon (or runs the same
//! job code here with `--no-daemon`), shows its progress, and prints the report the job stored
//! in the history; `--write` applies the chosen description. The daemon finishes the search
//! and stores its record even when this client goes away; Ctrl-C cancels the job, which stops
//! after the trials in flight and keeps the partial record.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, anyhow, bail};
use skillwatch_core::optimize::{Rewrite, rewritten};
use skillwatch_core::skill::{SKILL_FILE, SkillDocument};
use skillwatch_daemon::optimize::OptimizeSink;
use skillwatch_daemon::trigger::{TriggerRequest, preview};
use skillwatch_protocol::{
    JudgeEndpoint, JudgeMode, JudgeSettings, OptimizeProgress, OptimizeReport, OptimizeRequest,
    Share,
};

use super::Args;

/// `--optimize`'s own options.
#[derive(clap::Args, Debug, Clone)]
pub struct OptimizeArgs {
    /// With --optimize: write the chosen description into SKILL.md (only its `description:`
    /// changes, and its `when_to_use:` where the harness reads it and the search rewrote it).
    #[arg(long, requires = "optimize")]
    write: bool,
    /// With --optimize: the seed of the train/validation split (stored with the record).
    #[arg(long, default_value_t = 1, requires = "optimize")]
    seed: u64,
    /// With --optimize: rounds of proposals at most.
    #[arg(long, default_value_t = skillwatch_protocol::DEFAULT_ROUNDS, requires = "optimize")]
    rounds: usize,
    /// With --optimize: rewrites asked for per round.
    #[arg(long, default_value_t = skillwatch_protocol::DEFAULT_CANDIDATES, requires = "optimize")]
    candidates: usize,
    /// With --optimize: the model that proposes rewrites [default: [judge] model, else the
    /// agent's model].
    #[arg(long, value_name = "MODEL", requires = "optimize")]
    proposer_model: Option<String>,
}

/// `--optimize` (see the module docs).
pub(super) fn run(
    a: &Args,
    request: TriggerRequest,
    settings: &super::super::agent::Settings,
) -> anyhow::Result<ExitCode> {
    let (dir, original_text) = read_skill(&a.skill)?;
    let planned = preview(&request)?;
    if let Some(code) = super::stop_unless_visible(a, &[&planned])? {
        return Ok(code);
    }
    let optimize = optimize_request(a, request, settings)?;
    let ran = crate::cmd::engine::optimize(optimize, &a.link, &a.db, sink(a.json), a.json)?;
    let mut report = ran.report;
    if let (Some(chosen), true) = (&report.chosen, a.optimizer.write) {
        let rewrite = Rewrite {
            description: chosen,
            when_to_use: report.chosen_when_to_use.as_deref(),
        };
        write_back(&dir, &original_text, &rewrite)?;
        report.written = true;
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        out!("{}", text_report(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The job's request: the trigger run every measurement starts from, and the proposer (the
/// `[judge]` of skillwatch.toml, else the agent's harness run as a judge) with its price.
fn optimize_request(
    a: &Args,
    trigger: TriggerRequest,
    settings: &super::super::agent::Settings,
) -> anyhow::Result<OptimizeRequest> {
    let model = a.optimizer.proposer_model.as_deref();
    let judge = settings
        .run
        .judge_settings(model)
        .map_err(|e| anyhow!("[judge]: {e}"))?;
    let proposer = judge.unwrap_or_else(|| JudgeSettings {
        model: model.unwrap_or(&trigger.model).to_owned(),
        mode: JudgeMode::Independent,
        endpoint: JudgeEndpoint::Harness {
            settings: trigger.harness.clone(),
        },
    });
    let proposer_price = settings.daemon.run_budget(&proposer.model).price;
    Ok(OptimizeRequest {
        trigger,
        seed: a.optimizer.seed,
        rounds: a.optimizer.rounds,
        candidates: a.optimizer.candidates,
        proposer,
        proposer_price,
    })
}

/// Each step of the search on stderr (nothing with `--json`).
fn sink(json: bool) -> OptimizeSink {
    Arc::new(move |p: &OptimizeProgress| {
        // a finished trial is counted, not told: the steps say what is measured
        if !json && p.measuring.is_none() {
            errln!("{}", p.step);
        }
    })
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

/// Write the chosen rewrite (description, and `when_to_use` when it changed) into SKILL.md,
/// unless the file changed since the search read it.
fn write_back(dir: &Path, before: &str, chosen: &Rewrite<'_>) -> anyhow::Result<()> {
    let path = dir.join(SKILL_FILE);
    let now = std::fs::read_to_string(&path)?;
    if now != before {
        bail!(
            "{}: changed while the optimisation ran; not written (the diff is above)",
            path.display()
        );
    }
    let after = rewritten(&SkillDocument::parse(before.to_owned()), chosen)
        .ok_or_else(|| anyhow!("{}: expected a `description:`, found none", path.display()))?;
    std::fs::write(&path, after).with_context(|| format!("writing {}", path.display()))
}

fn text_report(r: &OptimizeReport) -> String {
    let mut out = String::new();
    if let Some(s) = &r.before {
        out.push_str(&format!(
            "\nValidation, the current description: recall {}, false triggers {}\n",
            super::pooled(&s.recall),
            super::pooled(&s.false_trigger)
        ));
    }
    match (&r.after, &r.diff) {
        (Some(b), Some(diff)) => {
            out.push_str(&format!(
                "Validation, the chosen description:  recall {}, false triggers {}\n\n{diff}\n",
                super::pooled(&b.recall),
                super::pooled(&b.false_trigger)
            ));
            if let Some(c) = &r.change {
                out.push_str(&super::change_text(
                    "The chosen description against the current one on validation, paired by query",
                    c,
                ));
            }
        }
        _ => out.push_str("No candidate beat the current description on validation.\n"),
    }
    if r.partial {
        let reason = serde_json::to_value(r.stopped.reason).unwrap_or_default();
        out.push_str(&format!(
            "Partial: stopped: {} ({}); the result is the best found before it\n",
            reason.as_str().unwrap_or_default(),
            r.stopped.detail
        ));
    } else {
        out.push_str(&format!("Stopped: {}\n", r.stopped.detail));
    }
    out.push_str(&spent_text(r));
    if r.chosen.is_some() {
        out.push_str(if r.written {
            "Written to SKILL.md.\n"
        } else {
            "Not written: --write applies the diff.\n"
        });
    }
    out
}

/// "Spent: ..." in all, then the trials' and the proposer's shares.
fn spent_text(r: &OptimizeReport) -> String {
    let cost = |unpriced: u64, usd: f64| {
        if unpriced > 0 {
            " (cost unknown: no price for the model)".to_owned()
        } else {
            format!(", ${usd:.4}")
        }
    };
    let side = |s: &Share, unit: &str| {
        format!(
            "{}: {} tokens{}",
            super::count(s.count, unit),
            s.tokens,
            cost(s.unpriced, s.cost_usd)
        )
    };
    let s = &r.spent;
    format!(
        "Spent: {} tokens{} ({}; {})\n",
        s.tokens,
        cost(s.unpriced, s.cost_usd),
        side(&s.measurements, "trial"),
        side(&s.proposer, "proposer call")
    )
}
