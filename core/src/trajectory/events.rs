//! The one way a harness's event stream becomes an ATIF trajectory when the stream speaks in
//! texts, tool calls and tool results (Gemini CLI's `stream-json`, OpenCode's `run --format
//! json`, Copilot CLI's `--output-format json`). Each format only maps its events onto
//! [`Builder`]'s calls; steps, observations, failures and totals are built here once.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::atif::{Extra, Message, Observation, ObservationResult, Step, StepSource, ToolCall};
use super::tokens::TokenUsage;
use super::{NormalizedRun, RunContext, set_final_metrics};

/// A run being read, event by event.
pub(super) struct Builder {
    /// The run so far.
    pub run: NormalizedRun,
    /// Tool call id -> the step holding the call, so its result lands beside it.
    calls: HashMap<String, usize>,
    /// The agent's text since its last step, for streams that send it in pieces.
    pending_text: String,
    /// Whether the model was asked and had not answered yet (see [`NormalizedRun::api_stall`]).
    awaiting_model: bool,
}

impl Builder {
    /// An empty run of `harness` as the context knows it.
    pub fn new(harness: &str, ctx: &RunContext) -> Builder {
        let mut run = NormalizedRun::started(harness, ctx);
        run.harness_version = ctx.harness_version.clone();
        Builder {
            run,
            calls: HashMap::new(),
            pending_text: String::new(),
            awaiting_model: true,
        }
    }

    /// A piece of the agent's answer (appended to the pending text).
    pub fn text_delta(&mut self, text: &str) {
        self.awaiting_model = false;
        self.pending_text.push_str(text);
    }

    /// A whole message of the agent's: the pending text ends and this becomes a step.
    pub fn text(&mut self, text: &str) {
        self.awaiting_model = false;
        self.pending_text.clear();
        self.push_text(text.to_owned());
    }

    /// End the pending text as a step (when a tool call or the end follows it).
    pub fn flush_text(&mut self) {
        let text = std::mem::take(&mut self.pending_text);
        if !text.is_empty() {
            self.push_text(text);
        }
    }

    fn push_text(&mut self, text: String) {
        if text.is_empty() {
            return;
        }
        self.run.final_output = text.clone();
        self.run
            .trajectory
            .push(Step::new(0, StepSource::Agent, Message::Text(text)));
    }

    /// A tool call of the agent's (a repeated id updates its arguments).
    pub fn call(&mut self, id: &str, name: &str, arguments: &Value) {
        self.awaiting_model = false;
        self.flush_text();
        let arguments = match arguments {
            Value::Object(map) => map.clone(),
            Value::Null => Map::new(),
            other => {
                let mut m = Map::new();
                m.insert("input".into(), other.clone());
                m
            }
        };
        if let Some(&at) = self.calls.get(id) {
            if let Some(call) = self.run.trajectory.steps[at]
                .tool_calls
                .as_mut()
                .and_then(|c| c.first_mut())
            {
                call.arguments = arguments;
            }
            return;
        }
        let mut step = Step::new(0, StepSource::Agent, "");
        step.tool_calls = Some(vec![ToolCall {
            tool_call_id: id.to_owned(),
            function_name: name.to_owned(),
            arguments,
            extra: None,
        }]);
        let at = self.run.trajectory.push(step);
        self.calls.insert(id.to_owned(), at);
    }

    /// The result of tool call `id`; `error` when the tool reported a failure.
    pub fn result(&mut self, id: &str, output: &str, error: bool) {
        let Some(&at) = self.calls.get(id) else {
            self.run
                .notices
                .push(format!("a tool result for an unknown call {id:?}"));
            return;
        };
        let extra = error.then(|| {
            let mut e = Extra::new();
            e.insert("is_error".into(), Value::Bool(true));
            e
        });
        self.run.trajectory.steps[at].observation = Some(Observation {
            results: vec![ObservationResult {
                source_call_id: Some(id.to_owned()),
                content: Some(Message::Text(output.to_owned())),
                subagent_trajectory_ref: None,
                extra,
            }],
        });
        // the agent asks the model again with the result
        self.awaiting_model = true;
    }

    /// Token counts of one model call (added up).
    pub fn usage(&mut self, usage: TokenUsage) {
        self.run.usage = self.run.usage + usage;
    }

    /// A failure the harness reported.
    pub fn error(&mut self, message: String) {
        self.run.errors.push(message);
    }

    /// The run's end event was seen.
    pub fn ended(&mut self) {
        self.run.ended = true;
        self.awaiting_model = false;
    }

    /// The run as read: final metrics set, the stall noted when the stream stopped while the
    /// model had not answered.
    pub fn finish(mut self, harness: &str) -> NormalizedRun {
        self.flush_text();
        set_final_metrics(&mut self.run.trajectory, self.run.usage, self.run.cost_usd);
        if !self.run.ended && self.awaiting_model {
            self.run.api_stall = Some(format!("the model API had not answered {harness}"));
        }
        self.run
    }
}
