//! The embedded eval schemas checked by an independent JSON Schema implementation: Python's
//! `jsonschema` (Draft 2020-12), the kind of validator editors use with `skillwatch schema`.
//! It must accept both schemas against the 2020-12 metaschema, and for every corpus eval file
//! and a set of broken files it must find errors at exactly the instance locations skillwatch
//! finds them.
//!
//! The Python side lives in a venv that `.ci/run` creates at target/schema-venv (jsonschema,
//! PyYAML). Without it this test fails in CI and is skipped visibly elsewhere
//! (`skillwatch_tests::needs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use skillwatch_core::evalspec::{self, Dialect, FileKind, schema};
use skillwatch_tests::corpus_dir;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SKILLWATCH_SCHEMA_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = repo_root().join("target/schema-venv/bin/python");
    venv.is_file().then_some(venv)
}

/// Broken (and a few valid) files, written to `dir`, covering each kind of schema error.
fn crafted(dir: &Path) -> Vec<(PathBuf, FileKind)> {
    let yaml = [
        "scenarios:\n  - name: a\n",
        "scenarios: []\n",
        "- just\n- a list\n",
        "scenarios:\n  - name: a\n    prompt: p\n    max_turns: 0\n    timeout: soon\n",
        "scenarios:\n  - name: a\n    prompt: p\n    rubrik: [x]\n",
        "scenarios:\n  - name: a\n    prompt: p\n    assertions:\n      - type: output_has\n        value: x\n",
        "scenarios:\n  - name: a\n    prompt: p\n    assertions:\n      - type: output_matches\n        value: x\n      - type: file_contains\n        path: a\n      - type: exit_success\n        value: x\n",
        "scenarios:\n  - name: a\n    prompt: p\n    setup:\n      copy_test_files: maybe\n      files:\n        - path: x\n        - content: y\n",
        "scenarios:\n  - name: \"\"\n    prompt: \" \"\n    expect_tools: bash\n",
        "scenarios:\n  - name: a\n    prompt: p\n    setup:\n    rubric:\n    expect_activation: false\n",
    ];
    let json = [
        r#"{"skill_name": "s", "evals": [{"id": 1, "prompt": "p"}]}"#,
        r#"{"evals": [{"id": 1, "prompt": "p", "expected_output": "o", "extra": 1}]}"#,
        r#"[{"id": "bad id!", "question": "q"}, {"id": 1.5, "question": "q"}, {"id": "x"}]"#,
        r#"{"skill": "s", "cases": [{"id": "a", "prompt": "p", "files": 3}], "other": 1}"#,
        r#"[{"id": "a", "question": "q", "assertions": [{"name": "n"}, {"type": "contains_phrase"}, {"type": "regex", "pattern": "x"}, 5]}]"#,
        r#"{"id": "a", "question": "", "expected_skill": 5, "should_trigger": "yes"}"#,
        r#"{"skill_name": "s", "evals": [{"id": 1, "prompt": "p", "expected_output": null, "expectations": ["x"], "files": ["a"]}]}"#,
    ];
    let mut out = Vec::new();
    for (i, text) in yaml.iter().enumerate() {
        let path = dir.join(format!("y{i}.yaml"));
        std::fs::write(&path, text).unwrap();
        out.push((path, FileKind::EvalYaml));
    }
    for (i, text) in json.iter().enumerate() {
        let path = dir.join(format!("j{i}.json"));
        std::fs::write(&path, text).unwrap();
        out.push((path, FileKind::EvalsJson));
    }
    out
}

fn corpus_files() -> Vec<(PathBuf, FileKind)> {
    let mut out = Vec::new();
    for dir in skillwatch_core::skill::discover(&corpus_dir()) {
        for f in evalspec::find_eval_files(&dir) {
            out.push((f.path, f.kind));
        }
    }
    out
}

/// The dialect a file is read in (its schema), from its content.
fn dialect_of(path: &Path, kind: FileKind) -> Dialect {
    let text = std::fs::read_to_string(path).unwrap();
    let tree = evalspec::parse_tree(kind, &text).unwrap();
    evalspec::dialect::of_tree(kind, &tree, path).dialect
}

fn ours(path: &Path, kind: FileKind) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let tree = evalspec::parse_tree(kind, &text).unwrap();
    schema::validate(dialect_of(path, kind), &tree, &text)
        .into_iter()
        .map(|v| v.pointer)
        .collect()
}

fn reference(
    py: &Path,
    dialect: Dialect,
    kind: FileKind,
    files: &[PathBuf],
) -> BTreeMap<PathBuf, BTreeSet<String>> {
    let schema_file = format!("{}.schema.json", schema::schema_name(dialect));
    let arg = if kind == FileKind::EvalYaml {
        "yaml"
    } else {
        "json"
    };
    let out = Command::new(py)
        .arg(repo_root().join("tests/reference/eval_schema_check.py"))
        .arg(repo_root().join("schemas").join(schema_file))
        .arg(arg)
        .args(files)
        .output()
        .expect("run the reference validator");
    assert!(
        out.status.success(),
        "reference validator failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let pointers = v["pointers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_string())
                .collect();
            (PathBuf::from(v["file"].as_str().unwrap()), pointers)
        })
        .collect()
}

#[test]
fn python_jsonschema_agrees_on_every_file() {
    let Some(py) = skillwatch_tests::needs::required(
        python(),
        "target/schema-venv (Python jsonschema and PyYAML)",
        "scripts/test makes it: python3 -m venv target/schema-venv && target/schema-venv/bin/pip \
         install jsonschema==4.26.0 PyYAML==6.0.3 (or name a Python in SKILLWATCH_SCHEMA_PYTHON)",
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut files = crafted(tmp.path());
    let crafted_count = files.len();
    files.extend(corpus_files());
    let mut compared = 0;
    let mut broken = 0;
    // JSON Lines files have no whole-file form the reference reads; their lines are JSON
    // objects checked as evals.json cases by the unit tests.
    let groups: BTreeSet<(Dialect, FileKind)> = files
        .iter()
        .filter(|(_, k)| *k != FileKind::JsonLines)
        .map(|(p, k)| (dialect_of(p, *k), *k))
        .collect();
    for (dialect, kind) in groups {
        let paths: Vec<PathBuf> = files
            .iter()
            .filter(|(p, k)| *k == kind && dialect_of(p, *k) == dialect)
            .map(|(p, _)| p.clone())
            .collect();
        let theirs = reference(&py, dialect, kind, &paths);
        for path in &paths {
            let expected = theirs
                .get(path)
                .unwrap_or_else(|| panic!("{}", path.display()));
            assert_eq!(&ours(path, kind), expected, "{}", path.display());
            compared += 1;
            broken += usize::from(!expected.is_empty());
        }
    }
    // the 23 eval files of tests/fixtures/corpus and the crafted ones
    assert!(compared >= 23 + crafted_count, "{compared}");
    // Every crafted file but the two valid ones is broken, and the checks agree on where.
    assert!(broken >= crafted_count - 2, "{broken}");
}
