//! The fields of the other tools' eval formats skillwatch reads: Microsoft Vally (eval spec
//! and experiment), microsoft/waza (eval.yaml and task files) and alibaba/skill-up (eval.yaml
//! and case files). What each means is the tool's own documentation, shortened; what
//! skillwatch does with it is said where it differs ("not run by skillwatch" fields are
//! reported as SW416 where they are written).

use super::{Field, TypeValue, field};

/// Top-level keys of a Vally eval spec.
pub(super) static VALLY_TOP: &[Field] = &[
    field(
        "name",
        "Vally eval spec: a human-readable name for this eval.",
        "Optional string.",
        "",
    ),
    field(
        "description",
        "What this eval tests.",
        "Optional string.",
        "",
    ),
    field(
        "version",
        "A version label for tracking.",
        "Optional string.",
        "",
    ),
    field(
        "type",
        "The eval's intent: `capability` or `regression`.",
        "Optional: `capability` or `regression`.",
        "capability",
    ),
    field(
        "environment",
        "The root environment, merged into every stimulus: skills, files to stage, setup commands.",
        "Optional mapping (or the name of an environment in .vally.yaml, which skillwatch does not read).",
        "",
    ),
    field(
        "config",
        "Execution settings (Vally's older name for `defaults`): runs, timeout, model, judge_model, executor. skillwatch reads `timeout`; the others come from `skillwatch run`'s flags.",
        "Optional mapping; not together with `defaults`.",
        "",
    ),
    field(
        "defaults",
        "Execution settings: runs, timeout, model, judge_model, executor. skillwatch reads `timeout`; the others come from `skillwatch run`'s flags.",
        "Optional mapping; not together with `config`.",
        "",
    ),
    field(
        "stimuli",
        "The test cases: each a prompt with graders. Each stimulus runs without and with the skill; the difference is the skill's lift.",
        "Required list with at least one stimulus.",
        "",
    ),
    field(
        "scoring",
        "Grader weights and a pass threshold for Vally's weighted score. Not run by skillwatch: a case passes when every deterministic grader passes.",
        "Optional mapping: `weights`, `threshold`.",
        "",
    ),
    field(
        "tags",
        "Labels for selecting evals (`vally eval --tag`).",
        "Optional mapping or list.",
        "",
    ),
];

/// `config` / `defaults` of a Vally eval spec.
pub(super) static VALLY_CONFIG: &[Field] = &[
    field(
        "runs",
        "Trials per stimulus. skillwatch takes the number of attempts from `skillwatch run --runs N`.",
        "Optional integer, default 1 (0 = lint only).",
        "3",
    ),
    field(
        "timeout",
        "How long one trial may run before it is stopped (a timeout, a failed task).",
        "Optional duration with a unit (`5m`, `300s`, `30000ms`), default 2m.",
        "5m",
    ),
    field(
        "model",
        "The model the agent runs. skillwatch takes it from `skillwatch run --model`.",
        "Optional string.",
        "",
    ),
    field(
        "judge_model",
        "The model of the LLM judge graders. skillwatch takes it from `--judge-model`.",
        "Optional string.",
        "",
    ),
    field(
        "executor",
        "The agent runtime (`copilot-sdk`, `claude-cli`, ...). skillwatch runs `--harness`.",
        "Optional string.",
        "",
    ),
    field(
        "judge_reasoning_effort",
        "The judge's reasoning effort.",
        "Optional: low, medium, high, xhigh.",
        "",
    ),
];

