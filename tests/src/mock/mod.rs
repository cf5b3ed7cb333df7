//! Mock model servers on 127.0.0.1 that answer from a script: the one test double the project
//! allows, at the model API. Three wire protocols share one scripting model:
//!
//! - [`openai_chat`]: OpenAI-compatible chat completions (with tool calls), for the `openai`
//!   harness;
//! - [`anthropic`]: Anthropic Messages with SSE streaming, for the real Claude Code CLI;
//! - [`responses`]: the OpenAI Responses API with SSE streaming, for the real Codex CLI;
//! - [`gemini`]: the Gemini API's `streamGenerateContent`, for the real Gemini CLI (the chat
//!   completions server also streams, for the real OpenCode and Copilot CLI).
//!
//! A [`Script`] sees each request as a [`ModelRequest`] (all the text the model was given, the
//! tool results, the tool names) and returns a [`ModelReply`], so a test can make the model
//! behave better when the skill is loaded: e.g. call the skill tool when the skill is listed,
//! answer well only when a tool result holds the skill's SKILL.md text.

pub mod anthropic;
pub mod faults;
pub mod gemini;
pub mod openai_chat;
pub mod responses;
mod server;

use std::sync::Arc;

use serde_json::Value;

pub use server::{Fault, Handler, HttpReply, MockServer, RecordedRequest};

/// A request as the scripted model sees it, whatever the protocol.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The raw request body.
    pub body: Value,
    /// Every text the model was given (system prompt, messages, tool results), joined.
    pub text: String,
    /// The text of each tool result, in order.
    pub tool_results: Vec<String>,
    /// The names of the tools offered.
    pub tool_names: Vec<String>,
    /// How many model replies the conversation already holds.
    pub turn: usize,
}

impl ModelRequest {
    /// Whether any text given to the model contains `needle`.
    pub fn mentions(&self, needle: &str) -> bool {
        self.text.contains(needle)
    }

    /// Whether a tool result contains `needle`.
    pub fn tool_result_mentions(&self, needle: &str) -> bool {
        self.tool_results.iter().any(|r| r.contains(needle))
    }

    /// Whether a tool named `name` is offered.
    pub fn offers_tool(&self, name: &str) -> bool {
        self.tool_names.iter().any(|t| t == name)
    }
}

/// A tool call the scripted model makes.
#[derive(Debug, Clone, PartialEq)]
pub struct MockToolCall {
    /// The tool.
    pub name: String,
    /// Its arguments (a JSON object).
    pub arguments: Value,
}

/// Token counts a reply reports, in ATIF's convention (`cached` is part of `input`); each
/// protocol encodes them in its own convention, so a harness test checks the normalisation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MockUsage {
    /// All prompt tokens.
    pub input: u64,
    /// The cached part of `input`.
    pub cached: u64,
    /// Generated tokens.
    pub output: u64,
}

impl MockUsage {
    /// `input` prompt tokens (none cached) and `output` generated ones.
    pub fn tokens(input: u64, output: u64) -> MockUsage {
        MockUsage {
            input,
            cached: 0,
            output,
        }
    }
}

/// What the scripted model answers.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReply {
    /// Text (may be empty when there are tool calls).
    pub text: String,
    /// Tool calls.
    pub tool_calls: Vec<MockToolCall>,
    /// Reported usage.
    pub usage: MockUsage,
}

impl ModelReply {
    /// A final text answer.
    pub fn text(text: impl Into<String>, usage: MockUsage) -> ModelReply {
        ModelReply {
            text: text.into(),
            tool_calls: Vec::new(),
            usage,
        }
    }

    /// A single tool call.
    pub fn tool(name: impl Into<String>, arguments: Value, usage: MockUsage) -> ModelReply {
        ModelReply {
            text: String::new(),
            tool_calls: vec![MockToolCall {
                name: name.into(),
                arguments,
            }],
            usage,
        }
    }
}

/// The scripted model.
pub type Script = Arc<dyn Fn(&ModelRequest) -> ModelReply + Send + Sync>;

/// Text of a content value: a string, or the `text` (and nested `content`) of its blocks.
fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                let own = i.get("text").and_then(Value::as_str).unwrap_or("");
                let nested = i.get("content").map(content_text).unwrap_or_default();
                format!("{own}{nested}")
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A counter for unique ids within one server.
fn next_id(counter: &std::sync::atomic::AtomicU64) -> u64 {
    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_text_reads_strings_blocks_and_nested_results() {
        let v = json!([{"type": "text", "text": "a"},
                       {"type": "tool_result", "content": [{"type": "text", "text": "b"}]}]);
        assert_eq!(content_text(&v), "a\nb");
        assert_eq!(content_text(&json!("s")), "s");
    }
}
