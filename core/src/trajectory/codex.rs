//! Codex `codex exec --json` into ATIF.
//!
//! Codex reports items, not inferences: every `agent_message` becomes an agent step with its
//! text, every tool-like item (`command_execution`, `file_change`, `mcp_tool_call`,
//! `web_search`, ...) an agent step with one tool call named after the item type and its output
//! as the observation. A `reasoning` item is held and attached to the next agent step. Usage
//! arrives per turn (`turn.completed`), not per inference, so it goes into the totals only.
//!
//! An `error` *item* is a notice from the CLI (e.g. "Model metadata for `x` not found" against
//! an unknown model), not the agent's failure; `turn.failed` and top-level `error` events are,
//! except `Reconnecting... n/m (why)`: a failed model call Codex retries, a notice. A finished
//! run ends with `turn.completed` or `turn.failed` ([`NormalizedRun::ended`]); output that stops
//! while Codex is reconnecting, or before the model's first item, records what it was waiting
//! for ([`NormalizedRun::api_stall`]).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::atif::{Extra, Observation, ObservationResult, Step, StepSource, ToolCall};
use super::tokens::TokenUsage;
use super::{Message, NormalizedRun, RunContext, json_lines, set_final_metrics, str_at};

/// The harness name Codex runs are recorded under.
pub const HARNESS: &str = "codex";

/// Read a Codex exec JSON transcript. Never fails: unreadable lines become warnings.
pub fn parse_codex_exec_json(text: &str, ctx: &RunContext) -> NormalizedRun {
    let mut p = Parser::new(ctx);
    for (_line, event) in json_lines(text, &mut p.run.warnings) {
        p.event(&event);
    }
    p.finish()
}

struct Parser {
    run: NormalizedRun,
    /// Item id -> index of the step holding its tool call, so `item.completed` can fill in
    /// what `item.started` opened.
    item_steps: HashMap<String, usize>,
    pending_reasoning: Option<String>,
    last_message: Option<String>,
    /// The newest `Reconnecting` reason, while Codex is retrying a model call.
    reconnecting: Option<String>,
    /// Whether a turn started and no item of the model's came back yet.
    awaiting_model: bool,
}

/// Codex's words for an HTTP 500 from the model API (its `InternalServerError`), which do not
/// name the status; other statuses are spelled out (`unexpected status 503 ...`).
const CODEX_HTTP_500: &str = "experiencing high demand";

impl Parser {
    fn new(ctx: &RunContext) -> Parser {
        let mut run = NormalizedRun::started(HARNESS, ctx);
        run.harness_version = ctx.harness_version.clone();
        Parser {
            run,
            item_steps: HashMap::new(),
            pending_reasoning: None,
            last_message: None,
            reconnecting: None,
            awaiting_model: false,
        }
    }

    fn event(&mut self, e: &Value) {
        match str_at(e, "type") {
            Some("thread.started") => {
                self.run.trajectory.session_id = str_at(e, "thread_id").map(str::to_owned);
            }
            Some("turn.started") => self.awaiting_model = true,
            Some("turn.completed") => {
                self.turn_ended();
                let usage = e
                    .get("usage")
                    .map(TokenUsage::from_codex)
                    .unwrap_or_default();
                self.run.usage = self.run.usage + usage;
            }
            Some("turn.failed") => {
                self.turn_ended();
                let msg = e
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                // the top-level `error` just before says the same
                let said = format!("error: {}", with_cause(msg));
                if self.run.errors.last() == Some(&said) {
                    self.run.errors.pop();
                }
                self.run
                    .errors
                    .push(format!("turn failed: {}", with_cause(msg)));
            }
            Some("error") => {
                let msg = str_at(e, "message").unwrap_or("no message");
                match msg.strip_prefix("Reconnecting... ") {
                    Some(retry) => {
                        self.reconnecting = Some(with_cause(retry));
                        self.run.notices.push(format!(
                            "model API call failed, reconnecting {}",
                            with_cause(retry)
                        ));
                    }
                    None => self.run.errors.push(format!("error: {}", with_cause(msg))),
                }
            }
            Some("item.started") | Some("item.updated") => {
                if let Some(item) = e.get("item") {
                    self.model_answered(item);
                    self.item(item, false);
                }
            }
            Some("item.completed") => {
                if let Some(item) = e.get("item") {
                    self.model_answered(item);
                    self.item(item, true);
                }
            }
            _ => {}
        }
    }

    fn turn_ended(&mut self) {
        self.run.ended = true;
        self.awaiting_model = false;
        self.reconnecting = None;
    }

    /// An item other than the CLI's own `error` notices comes from the model's answer.
    fn model_answered(&mut self, item: &Value) {
        if str_at(item, "type") != Some("error") {
            self.awaiting_model = false;
            self.reconnecting = None;
        }
    }

