//! Writing to stdout and stderr without `println!`, which panics when the reader is gone
//! (`skillwatch daemon status | head -1` closes the pipe after one line).
//!
//! A closed stdout is the reader having had enough: not an error, never a panic; the command
//! goes on to its own exit status. Any other write error (a full disk behind a redirect) is an
//! error. stderr carries progress and diagnostics on a best-effort basis: a failed write there
//! is dropped. The crate denies `print_stdout` and `print_stderr`, so every write goes
//! through here (`outln!`, `out!`, `errln!`).

use std::io::Write;

use anyhow::Context;

/// Write `text` to stdout.
pub fn stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("writing to stdout"),
        _ => Ok(()),
    }
}

/// Write `text` to stderr, dropping a failure.
pub fn stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}
