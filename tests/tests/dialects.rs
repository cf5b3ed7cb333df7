//! End to end on real eval files in other tools' dialects (tests/fixtures/dialects: Microsoft
//! Vally, microsoft/waza, NVIDIA SkillEvaluator, alibaba/skill-up; see its README for what is
//! whose): `check` names each file's dialect and gives no errors on them, positioned errors
//! on broken copies; `run` on the scripted model runs every case of each in both arms.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest};
use skillwatch_tests::{code, skillwatch, stderr, stdout, workspace_root};

/// One dialect's fixture: the folder under tests/fixtures/dialects, the skill in it, and the
/// eval files `check` must read with their dialect ids.
struct Fixture {
    folder: &'static str,
    skill: &'static str,
    files: &'static [(&'static str, &'static str)],
    cases: usize,
}

const FIXTURES: &[Fixture] = &[
    Fixture {
        folder: "vally",
        skill: "plugins/dotnet-diag/skills/dump-collect",
        files: &[
            ("tests/dotnet-diag/dump-collect/eval.vally.yaml", "vally"),
            ("dump-collect.experiment.yaml", "vally-experiment"),
        ],
        cases: 3,
    },
    Fixture {
        folder: "waza",
        skill: "code-explainer",
        files: &[
            ("code-explainer/eval.yaml", "waza"),
            (
                "code-explainer/tasks/explain-python-recursion.yaml",
                "waza-task",
            ),
            ("code-explainer/tasks/explain-sql-join.yaml", "waza-task"),
        ],
        cases: 4,
    },
    Fixture {
        folder: "skillevaluator",
        skill: "task-list",
        files: &[("task-list/evals/evals.json", "evals-json")],
        cases: 4,
    },
    Fixture {
        folder: "skill-up",
        skill: "code-stats",
        files: &[
            ("code-stats/evals/eval.yaml", "skill-up"),
            (
                "code-stats/evals/cases/analyze-directory.yaml",
                "skill-up-case",
            ),
            (
                "code-stats/evals/cases/exclude-dependencies.yaml",
                "skill-up-case",
            ),
        ],
        cases: 4,
    },
];

/// A copy of the fixture folder as a repository of its own (`.git` marks where the search for
/// a tests tree and experiments stops).
fn copy(f: &Fixture) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join(f.folder);
    let from = workspace_root()
        .join("tests/fixtures/dialects")
        .join(f.folder);
    for e in walkdir::WalkDir::new(&from) {
        let e = e.unwrap();
        let dest = root.join(e.path().strip_prefix(&from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
    std::fs::create_dir_all(root.join(".git")).unwrap();
    (tmp, root)
}

fn check_json(root: &Path, skill: &str) -> (i32, Value) {
    let out = skillwatch(&["check", skill, "--json"], Some(root));
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(&out), stderr(&out)));
    (code(&out), v)
}

/// The file report of `rel` (relative to `root`) in a `check --json` document.
fn file<'v>(v: &'v Value, root: &Path, rel: &str) -> &'v Value {
    let want = root.join(rel);
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| root.join(f["path"].as_str().unwrap()) == want)
        .unwrap_or_else(|| panic!("no {rel} in {v:#}"))
}

fn errors(v: &Value) -> Vec<&Value> {
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["diagnostics"].as_array().unwrap())
        .filter(|d| d["severity"] == "error")
        .collect()
}

#[test]
fn check_names_each_dialect_and_finds_no_errors_in_the_real_files() {
    for f in FIXTURES {
        let (_tmp, root) = copy(f);
        let (status, v) = check_json(&root, f.skill);
        assert!(errors(&v).is_empty(), "{}: {:#}", f.folder, v);
        assert_eq!(status, 0, "{}: {v:#}", f.folder);
        for (rel, id) in f.files {
            let report = file(&v, &root, rel);
            assert_eq!(report["dialect"]["id"], *id, "{rel}: {report:#}");
            assert!(
                !report["dialect"]["why"].as_str().unwrap().is_empty(),
                "{report:#}"
            );
        }
    }
}

