//! alibaba/skill-up's `evals/eval.yaml` and its case files -> [`Suite`].
//!
//! The format is skill-up's (`docs/guide/writing-evals.md`, schema `v1alpha1`): an
//! `eval.yaml` with `environment`, `engine`, `skills`, `mcp`, `cases` (`files`, relative to
//! the skill folder, and `defaults`: `timeout_seconds`, `max_turns`, `expect`), `benchmark`,
//! `judge`; each case file (its id defaults to its file name) has `input.prompt` (or
//! `turns`), `context` (`repo_fixture`, inline `files`), `constraints`, `expect` and `judge`
//! (or `judges`).
//!
//! `expect` and the `rule_based` judge become assertions (skill-up's substring checks are
//! case-sensitive, and its patterns Go regexps), `agent_judge` criteria judged criteria, a
//! `repo_fixture` the files of the workspace; script judges, git set-up, MCP servers, the
//! engine and the runtime environment are notes.

use std::num::NonZeroU32;

use crate::yaml::Node;

use super::ParseError;
use super::fields::{Fields, Texts, describe};
use super::mapping::{Notes, case_sensitive, contains_exactly, join, lacks_exactly};
use super::model::{
    Activation, Assertion, Case, Constraints, Criterion, CriterionKind, FileContent, Format,
    Judged, Origin, Setup, SetupFile, Suite,
};

/// What an eval.yaml gives its cases.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// `cases.files`, relative to the skill folder.
    pub cases: Vec<String>,
    /// `cases.defaults.timeout_seconds`.
    pub timeout: Option<NonZeroU32>,
    /// `cases.defaults.max_turns`.
    pub max_turns: Option<NonZeroU32>,
    /// `cases.defaults.expect`, mapped.
    pub expect: Vec<Assertion>,
    /// The eval-level `judge`'s mapping, for cases without their own.
    pub judge: Judgement,
}

/// A judge's mapping.
#[derive(Debug, Clone, Default)]
pub(crate) struct Judgement {
    assertions: Vec<Assertion>,
    criteria: Vec<Criterion>,
}

/// Read a skill-up eval.yaml: its notes and its cases' context. `file` is relative to the
/// skill folder (skill-up's case paths are too).
pub(crate) fn eval_from_tree(root: &Node, file: &str) -> Result<(Suite, Context), ParseError> {
    let top = Fields::new(root, String::new(), Texts::AnyScalar)?;
    let mut notes = Notes::new(file);
    let mut ctx = Context::default();
    if let Some(node) = top.present("cases") {
        let c = Fields::new(node, "/cases".into(), Texts::AnyScalar)?;
        ctx.cases = c.text_list("files")?;
        for key in ["parallelism", "retry_policy"] {
            if c.present(key).is_some() {
                notes.info_at(&c, key, format!("`cases.{key}`: skillwatch runs with `-j N` and records an errored trial as errored"));
            }
        }
        if let Some(d) = c.present("defaults") {
            let d = Fields::new(d, "/cases/defaults".into(), Texts::AnyScalar)?;
            ctx.timeout = d.optional_positive_u32("timeout_seconds")?;
            ctx.max_turns = d.optional_positive_u32("max_turns")?;
            if let Some(e) = d.present("expect") {
                let e = Fields::new(e, "/cases/defaults/expect".into(), Texts::AnyScalar)?;
                ctx.expect = expect(&e, &mut notes)?;
            }
        }
    }
    if let Some(node) = top.present("judge") {
        ctx.judge = judge(node, "/judge", &mut notes)?;
    }
    if let Some(node) = top.present("engine") {
        let e = Fields::new(node, "/engine".into(), Texts::AnyScalar)?;
        notes.info_at(
            &top,
            "engine",
            format!(
                "`engine`{}: skillwatch runs `skillwatch run --harness H --model M`",
                e.optional_text("name")?
                    .map(|n| format!(" (`{n}`)"))
                    .unwrap_or_default()
            ),
        );
    }
    if let Some(node) = top.present("benchmark") {
        let on = node
            .get("enabled")
            .and_then(|e| e.value.as_scalar())
            .is_some_and(|s| s.text == "true");
        if !on {
            notes.info_at(&top, "benchmark", "`benchmark.enabled: false` (skill-up then runs the with-skill arm alone): skillwatch always runs both arms");
        }
    }
    if let Some(node) = top.present("environment") {
        let kind = node
            .get("type")
            .and_then(|t| t.value.as_str())
            .unwrap_or("none");
        if kind != "none" {
            notes.warn_at(&top, "environment", format!("the `{kind}` runtime environment: skillwatch stages each trial in a fresh local folder (`run --on harbor` for containers)"));
        }
    }
    if top
        .present("mcp")
        .and_then(|m| m.get("servers"))
        .and_then(|s| s.value.as_sequence())
        .is_some_and(|s| !s.is_empty())
    {
        notes.warn_at(&top, "mcp", "`mcp.servers`");
    }
    for key in ["user_simulator", "skills"] {
        if top.present(key).is_some() {
            notes.warn_at(&top, key, format!("`{key}`"));
        }
    }
    let suite = Suite {
        plugin: None,
        skill_name: None,
        cases: Vec::new(),
        triggers: Vec::new(),
        notes: notes.list,
    };
    Ok((suite, ctx))
}

