//! The `openai` harness: skillwatch's own agent loop over any OpenAI-compatible
//! chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, gateways).
//!
//! It exists so a skill can be measured on a local or open model without a vendor CLI. The loop
//! is deliberately plain, like the CLIs it stands beside: a system prompt that lists the
//! installed skills by name and description (as Claude Code and Codex do), five tools
//! ([`tools`]), and turns until the model answers without a tool call. Skills are staged in
//! `.agents/skills/<name>/`, so reading a SKILL.md with `read_file` or `cat` counts as loading
//! it, just like calling `load_skill`.

mod tools;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillwatch_core::skill::load_document;
use skillwatch_core::trajectory::{ChatEntry, ChatTranscript, normalize_chat_transcript};

use super::cli;
use super::clock::now_iso8601;
use super::env::{HostEnv, TrialEnv};
use super::process::{Exit, ProcessOutcome};
use super::{
    BoxFuture, ErrorKind, Harness, HarnessError, HarnessInfo, TrialError, TrialLogs, TrialOutcome,
    TrialSpec,
};
use tools::{SkillEntry, ToolBox};

/// Bumped whenever the system prompt or the tools change, since either changes results: the
/// harness version is part of a result's identity, so old baselines are not reused.
const LOOP_REVISION: u32 = 1;

/// How to reach the endpoint and bound the loop.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// The API base, e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// Bearer token; otherwise the host's `OPENAI_API_KEY`, if any.
    pub api_key: Option<String>,
    /// Model calls per trial before the trial counts as failed.
    pub max_turns: u32,
    /// The longest one `run_command` may run.
    pub command_timeout: Duration,
    /// Tool results are cut to this many bytes.
    pub max_tool_output: usize,
    /// Sampling temperature, when set.
    pub temperature: Option<f64>,
    /// Further host variables commands may see.
    pub env_allow: Vec<String>,
    /// The environment trials draw from.
    pub host_env: HostEnv,
}

impl OpenAiConfig {
    /// Defaults for an endpoint at `base_url`.
    pub fn new(base_url: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key: None,
            max_turns: 30,
            command_timeout: Duration::from_secs(120),
            max_tool_output: 32 * 1024,
            temperature: None,
            env_allow: Vec::new(),
            host_env: HostEnv::current(),
        }
    }
}

/// The built-in agent loop adapter.
#[derive(Debug)]
pub struct OpenAi {
    config: OpenAiConfig,
    client: reqwest::Client,
}

/// Why the loop stopped early.
#[derive(Debug)]
enum LoopError {
    Request(String),
    Turns(u32),
}

impl OpenAi {
    /// An adapter for the endpoint in `config`.
    pub fn new(config: OpenAiConfig) -> OpenAi {
        OpenAi {
            config,
            client: reqwest::Client::new(),
        }
    }

    fn info() -> HarnessInfo {
        HarnessInfo {
            name: "openai".into(),
            version: format!("{}+loop.{LOOP_REVISION}", env!("CARGO_PKG_VERSION")),
        }
    }

    async fn run_trial(&self, spec: &TrialSpec) -> TrialOutcome {
        let info = Self::info();
        let dirs = match cli::prepare(spec, self.skills_dir()) {
            Ok(d) => d,
            Err(e) => return TrialOutcome::not_started(info, e),
        };
        let workspace = match spec.workspace.canonicalize() {
            Ok(w) => w,
            Err(e) => {
                let msg = format!("{}: {e}", spec.workspace.display());
                return TrialOutcome::not_started(info, TrialError::new(ErrorKind::Setup, msg));
            }
        };
        let mut env = TrialEnv::scrubbed(&self.config.host_env, &[], &self.config.env_allow);
        env.isolate(&dirs);
        let skills = skill_entries(&workspace, self.skills_dir(), spec);
        let mut toolbox = ToolBox {
            workspace: workspace.clone(),
            skills,
            env: env.into_vec(),
            scratch: spec.scratch.clone(),
            command_timeout: self.config.command_timeout,
            max_output: self.config.max_tool_output,
            commands_run: 0,
        };
        let mut transcript = ChatTranscript {
            model: spec.model.clone(),
            entries: vec![
                entry(
                    json!({"role": "system", "content": system_prompt(&workspace, &toolbox.skills)}),
                ),
                entry(json!({"role": "user", "content": spec.prompt})),
            ],
        };
        let start = Instant::now();
        let deadline = start + spec.timeout;
        let mut awaiting_model = false;
        let looped = tokio::time::timeout(
            spec.timeout,
            self.agent_loop(
                &mut transcript,
                &mut toolbox,
                &spec.model,
                deadline,
                &mut awaiting_model,
            ),
        )
        .await;
        let wall = start.elapsed();
        let stalled = looped.is_err() && awaiting_model;
        self.finish(info, spec, transcript, looped, wall, stalled)
    }

