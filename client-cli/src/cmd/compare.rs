//! `skillwatch compare SKILL --model A --model B`: does the skill still help on model B?
//! Per-case lift differences between the newest completed run on each model (or two given
//! runs, e.g. two skill versions: `--run 12 --run 15`), with an interval and a verdict; exits 1
//! when the skill regressed, so CI can gate on it. Across models, S and the security status
//! of the newest completed probe run on each are compared too: S falling or the status
//! getting worse is a security regression, reported and gated alike.
//!
//! `skillwatch compare SKILL_DIR --base REF [-- RUN FLAGS]`: the pull request gate. Runs the
//! skill as it was at REF and as it is in the working tree, on the same model and cases, and
//! compares the two runs (`compare_base`); exits 1 when the head's lift is significantly
//! lower.
//!
//! `skillwatch compare SKILL --triggers --model A --model B`: the trigger rates alone, in
//! detail. The plain comparison reports the trigger change too (a line, gated alike) when both
//! models have a completed trigger run.
//!
//! `skillwatch compare --all --model A --model B` (or `--since-model A [--model B]`): the same
//! comparison of every skill with a completed run of any kind on A (against B, or each
//! skill's newest other model), one line per skill with its security and trigger lines;
//! exits 1 when any of them regressed. Each skill's comparison is the one `compare SKILL`
//! makes (`queries::compare_models`).

use std::fmt::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use skillwatch_core::plural::count;
use skillwatch_core::scoring::{
    CompareParams, CompareTarget, Metric, ScoringProfile, Verdict, VerdictInterval,
};
use skillwatch_daemon::server::queries;
use skillwatch_daemon::server::queries::CompareAllRow;
use skillwatch_daemon::store::time::format_rfc3339;
use skillwatch_daemon::store::{RunComparison, SecurityComparison, TriggerComparison};
use skillwatch_protocol::{CompareAllRequest, CompareRequest, CompareWhat};

use super::history_db::{DbArgs, ProfileArg, interval, short_hash, signed, skill_name};
use super::link::{LinkArgs, ctx, daemon_for_reading};
use crate::report::github::{self, Level, Place};

/// The interval the verdict rests on.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum IntervalChoice {
    /// Student's t interval of the mean per-case difference.
    T,
    /// Expanded percentile bootstrap (seeded, 10,000 resamples); offered from 10 shared cases,
    /// below which it undercovers and the t interval is used (the verdict says so).
    Bootstrap,
}

/// `--format` of `compare`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CompareFormat {
    Text,
    Json,
    Github,
}