/// Read one case file in its eval.yaml's context. `file` is the case file's path relative to
/// the skill folder.
pub(crate) fn case_from_tree(root: &Node, file: &str, ctx: &Context) -> Result<Suite, ParseError> {
    let f = Fields::new(root, String::new(), Texts::AnyScalar)?;
    let mut notes = Notes::new(file);
    let stem = file
        .rsplit('/')
        .next()
        .and_then(|n| n.rsplit_once('.').map(|(s, _)| s))
        .unwrap_or(file)
        .to_string();
    let id = f.optional_text("id")?.unwrap_or(stem);
    let input = f.present("input").ok_or_else(|| {
        ParseError::shape(
            root.span,
            "(top level): expected `input` (with the `prompt`), found no such field".into(),
        )
    })?;
    let i = Fields::new(input, "/input".into(), Texts::AnyScalar)?;
    let prompt = match (i.present("prompt"), i.present("turns")) {
        (None, Some(turns)) => {
            notes.warn_at(
                &i,
                "turns",
                "a multi-turn conversation (`input.turns`): only its first turn is sent",
            );
            let first = turns.as_sequence().and_then(|t| t.first()).ok_or_else(|| {
                ParseError::shape(
                    turns.span,
                    format!(
                        "/input/turns: expected a list of turns, found {}",
                        describe(turns)
                    ),
                )
            })?;
            Fields::new(first, "/input/turns/0".into(), Texts::AnyScalar)?
                .required_text("content")?
        }
        _ => i.required_text("prompt")?,
    };
    let files = match f.present("context") {
        Some(node) => context(node, &mut notes)?,
        None => Vec::new(),
    };
    let mut assertions = ctx.expect.clone();
    let mut max_turns = ctx.max_turns;
    let mut timeout = ctx.timeout;
    if let Some(node) = f.present("constraints") {
        let c = Fields::new(node, "/constraints".into(), Texts::AnyScalar)?;
        timeout = c.optional_positive_u32("timeout_seconds")?.or(timeout);
        max_turns = c.optional_positive_u32("max_turns")?.or(max_turns);
    }
    if let Some(node) = f.present("expect") {
        let e = Fields::new(node, "/expect".into(), Texts::AnyScalar)?;
        assertions.extend(expect(&e, &mut notes)?);
    }
    let judged = match (f.present("judge"), f.present("judges")) {
        (Some(node), _) => judge(node, "/judge", &mut notes)?,
        (None, Some(list)) => {
            let items = list.as_sequence().ok_or_else(|| {
                ParseError::shape(
                    list.span,
                    format!(
                        "/judges: expected a list of judges, found {}",
                        describe(list)
                    ),
                )
            })?;
            let mut all = Judgement::default();
            for (n, item) in items.iter().enumerate() {
                let one = judge(item, &format!("/judges/{n}"), &mut notes)?;
                all.assertions.extend(one.assertions);
                all.criteria.extend(one.criteria);
            }
            all
        }
        (None, None) => ctx.judge.clone(),
    };
    assertions.extend(judged.assertions);
    for key in ["mcp", "user_simulator", "collect_artifacts"] {
        if f.present(key).is_some() {
            notes.warn_at(&f, key, format!("`{key}`"));
        }
    }
    let case = Case {
        name: f.optional_text("title")?.unwrap_or_else(|| id.clone()),
        id,
        prompt,
        setup: Setup {
            copy_test_files: false,
            files,
            commands: Vec::new(),
        },
        assertions,
        judged: Judged {
            expected_output: None,
            criteria: judged.criteria,
        },
        activation: Activation::Expected {
            skill: None,
            acceptable: Vec::new(),
        },
        timeout_secs: timeout,
        constraints: Constraints {
            max_turns,
            ..Constraints::default()
        },
        expected_script: None,
        extra: f
            .present("description")
            .map(|d| {
                [("description".to_string(), d.to_json())]
                    .into_iter()
                    .collect()
            })
            .unwrap_or_default(),
        origin: Origin {
            file: file.to_string(),
            format: Format::SkillUp,
            span: root.span,
            pointer: String::new(),
        },
    };
    Ok(Suite {
        plugin: None,
        skill_name: None,
        cases: vec![case],
        triggers: Vec::new(),
        notes: notes.list,
    })
}

