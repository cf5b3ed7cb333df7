//! OpenAI chat-completions transcripts into ATIF.
//!
//! A transcript is the conversation as sent to and received from a chat-completions endpoint:
//! each message in wire format (`{"role": ..., "content": ..., "tool_calls": [...]}`), the usage
//! of the response that produced each assistant message, and when it happened. skillwatch's
//! built-in `openai` agent loop writes one; anything else that speaks the protocol can too.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::atif::{Agent, Extra, Observation, ObservationResult, Step, StepSource, ToolCall};
use super::tokens::TokenUsage;
use super::{
    Message, NormalizedRun, ParseWarning, Trajectory, arguments_object, set_final_metrics, str_at,
};

/// A chat-completions conversation with per-response usage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatTranscript {
    /// The model asked for.
    pub model: String,
    /// The messages in order.
    pub entries: Vec<ChatEntry>,
}

/// One message of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatEntry {
    /// The message in chat-completions wire format.
    pub message: Value,
    /// `usage` of the response that produced an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// The model the response named, if it differs from the one asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// ISO 8601 time the message was sent or received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// Normalize a transcript produced by harness `agent` (name, version).
pub fn normalize_chat_transcript(
    transcript: &ChatTranscript,
    agent: (&str, &str),
) -> NormalizedRun {
    let mut t = Trajectory::new(Agent {
        name: agent.0.to_owned(),
        version: agent.1.to_owned(),
        model_name: Some(transcript.model.clone()),
        tool_definitions: None,
        extra: None,
    });
    let mut usage = TokenUsage::default();
    let mut warnings = Vec::new();
    let mut notices = Vec::new();
    for (i, entry) in transcript.entries.iter().enumerate() {
        let role = str_at(&entry.message, "role").unwrap_or("");
        match role {
            "system" | "developer" => push_text(&mut t, StepSource::System, entry),
            "user" => push_text(&mut t, StepSource::User, entry),
            "assistant" => {
                let step = agent_step(entry, &mut warnings, i);
                if let Some(m) = &step.metrics {
                    usage = usage + TokenUsage::from_metrics(m);
                }
                t.push(step);
            }
            "tool" => attach_tool_result(&mut t, entry, &mut notices),
            other => warnings.push(ParseWarning {
                line: i + 1,
                column: 1,
                message: format!(
                    "entries[{i}].message.role: expected system, user, assistant or tool, found {other:?}"
                ),
            }),
        }
    }
    set_final_metrics(&mut t, usage, None);
    NormalizedRun {
        final_output: t.final_agent_text().unwrap_or_default(),
        trajectory: t,
        usage,
        cost_usd: None,
        errors: Vec::new(),
        notices,
        warnings,
        visible_skills: None,
        harness_version: Some(agent.1.to_owned()),
        ended: true,
        api_stall: None,
    }
}

fn push_text(t: &mut Trajectory, source: StepSource, entry: &ChatEntry) {
    let mut step = Step::new(0, source, content_text(entry.message.get("content")));
    step.timestamp = entry.timestamp.clone();
    t.push(step);
}

fn agent_step(entry: &ChatEntry, warnings: &mut Vec<ParseWarning>, index: usize) -> Step {
    let msg = &entry.message;
    let mut step = Step::new(0, StepSource::Agent, content_text(msg.get("content")));
    step.timestamp = entry.timestamp.clone();
    step.model_name = entry.model.clone();
    step.llm_call_count = Some(1);
    step.reasoning_content = str_at(msg, "reasoning_content")
        .or_else(|| str_at(msg, "reasoning"))
        .map(str::to_owned);
    step.metrics = entry
        .usage
        .as_ref()
        .map(|u| TokenUsage::from_openai_chat(u).to_metrics(None, None));
    let calls: Vec<ToolCall> = msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| tool_call(c, warnings, index))
        .collect();
    if !calls.is_empty() {
        step.tool_calls = Some(calls);
    }
    step
}

