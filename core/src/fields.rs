//! The one table of the fields an author writes: SKILL.md frontmatter keys, eval.yaml fields and
//! assertion types, evals.json fields and criterion types, each with what it means and its
//! limits.
//!
//! Everything that names fields derives from here: the frontmatter check (which keys a profile
//! knows, SW116's suggestions, SW102's quote fix), the editor's hovers and completions, and the
//! property names and descriptions of the eval schemas (schemas/*.schema.json, whose
//! descriptions are written from this table; a test keeps the two in agreement). A field added
//! here is known to all of them at once.

use crate::checks::Profile;
use crate::evalspec::Dialect;

mod dialects;
use dialects::*;

/// The case fields whose items may be criterion objects (evals.json).
fn is_criteria_list(key: &str) -> bool {
    matches!(
        key,
        "assertions" | "expectations" | "must_not" | "expected_behavior"
    )
}

/// Where a field comes from, which decides who accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The format's own definition (for SKILL.md: the Agent Skills specification).
    Spec,
    /// A Claude Code extension of the SKILL.md frontmatter: known under the default profile,
    /// refused under `agentskills`.
    ClaudeCode,
    /// An older name still read (evals.json's ACES names); completion offers it last.
    Legacy,
}

/// One field: its name, what it is for, and its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The key as written.
    pub name: &'static str,
    /// What the field is for, in a sentence or two (Markdown).
    pub meaning: &'static str,
    /// Type, required or optional, limits and default (Markdown).
    pub limits: &'static str,
    /// Text inserted after `name: ` on completion (may be empty).
    pub value_hint: &'static str,
    /// Who defines it.
    pub origin: Origin,
}

/// The mappings an author fills in, one table of fields each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// SKILL.md's frontmatter.
    Frontmatter,
    /// The top level of an eval.yaml.
    EvalYamlTop,
    /// One eval.yaml scenario.
    Scenario,
    /// A scenario's `setup`.
    Setup,
    /// One `setup.files` entry.
    SetupFile,
    /// One eval.yaml assertion (which fields apply depends on its `type`).
    Assertion,
    /// The top level of an evals.json in the current shape (`skill_name`, `evals`).
    EvalsJsonTop,
    /// The top level of an evals.json in SkillEvaluator's `{skill, cases}` shape.
    EvalsJsonCasesTop,
    /// One evals.json case.
    Case,
    /// An object item of a case's criteria lists (`assertions`, `expectations`, ...).
    Criterion,
    /// The top level of a Vally eval spec.
    VallyTop,
    /// A Vally spec's `config` / `defaults`.
    VallyConfig,
    /// A Vally `environment` (root or stimulus).
    VallyEnvironment,
    /// One Vally `environment.files` entry.
    VallyFile,
    /// One Vally stimulus.
    VallyStimulus,
    /// One Vally grader.
    VallyGrader,
    /// A Vally grader's `config`.
    VallyGraderConfig,
    /// A Vally stimulus's `constraints`.
    VallyConstraints,
    /// A Vally spec's `scoring`.
    VallyScoring,
    /// The top level of a Vally experiment.
    VallyExperimentTop,
    /// One variant of a Vally experiment.
    VallyVariant,
    /// The top level of a waza eval.yaml.
    WazaTop,
    /// A waza eval.yaml's `config`.
    WazaConfig,
    /// One waza metric.
    WazaMetric,
    /// One waza grader.
    WazaGrader,
    /// A waza grader's `config`.
    WazaGraderConfig,
    /// A waza task file.
    WazaTask,
    /// A waza task's `inputs`.
    WazaInputs,
    /// A waza task's `expected`.
    WazaExpected,
    /// A waza task's `expected.behavior`.
    WazaBehavior,
    /// The top level of a skill-up eval.yaml.
    SkillUpTop,
    /// A skill-up eval.yaml's `cases`.
    SkillUpCases,
    /// A skill-up eval.yaml's `cases.defaults`.
    SkillUpDefaults,
    /// A skill-up case file.
    SkillUpCase,
    /// A skill-up case's `input`.
    SkillUpInput,
    /// A skill-up case's `context`.
    SkillUpContext,
    /// A skill-up case's `constraints`.
    SkillUpConstraints,
    /// A skill-up `expect`.
    SkillUpExpect,
    /// A skill-up judge.
    SkillUpJudge,
}

