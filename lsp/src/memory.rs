//! Giving memory back once documents close.
//!
//! An editor may open hundreds of skill files at once (a restored session) and close them
//! later. The allocator keeps the pages it freed for reuse, so without help an idle server would
//! stay at the size of its busiest moment. Shortly after the last of a run of closes, once the
//! blocking threads that served them (history reads, lenses) have ended, the server asks the C library to give its free
//! pages back (`malloc_trim`). `skillwatch lsp` allocates through glibc's malloc for this
//! reason (client-cli/src/allocator.rs), so that is the whole heap; under another allocator it is
//! what the C dependencies (SQLite, tree-sitter) freed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long after the last close memory is given back: longer than the one second idle
/// blocking threads live (`skillwatch lsp`'s runtime), so their caches are back in the heap by
/// then (checks run on threads that stay, crate::check_threads says why), and
/// short enough to follow the editor at once to a person.
pub const RELEASE_DELAY: Duration = Duration::from_millis(1500);

/// Counts closes, so that only the last of a run of them releases memory.
#[derive(Debug, Default)]
pub struct Release {
    closes: AtomicU64,
}

impl Release {
    /// A document was closed: give memory back after [`RELEASE_DELAY`], unless another close
    /// comes first (which then does it).
    pub fn after_close(self: &Arc<Self>) {
        let close = self.closes.fetch_add(1, Ordering::SeqCst) + 1;
        let release = Arc::clone(self);
        tokio::spawn(async move {
            tokio::time::sleep(RELEASE_DELAY).await;
            if release.closes.load(Ordering::SeqCst) == close {
                give_back_free_memory();
                // (what a test of the documents' life after it waits for)
                tracing::debug!(closes = close, "gave free memory back");
            }
        });
    }
}

/// Keep the C library's malloc to a few heaps. By default glibc gives each thread that meets
/// contention a heap of its own (up to eight per core); a burst of opens runs a check on
/// every blocking thread at once, and each such heap keeps its own free pages and fragments,
/// which `malloc_trim` cannot all give back. The server's checks are short and its threads
/// few, so sharing costs little. Call once, before the runtime starts its threads.
pub fn few_heaps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tuning value of glibc's malloc; it takes the allocator's
    // own lock.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Return the C library's free pages to the system.
pub fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own heaps, under their locks; any thread may call
    // it at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