/// `context`: a repository fixture (relative to the skill folder) copied into the workspace,
/// then inline files.
fn context(node: &Node, notes: &mut Notes<'_>) -> Result<Vec<SetupFile>, ParseError> {
    let c = Fields::new(node, "/context".into(), Texts::AnyScalar)?;
    let mut files = Vec::new();
    if let Some(dir) = c.optional_text("repo_fixture")? {
        files.push(SetupFile {
            path: ".".into(),
            content: FileContent::Source {
                path: join("", &dir),
            },
        });
    }
    if let Some(node) = c.present("files") {
        let entries = node.as_mapping().ok_or_else(|| {
            ParseError::shape(
                node.span,
                format!(
                    "/context/files: expected a mapping of path to content, found {}",
                    describe(node)
                ),
            )
        })?;
        for entry in entries {
            let path = entry.key.as_key().unwrap_or_default().to_string();
            let text = entry
                .value
                .as_scalar()
                .map(|s| s.text.clone())
                .ok_or_else(|| {
                    ParseError::shape(
                        entry.value.span,
                        format!(
                            "/context/files/{path}: expected the file's text, found {}",
                            describe(&entry.value)
                        ),
                    )
                })?;
            files.push(SetupFile {
                path,
                content: FileContent::Inline { text },
            });
        }
    }
    if c.present("git").is_some() {
        notes.warn_at(
            &c,
            "git",
            "`context.git` (init, checkout, apply_diff, remotes)",
        );
    }
    Ok(files)
}

/// `expect` (or `cases.defaults.expect`).
fn expect(e: &Fields<'_>, notes: &mut Notes<'_>) -> Result<Vec<Assertion>, ParseError> {
    let mut out = Vec::new();
    for v in e.text_list("must_contain")? {
        out.push(contains_exactly(&v));
    }
    for v in e.text_list("must_not_contain")? {
        out.push(lacks_exactly(&v));
    }
    for p in e.text_list("files_exist")? {
        out.push(Assertion::FileExists { path: p });
    }
    for p in e.text_list("files_not_exist")? {
        out.push(Assertion::FileNotExists { path: p });
    }
    if let Some(list) = e.present("file_contains") {
        for (n, item) in list.as_sequence().unwrap_or(&[]).iter().enumerate() {
            let fc = Fields::new(
                item,
                format!("{}/{n}", e.path("file_contains")),
                Texts::AnyScalar,
            )?;
            out.push(Assertion::FileContains {
                path: fc.required_text("path")?,
                value: fc.required_text("content")?,
            });
        }
    }
    exit_code(e, &mut out, notes);
    if e.present("golden_file").is_some() {
        notes.warn_at(
            e,
            "golden_file",
            "`expect.golden_file` (the output compared with a file)",
        );
    }
    Ok(out)
}

