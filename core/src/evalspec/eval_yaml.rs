//! skill-validator's `tests/eval.yaml` -> [`Suite`].
//!
//! The format is the C# skill-validator's (`dotnet/skills:eng/skill-validator`, a superset of
//! the TypeScript original): `scenarios[]` with name, prompt, setup (copy_test_files, files
//! with content or source, commands), typed assertions, rubric, timeout (default 120),
//! expect_tools, reject_tools, max_turns, max_tokens and expect_activation (default true).

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use crate::yaml::Node;

use super::ParseError;
use super::fields::{Fields, Texts, describe, display_pointer, scalar_text};
use super::model::{
    Activation, Assertion, Case, Constraints, Criterion, CriterionKind, FileContent, Format,
    Judged, Origin, Pattern, Setup, SetupFile, Suite,
};

/// skill-validator's timeout when a scenario gives none, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u32 = 120;

/// Every assertion `type` skill-validator accepts.
pub const ASSERTION_TYPES: &[&str] = &[
    "output_contains",
    "output_not_contains",
    "output_matches",
    "output_not_matches",
    "file_exists",
    "file_not_exists",
    "file_contains",
    "file_not_contains",
    "exit_success",
];

/// Read an eval.yaml tree. `file` is the file's path relative to the skill folder, recorded
/// in each case's [`Origin`].
pub fn suite_from_tree(root: &Node, file: &str) -> Result<Suite, ParseError> {
    let top = Fields::new(root, String::new(), Texts::AnyScalar)?;
    let scenarios = top.present("scenarios").ok_or_else(|| {
        ParseError::shape(
            root.span,
            "expected a top-level `scenarios:` list with at least one scenario, found none".into(),
        )
    })?;
    let items = scenarios.as_sequence().ok_or_else(|| {
        ParseError::shape(
            scenarios.span,
            format!(
                "/scenarios: expected a list of scenarios, found {}",
                describe(scenarios)
            ),
        )
    })?;
    if items.is_empty() {
        return Err(ParseError::shape(
            scenarios.span,
            "/scenarios: expected at least one scenario, found an empty list".into(),
        ));
    }
    let cases = items
        .iter()
        .enumerate()
        .map(|(i, node)| scenario(node, format!("/scenarios/{i}"), file))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Suite {
        plugin: None,
        skill_name: None,
        cases,
        triggers: super::triggers::triggers_from_tree(&top, file)?,
        notes: Vec::new(),
    })
}

fn scenario(node: &Node, pointer: String, file: &str) -> Result<Case, ParseError> {
    let f = Fields::new(node, pointer.clone(), Texts::AnyScalar)?;
    let name = f.required_text("name")?;
    let expect_activation = f.optional_bool("expect_activation")?.unwrap_or(true);
    Ok(Case {
        id: name.clone(),
        name,
        prompt: f.required_text("prompt")?,
        setup: setup(&f)?,
        assertions: assertions(&f)?,
        judged: Judged {
            expected_output: None,
            criteria: rubric(&f)?,
        },
        activation: if expect_activation {
            Activation::Expected {
                skill: None,
                acceptable: Vec::new(),
            }
        } else {
            Activation::MustNotTrigger
        },
        timeout_secs: Some(
            f.optional_positive_u32("timeout")?
                .unwrap_or(NonZeroU32::new(DEFAULT_TIMEOUT_SECS).expect("non-zero")),
        ),
        constraints: Constraints {
            expect_tools: f.text_list("expect_tools")?,
            reject_tools: f.text_list("reject_tools")?,
            max_turns: f.optional_positive_u32("max_turns")?,
            max_tokens: f.optional_positive("max_tokens")?,
        },
        expected_script: None,
        extra: BTreeMap::new(),
        origin: Origin {
            file: file.to_string(),
            format: Format::EvalYaml,
            span: node.span,
            pointer,
        },
    })
}