/// `environment` of a Vally spec or stimulus.
pub(super) static VALLY_ENVIRONMENT: &[Field] = &[
    field(
        "skills",
        "Skills loaded for the run. In a skill's eval, the experiment supplies them per arm; skillwatch stages the skill under test in the skill arm only (others: `--support-skill`).",
        "Optional list of paths.",
        "",
    ),
    field(
        "files",
        "Files copied into the agent's workspace before it starts, each `src` (relative to the eval file) to `dest` (in the workspace). `src: .` with `dest: .` copies the eval file's folder.",
        "Optional list of `{src, dest}`.",
        "",
    ),
    field(
        "commands",
        "Shell commands run in the workspace after the files are in place.",
        "Optional list of strings.",
        "",
    ),
    field(
        "git",
        "Materialise the workspace from a git repository. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
    field(
        "commandTimeout",
        "The timeout of the setup commands. skillwatch gives setup commands its own limit.",
        "Optional duration.",
        "",
    ),
];

/// One `environment.files` entry of a Vally spec.
pub(super) static VALLY_FILE: &[Field] = &[
    field(
        "src",
        "The file or folder to copy, relative to the eval file.",
        "Required path; it must exist.",
        "",
    ),
    field(
        "dest",
        "Where it goes, relative to the workspace (`.` is the workspace itself).",
        "Required path.",
        "",
    ),
];

/// One Vally stimulus.
pub(super) static VALLY_STIMULUS: &[Field] = &[
    field(
        "name",
        "The stimulus's name: its identity in the history, in reports and in code lenses.",
        "Required, non-empty, unique within the file.",
        "",
    ),
    field(
        "prompt",
        "What the agent is asked, as a user would type it. Do not name the skill.",
        "Required string (a `|` block for several lines).",
        "|",
    ),
    field(
        "turns",
        "A multi-turn conversation instead of one prompt. skillwatch sends the first turn only.",
        "Optional list.",
        "",
    ),
    field(
        "graders",
        "How the result is checked, each `{type, config}`: static graders are assertions, `prompt` judges the `rubric`.",
        "Optional list of graders.",
        "",
    ),
    field(
        "rubric",
        "Criteria the LLM judge (`prompt` grader) scores the result against.",
        "Optional list of non-empty strings.",
        "",
    ),
    field(
        "constraints",
        "Limits and tool rules the run must respect.",
        "Optional mapping: `max_turns`, `max_tokens`, `expect_tools`, `reject_tools`, `reject_skills`.",
        "",
    ),
    field(
        "environment",
        "This stimulus's environment, merged after the root's: skills, files, commands.",
        "Optional mapping.",
        "",
    ),
    field(
        "expect_activation",
        "Whether the skill should be used for this prompt: `false` makes a dormancy guard (the skill must stay unused).",
        "Optional boolean, default true.",
        "false",
    ),
    field(
        "tags",
        "Labels for selecting stimuli.",
        "Optional mapping or list.",
        "",
    ),
    field(
        "simulation",
        "Simulated tool (MCP) responses. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
];

/// One Vally grader.
pub(super) static VALLY_GRADER: &[Field] = &[
    field(
        "type",
        "Which grader checks the result.",
        "Required; one of Vally's grader types.",
        "",
    ),
    field(
        "config",
        "The grader's settings (which keys apply depends on `type`).",
        "A mapping; required by the graders that check something named.",
        "",
    ),
    field(
        "name",
        "A display name for reports.",
        "Optional string.",
        "",
    ),
];

/// Keys of a Vally grader's `config` (which apply depends on the grader's `type`).
pub(super) static VALLY_GRADER_CONFIG: &[Field] = &[
    field(
        "substring",
        "The text looked for in the agent's output (`output-contains`, `output-not-contains`).",
        "Required for those graders.",
        "",
    ),
    field(
        "case_sensitive",
        "Whether `substring` must match case (default: ignore case).",
        "Optional boolean, default false.",
        "true",
    ),
    field(
        "negate",
        "Pass when the check does not hold (the `-not-` graders are shorthands).",
        "Optional boolean, default false.",
        "true",
    ),
    field(
        "pattern",
        "A regular expression (JavaScript syntax), case-sensitive unless it starts with `(?i)`.",
        "Required for `*-matches` graders; must compile.",
        "",
    ),
    field(
        "path",
        "A glob, relative to the workspace, naming the file(s) checked.",
        "Required for `file-*` graders.",
        "",
    ),
    field(
        "value",
        "The text a file must (not) contain.",
        "Required for `file-contains` / `file-not-contains`.",
        "",
    ),
    field(
        "prompt",
        "A custom prompt for an LLM judge grader.",
        "Optional string.",
        "",
    ),
    field(
        "model",
        "The judge model of this grader.",
        "Optional string.",
        "",
    ),
    field(
        "threshold",
        "The judge score needed to pass.",
        "Optional number in [0, 1].",
        "",
    ),
    field(
        "command",
        "The command a `run-command` grader runs in the workspace. Not run by skillwatch.",
        "Required for `run-command`.",
        "",
    ),
    field(
        "expected_exit_code",
        "The exit code `run-command` expects.",
        "Optional integer.",
        "0",
    ),
    field(
        "stdout_contains",
        "Text `run-command`'s output must contain.",
        "Optional string.",
        "",
    ),
    field(
        "stdout_matches",
        "A pattern `run-command`'s output must match.",
        "Optional string.",
        "",
    ),
    field(
        "timeout",
        "How long the grader's command may run.",
        "Optional duration.",
        "",
    ),
    field(
        "required",
        "Tools or skills that must be called (`tool-calls`, `skill-invocation`). Not run by skillwatch.",
        "Optional list.",
        "",
    ),
    field(
        "disallowed",
        "Tools that must not be called (`tool-calls`). Not run by skillwatch.",
        "Optional list.",
        "",
    ),
];

/// `constraints` of a Vally stimulus.
pub(super) static VALLY_CONSTRAINTS: &[Field] = &[
    field(
        "max_turns",
        "Most assistant turns allowed; more fails the case.",
        "Optional positive integer.",
        "",
    ),
    field(
        "max_tokens",
        "Most tokens (input + output) allowed; more fails the case.",
        "Optional positive integer.",
        "",
    ),
    field(
        "expect_tools",
        "Tools that must each be used at least once.",
        "Optional list of tool names.",
        "",
    ),
    field(
        "reject_tools",
        "Tools that must not be used (keeps a read-only stimulus read-only).",
        "Optional list of tool names.",
        "",
    ),
    field(
        "reject_skills",
        "Skills the run must not load. Not run by skillwatch: write a dormancy guard as `expect_activation: false`.",
        "Optional list of skill names (`*` for all).",
        "",
    ),
];

/// `scoring` of a Vally spec.
pub(super) static VALLY_SCORING: &[Field] = &[
    field(
        "weights",
        "Weight of each grader type in Vally's score. Not run by skillwatch.",
        "Optional mapping of grader type to number.",
        "",
    ),
    field(
        "threshold",
        "The weighted score needed to pass. Not run by skillwatch.",
        "Optional number in [0, 1].",
        "",
    ),
];

/// Top-level keys of a Vally experiment file.
pub(super) static VALLY_EXPERIMENT_TOP: &[Field] = &[
    field(
        "name",
        "Vally experiment: its name in reports.",
        "Required string.",
        "",
    ),
    field(
        "description",
        "What the experiment compares.",
        "Optional string.",
        "",
    ),
    field(
        "evals",
        "The eval spec files it runs, as globs relative to this file (`!(agent.*)` excludes).",
        "Required list of globs.",
        "",
    ),
    field(
        "vary",
        "JSON pointers of what may differ between variants (`/environment/skills`).",
        "Required with `variants`.",
        "",
    ),
    field(
        "baseline",
        "The variant the others are compared with.",
        "Required: a variant's name.",
        "baseline",
    ),
    field(
        "variants",
        "The arms, by name: `baseline` (no skills), `skilled` (the skill under test), a plugin arm (the whole plugin). skillwatch runs the baseline, skilled and plugin arms: two lifts, the skill's and the plugin's, each against the baseline.",
        "Mapping of name to variant.",
        "",
    ),
    field(
        "overrides",
        "Settings forced on every eval (model, judge_model, runs). skillwatch takes them from `skillwatch run`'s flags.",
        "Optional mapping.",
        "",
    ),
    field(
        "matrix",
        "Variants generated from axes. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
];

/// One variant of a Vally experiment.
pub(super) static VALLY_VARIANT: &[Field] = &[
    field(
        "environment",
        "What this arm stages: `skills: []` is the baseline, one skill the skilled arm, several skills (or the folder of skills holding the skill under test) the plugin arm.",
        "Optional mapping.",
        "",
    ),
    field(
        "overrides",
        "Settings this arm changes (a model). Not run by skillwatch: compare models with `skillwatch compare`.",
        "Optional mapping.",
        "",
    ),
    field("description", "What the arm is.", "Optional string.", ""),
];

/// Top-level keys of a waza eval.yaml.
pub(super) static WAZA_TOP: &[Field] = &[
    field(
        "name",
        "waza eval: the suite's unique name.",
        "Required string.",
        "",
    ),
    field(
        "description",
        "What the eval tests.",
        "Optional string.",
        "",
    ),
    field(
        "skill",
        "The skill being evaluated.",
        "Required string; should equal the skill's `name`.",
        "",
    ),
    field(
        "version",
        "A version label of this spec.",
        "Required string.",
        "\"1.0\"",
    ),
    field(
        "config",
        "Execution settings: trials_per_task, timeout_seconds, executor, model. skillwatch reads `timeout_seconds`; the others come from `skillwatch run`'s flags.",
        "Required mapping.",
        "",
    ),
    field(
        "hooks",
        "Shell commands before and after the run or each task. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
    field(
        "inputs",
        "Global template variables for the tasks. Not run by skillwatch.",
        "Optional mapping of strings.",
        "",
    ),
    field(
        "tasks_from",
        "An external file listing tasks. Not read by skillwatch.",
        "Optional path.",
        "",
    ),
    field(
        "range",
        "A task index range to run. Not read by skillwatch.",
        "Optional `[start, end]`.",
        "",
    ),
    field(
        "graders",
        "Graders applied to every task, before its own.",
        "Optional list of graders.",
        "",
    ),
    field(
        "metrics",
        "Weighted metrics with thresholds of waza's overall score. Not run by skillwatch: a case passes when every check passes, and the lift is per case.",
        "Required list of `{name, weight, threshold}`.",
        "",
    ),
    field(
        "tasks",
        "Glob patterns of the task files, relative to this file (`tasks/*.yaml`).",
        "Required list with at least one glob.",
        "[\"tasks/*.yaml\"]",
    ),
    field(
        "baseline",
        "Marks the spec as a baseline for waza's A/B comparison. skillwatch always runs both arms.",
        "Optional boolean.",
        "",
    ),
];

/// `config` of a waza eval.yaml.
pub(super) static WAZA_CONFIG: &[Field] = &[
    field(
        "trials_per_task",
        "Runs per task. skillwatch takes the number of attempts from `skillwatch run --runs N`.",
        "Required integer >= 1.",
        "3",
    ),
    field(
        "timeout_seconds",
        "How long one task run may take, in seconds.",
        "Required integer >= 1.",
        "300",
    ),
    field(
        "parallel",
        "Run tasks in parallel. skillwatch runs `-j N` trials at once.",
        "Optional boolean.",
        "",
    ),
    field(
        "max_workers",
        "Concurrent workers when parallel.",
        "Optional integer >= 1.",
        "",
    ),
    field(
        "fail_fast",
        "Stop at the first task error.",
        "Optional boolean.",
        "",
    ),
    field(
        "executor",
        "`copilot-sdk` or `mock`. skillwatch runs `--harness`.",
        "Required: `copilot-sdk` or `mock`.",
        "mock",
    ),
    field(
        "model",
        "The default model. skillwatch takes it from `--model`.",
        "Required string.",
        "",
    ),
    field(
        "max_attempts",
        "Retries of failed task runs. Not run by skillwatch.",
        "Optional integer >= 1.",
        "",
    ),
    field(
        "group_by",
        "A field to group results by.",
        "Optional string.",
        "",
    ),
    field(
        "judge_model",
        "The model of prompt graders. skillwatch takes it from `--judge-model`.",
        "Optional string.",
        "",
    ),
    field(
        "skill_directories",
        "More folders to find skills in. Not run by skillwatch.",
        "Optional list.",
        "",
    ),
    field(
        "required_skills",
        "Skills that must be available. Not run by skillwatch.",
        "Optional list.",
        "",
    ),
    field(
        "mcp_servers",
        "MCP servers by name. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
];

/// One waza metric.
pub(super) static WAZA_METRIC: &[Field] = &[
    field("name", "The metric's identifier.", "Required string.", ""),
    field(
        "weight",
        "Its weight in waza's overall score. Not run by skillwatch.",
        "Required number > 0.",
        "",
    ),
    field(
        "threshold",
        "The score it must reach. Not run by skillwatch.",
        "Required number in [0, 1].",
        "",
    ),
    field("description", "What it measures.", "Optional string.", ""),
    field(
        "enabled",
        "Whether it counts.",
        "Optional boolean, default true.",
        "",
    ),
];

/// One waza grader (global or in a task).
pub(super) static WAZA_GRADER: &[Field] = &[
    field(
        "type",
        "Which grader checks the result.",
        "Required; one of waza's grader types.",
        "",
    ),
    field(
        "name",
        "The grader's unique identifier.",
        "Required string.",
        "",
    ),
    field(
        "config",
        "The grader's settings (which keys apply depends on `type`).",
        "Optional mapping.",
        "",
    ),
    field(
        "weight",
        "Its weight in waza's score. Not run by skillwatch: every check counts alike.",
        "Optional number > 0, default 1.",
        "",
    ),
    field(
        "script",
        "An external grading script. Not run by skillwatch.",
        "Optional path.",
        "",
    ),
    field(
        "rubric",
        "Rubric text of a `prompt` grader: judged by skillwatch's judge.",
        "Optional string.",
        "",
    ),
    field(
        "model",
        "The judge model of this grader.",
        "Optional string.",
        "",
    ),
    field(
        "assertions",
        "Assertion expressions (Python or JavaScript) of a `code` grader. Not run by skillwatch.",
        "Optional list of strings.",
        "",
    ),
];

/// Keys of a waza grader's `config` (which apply depends on the grader's `type`).
pub(super) static WAZA_GRADER_CONFIG: &[Field] = &[
    field(
        "contains",
        "Substrings the output must contain, ignoring case (`text`).",
        "Optional list.",
        "",
    ),
    field(
        "not_contains",
        "Substrings the output must not contain, ignoring case (`text`).",
        "Optional list.",
        "",
    ),
    field(
        "contains_cs",
        "Substrings the output must contain, matching case (`text`).",
        "Optional list.",
        "",
    ),
    field(
        "not_contains_cs",
        "Substrings the output must not contain, matching case (`text`).",
        "Optional list.",
        "",
    ),
    field(
        "regex_match",
        "Patterns the output must match (`text`; Go syntax, case-sensitive).",
        "Optional list; each must compile.",
        "",
    ),
    field(
        "regex_not_match",
        "Patterns the output must not match (`text`).",
        "Optional list; each must compile.",
        "",
    ),
    field(
        "must_exist",
        "Files that must exist in the workspace (`file`).",
        "Optional list of globs.",
        "",
    ),
    field(
        "must_not_exist",
        "Files that must not exist (`file`).",
        "Optional list of globs.",
        "",
    ),
    field(
        "content_patterns",
        "Patterns a file's content must (not) match (`file`). Not run by skillwatch.",
        "Optional list of `{path, must_match, must_not_match}`.",
        "",
    ),
    field(
        "must_contain",
        "Keywords the output must contain (`keyword`).",
        "Optional list.",
        "",
    ),
    field(
        "must_not_contain",
        "Keywords the output must not contain (`keyword`).",
        "Optional list.",
        "",
    ),
    field(
        "max_tool_calls",
        "Most tool calls (`behavior`). Not run by skillwatch.",
        "Optional integer >= 0.",
        "",
    ),
    field(
        "max_tokens",
        "Most tokens used (`behavior`).",
        "Optional integer >= 0.",
        "",
    ),
    field(
        "required_tools",
        "Tools that must be used (`behavior`).",
        "Optional list.",
        "",
    ),
    field(
        "forbidden_tools",
        "Tools that must not be used (`behavior`).",
        "Optional list.",
        "",
    ),
    field(
        "max_duration_ms",
        "Longest run (`behavior`). Not run by skillwatch.",
        "Optional integer >= 0.",
        "",
    ),
    field(
        "matching_mode",
        "How `expected_actions` match (`action_sequence`). Not run by skillwatch.",
        "Optional.",
        "",
    ),
    field(
        "expected_actions",
        "The tool calls expected in order (`action_sequence`). Not run by skillwatch.",
        "Optional list.",
        "",
    ),
    field(
        "mode",
        "`independent` or `pairwise` judging (`prompt`); skillwatch judges each trial.",
        "Optional.",
        "",
    ),
    field(
        "required_skills",
        "Skills that must be invoked (`skill_invocation`). skillwatch records invocation in every trial.",
        "Optional list.",
        "",
    ),
    field(
        "allow_extra",
        "Whether other skills may be invoked too (`skill_invocation`).",
        "Optional boolean.",
        "",
    ),
    field(
        "expect_tools",
        "Tools that must be called (`tool_constraint`).",
        "Optional list of `{tool}`.",
        "",
    ),
    field(
        "reject_tools",
        "Tools that must not be called (`tool_constraint`).",
        "Optional list of `{tool}`.",
        "",
    ),
    field(
        "prompt",
        "The judge's instructions (`prompt`): a judged criterion under skillwatch.",
        "Optional string.",
        "",
    ),
    field(
        "model",
        "The judge model (`prompt`).",
        "Optional string.",
        "",
    ),
    field(
        "continue_session",
        "Judge inside the agent's session (`prompt`).",
        "Optional boolean.",
        "",
    ),
    field(
        "assertions",
        "Python or JavaScript assertions (`code`). Not run by skillwatch.",
        "Optional list.",
        "",
    ),
    field(
        "language",
        "The assertions' language (`code`).",
        "Optional: python or javascript.",
        "",
    ),
    field(
        "schema",
        "A JSON Schema the output must satisfy (`json_schema`). Not run by skillwatch.",
        "Optional object.",
        "",
    ),
    field(
        "schema_file",
        "A file holding that schema (`json_schema`).",
        "Optional path.",
        "",
    ),
    field(
        "command",
        "A grading program (`program`). Not run by skillwatch.",
        "Optional string.",
        "",
    ),
    field(
        "args",
        "The program's arguments (`program`).",
        "Optional list.",
        "",
    ),
    field(
        "timeout",
        "The program's timeout in seconds (`program`).",
        "Optional integer.",
        "",
    ),
    field(
        "expected_files",
        "Files compared with snapshots (`diff`). Not run by skillwatch.",
        "Optional list.",
        "",
    ),
    field(
        "context_dir",
        "Where the snapshots are (`diff`).",
        "Optional path.",
        "",
    ),
];

/// A waza task file.
pub(super) static WAZA_TASK: &[Field] = &[
    field(
        "id",
        "waza task: its unique identifier, the case's identity in the history.",
        "Required string.",
        "",
    ),
    field(
        "name",
        "A display name, shown in reports instead of the id.",
        "Required string.",
        "",
    ),
    field(
        "description",
        "What the task tests.",
        "Optional string.",
        "",
    ),
    field(
        "enabled",
        "Whether waza runs it. skillwatch runs every task (choose with `--case`).",
        "Optional boolean.",
        "",
    ),
    field(
        "context_dir",
        "Where the task's `inputs.files` are, relative to the eval file (default: `fixtures/`).",
        "Optional path.",
        "",
    ),
    field(
        "timeout_seconds",
        "This task's timeout, over the eval's.",
        "Optional integer >= 1.",
        "",
    ),
    field(
        "tags",
        "Labels for filtering.",
        "Optional list of strings.",
        "",
    ),
    field(
        "inputs",
        "What the agent gets: the `prompt` and the `files` staged in its workspace.",
        "Required mapping with `prompt`.",
        "",
    ),
    field(
        "expected",
        "Expected output and behaviour: `output_contains`, `behavior`, `should_trigger`, ...",
        "Optional mapping.",
        "",
    ),
    field(
        "graders",
        "This task's graders, after the eval's global ones.",
        "Optional list of graders.",
        "",
    ),
];

/// `inputs` of a waza task.
pub(super) static WAZA_INPUTS: &[Field] = &[
    field(
        "prompt",
        "The message the agent receives. Do not name the skill.",
        "Required string.",
        "|",
    ),
    field(
        "context",
        "Key-value metadata for waza's executor. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
    field(
        "files",
        "Files staged in the workspace: `{path}` from the fixtures folder, or `{path, content}` inline.",
        "Optional list.",
        "",
    ),
    field(
        "environment",
        "Environment variables for the run. Not run by skillwatch.",
        "Optional mapping of strings.",
        "",
    ),
];

/// `expected` of a waza task.
pub(super) static WAZA_EXPECTED: &[Field] = &[
    field(
        "outcomes",
        "Structured outcome expectations; one `task_completed` is the agent finishing with an answer.",
        "Optional list.",
        "",
    ),
    field(
        "tool_calls",
        "Expected tool call patterns. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
    field(
        "behavior",
        "Tool and token limits of the run.",
        "Optional mapping.",
        "",
    ),
    field(
        "output_contains",
        "Strings that must appear in the output (ignoring case).",
        "Optional list of strings.",
        "",
    ),
    field(
        "output_not_contains",
        "Strings that must not appear in the output.",
        "Optional list of strings.",
        "",
    ),
    field(
        "should_trigger",
        "Whether the skill should be used: `false` makes a negative case.",
        "Optional boolean.",
        "false",
    ),
];

/// `behavior` of a waza task's `expected`.
pub(super) static WAZA_BEHAVIOR: &[Field] = &[
    field(
        "max_tool_calls",
        "Most tool calls. Not run by skillwatch.",
        "Optional integer >= 0.",
        "",
    ),
    field(
        "max_iterations",
        "Most conversation rounds: skillwatch's `max_turns`.",
        "Optional integer >= 0.",
        "",
    ),
    field(
        "max_tokens",
        "Most tokens used.",
        "Optional integer >= 0.",
        "",
    ),
    field(
        "required_tools",
        "Tools that must be used.",
        "Optional list.",
        "",
    ),
    field(
        "forbidden_tools",
        "Tools that must not be used.",
        "Optional list.",
        "",
    ),
    field(
        "max_response_time_ms",
        "Longest response time. Not run by skillwatch.",
        "Optional integer >= 0.",
        "",
    ),
];

/// Top-level keys of a skill-up eval.yaml.
pub(super) static SKILL_UP_TOP: &[Field] = &[
    field(
        "schema_version",
        "skill-up eval: the schema version.",
        "Required: `v1alpha1`.",
        "v1alpha1",
    ),
    field(
        "environment",
        "The runtime: `none`, `docker` or `opensandbox`. skillwatch stages each trial in a fresh local folder.",
        "Optional mapping.",
        "",
    ),
    field(
        "mcp",
        "MCP servers installed into the agent. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
    field(
        "skills",
        "Skills to install (default: the skill beside `evals/`). skillwatch stages the skill under test.",
        "Optional list.",
        "",
    ),
    field(
        "engine",
        "The agent and model. skillwatch runs `--harness` and `--model`.",
        "Optional mapping.",
        "",
    ),
    field(
        "cases",
        "The case files and the defaults they share.",
        "Required mapping: `files`, `defaults`.",
        "",
    ),
    field(
        "benchmark",
        "`enabled: true` runs with and without the skill. skillwatch always runs both arms.",
        "Optional mapping.",
        "",
    ),
    field(
        "judge",
        "The judge of cases that give none.",
        "Optional mapping.",
        "",
    ),
    field(
        "report",
        "Report formats. Not used by skillwatch.",
        "Optional mapping.",
        "",
    ),
    field(
        "user_simulator",
        "A model simulating the user in multi-turn cases. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
];

/// `cases` of a skill-up eval.yaml.
pub(super) static SKILL_UP_CASES: &[Field] = &[
    field(
        "files",
        "The case files, relative to the skill folder (`evals/cases/x.yaml`).",
        "Optional list of paths; each must exist (default: `cases/*.yaml` beside the eval.yaml).",
        "",
    ),
    field(
        "defaults",
        "What every case gets: timeout, max turns, default `expect` checks.",
        "Optional mapping.",
        "",
    ),
    field(
        "parallelism",
        "Cases run at once. skillwatch runs `-j N` trials at once.",
        "Optional integer 1-256.",
        "",
    ),
    field(
        "retry_policy",
        "Retries of errored cases. skillwatch records an errored trial as errored.",
        "Optional mapping.",
        "",
    ),
];

/// `cases.defaults` of a skill-up eval.yaml.
pub(super) static SKILL_UP_DEFAULTS: &[Field] = &[
    field(
        "timeout_seconds",
        "Per-case timeout, in seconds.",
        "Optional integer, default 300.",
        "300",
    ),
    field(
        "max_turns",
        "Most conversation turns.",
        "Optional integer, default 12.",
        "",
    ),
    field(
        "collect_artifacts",
        "Workspace files to download. Not used by skillwatch.",
        "Optional list of globs.",
        "",
    ),
    field(
        "expect",
        "Checks every case gets, before its own.",
        "Optional mapping.",
        "",
    ),
];

/// A skill-up case file.
pub(super) static SKILL_UP_CASE: &[Field] = &[
    field(
        "id",
        "skill-up case: its identity in the history (default: the file name).",
        "Optional string.",
        "",
    ),
    field(
        "title",
        "A display name for reports.",
        "Optional string.",
        "",
    ),
    field(
        "description",
        "What the case verifies.",
        "Optional string.",
        "",
    ),
    field("tag", "A label.", "Optional string.", ""),
    field(
        "input",
        "What the agent is asked: `prompt`, or `turns` of a conversation.",
        "Required mapping.",
        "",
    ),
    field(
        "context",
        "The starting workspace: a `repo_fixture` folder, inline `files`, `git` operations.",
        "Optional mapping.",
        "",
    ),
    field(
        "constraints",
        "`timeout_seconds` and `max_turns` of this case.",
        "Optional mapping.",
        "",
    ),
    field(
        "expect",
        "Cheap gating checks of the output and files.",
        "Optional mapping.",
        "",
    ),
    field(
        "judge",
        "How the result is judged: `rule_based`, `script` or `agent_judge`.",
        "Optional mapping.",
        "",
    ),
    field(
        "judges",
        "Several judges, all applied.",
        "Optional list.",
        "",
    ),
    field(
        "mcp",
        "Per-case MCP servers. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
    field(
        "collect_artifacts",
        "Workspace files to download. Not used by skillwatch.",
        "Optional list.",
        "",
    ),
    field(
        "user_simulator",
        "The simulated user's scenario. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
];

/// `input` of a skill-up case.
pub(super) static SKILL_UP_INPUT: &[Field] = &[
    field(
        "prompt",
        "The message the agent receives. Do not name the skill.",
        "Required unless `turns` is given.",
        "|",
    ),
    field(
        "turns",
        "A multi-turn conversation. skillwatch sends the first turn only.",
        "Optional list.",
        "",
    ),
];

/// `context` of a skill-up case.
pub(super) static SKILL_UP_CONTEXT: &[Field] = &[
    field(
        "repo_fixture",
        "A folder, relative to the skill folder, copied into the workspace.",
        "Optional path; it must exist.",
        "",
    ),
    field(
        "git",
        "git init, checkout, apply_diff, remotes. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
    field(
        "files",
        "Inline files: path to content.",
        "Optional mapping.",
        "",
    ),
];

/// `constraints` of a skill-up case.
pub(super) static SKILL_UP_CONSTRAINTS: &[Field] = &[
    field(
        "timeout_seconds",
        "This case's timeout, in seconds.",
        "Optional integer >= 1.",
        "",
    ),
    field(
        "max_turns",
        "Most conversation turns.",
        "Optional integer >= 1.",
        "",
    ),
];

/// `expect` of a skill-up case (or of its defaults).
pub(super) static SKILL_UP_EXPECT: &[Field] = &[
    field(
        "must_contain",
        "Texts the output must contain (matching case).",
        "Optional list.",
        "",
    ),
    field(
        "must_not_contain",
        "Texts the output must not contain (matching case).",
        "Optional list.",
        "",
    ),
    field(
        "exit_code",
        "The agent's expected exit code; 0 is the agent finishing with an answer.",
        "Optional integer.",
        "0",
    ),
    field(
        "files_exist",
        "Files that must exist in the workspace.",
        "Optional list of paths.",
        "",
    ),
    field(
        "files_not_exist",
        "Files that must not exist.",
        "Optional list of paths.",
        "",
    ),
    field(
        "file_contains",
        "Files that must contain a text: `{path, content}`.",
        "Optional list.",
        "",
    ),
    field(
        "golden_file",
        "A file the output is compared with. Not run by skillwatch.",
        "Optional path.",
        "",
    ),
];

/// A skill-up judge.
pub(super) static SKILL_UP_JUDGE: &[Field] = &[
    field(
        "type",
        "How the case is judged.",
        "Required: `rule_based`, `script` or `agent_judge`.",
        "",
    ),
    field(
        "id",
        "The judge's name (in `judges`).",
        "Optional string.",
        "",
    ),
    field(
        "success",
        "Rules that must all hold (`rule_based`): `output_contains`, `output_matches` (`all`, `any`, `not`), `exit_code`.",
        "Optional list.",
        "",
    ),
    field(
        "failure",
        "Rules any of which fails the case (`rule_based`).",
        "Optional list.",
        "",
    ),
    field(
        "script_path",
        "A grading script (`script`). Not run by skillwatch.",
        "Required for `script`.",
        "",
    ),
    field(
        "timeout_seconds",
        "The judge's timeout.",
        "Optional integer.",
        "",
    ),
    field(
        "model",
        "The judge model (`agent_judge`); skillwatch uses `--judge-model`.",
        "Optional string.",
        "",
    ),
    field(
        "skills",
        "Skills installed into the judge (`agent_judge`). Not run by skillwatch.",
        "Optional list.",
        "",
    ),
    field(
        "criteria",
        "Natural-language criteria the LLM judge checks (`agent_judge`).",
        "Required for `agent_judge`.",
        "",
    ),
    field(
        "pass_threshold",
        "The share of criteria that must hold (`agent_judge`). Not run by skillwatch.",
        "Optional number, default 0.7.",
        "",
    ),
    field(
        "context",
        "What the judge is shown. Not run by skillwatch.",
        "Optional mapping.",
        "",
    ),
];

/// Every Vally grader type.
pub(super) static VALLY_GRADER_TYPES: &[TypeValue] = &[
    TypeValue {
        name: "completed",
        meaning: "Session health: non-empty output, no errors, turn completed. Under skillwatch, a non-empty output (an errored trial never passes).",
        fields: &[],
    },
    TypeValue {
        name: "error-count",
        meaning: "Limits the number of error events. Not run by skillwatch.",
        fields: &[],
    },
    TypeValue {
        name: "exit-success",
        meaning: "Passes when the agent produced a non-empty output.",
        fields: &[],
    },
    TypeValue {
        name: "file-contains",
        meaning: "Passes when a file matching `config.path` contains `config.value`.",
        fields: &["config"],
    },
    TypeValue {
        name: "file-exists",
        meaning: "Passes when a file matching `config.path` exists.",
        fields: &["config"],
    },
    TypeValue {
        name: "file-matches",
        meaning: "Passes when a file's content matches `config.pattern`. Not run by skillwatch.",
        fields: &["config"],
    },
    TypeValue {
        name: "file-not-contains",
        meaning: "Passes when no file matching `config.path` contains `config.value`.",
        fields: &["config"],
    },
    TypeValue {
        name: "file-not-exists",
        meaning: "Passes when no file matches `config.path`.",
        fields: &["config"],
    },
    TypeValue {
        name: "file-not-matches",
        meaning: "Passes when no file's content matches `config.pattern`. Not run by skillwatch.",
        fields: &["config"],
    },
    TypeValue {
        name: "output-contains",
        meaning: "Passes when the output contains `config.substring` (ignoring case unless `case_sensitive`).",
        fields: &["config"],
    },
    TypeValue {
        name: "output-matches",
        meaning: "Passes when the output matches the regular expression `config.pattern` (case-sensitive unless `(?i)`).",
        fields: &["config"],
    },
    TypeValue {
        name: "output-not-contains",
        meaning: "Passes when the output does not contain `config.substring`.",
        fields: &["config"],
    },
    TypeValue {
        name: "output-not-matches",
        meaning: "Passes when the output does not match `config.pattern`.",
        fields: &["config"],
    },
    TypeValue {
        name: "pairwise",
        meaning: "An LLM judge comparing two trajectories, position-swapped. Not run by skillwatch: the rubric is judged on each trial and the lift comes from the pairs.",
        fields: &[],
    },
    TypeValue {
        name: "prompt",
        meaning: "The LLM judge scoring the stimulus's `rubric`: judged criteria under skillwatch.",
        fields: &[],
    },
    TypeValue {
        name: "panel",
        meaning: "Several LLM judges over the rubric; skillwatch asks its one judge model.",
        fields: &[],
    },
    TypeValue {
        name: "run-command",
        meaning: "Runs `config.command` in the workspace and checks its exit code and output. Not run by skillwatch.",
        fields: &["config"],
    },
    TypeValue {
        name: "program",
        meaning: "A custom grading program. Not run by skillwatch.",
        fields: &["config"],
    },
    TypeValue {
        name: "tool-calls",
        meaning: "Required and disallowed tool calls. Not run by skillwatch (use `constraints.expect_tools`).",
        fields: &["config"],
    },
    TypeValue {
        name: "skill-invocation",
        meaning: "Skills that must be invoked. skillwatch records invocation in every trial instead.",
        fields: &["config"],
    },
    TypeValue {
        name: "loop-outcome",
        meaning: "Whether the agent got stuck in a loop. Not run by skillwatch.",
        fields: &["config"],
    },
];

/// Every waza grader type.
pub(super) static WAZA_GRADER_TYPES: &[TypeValue] = &[
    TypeValue {
        name: "code",
        meaning: "Python or JavaScript assertions over the output. Not run by skillwatch.",
        fields: &[],
    },
    TypeValue {
        name: "prompt",
        meaning: "An LLM judge with `config.prompt`: a judged criterion under skillwatch.",
        fields: &[],
    },
    TypeValue {
        name: "text",
        meaning: "Substrings and patterns the output must (not) contain: `contains`, `not_contains`, `contains_cs`, `regex_match`, ...",
        fields: &[],
    },
    TypeValue {
        name: "file",
        meaning: "Files that must (not) exist: `must_exist`, `must_not_exist`.",
        fields: &[],
    },
    TypeValue {
        name: "json_schema",
        meaning: "The output validated by a JSON Schema. Not run by skillwatch.",
        fields: &[],
    },
    TypeValue {
        name: "program",
        meaning: "A grading program. Not run by skillwatch.",
        fields: &[],
    },
    TypeValue {
        name: "behavior",
        meaning: "Tool and token limits: `required_tools`, `forbidden_tools`, `max_tokens`.",
        fields: &[],
    },
    TypeValue {
        name: "action_sequence",
        meaning: "The tool calls expected in order. Not run by skillwatch.",
        fields: &[],
    },
    TypeValue {
        name: "skill_invocation",
        meaning: "Skills that must be invoked. skillwatch records invocation in every trial instead.",
        fields: &[],
    },
    TypeValue {
        name: "diff",
        meaning: "Workspace files compared with snapshots. Not run by skillwatch.",
        fields: &[],
    },
    TypeValue {
        name: "tool_constraint",
        meaning: "Tools that must (not) be called: `expect_tools`, `reject_tools`.",
        fields: &[],
    },
    TypeValue {
        name: "keyword",
        meaning: "Keywords the output must (not) contain: `must_contain`, `must_not_contain`.",
        fields: &[],
    },
];

/// Every skill-up judge type.
pub(super) static SKILL_UP_JUDGE_TYPES: &[TypeValue] = &[
    TypeValue {
        name: "rule_based",
        meaning: "Deterministic rules: every `success` rule holds and no `failure` rule matches.",
        fields: &[],
    },
    TypeValue {
        name: "script",
        meaning: "A script decides by its exit code. Not run by skillwatch.",
        fields: &["script_path"],
    },
    TypeValue {
        name: "agent_judge",
        meaning: "An LLM judge checks the `criteria`: judged criteria under skillwatch.",
        fields: &["criteria"],
    },
];
