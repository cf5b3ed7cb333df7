//! `skillwatch daemon`: the per-user background process. It owns the history, runs the job
//! queue and the file watcher, and serves [`DaemonRpc`](skillwatch_protocol::DaemonRpc)
//! on a Unix socket.
//!
//! Safety of the socket, in depth: the runtime folder is private (0700, ours), the socket is
//! 0600, and every connection's peer uid (`SO_PEERCRED`) must equal ours or the connection is
//! closed unanswered. Frames are length-delimited with a size cap and decoded as JSON; a frame
//! that does not decode ends that one connection, never the daemon.
//!
//! A daemon started with an idle limit (editors start it so, on demand) stops by itself once it
//! has had no client connected and no job queued or running for that long.
//!
//! Any daemon stops by itself once its socket or its history file is gone or replaced (checked
//! every [`PRESENCE_PERIOD`]): a daemon whose socket was deleted can never be reached again
//! (the next client starts another beside it), and one whose history was deleted records into
//! a file nobody will read. A removed temporary folder (a test's, a CI job's) thus ends the
//! daemon that served it.
//!
//! Shutdown (SIGTERM, SIGINT, the `shutdown` call or the idle limit): stop accepting, let trials in flight
//! finish for a grace period, cancel the rest (their finished trials are already stored),
//! put their jobs back in the queue, remove the socket.

mod lock;
pub mod logging;
mod paths;
mod peer;
pub mod queries;
mod service;

pub use lock::{InstanceLock, LockError, holder_pid, is_held, terminate_holder};
pub use paths::{DaemonPaths, PathError, default_log, uid};
pub use service::{DaemonInfo, DaemonState, Service};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use skillwatch_protocol::{DaemonRpc, MAX_FRAME_BYTES};
use tarpc::serde_transport;
use tarpc::server::{BaseChannel, Channel};
use tarpc::tokio_serde::formats::Json;
use tarpc::tokio_util::codec::LengthDelimitedCodec;
use tokio::net::{UnixListener, UnixStream};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::events::EventLog;
use crate::scheduler::{Executor, Scheduler, SharedStore, lock as lock_store};
use crate::store::{self, Store, time::now_ms};
use crate::watch::Watcher;

/// How the daemon is started.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Socket, lock and runtime folder.
    pub paths: DaemonPaths,
    /// The history database.
    pub db: PathBuf,
    /// The log file (for `status`; logging itself is set up by [`logging::init`]).
    pub log: Option<PathBuf>,
    /// Workspace roots to watch, besides those remembered from earlier runs.
    pub roots: Vec<PathBuf>,
    /// How long trials in flight may take to finish at shutdown before they are cancelled.
    pub grace: Duration,
    /// Exit after this long with no client connected and no job queued or running (a daemon
    /// an editor started on demand); `None`: run until stopped.
    pub idle_exit: Option<Duration>,
    /// Unwatch and forget a root nobody has used for this long.
    pub forget_roots_after: Duration,
}

/// How long a root may go unused before it is forgotten, unless `--forget-roots-after` says.
pub const DEFAULT_FORGET_ROOTS_AFTER: Duration = Duration::from_secs(30 * 24 * 3600);

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The runtime folder is unusable.
    #[error(transparent)]
    Paths(#[from] PathError),
    /// Another daemon runs.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The history database could not be opened.
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// The socket could not be set up.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On which file.
        path: PathBuf,
        /// The OS reason.
        source: std::io::Error,
    },
}

/// Run the daemon until it is told to stop. Jobs run on the executor `executor` builds from
/// the daemon's history handle.
pub async fn serve<E>(options: ServeOptions, executor: E) -> Result<(), ServerError>
where
    E: FnOnce(SharedStore) -> Arc<dyn Executor>,
{
    options.paths.prepare()?;
    let instance_lock = InstanceLock::acquire(&options.paths.lock)?;
    own_trial_processes(&options.paths.socket);
    let store: SharedStore = Arc::new(Mutex::new(Store::open(&options.db)?));
    let executor = executor(store.clone());
    let instance = format!("{}-{}", std::process::id(), now_ms());
    let events = Arc::new(EventLog::new(instance.clone()));
    let scheduler = Scheduler::start(store.clone(), executor, events.clone())?;
    let watcher = Watcher::start(scheduler.clone(), events.clone());
    watch_roots(&watcher, &store, &options.roots, options.forget_roots_after);
    let listener = bind(&options.paths.socket)?;
    let presence = Presence::of(&options.paths.socket, &options.db);
    let state = Arc::new(DaemonState {
        store,
        scheduler: scheduler.clone(),
        watcher,
        events,
        shutdown: CancellationToken::new(),
        clients: AtomicUsize::new(0),
        info: DaemonInfo {
            instance,
            started_ms: now_ms(),
            socket: options.paths.socket.clone(),
            db: options.db.clone(),
            log: options.log.clone(),
            forget_roots_after: options.forget_roots_after,
        },
    });
    tracing::info!(pid = std::process::id(), socket = %options.paths.socket.display(), db = %options.db.display(), "daemon started");
    if let Some(after) = options.idle_exit {
        tokio::spawn(exit_when_idle(state.clone(), after));
    }
    tokio::spawn(exit_when_orphaned(state.clone(), presence.clone()));
    tokio::spawn(forget_unused_roots(
        state.clone(),
        options.forget_roots_after,
    ));
    accept_until_stopped(listener, state.clone()).await?;
    tracing::info!("stopping");
    // (a socket some later daemon bound at the same path is that daemon's)
    if presence.socket_is_ours() {
        let _ = std::fs::remove_file(&options.paths.socket);
    }
    scheduler.shutdown(options.grace).await;
    tracing::info!("stopped");
    drop(instance_lock);
    Ok(())
}

