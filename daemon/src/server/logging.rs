//! The daemon's structured log: one JSON object per line (tracing's JSON format), appended to
//! a file, since a background process has no terminal. `SKILLWATCH_LOG` sets the filter
//! (default `info`).

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

/// Send this process's tracing events to `path` (created 0600, appended). Returns an error
/// when the file cannot be opened; a subscriber already installed is left in place.
pub fn init(path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let filter = tracing_subscriber::EnvFilter::try_from_env("SKILLWATCH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .try_init();
    Ok(())
}
