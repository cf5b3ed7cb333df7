//! Helpers for the daemon's end-to-end tests (`tests/tests/daemon_*.rs`): a private daemon
//! (its own runtime folder, log, history and workspace) started as the real `skillwatch
//! daemon` process, the CLI pointed at it, an RPC client, and skills measured against the mock
//! OpenAI-compatible server.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use skillwatch_daemon::client;
use skillwatch_protocol::{DaemonRpcClient, Event, EventKind, JobId, JobInfo, MAX_EVENT_WAIT_MS};
use tempfile::TempDir;

use crate::lsp::LspClient;
use crate::mock::{MockServer, MockUsage, ModelReply, ModelRequest, Script};
use crate::run::{eval_yaml, skill_md};
use crate::skillwatch_bin;
use crate::trial::{SKILL_MARKER, SKILL_NAME};
use crate::wait;

/// The two paths of [`DaemonFixture::both`], in its order, for assertion messages.
pub const THROUGH: [&str; 2] = ["the daemon", "--no-daemon"];

/// How long a test waits for the daemon to do something before failing.
pub const PATIENCE: Duration = crate::wait::PATIENCE;

/// A private daemon's files and process, and the guard of every daemon a test starts: when it
/// is dropped (the test passed, failed or panicked) it stops the daemon it started as a child
/// and any daemon started in its runtime folder on demand (by the CLI, the language server or
/// `skillwatch daemon start`, detached, known only by the lock file), then removes the folder.
/// A test that starts a daemon any way at all does so through a fixture's environment
/// ([`DaemonFixture::env`]), so none outlives its test.
pub struct DaemonFixture {
    /// Holds everything.
    pub root: TempDir,
    /// `$XDG_RUNTIME_DIR` of the daemon and its clients.
    pub runtime_dir: PathBuf,
    /// `$XDG_STATE_HOME` (the log lives under it).
    pub state_dir: PathBuf,
    /// The history database.
    pub db: PathBuf,
    /// The watched workspace (skills and skillwatch.toml).
    pub workspace: PathBuf,
    /// The running daemon, when started by [`DaemonFixture::start`].
    pub child: Option<Child>,
}

impl Default for DaemonFixture {
    fn default() -> Self {
        DaemonFixture::new()
    }
}

impl DaemonFixture {
    /// Empty folders; nothing runs yet.
    pub fn new() -> DaemonFixture {
        let root = tempfile::tempdir().expect("temp dir");
        let runtime_dir = root.path().join("rt");
        let state_dir = root.path().join("state");
        let workspace = root.path().join("ws");
        for dir in [&runtime_dir, &state_dir, &workspace] {
            std::fs::create_dir_all(dir).expect("create folder");
        }
        DaemonFixture {
            db: root.path().join("history.sqlite3"),
            runtime_dir,
            state_dir,
            workspace,
            root,
            child: None,
        }
    }

    /// The daemon's socket.
    pub fn socket(&self) -> PathBuf {
        self.runtime_dir.join("skillwatch").join("daemon.sock")
    }

    /// The daemon's single-instance lock (it holds the pid of the daemon running here).
    pub fn lock(&self) -> PathBuf {
        self.runtime_dir.join("skillwatch").join("daemon.lock")
    }

    /// Whether a daemon runs in this fixture's runtime folder (holds its lock), whoever
    /// started it.
    pub fn daemon_running(&self) -> bool {
        skillwatch_daemon::server::is_held(&self.lock())
    }

    /// The daemon's log file.
    pub fn log(&self) -> PathBuf {
        self.state_dir.join("skillwatch").join("daemon.log")
    }

    /// The environment every process of this fixture gets.
    pub fn env(&self, cmd: &mut Command) {
        cmd.env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("XDG_STATE_HOME", &self.state_dir)
            .env("SKILLWATCH_DB", &self.db)
            .env("SKILLWATCH_LOG", "info")
            .env_remove("SKILLWATCH_NO_DAEMON")
            .env_remove("NO_COLOR");
    }

    /// Write `skillwatch.toml` at the workspace root.
    pub fn write_config(&self, text: &str) {
        std::fs::write(self.workspace.join("skillwatch.toml"), text).expect("write config");
    }

