//! The one internal model of an eval suite, whatever file it was written in.
//!
//! The runner consumes a [`Case`] without knowing whether it came from skill-validator's
//! `tests/eval.yaml` or an ACES / skill-creator `evals/evals.json`, and the store identifies it
//! by [`Case::content_hash`]. Every type here is `Serialize + Deserialize`, and values that a
//! file could get wrong (a regex, a timeout) are checked types, so a `Case` that exists is one
//! the runner can run.

use std::collections::BTreeMap;
use std::fmt;
use std::num::{NonZeroU32, NonZeroU64};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::text::Span;

/// Every case of one skill, in file order (eval.yaml cases first when a skill has both files).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    /// The skill the file says it evaluates (`skill_name` / `skill` in evals.json), if it says.
    pub skill_name: Option<String>,
    /// The cases.
    pub cases: Vec<Case>,
    /// Trigger queries written for `skillwatch trigger` alone (eval.yaml's `triggers:`);
    /// not part of the suite's identity, since no paired run reads them.
    #[serde(default)]
    pub triggers: Vec<super::TriggerQuery>,
    /// What the files ask for that skillwatch does not run (a pairwise grader, scoring
    /// weights, a plugin arm, ...), each where it is written: said by `check` (SW416), the
    /// editor and `run`, never dropped silently. Not part of the suite's identity.
    #[serde(default)]
    pub notes: Vec<Note>,
    /// The plugin arm a Vally experiment asks for (the whole plugin installed together), run
    /// as a third condition beside baseline and skill; `None` for every other suite, whose
    /// runs are the two arms alone. Not part of the suite's identity (the cases are): the
    /// run records the arm's skills with their hashes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginArm>,
}

/// A plugin arm: the skills an experiment stages together, as it writes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginArm {
    /// The variant's name in the experiment (`plugin`).
    pub name: String,
    /// The experiment file, relative to the skill folder (as [`Note::file`]); the skill
    /// paths are relative to its folder, as Vally resolves them.
    pub file: String,
    /// Where the variant is written (its key).
    pub span: Span,
    /// `environment.skills` of the variant: skill folders, or a folder of skills (a
    /// plugin's `skills/`), relative to the experiment's folder.
    pub skills: Vec<String>,
}

/// Something an eval file asks for that skillwatch does not run, or runs by a rule of its own
/// that the author should know (docs/evals.md, "What skillwatch does not run").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// The eval file, relative to the skill folder (as [`Origin::file`]).
    pub file: String,
    /// Where in that file (the key or value concerned).
    pub span: Span,
    /// 1-based line of `span.start`; 0 until [`super::load_suite`] places it.
    pub line: u32,
    /// 1-based column (in characters) of `span.start`; 0 until placed.
    pub column: u32,
    /// `not run by skillwatch: ...`, naming what and what skillwatch does instead.
    pub message: String,
    /// Whether it changes what is measured (warning) or only how a run is set up (info).
    pub level: NoteLevel,
}

/// How much a [`Note`] matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteLevel {
    /// What the file measures differs under skillwatch (a grader or an arm not run).
    Warning,
    /// A run setting skillwatch takes from its own flags instead (runs, model, judge model).
    Info,
}

/// One task given to the agent, and how its result is judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// Stable identifier, unique within its file: the scenario `name` in eval.yaml, the `id`
    /// in evals.json (integers written as their decimal string).
    pub id: String,
    /// What to show a person: the scenario name, or evals.json's optional `name`, else the id.
    pub name: String,
    /// The user message the agent receives.
    pub prompt: String,
    /// The workspace to prepare before the agent starts.
    pub setup: Setup,
    /// Checks decided by code, not by a judge.
    pub assertions: Vec<Assertion>,
    /// Criteria decided by an LLM judge.
    pub judged: Judged,
    /// Whether the skill under test should be used.
    pub activation: Activation,
    /// Seconds the agent may run; `None` leaves it to the runner's default.
    pub timeout_secs: Option<NonZeroU32>,
    /// Limits on the agent's tool use and size of the run.
    pub constraints: Constraints,
    /// A script the agent is expected to run (ACES `expected_script`), relative to the skill.
    pub expected_script: Option<String>,
    /// Fields this model does not interpret but that the file defines (e.g. ACES
    /// `expected_workflow`), kept so nothing an author wrote is lost and so they count in the
    /// hash.
    pub extra: BTreeMap<String, Json>,
    /// Where the case was written. Not part of the case's identity.
    pub origin: Origin,
}

