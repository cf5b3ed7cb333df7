//! `skillwatch run` through the daemon: the same flags and `skillwatch.toml` settings as the
//! in-process run (`cmd::run`), turned into the runner's request here, queued as a daemon job,
//! followed through the daemon's events (progress on stderr), and reported from the history
//! when it ends. Ctrl-C cancels the job (the daemon kills its agents).
//!
//! `cmd::run` keeps its argument struct and request builder private, so this module reads the
//! parsed flags from clap's matches by their ids and builds the request with the runner's
//! public `RunConfig` the same way (flags over the file over defaults). A `pub fn request`
//! in `cmd::run` would let both share one builder.

use std::ffi::OsStr;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use clap::ArgMatches;
use skillwatch_core::protocol::{
    EventKind, JobId, JobInfo, JobState, JobTrigger, MAX_EVENT_WAIT_MS, RunRequest as JobRequest,
};
use skillwatch_daemon::client;
use skillwatch_daemon::runner::{
    HarnessKind, HarnessSettings, JudgeEndpoint, JudgeMode, JudgeSettings, RunConfig, RunReport,
    RunRequest, RunVerdict, TrialTally, parse_kind,
};
use skillwatch_daemon::store::{RunId, RunStatus, Store};

use super::history_db::DbArgs;
use super::link::{Daemon, LinkArgs, absolute, ctx, daemon_for};
use crate::run_report;

/// The flags of `skillwatch run`, read from clap's matches.
struct Flags<'a>(&'a ArgMatches);