    fn item(&mut self, item: &Value, completed: bool) {
        let kind = str_at(item, "type").unwrap_or("");
        match kind {
            "agent_message" if completed => {
                let text = str_at(item, "text").unwrap_or("").to_owned();
                self.last_message = Some(text.clone());
                let step = self.agent_step(Message::Text(text));
                self.run.trajectory.push(step);
            }
            "reasoning" if completed => {
                let text = str_at(item, "text").unwrap_or("");
                let r = self.pending_reasoning.get_or_insert_with(String::new);
                if !r.is_empty() {
                    r.push('\n');
                }
                r.push_str(text);
            }
            "error" if completed => {
                let msg = str_at(item, "message").unwrap_or("no message");
                self.run.notices.push(msg.to_owned());
            }
            "agent_message" | "reasoning" | "error" | "plan" | "" => {}
            _ => self.tool_item(kind, item, completed),
        }
    }

    fn agent_step(&mut self, message: Message) -> Step {
        let mut step = Step::new(0, StepSource::Agent, message);
        step.reasoning_content = self.pending_reasoning.take();
        step
    }

    /// A tool-like item: open its step on first sight, fill its observation when completed.
    fn tool_item(&mut self, kind: &str, item: &Value, completed: bool) {
        let id = str_at(item, "id").unwrap_or("").to_owned();
        let index = match self.item_steps.get(&id) {
            Some(&i) => i,
            None => {
                let mut step = self.agent_step(Message::Text(String::new()));
                step.tool_calls = Some(vec![tool_call(kind, &id, item)]);
                let i = self.run.trajectory.push(step);
                self.item_steps.insert(id.clone(), i);
                i
            }
        };
        let step = &mut self.run.trajectory.steps[index];
        if let Some(call) = step.tool_calls.as_mut().and_then(|c| c.first_mut()) {
            call.extra = Some(status_extra(item));
        }
        if completed {
            step.observation = Some(Observation {
                results: vec![ObservationResult {
                    source_call_id: Some(id),
                    content: Some(Message::Text(item_output(kind, item))),
                    subagent_trajectory_ref: None,
                    extra: None,
                }],
            });
        }
    }

    fn finish(mut self) -> NormalizedRun {
        if let Some(reasoning) = self.pending_reasoning.take() {
            let mut step = Step::new(0, StepSource::Agent, "");
            step.reasoning_content = Some(reasoning);
            self.run.trajectory.push(step);
        }
        self.run.final_output = self.last_message.take().unwrap_or_default();
        set_final_metrics(&mut self.run.trajectory, self.run.usage, None);
        self.run.api_stall = match (&self.reconnecting, self.awaiting_model) {
            (Some(why), _) => Some(format!(
                "the model API failed and Codex was still reconnecting ({why})"
            )),
            (None, true) => Some("the model API had not answered Codex's request".to_owned()),
            (None, false) => None,
        };
        self.run
    }
}

/// `msg` with the cause Codex leaves unsaid: its message for an HTTP 500 names no status.
fn with_cause(msg: &str) -> String {
    if msg.contains(CODEX_HTTP_500) {
        format!("{msg} (Codex's message for an HTTP 500 from the model API)")
    } else {
        msg.to_owned()
    }
}

/// The ATIF tool call for an item: named after the item type (`mcp__server__tool` for MCP
/// calls, the convention graders already know), with the item's inputs as arguments.
fn tool_call(kind: &str, id: &str, item: &Value) -> ToolCall {
    let (name, keys): (String, &[&str]) = match kind {
        "command_execution" => (kind.into(), &["command"]),
        "file_change" => (kind.into(), &["changes"]),
        "mcp_tool_call" => (
            format!(
                "mcp__{}__{}",
                str_at(item, "server").unwrap_or(""),
                str_at(item, "tool").unwrap_or("")
            ),
            &["arguments"],
        ),
        "web_search" => (kind.into(), &["query", "action"]),
        "todo_list" => (kind.into(), &["items"]),
        "collab_tool_call" => (kind.into(), &["tool"]),
        _ => (kind.into(), &[]),
    };
    let mut arguments = Map::new();
    for key in keys {
        if let Some(v) = item.get(*key) {
            arguments.insert((*key).into(), v.clone());
        }
    }
    ToolCall {
        tool_call_id: id.to_owned(),
        function_name: name,
        arguments,
        extra: None,
    }
}

fn status_extra(item: &Value) -> Extra {
    let mut extra = Extra::new();
    for key in ["status", "exit_code"] {
        if let Some(v) = item.get(key).filter(|v| !v.is_null()) {
            extra.insert(key.into(), v.clone());
        }
    }
    extra
}

