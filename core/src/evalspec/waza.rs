//! microsoft/waza's `eval.yaml` and its task files -> [`Suite`].
//!
//! The format is waza's (microsoft/waza `schemas/eval.schema.json` and `task.schema.json`):
//! an `eval.yaml` with `skill`, `config` (`trials_per_task`, `timeout_seconds`, `model`,
//! `executor`, ...), global `graders`, `metrics` (name, weight, threshold) and `tasks` (globs
//! of task files, relative to the eval file); each task file has `id`, `name`, `inputs`
//! (`prompt`, `files`), `expected` (`output_contains`, `behavior`, `should_trigger`, ...) and
//! its own `graders`. A task's files come from its `context_dir`, else `fixtures/` beside the
//! eval file.
//!
//! `text`, `keyword` and `file` existence graders, `expected.output_contains`, `behavior`'s
//! tool and token limits become assertions and constraints; `prompt` graders judged criteria.
//! `metrics` (weights and thresholds), grader weights, `code`/`program`/`json_schema`/`diff`
//! graders, hooks and the run settings are notes where they are written.

use std::num::NonZeroU32;

use crate::yaml::Node;

use super::ParseError;
use super::fields::{Fields, Texts, describe, scalar_text};
use super::mapping::{
    Notes, beside, case_sensitive, contains_exactly, join, lacks_exactly, run_setting_notes,
};
use super::model::{
    Activation, Assertion, Case, Constraints, Criterion, CriterionKind, FileContent, Format,
    Judged, Origin, Setup, SetupFile, Suite,
};

/// What an eval.yaml gives every one of its tasks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// The eval file, relative to the skill folder.
    pub file: String,
    /// `skill`.
    pub skill: Option<String>,
    /// `config.timeout_seconds`.
    pub timeout: Option<NonZeroU32>,
    /// The global graders' checks.
    pub assertions: Vec<Assertion>,
    /// The global graders' judged criteria.
    pub criteria: Vec<Criterion>,
    /// The global graders' limits.
    pub constraints: Constraints,
    /// `tasks`: globs of task files, relative to the eval file's folder.
    pub tasks: Vec<String>,
}

/// Read a waza eval.yaml: its notes and the context its tasks are read in (the cases are in
/// the task files).
pub(crate) fn eval_from_tree(root: &Node, file: &str) -> Result<(Suite, Context), ParseError> {
    let top = Fields::new(root, String::new(), Texts::AnyScalar)?;
    let mut notes = Notes::new(file);
    let mut ctx = Context {
        file: file.to_string(),
        skill: top.optional_text("skill")?,
        ..Context::default()
    };
    if let Some(node) = top.present("config") {
        let c = Fields::new(node, "/config".into(), Texts::AnyScalar)?;
        ctx.timeout = c.optional_positive_u32("timeout_seconds")?;
        run_setting_notes(
            &c,
            &[
                ("trials_per_task", "--runs N"),
                ("model", "--model"),
                ("judge_model", "--judge-model"),
                ("executor", "--harness"),
                ("parallel", "-j N"),
                ("max_workers", "-j N"),
            ],
            &mut notes,
        );
        for key in [
            "skill_directories",
            "required_skills",
            "mcp_servers",
            "max_attempts",
        ] {
            if c.present(key).is_some() {
                notes.warn_at(&c, key, format!("`config.{key}`"));
            }
        }
    }
    if top.present("metrics").is_some() {
        notes.warn_at(
            &top,
            "metrics",
            "`metrics` (weights and thresholds of waza's overall score): a case passes under \
             skillwatch when every deterministic check passes, and the lift is measured per case",
        );
    }
    for key in ["hooks", "inputs", "tasks_from", "range", "baseline"] {
        if top.present(key).is_some() {
            notes.warn_at(&top, key, format!("`{key}`"));
        }
    }
    let mut out = Graded::default();
    graders(&top, "graders", &mut out, &mut notes)?;
    ctx.assertions = out.assertions;
    ctx.criteria = out.criteria;
    ctx.constraints = out.constraints;
    ctx.tasks = top.text_list("tasks")?;
    let suite = Suite {
        plugin: None,
        skill_name: ctx.skill.clone(),
        cases: Vec::new(),
        triggers: Vec::new(),
        notes: notes.list,
    };
    Ok((suite, ctx))
}