impl Place {
    /// Every place.
    pub const ALL: [Place; 39] = [
        Place::Frontmatter,
        Place::EvalYamlTop,
        Place::Scenario,
        Place::Setup,
        Place::SetupFile,
        Place::Assertion,
        Place::EvalsJsonTop,
        Place::EvalsJsonCasesTop,
        Place::Case,
        Place::Criterion,
        Place::VallyTop,
        Place::VallyConfig,
        Place::VallyEnvironment,
        Place::VallyFile,
        Place::VallyStimulus,
        Place::VallyGrader,
        Place::VallyGraderConfig,
        Place::VallyConstraints,
        Place::VallyScoring,
        Place::VallyExperimentTop,
        Place::VallyVariant,
        Place::WazaTop,
        Place::WazaConfig,
        Place::WazaMetric,
        Place::WazaGrader,
        Place::WazaGraderConfig,
        Place::WazaTask,
        Place::WazaInputs,
        Place::WazaExpected,
        Place::WazaBehavior,
        Place::SkillUpTop,
        Place::SkillUpCases,
        Place::SkillUpDefaults,
        Place::SkillUpCase,
        Place::SkillUpInput,
        Place::SkillUpContext,
        Place::SkillUpConstraints,
        Place::SkillUpExpect,
        Place::SkillUpJudge,
    ];

