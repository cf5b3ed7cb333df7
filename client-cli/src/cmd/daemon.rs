//! `skillwatch daemon`: run the per-user daemon in the foreground, or `start` it in the
//! background, `stop` it, or ask its `status`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;
use skillwatch_core::plural::count;
use skillwatch_daemon::client;
use skillwatch_daemon::scheduler::RunnerExecutor;
use skillwatch_daemon::server::{
    self, DaemonPaths, ServeOptions, holder_pid, is_held, logging, terminate_holder,
};
use skillwatch_daemon::store::time::{format_age, now_ms};
use skillwatch_protocol::DaemonStatus;

use super::history_db::DbArgs;
use super::link::{absolute, ctx, running_daemon, runtime, start_command};

/// Arguments of `skillwatch daemon`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// Run in the foreground (the same as `skillwatch daemon` alone).
    Run(ServeArgs),
    /// Start in the background unless one runs already, then print its status.
    Start(StartArgs),
    /// Stop the running daemon gracefully (trials in flight may finish; jobs are kept).
    Stop(JsonArg),
    /// Is a daemon running, and what is it doing?
    Status(JsonArg),
    /// Stop watching roots and forget them (`daemon status` lists the roots).
    Unwatch(UnwatchArgs),
}

#[derive(clap::Args, Debug)]
struct UnwatchArgs {
    /// A watched root, as `daemon status` lists it (repeatable).
    #[arg(value_name = "PATH", required = true)]
    roots: Vec<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// How the daemon runs.
#[derive(clap::Args, Debug, Clone)]
struct ServeArgs {
    /// A workspace root to watch for saved skills and skillwatch.toml changes (repeatable;
    /// roots are remembered across restarts).
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// The log file [default: <user state dir>/skillwatch/daemon.log].
    #[arg(long, value_name = "PATH")]
    log: Option<PathBuf>,
    /// Seconds trials in flight may take to finish when the daemon stops, before they are
    /// cancelled (their jobs are re-queued either way).
    #[arg(long, default_value_t = 20)]
    grace_secs: u64,
    /// Exit after this many seconds with no client connected and no job queued or running
    /// (editors start the daemon with it); without it the daemon runs until stopped.
    #[arg(long, value_name = "SECS")]
    idle_exit_secs: Option<u64>,
    /// Unwatch and forget a root nobody has used for this long: no editor asked for it or
    /// showed a skill under it, and nothing under it was saved (30d, 12h, 5m, 90s).
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = server::parse_duration)]
    forget_roots_after: Duration,
    #[command(flatten)]
    db: DbArgs,
}

#[derive(clap::Args, Debug)]
struct StartArgs {
    #[command(flatten)]
    serve: ServeArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct JsonArg {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Dispatch the action.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        None => foreground(args.serve),
        Some(Action::Run(serve)) => foreground(serve),
        Some(Action::Start(start)) => start_background(start),
        Some(Action::Stop(a)) => stop(a.json),
        Some(Action::Status(a)) => status(a.json),
        Some(Action::Unwatch(a)) => unwatch(&a),
    }
}

