//! A minimal LSP client for end-to-end tests: spawns `skillwatch lsp`, speaks JSON-RPC over its
//! stdio, answers the server's own requests, and lets a test wait for messages.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::skillwatch_bin;

/// How long a test waits for any one message before failing.
pub const TIMEOUT: Duration = crate::wait::PATIENCE;

/// How a client answers the server's requests: the result for (method, params).
pub type Answer = Box<dyn FnMut(&str, &Value) -> Value + Send>;

/// A running `skillwatch lsp` and the test's end of its pipes.
pub struct LspClient {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Value>,
    /// Messages received but not yet consumed by a wait.
    backlog: VecDeque<Value>,
    /// Every request the server sent to the client, in order (method, params).
    pub server_requests: Vec<(String, Value)>,
    next_id: i64,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    /// The thread reading stderr: finished once the server and every process that shares
    /// its stderr (a daemon it started keeps none) have closed it.
    stderr_reader: Option<thread::JoinHandle<()>>,
    /// The result sent back for a server request (method, params); `null` by default.
    pub answer: Answer,
}

impl LspClient {
    /// Start `skillwatch lsp` with extra environment variables.
    pub fn spawn_with_env(env: &[(&str, &str)]) -> LspClient {
        let mut command = Command::new(skillwatch_bin());
        command
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("SKILLWATCH_LOG", "info")
            // no daemon unless a test asks for one (in its own runtime folder)
            .env("SKILLWATCH_NO_DAEMON", "1");
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("spawn skillwatch lsp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || read_frames(stdout, tx));
        let stderr_text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = stderr_text.clone();
        let stderr = child.stderr.take().expect("stderr");
        let stderr_reader = thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        LspClient {
            stdin: child.stdin.take(),
            child,
            incoming: rx,
            backlog: VecDeque::new(),
            server_requests: Vec::new(),
            next_id: 1,
            stderr: stderr_text,
            stderr_reader: Some(stderr_reader),
            answer: Box::new(|_, _| Value::Null),
        }
    }

    /// Start `skillwatch lsp`.
    pub fn spawn() -> LspClient {
        LspClient::spawn_with_env(&[])
    }

    /// Start the server and complete the `initialize` handshake with a client that supports
    /// code-lens refresh, progress and showDocument, and the given initialization options.
    pub fn initialized(options: Value) -> LspClient {
        let mut client = LspClient::spawn();
        client.initialize(options);
        client
    }

    /// Send `initialize` and `initialized`; returns the server's capabilities.
    pub fn initialize(&mut self, options: Value) -> Value {
        self.initialize_with(options, Value::Null)
    }

    /// [`LspClient::initialize`] with `experimental` client capabilities (e.g.
    /// `{"skillwatch": {"pickRun": true}}`).
    pub fn initialize_with(&mut self, options: Value, experimental: Value) -> Value {
        self.initialize_in(options, experimental, &[])
    }

    /// [`LspClient::initialize_with`] for an editor open on workspace `folders`.
    pub fn initialize_in(
        &mut self,
        options: Value,
        experimental: Value,
        folders: &[&Path],
    ) -> Value {
        let folders: Vec<Value> = folders
            .iter()
            .map(|f| json!({"uri": file_uri(f), "name": f.file_name().unwrap().to_string_lossy()}))
            .collect();
        let result = self.request(
            "initialize",
            json!({
                "processId": null,
                "rootUri": null,
                "workspaceFolders": folders,
                "capabilities": {
                    "workspace": {
                        "codeLens": {"refreshSupport": true},
                        "didChangeWatchedFiles": {"dynamicRegistration": true}
                    },
                    "window": {"workDoneProgress": true, "showDocument": {"support": true}},
                    "general": {"positionEncodings": ["utf-16"]},
                    "experimental": experimental
                },
                "initializationOptions": options
            }),
        );
        self.notify("initialized", json!({}));
        result
    }

    /// The server's stderr so far (its log).
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The server's whole stderr, once it has exited: read to its end, so no line it wrote
    /// is still on its way.
    pub fn stderr_at_exit(&mut self) -> String {
        self.wait_exit();
        if let Some(reader) = self.stderr_reader.take() {
            crate::wait::until("the server's stderr to close", || {
                crate::wait::when(reader.is_finished(), || self.stderr())
            });
            reader.join().expect("the stderr reader");
        }
        self.stderr()
    }

    /// Write raw bytes to the server's stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.try_send_raw(bytes).expect("write to server");
    }