/// Where a case was written, for diagnostics and for resolving relative paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The eval file, relative to the skill folder with `/` separators (it may start with
    /// `../` for a tests tree outside the skill).
    pub file: String,
    /// The file's format and shape.
    pub format: Format,
    /// Byte range of the case in that file.
    pub span: Span,
    /// JSON Pointer to the case in the file (`/scenarios/2`, `/evals/0`, `/3`).
    pub pointer: String,
}

/// The file formats and, for evals.json, the shapes found in the wild.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// skill-validator's `tests/eval.yaml` (`scenarios: [...]`).
    EvalYaml,
    /// agentskills.io / skill-creator / current ACES: `{"skill_name", "evals": [...]}`.
    EvalsJson,
    /// The legacy ACES flat array of `{id, question, ...}`.
    EvalsJsonLegacyArray,
    /// `{"skill", "cases": [...]}`, accepted by SkillEvaluator's loader.
    EvalsJsonCases,
    /// A single legacy case object at the top level, accepted by SkillEvaluator's loader.
    EvalsJsonSingleCase,
    /// A Microsoft Vally eval spec (`stimuli: [...]`).
    Vally,
    /// A microsoft/waza task file (`tasks/*.yaml` of a waza `eval.yaml`).
    Waza,
    /// An alibaba/skill-up case file (`evals/cases/*.yaml` of its `eval.yaml`).
    SkillUp,
}

impl Format {
    /// True for the evals.json shapes other than the current `{skill_name, evals}`.
    pub fn is_legacy_json(self) -> bool {
        matches!(
            self,
            Format::EvalsJsonLegacyArray | Format::EvalsJsonCases | Format::EvalsJsonSingleCase
        )
    }
}

/// Files, commands and copies that make the starting workspace.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Setup {
    /// Copy every file beside the eval file (except the eval file itself) into the workspace
    /// first (skill-validator `copy_test_files`).
    pub copy_test_files: bool,
    /// Files to create after the copy, in order.
    pub files: Vec<SetupFile>,
    /// Shell commands run in the workspace after the files are in place.
    pub commands: Vec<String>,
}

/// One file to place in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetupFile {
    /// Where to write it, relative to the workspace.
    pub path: String,
    /// What to write.
    pub content: FileContent,
}

/// A setup file's content: written inline, or copied from a file of the skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileContent {
    /// The text itself.
    Inline {
        /// The file's content.
        text: String,
    },
    /// A file to copy, relative to the skill folder.
    Source {
        /// Path relative to the skill folder (may contain `..`).
        path: String,
    },
}

/// A deterministic check of the agent's output or workspace (skill-validator's assertion
/// types; typed assertions in evals.json map onto the same variants).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Assertion {
    /// The final output contains `value`, ignoring case.
    OutputContains {
        /// Text to look for.
        value: String,
    },
    /// The final output does not contain `value`, ignoring case.
    OutputNotContains {
        /// Text that must be absent.
        value: String,
    },
    /// The final output matches `pattern`, ignoring case.
    OutputMatches {
        /// The regular expression.
        pattern: Pattern,
    },
    /// The final output does not match `pattern`, ignoring case.
    OutputNotMatches {
        /// The regular expression.
        pattern: Pattern,
    },
    /// A file matching the glob `path` exists in the workspace.
    FileExists {
        /// Glob relative to the workspace.
        path: String,
    },
    /// No file matching the glob `path` exists in the workspace.
    FileNotExists {
        /// Glob relative to the workspace.
        path: String,
    },
    /// Some file matching `path` contains `value` (case-sensitive).
    FileContains {
        /// Glob relative to the workspace.
        path: String,
        /// Text to look for.
        value: String,
    },
    /// No file matching `path` contains `value` (case-sensitive).
    FileNotContains {
        /// Glob relative to the workspace.
        path: String,
        /// Text that must be absent.
        value: String,
    },
    /// The agent produced a non-empty final output.
    ExitSuccess,
}

/// A regular expression that is known to compile (with `fancy-regex`, which accepts the
/// look-around and back-references that skill-validator's JavaScript and .NET engines accept).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Pattern(String);

/// Why a pattern is not a usable regular expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid regular expression `{pattern}`: {reason}")]
pub struct PatternError {
    /// The pattern as written.
    pub pattern: String,
    /// The regex engine's explanation.
    pub reason: String,
}