/// Make this daemon the owner of its trials' processes: their reaper, and the one that kills
/// what an earlier daemon of the same socket left running (before any trial resumes).
fn own_trial_processes(socket: &std::path::Path) {
    use crate::harness::trial_procs;
    trial_procs::set_owner(&format!("daemon {}", socket.display()));
    if let Err(e) = trial_procs::become_subreaper() {
        tracing::warn!(error = %e, "cannot become the subreaper of trial processes; orphans of a trial go to PID 1 (still killed by their tag)");
    }
    let killed = trial_procs::kill_leftovers();
    if killed > 0 {
        tracing::warn!(
            killed,
            "killed trial processes an earlier daemon left running"
        );
    }
}

/// Watch the roots asked for and those remembered, forgetting remembered ones that are gone
/// or that nobody has used for `forget_after` (a root asked for now counts as used).
fn watch_roots(watcher: &Watcher, store: &SharedStore, roots: &[PathBuf], forget_after: Duration) {
    let remembered = lock_store(store).watched_roots().unwrap_or_default();
    let cutoff =
        now_ms().saturating_sub(i64::try_from(forget_after.as_millis()).unwrap_or(i64::MAX));
    for old in &remembered {
        let asked = roots
            .iter()
            .any(|r| r.canonicalize().is_ok_and(|r| r == old.path));
        let why = if old.used_ms < cutoff && !asked {
            Some(format!(
                "last used {} (--forget-roots-after {})",
                crate::store::time::format_age(old.used_ms, now_ms()),
                format_duration(forget_after)
            ))
        } else {
            watcher
                .add_remembered(&old.path, old.used_ms)
                .err()
                .map(|e| e.to_string())
        };
        if let Some(why) = why {
            tracing::info!(root = %old.path.display(), "forgetting a remembered root: {why}");
            let _ = lock_store(store).remove_watched_root(&old.path);
        }
    }
    for root in roots {
        if let Err(e) = watcher.add_roots(std::slice::from_ref(root)) {
            tracing::warn!("not watching {}: {e}", root.display());
        }
    }
}

/// Forget, now and then, the roots nobody has used for `after`.
async fn forget_unused_roots(state: Arc<DaemonState>, after: Duration) {
    let every = (after / 4).clamp(Duration::from_secs(1), Duration::from_secs(3600));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = state.shutdown.cancelled() => return,
        }
        let watcher = state.watcher.clone();
        let _ = tokio::task::spawn_blocking(move || watcher.forget_unused(after)).await;
    }
}

/// A duration as `--forget-roots-after` takes it: `30d`, `12h`, `5m`, `90s`.
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs();
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] {
        if secs >= size && secs.is_multiple_of(size) {
            return format!("{}{unit}", secs / size);
        }
    }
    format!("{secs}s")
}

/// Read a duration such as `30d`, `12h`, `5m`, `90s` (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("expected a duration such as 30d, 12h, 5m or 90s, found `{text}`"))?;
    let size = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "expected a duration such as 30d, 12h, 5m or 90s, found the unit `{unit}` in `{text}`"
            ));
        }
    };
    Ok(Duration::from_secs(n.saturating_mul(size)))
}

/// Bind the socket (replacing a stale one: we hold the lock, so no daemon serves it) with
/// mode 0600.
fn bind(socket: &Path) -> Result<UnixListener, ServerError> {
    let io = |what, source| ServerError::Io {
        what,
        path: socket.to_path_buf(),
        source,
    };
    match std::fs::remove_file(socket) {
        Ok(()) => tracing::info!("removed a stale socket"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("removing the stale socket", e)),
    }
    let listener = UnixListener::bind(socket).map_err(|e| io("binding", e))?;
    paths::make_private(socket).map_err(|e| io("restricting", e))?;
    Ok(listener)
}

