//! One daemon per user: an exclusive `flock` on a lock file in the private runtime folder,
//! held for the process's life. The kernel drops the lock when the process dies (even by
//! `kill -9`), so a crashed daemon never blocks the next one; the lock file holds the pid for
//! `daemon stop` and for the "already running" message.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Taking the lock failed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another daemon holds it.
    #[error("another skillwatch daemon is already running (pid {pid}; lock {path})")]
    Held {
        /// The holder's pid, as written in the file (`?` when unreadable).
        pid: String,
        /// The lock file.
        path: PathBuf,
    },
    /// The file could not be opened or written.
    #[error("{path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The OS reason.
        source: std::io::Error,
    },
}

/// The held lock; dropping it (or exiting) releases it.
#[derive(Debug)]
pub struct InstanceLock {
    file: File,
    path: PathBuf,
}

impl InstanceLock {
    /// Take the lock at `path` (created with mode 0600) and write our pid into it.
    pub fn acquire(path: &Path) -> Result<InstanceLock, LockError> {
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(io)?;
        // SAFETY: flock on a file descriptor we own; no memory is passed.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Err(LockError::Held {
                    pid: holder_pid(path).map_or_else(|| "?".into(), |p| p.to_string()),
                    path: path.to_path_buf(),
                });
            }
            return Err(io(err));
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(InstanceLock {
            file,
            path: path.to_path_buf(),
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for InstanceLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// The pid written in the lock file at `path`, if any.
pub fn holder_pid(path: &Path) -> Option<u32> {
    let mut text = String::new();
    File::open(path).ok()?.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

/// Ask the daemon whose pid is in the lock file to stop (SIGTERM), for `daemon stop` when it
/// holds the lock but does not answer on its socket.
pub fn terminate_holder(path: &Path) -> Option<u32> {
    let pid = holder_pid(path)?;
    // SAFETY: kill with a pid from our own private lock file; no memory is passed.
    let rc = unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    (rc == 0).then_some(pid)
}

/// Whether some process holds the lock at `path` now (without taking it for long).
pub fn is_held(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    // SAFETY: flock on a file descriptor we own.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    rc != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("daemon.lock");
        let held = InstanceLock::acquire(&path).unwrap();
        assert!(is_held(&path));
        assert_eq!(holder_pid(&path), Some(std::process::id()));
        // flock locks belong to the open file description: a second open conflicts even
        // within one process
        let err = InstanceLock::acquire(&path).unwrap_err().to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(held);
        assert!(!is_held(&path));
        InstanceLock::acquire(&path).unwrap();
    }
}