/// Read one task file in the context of its eval.yaml. `file` is the task file's path
/// relative to the skill folder.
pub(crate) fn task_from_tree(root: &Node, file: &str, ctx: &Context) -> Result<Suite, ParseError> {
    let f = Fields::new(root, String::new(), Texts::AnyScalar)?;
    let mut notes = Notes::new(file);
    let id = f.required_text("id")?;
    let inputs = f.present("inputs").ok_or_else(|| {
        ParseError::shape(
            root.span,
            "(top level): expected `inputs` (with the `prompt`), found no such field".into(),
        )
    })?;
    let i = Fields::new(inputs, "/inputs".into(), Texts::AnyScalar)?;
    let prompt = i.required_text("prompt")?;
    for key in ["context", "environment"] {
        if i.present(key).is_some() {
            notes.warn_at(
                &i,
                key,
                format!("`inputs.{key}` (passed to the agent by waza's executor)"),
            );
        }
    }
    let fixtures = match f.optional_text("context_dir")? {
        Some(dir) => beside(&ctx.file, &dir),
        None => beside(&ctx.file, "fixtures"),
    };
    let files = input_files(&i, &fixtures)?;
    let mut out = Graded {
        assertions: ctx.assertions.clone(),
        criteria: ctx.criteria.clone(),
        constraints: ctx.constraints.clone(),
    };
    let mut activation = Activation::Expected {
        skill: None,
        acceptable: Vec::new(),
    };
    if let Some(node) = f.present("expected") {
        let e = Fields::new(node, "/expected".into(), Texts::AnyScalar)?;
        expected(&e, &mut out, &mut activation, &mut notes)?;
    }
    graders(&f, "graders", &mut out, &mut notes)?;
    if f.optional_bool("enabled")? == Some(false) {
        notes.info_at(
            &f,
            "enabled",
            "`enabled: false`: skillwatch runs the task all the same (name it out with `--case`)",
        );
    }
    let case = Case {
        name: f.optional_text("name")?.unwrap_or_else(|| id.clone()),
        id,
        prompt,
        setup: Setup {
            copy_test_files: false,
            files,
            commands: Vec::new(),
        },
        assertions: out.assertions,
        judged: Judged {
            expected_output: None,
            criteria: out.criteria,
        },
        activation,
        timeout_secs: f.optional_positive_u32("timeout_seconds")?.or(ctx.timeout),
        constraints: out.constraints,
        expected_script: None,
        extra: f
            .present("tags")
            .map(|t| [("tags".to_string(), t.to_json())].into_iter().collect())
            .unwrap_or_default(),
        origin: Origin {
            file: file.to_string(),
            format: Format::Waza,
            span: root.span,
            pointer: String::new(),
        },
    };
    Ok(Suite {
        plugin: None,
        skill_name: ctx.skill.clone(),
        cases: vec![case],
        triggers: Vec::new(),
        notes: notes.list,
    })
}

fn input_files(i: &Fields<'_>, fixtures: &str) -> Result<Vec<SetupFile>, ParseError> {
    let Some(node) = i.present("files") else {
        return Ok(Vec::new());
    };
    let items = node.as_sequence().ok_or_else(|| {
        ParseError::shape(
            node.span,
            format!(
                "{}: expected a list of files, found {}",
                i.path("files"),
                describe(node)
            ),
        )
    })?;
    items
        .iter()
        .enumerate()
        .map(|(n, item)| {
            let r = Fields::new(item, format!("{}/{n}", i.path("files")), Texts::AnyScalar)?;
            let path = r.required_text("path")?;
            let content = match r.optional_raw_text("content")? {
                Some(text) => FileContent::Inline { text },
                None => FileContent::Source {
                    path: join(fixtures, &path),
                },
            };
            Ok(SetupFile { path, content })
        })
        .collect()
}