#[test]
fn what_a_dialect_has_that_skillwatch_does_not_run_is_said_where_it_is_written() {
    let (_tmp, root) = copy(&FIXTURES[0]);
    let (_, v) = check_json(&root, FIXTURES[0].skill);
    let spec = file(&v, &root, FIXTURES[0].files[0].0);
    let messages: Vec<&str> = spec["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "SW416")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    for what in ["pairwise", "scoring", "config.runs"] {
        assert!(
            messages.iter().any(|m| m.contains(what)),
            "{what}: {messages:#?}"
        );
    }
    // the experiment's plugin arm is a third condition `run` runs, not a note
    let experiment = file(&v, &root, "dump-collect.experiment.yaml");
    let diagnostics = experiment["diagnostics"].as_array().unwrap();
    assert!(
        !diagnostics
            .iter()
            .any(|d| d["message"].as_str().unwrap().contains("plugin arm")),
        "{experiment:#}"
    );
}

/// A broken copy of each dialect's file: the edit, and the text the error must point at.
const BREAKS: &[(usize, &str, &str, &str, &str)] = &[
    (
        0,
        "tests/dotnet-diag/dump-collect/eval.vally.yaml",
        "type: output-matches",
        "type: output-matchs",
        "output-matchs",
    ),
    (
        1,
        "code-explainer/tasks/explain-sql-join.yaml",
        "  prompt:",
        "  promt:",
        "promt",
    ),
    (
        2,
        "task-list/evals/evals.json",
        "\"expected_skill\": null",
        "\"expected_skill\": 5",
        "5",
    ),
    (
        3,
        "code-stats/evals/cases/top-extensions.yaml",
        "  timeout_seconds: 900",
        "  timeout_seconds: soon",
        "soon",
    ),
];

