//! The model server `skillwatch loads` points a CLI at: it records every request and answers
//! each with one short final text in the wire protocol the path asks for (Anthropic Messages,
//! OpenAI Responses, OpenAI chat completions, Gemini `generateContent`), so the CLI ends its
//! run after one turn. It is the measuring instrument, not a model: it never calls tools.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// What the server answers: the run's only reply.
const ANSWER: &str = "OK";

/// A running capture server; stops when dropped.
pub(crate) struct Capture {
    addr: SocketAddr,
    bodies: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Capture {
    /// Listen on a free port of 127.0.0.1.
    pub(crate) async fn start() -> std::io::Result<Capture> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&bodies);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let kept = Arc::clone(&kept);
                tokio::spawn(async move {
                    let service = service_fn(move |req| answer(req, Arc::clone(&kept)));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Capture { addr, bodies, task })
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The JSON bodies received so far, in order.
    pub(crate) fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().map(|b| b.clone()).unwrap_or_default()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    req: Request<hyper::body::Incoming>,
    bodies: Arc<Mutex<Vec<Value>>>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let path = req.uri().path().to_owned();
    let post = req.method() == hyper::Method::POST;
    let bytes = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let (ctype, text) = if post {
        if let Ok(mut b) = bodies.lock() {
            b.push(body.clone());
        }
        reply(&path, &body)
    } else {
        (
            "application/json",
            json!({"object": "list", "data": [], "models": []}).to_string(),
        )
    };
    Ok(Response::builder()
        .header("content-type", ctype)
        .body(Full::new(Bytes::from(text)))
        .unwrap_or_default())
}

/// The answer to a POST of `path`, in the protocol the path names.
fn reply(path: &str, body: &Value) -> (&'static str, String) {
    let stream = body.get("stream").and_then(Value::as_bool) == Some(true);
    if path.ends_with("/messages/count_tokens") {
        return ("application/json", json!({"input_tokens": 1}).to_string());
    }
    if path.ends_with(":countTokens") {
        return ("application/json", json!({"totalTokens": 1}).to_string());
    }
    if path.contains(":streamGenerateContent") || path.contains(":generateContent") {
        let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ANSWER}]},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}});
        return if path.contains(":stream") {
            ("text/event-stream", format!("data: {chunk}\n\n"))
        } else {
            ("application/json", chunk.to_string())
        };
    }
    if path.ends_with("/messages") {
        return anthropic(stream);
    }
    if path.ends_with("/responses") {
        return responses();
    }
    chat(stream)
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(e, d)| format!("event: {e}\ndata: {d}\n\n"))
        .collect()
}

fn anthropic(stream: bool) -> (&'static str, String) {
    let usage = json!({"input_tokens": 1, "output_tokens": 1});
    if !stream {
        let m = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "capture",
            "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn", "usage": usage});
        return ("application/json", m.to_string());
    }
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
            "role": "assistant", "model": "capture", "content": [], "stop_reason": null, "usage": usage}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": ANSWER}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    ("text/event-stream", sse(&events))
}

fn responses() -> (&'static str, String) {
    let item = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]});
    let events = [
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": "r1", "status": "in_progress", "output": []}}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "r1", "status": "completed",
            "output": [item], "usage": {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}}}),
        ),
    ];
    ("text/event-stream", sse(&events))
}

fn chat(stream: bool) -> (&'static str, String) {
    let usage = json!({"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2});
    if !stream {
        let c = json!({"id": "c1", "object": "chat.completion", "created": 1, "model": "capture",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}],
            "usage": usage});
        return ("application/json", c.to_string());
    }
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c1", "object": "chat.completion.chunk",
        "created": 1, "model": "capture", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut last = chunk(json!({}), json!("stop"));
    last["usage"] = usage;
    let text = format!(
        "data: {}\n\ndata: {last}\n\ndata: [DONE]\n\n",
        chunk(json!({"role": "assistant", "content": ANSWER}), Value::Null)
    );
    ("text/event-stream", text)
}