/// What a task's or the eval's graders add up to.
#[derive(Debug, Default)]
struct Graded {
    assertions: Vec<Assertion>,
    criteria: Vec<Criterion>,
    constraints: Constraints,
}

fn expected(
    e: &Fields<'_>,
    out: &mut Graded,
    activation: &mut Activation,
    notes: &mut Notes<'_>,
) -> Result<(), ParseError> {
    for value in e.text_list("output_contains")? {
        out.assertions.push(Assertion::OutputContains { value });
    }
    for value in e.text_list("output_not_contains")? {
        out.assertions.push(Assertion::OutputNotContains { value });
    }
    if e.optional_bool("should_trigger")? == Some(false) {
        *activation = Activation::MustNotTrigger;
    }
    if let Some(node) = e.present("behavior") {
        let b = Fields::new(node, e.path("behavior"), Texts::AnyScalar)?;
        behavior(&b, out, notes)?;
    }
    if let Some(node) = e.present("outcomes") {
        let completed = node.as_sequence().is_some_and(|items| {
            items.len() == 1
                && items[0].get("type").and_then(|t| t.value.as_str()) == Some("task_completed")
        });
        if completed {
            out.assertions.push(Assertion::ExitSuccess);
        } else {
            notes.warn_at(
                e,
                "outcomes",
                "`expected.outcomes` other than one `task_completed`",
            );
        }
    }
    if e.present("tool_calls").is_some() {
        notes.warn_at(e, "tool_calls", "`expected.tool_calls`");
    }
    Ok(())
}

/// `behavior` rules (in `expected` or a `behavior` grader's config).
fn behavior(b: &Fields<'_>, out: &mut Graded, notes: &mut Notes<'_>) -> Result<(), ParseError> {
    out.constraints
        .expect_tools
        .extend(b.text_list("required_tools")?);
    out.constraints
        .reject_tools
        .extend(b.text_list("forbidden_tools")?);
    if let Some(t) = b.optional_positive("max_tokens")? {
        out.constraints.max_tokens = Some(t);
    }
    if let Some(t) = b.optional_positive_u32("max_iterations")? {
        out.constraints.max_turns = Some(t);
    }
    for key in ["max_tool_calls", "max_response_time_ms", "max_duration_ms"] {
        if b.present(key).is_some() {
            notes.warn_at(
                b,
                key,
                format!("`{key}`: skillwatch limits turns and tokens, not this"),
            );
        }
    }
    Ok(())
}

fn graders(
    f: &Fields<'_>,
    key: &str,
    out: &mut Graded,
    notes: &mut Notes<'_>,
) -> Result<(), ParseError> {
    let Some(node) = f.present(key) else {
        return Ok(());
    };
    let items = node.as_sequence().ok_or_else(|| {
        ParseError::shape(
            node.span,
            format!(
                "{}: expected a list of graders, found {}",
                f.path(key),
                describe(node)
            ),
        )
    })?;
    for (i, item) in items.iter().enumerate() {
        let g = Fields::new(item, format!("{}/{i}", f.path(key)), Texts::AnyScalar)?;
        grader(&g, out, notes)?;
    }
    Ok(())
}

