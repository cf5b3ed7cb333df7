//! Claude Code `claude -p ... --output-format stream-json --verbose` into ATIF.
//!
//! Mapping (Harbor's, anchors-evals.md b4/b7.1): one agent step per model inference, i.e. per
//! run of consecutive `assistant` events with the same `message.id` (the CLI emits one event per
//! content block and repeats the usage); `tool_result` blocks of `user` events become the
//! observation of the step that made the call; other `user` text (the skill body Claude Code
//! injects after a `Skill` call) becomes a user step. Totals come from the `result` event, whose
//! usage is the only complete one (streamed assistant events show the usage at message start).
//!
//! A finished run ends with a `result` event ([`NormalizedRun::ended`]). Failed model API calls
//! that Claude Code retries arrive as `system/api_retry` events with the HTTP status; they
//! become notices, and when the output stops while Claude Code is still retrying (or before
//! the model ever answered) the run records what it was waiting for
//! ([`NormalizedRun::api_stall`]): without that, an API that answers 500 looks like a timeout.

use serde_json::Value;

use super::atif::{Extra, Observation, ObservationResult, Step, StepSource, ToolCall};
use super::tokens::TokenUsage;
use super::{
    Message, NormalizedRun, RunContext, arguments_object, json_lines, set_final_metrics, str_at,
};

/// The harness name Claude Code runs are recorded under.
pub const HARNESS: &str = "claude-code";

/// Read a Claude Code stream-json transcript. Never fails: unreadable lines become warnings.
pub fn parse_claude_stream_json(text: &str, ctx: &RunContext) -> NormalizedRun {
    let mut p = Parser::new(ctx);
    for (_line, event) in json_lines(text, &mut p.run.warnings) {
        p.event(&event);
    }
    p.finish()
}

struct Parser {
    run: NormalizedRun,
    /// `message.id` of the agent step the last assistant event extended, until a user event.
    open_message: Option<String>,
    result_usage: Option<TokenUsage>,
    result_text: Option<String>,
    /// Failed model API calls seen (`api_retry` events).
    api_failures: u32,
    /// The newest failure, e.g. `HTTP 500 (server_error)`.
    last_api_failure: Option<String>,
    /// Whether Claude Code is waiting for the model: from `init` until the first reply, and
    /// from a failed call until the next reply.
    awaiting_model: bool,
}

impl Parser {
    fn new(ctx: &RunContext) -> Parser {
        Parser {
            run: NormalizedRun::started(HARNESS, ctx),
            open_message: None,
            result_usage: None,
            result_text: None,
            api_failures: 0,
            last_api_failure: None,
            awaiting_model: false,
        }
    }

    fn event(&mut self, e: &Value) {
        match str_at(e, "type") {
            Some("system") if str_at(e, "subtype") == Some("init") => {
                self.awaiting_model = true;
                self.init(e);
            }
            Some("system") if str_at(e, "subtype") == Some("api_retry") => self.api_retry(e),
            Some("assistant") => {
                self.awaiting_model = false;
                self.assistant(e);
            }
            Some("user") => self.user(e),
            Some("result") => {
                self.awaiting_model = false;
                self.run.ended = true;
                self.result(e);
            }
            Some("error") => {
                let msg = e
                    .pointer("/error/message")
                    .or_else(|| e.get("message"))
                    .map(value_text)
                    .unwrap_or_else(|| e.to_string());
                self.run.errors.push(msg);
            }
            _ => {}
        }
    }

    /// A model API call failed and Claude Code will retry it.
    fn api_retry(&mut self, e: &Value) {
        self.awaiting_model = true;
        self.api_failures += 1;
        let error = str_at(e, "error").unwrap_or("unknown");
        let failure = match e.get("error_status").and_then(Value::as_u64) {
            Some(status) => format!("HTTP {status} ({error})"),
            None => format!("{error}, no HTTP status (the connection failed or was closed)"),
        };
        let attempt = e.get("attempt").and_then(Value::as_u64).unwrap_or(0);
        let max = e.get("max_retries").and_then(Value::as_u64).unwrap_or(0);
        self.run.notices.push(format!(
            "model API call failed: {failure}; retry {attempt} of {max}"
        ));
        self.last_api_failure = Some(failure);
    }

    fn init(&mut self, e: &Value) {
        let t = &mut self.run.trajectory;
        t.session_id = str_at(e, "session_id").map(str::to_owned);
        if let Some(model) = str_at(e, "model") {
            t.agent.model_name = Some(model.to_owned());
        }
        if let Some(v) = str_at(e, "claude_code_version") {
            self.run.harness_version = Some(v.to_owned());
            if t.agent.version == "unknown" {
                t.agent.version = v.to_owned();
            }
        }
        let skills = string_list(e.get("skills"));
        let mut extra = Extra::new();
        for key in ["tools", "skills", "slash_commands", "permissionMode", "cwd"] {
            if let Some(v) = e.get(key) {
                extra.insert(key.into(), v.clone());
            }
        }
        t.agent.extra = Some(extra);
        self.run.visible_skills = skills;
    }

