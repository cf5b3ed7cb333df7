//! eval.yaml constraints: `expect_tools`, `reject_tools`, `max_turns`, `max_tokens`.
//!
//! eval.yaml files name tools as GitHub Copilot does (`bash`, `view`, `create`, `edit`),
//! while each harness names its own (`Bash`, `run_command`, `command_execution`, `Read`,
//! `read_file`). A constraint therefore matches a tool call when the names are equal ignoring
//! case, or when both belong to the same family in [`TOOL_FAMILIES`]: `expect_tools: [bash]`
//! holds when Claude Code called `Bash` or Codex ran a `command_execution`.

use crate::evalspec::Constraints;
use crate::trajectory::Trajectory;

use super::{Check, CheckGroup};

/// Tool names that do the same thing across harnesses (lowercase).
pub const TOOL_FAMILIES: &[&[&str]] = &[
    &[
        "bash",
        "shell",
        "run_command",
        "exec_command",
        "command_execution",
        "local_shell",
        "run_shell_command",
        "execute_command",
        "terminal",
        "powershell",
    ],
    &[
        "view",
        "read",
        "read_file",
        "readfile",
        "view_file",
        "open_file",
    ],
    &[
        "create",
        "write",
        "write_file",
        "edit",
        "multiedit",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "apply_patch",
        "file_change",
    ],
    &["glob", "grep", "search", "list_files", "ls", "find"],
    &["skill", "load_skill", "activate_skill"],
];

/// Whether a call of tool `called` satisfies a constraint naming `wanted`.
pub fn same_tool(wanted: &str, called: &str) -> bool {
    let (w, c) = (wanted.to_lowercase(), called.to_lowercase());
    w == c
        || TOOL_FAMILIES
            .iter()
            .any(|f| f.contains(&w.as_str()) && f.contains(&c.as_str()))
}

/// What the constraints are checked against.
#[derive(Debug, Clone, Copy)]
pub struct RunFigures<'a> {
    /// The trajectory, for tool names (none: no tool was seen).
    pub trajectory: Option<&'a Trajectory>,
    /// Agent turns (model inferences).
    pub turns: u32,
    /// Input plus output tokens, when the harness reported them.
    pub tokens: Option<u64>,
}

/// One check per constraint the case declares.
pub fn check(constraints: &Constraints, run: RunFigures<'_>) -> Vec<Check> {
    let called: Vec<&str> = run
        .trajectory
        .map(|t| {
            t.tool_calls()
                .map(|(_, c)| c.function_name.as_str())
                .collect()
        })
        .unwrap_or_default();
    let mut checks = Vec::new();
    for tool in &constraints.expect_tools {
        let used = called.iter().any(|c| same_tool(tool, c));
        checks.push(constraint(
            "expect_tools",
            format!("the agent used {tool}"),
            used,
            || format!("expected a call of {tool}, found {}", tool_list(&called)),
        ));
    }
    for tool in &constraints.reject_tools {
        let hits = called.iter().filter(|c| same_tool(tool, c)).count();
        checks.push(constraint(
            "reject_tools",
            format!("the agent did not use {tool}"),
            hits == 0,
            || format!("expected no call of {tool}, found {hits}"),
        ));
    }
    if let Some(max) = constraints.max_turns {
        checks.push(constraint(
            "max_turns",
            format!("at most {max} turns"),
            run.turns <= max.get(),
            || format!("expected at most {max} agent turns, found {}", run.turns),
        ));
    }
    if let Some(max) = constraints.max_tokens {
        let tokens = run
            .tokens
            .unwrap_or_else(|| estimate_tokens(run.trajectory));
        checks.push(constraint(
            "max_tokens",
            format!("at most {max} tokens"),
            tokens <= max.get(),
            || format!("expected at most {max} tokens (input + output), found {tokens}"),
        ));
    }
    checks
}

fn constraint(
    kind: &str,
    description: String,
    passed: bool,
    why: impl FnOnce() -> String,
) -> Check {
    Check {
        group: CheckGroup::Constraint,
        kind: kind.to_owned(),
        description,
        passed,
        message: (!passed).then(why),
    }
}

fn tool_list(called: &[&str]) -> String {
    if called.is_empty() {
        return "no tool calls".to_owned();
    }
    let mut names: Vec<&str> = called.to_vec();
    names.sort_unstable();
    names.dedup();
    format!("calls of {}", names.join(", "))
}

/// skill-validator's fallback when a harness reports no usage: characters / 4 of everything
/// in the trajectory.
fn estimate_tokens(trajectory: Option<&Trajectory>) -> u64 {
    let Some(t) = trajectory else { return 0 };
    let chars: usize = t
        .steps
        .iter()
        .map(|s| {
            s.message.text().len()
                + s.calls()
                    .iter()
                    .map(|c| serde_json::to_string(&c.arguments).map_or(0, |a| a.len()))
                    .sum::<usize>()
                + s.observation.as_ref().map_or(0, |o| {
                    o.results
                        .iter()
                        .filter_map(|r| r.content.as_ref())
                        .map(|c| c.text().len())
                        .sum()
                })
        })
        .sum();
    (chars as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use std::num::{NonZeroU32, NonZeroU64};

    use super::*;
    use crate::trajectory::{Agent, Step, StepSource, ToolCall};

    pub(crate) fn trajectory_with_calls(names: &[&str]) -> Trajectory {
        let mut t = Trajectory::new(Agent {
            name: "a".into(),
            version: "1".into(),
            model_name: None,
            tool_definitions: None,
            extra: None,
        });
        let mut step = Step::new(0, StepSource::Agent, "");
        step.tool_calls = Some(
            names
                .iter()
                .enumerate()
                .map(|(i, n)| ToolCall {
                    tool_call_id: format!("c{i}"),
                    function_name: (*n).into(),
                    arguments: Default::default(),
                    extra: None,
                })
                .collect(),
        );
        t.push(step);
        t
    }

    #[test]
    fn tool_names_match_across_harness_vocabularies() {
        assert!(same_tool("bash", "Bash"));
        assert!(same_tool("bash", "command_execution"));
        assert!(same_tool("view", "read_file"));
        assert!(!same_tool("bash", "Read"));
        assert!(same_tool("mcp__fs__read", "MCP__FS__READ"));
    }

    #[test]
    fn each_constraint_is_one_check() {
        let t = trajectory_with_calls(&["run_command", "Write"]);
        let c = Constraints {
            expect_tools: vec!["bash".into(), "grep".into()],
            reject_tools: vec!["create".into()],
            max_turns: NonZeroU32::new(1),
            max_tokens: NonZeroU64::new(100),
        };
        let checks = check(
            &c,
            RunFigures {
                trajectory: Some(&t),
                turns: 2,
                tokens: Some(50),
            },
        );
        let passed: Vec<(&str, bool)> =
            checks.iter().map(|c| (c.kind.as_str(), c.passed)).collect();
        assert_eq!(
            passed,
            vec![
                ("expect_tools", true),
                ("expect_tools", false),
                ("reject_tools", false),
                ("max_turns", false),
                ("max_tokens", true)
            ]
        );
        assert!(
            checks[1]
                .message
                .as_ref()
                .unwrap()
                .contains("found calls of Write, run_command")
        );
        assert!(
            checks[3]
                .message
                .as_ref()
                .unwrap()
                .contains("at most 1 agent turns, found 2")
        );
    }
}