    /// A copy of the demo skill named `folder` under `ws/skills/` with `cases` eval cases.
    pub fn add_skill(&self, folder: &str, cases: usize) -> PathBuf {
        let dir = self.workspace.join("skills").join(folder);
        std::fs::create_dir_all(dir.join("tests")).expect("skill folder");
        let md = skill_md("pad cells so columns line up")
            .replace(&format!("name: {SKILL_NAME}"), &format!("name: {folder}"));
        std::fs::write(dir.join("SKILL.md"), md).expect("SKILL.md");
        std::fs::write(dir.join("tests/eval.yaml"), eval_yaml(cases, "")).expect("eval.yaml");
        dir
    }

    /// Start `skillwatch daemon --root WS` in the foreground as a child, and wait until it
    /// answers.
    pub fn start(&mut self) {
        self.start_with_env(&[]);
    }

    /// [`DaemonFixture::start`] with `vars` added to the daemon's environment.
    pub fn start_with_env(&mut self, vars: &[(&str, &str)]) {
        self.start_daemon(&[], vars);
    }

    /// [`DaemonFixture::start`] for a daemon that exits after `secs` with no client and no
    /// job, as one an editor starts.
    pub fn start_with_idle_limit(&mut self, secs: u64) {
        self.start_daemon(&["--idle-exit-secs", &secs.to_string()], &[]);
    }

    fn start_daemon(&mut self, args: &[&str], vars: &[(&str, &str)]) {
        let mut cmd = Command::new(skillwatch_bin());
        cmd.args(["daemon", "--grace-secs", "2"])
            .args(args)
            .arg("--root")
            .arg(&self.workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.env(&mut cmd);
        cmd.envs(vars.iter().copied());
        // a test binary killed outright (no unwinding, no Drop) takes its daemons with it;
        // the kernel sends it when the *thread* that spawned the daemon ends, so a fixture
        // is started on its test's own thread
        // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        self.child = Some(cmd.spawn().expect("spawn skillwatch daemon"));
        self.wait_answering();
    }

    /// Wait until the daemon's socket answers `status`.
    pub fn wait_answering(&self) {
        let rt = runtime();
        wait::until("the daemon to answer", || {
            rt.block_on(client::connect_checked(&self.socket()))
                .map(drop)
                .map_err(|e| format!("{e}; its log:\n{}", self.log_text()))
        });
    }

    /// The daemon's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("daemon started").id()
    }

    /// SIGKILL the daemon and reap it.
    pub fn kill9(&mut self) {
        let mut child = self.child.take().expect("daemon started");
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
    }

    /// SIGTERM the daemon and wait for it to exit; its exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("daemon started");
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        child.wait().expect("reap")
    }

    /// Run the CLI with this fixture's environment.
    pub fn cli<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        self.cli_command(args).output().expect("run skillwatch")
    }

    /// `args` through this fixture's daemon (the default path), then in-process with
    /// `--no-daemon`, each with `vars` set and `unset` removed: the two outputs a parity test
    /// compares ([`THROUGH`] names them).
    pub fn both<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        vars: &[(&str, &str)],
        unset: &[&str],
    ) -> [Output; 2] {
        [false, true].map(|in_process| {
            let mut cmd = self.cli_command(args);
            if in_process {
                cmd.arg("--no-daemon");
            }
            cmd.envs(vars.iter().copied());
            for var in unset {
                cmd.env_remove(var);
            }
            cmd.output().expect("run skillwatch")
        })
    }

    /// The CLI as a command, to spawn.
    pub fn cli_command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new(skillwatch_bin());
        cmd.args(args).current_dir(self.root.path());
        self.env(&mut cmd);
        cmd
    }

    /// The daemon log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log()).unwrap_or_default()
    }

    /// `skillwatch lsp` started as an editor would start it against this fixture (the daemon
    /// allowed; its runtime folder, state folder and history), with `vars` added; not yet
    /// initialized.
    pub fn editor_lsp(&self, vars: &[(&str, &str)]) -> LspClient {
        let runtime = self.runtime_dir.display().to_string();
        let state = self.state_dir.display().to_string();
        let db = self.db.display().to_string();
        let mut env = vec![
            ("SKILLWATCH_NO_DAEMON", "0"),
            ("XDG_RUNTIME_DIR", runtime.as_str()),
            ("XDG_STATE_HOME", state.as_str()),
            ("SKILLWATCH_DB", db.as_str()),
        ];
        env.extend_from_slice(vars);
        LspClient::spawn_with_env(&env)
    }

    /// `skillwatch lsp` connected to this daemon (polling of the database off, so lens
    /// refreshes come from the daemon's events), initialized, with `file` open (the server
    /// links to the daemon at its first skill file), and linked; and the file's URI.
    pub fn lsp_on(&self, file: &Path) -> (LspClient, String) {
        self.lsp_on_with_env(file, &[])
    }

    /// [`DaemonFixture::lsp_on`] with `vars` added to the language server's environment (the
    /// editor's).
    pub fn lsp_on_with_env(&self, file: &Path, vars: &[(&str, &str)]) -> (LspClient, String) {
        let mut client = self.editor_lsp(vars);
        client.initialize(json!({"historyDb": self.db.display().to_string(), "historyPollMs": 0}));
        let text = std::fs::read_to_string(file).expect("the file to open");
        let uri = client.open(file, "markdown", &text);
        wait::until("the language server to connect to the daemon", || {
            let log = client.stderr();
            wait::when(log.contains("connected to the skillwatch daemon"), || {
                format!("its log:\n{log}")
            })
        });
        (client, uri)
    }

    /// An RPC client (on the caller's runtime).
    pub async fn client(&self) -> DaemonRpcClient {
        client::connect_checked(&self.socket())
            .await
            .expect("connect to the daemon")
    }
}

