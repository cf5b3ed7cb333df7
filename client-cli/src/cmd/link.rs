//! How a command reaches the history: through the running daemon (started on demand), or
//! in-process with `--no-daemon` (or `SKILLWATCH_NO_DAEMON=1`), or in-process when the running
//! daemon serves another database than the one asked for.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use skillwatch_daemon::client::{self, StartCommand};
use skillwatch_daemon::server::DaemonPaths;
use skillwatch_protocol::DaemonRpcClient;

use super::history_db::DbArgs;

/// `--no-daemon`, shared by the commands that can go through the daemon.
#[derive(clap::Args, Debug, Clone)]
pub struct LinkArgs {
    /// Work in this process instead of through the daemon (which is otherwise started on
    /// demand). Also set by SKILLWATCH_NO_DAEMON=1.
    #[arg(long, env = "SKILLWATCH_NO_DAEMON", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_daemon: bool,
}

/// A connected daemon with the runtime its client lives on.
pub struct Daemon {
    /// The runtime driving the client's connection.
    pub runtime: tokio::runtime::Runtime,
    /// The client.
    pub rpc: DaemonRpcClient,
}

impl Daemon {
    /// Run an RPC future to completion.
    pub fn call<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}

/// A context for an ordinary call.
pub fn ctx() -> client::Context {
    client::context(Duration::from_secs(60))
}

/// A single-threaded runtime for client calls.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The daemon for `db` (started on demand), or `None` to work in-process: `--no-daemon`, or a
/// running daemon that serves another database than the one named by `--db` or
/// `SKILLWATCH_DB` (said on stderr). With neither, the running daemon's history is used.
pub fn daemon_for(link: &LinkArgs, db: &DbArgs) -> anyhow::Result<Option<Daemon>> {
    if link.no_daemon {
        return Ok(None);
    }
    if db.db.is_none()
        && let Some(daemon) = running_daemon()?
    {
        return Ok(Some(daemon));
    }
    let db = db.path()?;
    let runtime = runtime()?;
    let paths = DaemonPaths::for_user();
    let start = start_command(&db)?;
    let rpc = runtime
        .block_on(client::connect_or_start(&paths, &start))
        .context("reaching the skillwatch daemon (use --no-daemon to work without it)")?;
    let status = runtime
        .block_on(rpc.status(ctx()))
        .context("asking the skillwatch daemon for its status")?;
    if !same_file(&status.db, &db) {
        errln!(
            "note: the running daemon uses the history {}, not {}; working in-process",
            status.db.display(),
            db.display()
        );
        return Ok(None);
    }
    Ok(Some(Daemon { runtime, rpc }))
}

/// Like [`daemon_for`], for commands that only read: a database that does not exist yet is
/// not created by starting a daemon on it (the in-process path says it is missing).
pub fn daemon_for_reading(link: &LinkArgs, db: &DbArgs) -> anyhow::Result<Option<Daemon>> {
    if link.no_daemon {
        return Ok(None);
    }
    let missing = !db.path()?.exists();
    if missing && (db.db.is_some() || running_daemon()?.is_none()) {
        return Ok(None);
    }
    daemon_for(link, db)
}

/// The running daemon, if any, without starting one.
pub fn running_daemon() -> anyhow::Result<Option<Daemon>> {
    let runtime = runtime()?;
    let paths = DaemonPaths::for_user();
    match runtime.block_on(client::connect_checked(&paths.socket)) {
        Ok(rpc) => Ok(Some(Daemon { runtime, rpc })),
        Err(client::ClientError::NotRunning { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `skillwatch daemon --db DB`, with this very binary.
pub fn start_command(db: &Path) -> anyhow::Result<StartCommand> {
    Ok(StartCommand {
        program: std::env::current_exe().context("finding the skillwatch binary")?,
        args: vec!["--db".into(), absolute(db).display().to_string()],
    })
}

/// `path` made absolute against the working directory (the daemon has another one).
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir()
        .map(|d| d.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

fn same_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| {
        p.canonicalize()
            .or_else(|_| {
                // the file may not exist yet: compare its folder
                let parent = p.parent().unwrap_or(Path::new(".")).canonicalize()?;
                Ok::<_, std::io::Error>(parent.join(p.file_name().unwrap_or_default()))
            })
            .unwrap_or_else(|_| absolute(p))
    };
    canon(a) == canon(b)
}
