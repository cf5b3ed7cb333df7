//! One module per LSP request or notification family, in the spirit of taplo-lsp. Handlers
//! never fail a request because a document is missing or broken: they log and answer with
//! nothing.

pub mod code_action;
pub mod code_lens;
pub mod commands;
pub mod completion;
pub mod diagnostics;
pub mod documents;
pub mod hover;
pub mod optimize;
pub mod regressions;

use std::sync::Arc;
use std::time::Duration;

use crate::state::State;

/// Ask the client to re-request code lenses, if it supports that.
pub async fn refresh_lenses(state: &State) {
    if !state.support().code_lens_refresh {
        return;
    }
    if let Err(e) = state.client.code_lens_refresh().await {
        tracing::debug!("codeLens/refresh not accepted: {e}");
    }
}

/// Watch the history for new results and refresh lenses when they land. Runs until the
/// session ends.
pub async fn poll_history(state: Arc<State>) {
    // the state at start is the baseline: results that land from now on refresh lenses
    let mut last = generation(&state).await;
    loop {
        let every = state.settings().history_poll_ms;
        let wait = if every == 0 { 1000 } else { every };
        tokio::time::sleep(Duration::from_millis(wait)).await;
        if every == 0 || state.shutdown_requested() {
            continue;
        }
        let generation = generation(&state).await;
        if generation != last {
            tracing::info!("history changed; refreshing code lenses");
            regressions::refresh_open(&state).await;
            refresh_lenses(&state).await;
        }
        last = generation;
    }
}

async fn generation(state: &State) -> Option<u64> {
    let history = state.history();
    tokio::task::spawn_blocking(move || history.generation())
        .await
        .ok()
        .flatten()
}
