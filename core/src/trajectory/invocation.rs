//! Which skills an agent loaded, read from its trajectory.
//!
//! Every peer converges on the same signals (anchors-evals.md 0.1 finding 8): a skill tool
//! called with the skill's name (Claude Code's `Skill`, Copilot's `skill`, the `openai` loop's
//! `load_skill`), or a read of `.../<name>/SKILL.md`, by a read tool (`Read`, `read_file`) or by
//! a shell command (`cat`, `sed -n`, `head`, ... unwrapped from `bash -lc '...'`). Harnesses
//! without a skill tool (Codex) only show the second kind.
//!
//! A namespaced name (`plugin:pdf`) is kept whole: a plugin's skill that shares the name is not
//! the skill under test.
//!
//! A load counts only when it succeeded: an attempt whose tool result says it failed (Claude
//! Code's `is_error`, a Codex command that failed or exited non-zero, the `openai` loop's
//! `error:` results, a read that answered "No such file or directory") put nothing of the
//! skill in front of the agent, so it is not an invocation. Such attempts are kept, with the
//! reason, in [`SkillLoad::failure`]. A call whose result the trajectory does not hold (the
//! trial was cut off, or the format has no observations) is taken as read.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::atif::{Step, ToolCall, Trajectory};
use super::shell::{self, SimpleCommand};

/// One load of a skill by the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillLoad {
    /// The skill's name (its folder name for reads).
    pub skill: String,
    /// The step that made the call.
    pub step_id: u32,
    /// The tool call.
    pub tool_call_id: String,
    /// How it was loaded.
    pub signal: LoadSignal,
    /// Why the load failed, when its result says so; `None` when the skill was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

impl SkillLoad {
    /// Whether the skill's text reached the agent.
    pub fn read(&self) -> bool {
        self.failure.is_none()
    }
}

/// How a skill was loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LoadSignal {
    /// A skill tool called with the skill's name.
    SkillTool {
        /// The tool's name.
        tool: String,
    },
    /// A file-read tool on the skill's SKILL.md.
    ReadTool {
        /// The tool's name.
        tool: String,
        /// The path read.
        path: String,
    },
    /// A shell command that reads the skill's SKILL.md.
    Shell {
        /// The reading program (`cat`, `sed`, ...).
        program: String,
        /// The path read.
        path: String,
    },
}

/// Every attempt to load a skill in the trajectory and its embedded subagent trajectories, in
/// step order, failed ones included (see [`SkillLoad::failure`]).
pub fn skill_loads(t: &Trajectory) -> Vec<SkillLoad> {
    let mut loads = Vec::new();
    for (step, call) in t.tool_calls() {
        let found = loads_of_call(call);
        if found.is_empty() {
            continue;
        }
        let failure = failure_of(step, call);
        for (skill, signal) in found {
            loads.push(SkillLoad {
                skill,
                step_id: step.step_id,
                tool_call_id: call.tool_call_id.clone(),
                signal,
                failure: failure.clone(),
            });
        }
    }
    for sub in t.subagent_trajectories.iter().flatten() {
        loads.extend(skill_loads(sub));
    }
    loads
}

/// Whether the agent read `skill` at least once (a failed attempt does not count).
pub fn was_invoked(t: &Trajectory, skill: &str) -> bool {
    skill_loads(t).iter().any(|l| l.skill == skill && l.read())
}

/// What the agent did first about skills: the decision a trigger trial watches for. It is
/// visible at the agent's first tool call (a skill load, or any other action taken without
/// one) or, with no tool call, once the agent answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// The first tool call loaded this skill (an attempt counts: it shows the choice).
    Picked {
        /// The skill's name.
        skill: String,
    },
    /// The first tool call was not a skill load.
    OtherAction {
        /// The tool.
        tool: String,
    },
    /// The agent answered without calling a tool.
    Answered,
}

impl Decision {
    /// `picked pdf-tools`, `acted first (Bash)`, `answered`; `no decision seen` for `None`:
    /// a trigger trial's progress line, in-process and through the daemon.
    pub fn describe(decision: Option<&Decision>) -> String {
        match decision {
            Some(Decision::Picked { skill }) => format!("picked {skill}"),
            Some(Decision::OtherAction { tool }) => format!("acted first ({tool})"),
            Some(Decision::Answered) => "answered".into(),
            None => "no decision seen".into(),
        }
    }
}