/// A wire tool call; its `arguments` is a JSON *string* that models sometimes get wrong, so an
/// unparsable one is kept raw under `{"raw": ...}` with a warning rather than dropped.
fn tool_call(c: &Value, warnings: &mut Vec<ParseWarning>, index: usize) -> ToolCall {
    let raw = c.pointer("/function/arguments");
    let arguments = match raw {
        Some(Value::String(s)) if s.trim().is_empty() => Extra::new(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v) => arguments_object(&v),
            Err(e) => {
                warnings.push(ParseWarning {
                    line: index + 1,
                    column: e.column().max(1),
                    message: format!(
                        "entries[{index}] tool call arguments: expected a JSON object, found {s:?}: {e}"
                    ),
                });
                let mut m = Extra::new();
                m.insert("raw".into(), Value::String(s.clone()));
                m
            }
        },
        Some(other) => arguments_object(other),
        None => Extra::new(),
    };
    ToolCall {
        tool_call_id: str_at(c, "id").unwrap_or("").to_owned(),
        function_name: c
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        arguments,
        extra: None,
    }
}

fn attach_tool_result(t: &mut Trajectory, entry: &ChatEntry, notices: &mut Vec<String>) {
    let call_id = str_at(&entry.message, "tool_call_id").unwrap_or("");
    let result = ObservationResult {
        source_call_id: Some(call_id.to_owned()),
        content: Some(Message::Text(content_text(entry.message.get("content")))),
        subagent_trajectory_ref: None,
        extra: None,
    };
    let owner = t
        .steps
        .iter_mut()
        .rev()
        .find(|s| s.calls().iter().any(|c| c.tool_call_id == call_id));
    match owner {
        Some(step) => step
            .observation
            .get_or_insert_with(|| Observation { results: vec![] })
            .results
            .push(result),
        None => notices.push(format!("tool message for unknown tool_call_id {call_id:?}")),
    }
}

/// Message content: a string, or the text of content parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| str_at(p, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(message: Value, usage: Option<Value>) -> ChatEntry {
        ChatEntry {
            message,
            usage,
            model: None,
            timestamp: Some("2026-11-23T10:00:00Z".into()),
        }
    }

    #[test]
    fn tool_calls_become_steps_with_observations_and_summed_usage() {
        let tr = ChatTranscript {
            model: "m".into(),
            entries: vec![
                entry(json!({"role": "system", "content": "sys"}), None),
                entry(
                    json!({"role": "user", "content": [{"type": "text", "text": "task"}]}),
                    None,
                ),
                entry(
                    json!({"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "load_skill", "arguments": "{\"name\":\"pdf\"}"}},
                        {"id": "c2", "type": "function", "function": {"name": "run_command", "arguments": "{oops"}}]}),
                    Some(
                        json!({"prompt_tokens": 100, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 60}}),
                    ),
                ),
                entry(
                    json!({"role": "tool", "tool_call_id": "c1", "content": "skill body"}),
                    None,
                ),
                entry(
                    json!({"role": "tool", "tool_call_id": "c2", "content": "exit 0"}),
                    None,
                ),
                entry(
                    json!({"role": "assistant", "content": "done", "reasoning_content": "because"}),
                    Some(json!({"prompt_tokens": 150, "completion_tokens": 5})),
                ),
            ],
        };
        let run = normalize_chat_transcript(&tr, ("openai", "0.1.0"));
        let t = &run.trajectory;
        assert!(t.validate().is_empty(), "{:?}", t.validate());
        assert_eq!(t.steps.len(), 4);
        assert_eq!(t.steps[2].calls()[0].arguments["name"], "pdf");
        assert_eq!(t.steps[2].calls()[1].arguments["raw"], "{oops");
        assert_eq!(run.warnings.len(), 1);
        assert_eq!(t.steps[2].observation.as_ref().unwrap().results.len(), 2);
        assert_eq!(t.steps[3].reasoning_content.as_deref(), Some("because"));
        assert_eq!(
            run.usage,
            TokenUsage {
                input: 250,
                cached: 60,
                output: 15
            }
        );
        assert_eq!(run.final_output, "done");
        assert_eq!(run.tool_call_count(), 2);
        assert!(crate::trajectory::was_invoked(t, "pdf"));
    }

    #[test]
    fn orphan_tool_messages_and_unknown_roles_are_reported() {
        let tr = ChatTranscript {
            model: "m".into(),
            entries: vec![
                entry(
                    json!({"role": "tool", "tool_call_id": "zz", "content": "x"}),
                    None,
                ),
                entry(json!({"role": "robot", "content": "x"}), None),
            ],
        };
        let run = normalize_chat_transcript(&tr, ("openai", "1"));
        assert_eq!(run.notices.len(), 1);
        assert_eq!(run.warnings.len(), 1);
        assert!(run.warnings[0].message.contains("\"robot\""));
    }
}