impl Pattern {
    /// Check that `pattern` compiles, without building it when a parse can vouch for it
    /// (compiling costs about half a millisecond, paid on every check of an eval file; see
    /// [`super::regex_verdict`]).
    pub fn new(pattern: impl Into<String>) -> Result<Pattern, PatternError> {
        let pattern = pattern.into();
        match super::regex_verdict::compile_verdict(&pattern) {
            None => Ok(Pattern(pattern)),
            Some(reason) => Err(PatternError { reason, pattern }),
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The compiled expression, case-insensitive as skill-validator matches (`RegExp(p, "i")`).
    pub fn compile(&self) -> fancy_regex::Regex {
        fancy_regex::RegexBuilder::new(&self.0)
            .case_insensitive(true)
            .build()
            .or_else(|_| fancy_regex::Regex::new(&self.0))
            .expect("a Pattern compiles: checked in Pattern::new")
    }
}

impl TryFrom<String> for Pattern {
    type Error = PatternError;
    fn try_from(value: String) -> Result<Pattern, PatternError> {
        Pattern::new(value)
    }
}

impl From<Pattern> for String {
    fn from(p: Pattern) -> String {
        p.0
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What an LLM judge is asked about.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Judged {
    /// A description of a good result (`expected_output` / ACES `ground_truth`).
    pub expected_output: Option<String>,
    /// The individual criteria, in file order.
    pub criteria: Vec<Criterion>,
}

/// One judged statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Criterion {
    /// How the judge uses it.
    pub kind: CriterionKind,
    /// The statement.
    pub text: String,
    /// A short label, when the file gives one (`{"name": ..., "text": ...}`).
    pub name: Option<String>,
}

/// The kinds of judged criteria the formats define.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CriterionKind {
    /// skill-validator `rubric`: scored 1-5, or compared pairwise baseline vs skill.
    Rubric,
    /// A statement that holds or not: ACES `expected_behavior` / `assertions` strings,
    /// skill-creator `expectations`.
    Expectation,
    /// Something the agent must not do (`must_not` in some evals.json files).
    MustNot,
}

/// Whether the case expects the skill under test to be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Activation {
    /// A positive case: the agent should use `skill`.
    Expected {
        /// The skill to use; `None` means the skill under test.
        skill: Option<String>,
        /// Other skills that earn partial credit (ACES `acceptable_skills`).
        acceptable: Vec<String>,
    },
    /// A negative case: the skill under test must not be used.
    MustNotTrigger,
    /// The file does not say (legacy evals.json without `expected_skill`).
    Unspecified,
}

/// Limits a run must respect to pass (skill-validator constraints).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Constraints {
    /// Tools that must each be used at least once.
    pub expect_tools: Vec<String>,
    /// Tools that must not be used.
    pub reject_tools: Vec<String>,
    /// Most assistant turns allowed.
    pub max_turns: Option<NonZeroU32>,
    /// Most tokens (input + output) allowed.
    pub max_tokens: Option<NonZeroU64>,
}

impl Suite {
    /// `sha256:<hex>` identifying the suite's content: the skill name and the cases' content
    /// hashes in order. Where the cases were written does not count.
    pub fn content_hash(&self) -> String {
        let cases: Vec<String> = self.cases.iter().map(Case::content_hash).collect();
        let value = serde_json::json!({ "skill_name": self.skill_name, "cases": cases });
        crate::skill::hash_bytes(canonical_json(&value).as_bytes())
    }
}

impl Case {
    /// `sha256:<hex>` of everything that defines the case except where it was written
    /// ([`Origin`]): the same case moved to another line or file keeps its hash, any change to
    /// what the agent is given or how it is judged changes it. The store caches baseline trials
    /// by this hash. Contents of `source` fixture files are not included (see
    /// [`crate::evalspec::case_fingerprint`] for a hash that includes them).
    pub fn content_hash(&self) -> String {
        let mut value = serde_json::to_value(self).expect("a Case serialises to JSON");
        if let Json::Object(map) = &mut value {
            map.remove("origin");
        }
        let canonical = canonical_json(&value);
        crate::skill::hash_bytes(canonical.as_bytes())
    }

    /// True when the case expects the skill under test (named `names`) to be used.
    pub fn is_positive_for(&self, names: &[&str]) -> bool {
        match &self.activation {
            Activation::Expected { skill: None, .. } => true,
            Activation::Expected {
                skill: Some(skill), ..
            } => names.iter().any(|n| n.eq_ignore_ascii_case(skill)),
            _ => false,
        }
    }
}

