//! Trigger queries: prompts a user might type, each with whether the agent should pick the
//! skill for it. `skillwatch trigger` sends each one and watches only the agent's choice, so a
//! trigger query needs no setup, assertions or judge: it is a query and its expected decision.
//!
//! They come from three places, read into one list ([`trigger_queries`]):
//! - the cases of the suite itself: a case whose activation is expected is a positive query, a
//!   negative case (`should_trigger: false`, `expect_activation: false`, `expected_skill:
//!   null`) a negative one, and a case that expects another skill a near miss;
//! - eval.yaml's `triggers:` section, `{positive: [...], negative: [...], near_miss: [...]}`;
//! - skill-creator's trigger eval set, a JSON list of `{query, should_trigger}` (skill-creator's
//!   `{"evals": [{prompt, should_trigger}]}` form too), with skillwatch's optional `near_miss`.
//!
//! A near miss is a negative query that shares the skill's vocabulary (a neighbouring task, a
//! sibling skill's job): the queries where a too-broad description shows.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fields::{Fields, Texts, describe};
use super::{
    Activation, FileKind, LoadSuiteError, ParseError, Suite, load_suite, parse_tree, read_eval_text,
};
use crate::text::LineIndex;
use crate::yaml::Node;

/// Where skill-creator's trigger eval set is looked for, relative to the skill folder, when
/// no file is named.
pub const TRIGGER_SET_FILES: &[&str] = &[
    "evals/trigger_evals.json",
    "evals/trigger-evals.json",
    "evals/trigger_eval.json",
    "evals/trigger-eval.json",
    "trigger_evals.json",
    "trigger-eval.json",
];

/// What a query expects of the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerKind {
    /// The agent should pick the skill.
    Positive,
    /// The agent should leave the skill alone.
    Negative,
    /// The agent should leave the skill alone, though the query is close to its job.
    NearMiss,
}

impl TriggerKind {
    /// Whether the skill should be picked.
    pub fn should_trigger(self) -> bool {
        self == TriggerKind::Positive
    }

    /// The word shown for it.
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::Positive => "positive",
            TriggerKind::Negative => "negative",
            TriggerKind::NearMiss => "near miss",
        }
    }
}

/// One query and what it expects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerQuery {
    /// The user message.
    pub query: String,
    /// Whether the skill should be picked, and how close a negative is.
    pub kind: TriggerKind,
    /// Where it was written: the file relative to the skill and a JSON pointer.
    pub origin: String,
}

/// eval.yaml's `triggers:` section.
pub(crate) fn triggers_from_tree(
    top: &Fields<'_>,
    file: &str,
) -> Result<Vec<TriggerQuery>, ParseError> {
    let Some(node) = top.present("triggers") else {
        return Ok(Vec::new());
    };
    let f = Fields::new(node, top.path("triggers"), Texts::AnyScalar)?;
    let mut out = Vec::new();
    for (key, kind) in [
        ("positive", TriggerKind::Positive),
        ("negative", TriggerKind::Negative),
        ("near_miss", TriggerKind::NearMiss),
    ] {
        for (i, query) in f.text_list(key)?.into_iter().enumerate() {
            out.push(TriggerQuery {
                query,
                kind,
                origin: format!("{file}{}/{i}", f.path(key)),
            });
        }
    }
    Ok(out)
}

/// skill-creator's trigger eval set: `[{query, should_trigger, near_miss?}]` or
/// `{"evals": [{prompt, should_trigger}]}`.
pub fn parse_trigger_set(text: &str, file: &str) -> Result<Vec<TriggerQuery>, ParseError> {
    let tree = parse_tree(FileKind::EvalsJson, text)?;
    let (items, base) = match tree.as_sequence() {
        Some(items) => (items, String::new()),
        None => {
            let top = Fields::new(&tree, String::new(), Texts::StringsOnly)?;
            let evals = top.present("evals").ok_or_else(|| {
                ParseError::shape(
                    tree.span,
                    "expected a list of {query, should_trigger} or {\"evals\": [...]}, found \
                     neither"
                        .into(),
                )
            })?;
            let items = evals.as_sequence().ok_or_else(|| {
                ParseError::shape(
                    evals.span,
                    format!("/evals: expected a list, found {}", describe(evals)),
                )
            })?;
            (items, "/evals".to_string())
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, node)| trigger_item(node, format!("{base}/{i}"), file))
        .collect()
}