fn foreground(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let db = absolute(&args.db.path()?);
    let log = args.log.clone().or_else(server::default_log);
    if let Some(log) = &log {
        logging::init(log).with_context(|| format!("opening the log file {}", log.display()))?;
    }
    let paths = DaemonPaths::for_user();
    let options = ServeOptions {
        paths: paths.clone(),
        db: db.clone(),
        log: log.clone(),
        roots: args.roots.iter().map(|r| absolute(r)).collect(),
        grace: Duration::from_secs(args.grace_secs),
        idle_exit: args
            .idle_exit_secs
            .filter(|s| *s > 0)
            .map(Duration::from_secs),
        forget_roots_after: args.forget_roots_after,
    };
    // a daemon started on demand has no terminal: its stderr is for start errors only
    if std::io::stderr().is_terminal() {
        errln!(
            "skillwatch daemon: socket {}, history {}, log {}",
            paths.socket.display(),
            db.display(),
            log.as_ref()
                .map_or_else(|| "none".into(), |l| l.display().to_string())
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(16)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let served = runtime.block_on(server::serve(options, |store| RunnerExecutor::new(store)));
    if let Err(e) = &served {
        tracing::error!("the daemon stopped on an error: {e}");
    }
    served?;
    runtime.shutdown_timeout(Duration::from_secs(5));
    Ok(ExitCode::SUCCESS)
}

fn start_background(args: StartArgs) -> anyhow::Result<ExitCode> {
    let db = absolute(&args.serve.db.path()?);
    let mut start = start_command(&db)?;
    for root in &args.serve.roots {
        start
            .args
            .extend(["--root".into(), absolute(root).display().to_string()]);
    }
    if let Some(log) = &args.serve.log {
        start
            .args
            .extend(["--log".into(), absolute(log).display().to_string()]);
    }
    start.args.extend([
        "--grace-secs".into(),
        args.serve.grace_secs.to_string(),
        "--forget-roots-after".into(),
        server::format_duration(args.serve.forget_roots_after),
    ]);
    let rt = runtime()?;
    let paths = DaemonPaths::for_user();
    let rpc = rt.block_on(client::connect_or_start(&paths, &start))?;
    if !args.serve.roots.is_empty() {
        let roots = args.serve.roots.iter().map(|r| absolute(r)).collect();
        rt.block_on(rpc.watch_roots(ctx(), roots))??;
    }
    let status = rt.block_on(rpc.status(ctx()))?;
    print_status(&status, args.json)?;
    Ok(ExitCode::SUCCESS)
}

fn stop(json: bool) -> anyhow::Result<ExitCode> {
    let paths = DaemonPaths::for_user();
    let pid = match running_daemon() {
        Ok(Some(daemon)) => {
            let pid = daemon.call(daemon.rpc.status(ctx()))?.pid;
            daemon.call(daemon.rpc.shutdown(ctx()))?;
            Some(pid)
        }
        // a daemon of another version, or one that does not answer: ask the OS
        Ok(None) | Err(_) if is_held(&paths.lock) => {
            // it holds the lock but does not answer: ask the OS
            let Some(pid) = terminate_holder(&paths.lock) else {
                bail!(
                    "a daemon holds {} but neither answers nor can be signalled (pid {:?})",
                    paths.lock.display(),
                    holder_pid(&paths.lock)
                );
            };
            Some(pid)
        }
        Ok(None) => None,
        Err(e) => return Err(e),
    };
    let Some(pid) = pid else {
        report(
            json,
            json!({"running": false}),
            "no skillwatch daemon is running",
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while is_held(&paths.lock) {
        if Instant::now() > deadline {
            bail!("the daemon (pid {pid}) did not stop within 120 s; see its log");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    report(
        json,
        json!({"running": false, "stopped": pid}),
        &format!("stopped the skillwatch daemon (pid {pid})"),
    )?;
    Ok(ExitCode::SUCCESS)
}

fn status(json: bool) -> anyhow::Result<ExitCode> {
    match running_daemon()? {
        Some(daemon) => {
            let status = daemon.call(daemon.rpc.status(ctx()))?;
            print_status(&status, json)?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            report(
                json,
                json!({"running": false}),
                "no skillwatch daemon is running",
            )?;
            Ok(ExitCode::from(1))
        }
    }
}

fn unwatch(args: &UnwatchArgs) -> anyhow::Result<ExitCode> {
    let Some(daemon) = running_daemon()? else {
        bail!("no skillwatch daemon is running: nothing is watched");
    };
    let roots: Vec<PathBuf> = args.roots.iter().map(|r| absolute(r)).collect();
    let left = daemon.call(daemon.rpc.unwatch_roots(ctx(), roots.clone()))??;
    if args.json {
        outln!("{}", json!({"unwatched": roots, "roots": left}))?;
        return Ok(ExitCode::SUCCESS);
    }
    for root in &roots {
        outln!("no longer watching {}", root.display())?;
    }
    outln!("{} left", count(left.len() as u64, "watched root"))?;
    Ok(ExitCode::SUCCESS)
}

fn report(json: bool, value: serde_json::Value, text: &str) -> anyhow::Result<()> {
    if json {
        outln!("{value}")?;
    } else {
        outln!("{text}")?;
    }
    Ok(())
}

fn print_status(status: &DaemonStatus, json: bool) -> anyhow::Result<()> {
    if json {
        let mut value = serde_json::to_value(status)?;
        // `running` says the daemon runs (false when none does), which hides the status's
        // count of running jobs: the counts go under `jobs` too
        value["jobs"] = json!({"queued": status.queued, "running": status.running});
        value["running"] = json!(true);
        outln!("{}", serde_json::to_string_pretty(&value)?)?;
        return Ok(());
    }
    outln!(
        "skillwatch daemon {} running (pid {}, up {})",
        status.version,
        status.pid,
        format_age(status.started_ms, now_ms()).trim_end_matches(" ago")
    )?;
    outln!("  socket   {}", status.socket.display())?;
    outln!("  history  {}", status.db.display())?;
    if let Some(log) = &status.log {
        outln!("  log      {}", log.display())?;
    }
    outln!(
        "  jobs     {} queued, {} running",
        status.queued,
        status.running
    )?;
    outln!("  clients  {} connected besides this one", status.clients)?;
    let b = &status.budget;
    let limit = |v: Option<String>| v.unwrap_or_else(|| "no limit".into());
    outln!(
        "  today    {} ({}), ${:.2} ({})",
        count(b.trials_today, "trial"),
        limit(b.max_trials.map(|m| format!("max {m}"))),
        b.cost_today_usd,
        limit(b.max_cost_usd.map(|m| format!("max ${m:.2}")))
    )?;
    print_roots(status)
}

fn print_roots(status: &DaemonStatus) -> anyhow::Result<()> {
    if status.roots.is_empty() {
        outln!(
            "  watching nothing (editors add the folders of the skills they open; `skillwatch daemon start --root DIR` adds one)"
        )?;
    }
    let now = now_ms();
    for root in &status.roots {
        match status.watched.iter().find(|w| &w.path == root) {
            Some(w) => outln!(
                "  watching {} ({}{}, used {})",
                root.display(),
                count(w.folders, "folder"),
                if w.complete { "" } else { ", incomplete" },
                format_age(w.used_ms, now)
            )?,
            None => outln!("  watching {}", root.display())?,
        }
    }
    if let Some(after) = status.forget_roots_after_secs
        && !status.roots.is_empty()
    {
        outln!(
            "  a root unused for {} is forgotten; `skillwatch daemon unwatch PATH` forgets one now",
            server::format_duration(Duration::from_secs(after))
        )?;
    }
    if let Some(problem) = &status.watch_problem {
        outln!("  warning: {problem}")?;
    }
    Ok(())
}
