//! Talking to the daemon: connect to its socket, start it on demand, and build call contexts
//! whose deadline fits the call (tarpc's default of 10 s is too short for a long poll).
//!
//! A daemon started on demand runs detached, with no terminal to complain to. Until it
//! answers, its stderr goes to a file the starting client holds and the client watches the
//! process: a daemon that exits at start (a damaged history, an unsafe runtime folder) is
//! reported at once with its own words, not after the start timeout as silence.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use skillwatch_protocol::{DaemonRpcClient, MAX_FRAME_BYTES, PROTOCOL_VERSION};
use tarpc::serde_transport;
use tarpc::tokio_serde::formats::Json;
use tarpc::tokio_util::codec::LengthDelimitedCodec;
use tokio::net::UnixStream;

/// The call context clients pass (re-exported so they need no tarpc dependency).
pub use tarpc::context::Context;

use crate::server::{DaemonPaths, is_held};

/// How long `connect_or_start` waits for a daemon it started to answer.
pub const START_TIMEOUT: Duration = Duration::from_secs(15);

/// Why there is no daemon to talk to.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing listens on the socket.
    #[error("no skillwatch daemon is running (socket {socket}: {source})")]
    NotRunning {
        /// The socket tried.
        socket: PathBuf,
        /// The connect error.
        source: std::io::Error,
    },
    /// The daemon could not be started.
    #[error("could not start the skillwatch daemon ({program}): {reason}")]
    Start {
        /// The program run.
        program: PathBuf,
        /// What went wrong; see the daemon log for more.
        reason: String,
    },
    /// A call failed at the transport level.
    #[error("the skillwatch daemon did not answer: {0}")]
    Rpc(#[from] tarpc::client::RpcError),
    /// The daemon speaks another protocol version.
    #[error(
        "the running skillwatch daemon (skillwatch {version}, pid {pid}) speaks protocol {found}, this client (skillwatch {}) protocol {PROTOCOL_VERSION}; \
         stop it with `skillwatch daemon stop` and the next command starts a daemon of this version (or pass --no-daemon)",
        env!("CARGO_PKG_VERSION")
    )]
    Protocol {
        /// The daemon's protocol.
        found: u32,
        /// The daemon's skillwatch version.
        version: String,
        /// The daemon's pid.
        pid: u32,
    },
}

/// A context whose deadline is `timeout` from now.
pub fn context(timeout: Duration) -> Context {
    let mut ctx = tarpc::context::current();
    ctx.deadline = Instant::now() + timeout;
    ctx
}

/// Connect to the daemon at `socket`.
pub async fn connect(socket: &Path) -> Result<DaemonRpcClient, ClientError> {
    let stream = UnixStream::connect(socket)
        .await
        .map_err(|source| ClientError::NotRunning {
            socket: socket.to_path_buf(),
            source,
        })?;
    let framed = LengthDelimitedCodec::builder()
        .max_frame_length(MAX_FRAME_BYTES)
        .new_framed(stream);
    let transport = serde_transport::new(framed, Json::default());
    Ok(DaemonRpcClient::new(tarpc::client::Config::default(), transport).spawn())
}

/// Connect and check the protocol version with the `status` call, the handshake that stays
/// readable across versions (see [`PROTOCOL_VERSION`]).
pub async fn connect_checked(socket: &Path) -> Result<DaemonRpcClient, ClientError> {
    let client = connect(socket).await?;
    let status = client.status(context(Duration::from_secs(10))).await?;
    if status.protocol != PROTOCOL_VERSION {
        return Err(ClientError::Protocol {
            found: status.protocol,
            version: status.version,
            pid: status.pid,
        });
    }
    Ok(client)
}

/// How to start a daemon when none runs: the `skillwatch` program and its arguments after
/// `daemon` (e.g. `--db PATH`).
#[derive(Debug, Clone)]
pub struct StartCommand {
    /// The `skillwatch` binary.
    pub program: PathBuf,
    /// Arguments of `skillwatch daemon`.
    pub args: Vec<String>,
}

/// Connect to the daemon, starting it (detached, in its own session) when none runs.
pub async fn connect_or_start(
    paths: &DaemonPaths,
    start: &StartCommand,
) -> Result<DaemonRpcClient, ClientError> {
    match connect_checked(&paths.socket).await {
        Ok(client) => return Ok(client),
        // a daemon of another version answers: starting one of ours beside it cannot work
        Err(e @ ClientError::Protocol { .. }) => return Err(e),
        Err(_) => {}
    }
    let mut started = match is_held(&paths.lock) {
        true => None,
        false => Some(spawn_detached(start)?),
    };
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        match connect_checked(&paths.socket).await {
            Ok(client) => {
                if let Some(daemon) = started.take() {
                    daemon.detach();
                }
                return Ok(client);
            }
            Err(e @ ClientError::Protocol { .. }) => return Err(e),
            Err(e) => {
                if let Some(reason) = started.as_mut().and_then(Started::exited) {
                    return Err(ClientError::Start {
                        program: start.program.clone(),
                        reason,
                    });
                }
                if Instant::now() >= deadline {
                    let why = match started {
                        Some(_) => format!("it did not answer within {START_TIMEOUT:?}: {e}"),
                        None => format!(
                            "another daemon holds {} but did not answer within {START_TIMEOUT:?} ({e}); `skillwatch daemon stop` ends it",
                            paths.lock.display()
                        ),
                    };
                    return Err(ClientError::Start {
                        program: start.program.clone(),
                        reason: why,
                    });
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// A daemon this client started, until it answers.
#[derive(Debug)]
pub struct Started {
    child: std::process::Child,
    /// Its stderr: an unlinked temporary file only this client and the daemon hold.
    stderr: std::fs::File,
}

impl Started {
    /// Why the daemon exited, with what it said on stderr; `None` while it runs.
    pub fn exited(&mut self) -> Option<String> {
        use std::io::{Read, Seek, SeekFrom};
        let status = self.child.try_wait().ok()??;
        let mut said = String::new();
        let _ = self.stderr.seek(SeekFrom::Start(0));
        let _ = (&self.stderr).take(64 * 1024).read_to_string(&mut said);
        let said = said.trim();
        Some(if said.is_empty() {
            format!("it exited at start ({status}) without a word; see its log")
        } else {
            format!("it exited at start ({status}): {said}")
        })
    }

    /// Let it run on: reap it when it exits, so a long-lived client (the language server)
    /// keeps no zombie.
    pub fn detach(self) {
        let mut child = self.child;
        std::thread::spawn(move || child.wait());
    }
}

/// Start `skillwatch daemon ARGS` in a new session with no terminal; it outlives us.
pub fn spawn_detached(start: &StartCommand) -> Result<Started, ClientError> {
    use std::os::unix::process::CommandExt;
    let start_err = |e: std::io::Error| ClientError::Start {
        program: start.program.clone(),
        reason: e.to_string(),
    };
    let stderr = tempfile::tempfile().map_err(start_err)?;
    let mut cmd = Command::new(&start.program);
    cmd.arg("daemon")
        .args(&start.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr.try_clone().map_err(start_err)?);
    // SAFETY: setsid is async-signal-safe and only detaches the child from our terminal.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(start_err)?;
    Ok(Started { child, stderr })
}
