//! A Gemini API server (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse` and
//! `:generateContent`) answering from a [`Script`], in the shapes the real Gemini CLI reads:
//! one `data:` chunk with the candidate's parts (`text`, `functionCall`) and its
//! `usageMetadata`. `:countTokens` gets a harmless answer.

use serde_json::{Value, json};

use super::{Handler, HttpReply, MockServer, ModelReply, ModelRequest, RecordedRequest, Script};

/// Start a Gemini API server answering from `script`.
pub fn server(script: Script) -> MockServer {
    MockServer::start(handler(script))
}

/// The handler of [`server`].
pub fn handler(script: Script) -> Handler {
    std::sync::Arc::new(move |req: &RecordedRequest| handle(req, &script))
}

fn handle(req: &RecordedRequest, script: &Script) -> HttpReply {
    let path = req.path.split('?').next().unwrap_or("");
    if req.method != "POST" {
        return HttpReply::json(&json!({"models": []}));
    }
    if path.ends_with(":countTokens") {
        return HttpReply::json(&json!({"totalTokens": 10}));
    }
    if !path.ends_with(":streamGenerateContent") && !path.ends_with(":generateContent") {
        return HttpReply::error(404, &format!("mock: no route for POST {}", req.path));
    }
    let reply = script(&model_request(&req.body));
    let answer = response(&reply);
    if path.ends_with(":streamGenerateContent") {
        HttpReply::sse_data(&[answer], false)
    } else {
        HttpReply::json(&answer)
    }
}

/// The scripted model's view of a generateContent request.
pub fn model_request(body: &Value) -> ModelRequest {
    let mut texts = vec![part_texts(
        body.get("systemInstruction").unwrap_or(&Value::Null),
    )];
    let mut tool_results = Vec::new();
    let mut turn = 0;
    for content in body
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if content.get("role").and_then(Value::as_str) == Some("model") {
            turn += 1;
        }
        for part in content
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(r) = part.get("functionResponse") {
                let out = r.get("response").map(Value::to_string).unwrap_or_default();
                tool_results.push(out.clone());
                texts.push(out);
            }
        }
        texts.push(part_texts(content));
    }
    let tool_names = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|t| {
            t.get("functionDeclarations")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|f| f.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    ModelRequest {
        body: body.clone(),
        text: texts.join("\n"),
        tool_results,
        tool_names,
        turn,
    }
}

fn part_texts(content: &Value) -> String {
    content
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

fn response(reply: &ModelReply) -> Value {
    let mut parts = Vec::new();
    if !reply.text.is_empty() {
        parts.push(json!({"text": reply.text}));
    }
    for c in &reply.tool_calls {
        parts.push(json!({"functionCall": {"name": c.name, "args": c.arguments}}));
    }
    let u = reply.usage;
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": u.input, "cachedContentTokenCount": u.cached,
                          "candidatesTokenCount": u.output, "totalTokenCount": u.input + u.output},
        "modelVersion": "mock"
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::MockUsage;

    #[test]
    fn function_calls_and_responses_round_trip() {
        let reply = ModelReply::tool(
            "activate_skill",
            json!({"name": "pdf"}),
            MockUsage::tokens(9, 2),
        );
        let r = response(&reply);
        assert_eq!(
            r["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]["name"],
            "pdf"
        );
        let body = json!({"systemInstruction": {"parts": [{"text": "<name>pdf</name>"}]},
            "tools": [{"functionDeclarations": [{"name": "activate_skill"}]}],
            "contents": [{"role": "user", "parts": [{"text": "go"}]},
                         {"role": "model", "parts": [{"functionCall": {"name": "activate_skill", "args": {}}}]},
                         {"role": "user", "parts": [{"functionResponse": {"name": "activate_skill", "response": {"output": "BODY"}}}]}]});
        let m = model_request(&body);
        assert!(
            m.mentions("<name>pdf</name>")
                && m.tool_result_mentions("BODY")
                && m.offers_tool("activate_skill")
        );
        assert_eq!(m.turn, 1);
    }
}