/// Rubric items; blank items are dropped (they give a judge nothing to score, and SW410
/// tells the author), other non-text items are an error.
fn rubric(f: &Fields<'_>) -> Result<Vec<Criterion>, ParseError> {
    let Some(node) = f.present("rubric") else {
        return Ok(Vec::new());
    };
    let items = node.as_sequence().ok_or_else(|| {
        ParseError::shape(
            node.span,
            format!(
                "{}: expected a list of criteria, found {}",
                f.path("rubric"),
                describe(node)
            ),
        )
    })?;
    let mut criteria = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.is_null() {
            continue;
        }
        let text = scalar_text(item, Texts::AnyScalar).ok_or_else(|| {
            ParseError::shape(
                item.span,
                format!(
                    "{}/{i}: expected a string, found {}",
                    f.path("rubric"),
                    describe(item)
                ),
            )
        })?;
        if !text.trim().is_empty() {
            criteria.push(Criterion {
                kind: CriterionKind::Rubric,
                text: text.to_string(),
                name: None,
            });
        }
    }
    Ok(criteria)
}

fn setup(f: &Fields<'_>) -> Result<Setup, ParseError> {
    let Some(node) = f.present("setup") else {
        return Ok(Setup::default());
    };
    let s = Fields::new(node, f.path("setup"), Texts::AnyScalar)?;
    let files = match s.present("files") {
        None => Vec::new(),
        Some(list) => {
            let items = list.as_sequence().ok_or_else(|| {
                ParseError::shape(
                    list.span,
                    format!(
                        "{}: expected a list of files, found {}",
                        s.path("files"),
                        describe(list)
                    ),
                )
            })?;
            items
                .iter()
                .enumerate()
                .map(|(i, item)| setup_file(item, format!("{}/{i}", s.path("files"))))
                .collect::<Result<_, _>>()?
        }
    };
    Ok(Setup {
        copy_test_files: s.optional_bool("copy_test_files")?.unwrap_or(false),
        files,
        commands: s.text_list("commands")?,
    })
}

fn setup_file(node: &Node, pointer: String) -> Result<SetupFile, ParseError> {
    let f = Fields::new(node, pointer.clone(), Texts::AnyScalar)?;
    let path = f.required_text("path")?;
    // skill-validator writes `content` when both are given; a file with neither is skipped
    // silently there, which is never what the author meant.
    let content = match (f.optional_raw_text("content")?, f.optional_text("source")?) {
        (Some(text), _) => FileContent::Inline { text },
        (None, Some(path)) => FileContent::Source { path },
        (None, None) => {
            return Err(ParseError::shape(
                node.span,
                format!(
                    "{}: expected `content` (the text) or `source` (a file in the skill folder), \
                     found neither",
                    display_pointer(&pointer)
                ),
            ));
        }
    };
    Ok(SetupFile { path, content })
}