fn trigger_item(node: &Node, pointer: String, file: &str) -> Result<TriggerQuery, ParseError> {
    let f = Fields::new(node, pointer.clone(), Texts::StringsOnly)?;
    let query = match f.optional_text("query")? {
        Some(q) => q,
        None => f.required_text("prompt").map_err(|mut e| {
            e.message = format!("{pointer}: expected a `query` (or `prompt`) text, found none");
            e
        })?,
    };
    let should = f.optional_bool("should_trigger")?.ok_or_else(|| {
        ParseError::shape(
            node.span,
            format!("{pointer}: expected `should_trigger: true` or `false`, found none"),
        )
    })?;
    let near = f.optional_bool("near_miss")?.unwrap_or(false);
    let kind = match (should, near) {
        (true, false) => TriggerKind::Positive,
        (true, true) => {
            return Err(ParseError::shape(
                node.span,
                format!(
                    "{pointer}: a near miss is a query the skill should not answer; expected \
                     `should_trigger: false` with `near_miss: true`, found `should_trigger: true`"
                ),
            ));
        }
        (false, false) => TriggerKind::Negative,
        (false, true) => TriggerKind::NearMiss,
    };
    Ok(TriggerQuery {
        query,
        kind,
        origin: format!("{file}{pointer}"),
    })
}

/// Every trigger query of a suite for the skill named `own`: its cases by their activation,
/// then its `triggers:` queries; a query written twice counts once (its first kind).
pub fn trigger_queries(suite: &Suite, own: &str) -> Vec<TriggerQuery> {
    let from_cases = suite.cases.iter().filter_map(|case| {
        let kind = match &case.activation {
            Activation::Expected { skill: None, .. } => TriggerKind::Positive,
            Activation::Expected {
                skill: Some(skill), ..
            } if skill.eq_ignore_ascii_case(own) => TriggerKind::Positive,
            Activation::Expected { .. } => TriggerKind::NearMiss,
            Activation::MustNotTrigger => TriggerKind::Negative,
            Activation::Unspecified => return None,
        };
        Some(TriggerQuery {
            query: case.prompt.clone(),
            kind,
            origin: format!("{}{}", case.origin.file, case.origin.pointer),
        })
    });
    let mut out: Vec<TriggerQuery> = Vec::new();
    for q in from_cases.chain(suite.triggers.iter().cloned()) {
        if !out.iter().any(|o| o.query == q.query) {
            out.push(q);
        }
    }
    out
}