    fn assistant(&mut self, e: &Value) {
        let Some(msg) = e.get("message") else { return };
        let id = str_at(msg, "id").map(str::to_owned);
        let continues = id.is_some() && id == self.open_message;
        if !continues {
            let mut step = Step::new(0, StepSource::Agent, "");
            step.timestamp = str_at(e, "timestamp").map(str::to_owned);
            step.model_name = str_at(msg, "model").map(str::to_owned);
            step.llm_call_count = Some(1);
            if let Some(parent) = e.get("parent_tool_use_id").filter(|v| !v.is_null()) {
                let mut extra = Extra::new();
                extra.insert("parent_tool_use_id".into(), parent.clone());
                step.extra = Some(extra);
            }
            self.run.trajectory.push(step);
            self.open_message = id;
        }
        let step = self.run.trajectory.steps.last_mut().expect("just pushed");
        if let Some(usage) = msg.get("usage").filter(|u| u.is_object()) {
            step.metrics =
                Some(TokenUsage::from_anthropic(usage).to_metrics(None, cache_extra(usage)));
        }
        for block in msg
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            add_block(step, block);
        }
    }

    fn user(&mut self, e: &Value) {
        self.open_message = None;
        let content = e.pointer("/message/content");
        if let Some(text) = content.and_then(Value::as_str) {
            self.user_text(e, text.to_owned());
            return;
        }
        let mut texts = Vec::new();
        for block in content.and_then(Value::as_array).into_iter().flatten() {
            match str_at(block, "type") {
                Some("tool_result") => self.tool_result(block),
                Some("text") => texts.extend(str_at(block, "text").map(str::to_owned)),
                _ => {}
            }
        }
        if !texts.is_empty() {
            self.user_text(e, texts.join("\n"));
        }
    }

    fn user_text(&mut self, e: &Value, text: String) {
        let mut step = Step::new(0, StepSource::User, text);
        step.timestamp = str_at(e, "timestamp").map(str::to_owned);
        if e.get("isSynthetic").and_then(Value::as_bool) == Some(true) {
            let mut extra = Extra::new();
            extra.insert("is_synthetic".into(), Value::Bool(true));
            step.extra = Some(extra);
        }
        self.run.trajectory.push(step);
    }

    fn tool_result(&mut self, block: &Value) {
        let Some(call_id) = str_at(block, "tool_use_id") else {
            return;
        };
        let content = block.get("content").map(value_text).unwrap_or_default();
        let mut result = ObservationResult {
            source_call_id: Some(call_id.to_owned()),
            content: Some(Message::Text(content)),
            subagent_trajectory_ref: None,
            extra: None,
        };
        if block.get("is_error").and_then(Value::as_bool) == Some(true) {
            let mut extra = Extra::new();
            extra.insert("is_error".into(), Value::Bool(true));
            result.extra = Some(extra);
        }
        let owner = self
            .run
            .trajectory
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
            None => self
                .run
                .notices
                .push(format!("tool_result for unknown tool_use_id {call_id:?}")),
        }
    }

    fn result(&mut self, e: &Value) {
        if let Some(usage) = e.get("usage").filter(|u| u.is_object()) {
            self.result_usage = Some(TokenUsage::from_anthropic(usage));
        }
        self.run.cost_usd = e.get("total_cost_usd").and_then(Value::as_f64);
        self.result_text = str_at(e, "result").map(str::to_owned);
        let subtype = str_at(e, "subtype").unwrap_or("");
        let is_error = e.get("is_error").and_then(Value::as_bool) == Some(true);
        if is_error || subtype.starts_with("error") {
            let detail = e
                .get("errors")
                .and_then(Value::as_array)
                .filter(|a| !a.is_empty())
                .map(|a| a.iter().map(value_text).collect::<Vec<_>>().join("; "))
                .or_else(|| self.result_text.clone())
                .unwrap_or_default();
            self.run.errors.push(
                format!("result {subtype}: {detail}")
                    .trim_end_matches(": ")
                    .to_owned(),
            );
        }
        let mut extra = self.run.trajectory.extra.take().unwrap_or_default();
        for key in [
            "num_turns",
            "duration_ms",
            "duration_api_ms",
            "subtype",
            "stop_reason",
        ] {
            if let Some(v) = e.get(key) {
                extra.insert(key.into(), v.clone());
            }
        }
        self.run.trajectory.extra = Some(extra);
    }

    fn finish(mut self) -> NormalizedRun {
        let steps_usage = self
            .run
            .trajectory
            .steps
            .iter()
            .filter_map(|s| s.metrics.as_ref())
            .map(TokenUsage::from_metrics)
            .fold(TokenUsage::default(), |a, b| a + b);
        self.run.usage = self.result_usage.unwrap_or(steps_usage);
        self.run.final_output = self
            .result_text
            .take()
            .or_else(|| self.run.trajectory.final_agent_text())
            .unwrap_or_default();
        set_final_metrics(&mut self.run.trajectory, self.run.usage, self.run.cost_usd);
        if self.awaiting_model {
            self.run.api_stall = Some(match &self.last_api_failure {
                Some(last) => format!(
                    "the model API failed {} time{} (last: {last}) and Claude Code was still retrying",
                    self.api_failures,
                    if self.api_failures == 1 { "" } else { "s" }
                ),
                None => "the model API had not answered Claude Code's first request".to_owned(),
            });
        }
        self.run
    }
}

