//! A small HTTP/1.1 server on 127.0.0.1 that answers every request with a handler and records
//! what it received. It runs on its own thread and runtime so it serves any test, async or not.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::sync::oneshot;

/// One request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// Path and query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// The body as JSON, `Null` when it was empty or not JSON.
    pub body: Value,
    /// The `Authorization` header (or Anthropic's `x-api-key`), as sent.
    pub authorization: Option<String>,
}

/// An HTTP answer.
#[derive(Debug, Clone)]
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// Content type.
    pub content_type: &'static str,
    /// Body bytes.
    pub body: Vec<u8>,
    /// Instead of answering: close the connection, or never answer.
    pub fault: Option<Fault>,
}

/// A connection-level failure of the model API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Close the connection without an answer.
    Close,
    /// Keep the connection open and never answer.
    Hang,
}

impl HttpReply {
    /// 200 with a JSON body.
    pub fn json(value: &Value) -> HttpReply {
        HttpReply {
            status: 200,
            content_type: "application/json",
            body: value.to_string().into_bytes(),
            fault: None,
        }
    }

    /// 200 with a server-sent-events body made of `(event, data)` pairs.
    pub fn sse(events: &[(String, Value)]) -> HttpReply {
        let mut body = String::new();
        for (event, data) in events {
            body.push_str(&format!("event: {event}\ndata: {data}\n\n"));
        }
        HttpReply {
            status: 200,
            content_type: "text/event-stream",
            body: body.into_bytes(),
            fault: None,
        }
    }

    /// 200 with a server-sent-events body of `data:` lines only (OpenAI chat-completion
    /// chunks, Gemini's `alt=sse`), ended by `data: [DONE]` when `done` is given.
    pub fn sse_data(chunks: &[Value], done: bool) -> HttpReply {
        let mut body = String::new();
        for chunk in chunks {
            body.push_str(&format!("data: {chunk}\n\n"));
        }
        if done {
            body.push_str("data: [DONE]\n\n");
        }
        HttpReply {
            status: 200,
            content_type: "text/event-stream",
            body: body.into_bytes(),
            fault: None,
        }
    }

    /// An error status with a JSON message.
    pub fn error(status: u16, message: &str) -> HttpReply {
        HttpReply {
            status,
            content_type: "application/json",
            body: serde_json::json!({"error": {"message": message}})
                .to_string()
                .into_bytes(),
            fault: None,
        }
    }

    /// A connection-level failure instead of an answer.
    pub fn fault(fault: Fault) -> HttpReply {
        HttpReply {
            status: 200,
            content_type: "text/plain",
            body: Vec::new(),
            fault: Some(fault),
        }
    }
}

/// What answers requests: gets the recorded request, returns the reply.
pub type Handler = Arc<dyn Fn(&RecordedRequest) -> HttpReply + Send + Sync>;

/// A running mock server; stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Start serving with `handler` on a free port of 127.0.0.1.
    pub fn start(handler: Handler) -> MockServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = oneshot::channel();
        let recorded = requests.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("mock server runtime");
            rt.block_on(serve(listener, handler, recorded, rx));
        });
        MockServer {
            addr,
            requests,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `--harness openai --base-url URL/v1 --model MODEL`: the built-in openai harness of
    /// `run`, `probe` and `trigger` on this (OpenAI-compatible) server.
    pub fn openai_args(&self, model: &str) -> Vec<String> {
        let base = format!("{}/v1", self.url());
        ["--harness", "openai", "--base-url", &base, "--model", model]
            .map(str::to_owned)
            .to_vec()
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().expect("requests lock").clone()
    }

    /// The JSON bodies of requests whose path starts with `prefix`.
    pub fn bodies(&self, prefix: &str) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.starts_with(prefix))
            .map(|r| r.body)
            .collect()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn serve(
    listener: std::net::TcpListener,
    handler: Handler,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    mut shutdown: oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => continue,
            },
        };
        let handler = handler.clone();
        let requests = requests.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                let handler = handler.clone();
                let requests = requests.clone();
                async move { answer(req, &handler, &requests).await }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    req: Request<hyper::body::Incoming>,
    handler: &Handler,
    requests: &Mutex<Vec<RecordedRequest>>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let method = req.method().to_string();
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let authorization = ["authorization", "x-api-key"]
        .iter()
        .find_map(|h| req.headers().get(*h))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let recorded = RecordedRequest {
        method,
        path,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        authorization,
    };
    requests
        .lock()
        .expect("requests lock")
        .push(recorded.clone());
    let reply = handler(&recorded);
    match reply.fault {
        // an error from the service makes hyper drop the connection unanswered
        Some(Fault::Close) => return Err(std::io::Error::other("closing the connection")),
        Some(Fault::Hang) => std::future::pending::<()>().await,
        None => {}
    }
    Ok(Response::builder()
        .status(reply.status)
        .header("content-type", reply.content_type)
        .body(Full::new(Bytes::from(reply.body)))
        .expect("valid response"))
}