/// The trigger queries of the skill in `skill_dir` named `own`: its eval files (none is fine
/// when there is a trigger set), and the trigger eval set `set` or, without one, the first of
/// [`TRIGGER_SET_FILES`] that exists.
pub fn load_trigger_queries(
    skill_dir: &Path,
    own: &str,
    set: Option<&Path>,
) -> Result<Vec<TriggerQuery>, LoadSuiteError> {
    let suite = match load_suite(skill_dir) {
        Ok(s) => s,
        Err(LoadSuiteError::NoEvalFiles { .. }) => Suite {
            plugin: None,
            skill_name: None,
            cases: Vec::new(),
            triggers: Vec::new(),
            notes: Vec::new(),
        },
        Err(e) => return Err(e),
    };
    let mut queries = trigger_queries(&suite, own);
    let set: Option<PathBuf> = set.map(Path::to_path_buf).or_else(|| {
        TRIGGER_SET_FILES
            .iter()
            .map(|f| skill_dir.join(f))
            .find(|p| p.is_file())
    });
    if let Some(path) = set {
        let text = read_eval_text(&path).map_err(|error| LoadSuiteError::Read {
            path: path.clone(),
            error,
        })?;
        let name = path
            .strip_prefix(skill_dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let more = parse_trigger_set(&text, &name).map_err(|error| {
            let at = LineIndex::new(&text).line_col(&text, error.span.start);
            LoadSuiteError::Parse {
                path: path.clone(),
                line: at.line,
                column: at.column,
                error,
            }
        })?;
        for q in more {
            if !queries.iter().any(|o| o.query == q.query) {
                queries.push(q);
            }
        }
    }
    Ok(queries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalspec::parse_suite;

    #[test]
    fn the_three_sources_give_one_list_with_named_near_misses() {
        let yaml = "scenarios:\n  - name: merge\n    prompt: Merge a.pdf and b.pdf\n  - name: haiku\n    prompt: Write a haiku\n    expect_activation: false\ntriggers:\n  positive: [\"Split this PDF\", Merge a.pdf and b.pdf]\n  negative: [What time is it]\n  near_miss: [Convert this Word file to Markdown]\n";
        let suite = parse_suite(FileKind::EvalYaml, yaml, "tests/eval.yaml").unwrap();
        let q = trigger_queries(&suite, "pdf");
        let got: Vec<(&str, TriggerKind)> = q.iter().map(|q| (q.query.as_str(), q.kind)).collect();
        assert_eq!(
            got,
            [
                ("Merge a.pdf and b.pdf", TriggerKind::Positive),
                ("Write a haiku", TriggerKind::Negative),
                ("Split this PDF", TriggerKind::Positive),
                ("What time is it", TriggerKind::Negative),
                ("Convert this Word file to Markdown", TriggerKind::NearMiss),
            ]
        );
        assert_eq!(q[4].origin, "tests/eval.yaml/triggers/near_miss/0");

        let json = r#"{"skill_name": "pdf", "evals": [
            {"id": 1, "prompt": "Rotate page 2", "should_trigger": true},
            {"id": 2, "prompt": "Resize a PNG", "should_trigger": false},
            {"id": 3, "prompt": "Fill this form", "expected_skill": "forms"}]}"#;
        let suite = parse_suite(FileKind::EvalsJson, json, "evals/evals.json").unwrap();
        let kinds: Vec<TriggerKind> = trigger_queries(&suite, "pdf")
            .iter()
            .map(|q| q.kind)
            .collect();
        assert_eq!(
            kinds,
            [
                TriggerKind::Positive,
                TriggerKind::Negative,
                TriggerKind::NearMiss
            ]
        );
    }

    #[test]
    fn skill_creators_trigger_set_in_both_shapes() {
        let list = r#"[{"query": "make a pdf", "should_trigger": true},
                       {"query": "make a docx", "should_trigger": false, "near_miss": true},
                       {"query": "weather", "should_trigger": false}]"#;
        let q = parse_trigger_set(list, "evals/trigger_evals.json").unwrap();
        let kinds: Vec<TriggerKind> = q.iter().map(|q| q.kind).collect();
        assert_eq!(
            kinds,
            [
                TriggerKind::Positive,
                TriggerKind::NearMiss,
                TriggerKind::Negative
            ]
        );
        assert_eq!(q[1].origin, "evals/trigger_evals.json/1");
        let object = r#"{"evals": [{"prompt": "make a pdf", "should_trigger": true}]}"#;
        assert_eq!(
            parse_trigger_set(object, "t.json").unwrap()[0].query,
            "make a pdf"
        );
    }

    #[test]
    fn a_bad_trigger_set_says_what_and_where() {
        for (text, expected) in [
            (r#"[{"query": "x"}]"#, "/0: expected `should_trigger: true`"),
            (r#"[{"should_trigger": true}]"#, "/0: expected a `query`"),
            (
                r#"[{"query": "x", "should_trigger": true, "near_miss": true}]"#,
                "near miss is a query the skill should not answer",
            ),
            (r#"{"cases": []}"#, "found neither"),
            (r#"[{"query": "x", "should_trigger": tru"#, ""),
        ] {
            let e = parse_trigger_set(text, "t.json").unwrap_err();
            assert!(e.message.contains(expected), "{text}: {}", e.message);
        }
    }
}