/// How often a refused peer uid is logged at most.
const REFUSAL_LOG_PERIOD: Duration = Duration::from_secs(60);
/// Stop the daemon once it has had no client and no live job for `after`.
async fn exit_when_idle(state: Arc<DaemonState>, after: Duration) {
    let every = (after / 4).clamp(Duration::from_millis(100), Duration::from_secs(5));
    let mut idle_since = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(every).await;
        let connected = state.clients.load(Ordering::SeqCst) > 0;
        let jobs = lock_store(&state.store)
            .live_job_counts()
            .map_or(true, |live| live != (0, 0));
        if connected || jobs {
            idle_since = tokio::time::Instant::now();
        } else if idle_since.elapsed() >= after {
            tracing::info!("idle for {after:?} (no client, no job): exiting");
            state.shutdown.cancel();
            return;
        }
    }
}

/// How often a daemon checks that its socket and history are still in place.
pub const PRESENCE_PERIOD: Duration = Duration::from_secs(2);

/// The files a daemon is found and read by, as they were when it started: (device, inode) of
/// the socket it bound and of the history it opened.
#[derive(Debug, Clone)]
struct Presence {
    socket: PathBuf,
    socket_id: Option<(u64, u64)>,
    db: PathBuf,
    db_id: Option<(u64, u64)>,
}

impl Presence {
    fn of(socket: &Path, db: &Path) -> Presence {
        Presence {
            socket: socket.to_path_buf(),
            socket_id: file_id(socket),
            db: db.to_path_buf(),
            db_id: file_id(db),
        }
    }

    fn socket_is_ours(&self) -> bool {
        self.socket_id.is_some() && file_id(&self.socket) == self.socket_id
    }

    /// What is gone or replaced, if anything.
    fn missing(&self) -> Option<String> {
        let lost = |path: &Path, id: Option<(u64, u64)>, what: &str| {
            (id.is_some() && file_id(path) != id).then(|| {
                let how = if path.exists() { "replaced" } else { "removed" };
                format!("its {what} {} was {how}", path.display())
            })
        };
        lost(&self.socket, self.socket_id, "socket")
            .or_else(|| lost(&self.db, self.db_id, "history"))
    }
}

fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.dev(), meta.ino()))
}

/// Stop the daemon once its socket or history is gone or replaced (see the module doc).
async fn exit_when_orphaned(state: Arc<DaemonState>, presence: Presence) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(PRESENCE_PERIOD) => {}
            _ = state.shutdown.cancelled() => return,
        }
        if let Some(why) = presence.missing() {
            tracing::warn!(
                "{why}: no client can reach this daemon or read what it records; exiting"
            );
            state.shutdown.cancel();
            return;
        }
    }
}

async fn accept_until_stopped(
    listener: UnixListener,
    state: Arc<DaemonState>,
) -> Result<(), ServerError> {
    let refusals = Arc::new(logging::Throttle::new(REFUSAL_LOG_PERIOD));
    let signal_io = |source| ServerError::Io {
        what: "installing a signal handler for",
        path: PathBuf::from("SIGTERM/SIGINT"),
        source,
    };
    let mut term = signal(SignalKind::terminate()).map_err(signal_io)?;
    let mut int = signal(SignalKind::interrupt()).map_err(signal_io)?;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    state.clients.fetch_add(1, Ordering::SeqCst);
                    let state = state.clone();
                    let refusals = refusals.clone();
                    tokio::spawn(async move {
                        handle_connection(stream, state.clone(), refusals).await;
                        state.clients.fetch_sub(1, Ordering::SeqCst);
                    });
                }
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = term.recv() => { tracing::info!("SIGTERM"); break; }
            _ = int.recv() => { tracing::info!("SIGINT"); break; }
            _ = state.shutdown.cancelled() => break,
        }
    }
    Ok(())
}

/// Serve one client: refuse other users (logged at most once a minute per uid), then answer
/// its calls until it hangs up or sends a frame that does not decode.
async fn handle_connection(
    stream: UnixStream,
    state: Arc<DaemonState>,
    refusals: Arc<logging::Throttle<Option<u32>>>,
) {
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == uid() => {}
        Ok(cred) => {
            if let Some(quiet) = refusals.admit(Some(cred.uid())) {
                tracing::warn!(
                    peer_uid = cred.uid(),
                    peer_pid = cred.pid(),
                    refused_unlogged = quiet,
                    "refused a connection from another user (logged at most once a minute per user)"
                );
            }
            return;
        }
        Err(e) => {
            if let Some(quiet) = refusals.admit(None) {
                tracing::warn!(
                    refused_unlogged = quiet,
                    "refused a connection whose peer is unknown: {e}"
                );
            }
            return;
        }
    }
    let (stream, gone) = peer::Watched::new(stream);
    let framed = LengthDelimitedCodec::builder()
        .max_frame_length(MAX_FRAME_BYTES)
        .new_framed(stream);
    let transport = serde_transport::new(framed, Json::default());
    let serving = BaseChannel::with_defaults(transport)
        .execute(Service(state).serve())
        .for_each(|response| async move {
            tokio::spawn(response);
        });
    // (a client gone during a long poll is gone now, not when its answer fails: see `peer`)
    tokio::select! {
        () = serving => tracing::debug!("client disconnected"),
        () = gone.cancelled() => tracing::debug!("client hung up; its calls in flight are dropped"),
    }
}
