//! An Anthropic Messages server (`POST /v1/messages`, SSE streaming or plain JSON) answering
//! from a [`Script`], in the shapes the real Claude Code CLI needs (see
//! ../shared/design/claude-code-offline): `message_start`, `content_block_start` /
//! `content_block_delta` (`text_delta`, `input_json_delta`) / `content_block_stop`,
//! `message_delta` with the stop reason and usage, `message_stop`. `count_tokens` and any other
//! route the CLI probes get a harmless answer.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use serde_json::{Value, json};

use super::{
    Handler, HttpReply, MockServer, ModelReply, ModelRequest, RecordedRequest, Script,
    content_text, next_id,
};

/// Start a Messages server answering from `script`.
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
    if req.method != "POST" || !path.starts_with("/v1/messages") {
        return HttpReply::json(&json!({}));
    }
    if path.starts_with("/v1/messages/count_tokens") {
        return HttpReply::json(&json!({"input_tokens": 10}));
    }
    let reply = script(&model_request(&req.body));
    let model = req.body.get("model").cloned().unwrap_or(Value::Null);
    let message_id = format!("msg_{}", next_id(ids));
    let blocks = content_blocks(&reply, ids);
    if req.body.get("stream").and_then(Value::as_bool) == Some(true) {
        HttpReply::sse(&stream_events(&message_id, &model, &blocks, &reply))
    } else {
        HttpReply::json(
            &json!({"id": message_id, "type": "message", "role": "assistant",
            "model": model, "content": blocks, "stop_reason": stop_reason(&reply),
            "stop_sequence": null, "usage": usage(&reply, true)}),
        )
    }
}

/// The scripted model's view of a Messages request.
pub fn model_request(body: &Value) -> ModelRequest {
    let mut texts = vec![body.get("system").map(content_text).unwrap_or_default()];
    let mut tool_results = Vec::new();
    let mut turn = 0;
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if m.get("role").and_then(Value::as_str) == Some("assistant") {
            turn += 1;
        }
        let content = m.get("content").cloned().unwrap_or(Value::Null);
        for block in content.as_array().into_iter().flatten() {
            if block.get("type").and_then(Value::as_str) == Some("tool_result") {
                tool_results.push(block.get("content").map(content_text).unwrap_or_default());
            }
        }
        texts.push(content_text(&content));
    }
    let tool_names = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    ModelRequest {
        body: body.clone(),
        text: texts.join("\n"),
        tool_results,
        tool_names,
        turn,
    }
}

fn content_blocks(reply: &ModelReply, ids: &AtomicU64) -> Vec<Value> {
    let mut blocks = Vec::new();
    if !reply.text.is_empty() {
        blocks.push(json!({"type": "text", "text": reply.text}));
    }
    for c in &reply.tool_calls {
        blocks.push(
            json!({"type": "tool_use", "id": format!("toolu_{}", next_id(ids)),
                           "name": c.name, "input": c.arguments}),
        );
    }
    blocks
}

fn stop_reason(reply: &ModelReply) -> &'static str {
    if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

/// Anthropic's convention: `input_tokens` excludes the cache reads reported beside it.
fn usage(reply: &ModelReply, with_output: bool) -> Value {
    let u = reply.usage;
    json!({"input_tokens": u.input - u.cached, "cache_read_input_tokens": u.cached,
           "cache_creation_input_tokens": 0, "output_tokens": if with_output { u.output } else { 0 }})
}

fn stream_events(
    id: &str,
    model: &Value,
    blocks: &[Value],
    reply: &ModelReply,
) -> Vec<(String, Value)> {
    let mut events = vec![(
        "message_start".to_owned(),
        json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": usage(reply, false)}}),
    )];
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = match block["type"].as_str() {
            Some("text") => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            ),
            _ => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            ),
        };
        events.push((
            "content_block_start".into(),
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.push((
            "content_block_delta".into(),
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push((
            "content_block_stop".into(),
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta".into(),
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
        "usage": {"output_tokens": reply.usage.output}}),
    ));
    events.push(("message_stop".into(), json!({"type": "message_stop"})));
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MockUsage;

    #[test]
    fn stream_carries_tool_input_as_json_delta_and_cache_split_usage() {
        let reply = ModelReply::tool(
            "Skill",
            json!({"skill": "pdf"}),
            MockUsage {
                input: 100,
                cached: 60,
                output: 7,
            },
        );
        let blocks = content_blocks(&reply, &AtomicU64::new(0));
        let ev = stream_events("msg_1", &json!("m"), &blocks, &reply);
        let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(ev[0].1["message"]["usage"]["input_tokens"], 40);
        assert_eq!(ev[0].1["message"]["usage"]["cache_read_input_tokens"], 60);
        assert_eq!(ev[2].1["delta"]["partial_json"], "{\"skill\":\"pdf\"}");
        assert_eq!(ev[4].1["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn request_view_reads_system_blocks_and_tool_results() {
        let body = json!({"system": [{"type": "text", "text": "SYS"}], "tools": [{"name": "Skill"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "<system-reminder>- pdf: x</system-reminder>"}]},
                         {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Skill", "input": {}}]},
                         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "Launching skill: pdf"},
                                                      {"type": "text", "text": "BODY"}]}]});
        let r = model_request(&body);
        assert!(r.mentions("SYS") && r.mentions("- pdf: x") && r.mentions("BODY"));
        assert_eq!(r.tool_results, vec!["Launching skill: pdf"]);
        assert_eq!(r.turn, 1);
        assert!(r.offers_tool("Skill"));
    }
}