/// Add one assistant content block to the agent step it belongs to.
fn add_block(step: &mut Step, block: &Value) {
    match str_at(block, "type") {
        Some("text") => {
            let text = str_at(block, "text").unwrap_or("");
            let joined = match &step.message {
                Message::Text(prev) if !prev.is_empty() => format!("{prev}\n{text}"),
                _ => text.to_owned(),
            };
            step.message = Message::Text(joined);
        }
        Some("thinking") => {
            let thinking = str_at(block, "thinking").unwrap_or("");
            let r = step.reasoning_content.get_or_insert_with(String::new);
            if !r.is_empty() {
                r.push('\n');
            }
            r.push_str(thinking);
        }
        Some("tool_use") | Some("server_tool_use") => {
            let call = ToolCall {
                tool_call_id: str_at(block, "id").unwrap_or("").to_owned(),
                function_name: str_at(block, "name").unwrap_or("").to_owned(),
                arguments: arguments_object(block.get("input").unwrap_or(&Value::Null)),
                extra: None,
            };
            step.tool_calls.get_or_insert_with(Vec::new).push(call);
        }
        _ => {}
    }
}

/// Anthropic's cache-creation figures, kept beside the ATIF counts (they cost extra).
fn cache_extra(usage: &Value) -> Option<Extra> {
    let mut extra = Extra::new();
    for key in ["cache_creation_input_tokens", "cache_read_input_tokens"] {
        if let Some(v) = usage.get(key) {
            extra.insert(key.into(), v.clone());
        }
    }
    (!extra.is_empty()).then_some(extra)
}

