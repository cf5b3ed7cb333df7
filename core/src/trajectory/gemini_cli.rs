//! Gemini CLI `--output-format stream-json` into ATIF (checked against Gemini CLI 0.61.0).
//!
//! Events: `init` (session, model), `message` (the user's prompt, then the agent's text in
//! `delta` pieces), `tool_use` (`tool_name`, `tool_id`, `parameters`), `tool_result`
//! (`tool_id`, `status` `success`/`error`, `output` or `error.message`), `error`, and a final
//! `result` with the run's `stats` (`input_tokens` includes `cached`). The skill tool is
//! `activate_skill` with the skill's `name`.

use serde_json::Value;

use super::events::Builder;
use super::tokens::TokenUsage;
use super::{NormalizedRun, RunContext, json_lines, str_at};

/// The harness name Gemini CLI runs are recorded under.
pub const HARNESS: &str = "gemini-cli";

/// Read a Gemini CLI stream-json transcript. Never fails: unreadable lines become warnings.
pub fn parse_gemini_stream_json(text: &str, ctx: &RunContext) -> NormalizedRun {
    let mut b = Builder::new(HARNESS, ctx);
    for (_line, e) in json_lines(text, &mut b.run.warnings) {
        match str_at(&e, "type") {
            Some("init") => {
                b.run.trajectory.session_id = str_at(&e, "session_id").map(str::to_owned);
            }
            Some("message") if str_at(&e, "role") == Some("assistant") => {
                let content = str_at(&e, "content").unwrap_or("");
                if e.get("delta").and_then(Value::as_bool) == Some(true) {
                    b.text_delta(content);
                } else {
                    b.text(content);
                }
            }
            Some("tool_use") => {
                let id = str_at(&e, "tool_id").unwrap_or("");
                let name = str_at(&e, "tool_name").unwrap_or("");
                b.call(id, name, e.get("parameters").unwrap_or(&Value::Null));
            }
            Some("tool_result") => {
                let id = str_at(&e, "tool_id").unwrap_or("");
                let failed = str_at(&e, "status") == Some("error");
                let output = str_at(&e, "output")
                    .or_else(|| e.pointer("/error/message").and_then(Value::as_str))
                    .unwrap_or("");
                b.result(id, output, failed);
            }
            Some("error") => {
                let msg = str_at(&e, "message").unwrap_or("no message");
                b.error(format!("error: {msg}"));
            }
            Some("result") => {
                b.flush_text();
                if let Some(stats) = e.get("stats") {
                    b.usage(TokenUsage {
                        input: count(stats, "input_tokens"),
                        cached: count(stats, "cached"),
                        output: count(stats, "output_tokens"),
                    });
                }
                if str_at(&e, "status") != Some("success") {
                    let why = e
                        .pointer("/error/message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message");
                    b.error(format!(
                        "result {}: {why}",
                        str_at(&e, "status").unwrap_or("?")
                    ));
                }
                b.ended();
            }
            _ => {}
        }
    }
    b.finish("Gemini CLI")
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
        let text = r#"{"type":"init","session_id":"s1","model":"gemini-2.5-pro"}
{"type":"message","role":"user","content":"format the table"}
{"type":"tool_use","tool_name":"activate_skill","tool_id":"t1","parameters":{"name":"demo-skill"}}
{"type":"tool_result","tool_id":"t1","status":"success","output":"Skill **demo-skill** activated."}
{"type":"message","role":"assistant","content":"ok ","delta":true}
{"type":"message","role":"assistant","content":"done","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":24,"input_tokens":20,"output_tokens":4,"cached":5,"input":20,"tool_calls":1}}"#;
        let run = parse_gemini_stream_json(text, &RunContext::default());
        assert!(run.trajectory.validate().is_empty());
        assert!(run.ended && run.errors.is_empty());
        assert_eq!(run.final_output, "ok done");
        assert_eq!(
            (run.usage.input, run.usage.cached, run.usage.output),
            (20, 5, 4)
        );
        assert!(was_invoked(&run.trajectory, "demo-skill"));
    }

    #[test]
    fn a_failed_activation_is_not_a_read_and_a_cut_stream_stalls() {
        let text = r#"{"type":"tool_use","tool_name":"activate_skill","tool_id":"t1","parameters":{"name":"x"}}
{"type":"tool_result","tool_id":"t1","status":"error","error":{"message":"not found"}}"#;
        let run = parse_gemini_stream_json(text, &RunContext::default());
        assert!(!was_invoked(&run.trajectory, "x"));
        assert!(!run.ended && run.api_stall.is_some());
    }
}
