//! Tests that need something besides Rust and this repository (a Python venv, the real agent
//! CLIs, Neovim, Chromium, Harbor with Docker, root, /proc), under one rule: when it is
//! there the test runs; when it is missing the test fails in CI (`CI` set, as CI services
//! and `.ci/run` set it: a CI run must run everything) and elsewhere is skipped visibly,
//! naming what is missing and how to get it. It never passes silently.
//!
//! "Visibly": the banner goes straight to the process's stderr, which the test harness does
//! not capture, so it shows among the results even though the test counts as passed; and when
//! `SKILLWATCH_SKIPPED` names a file (scripts/test sets it), a line is added there, which
//! scripts/test prints after the tests.

use std::io::Write;

/// How to get what the Harbor tests need.
pub const HARBOR_HOW: &str = "scripts/harbor-env sets it up (as root: apt-get install docker.io \
     debootstrap; harbor 0.25.0 in a Python 3.12 venv under target/; a base image built with \
     debootstrap) and exports SKILLWATCH_HARBOR, SKILLWATCH_HARBOR_BASE_IMAGE and \
     SKILLWATCH_HARBOR_AGENTS_IMAGE: run `. scripts/harbor-env` before the tests";

/// Whether this is a CI run: `CI` set to anything but empty, `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// `found` when it is there. When it is `None`: in CI the test fails, naming `what` is
/// missing and `how` to get it; elsewhere it is skipped (this returns `None` after saying
/// so, and the test returns).
pub fn required<T>(found: Option<T>, what: &str, how: &str) -> Option<T> {
    if found.is_some() {
        return found;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    if in_ci() {
        panic!("{test} needs {what}, which is missing; CI (CI is set) runs every test. {how}");
    }
    let banner = format!(
        "\n!!! SKIPPED {test}: it needs {what}, which is missing. {how}. (In CI it fails.)\n"
    );
    let _ = std::io::stderr().lock().write_all(banner.as_bytes());
    if let Some(list) = std::env::var_os("SKILLWATCH_SKIPPED") {
        let line = format!("{test}: needs {what}\n");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(list);
        if let Ok(mut file) = file {
            let _ = file.write_all(line.as_bytes());
        }
    }
    None
}

/// [`required`] for a yes-or-no need: whether the test may go on.
pub fn met(there: bool, what: &str, how: &str) -> bool {
    required(there.then_some(()), what, how).is_some()
}