#[test]
fn check_gives_positioned_errors_on_broken_copies() {
    for (i, rel, from, to, at) in BREAKS {
        let f = &FIXTURES[*i];
        let (_tmp, root) = copy(f);
        let path = root.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{rel}");
        let broken = text.replacen(from, to, 1);
        std::fs::write(&path, &broken).unwrap();
        let (status, v) = check_json(&root, f.skill);
        assert_eq!(status, 1, "{rel}: {v:#}");
        let report = file(&v, &root, rel);
        let e = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["severity"] == "error")
            .unwrap_or_else(|| panic!("{rel}: {report:#}"));
        let (start, end) = (
            e["span"]["start"].as_u64().unwrap() as usize,
            e["span"]["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(broken[start..end].trim_matches('"'), *at, "{rel}: {e:#}");
        let offset = broken.find(to).unwrap();
        let line = broken[..offset].matches('\n').count() as u64 + 1;
        assert_eq!(e["start"]["line"], line, "{rel}: {e:#}");
        // the text report says file:line:col
        let out = skillwatch(&["check", f.skill, "--color", "never"], Some(&root));
        let shown = format!("{}:{}:", rel, e["start"]["line"]);
        assert!(stdout(&out).contains(&shown), "{shown}\n{}", stdout(&out));
    }
}

fn usage() -> MockUsage {
    MockUsage {
        input: 40,
        cached: 0,
        output: 4,
    }
}

#[test]
fn run_runs_every_case_of_each_dialect_in_both_arms() {
    let script: mock::Script =
        Arc::new(|_req: &ModelRequest| ModelReply::text("Total Files: 3. Done.", usage()));
    let server = mock::openai_chat::server(script);
    let url = format!("{}/v1", server.url());
    for f in FIXTURES {
        let (tmp, root) = copy(f);
        let db = tmp.path().join("h.db");
        let out = skillwatch(
            &[
                "run",
                f.skill,
                "--harness",
                "openai",
                "--base-url",
                &url,
                "--model",
                "mock-model",
                "--db",
                db.to_str().unwrap(),
            ],
            Some(&root),
        );
        assert_eq!(
            code(&out),
            0,
            "{}: {}\n{}",
            f.folder,
            stdout(&out),
            stderr(&out)
        );
        let history = skillwatch(
            &[
                "history",
                f.skill,
                "--json",
                "--trials",
                "--db",
                db.to_str().unwrap(),
            ],
            Some(&root),
        );
        let v: Value = serde_json::from_slice(&history.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", stderr(&history)));
        let trials = v["runs"][0]["trials"].as_array().unwrap();
        let mut cases: Vec<&str> = trials.iter().map(|t| t["case"].as_str().unwrap()).collect();
        cases.sort_unstable();
        cases.dedup();
        assert_eq!(cases.len(), f.cases, "{}: {cases:?}", f.folder);
        for case in &cases {
            for arm in ["baseline", "skill"] {
                assert!(
                    trials.iter().any(|t| t["case"] == *case
                        && t["condition"] == arm
                        && t["status"] == "completed"),
                    "{}: {case} has no completed {arm} trial: {trials:#?}",
                    f.folder
                );
            }
        }
    }
}

/// One file per dialect for the editor: the file, its language id, a key the hover explains
/// (and completion offers where the key's line is cut to its first letters), and an edit that
/// breaks the file (from, to).
type EditorCase = (
    usize,
    &'static str,
    &'static str,
    &'static str,
    (&'static str, &'static str),
);

const EDITOR: &[EditorCase] = &[
    (
        0,
        "tests/dotnet-diag/dump-collect/eval.vally.yaml",
        "yaml",
        "rubric",
        ("type: pairwise", "type: pairwse"),
    ),
    (
        0,
        "dump-collect.experiment.yaml",
        "yaml",
        "variants",
        ("baseline: baseline", "baseline: 5"),
    ),
    (
        1,
        "code-explainer/eval.yaml",
        "yaml",
        "metrics",
        ("trials_per_task: 3", "trials_per_task: three"),
    ),
    (
        1,
        "code-explainer/tasks/explain-js-async.yaml",
        "yaml",
        "expected",
        ("  prompt:", "  promt:"),
    ),
    (
        2,
        "task-list/evals/evals.json",
        "json",
        "expected_skill",
        ("\"expected_skill\": null", "\"expected_skill\": 5"),
    ),
    (
        3,
        "code-stats/evals/eval.yaml",
        "yaml",
        "engine",
        ("    max_turns: 5", "    max_turns: many"),
    ),
    (
        3,
        "code-stats/evals/cases/top-extensions.yaml",
        "yaml",
        "expect",
        ("  timeout_seconds: 900", "  timeout_seconds: soon"),
    ),
];

#[test]
fn the_editor_gives_diagnostics_hover_and_completion_on_each_dialect() {
    use skillwatch_tests::lsp::{LspClient, utf16_position};
    let mut client = LspClient::initialized(Value::Null);
    let mut version = 1;
    for (i, rel, language, key, (from, to)) in EDITOR {
        let (_tmp, root) = copy(&FIXTURES[*i]);
        let path = root.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let uri = client.open(&path, language, &text);
        let clean = client.diagnostics(&uri, Some(1));
        assert!(
            clean.iter().all(|d| d["severity"] != 1),
            "{rel}: {clean:#?}"
        );
        // hover on the key
        let quoted = if *language == "json" {
            format!("\"{key}\"")
        } else {
            format!("\n{key}:")
        };
        let at = text
            .find(&quoted)
            .or_else(|| text.find(&format!(" {key}:")))
            .unwrap_or_else(|| panic!("{rel}: no {key}"))
            + 2;
        let (line, character) = utf16_position(&text, at);
        let hover = client.request(
            "textDocument/hover",
            serde_json::json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        );
        let shown = hover["contents"]["value"].as_str().unwrap_or_default();
        assert!(shown.contains(&format!("`{key}`")), "{rel}: {hover:#}");
        // completion where the key is cut to its first three letters, the rest of the file
        // as it was (an author retyping the key)
        let cut = at - 1;
        let typed = format!("{}{}{}", &text[..cut], &key[..3], &text[cut + key.len()..]);
        version += 1;
        client.notify(
            "textDocument/didChange",
            serde_json::json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": typed}]}),
        );
        let (line, character) = utf16_position(&typed, cut + 3);
        let items = client.request(
            "textDocument/completion",
            serde_json::json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        );
        let list = items.get("items").unwrap_or(&items);
        let labels: Vec<&str> = list
            .as_array()
            .unwrap_or_else(|| panic!("{rel}: {items:#}"))
            .iter()
            .filter_map(|i| i["label"].as_str())
            .collect();
        assert!(labels.contains(key), "{rel}: {key} not in {labels:?}");
        // a broken edit: a positioned error
        let broken = text.replacen(from, to, 1);
        version += 1;
        client.notify(
            "textDocument/didChange",
            serde_json::json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": broken}]}),
        );
        let found = client.diagnostics(&uri, Some(version));
        let error = found
            .iter()
            .find(|d| d["severity"] == 1)
            .unwrap_or_else(|| panic!("{rel}: no error in {found:#?}"));
        let want = broken.find(to).unwrap();
        let (line, _) = utf16_position(&broken, want);
        assert_eq!(error["range"]["start"]["line"], line, "{rel}: {error:#}");
    }
}