impl Flags<'_> {
    fn one<T: Clone + Send + Sync + 'static>(&self, id: &str) -> Option<T> {
        self.0.try_get_one::<T>(id).ok().flatten().cloned()
    }
    fn many<T: Clone + Send + Sync + 'static>(&self, id: &str) -> Vec<T> {
        self.0
            .try_get_many::<T>(id)
            .ok()
            .flatten()
            .map(|v| v.cloned().collect())
            .unwrap_or_default()
    }
    fn raw(&self, id: &str) -> Vec<String> {
        self.0
            .try_get_raw(id)
            .ok()
            .flatten()
            .map(|v| {
                v.map(|s: &OsStr| s.to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
    fn flag(&self, id: &str) -> bool {
        self.one::<bool>(id).unwrap_or(false)
    }
}

/// `skillwatch run`: through the daemon for the history `--db` names (started on demand), or
/// in-process with `--no-daemon` or when the running daemon serves another history.
pub fn dispatch(
    matches: &ArgMatches,
    args: super::run::Args,
    link: &LinkArgs,
) -> anyhow::Result<ExitCode> {
    let db = DbArgs {
        db: Flags(matches).one::<PathBuf>("db"),
    };
    match daemon_for(link, &db)? {
        Some(daemon) => run(matches, daemon),
        None => super::run::run(args),
    }
}

/// Run through `daemon`; `matches` are those of the `run` subcommand.
fn run(matches: &ArgMatches, daemon: Daemon) -> anyhow::Result<ExitCode> {
    let flags = Flags(matches);
    let skill: PathBuf = flags.one("skill").context("the skill folder")?;
    let skill = absolute(&skill)
        .canonicalize()
        .with_context(|| format!("{}: expected a skill folder", skill.display()))?;
    let config = match flags
        .one::<PathBuf>("config")
        .or_else(|| RunConfig::find(&skill))
    {
        Some(path) => RunConfig::load(&path)?,
        None => RunConfig::default(),
    };
    let mut request = build_request(&flags, &config, &skill)?;
    request.skill_dir = skill.clone();
    let json = flags.flag("json");
    let mut job = JobRequest::new(&skill, request.harness.kind.as_str(), &request.model);
    job.trigger = JobTrigger::Manual;
    job.runner = Some(serde_json::to_value(&request)?);
    let queued = daemon.call(daemon.rpc.enqueue_run(ctx(), job))??;
    if !json {
        eprintln!(
            "queued as job {} on the skillwatch daemon (`skillwatch cancel {}` to stop it)",
            queued.id, queued.id
        );
    }
    let finished = follow(&daemon, queued.id, json)?;
    let Some(run) = finished.run else {
        bail!(
            "job {} {}: {}",
            finished.id,
            finished.state,
            finished.error.as_deref().unwrap_or("no run was made")
        );
    };
    let db = daemon.call(daemon.rpc.status(ctx()))?.db;
    let store = Store::open_existing(&db)?;
    let tally = TrialTally {
        planned: finished.progress.total as usize,
        ran: (finished.progress.done - finished.progress.reused) as usize,
        reused: finished.progress.reused as usize,
        ..TrialTally::default()
    };
    let wall = finished
        .finished_ms
        .zip(finished.started_ms)
        .map_or(0, |(f, s)| (f - s).max(0) as u64);
    let report = RunReport::load(&store, RunId(run), tally, wall)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", run_report::text(&report));
    }
    for target in flags.raw("reports") {
        write_report(&report, &target)?;
    }
    if finished.state == JobState::Failed {
        bail!(
            "job {} failed: {}",
            finished.id,
            finished.error.unwrap_or_default()
        );
    }
    let failed =
        report.verdict == RunVerdict::Regresses || report.run.status != RunStatus::Completed;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Follow the job's events until it ends; Ctrl-C cancels it.
fn follow(daemon: &Daemon, job: JobId, json: bool) -> anyhow::Result<JobInfo> {
    let tty = std::io::stderr().is_terminal() && !json;
    let interrupted = daemon.runtime.spawn(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    let mut cursor = 0;
    let mut last_line = Instant::now() - Duration::from_secs(10);
    loop {
        if interrupted.is_finished() {
            eprintln!("\ninterrupted: cancelling job {job}…");
            return Ok(daemon.call(daemon.rpc.cancel(ctx(), job))??);
        }
        let wait = 1_000.min(MAX_EVENT_WAIT_MS);
        let call = daemon.rpc.next_events(
            client::context(Duration::from_millis(wait + 10_000)),
            cursor,
            wait,
        );
        let batch = daemon.call(call)?;
        cursor = batch.next;
        for event in &batch.events {
            if let EventKind::Progress {
                job: j,
                done,
                total,
                message,
                ..
            } = &event.kind
                && *j == job
                && !json
            {
                // a line per trial on a terminal, at most one a second otherwise
                if tty || last_line.elapsed() >= Duration::from_secs(1) {
                    eprintln!("[{done}/{total}] {message}");
                    last_line = Instant::now();
                }
            }
        }
        let state = daemon.call(daemon.rpc.run_status(ctx(), job))??;
        if !state.state.is_live() {
            interrupted.abort();
            return Ok(state);
        }
    }
}

fn build_request(f: &Flags<'_>, config: &RunConfig, skill: &Path) -> anyhow::Result<RunRequest> {
    let kind_name = f
        .one::<String>("harness")
        .or(config.run.harness.clone())
        .ok_or_else(|| {
            anyhow!("expected --harness (claude-code, codex, openai or command), found none")
        })?;
    let kind = parse_kind(&kind_name).map_err(|e| anyhow!("--harness: {e}"))?;
    let model = f
        .one::<String>("model")
        .or(config.run.model.clone())
        .ok_or_else(|| anyhow!("expected --model, found none"))?;
    let mut harness = config.harness_settings(kind);
    if let Some(url) = f.one::<String>("base_url") {
        harness.base_url = Some(url);
    }
    if let Some(var) = f.one::<String>("api_key_env") {
        harness.api_key_env = Some(var);
    }
    if let Some(program) = f.one::<PathBuf>("program") {
        harness.program = Some(absolute(&program));
    }
    let args: Vec<String> = f.many("args");
    if !args.is_empty() {
        harness.args = args;
    }
    let mut r = RunRequest::new(skill, harness.clone(), model);
    r.runs = f.one("runs").or(config.run.runs).unwrap_or(1).max(1);
    r.jobs = f.one("jobs").or(config.run.jobs).unwrap_or(1).max(1);
    r.timeout_secs = f.one("timeout").or(config.run.timeout_secs);
    r.cases = f.many("cases");
    let support: Vec<PathBuf> = f.many("support");
    r.support_skills = if support.is_empty() {
        config.run.support_skills.clone()
    } else {
        support.iter().map(|p| absolute(p)).collect()
    };
    r.reuse_baselines = !f.flag("no_reuse") && config.run.reuse_baselines.unwrap_or(true);
    r.retries = config.run.retries.unwrap_or(2);
    r.resume = f.one::<i64>("resume").map(RunId);
    r.keep_workspaces = f.flag("keep_workspaces");
    r.seed = f.one("seed").unwrap_or(0);
    r.judge = judge(f, config, &harness)?;
    Ok(r)
}

fn judge(
    f: &Flags<'_>,
    config: &RunConfig,
    harness: &HarnessSettings,
) -> anyhow::Result<Option<JudgeSettings>> {
    let mode = match f.raw("judge_mode").first().map(String::as_str) {
        Some("independent") => Some(JudgeMode::Independent),
        Some("pairwise") => Some(JudgeMode::Pairwise),
        _ => None,
    };
    let judge_model = f.one::<String>("judge_model");
    let flag_endpoint = match (
        f.one::<String>("judge_url"),
        f.one::<String>("judge_harness"),
    ) {
        (Some(url), _) => Some(JudgeEndpoint::Openai {
            base_url: url,
            api_key_env: f.one("judge_api_key_env"),
        }),
        (None, Some(h)) => Some(JudgeEndpoint::Harness {
            settings: config
                .harness_settings(parse_kind(&h).map_err(|e| anyhow!("--judge-harness: {e}"))?),
        }),
        (None, None) => None,
    };
    let from_file = match config.judge_settings(judge_model.as_deref()) {
        Ok(j) => j,
        Err(_) if flag_endpoint.is_some() || harness.kind == HarnessKind::Openai => None,
        Err(e) => bail!("{e} (or pass --judge-url / --judge-harness)"),
    };
    let Some(model) = judge_model.or(from_file.as_ref().map(|j| j.model.clone())) else {
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

fn write_report(report: &RunReport, target: &str) -> anyhow::Result<()> {
    let (format, path) = target
        .split_once(':')
        .ok_or_else(|| anyhow!("--report: expected FORMAT:PATH, found {target:?}"))?;
    let text = match format {
        "json" => serde_json::to_string_pretty(report)? + "\n",
        "junit" => run_report::junit(report),
        "markdown" | "md" => run_report::markdown(report),
        other => bail!("--report: expected json, junit or markdown, found {other:?}"),
    };
    let path = Path::new(path);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
