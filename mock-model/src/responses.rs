//! An OpenAI Responses API server (`POST /v1/responses`, SSE) answering from a [`Script`], in
//! the shapes the real Codex CLI needs (see ../shared/design/codex-offline):
//! `response.created`, per output item `response.output_item.added` (+ `output_text.delta`) and
//! `response.output_item.done`, then `response.completed` with usage. Tool calls are
//! `function_call` items; Codex answers them with `function_call_output` input items.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use serde_json::{Value, json};

use super::{
    Handler, HttpReply, MockServer, ModelReply, ModelRequest, RecordedRequest, Script,
    content_text, next_id,
};

/// Start a Responses server answering from `script`.
pub fn server(script: Script) -> MockServer {
    MockServer::start(handler(script))
}

/// The handler of [`server`], to wrap (e.g. in [`super::faults::injecting`]).
pub fn handler(script: Script) -> Handler {
    let ids = Arc::new(AtomicU64::new(0));
    Arc::new(move |req: &RecordedRequest| handle(req, &script, &ids))
}

fn handle(req: &RecordedRequest, script: &Script, ids: &AtomicU64) -> HttpReply {
    let path = req.path.split('?').next().unwrap_or("");
    match (req.method.as_str(), path) {
        ("POST", "/v1/responses" | "/responses") => {
            let reply = script(&model_request(&req.body));
            HttpReply::sse(&events(&reply, ids))
        }
        ("GET", p) if p.ends_with("/models") => {
            HttpReply::json(&json!({"object": "list", "data": [], "models": []}))
        }
        _ => HttpReply::error(
            404,
            &format!("mock: no route for {} {}", req.method, req.path),
        ),
    }
}

/// The scripted model's view of a Responses request.
pub fn model_request(body: &Value) -> ModelRequest {
    let mut texts = vec![
        body.get("instructions")
            .map(content_text)
            .unwrap_or_default(),
    ];
    let mut tool_results = Vec::new();
    let mut turn = 0;
    for item in body
        .get("input")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call_output") => {
                let out = item.get("output").map(content_text).unwrap_or_default();
                tool_results.push(out.clone());
                texts.push(out);
            }
            Some("function_call") => turn += 1,
            _ => {
                if item.get("role").and_then(Value::as_str) == Some("assistant") {
                    turn += 1;
                }
                texts.push(item.get("content").map(content_text).unwrap_or_default());
            }
        }
    }
    let mut tool_names = Vec::new();
    for tool in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        tool_names.extend(tool.get("name").and_then(Value::as_str).map(str::to_owned));
    }
    ModelRequest {
        body: body.clone(),
        text: texts.join("\n"),
        tool_results,
        tool_names,
        turn,
    }
}

fn events(reply: &ModelReply, ids: &AtomicU64) -> Vec<(String, Value)> {
    let response_id = format!("resp_{}", next_id(ids));
    let mut items = Vec::new();
    if !reply.text.is_empty() {
        items.push(json!({"type": "message", "id": format!("msg_{}", next_id(ids)), "role": "assistant",
            "status": "completed", "content": [{"type": "output_text", "text": reply.text, "annotations": []}]}));
    }
    for c in &reply.tool_calls {
        let n = next_id(ids);
        items.push(
            json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"),
            "name": c.name, "arguments": c.arguments.to_string(), "status": "completed"}),
        );
    }
    let ev = |v: Value| (v["type"].as_str().unwrap_or("").to_owned(), v);
    let mut out = vec![ev(json!({"type": "response.created",
        "response": {"id": response_id, "status": "in_progress", "output": []}}))];
    for (index, item) in items.iter().enumerate() {
        let mut started = item.clone();
        started["status"] = json!("in_progress");
        if item["type"] == "message" {
            started["content"] = json!([]);
        }
        out.push(ev(
            json!({"type": "response.output_item.added", "output_index": index, "item": started}),
        ));
        if item["type"] == "message" {
            out.push(ev(
                json!({"type": "response.output_text.delta", "item_id": item["id"],
                "output_index": index, "content_index": 0, "delta": reply.text}),
            ));
        }
        out.push(ev(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        ));
    }
    let u = reply.usage;
    out.push(ev(
        json!({"type": "response.completed", "response": {"id": response_id,
        "status": "completed", "output": items,
        "usage": {"input_tokens": u.input, "input_tokens_details": {"cached_tokens": u.cached},
                  "output_tokens": u.output, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": u.input + u.output}}}),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MockUsage;

    #[test]
    fn function_calls_and_outputs_round_trip() {
        let reply = ModelReply::tool(
            "exec_command",
            json!({"cmd": "cat x/SKILL.md"}),
            MockUsage {
                input: 10,
                cached: 4,
                output: 1,
            },
        );
        let ev = events(&reply, &AtomicU64::new(0));
        let done = &ev
            .iter()
            .find(|(n, _)| n == "response.output_item.done")
            .unwrap()
            .1;
        assert_eq!(done["item"]["arguments"], "{\"cmd\":\"cat x/SKILL.md\"}");
        assert_eq!(
            ev.last().unwrap().1["response"]["usage"]["input_tokens_details"]["cached_tokens"],
            4
        );
        let body = json!({"tools": [{"type": "function", "name": "exec_command"}],
            "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "- pdf: d"}]},
                      {"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"},
                      {"type": "function_call_output", "call_id": "c", "output": "BODY"}]});
        let r = model_request(&body);
        assert!(
            r.mentions("- pdf: d")
                && r.tool_result_mentions("BODY")
                && r.offers_tool("exec_command")
        );
        assert_eq!(r.turn, 1);
    }
}