    /// The fields of this place.
    pub fn fields(self) -> &'static [Field] {
        match self {
            Place::Frontmatter => FRONTMATTER,
            Place::EvalYamlTop => EVAL_YAML_TOP,
            Place::Scenario => SCENARIO,
            Place::Setup => SETUP,
            Place::SetupFile => SETUP_FILE,
            Place::Assertion => ASSERTION,
            Place::EvalsJsonTop => EVALS_JSON_TOP,
            Place::EvalsJsonCasesTop => EVALS_JSON_CASES_TOP,
            Place::Case => CASE,
            Place::Criterion => CRITERION,
            Place::VallyTop => VALLY_TOP,
            Place::VallyConfig => VALLY_CONFIG,
            Place::VallyEnvironment => VALLY_ENVIRONMENT,
            Place::VallyFile => VALLY_FILE,
            Place::VallyStimulus => VALLY_STIMULUS,
            Place::VallyGrader => VALLY_GRADER,
            Place::VallyGraderConfig => VALLY_GRADER_CONFIG,
            Place::VallyConstraints => VALLY_CONSTRAINTS,
            Place::VallyScoring => VALLY_SCORING,
            Place::VallyExperimentTop => VALLY_EXPERIMENT_TOP,
            Place::VallyVariant => VALLY_VARIANT,
            Place::WazaTop => WAZA_TOP,
            Place::WazaConfig => WAZA_CONFIG,
            Place::WazaMetric => WAZA_METRIC,
            Place::WazaGrader => WAZA_GRADER,
            Place::WazaGraderConfig => WAZA_GRADER_CONFIG,
            Place::WazaTask => WAZA_TASK,
            Place::WazaInputs => WAZA_INPUTS,
            Place::WazaExpected => WAZA_EXPECTED,
            Place::WazaBehavior => WAZA_BEHAVIOR,
            Place::SkillUpTop => SKILL_UP_TOP,
            Place::SkillUpCases => SKILL_UP_CASES,
            Place::SkillUpDefaults => SKILL_UP_DEFAULTS,
            Place::SkillUpCase => SKILL_UP_CASE,
            Place::SkillUpInput => SKILL_UP_INPUT,
            Place::SkillUpContext => SKILL_UP_CONTEXT,
            Place::SkillUpConstraints => SKILL_UP_CONSTRAINTS,
            Place::SkillUpExpect => SKILL_UP_EXPECT,
            Place::SkillUpJudge => SKILL_UP_JUDGE,
        }
    }

    /// The fields of this place that `profile` accepts (the profile only matters for the
    /// frontmatter: `agentskills` knows the specification's fields alone).
    pub fn known(self, profile: Profile) -> impl Iterator<Item = &'static Field> {
        self.fields()
            .iter()
            .filter(move |f| f.origin != Origin::ClaudeCode || profile == Profile::Default)
    }

    /// The field called `name` here, whatever the profile.
    pub fn field(self, name: &str) -> Option<&'static Field> {
        self.fields().iter().find(|f| f.name == name)
    }

    /// The place of the mapping reached by `keys` (the mapping keys from the root, sequence
    /// indices left out) in a file of `dialect`: what hover and completion look fields up in.
    /// `starts_with_index`: the path's first step is into a top-level list (an evals.json that
    /// is a list of cases); `cases_shape`: the evals.json's top level holds `cases`
    /// (SkillEvaluator's shape). `None` where no table applies.
    pub fn at(
        dialect: Dialect,
        keys: &[&str],
        starts_with_index: bool,
        cases_shape: bool,
    ) -> Option<Place> {
        use Place::*;
        match dialect {
            Dialect::SkillValidator => match keys {
                [] => Some(EvalYamlTop),
                ["scenarios"] => Some(Scenario),
                ["scenarios", "setup"] => Some(Setup),
                ["scenarios", "setup", "files"] => Some(SetupFile),
                ["scenarios", "assertions"] => Some(Assertion),
                _ => None,
            },
            Dialect::EvalsJson => match keys {
                [] if starts_with_index => Some(Case),
                [] if cases_shape => Some(EvalsJsonCasesTop),
                [] => Some(EvalsJsonTop),
                ["evals" | "cases"] => Some(Case),
                [_, criteria] if is_criteria_list(criteria) => Some(Criterion),
                [criteria] if starts_with_index && is_criteria_list(criteria) => Some(Criterion),
                _ => None,
            },
            Dialect::Vally => match keys {
                [] => Some(VallyTop),
                ["config" | "defaults"] => Some(VallyConfig),
                ["environment"] | ["stimuli", "environment"] => Some(VallyEnvironment),
                ["environment", "files"] | ["stimuli", "environment", "files"] => Some(VallyFile),
                ["stimuli"] => Some(VallyStimulus),
                ["stimuli", "graders"] => Some(VallyGrader),
                ["stimuli", "graders", "config"] => Some(VallyGraderConfig),
                ["stimuli", "constraints"] => Some(VallyConstraints),
                ["scoring"] => Some(VallyScoring),
                _ => None,
            },
            Dialect::VallyExperiment => match keys {
                [] => Some(VallyExperimentTop),
                ["variants", _] => Some(VallyVariant),
                _ => None,
            },
            Dialect::Waza => match keys {
                [] => Some(WazaTop),
                ["config"] => Some(WazaConfig),
                ["metrics"] => Some(WazaMetric),
                ["graders"] => Some(WazaGrader),
                ["graders", "config"] => Some(WazaGraderConfig),
                _ => None,
            },
            Dialect::WazaTask => match keys {
                [] => Some(WazaTask),
                ["inputs"] => Some(WazaInputs),
                ["expected"] => Some(WazaExpected),
                ["expected", "behavior"] => Some(WazaBehavior),
                ["graders"] => Some(WazaGrader),
                ["graders", "config"] => Some(WazaGraderConfig),
                _ => None,
            },
            Dialect::SkillUp => match keys {
                [] => Some(SkillUpTop),
                ["cases"] => Some(SkillUpCases),
                ["cases", "defaults"] => Some(SkillUpDefaults),
                ["cases", "defaults", "expect"] => Some(SkillUpExpect),
                ["judge" | "judges"] | ["cases", "defaults", "judge" | "judges"] => {
                    Some(SkillUpJudge)
                }
                _ => None,
            },
            Dialect::SkillUpCase => match keys {
                [] => Some(SkillUpCase),
                ["input"] => Some(SkillUpInput),
                ["context"] => Some(SkillUpContext),
                ["constraints"] => Some(SkillUpConstraints),
                ["expect"] => Some(SkillUpExpect),
                ["judge" | "judges"] => Some(SkillUpJudge),
                _ => None,
            },
        }
    }

    /// The values a `type` field takes here, when it selects a kind of check.
    pub fn types(self) -> &'static [TypeValue] {
        match self {
            Place::Assertion => ASSERTION_TYPES,
            Place::Criterion => CRITERION_TYPES,
            Place::VallyGrader => VALLY_GRADER_TYPES,
            Place::WazaGrader => WAZA_GRADER_TYPES,
            Place::SkillUpJudge => SKILL_UP_JUDGE_TYPES,
            _ => &[],
        }
    }
}