/// JSON text with object keys sorted at every level, so equal values hash equally whatever
/// order a map produced them in.
pub(crate) fn canonical_json(value: &Json) -> String {
    fn sorted(value: &Json) -> Json {
        match value {
            Json::Object(map) => {
                let mut keys: Vec<_> = map.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sorted(&map[k]));
                }
                Json::Object(out)
            }
            Json::Array(items) => Json::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample_case() -> Case {
        Case {
            id: "greet".into(),
            name: "greet".into(),
            prompt: "Greet Alice".into(),
            setup: Setup::default(),
            assertions: vec![
                Assertion::OutputContains {
                    value: "Alice".into(),
                },
                Assertion::OutputMatches {
                    pattern: Pattern::new("(?<=Dear )Alice").unwrap(),
                },
                Assertion::ExitSuccess,
            ],
            judged: Judged::default(),
            activation: Activation::Expected {
                skill: None,
                acceptable: vec![],
            },
            timeout_secs: NonZeroU32::new(120),
            constraints: Constraints::default(),
            expected_script: None,
            extra: BTreeMap::new(),
            origin: Origin {
                file: "tests/eval.yaml".into(),
                format: Format::EvalYaml,
                span: Span::new(0, 10),
                pointer: "/scenarios/0".into(),
            },
        }
    }

    #[test]
    fn hash_ignores_origin_but_not_content() {
        let a = sample_case();
        let mut moved = a.clone();
        moved.origin.span = Span::new(100, 200);
        moved.origin.file = "other.yaml".into();
        assert_eq!(a.content_hash(), moved.content_hash());
        let mut edited = a.clone();
        edited.prompt.push('!');
        assert_ne!(a.content_hash(), edited.content_hash());
        assert!(a.content_hash().starts_with("sha256:"));

        let suite = Suite {
            plugin: None,
            skill_name: Some("s".into()),
            cases: vec![a.clone(), edited.clone()],
            triggers: Vec::new(),
            notes: Vec::new(),
        };
        let mut reordered = suite.clone();
        reordered.cases.reverse();
        assert_ne!(suite.content_hash(), reordered.content_hash());
        let mut relocated = suite.clone();
        relocated.cases[0].origin = moved.origin.clone();
        assert_eq!(suite.content_hash(), relocated.content_hash());
    }

    #[test]
    fn invalid_patterns_cannot_be_built_or_deserialised() {
        assert!(Pattern::new("(unclosed").is_err());
        let json = r#"{"type":"output_matches","pattern":"[a-"}"#;
        assert!(serde_json::from_str::<Assertion>(json).is_err());
        let ok = r#"{"type":"output_matches","pattern":"a|b"}"#;
        let a: Assertion = serde_json::from_str(ok).unwrap();
        assert_eq!(
            a,
            Assertion::OutputMatches {
                pattern: Pattern::new("a|b").unwrap()
            }
        );
    }

    #[test]
    fn compiled_patterns_ignore_case() {
        let p = Pattern::new("dear (alice|bob)").unwrap();
        assert!(p.compile().is_match("Dear ALICE").unwrap());
    }

    #[test]
    fn zero_timeout_is_not_representable_in_json() {
        let mut json = serde_json::to_value(sample_case()).unwrap();
        json["timeout_secs"] = serde_json::json!(0);
        assert!(serde_json::from_value::<Case>(json).is_err());
    }

    mod round_trip {
        use super::*;
        use proptest::collection::{btree_map, vec};
        use proptest::option;
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            "\\PC{0,16}"
        }

        fn pattern() -> impl Strategy<Value = Pattern> {
            "[a-z0-9 .*+?|()\\[\\]-]{0,12}".prop_filter_map("compiles", |s| Pattern::new(s).ok())
        }

        fn assertion() -> impl Strategy<Value = Assertion> {
            prop_oneof![
                text().prop_map(|value| Assertion::OutputContains { value }),
                text().prop_map(|value| Assertion::OutputNotContains { value }),
                pattern().prop_map(|pattern| Assertion::OutputMatches { pattern }),
                pattern().prop_map(|pattern| Assertion::OutputNotMatches { pattern }),
                text().prop_map(|path| Assertion::FileExists { path }),
                text().prop_map(|path| Assertion::FileNotExists { path }),
                (text(), text()).prop_map(|(path, value)| Assertion::FileContains { path, value }),
                (text(), text())
                    .prop_map(|(path, value)| Assertion::FileNotContains { path, value }),
                Just(Assertion::ExitSuccess),
            ]
        }

        fn setup() -> impl Strategy<Value = Setup> {
            let content = prop_oneof![
                text().prop_map(|text| FileContent::Inline { text }),
                text().prop_map(|path| FileContent::Source { path }),
            ];
            let file = (text(), content).prop_map(|(path, content)| SetupFile { path, content });
            (any::<bool>(), vec(file, 0..3), vec(text(), 0..3)).prop_map(
                |(copy_test_files, files, commands)| Setup {
                    copy_test_files,
                    files,
                    commands,
                },
            )
        }

        fn judged() -> impl Strategy<Value = Judged> {
            let kind = prop_oneof![
                Just(CriterionKind::Rubric),
                Just(CriterionKind::Expectation),
                Just(CriterionKind::MustNot),
            ];
            let criterion = (kind, text(), option::of(text()))
                .prop_map(|(kind, text, name)| Criterion { kind, text, name });
            (option::of(text()), vec(criterion, 0..4)).prop_map(|(expected_output, criteria)| {
                Judged {
                    expected_output,
                    criteria,
                }
            })
        }

        fn activation() -> impl Strategy<Value = Activation> {
            prop_oneof![
                (option::of(text()), vec(text(), 0..2))
                    .prop_map(|(skill, acceptable)| Activation::Expected { skill, acceptable }),
                Just(Activation::MustNotTrigger),
                Just(Activation::Unspecified),
            ]
        }

        fn constraints() -> impl Strategy<Value = Constraints> {
            (
                vec(text(), 0..2),
                vec(text(), 0..2),
                option::of(1u32..),
                option::of(1u64..),
            )
                .prop_map(|(expect_tools, reject_tools, turns, tokens)| Constraints {
                    expect_tools,
                    reject_tools,
                    max_turns: turns.and_then(NonZeroU32::new),
                    max_tokens: tokens.and_then(NonZeroU64::new),
                })
        }

        fn json_value() -> impl Strategy<Value = Json> {
            let leaf = prop_oneof![
                Just(Json::Null),
                any::<bool>().prop_map(Json::Bool),
                any::<i64>().prop_map(Json::from),
                text().prop_map(Json::String),
            ];
            leaf.prop_recursive(2, 8, 3, |inner| {
                prop_oneof![
                    vec(inner.clone(), 0..3).prop_map(Json::Array),
                    btree_map("[a-z_]{1,8}", inner, 0..3)
                        .prop_map(|m| Json::Object(m.into_iter().collect())),
                ]
            })
        }

        fn origin() -> impl Strategy<Value = Origin> {
            let format = prop_oneof![
                Just(Format::EvalYaml),
                Just(Format::EvalsJson),
                Just(Format::EvalsJsonLegacyArray),
                Just(Format::EvalsJsonCases),
                Just(Format::EvalsJsonSingleCase),
            ];
            (text(), format, any::<(usize, usize)>(), text()).prop_map(
                |(file, format, (a, b), pointer)| Origin {
                    file,
                    format,
                    span: Span::new(a, b),
                    pointer,
                },
            )
        }

        prop_compose! {
            fn case()(
                id in text(), name in text(), prompt in text(), setup in setup(),
                assertions in vec(assertion(), 0..4), judged in judged(),
                activation in activation(), timeout in option::of(1u32..),
                constraints in constraints(), expected_script in option::of(text()),
                extra in btree_map("[a-z_]{1,10}", json_value(), 0..3), origin in origin(),
            ) -> Case {
                Case {
                    id, name, prompt, setup, assertions, judged, activation,
                    timeout_secs: timeout.and_then(NonZeroU32::new),
                    constraints, expected_script, extra, origin,
                }
            }
        }

        proptest! {
            #[test]
            fn suite_survives_json(
                skill_name in option::of(text()),
                cases in vec(case(), 0..4),
            ) {
                let suite = Suite {
                    plugin: None,
                    skill_name,
                    cases,
                    triggers: Vec::new(),
                    notes: Vec::new(),
                };
                let json = serde_json::to_string(&suite).unwrap();
                let back: Suite = serde_json::from_str(&json).unwrap();
                prop_assert_eq!(&back, &suite);
                for (a, b) in suite.cases.iter().zip(&back.cases) {
                    prop_assert_eq!(a.content_hash(), b.content_hash());
                }
            }
        }
    }
}