/// The first decision in `t`; `None` until there is a tool call, or, when `finished` (the
/// agent ended its turn), an answer.
pub fn first_decision(t: &Trajectory, finished: bool) -> Option<Decision> {
    match t.tool_calls().next() {
        Some((_, call)) => Some(match loads_of_call(call).into_iter().next() {
            Some((skill, _)) => Decision::Picked { skill },
            None => Decision::OtherAction {
                tool: call.function_name.clone(),
            },
        }),
        None => finished.then_some(Decision::Answered),
    }
}

/// Why `call` failed, read from its status (Codex keeps `status` and `exit_code` on the call)
/// and its result (Claude Code's `is_error`, the `openai` loop's `error:` and `exit status:`
/// prefixes, a reader's "No such file or directory").
fn failure_of(step: &Step, call: &ToolCall) -> Option<String> {
    if let Some(extra) = &call.extra {
        if let Some(status @ ("failed" | "declined")) = extra.get("status").and_then(Value::as_str)
        {
            return Some(format!("the call {status}"));
        }
        if let Some(code) = extra.get("exit_code").and_then(Value::as_i64)
            && code != 0
        {
            return Some(format!("the command exited with status {code}"));
        }
    }
    let result = step
        .observation
        .as_ref()?
        .results
        .iter()
        .find(|r| r.source_call_id.as_deref() == Some(call.tool_call_id.as_str()))?;
    if result
        .extra
        .as_ref()
        .and_then(|e| e.get("is_error"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        return Some("the tool reported an error".into());
    }
    let text = result
        .content
        .as_ref()
        .map(|m| m.text())
        .unwrap_or_default();
    let head = text.trim_start();
    if head.starts_with("error:") {
        return Some(first_line(head));
    }
    if let Some(code) = head
        .strip_prefix("exit status: ")
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|c| c.parse::<i64>().ok())
        && code != 0
    {
        return Some(format!("the command exited with status {code}"));
    }
    READ_FAILURES
        .iter()
        .find_map(|needle| {
            text.lines()
                .find(|l| l.contains(needle) && l.contains("SKILL.md"))
        })
        .map(first_line)
}

/// What readers print when the file is not there (coreutils, sed, grep, PowerShell).
const READ_FAILURES: &[&str] = &[
    "No such file or directory",
    "can't read",
    "cannot open",
    "does not exist",
    "Cannot find path",
];

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    let mut short: String = line.chars().take(160).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

const SKILL_TOOLS: &[&str] = &["skill", "load_skill", "activate_skill", "use_skill"];
const READ_TOOLS: &[&str] = &[
    "read",
    "read_file",
    "readfile",
    "view",
    "view_file",
    "open",
    "open_file",
    "read_many_files",
];
const EDITOR_TOOLS: &[&str] = &["str_replace_based_edit_tool", "str_replace_editor"];
const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "exec_command",
    "command_execution",
    "run_command",
    "run_shell_command",
    "execute_command",
    "local_shell",
    "terminal",
];
/// Programs that put a file's content in front of the agent.
const READERS: &[&str] = &[
    "cat",
    "bat",
    "batcat",
    "head",
    "tail",
    "sed",
    "awk",
    "gawk",
    "less",
    "more",
    "nl",
    "tac",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "cut",
    "sort",
    "uniq",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "view",
    "vi",
    "vim",
    "nvim",
    "nano",
    "emacs",
    "type",
    "Get-Content",
    "gc",
];

fn loads_of_call(call: &ToolCall) -> Vec<(String, LoadSignal)> {
    let name = call.function_name.to_ascii_lowercase();
    let args = &call.arguments;
    let tool = call.function_name.clone();
    if SKILL_TOOLS.contains(&name.as_str()) {
        let skill = ["skill", "name", "skill_name"]
            .iter()
            .find_map(|k| args.get(*k).and_then(Value::as_str));
        return skill
            .map(|s| (clean_skill_name(s), LoadSignal::SkillTool { tool }))
            .into_iter()
            .collect();
    }
    let is_editor_view = EDITOR_TOOLS.contains(&name.as_str())
        && args.get("command").and_then(Value::as_str) == Some("view");
    if READ_TOOLS.contains(&name.as_str()) || is_editor_view {
        return path_strings(args)
            .into_iter()
            .filter_map(|p| skill_of_path(&p, None).map(|s| (s, p)))
            .map(|(skill, path)| {
                let tool = tool.clone();
                (skill, LoadSignal::ReadTool { tool, path })
            })
            .collect();
    }
    if SHELL_TOOLS.contains(&name.as_str()) {
        return shell_loads(args);
    }
    Vec::new()
}

