//! Waiting, in a test, for something another process does: poll for the event itself with a
//! generous deadline and, when it does not come, fail saying what was seen last.
//!
//! A fixed sleep, or a deadline sized to a quiet machine, passes there and fails on the CI
//! machine (2 cores, shared with a build): issue 42's flaky runs. So a test waits on the
//! event (a file written, a process gone, a log line, a lock released), never on the clock,
//! and [`PATIENCE`] is long enough that no load reaches it: a timeout means the event did
//! not come. Upper bounds a test asserts on purpose (a timeout fired in time, a refusal
//! said at once) are the test's own assertions, not waits.
//!
//! A test that asserts something did *not* happen waits for a later event that proves the
//! earlier one would have come, when there is one; [`holds`] is for the rest: it checks the
//! condition all through a period sized to what could break it, and says why at its call.

use std::fmt::Display;
use std::future::Future;
use std::time::{Duration, Instant};

/// How long a test waits for an event before failing.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// How often a condition is polled: often enough to add nothing a person would notice to a
/// test, rarely enough to cost nothing beside the processes it waits for.
const EVERY: Duration = Duration::from_millis(25);

/// Poll `check` until it returns `Ok`, at most [`PATIENCE`]; its value. While waiting,
/// `check` returns `Err(what it sees)`, and the failure message ends with the last one.
pub fn until<T, S: Display>(what: &str, check: impl FnMut() -> Result<T, S>) -> T {
    within(what, PATIENCE, check)
}

/// [`until`] with another limit (one a test asserts, or a longer one).
pub fn within<T, S: Display>(
    what: &str,
    limit: Duration,
    check: impl FnMut() -> Result<T, S>,
) -> T {
    let start = Instant::now();
    poll(limit, check).unwrap_or_else(|seen| gave_up(what, start, seen))
}

/// Poll `check` until it returns `Ok`, at most `limit`: its value, or the last thing seen.
pub fn poll<T, S>(limit: Duration, mut check: impl FnMut() -> Result<T, S>) -> Result<T, S> {
    let start = Instant::now();
    loop {
        match check() {
            Ok(value) => return Ok(value),
            Err(seen) if start.elapsed() >= limit => return Err(seen),
            Err(_) => std::thread::sleep(EVERY),
        }
    }
}

/// [`until`] on an async runtime (its other tasks keep running while it waits).
pub async fn until_async<T, S, F>(what: &str, check: impl FnMut() -> F) -> T
where
    S: Display,
    F: Future<Output = Result<T, S>>,
{
    let start = Instant::now();
    poll_async(PATIENCE, check)
        .await
        .unwrap_or_else(|seen| gave_up(what, start, seen))
}

/// [`poll`] on an async runtime.
pub async fn poll_async<T, S, F>(limit: Duration, mut check: impl FnMut() -> F) -> Result<T, S>
where
    F: Future<Output = Result<T, S>>,
{
    let start = Instant::now();
    loop {
        match check().await {
            Ok(value) => return Ok(value),
            Err(seen) if start.elapsed() >= limit => return Err(seen),
            Err(_) => tokio::time::sleep(EVERY).await,
        }
    }
}

/// Check that `check` stays `Ok` for `period`, failing at once when it does not, with what
/// it saw. For a test that asserts something did not happen where no later event can prove
/// it: the caller says why `period` is long enough.
pub fn holds<S: Display>(what: &str, period: Duration, mut check: impl FnMut() -> Result<(), S>) {
    let start = Instant::now();
    loop {
        if let Err(seen) = check() {
            panic!(
                "{what}: broken after {:.1?} of {period:?}; seen: {seen}",
                start.elapsed()
            );
        }
        if start.elapsed() >= period {
            return;
        }
        std::thread::sleep(EVERY);
    }
}

/// `Ok(())` when `done`, otherwise `Err(seen())`: a yes-or-no condition for [`until`], with
/// what to print if it never comes.
pub fn when<S>(done: bool, seen: impl FnOnce() -> S) -> Result<(), S> {
    if done { Ok(()) } else { Err(seen()) }
}

fn gave_up<S: Display>(what: &str, start: Instant, seen: S) -> ! {
    panic!(
        "waited {:.1?} for {what}; last seen:\n{seen}",
        start.elapsed()
    )
}