/// `exit_code: 0` is the agent finishing with an answer; any other code is a note.
fn exit_code(f: &Fields<'_>, out: &mut Vec<Assertion>, notes: &mut Notes<'_>) {
    if let Some(node) = f.present("exit_code") {
        if node.as_scalar().is_some_and(|s| s.text.trim() == "0") {
            out.push(Assertion::ExitSuccess);
        } else {
            notes.warn_at(f, "exit_code", "an expected non-zero `exit_code`");
        }
    }
}

/// One judge: `rule_based` rules, `agent_judge` criteria; others are notes.
fn judge(node: &Node, pointer: &str, notes: &mut Notes<'_>) -> Result<Judgement, ParseError> {
    let j = Fields::new(node, pointer.to_string(), Texts::AnyScalar)?;
    let kind = j.required_text("type")?;
    let mut out = Judgement::default();
    match kind.as_str() {
        "rule_based" => {
            rules(&j, "success", false, &mut out.assertions, notes)?;
            rules(&j, "failure", true, &mut out.assertions, notes)?;
        }
        "agent_judge" => {
            out.criteria = j
                .text_list("criteria")?
                .into_iter()
                .map(|text| Criterion {
                    kind: CriterionKind::Rubric,
                    text,
                    name: None,
                })
                .collect();
            if j.present("pass_threshold").is_some() {
                notes.warn_at(&j, "pass_threshold", "`pass_threshold` (the share of criteria that must hold): skillwatch's judge scores each criterion");
            }
        }
        other => {
            let span = j.get("type").map_or(node.span, |t| t.span);
            notes.warn(span, format!("the `{other}` judge"));
        }
    }
    Ok(out)
}

/// A rule_based judge's `success` (every rule must hold) or `failure` (no rule may match).
fn rules(
    j: &Fields<'_>,
    key: &str,
    failure: bool,
    out: &mut Vec<Assertion>,
    notes: &mut Notes<'_>,
) -> Result<(), ParseError> {
    let Some(list) = j.present(key) else {
        return Ok(());
    };
    for (n, item) in list.as_sequence().unwrap_or(&[]).iter().enumerate() {
        let r = Fields::new(item, format!("{}/{n}", j.path(key)), Texts::AnyScalar)?;
        for entry in item.as_mapping().unwrap_or(&[]) {
            let name = entry.key.as_key().unwrap_or_default();
            match name {
                "output_contains" | "output_matches" => {
                    let o = Fields::new(&entry.value, r.path(name), Texts::AnyScalar)?;
                    let regex = name == "output_matches";
                    checks(&o, regex, failure, out, notes)?;
                }
                "exit_code" if !failure => exit_code(&r, out, notes),
                other => notes.warn(entry.key.span, format!("the `{other}` rule")),
            }
        }
    }
    Ok(())
}

