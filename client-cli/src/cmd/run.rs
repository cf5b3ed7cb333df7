//! `skillwatch run SKILL_DIR`: measure a skill's lift with a paired run (baseline without the
//! skill, with the skill) on a real harness, store it in the history, print the summary.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::Arc;

use anyhow::{Context, anyhow, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use skillwatch_core::plural::agree;
use skillwatch_daemon::probe::{ProbeReport, ProbeRequest};
use skillwatch_daemon::runner::{
    HarnessKind, HarnessSettings, JudgeEndpoint, JudgeMode, JudgeSettings, ProgressSink, RunConfig,
    RunEvent, RunReport, RunRequest, TrialTally, parse_kind,
};
use skillwatch_daemon::store::{RunId, RunStatus, Store};
use skillwatch_protocol::{HarborRun, HarborTarget};

use super::agent::{AgentArgs, RepeatArgs, Settings};
use super::engine;
use super::history_db::{DbArgs, ProfileArg};
use super::link::LinkArgs;
use crate::report::github;
use crate::run_report;

/// Arguments of `skillwatch run`.
#[derive(clap::Args)]
#[command(
    after_help = "Settings come from flags, then skillwatch.toml (the nearest one above \
the skill, or --config), then defaults. Before the run, the design and the smallest lift it \
can detect are printed on stderr (`skillwatch plan` for more). Exit status: 0 the run \
completed, 1 the skill regresses (the verdict rule of docs/scoring.md) or the run was \
cancelled, 2 bad usage or a failure."
)]
pub struct Args {
    /// The skill folder (with SKILL.md and tests/eval.yaml or evals/evals.json).
    pub(crate) skill: PathBuf,
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
    #[command(flatten)]
    repeat: RepeatArgs,
    /// Run only this case (repeatable).
    #[arg(long = "case", value_name = "ID")]
    cases: Vec<String>,
    /// A support or decoy skill installed in both conditions (repeatable).
    #[arg(long = "support-skill", value_name = "DIR")]
    support: Vec<PathBuf>,
    /// LLM judge model; enables accuracy, goal accuracy and judged expectations.
    #[arg(long, value_name = "MODEL")]
    judge_model: Option<String>,
    /// Judge calls: independent (each trial scored) or pairwise (also baseline vs skill,
    /// both orders) [default: pairwise].
    #[arg(long, value_enum)]
    judge_mode: Option<JudgeModeArg>,
    /// OpenAI-compatible endpoint of the judge [default: [judge] base_url, else the openai
    /// harness's endpoint].
    #[arg(long, value_name = "URL")]
    judge_url: Option<String>,
    /// Judge through this harness instead of an endpoint.
    #[arg(long, value_name = "HARNESS")]
    judge_harness: Option<String>,
    /// Variable holding the judge endpoint's API key [default: OPENAI_API_KEY].
    #[arg(long, value_name = "VAR")]
    judge_api_key_env: Option<String>,
    /// Run every baseline again instead of reusing unchanged ones from the history.
    #[arg(long)]
    no_reuse: bool,
    /// Resume an interrupted or cancelled run: only its missing trials run.
    #[arg(long, value_name = "RUN")]
    resume: Option<i64>,
    /// Keep trial workspaces and logs (under the system temp dir).
    #[arg(long)]
    keep_workspaces: bool,
    /// Seed of the run's statistics [default: 0].
    #[arg(long)]
    seed: Option<u64>,
    /// Which lift the verdict (and the exit status) rests on: the outcome lift, or ACES's
    /// six-metric overall. Both are in the report either way.
    #[arg(long, value_enum, default_value_t = ProfileArg::Outcome)]
    pub(crate) scoring_profile: ProfileArg,
    /// Print the report as JSON on stdout (no progress bar); shorthand for `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub(crate) json: bool,
    /// How the report is printed: `text` (a table), `json`, or `github` (an Actions
    /// annotation on the skill's SKILL.md on stdout, the table on stderr, the markdown report
    /// appended to `$GITHUB_STEP_SUMMARY`).
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub(crate) format: RunFormat,
    /// Run only when the skill's folder changed in git since REF (from the merge base of REF
    /// and HEAD to the working tree); otherwise say so and exit 0.
    #[arg(long, value_name = "REF")]
    pub(crate) changed_since: Option<String>,
    /// Also write a report: json:PATH, junit:PATH or markdown:PATH (repeatable; markdown fits
    /// a pull request comment or $GITHUB_STEP_SUMMARY).
    #[arg(long = "report", value_name = "FORMAT:PATH")]
    pub(crate) reports: Vec<ReportTarget>,
    /// After the paired run, run the security probe suite (`skillwatch probe`) with the same
    /// harness and model; the summary, the reports and the exit status cover both.
    #[arg(long)]
    pub(crate) with_probes: bool,
    /// Where the trials run: here (`local`), or on Harbor (`harbor`: the suite exported as a
    /// Harbor job, run by the `harbor` CLI, its trials imported as they finish; docs/harbor.md).
    #[arg(long, value_enum, default_value_t = On::Local)]
    pub(crate) on: On,
    /// With `--on harbor`: Harbor's environment (`-e`): docker, daytona, modal, e2b, ...
    #[arg(long, value_name = "ENV", default_value = "docker")]
    harbor_env: String,
    /// With `--on harbor`: Harbor's agent (`-a`) when it is not the harness's name (opencode,
    /// gemini-cli, goose, ..., or module:Class) [default: the harness: claude-code, codex].
    #[arg(long, value_name = "AGENT")]
    harbor_agent: Option<String>,
    /// With `--on harbor`: the `harbor` executable [default: harbor on PATH].
    #[arg(long, value_name = "PATH")]
    harbor: Option<PathBuf>,
    /// With `--on harbor`: the image every task builds FROM (for a remote backend, one in a
    /// registry; an image with the agent CLI in it spares Harbor installing it online).
    #[arg(long, value_name = "IMAGE", default_value = "debian:bookworm-slim")]
    base_image: String,
    /// With `--on harbor`: folder for the exported tasks and Harbor's job [default:
    /// harbor/<skill>-<time> beside the history].
    #[arg(long, value_name = "DIR")]
    harbor_dir: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) db: DbArgs,
}