pub(crate) const fn field(
    name: &'static str,
    meaning: &'static str,
    limits: &'static str,
    value_hint: &'static str,
) -> Field {
    Field {
        name,
        meaning,
        limits,
        value_hint,
        origin: Origin::Spec,
    }
}

const fn claude_code(
    name: &'static str,
    meaning: &'static str,
    limits: &'static str,
    value_hint: &'static str,
) -> Field {
    Field {
        origin: Origin::ClaudeCode,
        ..field(name, meaning, limits, value_hint)
    }
}

const fn legacy(name: &'static str, meaning: &'static str, limits: &'static str) -> Field {
    Field {
        origin: Origin::Legacy,
        ..field(name, meaning, limits, "")
    }
}

/// SKILL.md frontmatter keys: the Agent Skills specification, then the fields Claude Code
/// documents.
static FRONTMATTER: &[Field] = &[
    field(
        "name",
        "The skill's identifier. Agents list skills by name, and `/name` invokes it where the harness supports slash commands.",
        "Required. 1-64 characters: lowercase letters, digits and hyphens; no leading, trailing or double hyphen. Must equal the skill's folder name.",
        "",
    ),
    field(
        "description",
        "What the skill does and when to use it. This is the only text an agent sees before deciding to load the skill, so it decides whether the skill is ever used: say what it does and the situations or keywords that should trigger it.",
        "Required. 1-1024 characters, non-empty.",
        "",
    ),
    field(
        "license",
        "The license the skill is distributed under: a license name or the name of a bundled license file.",
        "Optional string. Keep it short.",
        "",
    ),
    field(
        "compatibility",
        "Environment requirements: the products, system packages or network access the skill needs.",
        "Optional string, 1-500 characters. Most skills do not need it.",
        "",
    ),
    field(
        "metadata",
        "Additional properties not defined by the specification, e.g. `author` or `version`.",
        "Optional mapping from string keys to string values.",
        "",
    ),
    field(
        "allowed-tools",
        "Tools the skill may use without asking for permission, e.g. `Read Grep Bash(git diff:*)`. Experimental in the specification; support differs between agents.",
        "Optional. A space-separated string of tool names (a YAML list is also accepted by Claude Code). Broad grants such as `Bash` are a security risk.",
        "",
    ),
    claude_code(
        "when_to_use",
        "Claude Code extension: more context for when the skill applies (trigger phrases, example requests), appended to `description` in the skill listing.",
        "Optional string; counts towards the listing's length with `description`.",
        "",
    ),
    claude_code(
        "argument-hint",
        "Claude Code extension: the hint shown after `/name` for its arguments, e.g. `[file path]`.",
        "Optional string (quote it: `[file]` unquoted is a YAML list).",
        "",
    ),
    claude_code(
        "arguments",
        "Claude Code extension: names for the skill's positional arguments, so the body can say `$name` instead of `$0`.",
        "Optional: a space-separated string or a list of names, in argument order.",
        "",
    ),
    claude_code(
        "disable-model-invocation",
        "Claude Code extension: when true, the model never loads the skill by itself; only a user typing `/name` runs it.",
        "Optional boolean, default false.",
        "true",
    ),
    claude_code(
        "user-invocable",
        "Claude Code extension: when false, the skill is hidden from the `/` menu and only the model can load it.",
        "Optional boolean, default true.",
        "false",
    ),
    claude_code(
        "model",
        "Claude Code extension: the model that runs while the skill is active (e.g. `haiku`, `sonnet`, `opus`).",
        "Optional string; default: the session's model.",
        "",
    ),
    claude_code(
        "effort",
        "Claude Code extension: the reasoning effort while the skill is active, over the session's.",
        "Optional: `low`, `medium`, `high`, `xhigh` or `max`.",
        "medium",
    ),
    claude_code(
        "context",
        "Claude Code extension: `fork` runs the skill in an isolated sub-agent context instead of the current conversation.",
        "Optional: `fork`, or omitted to run inline.",
        "fork",
    ),
    claude_code(
        "agent",
        "Claude Code extension: the sub-agent type used with `context: fork`.",
        "Optional string; only meaningful with `context: fork`.",
        "",
    ),
    claude_code(
        "hooks",
        "Claude Code extension: hooks active while the skill runs, in Claude Code's hook configuration format.",
        "Optional mapping.",
        "",
    ),
    claude_code(
        "paths",
        "Claude Code extension: glob patterns that limit when the skill loads by itself: only while working with matching files.",
        "Optional: a comma-separated string or a list of glob patterns.",
        "",
    ),
    claude_code(
        "shell",
        "Claude Code extension: the shell that runs the skill's `!`-command lines.",
        "Optional: `bash` (default) or `powershell`.",
        "bash",
    ),
];