fn item_output(kind: &str, item: &Value) -> String {
    let field = match kind {
        "command_execution" => item.get("aggregated_output"),
        "mcp_tool_call" => item
            .get("result")
            .or_else(|| item.pointer("/error/message")),
        "file_change" => item.get("changes"),
        _ => None,
    };
    field
        .map(super::claude_code::value_text)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{LoadSignal, skill_loads, was_invoked};

    const SKILL_RUN: &str = include_str!("fixtures/codex-exec-json-skill.jsonl");
    const PLAIN_RUN: &str = include_str!("fixtures/codex-exec-json-plain.jsonl");

    fn ctx() -> RunContext {
        RunContext {
            prompt: Some("format the table".into()),
            model: Some("gpt-5".into()),
            harness_version: Some("0.169.0".into()),
        }
    }

    #[test]
    fn recorded_run_with_a_skill_read_detects_the_load_through_bash_lc() {
        let run = parse_codex_exec_json(SKILL_RUN, &ctx());
        let t = &run.trajectory;
        assert!(t.validate().is_empty(), "{:?}", t.validate());
        assert!(run.errors.is_empty(), "the metadata item is a notice");
        assert_eq!(run.notices.len(), 1);
        assert_eq!(t.steps.len(), 3, "prompt, command, answer");
        let call = &t.steps[1].calls()[0];
        assert_eq!(call.function_name, "command_execution");
        assert_eq!(call.extra.as_ref().unwrap()["exit_code"], 0);
        let out = t.steps[1].observation.as_ref().unwrap().results[0]
            .content
            .clone();
        assert!(out.unwrap().text().contains("Align columns"));
        assert_eq!(run.final_output, "Done: table formatted.");
        assert_eq!(
            run.usage,
            TokenUsage {
                input: 200,
                cached: 80,
                output: 10
            }
        );
        let loads = skill_loads(t);
        assert_eq!(loads.len(), 1);
        assert_eq!(loads[0].skill, "demo-skill");
        assert!(matches!(loads[0].signal, LoadSignal::Shell { .. }));
    }

    #[test]
    fn recorded_plain_run_has_no_invocation() {
        let run = parse_codex_exec_json(PLAIN_RUN, &ctx());
        assert!(!was_invoked(&run.trajectory, "demo-skill"));
        assert_eq!(run.final_output, "Done: table formatted.");
        assert_eq!(
            run.usage,
            TokenUsage {
                input: 100,
                cached: 0,
                output: 5
            }
        );
        assert_eq!(run.tool_call_count(), 0);
    }

    #[test]
    fn unfinished_items_failures_and_reasoning_are_kept() {
        let text = r#"{"type":"turn.started"}
{"type":"item.completed","item":{"id":"r","type":"reasoning","text":"plan"}}
{"type":"item.started","item":{"id":"c","type":"command_execution","command":"sleep 100","status":"in_progress"}}
{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"fs","tool":"read","arguments":{"p":1},"error":{"message":"denied"},"status":"failed"}}
{"type":"turn.failed","error":{"message":"stream disconnected"}}
{"type":"error","message":"fatal"}"#;
        let run = parse_codex_exec_json(text, &RunContext::default());
        let t = &run.trajectory;
        assert!(t.validate().is_empty());
        assert_eq!(t.steps[0].reasoning_content.as_deref(), Some("plan"));
        assert!(
            t.steps[0].observation.is_none(),
            "the command never completed"
        );
        assert_eq!(t.steps[1].calls()[0].function_name, "mcp__fs__read");
        assert_eq!(
            t.steps[1].observation.as_ref().unwrap().results[0].content,
            Some(Message::Text("denied".into()))
        );
        assert_eq!(
            run.errors,
            vec!["turn failed: stream disconnected", "error: fatal"]
        );
    }

    #[test]
    fn reconnects_are_notices_and_a_500_is_named() {
        let failed = r#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/5 (We’re currently experiencing high demand, which may cause temporary errors.)"}
{"type":"error","message":"We’re currently experiencing high demand, which may cause temporary errors."}
{"type":"turn.failed","error":{"message":"We’re currently experiencing high demand, which may cause temporary errors."}}"#;
        let run = parse_codex_exec_json(failed, &RunContext::default());
        assert!(run.ended && run.api_stall.is_none());
        assert_eq!(run.errors.len(), 1, "{:?}", run.errors);
        assert!(
            run.errors[0].starts_with("turn failed: "),
            "{:?}",
            run.errors
        );
        assert!(run.errors[0].contains("HTTP 500"), "{:?}", run.errors);
        assert!(
            run.notices[0].contains("reconnecting 1/5"),
            "{:?}",
            run.notices
        );

        // cut off while reconnecting, or before the model ever answered
        let retrying = r#"{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion: error sending request)"}"#;
        let run = parse_codex_exec_json(retrying, &RunContext::default());
        assert!(!run.ended && run.errors.is_empty());
        let stall = run.api_stall.unwrap();
        assert!(stall.contains("error sending request"), "{stall}");
        let run = parse_codex_exec_json(r#"{"type":"turn.started"}"#, &RunContext::default());
        assert!(run.api_stall.unwrap().contains("had not answered"));
        let answered = r#"{"type":"turn.started"}
{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"hi"}}"#;
        let run = parse_codex_exec_json(answered, &RunContext::default());
        assert_eq!((run.ended, run.api_stall), (false, None));
    }
}