impl Drop for DaemonFixture {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            signal(child.id(), libc::SIGTERM);
            let _ = wait::poll(STOP_PATIENCE, || {
                wait::when(!matches!(child.try_wait(), Ok(None)), || ())
            });
            let _ = child.kill();
            let _ = child.wait();
        }
        self.stop_detached();
    }
}

/// How long a daemon may take to stop at the end of a test before it is killed.
const STOP_PATIENCE: Duration = Duration::from_secs(10);

impl DaemonFixture {
    /// Stop the daemon that holds this fixture's lock, if any: one started on demand runs
    /// detached (its own session, not our child), so its pid comes from the lock file.
    fn stop_detached(&self) {
        let lock = self.lock();
        let Some(pid) = skillwatch_daemon::server::holder_pid(&lock) else {
            return;
        };
        if !self.daemon_running() {
            return;
        }
        signal(pid, libc::SIGTERM);
        let stopped = wait::poll(STOP_PATIENCE, || wait::when(!self.daemon_running(), || ()));
        if stopped.is_err() {
            signal(pid, libc::SIGKILL);
        }
    }
}

fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill with a pid this fixture started or read from its own private lock file
    // while that lock is held (so the process is the daemon); no memory is passed.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
}

/// A current-thread runtime for blocking helpers.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A call context with a generous deadline.
pub fn ctx() -> client::Context {
    client::context(Duration::from_secs(60))
}

/// Every event the daemon publishes from `cursor` on, read by long polls, until `done` says
/// so (or [`PATIENCE`] runs out: a failure).
pub async fn events_until(
    rpc: &DaemonRpcClient,
    cursor: &mut u64,
    seen: &mut Vec<Event>,
    mut done: impl FnMut(&[Event]) -> bool,
) {
    let deadline = Instant::now() + PATIENCE;
    while !done(seen) {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for events; seen: {:#?}",
            seen.iter().map(|e| &e.kind).collect::<Vec<_>>()
        );
        let ctx = client::context(Duration::from_secs(20));
        let batch = rpc
            .next_events(ctx, *cursor, 5_000.min(MAX_EVENT_WAIT_MS))
            .await
            .expect("next_events");
        *cursor = batch.next;
        seen.extend(batch.events);
    }
}

/// The job's final state, polling `run_status`.
pub async fn wait_finished(rpc: &DaemonRpcClient, job: JobId) -> JobInfo {
    wait::until_async(&format!("job {job} to finish"), || async move {
        let info = rpc
            .run_status(ctx(), job)
            .await
            .expect("run_status call")
            .expect("job");
        if info.state.is_live() {
            Err(format!("{info:#?}"))
        } else {
            Ok(info)
        }
    })
    .await
}

/// Whether an event is the end of `job`.
pub fn finished(event: &Event, job: JobId) -> bool {
    matches!(&event.kind, EventKind::JobFinished { job: j } if j.id == job)
}