/// `{all, any, not}` of one rule, as assertions. In `failure`, matching fails the case.
fn checks(
    o: &Fields<'_>,
    regex: bool,
    failure: bool,
    out: &mut Vec<Assertion>,
    notes: &mut Notes<'_>,
) -> Result<(), ParseError> {
    let pattern_of = |text: &str, key: &str, i: usize| -> Result<String, ParseError> {
        if regex {
            let node = o
                .get(key)
                .and_then(|n| n.as_sequence())
                .and_then(|s| s.get(i))
                .unwrap_or(o.node);
            case_sensitive(text, node, &format!("{}/{i}", o.path(key)))?;
            Ok(text.to_string())
        } else {
            Ok(fancy_regex::escape(text).into_owned())
        }
    };
    let one = |text: &str, key: &str, i: usize, present: bool| -> Result<Assertion, ParseError> {
        let p =
            super::Pattern::new(format!("(?-i){}", pattern_of(text, key, i)?)).expect("checked");
        Ok(if present {
            Assertion::OutputMatches { pattern: p }
        } else {
            Assertion::OutputNotMatches { pattern: p }
        })
    };
    for (key, present) in [("all", !failure), ("not", failure)] {
        for (i, v) in o.text_list(key)?.iter().enumerate() {
            out.push(one(v, key, i, present)?);
        }
    }
    let any = o.text_list("any")?;
    if !any.is_empty() {
        if failure {
            for (i, v) in any.iter().enumerate() {
                out.push(one(v, "any", i, false)?);
            }
        } else {
            let alts = any
                .iter()
                .enumerate()
                .map(|(i, v)| pattern_of(v, "any", i).map(|p| format!("(?:{p})")))
                .collect::<Result<Vec<_>, _>>()?;
            let p = super::Pattern::new(format!("(?-i){}", alts.join("|"))).expect("checked");
            out.push(Assertion::OutputMatches { pattern: p });
        }
    }
    if failure && o.present("all").is_some() {
        notes.warn_at(o, "all", "`all` in a `failure` rule (fails only when every text matches): skillwatch fails the case on each one");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml;

    #[test]
    fn eval_and_case() {
        let eval = "schema_version: v1alpha1\nenvironment:\n  type: none\nengine:\n  name: claude_code\ncases:\n  files:\n    - evals/cases/a.yaml\n  defaults:\n    timeout_seconds: 900\n    max_turns: 5\n    expect:\n      exit_code: 0\nbenchmark:\n  enabled: true\n";
        let (suite, ctx) =
            eval_from_tree(&yaml::parse(eval, 0).unwrap(), "evals/eval.yaml").unwrap();
        assert_eq!(ctx.cases, ["evals/cases/a.yaml"]);
        assert_eq!(suite.notes.len(), 1, "{:?}", suite.notes);
        let case = "title: Stats\ninput:\n  prompt: |\n    Count the lines\ncontext:\n  repo_fixture: evals/fixtures/repos/sample\n  files:\n    notes.md: hi\nconstraints:\n  max_turns: 8\nexpect:\n  must_contain:\n    - \"Total Files: 3\"\n  files_exist: [report.md]\njudge:\n  type: rule_based\n  success:\n    - output_matches:\n        all: ['(?m)^- Total Files: 3$']\n        any: [pass, ok]\n        not: ['\\.js']\n  failure:\n    - output_contains:\n        any: [LGTM]\n";
        let s = case_from_tree(
            &yaml::parse(case, 0).unwrap(),
            "evals/cases/count-lines.yaml",
            &ctx,
        )
        .unwrap();
        let c = &s.cases[0];
        assert_eq!(c.id, "count-lines");
        assert_eq!(c.name, "Stats");
        assert_eq!(c.timeout_secs.unwrap().get(), 900);
        assert_eq!(c.constraints.max_turns.unwrap().get(), 8);
        assert_eq!(c.setup.files[0].path, ".");
        assert_eq!(
            c.setup.files[0].content,
            FileContent::Source {
                path: "evals/fixtures/repos/sample".into()
            }
        );
        assert_eq!(
            c.setup.files[1].content,
            FileContent::Inline { text: "hi".into() }
        );
        let kinds: Vec<_> = c
            .assertions
            .iter()
            .map(|a| format!("{a:?}").split(' ').next().unwrap().to_string())
            .collect();
        assert_eq!(
            kinds,
            [
                "ExitSuccess",
                "OutputMatches",
                "FileExists",
                "OutputMatches",
                "OutputNotMatches",
                "OutputMatches",
                "OutputNotMatches"
            ],
            "{:?}",
            c.assertions
        );
        let is = |i: usize, out: &str| match &c.assertions[i] {
            Assertion::OutputMatches { pattern } | Assertion::OutputNotMatches { pattern } => {
                pattern.compile().is_match(out).unwrap()
            }
            _ => panic!(),
        };
        assert!(is(1, "Total Files: 3") && !is(1, "total files: 3"));
        assert!(is(5, "it is OK? no: ok") && !is(5, "PASS"));
        assert!(is(6, "LGTM"));
    }
}