fn grader(g: &Fields<'_>, out: &mut Graded, notes: &mut Notes<'_>) -> Result<(), ParseError> {
    let kind = g.required_text("type")?;
    let type_span = g.get("type").map_or(g.node.span, |n| n.span);
    if let Some(w) = g.present("weight")
        && w.as_scalar()
            .is_some_and(|s| s.text.trim() != "1" && s.text.trim() != "1.0")
    {
        notes.warn_at(
            g,
            "weight",
            "a grader `weight`: every check counts alike under skillwatch",
        );
    }
    let empty = Node {
        span: g.node.span,
        value: crate::yaml::Value::Mapping(Vec::new()),
    };
    let c = Fields::new(
        g.present("config").unwrap_or(&empty),
        g.path("config"),
        Texts::AnyScalar,
    )?;
    let list = |key: &str| -> Result<Vec<(String, &Node)>, ParseError> {
        let texts = c.text_list(key)?;
        let nodes = c.get(key).and_then(|n| n.as_sequence()).unwrap_or(&[]);
        Ok(texts.into_iter().zip(nodes).collect())
    };
    match kind.as_str() {
        "text" => {
            for (v, _) in list("contains")? {
                out.assertions.push(Assertion::OutputContains { value: v });
            }
            for (v, _) in list("not_contains")? {
                out.assertions.push(Assertion::OutputNotContains { value: v });
            }
            for (v, _) in list("contains_cs")? {
                out.assertions.push(contains_exactly(&v));
            }
            for (v, _) in list("not_contains_cs")? {
                out.assertions.push(lacks_exactly(&v));
            }
            for (i, (p, node)) in list("regex_match")?.into_iter().enumerate() {
                let pattern = case_sensitive(&p, node, &format!("{}/{i}", c.path("regex_match")))?;
                out.assertions.push(Assertion::OutputMatches { pattern });
            }
            for (i, (p, node)) in list("regex_not_match")?.into_iter().enumerate() {
                let pattern = case_sensitive(&p, node, &format!("{}/{i}", c.path("regex_not_match")))?;
                out.assertions.push(Assertion::OutputNotMatches { pattern });
            }
        }
        "keyword" => {
            for (v, _) in list("must_contain")? {
                out.assertions.push(Assertion::OutputContains { value: v });
            }
            for (v, _) in list("must_not_contain")? {
                out.assertions.push(Assertion::OutputNotContains { value: v });
            }
        }
        "file" => {
            for (p, _) in list("must_exist")? {
                out.assertions.push(Assertion::FileExists { path: p });
            }
            for (p, _) in list("must_not_exist")? {
                out.assertions.push(Assertion::FileNotExists { path: p });
            }
            if c.present("content_patterns").is_some() {
                notes.warn_at(&c, "content_patterns", "`content_patterns` (a regular expression over a file's content)");
            }
        }
        "behavior" => behavior(&c, out, notes)?,
        "tool_constraint" => {
            for (key, target) in [("expect_tools", &mut out.constraints.expect_tools), ("reject_tools", &mut out.constraints.reject_tools)] {
                for item in c.get(key).and_then(|n| n.as_sequence()).unwrap_or(&[]) {
                    let plain = item.as_mapping().is_some_and(|m| m.len() == 1);
                    match item.get("tool").and_then(|t| scalar_text(&t.value, Texts::AnyScalar)) {
                        Some(tool) if plain => target.push(tool.to_string()),
                        _ => notes.warn(item.span, "a tool constraint with a command, skill or path pattern"),
                    }
                }
            }
        }
        "prompt" => {
            let text = c.optional_text("prompt")?.or(g.optional_text("rubric")?);
            if let Some(text) = text {
                out.criteria.push(Criterion {
                    kind: CriterionKind::Rubric,
                    text,
                    name: g.optional_text("name")?,
                });
            }
            if c.optional_text("mode")?.as_deref() == Some("pairwise") {
                notes.warn_at(&c, "mode", "`mode: pairwise` (a judge comparing the two arms' answers): skillwatch judges each trial and takes the lift from the pairs");
            }
        }
        "skill_invocation" => notes.warn(type_span, "the `skill_invocation` grader: skillwatch records whether the skill was used in every trial and reports it beside the outcome"),
        other => notes.warn(type_span, format!("the `{other}` grader")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalspec::model::NoteLevel;
    use crate::yaml;

    const EVAL: &str = r#"name: code-explainer-eval
skill: code-explainer
version: "1.0"
config:
  trials_per_task: 3
  timeout_seconds: 300
  executor: mock
  model: claude-sonnet-4-20250514
metrics:
  - name: task_completion
    weight: 0.4
    threshold: 0.8
graders:
  - type: code
    name: has_explanation
    config:
      assertions:
        - "len(output) > 10"
  - type: text
    name: no_errors
    config:
      regex_not_match:
        - "(?i)fatal error|crashed"
tasks:
  - "tasks/*.yaml"
"#;

    const TASK: &str = r#"id: explain-js-async-001
name: Explain JavaScript Async/Await
inputs:
  prompt: "What does this code do?"
  files:
    - path: fetch_user.js
expected:
  output_contains:
    - "async"
  should_trigger: true
  behavior:
    max_tool_calls: 5
    forbidden_tools: [web_fetch]
graders:
  - name: explains
    type: prompt
    config:
      prompt: "Does the answer explain await?"
"#;

    #[test]
    fn eval_and_task() {
        let (suite, ctx) =
            eval_from_tree(&yaml::parse(EVAL, 0).unwrap(), "evals/eval.yaml").unwrap();
        assert_eq!(suite.skill_name.as_deref(), Some("code-explainer"));
        assert_eq!(ctx.tasks, ["tasks/*.yaml"]);
        assert_eq!(ctx.timeout.unwrap().get(), 300);
        let said: Vec<_> = suite
            .notes
            .iter()
            .map(|n| (n.level, &EVAL[n.span.start..n.span.end]))
            .collect();
        for want in [
            (NoteLevel::Warning, "metrics"),
            (NoteLevel::Info, "trials_per_task"),
            (NoteLevel::Warning, "code"),
        ] {
            assert!(said.contains(&want), "{want:?} in {said:?}");
        }
        let task =
            task_from_tree(&yaml::parse(TASK, 0).unwrap(), "evals/tasks/a.yaml", &ctx).unwrap();
        let case = &task.cases[0];
        assert_eq!(case.id, "explain-js-async-001");
        assert_eq!(case.name, "Explain JavaScript Async/Await");
        assert_eq!(case.timeout_secs.unwrap().get(), 300);
        assert!(
            matches!(case.assertions[0], Assertion::OutputNotMatches { .. }),
            "global grader first"
        );
        assert_eq!(
            case.assertions[1],
            Assertion::OutputContains {
                value: "async".into()
            }
        );
        assert_eq!(
            case.setup.files[0].content,
            FileContent::Source {
                path: "evals/fixtures/fetch_user.js".into()
            }
        );
        assert_eq!(case.constraints.reject_tools, ["web_fetch"]);
        assert_eq!(
            case.judged.criteria[0].text,
            "Does the answer explain await?"
        );
        assert!(
            task.notes
                .iter()
                .any(|n| n.message.contains("max_tool_calls"))
        );
    }

    #[test]
    fn task_errors_point_at_the_field() {
        let ctx = Context::default();
        let err = task_from_tree(&yaml::parse("id: a\n", 0).unwrap(), "t.yaml", &ctx).unwrap_err();
        assert!(err.message.contains("`inputs`"), "{}", err.message);
        let text = "id: a\ninputs:\n  prompt: p\ngraders:\n  - type: text\n    name: n\n    config:\n      regex_match: [\"(x\"]\n";
        let err = task_from_tree(&yaml::parse(text, 0).unwrap(), "t.yaml", &ctx).unwrap_err();
        assert!(
            err.message.contains("invalid regular expression"),
            "{}",
            err.message
        );
        assert!(text[err.span.start..].starts_with("\"(x\""));
    }
}