/// Top-level keys of a skill-validator `eval.yaml`.
static EVAL_YAML_TOP: &[Field] = &[
    field(
        "scenarios",
        "The eval cases. Each scenario is run twice per attempt, without and with the skill, and the difference is the skill's lift.",
        "Required list with at least one scenario.",
        "",
    ),
    field(
        "triggers",
        "Trigger queries for `skillwatch trigger`: user messages and whether the agent should pick the skill for them (scenarios count too, by `expect_activation`).",
        "Optional mapping: `positive`, `negative`, `near_miss`, each a list of queries.",
        "",
    ),
];

/// Fields of one eval.yaml scenario.
static SCENARIO: &[Field] = &[
    field(
        "name",
        "The scenario's name: its identity in the history, in reports and in code lenses.",
        "Required, non-empty, unique within the file.",
        "",
    ),
    field(
        "prompt",
        "The task given to the agent, exactly as a user would type it. Do not name the skill: that tests obedience, not discovery.",
        "Required, non-empty string (a `|` block for several lines).",
        "|",
    ),
    field(
        "setup",
        "Files and commands that prepare the workspace before the agent starts.",
        "Optional mapping: `copy_test_files`, `files`, `commands`.",
        "",
    ),
    field(
        "assertions",
        "Deterministic checks of the result, each with a `type`. When any exist, the task counts as completed only if all pass.",
        "Optional list of assertions.",
        "",
    ),
    field(
        "rubric",
        "Criteria an LLM judge scores the output against.",
        "Optional list of non-empty strings; when empty the judge uses \"completed the task correctly\" and \"clear and well-structured\".",
        "",
    ),
    field(
        "timeout",
        "Seconds a single agent run may take before it is killed and recorded as a timeout.",
        "Optional positive integer, default 120.",
        "120",
    ),
    field(
        "expect_tools",
        "Tools that must appear in the agent's tool calls.",
        "Optional list of tool names.",
        "",
    ),
    field(
        "reject_tools",
        "Tools that must not appear in the agent's tool calls.",
        "Optional list of tool names.",
        "",
    ),
    field(
        "max_turns",
        "Upper bound on assistant turns; more fails the scenario.",
        "Optional positive integer.",
        "",
    ),
    field(
        "max_tokens",
        "Upper bound on tokens used (input + output); more fails the scenario.",
        "Optional positive integer.",
        "",
    ),
    field(
        "expect_activation",
        "Whether the skill should be loaded for this prompt. `false` makes a negative scenario: the skill must stay unused.",
        "Optional boolean, default true.",
        "false",
    ),
];