    async fn agent_loop(
        &self,
        transcript: &mut ChatTranscript,
        toolbox: &mut ToolBox,
        model: &str,
        deadline: Instant,
        awaiting_model: &mut bool,
    ) -> Result<(), LoopError> {
        for _ in 0..self.config.max_turns {
            *awaiting_model = true;
            let response = self.complete(transcript, model).await?;
            *awaiting_model = false;
            let message = response
                .pointer("/choices/0/message")
                .cloned()
                .ok_or_else(|| {
                    LoopError::Request(format!(
                        "expected choices[0].message in the response, found {}",
                        snippet(&response.to_string())
                    ))
                })?;
            let calls: Vec<(String, String, String)> = message
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    let field = |p: &str| {
                        c.pointer(p)
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned()
                    };
                    (
                        field("/id"),
                        field("/function/name"),
                        field("/function/arguments"),
                    )
                })
                .collect();
            transcript.entries.push(ChatEntry {
                message: assistant_message(&message),
                usage: response.get("usage").cloned(),
                model: response
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                timestamp: Some(now_iso8601()),
            });
            if calls.is_empty() {
                return Ok(());
            }
            for (id, name, arguments) in calls {
                let result = toolbox.call(&name, &arguments, deadline).await;
                transcript.entries.push(entry(
                    json!({"role": "tool", "tool_call_id": id, "content": result}),
                ));
            }
        }
        Err(LoopError::Turns(self.config.max_turns))
    }

    /// One chat-completions request with the conversation so far.
    async fn complete(&self, transcript: &ChatTranscript, model: &str) -> Result<Value, LoopError> {
        let messages: Vec<Value> = transcript
            .entries
            .iter()
            .map(|e| wire_message(&e.message))
            .collect();
        let mut body = json!({"model": model, "messages": messages,
                              "tools": tools::definitions(), "tool_choice": "auto"});
        if let Some(t) = self.config.temperature {
            body["temperature"] = json!(t);
        }
        let url = format!(
            "{}/chat/completions",
            self.config.base_url.trim_end_matches('/')
        );
        let mut request = self.client.post(&url).json(&body);
        let key = self.config.api_key.clone().or_else(|| {
            self.config
                .host_env
                .get("OPENAI_API_KEY")
                .map(str::to_owned)
        });
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| LoopError::Request(format!("POST {url}: {}", super::error_chain(&e))))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| {
            LoopError::Request(format!(
                "POST {url}: reading the response: {}",
                super::error_chain(&e)
            ))
        })?;
        if !status.is_success() {
            return Err(LoopError::Request(format!(
                "POST {url}: expected status 200, found {status}: {}",
                snippet(&text)
            )));
        }
        serde_json::from_str(&text).map_err(|e| {
            LoopError::Request(format!(
                "POST {url}: expected a JSON response, {e}: {}",
                snippet(&text)
            ))
        })
    }

    fn finish(
        &self,
        info: HarnessInfo,
        spec: &TrialSpec,
        transcript: ChatTranscript,
        looped: Result<Result<(), LoopError>, tokio::time::error::Elapsed>,
        wall: Duration,
        stalled: bool,
    ) -> TrialOutcome {
        let transcript_path = spec.scratch.join("transcript.json");
        let mut notices = Vec::new();
        match serde_json::to_vec_pretty(&transcript) {
            Ok(bytes) => {
                if let Err(e) = std::fs::write(&transcript_path, bytes) {
                    notices.push(format!("could not keep {}: {e}", transcript_path.display()));
                }
            }
            Err(e) => notices.push(format!("could not serialize the transcript: {e}")),
        }
        let mut run = normalize_chat_transcript(&transcript, (&info.name, &info.version));
        let exit = match &looped {
            Err(_) => Exit::TimedOut,
            Ok(Ok(())) => Exit::Code(0),
            Ok(Err(e)) => {
                run.errors.push(match e {
                    LoopError::Request(msg) => msg.clone(),
                    LoopError::Turns(n) => format!(
                        "expected a final answer within {n} model turns, the model was still calling tools"
                    ),
                });
                Exit::Code(0)
            }
        };
        run.notices.extend(notices);
        if stalled {
            run.api_stall = Some(format!(
                "the model API ({}) had not answered the agent's request",
                self.config.base_url
            ));
        }
        let finished = cli::Finished {
            process: ProcessOutcome { exit, wall },
            stdout: String::new(),
            logs: TrialLogs {
                stdout: None,
                stderr: None,
                trajectory: Some(transcript_path.clone()),
            },
            stderr_tail: None,
            errors: Vec::new(),
        };
        cli::outcome(info, finished, Some(run), &transcript_path)
    }
}

