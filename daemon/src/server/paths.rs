//! Where the daemon's files live: a private runtime folder for the socket and the lock (one
//! daemon per user), and a state folder for the log.
//!
//! The runtime folder is `$XDG_RUNTIME_DIR/skillwatch` (systemd makes `$XDG_RUNTIME_DIR`
//! private to the user), else `<temp dir>/skillwatch-<uid>`. Either way the folder must be
//! owned by the user and closed to everyone else (mode 0700): a folder someone else created
//! in the shared temp dir is refused rather than trusted.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The socket's file name in the runtime folder.
pub const SOCKET_NAME: &str = "daemon.sock";
/// The lock file's name in the runtime folder.
pub const LOCK_NAME: &str = "daemon.lock";
/// The log file's name in the state folder.
pub const LOG_NAME: &str = "daemon.log";

/// Unix socket paths longer than this do not fit `sockaddr_un` on Linux.
const MAX_SOCKET_PATH: usize = 107;

/// Why the daemon's folders cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// Creating or inspecting the folder failed.
    #[error("{path}: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// The OS reason.
        source: std::io::Error,
    },
    /// The folder belongs to someone else or is open to others.
    #[error(
        "{path}: expected a folder owned by uid {uid} with mode 0700, found {found}; refusing to put the daemon's socket there"
    )]
    Unsafe {
        /// The folder.
        path: PathBuf,
        /// Our uid.
        uid: u32,
        /// What was found.
        found: String,
    },
    /// The socket path is too long for a Unix socket.
    #[error(
        "{path}: a Unix socket path must be at most {MAX_SOCKET_PATH} bytes, found {len}; set XDG_RUNTIME_DIR to a shorter folder"
    )]
    TooLong {
        /// The path.
        path: PathBuf,
        /// Its length.
        len: usize,
    },
}

/// The daemon's file locations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonPaths {
    /// The private runtime folder.
    pub runtime_dir: PathBuf,
    /// The Unix socket.
    pub socket: PathBuf,
    /// The single-instance lock file.
    pub lock: PathBuf,
}

/// The effective uid.
pub fn uid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

impl DaemonPaths {
    /// The locations for this user, from the environment. Does not create anything.
    pub fn for_user() -> DaemonPaths {
        let runtime_dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir).join("skillwatch"),
            None => std::env::temp_dir().join(format!("skillwatch-{}", uid())),
        };
        DaemonPaths::in_dir(runtime_dir)
    }

    /// The locations inside `runtime_dir`.
    pub fn in_dir(runtime_dir: PathBuf) -> DaemonPaths {
        DaemonPaths {
            socket: runtime_dir.join(SOCKET_NAME),
            lock: runtime_dir.join(LOCK_NAME),
            runtime_dir,
        }
    }

    /// Create the runtime folder (mode 0700) if needed and check it is private to us and that
    /// the socket path fits.
    pub fn prepare(&self) -> Result<(), PathError> {
        let len = self.socket.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            return Err(PathError::TooLong {
                path: self.socket.clone(),
                len,
            });
        }
        let io = |source| PathError::Io {
            path: self.runtime_dir.clone(),
            source,
        };
        match std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.runtime_dir)
        {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(e)),
        }
        let meta = std::fs::symlink_metadata(&self.runtime_dir).map_err(io)?;
        let mode = meta.permissions().mode() & 0o777;
        if !meta.is_dir() || meta.uid() != uid() || mode & 0o077 != 0 {
            return Err(PathError::Unsafe {
                path: self.runtime_dir.clone(),
                uid: uid(),
                found: format!(
                    "{} owned by uid {} with mode {mode:04o}",
                    if meta.is_dir() {
                        "a folder"
                    } else {
                        "not a folder"
                    },
                    meta.uid()
                ),
            });
        }
        Ok(())
    }
}

/// The default log file: `<state dir>/skillwatch/daemon.log` (`~/.local/state` on Linux),
/// else beside the history database's default folder.
pub fn default_log() -> Option<PathBuf> {
    dirs::state_dir()
        .or_else(dirs::data_dir)
        .map(|d| d.join("skillwatch").join(LOG_NAME))
}

/// Make `path` readable and writable by its owner only.
pub fn make_private(path: &Path) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_folder_is_created_private_and_checked() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = DaemonPaths::in_dir(tmp.path().join("rt/skillwatch"));
        paths.prepare().unwrap();
        let mode = std::fs::metadata(&paths.runtime_dir)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        // a folder opened to others is refused
        std::fs::set_permissions(&paths.runtime_dir, std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let err = paths.prepare().unwrap_err().to_string();
        assert!(err.contains("mode 0755"), "{err}");
    }

    #[test]
    fn an_overlong_socket_path_is_refused_clearly() {
        let long = PathBuf::from("/tmp").join("x".repeat(120));
        let err = DaemonPaths::in_dir(long).prepare().unwrap_err().to_string();
        assert!(err.contains("at most 107 bytes"), "{err}");
    }
}