    fn try_send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes)?;
        stdin.flush()
    }

    /// Send one framed JSON message.
    pub fn send(&mut self, message: &Value) {
        self.send_raw(&frame(message));
    }

    /// Send a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The titles of the code lenses of the open document `uri` (lenses with no command
    /// title left out).
    pub fn lens_titles(&mut self, uri: &str) -> Vec<String> {
        let lenses = self.request(
            "textDocument/codeLens",
            serde_json::json!({"textDocument": {"uri": uri}}),
        );
        lenses
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l["command"]["title"].as_str().map(str::to_owned))
            .collect()
    }

    /// Send a request and wait for its successful result (panics on an error response).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        let response = self.response(id);
        if let Some(error) = response.get("error") {
            panic!("{method} failed: {error}");
        }
        response["result"].clone()
    }

    /// Wait for the response with this id (result or error).
    pub fn response(&mut self, id: i64) -> Value {
        self.wait_for(&format!("response {id}"), |m| {
            m.get("method").is_none() && m.get("id") == Some(&json!(id))
        })
    }

    /// Wait for a notification of `method` whose params satisfy `accept`.
    pub fn notification(&mut self, method: &str, accept: impl Fn(&Value) -> bool) -> Value {
        self.wait_for(method, |m| {
            m.get("id").is_none() && m["method"] == method && accept(&m["params"])
        })["params"]
            .clone()
    }

    /// Wait for `publishDiagnostics` for `uri` at `version` (any version when `None`).
    pub fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Vec<Value> {
        let params = self.notification("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri && version.is_none_or(|v| p["version"] == json!(v))
        });
        params["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Wait for any message matching `accept`, answering server requests meanwhile.
    pub fn wait_for(&mut self, what: &str, accept: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&accept) {
            return self.backlog.remove(i).unwrap();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.incoming.recv_timeout(left) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "waited {TIMEOUT:?} for {what}; received meanwhile: {:?}; stderr:\n{}",
                    self.backlog_summary(),
                    self.stderr()
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!(
                        "server closed stdout waiting for {what}; stderr:\n{}",
                        self.stderr()
                    )
                }
            };
            if message.get("method").is_some() && message.get("id").is_some() {
                self.answer_server_request(&message);
            }
            if accept(&message) {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    /// The backlog, one entry per message: its method, or `response ID`.
    fn backlog_summary(&self) -> Vec<String> {
        self.backlog
            .iter()
            .map(|m| match m.get("method").and_then(Value::as_str) {
                Some(method) => method.to_string(),
                None => format!("response {}", m["id"]),
            })
            .collect()
    }

    fn answer_server_request(&mut self, message: &Value) {
        let method = message["method"].as_str().unwrap_or_default().to_string();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let result = (self.answer)(&method, &params);
        self.server_requests.push((method, params));
        let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
        if self.stdin.is_some() {
            // A request read from the backlog may come from a server that has exited since
            // (one asked during initialization, read after `shutdown` + `exit`): its answer is
            // moot, and a closed pipe is no failure of the test.
            let _ = self.try_send_raw(&frame(&reply));
        }
    }

    /// Open a document.
    pub fn open(&mut self, path: &Path, language: &str, text: &str) -> String {
        let uri = file_uri(path);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
        uri
    }

    /// `shutdown` then `exit`; returns the exit status.
    pub fn shutdown(mut self) -> ExitStatus {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// Close the server's stdin (the client went away).
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Wait for the process to end (killing it after [`TIMEOUT`] and failing).
    pub fn wait_exit(&mut self) -> ExitStatus {
        let exited = crate::wait::poll(TIMEOUT, || {
            self.child.try_wait().expect("try_wait").ok_or(())
        });
        exited.unwrap_or_else(|()| {
            let _ = self.child.kill();
            panic!(
                "the server did not exit within {TIMEOUT:?}; stderr:\n{}",
                self.stderr()
            )
        })
    }

    /// The server's process id (for reading its memory use in benchmarks).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }
}

impl Drop for LspClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `file://` URI for an absolute path, percent-encoding what needs it.
pub fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_str().expect("UTF-8 path").bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(byte as char)
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

/// The UTF-16 position (line, character) of byte `offset` in `text`, computed independently
/// of the server's code, for asserting ranges.
pub fn utf16_position(text: &str, offset: usize) -> (u64, u64) {
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let character = before[line_start..].encode_utf16().count();
    (line as u64, character as u64)
}

fn read_frames(stdout: impl Read, tx: mpsc::Sender<Value>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length:") {
                length = v.trim().parse::<usize>().ok();
            }
        }
        let Some(length) = length else { return };
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        match serde_json::from_slice(&body) {
            Ok(value) => {
                if tx.send(value).is_err() {
                    return;
                }
            }
            Err(e) => panic!("server sent invalid JSON: {e}"),
        }
    }
}

/// One JSON-RPC message with its `Content-Length` header.
fn frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).unwrap();
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(&body);
    frame
}
