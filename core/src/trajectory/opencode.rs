//! OpenCode `opencode run --format json` into ATIF (checked against OpenCode 1.18.33).
//!
//! Events carry a `part`: `step_start`, `text` (`part.text`), `tool_use` (`part.tool`,
//! `part.callID`, `part.state` with `status` `completed`/`error`, `input`, `output` or
//! `error`), `step_finish` (`part.reason`, `part.tokens` with `input`, `output`,
//! `cache.read`, and `part.cost`), and `error`. A run ends with a `step_finish` whose reason
//! is not `tool-calls`. The skill tool is `skill` with the skill's `name`.

use serde_json::Value;

use super::events::Builder;
use super::tokens::TokenUsage;
use super::{NormalizedRun, RunContext, json_lines, str_at};

/// The harness name OpenCode runs are recorded under.
pub const HARNESS: &str = "opencode";

/// Read an OpenCode JSON transcript. Never fails: unreadable lines become warnings.
pub fn parse_opencode_json(text: &str, ctx: &RunContext) -> NormalizedRun {
    let mut b = Builder::new(HARNESS, ctx);
    let mut cost = 0.0;
    for (_line, e) in json_lines(text, &mut b.run.warnings) {
        let part = e.get("part").unwrap_or(&Value::Null);
        if b.run.trajectory.session_id.is_none() {
            b.run.trajectory.session_id = str_at(&e, "sessionID").map(str::to_owned);
        }
        match str_at(&e, "type") {
            Some("text") => b.text(str_at(part, "text").unwrap_or("")),
            Some("tool_use") => tool(&mut b, part),
            Some("step_finish") => {
                let tokens = part.get("tokens").unwrap_or(&Value::Null);
                let cached = tokens
                    .pointer("/cache/read")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                // OpenCode's `input` leaves out cache reads (the AI SDK's noCache count)
                b.usage(TokenUsage {
                    input: count(tokens, "input") + cached,
                    cached,
                    output: count(tokens, "output") + count(tokens, "reasoning"),
                });
                cost += part.get("cost").and_then(Value::as_f64).unwrap_or(0.0);
                if str_at(part, "reason") != Some("tool-calls") {
                    b.ended();
                }
            }
            Some("error") => {
                let msg = e
                    .pointer("/error/data/message")
                    .or_else(|| e.pointer("/error/message"))
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                b.error(format!("error: {msg}"));
            }
            _ => {}
        }
    }
    b.run.cost_usd = Some(cost);
    b.finish("OpenCode")
}

fn tool(b: &mut Builder, part: &Value) {
    let id = str_at(part, "callID").unwrap_or("");
    let name = str_at(part, "tool").unwrap_or("");
    let state = part.get("state").unwrap_or(&Value::Null);
    b.call(id, name, state.get("input").unwrap_or(&Value::Null));
    match str_at(state, "status") {
        Some("completed") => b.result(id, str_at(state, "output").unwrap_or(""), false),
        Some("error") => b.result(id, str_at(state, "error").unwrap_or("error"), true),
        _ => {}
    }
}

fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::was_invoked;

    #[test]
    fn a_recorded_run_with_the_skill_tool() {
        let text = r#"{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}
{"type":"tool_use","sessionID":"ses_1","part":{"type":"tool","tool":"skill","callID":"call_1","state":{"status":"completed","input":{"name":"demo-skill"},"output":"<skill_content name=\"demo-skill\">"}}}
{"type":"step_finish","sessionID":"ses_1","part":{"reason":"tool-calls","tokens":{"input":10,"output":2,"reasoning":0,"cache":{"write":0,"read":3}},"cost":0.5}}
{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"ok done"}}
{"type":"step_finish","sessionID":"ses_1","part":{"reason":"stop","tokens":{"input":10,"output":2,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.25}}"#;
        let run = parse_opencode_json(text, &RunContext::default());
        assert!(run.trajectory.validate().is_empty());
        assert!(run.ended && run.errors.is_empty());
        assert_eq!(run.final_output, "ok done");
        assert_eq!(
            (run.usage.input, run.usage.cached, run.usage.output),
            (23, 3, 4)
        );
        assert_eq!(run.cost_usd, Some(0.75));
        assert!(was_invoked(&run.trajectory, "demo-skill"));
    }

    #[test]
    fn a_failed_skill_call_is_not_a_read() {
        let text = r#"{"type":"tool_use","part":{"tool":"skill","callID":"c","state":{"status":"error","input":{"name":"demo-skill"},"error":"ripgrep execution failed"}}}"#;
        let run = parse_opencode_json(text, &RunContext::default());
        assert!(!was_invoked(&run.trajectory, "demo-skill"));
        assert!(!run.ended);
    }
}