/// String arguments that may be paths: top-level strings and arrays of strings.
fn path_strings(args: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for v in args.values() {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => {
                out.extend(items.iter().filter_map(|i| i.as_str().map(str::to_owned)))
            }
            _ => {}
        }
    }
    out
}

fn shell_loads(args: &serde_json::Map<String, Value>) -> Vec<(String, LoadSignal)> {
    let cwd = ["workdir", "cwd"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .map(str::to_owned);
    let command = args.get("command").or_else(|| args.get("cmd"));
    let commands = match command {
        Some(Value::String(line)) => with_cwd(shell::simple_commands(line), &cwd),
        Some(Value::Array(words)) => {
            let argv: Vec<String> = words
                .iter()
                .filter_map(|w| w.as_str().map(str::to_owned))
                .collect();
            shell::commands_of_argv(&argv, cwd.clone())
        }
        _ => Vec::new(),
    };
    commands.iter().flat_map(reads_of_command).collect()
}

fn with_cwd(mut commands: Vec<SimpleCommand>, cwd: &Option<String>) -> Vec<SimpleCommand> {
    if let Some(base) = cwd {
        for c in &mut commands {
            c.cwd = Some(match &c.cwd {
                Some(rel) if !rel.starts_with('/') => format!("{base}/{rel}"),
                Some(abs) => abs.clone(),
                None => base.clone(),
            });
        }
    }
    commands
}

/// Programs that take a file on stdin without showing its content.
const COUNTERS: &[&str] = &[
    "wc",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "shasum",
    "cksum",
    "stat",
    "file",
];

fn reads_of_command(cmd: &SimpleCommand) -> Vec<(String, LoadSignal)> {
    let program = shell::base_name(&cmd.argv[0]).to_owned();
    let mut paths: Vec<&String> = Vec::new();
    if !COUNTERS.contains(&program.as_str()) {
        paths.extend(cmd.inputs.iter());
    }
    if READERS.contains(&program.as_str()) {
        paths.extend(cmd.argv[1..].iter().filter(|a| !a.starts_with('-')));
    }
    paths
        .into_iter()
        .filter_map(|p| skill_of_path(p, cmd.cwd.as_deref()).map(|s| (s, p.clone())))
        .map(|(skill, path)| {
            let program = program.clone();
            (skill, LoadSignal::Shell { program, path })
        })
        .collect()
}

/// The skill a path to a SKILL.md belongs to: the name of the folder holding it (or of `cwd`
/// for a bare `SKILL.md`).
fn skill_of_path(path: &str, cwd: Option<&str>) -> Option<String> {
    let normalized = path.trim().replace('\\', "/");
    let full = match cwd {
        Some(dir) if !normalized.starts_with('/') => format!("{dir}/{normalized}"),
        _ => normalized,
    };
    let mut parts = full.rsplit('/').filter(|p| !p.is_empty() && *p != ".");
    let file = parts.next()?;
    if !file.eq_ignore_ascii_case("SKILL.md") {
        return None;
    }
    let dir = parts.next()?;
    (dir != ".." && dir != "~").then(|| dir.to_owned())
}

/// A skill name as a tool received it: a leading `/` or `$` (slash-command and Codex mention
/// syntax) removed.
fn clean_skill_name(name: &str) -> String {
    name.trim().trim_start_matches(['/', '$']).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::atif::{Agent, Step, StepSource};
    use serde_json::json;

    fn trajectory(calls: Vec<(&str, Value)>) -> Trajectory {
        let mut t = Trajectory::new(Agent {
            name: "t".into(),
            version: "1".into(),
            model_name: None,
            tool_definitions: None,
            extra: None,
        });
        for (i, (name, args)) in calls.into_iter().enumerate() {
            let mut step = Step::new(0, StepSource::Agent, "");
            step.tool_calls = Some(vec![ToolCall {
                tool_call_id: format!("c{i}"),
                function_name: name.into(),
                arguments: args.as_object().cloned().unwrap(),
                extra: None,
            }]);
            t.push(step);
        }
        t
    }

    #[test]
    fn the_first_tool_call_or_the_answer_is_the_decision() {
        let skill = ("Skill", json!({"skill": "pdf"}));
        let read = (
            "Read",
            json!({"file_path": "/w/.claude/skills/docx/SKILL.md"}),
        );
        let bash = ("Bash", json!({"command": "ls"}));
        let picked = |skill: &str| {
            Some(Decision::Picked {
                skill: skill.into(),
            })
        };
        assert_eq!(
            first_decision(&trajectory(vec![skill.clone(), bash.clone()]), false),
            picked("pdf")
        );
        assert_eq!(
            first_decision(&trajectory(vec![read, skill.clone()]), true),
            picked("docx")
        );
        assert_eq!(
            first_decision(&trajectory(vec![bash, skill]), false),
            Some(Decision::OtherAction {
                tool: "Bash".into()
            })
        );
        assert_eq!(first_decision(&trajectory(vec![]), false), None);
        assert_eq!(
            first_decision(&trajectory(vec![]), true),
            Some(Decision::Answered)
        );
    }

    fn skills(calls: Vec<(&str, Value)>) -> Vec<String> {
        skill_loads(&trajectory(calls))
            .into_iter()
            .map(|l| l.skill)
            .collect()
    }

    #[test]
    fn skill_tools_by_name() {
        assert_eq!(
            skills(vec![
                ("Skill", json!({"skill": "pdf"})),
                ("skill", json!({"skill": "$xlsx"})),
                ("load_skill", json!({"name": "docx"})),
                ("Skill", json!({"skill": "plugin:pdf"})),
                ("Skill", json!({"other": "pdf"})),
            ]),
            vec!["pdf", "xlsx", "docx", "plugin:pdf"]
        );
    }

    #[test]
    fn read_tools_need_a_skill_md_path() {
        assert_eq!(
            skills(vec![
                (
                    "Read",
                    json!({"file_path": "/w/.claude/skills/pdf/SKILL.md"})
                ),
                (
                    "read_file",
                    json!({"path": ".agents/skills/pdf/reference.md"})
                ),
                (
                    "read_many_files",
                    json!({"paths": ["a/x/SKILL.md", "b.txt"]})
                ),
                (
                    "str_replace_based_edit_tool",
                    json!({"command": "view", "path": "s/y/SKILL.md"})
                ),
                (
                    "str_replace_based_edit_tool",
                    json!({"command": "create", "path": "s/z/SKILL.md"})
                ),
                ("Write", json!({"file_path": "s/w/SKILL.md"})),
            ]),
            vec!["pdf", "x", "y"]
        );
    }

    #[test]
    fn shell_reads_through_wrappers_cd_and_workdir() {
        assert_eq!(
            skills(vec![
                (
                    "command_execution",
                    json!({"command": "/bin/bash -lc 'cat .agents/skills/pdf/SKILL.md'"})
                ),
                (
                    "exec_command",
                    json!({"cmd": "sed -n '1,200p' SKILL.md", "workdir": "/w/skills/xlsx"})
                ),
                (
                    "run_command",
                    json!({"command": "cd skills/docx && head -50 SKILL.md"})
                ),
                (
                    "shell",
                    json!({"command": ["bash", "-lc", "grep -n x skills/pptx/SKILL.md"]})
                ),
                (
                    "Bash",
                    json!({"command": "ls skills/nope/SKILL.md; echo skills/nope2/SKILL.md"})
                ),
                ("Bash", json!({"command": "wc -l < skills/nope3/SKILL.md"})),
                ("Bash", json!({"command": "tr a b < skills/csv/SKILL.md"})),
            ]),
            vec!["pdf", "xlsx", "docx", "pptx", "csv"]
        );
    }

    #[test]
    fn loads_carry_step_and_signal() {
        let t = trajectory(vec![
            ("Bash", json!({"command": "true"})),
            ("Bash", json!({"command": "cat a/pdf/SKILL.md"})),
        ]);
        let loads = skill_loads(&t);
        assert_eq!(loads.len(), 1);
        assert_eq!(loads[0].step_id, 2);
        assert_eq!(loads[0].tool_call_id, "c1");
        assert_eq!(
            loads[0].signal,
            LoadSignal::Shell {
                program: "cat".into(),
                path: "a/pdf/SKILL.md".into()
            }
        );
        assert!(was_invoked(&t, "pdf"));
        assert!(!was_invoked(&t, "a"));
    }

    /// One call with its result: `call_extra` on the call, `result` as the observation's
    /// content with `result_extra`.
    fn answered(
        name: &str,
        args: Value,
        call_extra: Option<Value>,
        result: &str,
        result_extra: Option<Value>,
    ) -> Trajectory {
        use crate::trajectory::atif::{Message, Observation, ObservationResult};
        let mut t = trajectory(vec![(name, args)]);
        let step = &mut t.steps[0];
        step.tool_calls.as_mut().unwrap()[0].extra =
            call_extra.map(|v| v.as_object().cloned().unwrap());
        step.observation = Some(Observation {
            results: vec![ObservationResult {
                source_call_id: Some("c0".into()),
                content: Some(Message::Text(result.into())),
                subagent_trajectory_ref: None,
                extra: result_extra.map(|v| v.as_object().cloned().unwrap()),
            }],
        });
        t
    }

    #[test]
    fn a_failed_read_is_not_an_invocation() {
        let cases = [
            // Claude Code: Read of a missing file, tool_result is_error.
            answered(
                "Read",
                json!({"file_path": "/w/.claude/skills/pdf/SKILL.md"}),
                None,
                "<tool_use_error>File does not exist.</tool_use_error>",
                Some(json!({"is_error": true})),
            ),
            // Codex: `cat` of a missing SKILL.md, the command failed with exit code 1.
            answered(
                "command_execution",
                json!({"command": "/bin/bash -lc 'cat .agents/skills/pdf/SKILL.md'"}),
                Some(json!({"status": "failed", "exit_code": 1})),
                "cat: .agents/skills/pdf/SKILL.md: No such file or directory\n",
                None,
            ),
            // A shell that hid the exit status: the reader's message still tells.
            answered(
                "Bash",
                json!({"command": "cat skills/pdf/SKILL.md; echo done"}),
                None,
                "cat: skills/pdf/SKILL.md: No such file or directory\ndone",
                None,
            ),
            // The openai loop: an error result, or a failed run_command.
            answered(
                "load_skill",
                json!({"name": "pdf"}),
                None,
                "error: no skill named \"pdf\"; installed: []",
                None,
            ),
            answered(
                "run_command",
                json!({"command": "sed -n 1,50p skills/pdf/SKILL.md"}),
                None,
                "exit status: 2\nsed: can't read skills/pdf/SKILL.md: No such file or directory",
                None,
            ),
        ];
        for t in &cases {
            let loads = skill_loads(t);
            assert_eq!(loads.len(), 1, "{t:?}");
            assert!(loads[0].failure.is_some(), "{loads:?}");
            assert!(!was_invoked(t, "pdf"), "{loads:?}");
        }
    }

    #[test]
    fn a_successful_read_with_its_result_is_an_invocation() {
        let ok = [
            answered(
                "Read",
                json!({"file_path": "/w/.claude/skills/pdf/SKILL.md"}),
                None,
                "---\nname: pdf\n---\nbody",
                Some(json!({"is_error": false})),
            ),
            answered(
                "command_execution",
                json!({"command": "sed -n '1,200p' .agents/skills/pdf/SKILL.md"}),
                Some(json!({"status": "completed", "exit_code": 0})),
                "---\nname: pdf\n---\nbody",
                None,
            ),
            answered(
                "run_command",
                json!({"command": "cat skills/pdf/SKILL.md"}),
                None,
                "exit status: 0\n---\nname: pdf",
                None,
            ),
        ];
        for t in &ok {
            assert!(was_invoked(t, "pdf"), "{:?}", skill_loads(t));
        }
    }

    #[test]
    fn subagent_trajectories_count() {
        let mut t = trajectory(vec![]);
        t.subagent_trajectories = Some(vec![trajectory(vec![("Skill", json!({"skill": "pdf"}))])]);
        assert!(was_invoked(&t, "pdf"));
    }
}