fn assertions(f: &Fields<'_>) -> Result<Vec<Assertion>, ParseError> {
    let Some(node) = f.present("assertions") else {
        return Ok(Vec::new());
    };
    let items = node.as_sequence().ok_or_else(|| {
        ParseError::shape(
            node.span,
            format!(
                "{}: expected a list of assertions, found {}",
                f.path("assertions"),
                describe(node)
            ),
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| assertion(item, format!("{}/{i}", f.path("assertions"))))
        .collect()
}

fn assertion(node: &Node, pointer: String) -> Result<Assertion, ParseError> {
    let f = Fields::new(node, pointer, Texts::AnyScalar)?;
    let kind = f.required_text("type")?;
    let value = || f.required_text("value");
    let path = || f.required_text("path");
    let pattern = || {
        let text = f.required_text("pattern")?;
        Pattern::new(text).map_err(|e| {
            let at = f.get("pattern").map_or(node.span, |n| n.span);
            ParseError::shape(at, format!("{}: {e}", f.path("pattern")))
        })
    };
    Ok(match kind.as_str() {
        "output_contains" => Assertion::OutputContains { value: value()? },
        "output_not_contains" => Assertion::OutputNotContains { value: value()? },
        "output_matches" => Assertion::OutputMatches {
            pattern: pattern()?,
        },
        "output_not_matches" => Assertion::OutputNotMatches {
            pattern: pattern()?,
        },
        "file_exists" => Assertion::FileExists { path: path()? },
        "file_not_exists" => Assertion::FileNotExists { path: path()? },
        "file_contains" => Assertion::FileContains {
            path: path()?,
            value: value()?,
        },
        "file_not_contains" => Assertion::FileNotContains {
            path: path()?,
            value: value()?,
        },
        "exit_success" => Assertion::ExitSuccess,
        other => {
            let at = f.get("type").map_or(node.span, |n| n.span);
            return Err(ParseError::shape(
                at,
                format!(
                    "{}: expected an assertion type ({}), found `{other}`",
                    f.path("type"),
                    ASSERTION_TYPES.join(", ")
                ),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml;

    fn parse(text: &str) -> Result<Suite, ParseError> {
        suite_from_tree(&yaml::parse(text, 0).unwrap(), "tests/eval.yaml")
    }

    #[test]
    fn reads_every_field() {
        let text = r#"
scenarios:
  - name: "Build it"
    prompt: "Build the project"
    setup:
      copy_test_files: true
      files:
        - path: a.txt
          content: ""
        - path: b.csv
          source: fixtures/b.csv
      commands: ["dotnet build"]
    assertions:
      - type: output_contains
        value: 42
      - type: output_not_contains
        value: error
      - type: output_matches
        pattern: "(?i)done|ok"
      - type: output_not_matches
        pattern: "fail(ed)?"
      - type: file_exists
        path: "*.csv"
      - type: file_not_exists
        path: "*.tmp"
      - type: file_contains
        path: a.txt
        value: x
      - type: file_not_contains
        path: a.txt
        value: y
      - type: exit_success
    rubric: ["Clear"]
    timeout: 30
    expect_tools: [bash]
    reject_tools: [web_fetch]
    max_turns: 5
    max_tokens: 10000
    expect_activation: false
"#;
        let suite = parse(text).unwrap();
        let case = &suite.cases[0];
        assert_eq!(case.id, "Build it");
        assert!(case.setup.copy_test_files);
        assert_eq!(
            case.setup.files[0].content,
            FileContent::Inline { text: "".into() }
        );
        assert_eq!(
            case.setup.files[1].content,
            FileContent::Source {
                path: "fixtures/b.csv".into()
            }
        );
        assert_eq!(case.setup.commands, ["dotnet build"]);
        assert_eq!(case.assertions.len(), 9);
        assert_eq!(
            case.assertions[0],
            Assertion::OutputContains { value: "42".into() }
        );
        assert_eq!(case.assertions[8], Assertion::ExitSuccess);
        assert_eq!(case.judged.criteria[0].kind, CriterionKind::Rubric);
        assert_eq!(case.timeout_secs.unwrap().get(), 30);
        assert_eq!(case.constraints.expect_tools, ["bash"]);
        assert_eq!(case.constraints.reject_tools, ["web_fetch"]);
        assert_eq!(case.constraints.max_turns.unwrap().get(), 5);
        assert_eq!(case.constraints.max_tokens.unwrap().get(), 10000);
        assert_eq!(case.activation, Activation::MustNotTrigger);
        assert_eq!(case.origin.pointer, "/scenarios/0");
        assert!(text[case.origin.span.start..].starts_with("name:"));
    }

    #[test]
    fn defaults_follow_skill_validator() {
        let suite = parse("scenarios:\n  - name: a\n    prompt: b\n").unwrap();
        let case = &suite.cases[0];
        assert_eq!(case.timeout_secs.unwrap().get(), DEFAULT_TIMEOUT_SECS);
        assert!(matches!(
            case.activation,
            Activation::Expected { skill: None, .. }
        ));
        assert!(case.assertions.is_empty());
    }

    #[test]
    fn shape_errors_name_the_field_and_point_at_it() {
        let cases = [
            ("scenarios: []\n", "at least one", "[]"),
            ("scenarios:\n  - prompt: p\n", "`name`", "prompt: p"),
            (
                "scenarios:\n  - name: a\n    prompt: p\n    timeout: 0\n",
                "greater than 0",
                "0",
            ),
            (
                "scenarios:\n  - name: a\n    prompt: p\n    assertions:\n      - type: output_has\n",
                "output_has",
                "output_has",
            ),
            (
                "scenarios:\n  - name: a\n    prompt: p\n    assertions:\n      - type: output_matches\n        pattern: \"(x\"\n",
                "invalid regular expression",
                "\"(x\"",
            ),
            (
                "scenarios:\n  - name: a\n    prompt: p\n    setup:\n      files:\n        - path: x\n",
                "neither",
                "path: x",
            ),
        ];
        for (text, needle, at) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.message.contains(needle), "{text}: {}", err.message);
            assert!(
                text[err.span.start..].starts_with(at),
                "{text}: error at {:?}",
                &text[err.span.start..]
            );
        }
    }
}
