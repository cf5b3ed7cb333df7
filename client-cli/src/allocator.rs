//! The process's allocator: mimalloc for the commands, the C library's malloc for the two
//! long-lived processes, the language server and the daemon.
//!
//! mimalloc instead of glibc's malloc: a check allocates many small strings and vectors per
//! skill, and mimalloc serves them with fewer instructions (docs/benchmarks.md) and without
//! glibc's arena contention when `check` runs on every core.
//!
//! `skillwatch lsp` and `skillwatch daemon` are different: they live as long as the editor (or
//! longer) and take their load in bursts (a restored session opens hundreds of skill files,
//! then the author types one at a time).
//! mimalloc keeps the pages of a burst: threads that end abandon their pages to the process,
//! and freed pages are given back after a delay, by the next allocation, which an idle server
//! never makes. Even with its options tuned for a server (arenas committed on demand, pages
//! purged at once), an LSP that had the corpus open and then closed it kept more than under
//! glibc's malloc, which the server trims once its documents are closed (skillwatch-lsp's
//! `memory` module); docs/benchmarks.md has the figures. The daemon, asked by an editor to
//! watch 201 folders of skills one call after another, kept 67 MB resident under mimalloc
//! (32 MB of it anonymous) and 40 MB under glibc's (6 MB anonymous), debug build, issue 36.
//!
//! The choice is made once, before the process's first allocation, from its arguments: glibc
//! hands the functions of `.init_array` the process's `argc`/`argv` (the standard library reads
//! `std::env::args` the same way). Every allocation and free afterwards goes to the same
//! allocator. Elsewhere (other C libraries, other systems) every command uses mimalloc.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

#[global_allocator]
static ALLOCATOR: Allocator = Allocator;

/// Set before `main` when the process is `skillwatch lsp` or `skillwatch daemon`; never
/// changed afterwards.
static SERVER: AtomicBool = AtomicBool::new(false);

/// mimalloc, or the C library's malloc for the language server and the daemon (see the
/// module doc).
struct Allocator;

impl Allocator {
    fn server(&self) -> bool {
        SERVER.load(Ordering::Relaxed)
    }
}

// SAFETY: each call goes to one of two allocators, chosen by a flag fixed before the first
// allocation, so memory is always freed or resized by the allocator that gave it.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe {
            if self.server() {
                System.alloc(layout)
            } else {
                mimalloc::MiMalloc.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if self.server() {
                System.alloc_zeroed(layout)
            } else {
                mimalloc::MiMalloc.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from the same allocator (the flag has not changed).
        unsafe {
            if self.server() {
                System.dealloc(ptr, layout)
            } else {
                mimalloc::MiMalloc.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`.
        unsafe {
            if self.server() {
                System.realloc(ptr, layout, new_size)
            } else {
                mimalloc::MiMalloc.realloc(ptr, layout, new_size)
            }
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod choose {
    use std::ffi::{CStr, c_char, c_int};
    use std::sync::atomic::Ordering;

    /// Whether the command line runs a long-lived process: the language server
    /// (`skillwatch lsp ...`) or the daemon (`skillwatch daemon ...`; its short-lived
    /// `start`, `stop`, `status` and `unwatch` go along, at no cost that matters).
    ///
    /// # Safety
    /// `argv` holds `argc` NUL-terminated strings, as the loader passes them.
    unsafe fn runs_server(argc: c_int, argv: *const *const c_char) -> bool {
        if argc < 2 || argv.is_null() {
            return false;
        }
        // SAFETY: argc >= 2, so argv[1] is a pointer the loader set.
        let first = unsafe { *argv.add(1) };
        // SAFETY: a non-null argv entry is a NUL-terminated string.
        !first.is_null() && [c"lsp", c"daemon"].contains(&unsafe { CStr::from_ptr(first) })
    }

    extern "C" fn choose(argc: c_int, argv: *const *const c_char, _env: *const *const c_char) {
        // SAFETY: the loader's argc/argv.
        if unsafe { runs_server(argc, argv) } {
            super::SERVER.store(true, Ordering::Relaxed);
        }
    }

    /// Runs before `main`, before any Rust allocation.
    #[used]
    #[unsafe(link_section = ".init_array")]
    static CHOOSE_BEFORE_MAIN: extern "C" fn(c_int, *const *const c_char, *const *const c_char) =
        choose;
}