/// Arguments of `skillwatch compare`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The skill: its name, or its folder (the SKILL.md `name` is used).
    #[arg(required_unless_present = "all")]
    skill: Option<String>,
    /// Compare the skill folder as it was at this git reference with the working tree: both
    /// are run (`skillwatch run`, settings from skillwatch.toml, `--harness`, one `--model`,
    /// and any run flags after `--`) on the working tree's eval cases, then compared.
    #[arg(long, value_name = "REF", conflicts_with_all = ["all", "runs"])]
    base: Option<String>,
    /// With `--base`: flags for both `skillwatch run`s, after `--` (e.g. `-- --runs 3`).
    #[arg(last = true, value_name = "RUN FLAGS", requires = "base")]
    run_args: Vec<String>,
    /// Every skill with a completed run (paired, probe or trigger) on the reference model:
    /// `--all --model OLD --model NEW`, or `--all --since-model OLD [--model NEW]`.
    #[arg(long, conflicts_with_all = ["skill", "runs"])]
    all: bool,
    /// With `--all`: the reference model (then `--model` is only the candidate).
    #[arg(long, value_name = "MODEL", requires = "all")]
    since_model: Option<String>,
    /// The reference model, then the candidate model: `--model OLD --model NEW` (with
    /// `--all --since-model OLD`: only the candidate, default each skill's newest other
    /// model).
    #[arg(
        long = "model",
        value_name = "MODEL",
        num_args = 1,
        required_unless_present_any = ["runs", "all", "base"]
    )]
    models: Vec<String>,
    /// Instead of models: two run ids (from `skillwatch history`), reference first, e.g. two
    /// skill versions on one model.
    #[arg(
        long = "run",
        value_name = "RUN",
        num_args = 1,
        conflicts_with = "models"
    )]
    runs: Vec<i64>,
    /// Compare the newest completed trigger runs (`skillwatch trigger`) on the two models
    /// instead: recall and false triggers paired by query; a fall in recall or a rise in false
    /// triggers is a regression (exit 1).
    #[arg(long, conflicts_with_all = ["runs", "all", "base", "metric"])]
    triggers: bool,
    /// Only runs on this harness.
    #[arg(long)]
    harness: Option<String>,
    /// Smallest drop in mean per-case lift that counts as a regression (metric scale [0, 1]).
    #[arg(long, default_value_t = 0.05)]
    min_effect: f64,
    /// Confidence level of the interval.
    #[arg(long, default_value_t = 0.95)]
    level: f64,
    /// Which interval decides the verdict.
    #[arg(long, value_enum, default_value_t = IntervalChoice::T)]
    interval: IntervalChoice,
    /// Which lift is compared: the outcome lift, or ACES's six-metric overall.
    #[arg(long, value_enum, default_value_t = ProfileArg::Outcome)]
    scoring_profile: ProfileArg,
    /// Compare one metric's per-case delta instead (e.g. goal_accuracy); overrides
    /// --scoring-profile.
    #[arg(long)]
    metric: Option<String>,
    /// Print JSON instead of a table; shorthand for `--format json`.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// How the result is printed: `text`, `json`, or `github` (an Actions annotation per
    /// comparison on stdout, the table on stderr, a markdown summary appended to
    /// `$GITHUB_STEP_SUMMARY`).
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    format: CompareFormat,
    #[command(flatten)]
    link: LinkArgs,
    #[command(flatten)]
    db: DbArgs,
}