/// `--on` of `run`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum On {
    Local,
    Harbor,
}

/// `--format` of `run`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RunFormat {
    Text,
    Json,
    Github,
}

impl Args {
    /// The output format, `--json` folded in.
    pub(crate) fn output(&self) -> RunFormat {
        if self.json {
            RunFormat::Json
        } else {
            self.format
        }
    }
}

/// `--judge-mode`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum JudgeModeArg {
    Independent,
    Pairwise,
}

/// A `--report FORMAT:PATH`.
#[derive(Clone, Debug)]
pub(crate) struct ReportTarget {
    format: ReportFormat,
    path: PathBuf,
}

#[derive(Clone, Copy, Debug)]
enum ReportFormat {
    Json,
    Junit,
    Markdown,
}

impl FromStr for ReportTarget {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (format, path) = s.split_once(':').ok_or_else(|| {
            format!("expected FORMAT:PATH (json, junit or markdown), found {s:?}")
        })?;
        let format = match format {
            "json" => ReportFormat::Json,
            "junit" => ReportFormat::Junit,
            "markdown" | "md" => ReportFormat::Markdown,
            other => {
                return Err(format!(
                    "expected json, junit or markdown before ':', found {other:?}"
                ));
            }
        };
        if path.is_empty() {
            return Err(format!("expected a path after {format:?}:, found none"));
        }
        Ok(ReportTarget {
            format,
            path: path.into(),
        })
    }
}

/// `skillwatch run`: through the daemon for the history `--db` names (started on demand), or
/// in-process with `--no-daemon` or when the running daemon serves another history. With
/// `--changed-since`, only when the skill changed.
pub fn dispatch(args: Args, link: &LinkArgs) -> anyhow::Result<ExitCode> {
    if let Some(reference) = &args.changed_since
        && !crate::changed::ChangedSince::read(reference, &args.skill)?.touches(&args.skill)
    {
        let note = format!(
            "{}: unchanged since {reference}; not run",
            args.skill.display()
        );
        if args.output() == RunFormat::Github {
            outln!("::notice::{}", crate::report::github::data(&note))?;
        }
        errln!("{note}");
        return Ok(ExitCode::SUCCESS);
    }
    run(args, link)
}