/// Fields of an eval.yaml scenario's `setup`.
static SETUP: &[Field] = &[
    field(
        "copy_test_files",
        "Copy every file next to eval.yaml (except eval.yaml itself) into the workspace, before `files`.",
        "Optional boolean, default false.",
        "true",
    ),
    field(
        "files",
        "Files to create in the workspace, each with `path` and either inline `content` or a `source` file.",
        "Optional list.",
        "",
    ),
    field(
        "commands",
        "Shell commands run in the workspace after the files are placed.",
        "Optional list of strings.",
        "",
    ),
];

/// Fields of one `setup.files` entry.
static SETUP_FILE: &[Field] = &[
    field(
        "path",
        "Where the file goes, relative to the workspace.",
        "Required relative path.",
        "",
    ),
    field(
        "content",
        "The file's text, inline.",
        "Either `content` or `source`.",
        "|",
    ),
    field(
        "source",
        "A file to copy, relative to the skill's folder.",
        "Either `content` or `source`; the file must exist.",
        "",
    ),
];

/// Fields an eval.yaml assertion can carry (which ones apply depends on its `type`).
static ASSERTION: &[Field] = &[
    field(
        "type",
        "Which check this assertion performs.",
        "Required; one of the assertion types.",
        "",
    ),
    field(
        "path",
        "A glob, relative to the workspace, naming the file(s) checked.",
        "Required for file assertions.",
        "",
    ),
    field(
        "value",
        "The text looked for.",
        "Required for `*_contains` assertions. Output checks ignore case; file checks do not.",
        "",
    ),
    field(
        "pattern",
        "A regular expression, matched case-insensitively against the agent's final output.",
        "Required for `output_matches` / `output_not_matches`; must compile.",
        "",
    ),
];

/// Top-level keys of an `evals/evals.json` object (the current agentskills.io shape).
static EVALS_JSON_TOP: &[Field] = &[
    field(
        "skill_name",
        "The skill these evals are for.",
        "Required string; should equal the skill's `name`.",
        "",
    ),
    field(
        "evals",
        "The eval cases, each run without and with the skill.",
        "Required array of case objects.",
        "",
    ),
];

/// Top-level keys of SkillEvaluator's `{skill, cases}` evals.json.
static EVALS_JSON_CASES_TOP: &[Field] = &[
    field(
        "skill",
        "The skill these cases are for.",
        "Optional string; should equal the skill's `name`.",
        "",
    ),
    field(
        "cases",
        "The eval cases (legacy field names), each run without and with the skill.",
        "Required array of case objects.",
        "",
    ),
    field(
        "version",
        "The file's own version label.",
        "Optional string or number.",
        "",
    ),
    field(
        "description",
        "What the cases cover.",
        "Optional string.",
        "",
    ),
];