/// Compare and print; exit 1 on a regression.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(args.level > 0.0 && args.level < 1.0) {
        bail!(
            "--level must be between 0 and 1 (e.g. 0.95), found {}",
            args.level
        );
    }
    if args.all {
        return compare_all(&args);
    }
    let skill = skill_name(args.skill.as_deref().unwrap_or_default())?;
    let what = if let Some(reference) = &args.base {
        let folder = std::path::Path::new(args.skill.as_deref().unwrap_or_default());
        let model = args.models.as_slice();
        if model.len() > 1 {
            bail!(
                "with --base, expected at most one --model (both runs use it), found {}",
                model.len()
            );
        }
        let runs = super::compare_base::run_both(&super::compare_base::Plan {
            folder,
            reference,
            model: model.first().map(String::as_str),
            harness: args.harness.as_deref(),
            db: args.db.db.as_deref(),
            run_args: &args.run_args,
            no_daemon: args.link.no_daemon,
        })?;
        match runs {
            Ok((base, head)) => CompareWhat::Runs(base, head),
            Err(note) => {
                errln!("{note}");
                if output(&args) == CompareFormat::Github {
                    let place = Place {
                        file: Some(github::relative(&folder.join("SKILL.md"))),
                        range: None,
                    };
                    outln!(
                        "{}",
                        github::annotation(Level::Notice, &place, "skillwatch compare", &note)
                    )?;
                }
                return Ok(ExitCode::SUCCESS);
            }
        }
    } else if args.runs.is_empty() {
        let [reference, candidate] = args.models.as_slice() else {
            bail!(
                "expected exactly two models (--model REFERENCE --model CANDIDATE), found {}",
                args.models.len()
            );
        };
        if args.triggers {
            return compare_triggers(&args, &skill, reference, candidate);
        }
        CompareWhat::Models(reference.clone(), candidate.clone())
    } else {
        let [reference, candidate] = args.runs.as_slice() else {
            bail!(
                "expected exactly two runs (--run REFERENCE --run CANDIDATE), found {}",
                args.runs.len()
            );
        };
        CompareWhat::Runs(*reference, *candidate)
    };
    let request = CompareRequest {
        skill: skill.clone(),
        what,
        harness: args.harness.clone(),
        params: params(&args),
    };
    let result: RunComparison = match daemon_for_reading(&args.link, &args.db)? {
        Some(d) => serde_json::from_value(d.call(d.rpc.compare(ctx(), request))??)?,
        None => queries::compare(&args.db.open_existing()?, &request)?,
    };
    match output(&args) {
        CompareFormat::Json => {
            crate::out::stdout(&(serde_json::to_string_pretty(&result)? + "\n"))?
        }
        CompareFormat::Text => crate::out::stdout(&table(&skill, &result))?,
        CompareFormat::Github => {
            err!("{}", table(&skill, &result));
            github_one(&args, &skill, &result)?;
        }
    }
    let security_regressed = result.security.as_ref().is_some_and(|s| s.regresses());
    let triggers_regressed = result.triggers.as_ref().is_some_and(|t| t.regresses());
    Ok(
        if result.comparison.verdict.fails() || security_regressed || triggers_regressed {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// `compare SKILL --triggers --model A --model B`.
fn compare_triggers(
    args: &Args,
    skill: &str,
    reference: &str,
    candidate: &str,
) -> anyhow::Result<ExitCode> {
    let request = CompareRequest {
        skill: skill.to_owned(),
        what: CompareWhat::TriggerModels(reference.to_owned(), candidate.to_owned()),
        harness: args.harness.clone(),
        params: params(args),
    };
    let result: TriggerComparison = match daemon_for_reading(&args.link, &args.db)? {
        Some(d) => serde_json::from_value(d.call(d.rpc.compare(ctx(), request))??)?,
        None => {
            let store = args.db.open_existing()?;
            queries::compare_triggers(
                &store,
                skill,
                reference,
                candidate,
                args.harness.as_deref(),
                &request.params,
            )?
        }
    };
    match output(args) {
        CompareFormat::Json => {
            crate::out::stdout(&(serde_json::to_string_pretty(&result)? + "\n"))?
        }
        CompareFormat::Text | CompareFormat::Github => {
            crate::out::stdout(&super::trigger::change_text(
                &format!("{skill}: trigger rates, {reference} -> {candidate}"),
                &result.change,
            ))?
        }
    }
    Ok(if result.verdict.fails() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `compare --all --model A --model B`, or `--all --since-model A [--model B]`.
fn compare_all(args: &Args) -> anyhow::Result<ExitCode> {
    let (since_model, model) = match (&args.since_model, args.models.as_slice()) {
        (Some(a), []) => (a.clone(), None),
        (Some(a), [b]) => (a.clone(), Some(b.clone())),
        (None, [a, b]) => (a.clone(), Some(b.clone())),
        (Some(_), more) => bail!(
            "with --all --since-model, expected at most one --model (the candidate), found {}",
            more.len()
        ),
        (None, more) => bail!(
            "with --all, expected two models (--model REFERENCE --model CANDIDATE) or \
             --since-model REFERENCE, found {} --model",
            more.len()
        ),
    };
    let request = CompareAllRequest {
        since_model,
        model,
        harness: args.harness.clone(),
        params: params(args),
    };
    let rows: Vec<CompareAllRow> = match daemon_for_reading(&args.link, &args.db)? {
        Some(d) => serde_json::from_value(d.call(d.rpc.compare_all(ctx(), request.clone()))??)?,
        None => queries::compare_all(&args.db.open_existing()?, &request)?,
    };
    let regressed = rows.iter().filter(|r| !r.regressed.is_empty()).count();
    match output(args) {
        CompareFormat::Json => crate::out::stdout(&(serde_json::to_string_pretty(&rows)? + "\n"))?,
        CompareFormat::Text => crate::out::stdout(&all_table(&request, &rows, regressed))?,
        CompareFormat::Github => {
            let table = all_table(&request, &rows, regressed);
            err!("{table}");
            github_all(&rows, &table)?;
        }
    }
    Ok(if regressed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn all_table(request: &CompareAllRequest, rows: &[CompareAllRow], regressed: usize) -> String {
    let mut o = String::new();
    let against = request
        .model
        .as_deref()
        .unwrap_or("each skill's newest other model");
    let _ = writeln!(
        o,
        "Skills with a completed run on {}, compared with {against} ({}; security and \
         triggers where both models have a probe or trigger run)",
        request.since_model,
        request.params.target.label()
    );
    if rows.is_empty() {
        let _ = writeln!(o, "  none");
        return o;
    }
    let width = rows.iter().map(|r| r.skill.len()).max().unwrap_or(5).max(5);
    let _ = writeln!(
        o,
        "  {:<width$}  {:<12}  {:<20}  {:>7}  {:>7}  {:>7}  {:<34}  verdict",
        "skill", "harness", "candidate", "before", "after", "change", "interval"
    );
    for row in rows {
        let _ = match &row.outcome {
            Ok(c) => writeln!(
                o,
                "  {:<width$}  {:<12}  {:<20}  {:>7}  {:>7}  {:>7}  {:<34}  {}",
                row.skill,
                c.harness,
                c.candidate_model,
                signed(c.reference_lift),
                signed(c.candidate_lift),
                signed(c.difference),
                interval(c.interval.as_ref()),
                c.verdict.as_str()
            ),
            Err(why) if row.security.is_none() && row.triggers.is_none() => {
                writeln!(o, "  {:<width$}  skipped: {why}", row.skill)
            }
            Err(why) => writeln!(o, "  {:<width$}  lift not compared: {why}", row.skill),
        };
        let indent = " ".repeat(width + 4);
        if let Some(security) = &row.security {
            let _ = writeln!(o, "{indent}{}", security_line(security));
        }
        if let Some(triggers) = &row.triggers {
            let _ = writeln!(o, "{indent}{}", trigger_line(triggers));
        }
    }
    let _ = writeln!(
        o,
        "\n{regressed} of {} regressed",
        count(rows.len(), "skill")
    );
    o
}

fn output(args: &Args) -> CompareFormat {
    if args.json {
        CompareFormat::Json
    } else {
        args.format
    }
}

/// `--format github` for one comparison: an annotation (on the skill's SKILL.md when the
/// skill was named by its folder), an error when it regressed; the table as the summary.
fn github_one(args: &Args, skill: &str, result: &RunComparison) -> anyhow::Result<()> {
    let cmp = &result.comparison;
    let folder = args.skill.as_deref().map(std::path::Path::new);
    let file = folder
        .map(|f| f.join("SKILL.md"))
        .filter(|f| f.is_file())
        .map(|f| github::relative(&f));
    let level = if cmp.verdict.fails() {
        Level::Error
    } else {
        Level::Notice
    };
    let title = format!(
        "skillwatch compare: {skill} {} ({} -> {})",
        cmp.decision.label(),
        result.reference.model,
        result.candidate.model
    );
    let place = Place { file, range: None };
    outln!("{}", github::annotation(level, &place, &title, &cmp.reason))?;
    if let Some(security) = &result.security {
        let level = if security.regresses() {
            Level::Error
        } else {
            Level::Notice
        };
        let title = format!(
            "skillwatch compare: {skill} security {} ({} -> {})",
            security.change.map_or("not comparable", |c| c.as_str()),
            result.reference.model,
            result.candidate.model
        );
        outln!(
            "{}",
            github::annotation(level, &place, &title, &security.reason)
        )?;
    }
    if let Some(triggers) = &result.triggers {
        let level = if triggers.regresses() {
            Level::Error
        } else {
            Level::Notice
        };
        let title = format!(
            "skillwatch compare: {skill} triggers {} ({} -> {})",
            triggers.verdict.as_str(),
            result.reference.model,
            result.candidate.model
        );
        outln!(
            "{}",
            github::annotation(level, &place, &title, &trigger_line(triggers))
        )?;
    }
    let md = format!(
        "### skillwatch compare: `{skill}`\n\n**{}**: {}\n\n```text\n{}```\n\n",
        cmp.decision.label(),
        github::cell(&cmp.reason),
        table(skill, result)
    );
    github::step_summary(&md).context("writing $GITHUB_STEP_SUMMARY")
}

/// `--format github` for `--all`: an error annotation per regression (lift, security,
/// triggers), a warning per skipped skill, the table as the summary.
fn github_all(rows: &[CompareAllRow], table: &str) -> anyhow::Result<()> {
    for row in rows {
        let candidate = row.candidate_model.as_deref().unwrap_or("another model");
        match &row.outcome {
            Ok(c) if c.verdict == Verdict::Regresses => outln!(
                "{}",
                github::annotation(
                    Level::Error,
                    &Place {
                        file: c
                            .skill_dir
                            .as_ref()
                            .map(|d| d.join("SKILL.md"))
                            .filter(|f| f.is_file())
                            .map(|f| github::relative(&f)),
                        range: None,
                    },
                    &format!(
                        "skillwatch compare: {} regresses on {}",
                        row.skill, c.candidate_model
                    ),
                    &c.reason
                )
            )?,
            Err(why) if row.security.is_none() && row.triggers.is_none() => outln!(
                "{}",
                github::annotation(
                    Level::Warning,
                    &Place::default(),
                    &format!("skillwatch compare: {} skipped", row.skill),
                    why
                )
            )?,
            _ => {}
        }
        let place = Place {
            file: row
                .outcome
                .as_ref()
                .ok()
                .and_then(|c| c.skill_dir.as_ref())
                .map(|d| d.join("SKILL.md"))
                .filter(|f| f.is_file())
                .map(|f| github::relative(&f)),
            range: None,
        };
        if let Some(s) = row.security.as_ref().filter(|s| s.regresses()) {
            let title = format!(
                "skillwatch compare: {} security regresses on {candidate}",
                row.skill
            );
            outln!(
                "{}",
                github::annotation(Level::Error, &place, &title, &s.reason)
            )?;
        }
        if let Some(t) = row.triggers.as_ref().filter(|t| t.regresses()) {
            let title = format!(
                "skillwatch compare: {} triggers regress on {candidate}",
                row.skill
            );
            outln!(
                "{}",
                github::annotation(Level::Error, &place, &title, &trigger_line(t))
            )?;
        }
    }
    github::step_summary(&format!(
        "### skillwatch compare --all\n\n```text\n{table}```\n\n"
    ))
    .context("writing $GITHUB_STEP_SUMMARY")
}

/// The comparison settings the flags ask for.
fn params(args: &Args) -> CompareParams {
    let mut params = CompareParams {
        min_effect: args.min_effect,
        interval: match args.interval {
            IntervalChoice::T => VerdictInterval::StudentT,
            IntervalChoice::Bootstrap => VerdictInterval::Bootstrap,
        },
        target: match &args.metric {
            Some(m) => CompareTarget::Metric(Metric::from(m.clone())),
            None => CompareTarget::of_profile(ScoringProfile::from(args.scoring_profile)),
        },
        ..CompareParams::default()
    };
    params.inference.level = args.level;
    params
}

fn table(skill: &str, result: &RunComparison) -> String {
    let mut o = String::new();
    let (r, c, cmp) = (&result.reference, &result.candidate, &result.comparison);
    let _ = writeln!(
        o,
        "{skill}: {} per case, {} -> {}",
        cmp.target.label(),
        r.model,
        c.model
    );
    for (label, run) in [("reference", r), ("candidate", c)] {
        let _ = writeln!(
            o,
            "  {label}: run {} on {} ({}), skill version {}, started {}",
            run.id.0,
            run.model,
            run.harness,
            short_hash(&run.skill_hash),
            format_rfc3339(run.started_ms)
        );
    }
    let width = cmp
        .cases
        .iter()
        .map(|c| c.case_id.len())
        .max()
        .unwrap_or(4)
        .max(4);
    // the columns are as wide as the model names: two models differing after 9 characters
    // (claude-sonnet-4, claude-sonnet-4-5) must not print alike
    let (rw, cw) = (
        r.model.chars().count().max(9),
        c.model.chars().count().max(9),
    );
    let _ = writeln!(
        o,
        "\n  {:<width$}  {:>rw$}  {:>cw$}  {:>8}",
        "case", r.model, c.model, "change"
    );
    for case in &cmp.cases {
        let _ = writeln!(
            o,
            "  {:<width$}  {:>rw$}  {:>cw$}  {:>8}",
            case.case_id,
            signed(Some(case.reference)),
            signed(Some(case.candidate)),
            signed(Some(case.difference))
        );
    }
    let _ = writeln!(
        o,
        "  {:<width$}  {:>rw$}  {:>cw$}  {:>8}  {}",
        "mean",
        signed(cmp.reference_lift),
        signed(cmp.candidate_lift),
        signed(cmp.summary.mean),
        interval(cmp.interval.as_ref())
    );
    if let Some(p) = &cmp.summary.p_value {
        let _ = writeln!(o, "  sign-flip permutation p = {:.4} (n={})", p.p, p.n);
    }
    if !cmp.left_out_metrics.is_empty() {
        let names = |m: &[skillwatch_core::scoring::Metric]| {
            m.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")
        };
        let judged = |run: &skillwatch_daemon::store::RunInfo| match &run.judge_model {
            Some(j) => format!("run {} judged by {j}", run.id.0),
            None => format!("run {} not judged", run.id.0),
        };
        let _ = writeln!(
            o,
            "  left out, metrics only one run has: {} ({}, {}); both compared on {}",
            names(&cmp.left_out_metrics),
            judged(r),
            judged(c),
            names(&cmp.metrics)
        );
    }
    for (label, cases) in [
        ("only in the reference", &cmp.only_in_reference),
        ("only in the candidate", &cmp.only_in_candidate),
        ("edited between the runs", &result.changed_cases),
    ] {
        if !cases.is_empty() {
            let _ = writeln!(o, "  left out, {label}: {}", cases.join(", "));
        }
    }
    let _ = writeln!(o, "\nverdict: {} ({})", cmp.decision.label(), cmp.reason);
    if let Some(security) = &result.security {
        let _ = writeln!(o, "{}", security_line(security));
    }
    if let Some(triggers) = &result.triggers {
        let _ = writeln!(o, "{}", trigger_line(triggers));
    }
    o
}

/// `security: regresses (S 100.0 (Pass) on A … -> 88.9 (Caution) on B …)`.
fn security_line(s: &SecurityComparison) -> String {
    let label = s.change.map_or("not comparable", |c| c.as_str());
    format!("security: {label} ({})", s.reason)
}

/// `triggers: regresses (recall 100% -> 25% (-75 points [-96, -35]), false triggers 0% -> 0%
/// (+0 points [-20, +20]); trigger runs 3 -> 4)`.
fn trigger_line(t: &TriggerComparison) -> String {
    let rate = |r: &skillwatch_core::scoring::rate_difference::RateChange| {
        let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.0}%", v * 100.0));
        let change = r.interval.as_ref().map_or_else(String::new, |i| {
            format!(
                " ({:+.0} points [{:+.0}, {:+.0}])",
                i.estimate * 100.0,
                i.low * 100.0,
                i.high * 100.0
            )
        });
        format!("{} -> {}{change}", pct(r.before), pct(r.after))
    };
    format!(
        "triggers: {} (recall {}, false triggers {}; trigger runs {} -> {})",
        t.verdict.as_str(),
        rate(&t.change.recall),
        rate(&t.change.false_trigger),
        t.reference.id,
        t.candidate.id
    )
}