/// Run the paired evaluation (here or on Harbor) and print its summary.
fn run(args: Args, link: &LinkArgs) -> anyhow::Result<ExitCode> {
    let request = request(&args)?;
    let json = args.output() == RunFormat::Json;
    let ran = match harbor_target(&args, &request)? {
        None => engine::execute(
            request,
            how(&args, link, json, |r: &RunRequest| r, |_, _| {}),
        )?,
        Some(harbor) => engine::execute(
            HarborRun {
                run: request,
                harbor,
            },
            how(
                &args,
                link,
                json,
                |h: &HarborRun| &h.run,
                |history, h| harbor_dir(h, history, json),
            ),
        )?,
    };
    let failed = ran.job_failure();
    let report = ran.report.with_profile(args.scoring_profile.into());
    let code = finish(&report, &args, link)?;
    match failed {
        Some(why) if report.failure().is_none() => bail!("{why}"),
        _ => Ok(code),
    }
}

/// How `run` runs a paired request (here, or on Harbor): its design said first (`paired`
/// finds the paired request in it), `settle` given a last look at it, progress on a bar, the
/// report read back by the run's id.
fn how<'a, R>(
    args: &'a Args,
    link: &'a LinkArgs,
    json: bool,
    paired: fn(&R) -> &RunRequest,
    settle: impl FnOnce(&Path, &mut R) + 'a,
) -> engine::Run<'a, R>
where
    R: skillwatch_daemon::runs::Request + 'a,
    R::Kind: skillwatch_daemon::runs::Kind<Report = RunReport>,
{
    engine::Run {
        link,
        db: &args.db,
        sink: progress_sink(0, json),
        quiet: json,
        prelude: Box::new(move |history, request: &mut R| {
            settle(history, request);
            let store = Store::open_existing(history).ok();
            let note = super::plan::design_note(store.as_ref(), paired(request))?;
            errln!("{note}");
            Ok(())
        }),
        load: Box::new(|store, run, job| {
            let tally = TrialTally {
                planned: job.progress.total as usize,
                ran: (job.progress.done - job.progress.reused) as usize,
                reused: job.progress.reused as usize,
                ..TrialTally::default()
            };
            let wall = job
                .finished_ms
                .zip(job.started_ms)
                .map_or(0, |(f, s)| (f - s).max(0) as u64);
            Ok(RunReport::load(store, RunId(run.id), tally, wall)?)
        }),
    }
}