/// Fields of one evals.json case: current names, then the legacy ACES names.
static CASE: &[Field] = &[
    field(
        "id",
        "The case's stable identity in the history and in lenses.",
        "Required. A string `[A-Za-z0-9][A-Za-z0-9._-]{0,127}` or an integer; unique in the file.",
        "",
    ),
    field(
        "name",
        "A display name for the case, shown in reports instead of its id.",
        "Optional string; default: the id.",
        "",
    ),
    field(
        "prompt",
        "The task given to the agent, as a user would phrase it.",
        "Required non-empty string.",
        "",
    ),
    field(
        "expected_output",
        "A description of a correct result, used by the LLM judge for accuracy.",
        "Optional string (required in the current shape).",
        "",
    ),
    field(
        "assertions",
        "Statements about the result that an LLM judge checks one by one; an object item with a `type` is a deterministic check instead.",
        "Optional array of non-empty strings or criterion objects.",
        "",
    ),
    field(
        "expectations",
        "skill-creator's name for `assertions`: statements the grader verifies.",
        "Optional array of non-empty strings or criterion objects.",
        "",
    ),
    field(
        "must_not",
        "Things the agent must not do, each checked like an assertion that must fail.",
        "Optional array of non-empty strings or criterion objects.",
        "",
    ),
    field(
        "files",
        "Input files staged into the workspace, relative to `evals/` (a leading `evals/` is allowed).",
        "Optional path or array of paths; each must exist.",
        "",
    ),
    field(
        "expected_skill",
        "The skill that should be loaded for this prompt; `null` makes a negative case (no skill should be).",
        "Optional string or null; must name a skill in the tree.",
        "",
    ),
    field(
        "should_trigger",
        "Whether the skill should be used for this prompt: `false` makes a negative case. Wins over `expected_skill`.",
        "Optional boolean.",
        "false",
    ),
    field(
        "acceptable_skills",
        "Other skills whose use still counts as correct routing (scored lower than the expected one).",
        "Optional array of skill names.",
        "",
    ),
    field(
        "acceptable_alternates",
        "ACES's name for `acceptable_skills`: other skills whose use still counts as correct routing.",
        "Optional array of skill names; read when `acceptable_skills` is absent.",
        "",
    ),
    field(
        "expected_script",
        "A script of the skill the agent is expected to run.",
        "Optional string or null.",
        "",
    ),
    field(
        "expected_workflow",
        "The steps a correct run takes, in order (kept with the case; not graded yet).",
        "Optional string or null.",
        "",
    ),
    field(
        "expected_test",
        "A test that a correct result passes (kept with the case; not graded yet).",
        "Optional string or null.",
        "",
    ),
    field(
        "expected_references",
        "Reference files of the skill a correct run reads (kept with the case; not graded yet).",
        "Optional array of paths.",
        "",
    ),
    legacy(
        "question",
        "Legacy ACES name for `prompt`.",
        "Legacy; prefer `prompt`.",
    ),
    legacy(
        "ground_truth",
        "Legacy ACES name for `expected_output`.",
        "Legacy; prefer `expected_output`.",
    ),
    legacy(
        "expected_behavior",
        "Legacy ACES name for `assertions`.",
        "Legacy; prefer `assertions`.",
    ),
];

/// Fields of an object item in a case's criteria lists.
static CRITERION: &[Field] = &[
    field(
        "text",
        "The statement an LLM judge checks.",
        "Required unless `type` is set.",
        "",
    ),
    field("name", "A short label for reports.", "Optional string.", ""),
    field(
        "type",
        "Makes the item a deterministic check of the final output instead of a judged statement.",
        "Optional; one of the criterion types.",
        "",
    ),
    field(
        "phrase",
        "The text looked for (case-insensitive).",
        "Required for `contains_phrase` / `not_contains`.",
        "",
    ),
    field(
        "pattern",
        "A regular expression matched against the final output.",
        "Required for `contains_pattern` / `not_contains_pattern`; must compile.",
        "",
    ),
];

/// One value of a `type` field and the fields it needs besides `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeValue {
    /// The `type:` value.
    pub name: &'static str,
    /// What it checks.
    pub meaning: &'static str,
    /// The fields it requires.
    pub fields: &'static [&'static str],
}