/// The scripted model. With the skill listed it loads it and, once its SKILL.md (with the
/// marker) is back, answers GOOD; otherwise BAD. Models named in `ignores_skill` never load
/// it except on `case-0`: there the skill stops helping. Each request sleeps `delay`.
pub fn model(ignores_skill: &'static [&'static str], delay: Duration) -> Script {
    Arc::new(move |req: &ModelRequest| {
        std::thread::sleep(delay);
        let model = req.body["model"].as_str().unwrap_or("");
        let ignoring = ignores_skill.contains(&model) && !req.mentions("(0)");
        if req.tool_result_mentions(SKILL_MARKER) {
            return ModelReply::text("GOOD: aligned", MockUsage::tokens(300, 20));
        }
        if !ignoring && req.turn == 0 {
            let listed = req
                .text
                .lines()
                .find(|l| l.starts_with("- ") && l.contains(": Formats Markdown tables"));
            if let Some(line) = listed {
                let name = line[2..].split(':').next().unwrap_or("").trim().to_string();
                return ModelReply::tool(
                    "load_skill",
                    json!({ "name": name }),
                    MockUsage::tokens(200, 12),
                );
            }
        }
        ModelReply::text("BAD: left as it was", MockUsage::tokens(100, 8))
    })
}

/// `skillwatch.toml` for the mock endpoint at `url`, tracking `models` on `openai`, plus
/// `extra` lines.
pub fn config(url: &str, models: &[&str], extra: &str) -> String {
    let list = models
        .iter()
        .map(|m| format!("\"{m}\""))
        .collect::<Vec<_>>()
        .join(", ");
    format!("[harness.openai]\nbase_url = \"{url}/v1\"\n\n[models]\nopenai = [{list}]\n\n{extra}\n")
}

/// `PRAGMA integrity_check` of the database file, as SQLite reports it.
pub fn integrity(db: &Path) -> String {
    let conn = rusqlite::Connection::open(db).expect("open db");
    conn.query_row("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))
        .expect("integrity_check")
}

/// The client's API key `secret` went with every request `server` got (at least `at_least`
/// of them), and into no file of the fixture: the history, its WAL, the daemon's log, the
/// workspaces.
pub fn assert_key_sent_and_kept_nowhere(
    fx: &DaemonFixture,
    server: &MockServer,
    secret: &str,
    at_least: usize,
) {
    let auths: Vec<Option<String>> = server
        .requests()
        .into_iter()
        .map(|r| r.authorization)
        .collect();
    assert!(auths.len() >= at_least, "{auths:?}");
    let expected = Some(format!("Bearer {secret}"));
    assert!(auths.iter().all(|a| *a == expected), "{auths:?}");
    for entry in walkdir::WalkDir::new(fx.root.path()).into_iter().flatten() {
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "the key is in {}",
                entry.path().display()
            );
        }
    }
}

/// The daemon's wire as a client of another version sees it: tarpc frames (a 4-byte
/// big-endian length, then the JSON), written and read by hand so a test can send what no
/// client of this build would (a request of protocol 1, or of a kind not yet known).
pub mod frame {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    use serde_json::{Value, json};

    pub fn write(stream: &mut UnixStream, value: &Value) {
        let bytes = value.to_string().into_bytes();
        stream
            .write_all(&(bytes.len() as u32).to_be_bytes())
            .unwrap();
        stream.write_all(&bytes).unwrap();
    }

    /// The next frame; `None` when the daemon closed the connection or sent no JSON.
    pub fn read(stream: &mut UnixStream) -> Option<Value> {
        let mut len = [0u8; 4];
        stream.read_exact(&mut len).ok()?;
        let mut bytes = vec![0u8; u32::from_be_bytes(len) as usize];
        stream.read_exact(&mut bytes).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// A tarpc request envelope around `message` (e.g. `{"Status": {}}`), with a 9 s deadline.
    pub fn request(id: u64, message: Value) -> Value {
        json!({"Request": {
            "context": {"deadline": {"secs": 9, "nanos": 0}, "trace_context": {
                "trace_id": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                "span_id": id, "sampling_decision": "Unsampled"}},
            "id": id,
            "message": message,
        }})
    }
}