/// Run the probes when asked (`--with-probes`, after a completed run), print the report,
/// write the `--report` files, and give the exit status.
pub(crate) fn finish(report: &RunReport, args: &Args, link: &LinkArgs) -> anyhow::Result<ExitCode> {
    // The profile this run was read under is recorded with it, so `history`, the lens and the
    // HTML report give it the verdict printed here.
    if report.profile != report.run.profile() {
        args.db
            .open_existing()?
            .set_scoring_profile(report.run.id, report.profile)
            .context("recording the run's scoring profile")?;
    }
    let probes = if args.with_probes && report.run.status == RunStatus::Completed {
        let quiet = args.output() == RunFormat::Json;
        Some(super::probe::execute(
            probe_request(args)?,
            &args.db,
            link,
            quiet,
        )?)
    } else {
        None
    };
    let probes = probes.as_ref();
    match args.output() {
        RunFormat::Json => {
            let mut json = serde_json::to_value(report)?;
            if let (Some(p), Some(object)) = (probes, json.as_object_mut()) {
                object.insert("probes".into(), serde_json::to_value(p)?);
            }
            crate::out::stdout(&(serde_json::to_string_pretty(&json)? + "\n"))?
        }
        RunFormat::Text => {
            crate::out::stdout(&run_report::text(report))?;
            if let Some(p) = probes {
                crate::out::stdout(&format!("\n{}", super::probe::text(p)))?;
            }
        }
        RunFormat::Github => {
            err!("{}", run_report::text(report));
            outln!("{}", run_report::github_annotation(report, &args.skill))?;
            let mut summary = run_report::markdown(report);
            if let Some(p) = probes {
                err!("\n{}", super::probe::text(p));
                outln!("{}", run_report::probes::github_annotation(p, &args.skill))?;
                summary.push_str(&format!("\n{}", run_report::probes::markdown(p)));
            }
            github::step_summary(&summary).context("writing $GITHUB_STEP_SUMMARY")?;
        }
    }
    for target in &args.reports {
        write_report(report, probes, target)?;
    }
    if let Some(failure) = report.failure() {
        bail!("{failure}");
    }
    Ok(
        if report.fails() || probes.is_some_and(run_report::probes::fails) {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// The probe run of `--with-probes`: the run's harness, model and budget, the probes' own
/// defaults.
fn probe_request(args: &Args) -> anyhow::Result<ProbeRequest> {
    let run = request(args)?;
    let mut probes = ProbeRequest::new(&args.skill, run.harness, run.model);
    probes.retries = run.retries;
    probes.keep_workspaces = run.keep_workspaces;
    probes.budget = run.budget;
    Ok(probes)
}

/// The paired request for these arguments: flags over skillwatch.toml over defaults.
pub(crate) fn request(args: &Args) -> anyhow::Result<RunRequest> {
    let settings = args.agent.settings(&args.skill)?;
    build_request(args, &settings)
}

/// Flags over skillwatch.toml over defaults.
fn build_request(a: &Args, settings: &Settings) -> anyhow::Result<RunRequest> {
    let config = &settings.run;
    let (kind, model) = a.agent.harness_and_model(config)?;
    let harness = a.agent.harness(config, kind);
    let mut r = RunRequest::new(&a.skill, harness.clone(), &model);
    r.runs = a.repeat.runs(config);
    r.jobs = a.repeat.jobs(config);
    r.timeout_secs = a.agent.timeout.or(config.run.timeout_secs);
    r.cases = a.cases.clone();
    r.support_skills = if a.support.is_empty() {
        config.run.support_skills.clone()
    } else {
        a.support.clone()
    };
    r.reuse_baselines = !a.no_reuse && config.run.reuse_baselines.unwrap_or(true);
    r.retries = config.run.retries.unwrap_or(2);
    r.resume = a.resume.map(RunId);
    r.keep_workspaces = a.keep_workspaces;
    r.seed = a.seed.unwrap_or(0);
    r.judge = judge_settings(a, config, &harness)?;
    r.budget = a.agent.budget(settings, &model)?;
    r.budget.judge_price = settings.daemon.judge_price(r.judge.as_ref());
    Ok(r)
}

/// Where `--on harbor` sends the trials (`None`: they run here). On local Docker, a model
/// endpoint on this machine's loopback is reached through host networking; a remote sandbox
/// cannot reach it at all.
fn harbor_target(a: &Args, r: &RunRequest) -> anyhow::Result<Option<HarborTarget>> {
    if a.on != On::Harbor {
        return Ok(None);
    }
    if let Some(run) = r.resume {
        bail!(
            "--resume {run} with --on harbor: resume the Harbor job itself (`harbor jobs resume -p DIR/jobs/job`), then `skillwatch import harbor DIR/jobs/job` (docs/harbor.md)"
        );
    }
    let loopback = r.harness.base_url.as_deref().is_some_and(is_loopback);
    let docker = a.harbor_env == "docker";
    if loopback && !docker {
        bail!(
            "--base-url {}: a sandbox on {} cannot reach this machine's loopback; give a model endpoint the sandbox can reach (docs/harbor.md)",
            r.harness.base_url.as_deref().unwrap_or_default(),
            a.harbor_env
        );
    }
    let program = match &a.harbor {
        Some(p) => super::link::absolute(p),
        None => on_path("harbor").ok_or_else(|| {
            anyhow!("--on harbor: expected the harbor CLI on PATH (pip install harbor; Python 3.12) or --harbor PATH, found none")
        })?,
    };
    let target = HarborTarget {
        program,
        env: a.harbor_env.clone(),
        agent: a.harbor_agent.clone(),
        base_image: a.base_image.clone(),
        host_network: loopback && docker,
        dir: a.harbor_dir.as_deref().map(super::link::absolute),
    };
    target.agent_for(r.harness.kind).map_err(|e| anyhow!(e))?;
    Ok(Some(target))
}

/// Settle where a run on Harbor keeps its export and job (beside the history at `history`
/// unless `--harbor-dir` said) and say so, so the job can be looked at or resumed.
fn harbor_dir(request: &mut HarborRun, history: &Path, json: bool) {
    let skill = request
        .run
        .skill_dir
        .file_name()
        .map_or_else(|| "skill".into(), |n| n.to_string_lossy().into_owned());
    let dir = request
        .harbor
        .dir
        .get_or_insert_with(|| skillwatch_daemon::harbor::default_dir(history, &skill));
    if !json {
        errln!(
            "harbor: tasks and job in {} (Harbor's output: harbor.log there)",
            dir.display()
        );
    }
}

/// Whether `url` points at this machine's loopback interface.
fn is_loopback(url: &str) -> bool {
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', '?'])
        .next()
        .unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    matches!(host, "localhost" | "[::1]" | "::1") || host.starts_with("127.")
}

/// `name` found on PATH, absolute.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The judge: flags, then `[judge]`, then (for the openai harness) the agent's own endpoint.
fn judge_settings(
    a: &Args,
    config: &RunConfig,
    harness: &HarnessSettings,
) -> anyhow::Result<Option<JudgeSettings>> {
    let mode = a.judge_mode.map(|m| match m {
        JudgeModeArg::Independent => JudgeMode::Independent,
        JudgeModeArg::Pairwise => JudgeMode::Pairwise,
    });
    let flag_endpoint = match (&a.judge_url, &a.judge_harness) {
        (Some(url), _) => Some(JudgeEndpoint::Openai {
            base_url: url.clone(),
            api_key_env: a.judge_api_key_env.clone(),
        }),
        (None, Some(h)) => Some(JudgeEndpoint::Harness {
            settings: config
                .harness_settings(parse_kind(h).map_err(|e| anyhow!("--judge-harness: {e}"))?),
        }),
        (None, None) => None,
    };
    let from_file = match config.judge_settings(a.judge_model.as_deref()) {
        Ok(j) => j,
        Err(_) if flag_endpoint.is_some() || harness.kind == HarnessKind::Openai => None,
        Err(e) => bail!("{e} (or pass --judge-url / --judge-harness)"),
    };
    let Some(model) = a
        .judge_model
        .clone()
        .or(from_file.as_ref().map(|j| j.model.clone()))
    else {
        return Ok(None);
    };
    let endpoint = flag_endpoint
        .or(from_file.as_ref().map(|j| j.endpoint.clone()))
        .or_else(|| {
            (harness.kind == HarnessKind::Openai).then(|| JudgeEndpoint::Openai {
                base_url: harness.base_url.clone().unwrap_or_default(),
                api_key_env: harness.api_key_env.clone(),
            })
        })
        .ok_or_else(|| anyhow!("judge {model}: expected --judge-url or --judge-harness (or [judge] in skillwatch.toml), found neither"))?;
    Ok(Some(JudgeSettings {
        model,
        mode: mode
            .or(from_file.map(|j| j.mode))
            .unwrap_or(JudgeMode::Pairwise),
        endpoint,
    }))
}

/// An indicatif bar on a terminal; plain lines on stderr otherwise; nothing with `--json`
/// (judge errors aside). The daemon path feeds it the daemon's copy of the runner's events,
/// so both paths show a run alike.
pub(crate) fn progress_sink(planned: u64, json: bool) -> ProgressSink {
    let tty = std::io::stderr().is_terminal();
    let bar = if json || !tty {
        ProgressBar::with_draw_target(Some(planned), ProgressDrawTarget::hidden())
    } else {
        let bar = ProgressBar::new(planned);
        bar.set_style(trials_bar(planned));
        bar
    };
    let lines = !json && !tty;
    Arc::new(move |event: &RunEvent| match event {
        RunEvent::Started {
            run,
            skill,
            harness,
            harness_version,
            model,
            planned,
            reused,
            resumed,
            ..
        } => {
            bar.set_length(*planned as u64);
            bar.set_style(trials_bar(*planned as u64));
            bar.inc((reused + resumed) as u64);
            let line = format!("run {run}: {skill} on {model} ({harness} {harness_version})");
            if lines {
                errln!("{line}");
            } else {
                bar.println(line);
            }
        }
        RunEvent::TrialStarted {
            case,
            condition,
            attempt,
        } => {
            bar.set_message(format!("{case} ({condition} #{attempt})"));
        }
        RunEvent::TrialReused { .. } => {}
        RunEvent::TrialFinished {
            case,
            condition,
            attempt,
            status,
            passed,
            wall_ms,
            error,
            ..
        } => {
            bar.inc(1);
            let outcome = passed.map_or("ungraded", |p| if p { "passed" } else { "failed" });
            let why = error
                .as_deref()
                .map_or_else(String::new, |e| format!(": {}", one_line(e)));
            let line = format!(
                "  {case} {condition} #{attempt}: {status}, {outcome}, {:.1} s{why}",
                *wall_ms as f64 / 1000.0
            );
            if lines {
                errln!("{line}");
            } else if !json && error.is_some() {
                bar.println(line);
            }
        }
        RunEvent::JudgeFailed {
            case,
            attempt,
            message,
            ..
        } => {
            let line = format!("  judge error on {case} #{attempt}: {message}");
            if lines || json {
                errln!("{line}");
            } else {
                bar.println(line);
            }
        }
        RunEvent::Finished { stop, .. } => {
            bar.finish_and_clear();
            if let (Some(stop), false) = (stop, json) {
                errln!("stopped: budget ({})", stop.detail);
            }
        }
    })
}

/// The bar's look: `3/12 trials`, `0/1 trial`.
fn trials_bar(planned: u64) -> ProgressStyle {
    let template = format!(
        "{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {} {{msg}}",
        agree(planned, "trial")
    );
    ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// `text` on one line (a trial's error may quote an agent's multi-line stderr).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn write_report(
    report: &RunReport,
    probes: Option<&ProbeReport>,
    target: &ReportTarget,
) -> anyhow::Result<()> {
    let text = match target.format {
        ReportFormat::Json => {
            let mut json = serde_json::to_value(report)?;
            if let (Some(p), Some(object)) = (probes, json.as_object_mut()) {
                object.insert("probes".into(), serde_json::to_value(p)?);
            }
            serde_json::to_string_pretty(&json)? + "\n"
        }
        ReportFormat::Junit => run_report::junit(report, probes),
        ReportFormat::Markdown => {
            let mut text = run_report::markdown(report);
            if let Some(p) = probes {
                text.push_str(&format!("\n{}", run_report::probes::markdown(p)));
            }
            text
        }
    };
    write_file(&target.path, &text)
}

/// `text` to `path`, its folder created first.
fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// A `--report` of `skillwatch probe`: the probe run alone.
pub(crate) fn write_probe_report(p: &ProbeReport, target: &ReportTarget) -> anyhow::Result<()> {
    let text = match target.format {
        ReportFormat::Json => serde_json::to_string_pretty(p)? + "\n",
        ReportFormat::Junit => run_report::junit_probes(p),
        ReportFormat::Markdown => run_report::probes::markdown(p),
    };
    write_file(&target.path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_endpoints_are_told_from_reachable_ones() {
        for url in [
            "http://127.0.0.1:8080",
            "http://localhost/v1",
            "http://[::1]:9/v1",
            "127.0.0.2:1",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.anthropic.com",
            "http://10.0.0.5:8080/v1",
            "http://localhost.example.com/v1",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn report_targets_parse_and_explain_mistakes() {
        let t: ReportTarget = "markdown:out/summary.md".parse().unwrap();
        assert!(matches!(t.format, ReportFormat::Markdown));
        assert_eq!(t.path, PathBuf::from("out/summary.md"));
        assert!(
            "xml:a"
                .parse::<ReportTarget>()
                .unwrap_err()
                .contains("expected json, junit or markdown")
        );
        assert!(
            "junit"
                .parse::<ReportTarget>()
                .unwrap_err()
                .contains("FORMAT:PATH")
        );
    }
}
