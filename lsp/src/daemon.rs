//! The language server's link to the skillwatch daemon: connect when the first skill file opens
//! (starting the daemon when none runs, with an idle limit so it ends after the editor), ask
//! it to watch the folders that hold open skills (never a folder without one), follow its
//! events (runs that finished, model comparisons) to refresh lenses and regression warnings,
//! and reconnect when it comes back. A server that opens no skill file starts no daemon. While
//! there is no daemon, lenses read the history database directly (read-only) and lens commands
//! run the CLI.

use std::sync::Arc;
use std::time::Duration;

use skillwatch_daemon::client::{self, StartCommand};
use skillwatch_daemon::server::DaemonPaths;
use skillwatch_protocol::{EventKind, MAX_EVENT_WAIT_MS};

use crate::handlers::{refresh_lenses, regressions};
use crate::history::DaemonHistory;
use crate::state::State;

/// Pause between reconnection attempts after the daemon went away.
const RECONNECT_EVERY: Duration = Duration::from_secs(5);

/// Whether the settings and environment allow the daemon (`SKILLWATCH_NO_DAEMON=1` forbids it).
pub fn enabled(state: &State) -> bool {
    let forbidden = std::env::var("SKILLWATCH_NO_DAEMON")
        .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"));
    state.settings().daemon && !forbidden
}

/// Start the daemon link unless it runs (or the daemon is off): at the first skill file, or
/// when a run is asked for.
pub fn ensure_link(state: &Arc<State>) {
    if enabled(state) && state.start_link() {
        let link = tokio::spawn(link(state.clone()));
        state.add_background(link.abort_handle());
    }
}

/// A skill file opened: link to the daemon, and have it watch the file's root when linked.
pub fn skill_opened(state: &Arc<State>) {
    ensure_link(state);
    if let Some(daemon) = state.daemon() {
        let state = state.clone();
        tokio::spawn(async move { watch_skill_roots(&state, &daemon).await });
    }
}

/// Starts tried before the first connection: a start that failed for a passing reason (a
/// machine under load, another process holding the new history file) is tried again, one
/// that fails every time is not tried forever.
const START_ATTEMPTS: u32 = 3;

/// Keep a daemon connection for the session: until the first connection, an attempt may start
/// the daemon; after it, attempts only reconnect (a daemon the user stopped stays stopped).
async fn link(state: Arc<State>) {
    let mut starts_left = START_ATTEMPTS;
    loop {
        if !enabled(&state) {
            return;
        }
        let may_start = starts_left > 0;
        starts_left = starts_left.saturating_sub(1);
        match connect(&state, may_start).await {
            Ok(daemon) => {
                starts_left = 0;
                tracing::info!(db = %daemon.db.display(), "connected to the skillwatch daemon");
                state.set_daemon(Some(daemon.clone()));
                on_connected(&state, &daemon).await;
                follow_events(&state, &daemon).await;
                state.set_daemon(None);
                state.forget_asked_roots();
                tracing::warn!("lost the skillwatch daemon; reading the history directly");
                refresh_lenses(&state).await;
            }
            Err(e) => tracing::info!("no skillwatch daemon: {e}"),
        }
        tokio::time::sleep(RECONNECT_EVERY).await;
    }
}

async fn connect(state: &State, may_start: bool) -> Result<DaemonHistory, String> {
    let paths = DaemonPaths::for_user();
    let client = if may_start {
        let db = state
            .history_db()
            .ok_or("no history database path is known (no HOME?)")?;
        let settings = state.settings();
        let mut args = vec!["--db".into(), db.display().to_string()];
        if settings.daemon_idle_secs > 0 {
            args.extend([
                "--idle-exit-secs".into(),
                settings.daemon_idle_secs.to_string(),
            ]);
        }
        let start = StartCommand {
            program: state.cli_path(),
            args,
        };
        client::connect_or_start(&paths, &start).await
    } else {
        client::connect_checked(&paths.socket).await
    }
    .map_err(|e| e.to_string())?;
    let status = client
        .status(client::context(Duration::from_secs(10)))
        .await
        .map_err(|e| e.to_string())?;
    if let Some(wanted) = state.chosen_history_db()
        && !same_file(&wanted, &status.db)
    {
        return Err(format!(
            "the running daemon serves {}, the settings (or SKILLWATCH_DB) name {}",
            status.db.display(),
            wanted.display()
        ));
    }
    Ok(DaemonHistory {
        client,
        runtime: tokio::runtime::Handle::current(),
        db: status.db,
    })
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

async fn on_connected(state: &Arc<State>, daemon: &DaemonHistory) {
    watch_skill_roots(state, daemon).await;
    regressions::refresh_open(state).await;
    refresh_lenses(state).await;
}

/// Ask the daemon to watch the roots of the open skills it does not watch for us yet, one by
/// one (a root it refuses does not keep the others from being watched).
async fn watch_skill_roots(state: &State, daemon: &DaemonHistory) {
    for root in state.roots_to_ask(state.skill_roots()) {
        let ctx = client::context(Duration::from_secs(30));
        match daemon.client.watch_roots(ctx, vec![root.clone()]).await {
            Ok(Ok(_)) => {
                tracing::info!(root = %root.display(), "the daemon watches the skills here")
            }
            Ok(Err(e)) => tracing::warn!("the daemon does not watch {}: {e}", root.display()),
            Err(e) => tracing::warn!("asking the daemon to watch {} failed: {e}", root.display()),
        }
    }
}

/// Read the daemon's events until the connection fails.
async fn follow_events(state: &Arc<State>, daemon: &DaemonHistory) {
    let mut cursor = 0;
    let mut instance = None;
    loop {
        let ctx = client::context(Duration::from_millis(MAX_EVENT_WAIT_MS + 10_000));
        let batch = match daemon
            .client
            .next_events(ctx, cursor, MAX_EVENT_WAIT_MS)
            .await
        {
            Ok(batch) => batch,
            Err(e) => {
                tracing::debug!("event stream ended: {e}");
                return;
            }
        };
        if instance.as_ref().is_some_and(|i| i != &batch.instance) {
            // the daemon restarted behind the same socket: start over with the new one
            return;
        }
        instance = Some(batch.instance.clone());
        cursor = batch.next;
        let finished = batch.events.iter().any(|e| {
            matches!(
                e.kind,
                EventKind::JobFinished { .. }
                    | EventKind::Compared { .. }
                    | EventKind::TriggerFinished { .. }
            )
        });
        if finished || batch.missed {
            regressions::refresh_open(state).await;
            refresh_lenses(state).await;
        }
    }
}
