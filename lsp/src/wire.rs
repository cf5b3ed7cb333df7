//! The wire guard: LSP framing between the editor and tower-lsp-server, so one bad message
//! costs one error reply instead of the whole session.
//!
//! tower-lsp-server decodes its input with tokio-util's `FramedRead`, which ends the stream after
//! the first decode error (tokio-rs/tokio#3976): a single frame with a broken header or a body
//! that is not a JSON-RPC message would silently end the server. The guard reads frames itself,
//! passes every well-formed JSON-RPC message through unchanged, answers the others with a
//! JSON-RPC error response (`-32700` parse error, `-32600` invalid request), and re-synchronises
//! on the next `Content-Length` header when a header block is broken.
//!
//! It also keeps `shutdown` from being lost to an early `exit`: tower-lsp-server cancels every
//! pending request when `exit` arrives, so a client that sends `exit` right after `shutdown`
//! (without waiting for the reply, as some do on quit) got "Canceled" and an exit code of 1.
//! The guard holds such an `exit` back until the `shutdown` reply has gone out.

use std::io;
use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, mpsc};
use tower_lsp_server::jsonrpc::{Id, Request, Response};

/// A header block longer than this is garbage, not a header: real clients send one or two
/// short lines.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Messages larger than this are skipped (their bytes are read and dropped) and answered with
/// an error. It sits far above any real document: a 20 MB SKILL.md is accepted.
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

const CONTENT_LENGTH: &str = "content-length:";

/// One unit read from the editor's side of the wire.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A well-framed body (not yet checked to be JSON).
    Body(Vec<u8>),
    /// Bytes that could not be framed; the reader has skipped them.
    Broken(FrameError),
}

/// Why a frame could not be read. Each is answered with a JSON-RPC error and the session goes
/// on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// No empty line ended the header block within [`MAX_HEADER_BYTES`].
    #[error("expected a header block ending in an empty line within {limit} bytes, found more")]
    HeaderTooLong {
        /// The limit.
        limit: usize,
    },
    /// The header block had no `Content-Length`.
    #[error("expected a Content-Length header, found headers without one")]
    MissingLength,
    /// `Content-Length` was not a byte count.
    #[error("expected Content-Length to be a byte count, found `{0}`")]
    BadLength(String),
    /// The announced body is larger than [`MAX_MESSAGE_BYTES`]; it was skipped.
    #[error("message of {size} bytes is larger than the {limit} bytes accepted; skipped")]
    TooLarge {
        /// Announced size.
        size: usize,
        /// The limit.
        limit: usize,
    },
}

/// Reads LSP frames (`Content-Length: N\r\n\r\n` + N bytes) from a byte stream.
pub struct FrameReader<R> {
    reader: BufReader<R>,
    /// Set after a broken header block: the next frame starts at the next `Content-Length`.
    resync: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Frame the bytes of `reader`.
    pub fn new(reader: R) -> Self {
        FrameReader {
            reader: BufReader::with_capacity(64 * 1024, reader),
            resync: false,
        }
    }

