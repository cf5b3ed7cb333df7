//! Copilot CLI `--output-format json` into ATIF (checked against Copilot CLI 1.0.102).
//!
//! Events: `session.skills_loaded` (every skill the model is shown, with where it came from),
//! `assistant.message` (`content`, `toolRequests` with `toolCallId`, `name`, `arguments`),
//! `tool.execution_complete` (`toolCallId`, `success`, `result.content` or `error`), and a
//! final `result` with the `exitCode`. The JSON output carries no token counts (only premium
//! requests), so a Copilot trial records none. The skill tool is `skill` with `skill`.

use serde_json::Value;

use super::events::Builder;
use super::{NormalizedRun, RunContext, json_lines, str_at};

/// The harness name Copilot CLI runs are recorded under.
pub const HARNESS: &str = "copilot-cli";

/// Read a Copilot CLI JSON transcript. Never fails: unreadable lines become warnings.
pub fn parse_copilot_json(text: &str, ctx: &RunContext) -> NormalizedRun {
    let mut b = Builder::new(HARNESS, ctx);
    for (_line, e) in json_lines(text, &mut b.run.warnings) {
        let data = e.get("data").unwrap_or(&Value::Null);
        match str_at(&e, "type") {
            Some("session.skills_loaded") => {
                let names = data
                    .get("skills")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|s| s.get("enabled").and_then(Value::as_bool) != Some(false))
                    .filter_map(|s| str_at(s, "name").map(str::to_owned))
                    .collect();
                b.run.visible_skills = Some(names);
            }
            Some("assistant.message") => {
                b.text(str_at(data, "content").unwrap_or(""));
                for call in data
                    .get("toolRequests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let id = str_at(call, "toolCallId").unwrap_or("");
                    let name = str_at(call, "name").unwrap_or("");
                    b.call(id, name, call.get("arguments").unwrap_or(&Value::Null));
                }
            }
            Some("tool.execution_complete") => {
                let id = str_at(data, "toolCallId").unwrap_or("");
                let ok = data.get("success").and_then(Value::as_bool) != Some(false);
                let output = data
                    .pointer("/result/content")
                    .or_else(|| data.pointer("/error/message"))
                    .or_else(|| data.get("error"))
                    .map(super::claude_code::value_text)
                    .unwrap_or_default();
                b.result(id, &output, !ok);
            }
            Some("session.error") => {
                let msg = str_at(data, "message").unwrap_or("no message");
                b.error(format!("error: {msg}"));
            }
            Some("result") => {
                b.run.trajectory.session_id = str_at(&e, "sessionId").map(str::to_owned);
                match e.get("exitCode").and_then(Value::as_i64) {
                    Some(0) | None => {}
                    Some(code) => b.error(format!("result: exit code {code}")),
                }
                b.ended();
            }
            _ => {}
        }
    }
    b.finish("Copilot CLI")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::was_invoked;

    #[test]
    fn a_recorded_run_with_the_skill_tool() {
        let text = r#"{"type":"session.skills_loaded","data":{"skills":[{"name":"demo-skill","source":"project","enabled":true},{"name":"off","enabled":false}]}}
{"type":"assistant.message","data":{"content":"","toolRequests":[{"toolCallId":"call_1","name":"skill","arguments":{"skill":"demo-skill"}}]}}
{"type":"tool.execution_complete","data":{"toolCallId":"call_1","success":true,"result":{"content":"Skill \"demo-skill\" loaded successfully."}}}
{"type":"assistant.message","data":{"content":"ok done","toolRequests":[]}}
{"type":"result","sessionId":"s","exitCode":0}"#;
        let run = parse_copilot_json(text, &RunContext::default());
        assert!(run.trajectory.validate().is_empty());
        assert!(run.ended && run.errors.is_empty());
        assert_eq!(run.final_output, "ok done");
        assert_eq!(run.visible_skills, Some(vec!["demo-skill".to_string()]));
        assert!(was_invoked(&run.trajectory, "demo-skill"));
    }
}
