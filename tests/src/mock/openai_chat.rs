//! An OpenAI-compatible chat-completions server (`POST /v1/chat/completions`, non-streaming,
//! with tool calls) answering from a [`Script`].

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use serde_json::{Value, json};

use super::{
    Handler, HttpReply, MockServer, ModelReply, ModelRequest, RecordedRequest, Script,
    content_text, next_id,
};

/// Start a chat-completions server answering from `script`; `GET /v1/models` lists `mock`.
pub fn server(script: Script) -> MockServer {
    server_listing(script, &["mock"])
}

/// Start a chat-completions server answering from `script` whose `GET /v1/models` lists
/// `models` (what an editor's harness picker offers for the endpoint).
pub fn server_listing(script: Script, models: &[&str]) -> MockServer {
    MockServer::start(handler_listing(script, models))
}

/// The handler of [`server`], to wrap (e.g. in [`super::faults::injecting`]).
pub fn handler(script: Script) -> Handler {
    handler_listing(script, &["mock"])
}

/// The handler of [`server_listing`].
fn handler_listing(script: Script, models: &[&str]) -> Handler {
    let ids = Arc::new(AtomicU64::new(0));
    let listing = json!({
        "object": "list",
        "data": models.iter().map(|m| json!({"id": m, "object": "model"})).collect::<Vec<_>>()
    });
    Arc::new(move |req: &RecordedRequest| handle(req, &script, &ids, &listing))
}

fn handle(req: &RecordedRequest, script: &Script, ids: &AtomicU64, listing: &Value) -> HttpReply {
    let path = req.path.split('?').next().unwrap_or("");
    match (req.method.as_str(), path) {
        ("POST", "/v1/chat/completions" | "/chat/completions") => {
            let reply = script(&model_request(&req.body));
            let whole = completion(&req.body, &reply, ids);
            if req.body.get("stream").and_then(Value::as_bool) == Some(true) {
                return HttpReply::sse_data(&chunks(&whole), true);
            }
            HttpReply::json(&whole)
        }
        ("GET", "/v1/models" | "/models") => HttpReply::json(listing),
        _ => HttpReply::error(
            404,
            &format!("mock: no route for {} {}", req.method, req.path),
        ),
    }
}

/// The scripted model's view of a chat-completions request.
pub fn model_request(body: &Value) -> ModelRequest {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut texts = Vec::new();
    let mut tool_results = Vec::new();
    let mut turn = 0;
    for m in &messages {
        let text = m.get("content").map(content_text).unwrap_or_default();
        match m.get("role").and_then(Value::as_str) {
            Some("tool") => tool_results.push(text.clone()),
            Some("assistant") => turn += 1,
            _ => {}
        }
        texts.push(text);
    }
    let tool_names = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            t.pointer("/function/name")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    ModelRequest {
        body: body.clone(),
        text: texts.join("\n"),
        tool_results,
        tool_names,
        turn,
    }
}

fn completion(body: &Value, reply: &ModelReply, ids: &AtomicU64) -> Value {
    let id = next_id(ids);
    let calls: Vec<Value> = reply
        .tool_calls
        .iter()
        .map(|c| {
            json!({"id": format!("call_{}", next_id(ids)), "type": "function",
                   "function": {"name": c.name, "arguments": c.arguments.to_string()}})
        })
        .collect();
    let mut message = json!({"role": "assistant",
        "content": if reply.text.is_empty() { Value::Null } else { Value::String(reply.text.clone()) }});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let finish = if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let u = reply.usage;
    json!({
        "id": format!("chatcmpl-{id}"), "object": "chat.completion", "created": 1_795_000_000,
        "model": body.get("model").cloned().unwrap_or(Value::Null),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": u.input, "completion_tokens": u.output,
                  "total_tokens": u.input + u.output,
                  "prompt_tokens_details": {"cached_tokens": u.cached}}
    })
}

/// A completion as the stream of chunks OpenCode's and Copilot CLI's clients read: the role
/// and text, each tool call whole in one delta, then the finish reason with the usage.
fn chunks(whole: &Value) -> Vec<Value> {
    let message = &whole["choices"][0]["message"];
    let chunk = |delta: Value, finish: Value, usage: Option<&Value>| {
        let mut c = json!({"id": whole["id"], "object": "chat.completion.chunk",
            "created": whole["created"], "model": whole["model"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if let Some(u) = usage {
            c["usage"] = u.clone();
        }
        c
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": message["content"]}),
        Value::Null,
        None,
    )];
    for (index, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let mut call = call.clone();
        call["index"] = json!(index);
        out.push(chunk(json!({"tool_calls": [call]}), Value::Null, None));
    }
    out.push(chunk(
        json!({}),
        whole["choices"][0]["finish_reason"].clone(),
        Some(&whole["usage"]),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::MockUsage;

    #[test]
    fn request_view_and_reply_shape() {
        let body = json!({"model": "m", "tools": [{"type": "function", "function": {"name": "load_skill"}}],
            "messages": [{"role": "system", "content": "skills: pdf"},
                         {"role": "assistant", "content": null, "tool_calls": []},
                         {"role": "tool", "tool_call_id": "1", "content": "BODY"}]});
        let r = model_request(&body);
        assert!(
            r.mentions("skills: pdf")
                && r.tool_result_mentions("BODY")
                && r.offers_tool("load_skill")
        );
        assert_eq!(r.turn, 1);
        let reply = ModelReply::tool(
            "load_skill",
            json!({"name": "pdf"}),
            MockUsage {
                input: 9,
                cached: 4,
                output: 2,
            },
        );
        let c = completion(&body, &reply, &AtomicU64::new(0));
        assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(
            c["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
            "{\"name\":\"pdf\"}"
        );
        assert_eq!(c["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
    }
}