    /// The next frame, or `None` at the end of the stream (including a stream that ends
    /// inside a frame: the client went away).
    pub async fn next(&mut self) -> io::Result<Option<Frame>> {
        let length = match self.read_headers().await? {
            None => return Ok(None),
            Some(Err(error)) => {
                self.resync = true;
                return Ok(Some(Frame::Broken(error)));
            }
            Some(Ok(length)) => length,
        };
        if length > MAX_MESSAGE_BYTES {
            let skipped = tokio::io::copy(
                &mut (&mut self.reader).take(length as u64),
                &mut tokio::io::sink(),
            )
            .await?;
            if skipped < length as u64 {
                return Ok(None);
            }
            return Ok(Some(Frame::Broken(FrameError::TooLarge {
                size: length,
                limit: MAX_MESSAGE_BYTES,
            })));
        }
        let mut body = vec![0; length];
        match self.reader.read_exact(&mut body).await {
            Ok(_) => Ok(Some(Frame::Body(body))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Read one header block: `Ok(None)` at end of stream, `Ok(Some(Err))` for a broken block.
    async fn read_headers(&mut self) -> io::Result<Option<Result<usize, FrameError>>> {
        let mut length: Option<Result<usize, FrameError>> = None;
        let mut header_bytes = 0;
        let mut seen_any = false;
        loop {
            let Some(line) = self.read_line().await? else {
                return Ok(None);
            };
            let mut line = line.as_str();
            if self.resync {
                let lower = line.to_ascii_lowercase();
                match lower.find(CONTENT_LENGTH) {
                    Some(at) => {
                        line = &line[at..];
                        self.resync = false;
                    }
                    None => continue,
                }
            }
            if line.is_empty() {
                if !seen_any {
                    continue; // stray blank line between frames
                }
                return Ok(Some(length.unwrap_or(Err(FrameError::MissingLength))));
            }
            seen_any = true;
            header_bytes += line.len() + 2;
            if header_bytes > MAX_HEADER_BYTES {
                return Ok(Some(Err(FrameError::HeaderTooLong {
                    limit: MAX_HEADER_BYTES,
                })));
            }
            if line.to_ascii_lowercase().starts_with(CONTENT_LENGTH) {
                let value = line[CONTENT_LENGTH.len()..].trim();
                length = Some(
                    value
                        .parse::<usize>()
                        .map_err(|_| FrameError::BadLength(value.chars().take(40).collect())),
                );
            }
        }
    }

    /// One line without its `\r\n` or `\n`, lossily decoded (headers are ASCII).
    async fn read_line(&mut self) -> io::Result<Option<String>> {
        let mut buf = Vec::new();
        let limit = if self.resync {
            MAX_MESSAGE_BYTES
        } else {
            MAX_HEADER_BYTES
        };
        let n = (&mut self.reader)
            .take(limit as u64 + 1)
            .read_until(b'\n', &mut buf)
            .await?;
        if n == 0 {
            return Ok(None);
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
    }
}

/// Exactly the shapes tower-lsp-server's decoder accepts (its own `Message` is private).
#[derive(Deserialize)]
#[serde(untagged)]
enum Message {
    #[allow(dead_code)]
    Response(Response),
    #[allow(dead_code)]
    Request(Request),
}

/// What to do with one framed body.
#[derive(Debug)]
pub enum Verdict {
    /// A JSON-RPC message the server can decode: pass it on.
    Pass,
    /// An empty body: nothing to pass and nothing to answer.
    Empty,
    /// Not a message: answer with this error response.
    Reject(Response),
}

/// Decide whether tower-lsp-server can decode `body`; if not, the error response to send.
pub fn judge(body: &[u8]) -> Verdict {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Empty;
    }
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        Err(e) => {
            let message = format!(
                "expected a UTF-8 JSON-RPC message, found invalid UTF-8 at byte {}",
                e.valid_up_to()
            );
            return Verdict::Reject(error_response(Id::Null, -32700, message));
        }
    };
    if serde_json::from_str::<Message>(text).is_ok() {
        return Verdict::Pass;
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Err(e) => Verdict::Reject(error_response(
            Id::Null,
            -32700,
            format!(
                "expected a JSON-RPC message, found invalid JSON at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
        )),
        Ok(value) => {
            let id = value
                .get("id")
                .and_then(|id| serde_json::from_value::<Id>(id.clone()).ok())
                .unwrap_or(Id::Null);
            Verdict::Reject(error_response(
                id,
                -32600,
                "expected a JSON-RPC 2.0 request, notification or response object \
                 (`jsonrpc: \"2.0\"` with `method`, or `id` with `result`/`error`), found another JSON value"
                    .to_string(),
            ))
        }
    }
}

fn error_response(id: Id, code: i64, message: String) -> Response {
    let error = tower_lsp_server::jsonrpc::Error {
        code: code.into(),
        message: message.into(),
        data: None,
    };
    Response::from_error(id, error)
}

/// Write one frame.
pub async fn write_frame<W: AsyncWrite + Unpin>(writer: &mut W, body: &[u8]) -> io::Result<()> {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    writer.write_all(header.as_bytes()).await?;
    writer.write_all(body).await?;
    writer.flush().await
}

/// How long an `exit` waits for the reply to the `shutdown` before it: far more than the
/// server needs, short enough that a server which never answers still exits.
pub const SHUTDOWN_REPLY_WAIT: Duration = Duration::from_secs(5);

/// A message's method and id, read only from small bodies (`shutdown`, `exit` and their
/// replies are a few dozen bytes; documents are never parsed twice).
#[derive(Deserialize)]
struct Head {
    method: Option<String>,
    id: Option<serde_json::Value>,
}

const HEAD_LIMIT: usize = 512;

fn head(body: &[u8]) -> Option<Head> {
    (body.len() <= HEAD_LIMIT)
        .then(|| serde_json::from_slice(body).ok())
        .flatten()
}

/// The `shutdown` request in flight, shared by the two pumps: the input pump records it, the
/// output pump reports its reply, and an `exit` waits for that reply.
#[derive(Debug, Default)]
pub struct ShutdownReply {
    pending: Mutex<Option<serde_json::Value>>,
    answered: Notify,
}

impl ShutdownReply {
    fn expect(&self, id: serde_json::Value) {
        *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(id);
    }

    fn is_pending(&self) -> bool {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Note a message on its way to the client: the awaited reply, if it is one.
    fn saw_outgoing(&self, body: &[u8]) {
        if !self.is_pending() {
            return;
        }
        let Some(head) = head(body).filter(|h| h.method.is_none()) else {
            return;
        };
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if head.id.is_some() && *pending == head.id {
            *pending = None;
            self.answered.notify_one();
        }
    }

    /// Wait until the awaited reply went out (at once when none is awaited).
    async fn wait(&self) {
        let answered = self.answered.notified();
        if !self.is_pending() {
            return;
        }
        if tokio::time::timeout(SHUTDOWN_REPLY_WAIT, answered)
            .await
            .is_err()
        {
            tracing::warn!("no reply to `shutdown` within {SHUTDOWN_REPLY_WAIT:?}; exiting anyway");
        }
    }
}

/// Pump the editor's input into the server: well-formed messages go to `server`, every broken
/// or undecodable frame is answered through `replies`. Returns at end of input; dropping
/// `server` then tells the server the client is gone.
pub async fn pump_input<R, W>(
    input: R,
    mut server: W,
    replies: mpsc::Sender<Vec<u8>>,
    shutdown: &ShutdownReply,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut frames = FrameReader::new(input);
    loop {
        let frame = match frames.next().await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(e) => {
                tracing::warn!("reading from the client failed: {e}");
                break;
            }
        };
        let rejected = match frame {
            Frame::Broken(error) => {
                tracing::warn!("dropped a malformed frame: {error}");
                error_response(Id::Null, -32700, error.to_string())
            }
            Frame::Body(body) => match judge(&body) {
                Verdict::Pass => {
                    let mut exit = false;
                    if let Some(head) = head(&body) {
                        match (head.method.as_deref(), head.id) {
                            (Some("shutdown"), Some(id)) => shutdown.expect(id),
                            (Some("exit"), None) => {
                                shutdown.wait().await;
                                exit = true;
                            }
                            _ => {}
                        }
                    }
                    // after `exit` nothing more is read: a read still pending while the
                    // runtime shuts down fails with "task was cancelled", a false warning
                    if write_frame(&mut server, &body).await.is_err() || exit {
                        break; // the server has stopped reading (it got `exit`)
                    }
                    continue;
                }
                Verdict::Empty => continue,
                Verdict::Reject(response) => {
                    tracing::warn!("answered an undecodable message with an error");
                    response
                }
            },
        };
        let Ok(bytes) = serde_json::to_vec(&rejected) else {
            continue;
        };
        if replies.send(bytes).await.is_err() {
            break;
        }
    }
}

/// Pump the server's output and the guard's replies to the editor, frame by frame, so the two
/// never interleave inside a message. Returns when the server's output ends or the editor stops
/// reading.
pub async fn pump_output<R, W>(
    server: R,
    mut output: W,
    mut replies: mpsc::Receiver<Vec<u8>>,
    shutdown: &ShutdownReply,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut frames = FrameReader::new(server);
    let mut replies_open = true;
    loop {
        let body = tokio::select! {
            frame = frames.next() => match frame {
                Ok(Some(Frame::Body(body))) => body,
                Ok(Some(Frame::Broken(error))) => {
                    tracing::error!("the server wrote a broken frame: {error}");
                    continue;
                }
                Ok(None) | Err(_) => break,
            },
            reply = replies.recv(), if replies_open => match reply {
                Some(body) => body,
                None => { replies_open = false; continue; }
            },
        };
        if let Err(e) = write_frame(&mut output, &body).await {
            tracing::info!("the client stopped reading: {e}");
            break;
        }
        shutdown.saw_outgoing(&body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8]) -> Vec<Frame> {
        let mut reader = FrameReader::new(input);
        let mut out = Vec::new();
        while let Some(frame) = reader.next().await.unwrap() {
            out.push(frame);
        }
        out
    }

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[tokio::test]
    async fn reads_consecutive_frames_and_ignores_content_type() {
        let input = format!(
            "{}Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=latin1\r\n\r\n{{}}",
            framed("{\"a\":1}")
        );
        assert_eq!(
            frames(input.as_bytes()).await,
            vec![
                Frame::Body(b"{\"a\":1}".to_vec()),
                Frame::Body(b"{}".to_vec())
            ]
        );
    }

    #[tokio::test]
    async fn a_broken_header_resyncs_on_the_next_content_length() {
        let input = format!(
            "Content-Length: abc\r\n\r\n{{garbage}}{}",
            framed("{\"ok\":true}")
        );
        let got = frames(input.as_bytes()).await;
        assert_eq!(
            got,
            vec![
                Frame::Broken(FrameError::BadLength("abc".into())),
                Frame::Body(b"{\"ok\":true}".to_vec())
            ]
        );
    }

    #[tokio::test]
    async fn missing_length_and_truncated_body() {
        let input = format!(
            "X-Other: 1\r\n\r\n{}Content-Length: 10\r\n\r\nabc",
            framed("{}")
        );
        let got = frames(input.as_bytes()).await;
        assert_eq!(
            got,
            vec![
                Frame::Broken(FrameError::MissingLength),
                Frame::Body(b"{}".to_vec())
            ]
        );
    }

    #[tokio::test]
    async fn an_endless_header_is_refused() {
        let input = "A".repeat(MAX_HEADER_BYTES * 2);
        let got = frames(input.as_bytes()).await;
        assert!(matches!(
            got[0],
            Frame::Broken(FrameError::HeaderTooLong { .. })
        ));
    }

    #[test]
    fn judge_classifies_bodies() {
        let ok = br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{}}"#;
        assert!(matches!(judge(ok), Verdict::Pass));
        assert!(matches!(judge(b"  "), Verdict::Empty));
        let Verdict::Reject(bad_json) = judge(b"{not json") else {
            panic!()
        };
        let text = serde_json::to_string(&bad_json).unwrap();
        assert!(
            text.contains("-32700") && text.contains("\"id\":null"),
            "{text}"
        );
        let Verdict::Reject(not_rpc) = judge(br#"{"jsonrpc":"1.0","id":7}"#) else {
            panic!()
        };
        let text = serde_json::to_string(&not_rpc).unwrap();
        assert!(
            text.contains("-32600") && text.contains("\"id\":7"),
            "{text}"
        );
        assert!(matches!(judge(b"\xff\xfe"), Verdict::Reject(_)));
    }

    /// `exit` ends the reading: the pump returns even though the editor's input stays open,
    /// and nothing sent after `exit` reaches the server.
    #[tokio::test]
    async fn nothing_is_read_after_exit() {
        let exit = r#"{"jsonrpc":"2.0","method":"exit"}"#;
        let late = r#"{"jsonrpc":"2.0","method":"late"}"#;
        let (mut editor, input) = tokio::io::duplex(1 << 16);
        let (to_server, mut server) = tokio::io::duplex(1 << 16);
        editor
            .write_all(format!("{}{}", framed(exit), framed(late)).as_bytes())
            .await
            .unwrap();
        let (replies, _keep) = mpsc::channel(1);
        let shutdown = ShutdownReply::default();
        let pump = pump_input(input, to_server, replies, &shutdown);
        tokio::time::timeout(Duration::from_secs(10), pump)
            .await
            .expect("the pump kept reading after exit");
        drop(editor);
        let mut got = String::new();
        server.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, framed(exit));
    }
}
