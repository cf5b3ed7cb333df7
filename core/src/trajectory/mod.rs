//! Trajectories: what an agent did in one trial, in one format (ATIF v1.8) whatever harness ran
//! it, so grading, invocation detection and the history never depend on a harness's own output.
//!
//! The normalizers read a harness's machine output (Claude Code `stream-json`, Codex
//! `exec --json`, Gemini CLI `stream-json`, OpenCode `run --format json`, Copilot CLI
//! `--output-format json`, an OpenAI chat-completions transcript) leniently: unknown events are skipped,
//! unreadable lines become [`ParseWarning`]s with their line and column, nothing panics.

pub mod atif;
mod claude_code;
mod codex;
mod copilot_cli;
mod events;
mod gemini_cli;
mod invocation;
mod openai_chat;
mod opencode;
mod shell;
mod tokens;

pub use atif::{
    Agent, AtifError, ContentPart, Extra, FinalMetrics, Message, Metrics, Observation,
    ObservationResult, SCHEMA_VERSION, Step, StepSource, ToolCall, Trajectory,
};
pub use claude_code::parse_claude_stream_json;
pub use codex::parse_codex_exec_json;
pub use copilot_cli::parse_copilot_json;
pub use gemini_cli::parse_gemini_stream_json;
pub use invocation::{Decision, LoadSignal, SkillLoad, first_decision, skill_loads, was_invoked};
pub use openai_chat::{ChatEntry, ChatTranscript, normalize_chat_transcript};
pub use opencode::parse_opencode_json;
pub use shell::{SimpleCommand, simple_commands};
pub use tokens::TokenUsage;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A harness run read into skillwatch's terms: the trajectory plus the figures a trial records.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizedRun {
    /// The run as an ATIF trajectory, `final_metrics` filled in.
    pub trajectory: Trajectory,
    /// What the agent answered last.
    pub final_output: String,
    /// Token totals in ATIF's convention.
    pub usage: TokenUsage,
    /// What the run cost, when the harness says.
    pub cost_usd: Option<f64>,
    /// Failures the harness reported (API errors, failed turns, error results).
    pub errors: Vec<String>,
    /// Harness notices that are not the agent's failure (e.g. Codex's "model metadata not
    /// found" item against an unknown model name).
    pub notices: Vec<String>,
    /// Lines of the output that could not be read.
    pub warnings: Vec<ParseWarning>,
    /// The skills the harness showed the model, when it reports them (Claude Code's
    /// `system/init.skills`): proof of what was visible in each condition.
    pub visible_skills: Option<Vec<String>>,
    /// The harness version, when the output carries it.
    pub harness_version: Option<String>,
    /// Whether the output ends the way a finished run ends (Claude Code's `result` event,
    /// Codex's `turn.completed` or `turn.failed`). An agent that exits 0 with output that
    /// stops short was cut off or garbled: its trial is a harness error, not a result.
    pub ended: bool,
    /// What the agent was still waiting for from the model API when its output stopped:
    /// failed calls it was retrying, or a first reply that never came. A trial killed at its
    /// timeout in this state failed at the model API, not at its task.
    pub api_stall: Option<String>,
}

impl NormalizedRun {
    /// An empty run for a stream parser to fill, event by event: the agent as the context
    /// knows it, and the prompt as the first step when the context has it. The harness
    /// version is left for the parser to set (from the stream or the context).
    fn started(harness: &str, ctx: &RunContext) -> NormalizedRun {
        let agent = Agent {
            name: harness.into(),
            version: ctx
                .harness_version
                .clone()
                .unwrap_or_else(|| "unknown".into()),
            model_name: ctx.model.clone(),
            tool_definitions: None,
            extra: None,
        };
        let mut trajectory = Trajectory::new(agent);
        if let Some(step) = prompt_step(ctx) {
            trajectory.push(step);
        }
        NormalizedRun {
            trajectory,
            final_output: String::new(),
            usage: TokenUsage::default(),
            cost_usd: None,
            errors: Vec::new(),
            notices: Vec::new(),
            warnings: Vec::new(),
            visible_skills: None,
            harness_version: None,
            ended: false,
            api_stall: None,
        }
    }

    /// The number of tool calls in the trajectory.
    pub fn tool_call_count(&self) -> usize {
        self.trajectory.tool_calls().count()
    }
}

/// A line of harness output that could not be read; the run is still read around it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseWarning {
    /// 1-based line of the output.
    pub line: usize,
    /// 1-based column within the line.
    pub column: usize,
    /// What was expected and what was found.
    pub message: String,
}

impl std::fmt::Display for ParseWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Facts about the run that the output itself does not carry.
#[derive(Debug, Clone, Default)]
pub struct RunContext {
    /// The prompt the harness was given; it becomes the first user step.
    pub prompt: Option<String>,
    /// The model asked for, used when the output does not name one.
    pub model: Option<String>,
    /// The harness version, used when the output does not name one.
    pub harness_version: Option<String>,
}

/// The JSON objects of a JSON Lines text, with warnings for lines that are not JSON objects.
/// Blank lines are skipped; lines that are not JSON at all (a CLI's stray log line) are warned.
fn json_lines(text: &str, warnings: &mut Vec<ParseWarning>) -> Vec<(usize, Value)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(trimmed) {
            Ok(v) if v.is_object() => out.push((i + 1, v)),
            Ok(_) => warnings.push(ParseWarning {
                line: i + 1,
                column: 1,
                message: "expected a JSON object, found another JSON value".into(),
            }),
            Err(e) => warnings.push(ParseWarning {
                line: i + 1,
                column: e.column().max(1) + (line.len() - line.trim_start().len()),
                message: format!("expected a JSON event, found text that is not JSON: {e}"),
            }),
        }
    }
    out
}

/// The string at `key`, if it is a string.
fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Tool arguments as an object: objects are kept, anything else is wrapped as `{"input": v}`.
fn arguments_object(v: &Value) -> Extra {
    match v {
        Value::Object(map) => map.clone(),
        Value::Null => Extra::new(),
        other => {
            let mut m = Extra::new();
            m.insert("input".into(), other.clone());
            m
        }
    }
}

/// Fill `final_metrics` from the usage totals and the step count.
fn set_final_metrics(t: &mut Trajectory, usage: TokenUsage, cost_usd: Option<f64>) {
    t.final_metrics = Some(FinalMetrics {
        total_prompt_tokens: Some(usage.input),
        total_completion_tokens: Some(usage.output),
        total_cached_tokens: Some(usage.cached),
        total_cost_usd: cost_usd,
        total_steps: Some(t.steps.len() as u64),
        extra: None,
    });
}

/// The user step holding the prompt, when the context knows it.
fn prompt_step(ctx: &RunContext) -> Option<Step> {
    ctx.prompt
        .as_ref()
        .map(|p| Step::new(0, StepSource::User, p.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_warns_with_line_and_column() {
        let mut w = Vec::new();
        let lines = json_lines("{\"a\":1}\n\n  not json\n[1]\n{\"b\":", &mut w);
        assert_eq!(lines.len(), 1);
        assert_eq!(
            w.iter().map(|w| (w.line, w.column)).collect::<Vec<_>>(),
            vec![(3, 4), (4, 1), (5, 5)]
        );
        assert!(w[0].to_string().starts_with("3:4: expected a JSON event"));
    }
}
