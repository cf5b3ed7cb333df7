//! `skillwatch rejudge RUN`: ask a run's judge again about its stored outputs, without
//! re-running any agent; by default only the verdicts that are missing or failed.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Context, anyhow};
use skillwatch_core::plural::count;
use skillwatch_daemon::config::Config as DaemonConfig;
use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::runner::{
    JudgeEndpoint, RejudgeScope, RunConfig, RunEvent, RunReport, TrialTally, judge_client,
    parse_kind, rejudge, stored_judge,
};
use skillwatch_daemon::store::RunId;

use super::history_db::DbArgs;
use crate::run_report;

/// Arguments of `skillwatch rejudge`.
#[derive(clap::Args)]
#[command(
    after_help = "The run's own judge model is asked again; its endpoint is the one \
recorded with the run unless --judge-url or --judge-harness says otherwise. Exit status: 0 \
every verdict obtained, 1 some judge calls failed again, 2 bad usage or a failure."
)]
pub struct Args {
    /// The run id (see `skillwatch history SKILL`).
    run: i64,
    /// Judge every trial and pair again, not only those whose verdict is missing or failed.
    #[arg(long)]
    all: bool,
    /// OpenAI-compatible endpoint of the judge.
    #[arg(long, value_name = "URL")]
    judge_url: Option<String>,
    /// Variable holding the judge endpoint's API key [default: OPENAI_API_KEY].
    #[arg(long, value_name = "VAR")]
    judge_api_key_env: Option<String>,
    /// Judge through this harness (its skillwatch.toml settings).
    #[arg(long, value_name = "HARNESS")]
    judge_harness: Option<String>,
    /// skillwatch.toml for --judge-harness settings and the judge's price (`[prices]`)
    /// [default: the nearest one above the current folder].
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Print the updated report as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArgs,
}

/// Re-judge the run and print its updated summary.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.db.open_existing()?;
    store.check_intact()?;
    let run = RunId(args.run);
    let mut judge = stored_judge(&store, run)?
        .ok_or_else(|| anyhow!("run {run} was not judged (no judge model recorded); rejudge asks a run's own judge again"))?;
    let config_path = args
        .config
        .clone()
        .or_else(|| RunConfig::find(&std::env::current_dir().ok()?));
    if let Some(url) = &args.judge_url {
        judge.endpoint = JudgeEndpoint::Openai {
            base_url: url.clone(),
            api_key_env: args.judge_api_key_env.clone(),
        };
    } else if let Some(h) = &args.judge_harness {
        let config = match &config_path {
            Some(p) => RunConfig::load(p)?,
            None => RunConfig::default(),
        };
        judge.endpoint = JudgeEndpoint::Harness {
            settings: config
                .harness_settings(parse_kind(h).map_err(|e| anyhow!("--judge-harness: {e}"))?),
        };
    }
    // the calls are the run's spending, at the judge's price (`[prices]` over the table)
    let price = match &config_path {
        Some(p) => DaemonConfig::load(p)?,
        None => DaemonConfig::default(),
    }
    .judge_price(Some(&judge));
    let client = judge_client(&judge, &HostEnv::current(), std::env::temp_dir())?;
    let store = Arc::new(Mutex::new(store));
    let scope = if args.all {
        RejudgeScope::All
    } else {
        RejudgeScope::Failed
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let progress = Arc::new(|e: &RunEvent| {
        if let RunEvent::JudgeFailed {
            case,
            attempt,
            message,
            ..
        } = e
        {
            errln!("judge error on {case} #{attempt}: {message}");
        }
    });
    let tally = runtime.block_on(rejudge(
        store.clone(),
        run,
        (client, price),
        judge.mode,
        scope,
        progress,
    ))?;
    let store = store
        .lock()
        .map_err(|_| anyhow!("history store lock poisoned"))?;
    let report = RunReport::load(
        &store,
        run,
        TrialTally {
            judge_errors: tally.failures,
            ..TrialTally::default()
        },
        0,
    )?;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"rejudged": tally, "report": report})
            )?
        )?;
    } else {
        errln!(
            "rejudged run {run}: {}, {}, {}",
            count(tally.trials, "trial"),
            count(tally.pairs, "pair"),
            count(tally.failures, "judge error")
        );
        out!("{}", run_report::text(&report))?;
    }
    Ok(if tally.failures > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