/// The skills of the trial as the model sees them: name, description, staged folder.
fn skill_entries(workspace: &Path, skills_dir: &Path, spec: &TrialSpec) -> Vec<SkillEntry> {
    spec.skills
        .iter()
        .map(|s| {
            let dir = workspace.join(skills_dir).join(&s.name);
            let description = load_document(&dir.join("SKILL.md"))
                .ok()
                .and_then(|doc| {
                    doc.field_str("description")
                        .map(|(d, _)| d.trim().to_owned())
                })
                .filter(|d| !d.is_empty())
                .unwrap_or_else(|| "(no description)".into());
            SkillEntry {
                name: s.name.clone(),
                description,
                dir,
            }
        })
        .collect()
}

/// The system prompt: the workspace, how to finish, and the skills by name and description.
fn system_prompt(workspace: &Path, skills: &[SkillEntry]) -> String {
    let mut prompt = format!(
        "You are an autonomous agent working in the directory {} (the workspace). Use the tools \
         to inspect files, change them and run commands. When the task is done, reply with your \
         final answer and no tool call.\n",
        workspace.display()
    );
    if skills.is_empty() {
        prompt.push_str("\nNo skills are installed.\n");
        return prompt;
    }
    prompt.push_str(
        "\nSkills are folders of instructions for particular tasks. When a task matches a \
         skill's description, call load_skill with its name first and follow its instructions.\n\
         Available skills:\n",
    );
    for s in skills {
        let rel = s.dir.strip_prefix(workspace).unwrap_or(&s.dir);
        prompt.push_str(&format!(
            "- {}: {} (file: {}/SKILL.md)\n",
            s.name,
            s.description,
            rel.display()
        ));
    }
    prompt
}

/// A message as it is sent: the reasoning an assistant message carries stays in the transcript
/// but is not sent back (some servers, e.g. DeepSeek's, refuse it in input messages).
fn wire_message(message: &Value) -> Value {
    let mut m = message.clone();
    if let Some(obj) = m.as_object_mut() {
        obj.remove("reasoning_content");
        obj.remove("reasoning");
    }
    m
}

/// The assistant message as it is recorded: only the fields every server accepts back, plus
/// the model's reasoning for the trajectory.
fn assistant_message(message: &Value) -> Value {
    let mut m = json!({"role": "assistant", "content": message.get("content").cloned().unwrap_or(Value::Null)});
    if let Some(calls) = message
        .get("tool_calls")
        .filter(|c| c.as_array().is_some_and(|a| !a.is_empty()))
    {
        m["tool_calls"] = calls.clone();
    }
    for key in ["reasoning_content", "reasoning"] {
        if let Some(r) = message.get(key).filter(|r| r.is_string()) {
            m[key] = r.clone();
        }
    }
    m
}

fn entry(message: Value) -> ChatEntry {
    ChatEntry {
        message,
        usage: None,
        model: None,
        timestamp: Some(now_iso8601()),
    }
}

fn snippet(text: &str) -> String {
    let mut end = text.len().min(500);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

impl Harness for OpenAi {
    fn name(&self) -> &str {
        "openai"
    }

    fn skills_dir(&self) -> &Path {
        Path::new(".agents/skills")
    }

    fn version(&self) -> BoxFuture<'_, Result<String, HarnessError>> {
        Box::pin(async { Ok(Self::info().version) })
    }

    fn run<'a>(&'a self, spec: &'a TrialSpec) -> BoxFuture<'a, TrialOutcome> {
        Box::pin(self.run_trial(spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_prompt_lists_skills_with_their_files() {
        let ws = Path::new("/ws");
        let skills = vec![SkillEntry {
            name: "pdf".into(),
            description: "Fill PDF forms.".into(),
            dir: ws.join(".agents/skills/pdf"),
        }];
        let p = system_prompt(ws, &skills);
        assert!(
            p.contains("- pdf: Fill PDF forms. (file: .agents/skills/pdf/SKILL.md)"),
            "{p}"
        );
        assert!(system_prompt(ws, &[]).contains("No skills are installed."));
    }

    #[test]
    fn assistant_messages_are_trimmed_for_resending() {
        let m = json!({"role": "assistant", "content": null, "refusal": null, "annotations": [],
                       "tool_calls": [{"id": "1"}], "reasoning_content": "r"});
        let out = assistant_message(&m);
        assert_eq!(
            out,
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "1"}], "reasoning_content": "r"})
        );
        assert_eq!(
            wire_message(&out),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "1"}]})
        );
    }
}