/// Text of a tool result or error: strings as is, content-block arrays joined, anything else
/// as JSON.
pub(super) fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| match str_at(i, "text") {
                Some(t) => t.to_owned(),
                None => value_text(i),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    let items = v?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_owned))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::was_invoked;

    const SAMPLE: &str = include_str!("fixtures/claude-stream-json-skill.jsonl");

    fn ctx() -> RunContext {
        RunContext {
            prompt: Some("Format the table".into()),
            model: Some("claude-sonnet-4-5".into()),
            harness_version: None,
        }
    }

    #[test]
    fn recorded_sample_becomes_a_valid_trajectory_with_the_skill_invoked() {
        let run = parse_claude_stream_json(SAMPLE, &ctx());
        let t = &run.trajectory;
        assert!(t.validate().is_empty(), "{:?}", t.validate());
        assert!(run.warnings.is_empty() && run.errors.is_empty());
        assert_eq!(t.agent.version, "2.1.328");
        assert_eq!(
            t.session_id.as_deref(),
            Some("bff87bee-c74c-4a08-a5de-26c97a3d48ef")
        );
        let sources: Vec<StepSource> = t.steps.iter().map(|s| s.source).collect();
        use StepSource::*;
        assert_eq!(sources, vec![User, Agent, User, Agent]);
        let call = &t.steps[1].calls()[0];
        assert_eq!(call.function_name, "Skill");
        assert_eq!(call.arguments["skill"], "demo-skill");
        let obs = t.steps[1].observation.as_ref().unwrap();
        assert_eq!(
            obs.results[0].content,
            Some(Message::Text("Launching skill: demo-skill".into()))
        );
        assert!(t.steps[2].message.text().contains("# Steps"));
        assert_eq!(run.final_output, "Done: the table is formatted.");
        assert_eq!(
            run.usage,
            TokenUsage {
                input: 24,
                cached: 0,
                output: 16
            }
        );
        assert_eq!(run.cost_usd, Some(0.000312));
        let skills = run.visible_skills.as_ref().unwrap();
        assert!(skills.contains(&"demo-skill".to_owned()));
        assert!(was_invoked(t, "demo-skill"));
        assert!(!was_invoked(t, "dataviz"));
        let fm = t.final_metrics.as_ref().unwrap();
        assert_eq!(
            (fm.total_prompt_tokens, fm.total_steps),
            (Some(24), Some(4))
        );
    }

    #[test]
    fn merges_blocks_of_one_message_and_normalises_cache_tokens() {
        let text = r#"
{"type":"assistant","message":{"id":"m1","model":"x","content":[{"type":"thinking","thinking":"hmm"}],"usage":{"input_tokens":3,"cache_read_input_tokens":50,"cache_creation_input_tokens":7,"output_tokens":9}}}
{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/.claude/skills/pdf/SKILL.md"}}],"usage":{"input_tokens":3,"cache_read_input_tokens":50,"cache_creation_input_tokens":7,"output_tokens":9}}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"body"}],"is_error":true}]}}
{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}
"#;
        let run = parse_claude_stream_json(text, &RunContext::default());
        let t = &run.trajectory;
        assert_eq!(t.steps.len(), 2, "two inferences");
        assert_eq!(t.steps[0].reasoning_content.as_deref(), Some("hmm"));
        assert_eq!(t.steps[0].metrics.as_ref().unwrap().prompt_tokens, Some(60));
        assert_eq!(t.steps[0].metrics.as_ref().unwrap().cached_tokens, Some(50));
        let result = &t.steps[0].observation.as_ref().unwrap().results[0];
        assert_eq!(result.content, Some(Message::Text("body".into())));
        assert_eq!(result.extra.as_ref().unwrap()["is_error"], true);
        assert_eq!(run.final_output, "a\nb", "no result event: last agent text");
        assert_eq!(
            run.usage,
            TokenUsage {
                input: 60,
                cached: 50,
                output: 9
            }
        );
        assert!(
            !was_invoked(t, "pdf"),
            "a Read of .../pdf/SKILL.md whose result is an error is not a load"
        );
        let loads = crate::trajectory::skill_loads(t);
        assert_eq!(loads.len(), 1);
        assert_eq!(
            loads[0].failure.as_deref(),
            Some("the tool reported an error")
        );
        assert!(t.validate().is_empty());
    }

    #[test]
    fn error_results_and_garbage_lines_are_reported_not_fatal() {
        let text = "garbage\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":\"API Error: 500\"}\n{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":false,\"errors\":[\"max turns\"]}\n";
        let run = parse_claude_stream_json(text, &RunContext::default());
        assert_eq!(run.warnings.len(), 1);
        assert_eq!(run.warnings[0].line, 1);
        assert_eq!(
            run.errors,
            vec![
                "result success: API Error: 500".to_owned(),
                "result error_max_turns: max turns".to_owned()
            ]
        );
    }

    #[test]
    fn api_retries_name_the_status_and_a_run_without_a_result_did_not_end() {
        let init = r#"{"type":"system","subtype":"init","session_id":"s","model":"m","skills":[]}"#;
        let retry = |status: &str, error: &str| {
            format!(
                r#"{{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":500,"error_status":{status},"error":"{error}"}}"#
            )
        };
        let text = format!(
            "{init}\n{}\n{}",
            retry("500", "server_error"),
            retry("500", "server_error")
        );
        let run = parse_claude_stream_json(&text, &ctx());
        assert!(!run.ended);
        let stall = run.api_stall.unwrap();
        assert!(
            stall.contains("failed 2 times") && stall.contains("HTTP 500 (server_error)"),
            "{stall}"
        );
        assert!(run.notices[0].contains("HTTP 500"), "{:?}", run.notices);
        let closed = format!("{init}\n{}", retry("null", "unknown"));
        let stall = parse_claude_stream_json(&closed, &ctx()).api_stall.unwrap();
        assert!(stall.contains("connection failed or was closed"), "{stall}");
        let silent = parse_claude_stream_json(init, &ctx()).api_stall.unwrap();
        assert!(silent.contains("first request"), "{silent}");
        // a reply ends the wait; a `result` ends the run
        let run = parse_claude_stream_json(SAMPLE, &ctx());
        assert!(run.ended && run.api_stall.is_none());
        let garbage = format!("{init}\nnot json at all\n{{\"type\":\"result\",\"subtype\":\"succ");
        let run = parse_claude_stream_json(&garbage, &ctx());
        assert!(!run.ended, "a truncated result line is no result");
        assert_eq!(run.warnings.len(), 2);
    }
}