/// Every eval.yaml assertion type.
static ASSERTION_TYPES: &[TypeValue] = &[
    TypeValue {
        name: "output_contains",
        meaning: "Passes when the agent's final output contains `value` (case-insensitive).",
        fields: &["value"],
    },
    TypeValue {
        name: "output_not_contains",
        meaning: "Passes when the final output does not contain `value` (case-insensitive).",
        fields: &["value"],
    },
    TypeValue {
        name: "output_matches",
        meaning: "Passes when the final output matches the regular expression `pattern` (case-insensitive).",
        fields: &["pattern"],
    },
    TypeValue {
        name: "output_not_matches",
        meaning: "Passes when the final output does not match `pattern`.",
        fields: &["pattern"],
    },
    TypeValue {
        name: "file_exists",
        meaning: "Passes when a file matching `path` exists in the workspace after the run.",
        fields: &["path"],
    },
    TypeValue {
        name: "file_not_exists",
        meaning: "Passes when no file matches `path`.",
        fields: &["path"],
    },
    TypeValue {
        name: "file_contains",
        meaning: "Passes when a file matching `path` contains `value` (case-sensitive).",
        fields: &["path", "value"],
    },
    TypeValue {
        name: "file_not_contains",
        meaning: "Passes when no file matching `path` contains `value`.",
        fields: &["path", "value"],
    },
    TypeValue {
        name: "exit_success",
        meaning: "Passes when the agent finished and produced a non-empty final output.",
        fields: &[],
    },
];

/// Every evals.json criterion type.
static CRITERION_TYPES: &[TypeValue] = &[
    TypeValue {
        name: "contains_phrase",
        meaning: "Passes when the final output contains `phrase` (case-insensitive).",
        fields: &["phrase"],
    },
    TypeValue {
        name: "not_contains",
        meaning: "Passes when the final output does not contain `phrase`.",
        fields: &["phrase"],
    },
    TypeValue {
        name: "contains_pattern",
        meaning: "Passes when the final output matches the regular expression `pattern`.",
        fields: &["pattern"],
    },
    TypeValue {
        name: "not_contains_pattern",
        meaning: "Passes when the final output does not match `pattern`.",
        fields: &["pattern"],
    },
];

/// Hover text for a field: name, meaning, limits.
pub fn hover_markdown(field: &Field) -> String {
    format!(
        "**`{}`**\n\n{}\n\n*{}*",
        field.name, field.meaning, field.limits
    )
}

/// Hover text for a `type` value.
pub fn type_markdown(kind: &TypeValue) -> String {
    let fields = if kind.fields.is_empty() {
        "no other fields".to_string()
    } else {
        kind.fields
            .iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "**`type: {}`**\n\n{}\n\n*Needs: {fields}.*",
        kind.name, kind.meaning
    )
}

/// The `description` a schema gives a field: its meaning and limits, as one paragraph.
pub fn schema_description(field: &Field) -> String {
    format!("{} {}", field.meaning, field.limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_per_place() {
        for place in Place::ALL {
            let mut names: Vec<_> = place.fields().iter().map(|f| f.name).collect();
            let n = names.len();
            names.sort();
            names.dedup();
            assert_eq!(n, names.len(), "{place:?}");
        }
    }

    #[test]
    fn every_field_a_type_needs_is_a_field_of_its_place() {
        for place in Place::ALL {
            for kind in place.types() {
                for f in kind.fields {
                    assert!(
                        place.field(f).is_some(),
                        "{place:?}: {} needs {f}",
                        kind.name
                    );
                }
            }
        }
    }

    #[test]
    fn agentskills_knows_the_six_fields_of_the_specification() {
        let strict: Vec<_> = Place::Frontmatter
            .known(Profile::AgentSkills)
            .map(|f| f.name)
            .collect();
        assert_eq!(
            strict,
            [
                "name",
                "description",
                "license",
                "compatibility",
                "metadata",
                "allowed-tools"
            ]
        );
        assert_eq!(
            Place::Frontmatter.known(Profile::Default).count(),
            FRONTMATTER.len()
        );
    }
}
