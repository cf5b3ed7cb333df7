//! `skillwatch lsp`: the language server, speaking LSP over stdin/stdout. Editors start it
//! (editors/vscode, editors/nvim); it needs no daemon, network or model for diagnostics.

use std::process::ExitCode;

use anyhow::Context;
use skillwatch_lsp::Ending;

/// Arguments of `skillwatch lsp`.
#[derive(clap::Args)]
pub struct Args {
    /// Accepted for editors that pass it (VS Code's language client does); stdio is the only
    /// transport.
    #[arg(long)]
    stdio: bool,
}

/// Serve one LSP session on stdin/stdout. Exit code 0 after `shutdown` + `exit`, 1 when the
/// client went away without `shutdown` (as the LSP specification asks).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _ = args.stdio;
    init_logging();
    // Idle blocking threads (history reads, lenses, hover) end soon (tokio keeps them 10 s by
    // default): the allocator gives a thread's pages back when the thread ends, so memory
    // follows closed documents down. Checks have threads of their own that stay
    // (skillwatch_lsp::check_threads).
    skillwatch_lsp::memory::few_heaps();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_keep_alive(std::time::Duration::from_secs(1))
        .build()
        .context("starting the async runtime for the language server")?;
    let ending = runtime.block_on(skillwatch_lsp::serve_stdio());
    // stdin is read on a blocking thread that cannot be interrupted: do not wait for it
    runtime.shutdown_background();
    Ok(match ending {
        Ending::Clean => ExitCode::SUCCESS,
        Ending::Abrupt => ExitCode::from(1),
    })
}

/// Logs go to stderr (stdout carries the protocol); `SKILLWATCH_LOG` sets the filter
/// (default `warn`). Write errors are ignored: an editor that closed stderr must not crash us.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SKILLWATCH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .log_internal_errors(false)
        .try_init();
}
