//! The derived Agent Skills Discovery v0.2.0 schema (schemas/agent-skills-discovery-0.2.0.schema.json)
//! checked by an independent implementation, Python's `jsonschema` (Draft 2020-12), as the eval
//! schemas are (evalspec_schema_reference.rs, whose venv and script this reuses): it must accept
//! the schema against the 2020-12 metaschema, and for a built index and a set of broken ones it
//! must find schema errors at exactly the locations `index check` finds them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use skillwatch_core::index::{SCHEMA_URI, document};
use skillwatch_tests::{code, corpus_dir, skillwatch, stderr};

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

const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn skill(name: &str) -> String {
    format!(
        r#"{{"name": "{name}", "type": "skill-md", "description": "Extracts tables from PDF invoices. Use when asked for invoice line items.", "url": "{name}/SKILL.md", "digest": "{DIGEST}"}}"#
    )
}

/// Broken (and two valid) indexes, one for each kind of schema error.
fn crafted(dir: &Path) -> Vec<PathBuf> {
    let good = skill("pdf-tables");
    let with = |field: &str, value: &str| {
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        if value == "DELETE" {
            v.as_object_mut().unwrap().remove(field);
        } else {
            v[field] = serde_json::from_str(value).unwrap();
        }
        v.to_string()
    };
    let doc = |skills: &str| format!(r#"{{"$schema": "{SCHEMA_URI}", "skills": {skills}}}"#);
    let texts = vec![
        doc(&format!("[{good}]")),
        format!(r#"{{"$schema": "{SCHEMA_URI}", "skills": [{good}], "version": "0.2"}}"#),
        format!(r#"{{"skills": [{good}]}}"#),
        format!(
            r#"{{"$schema": "https://schemas.agentskills.io/discovery/0.1.0/schema.json", "skills": [{good}]}}"#
        ),
        format!(r#"{{"$schema": "{SCHEMA_URI}"}}"#),
        doc("[]"),
        doc(r#""pdf-tables""#),
        doc("[1, null, []]"),
        r#"[]"#.to_string(),
        doc(&format!(
            "[{}, {}, {}, {}, {}]",
            with("name", r#""Bad_Name""#),
            with("name", r#""-lead""#),
            with("name", &format!("\"{}\"", "a".repeat(65))),
            with("name", "7"),
            with("name", r#""""#),
        )),
        doc(&format!(
            "[{}, {}, {}]",
            with("type", r#""zip""#),
            with("type", "null"),
            with("type", "DELETE"),
        )),
        doc(&format!(
            "[{}, {}, {}, {}]",
            with("description", r#""   ""#),
            with("description", &format!("\"{}\"", "d".repeat(1025))),
            with("url", r#""""#),
            with("url", "[]"),
        )),
        doc(&format!(
            "[{}, {}, {}, {}, {}]",
            with("digest", r#""sha256:ABCDEF""#),
            with("digest", &format!("\"sha512:{}\"", &DIGEST[7..])),
            with("digest", &format!("\"{}0\"", DIGEST)),
            with("digest", "DELETE"),
            with("description", "DELETE"),
        )),
    ];
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let path = dir.join(format!("index{i}.json"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect()
}

/// The locations `index check` reports schema errors at (not its checks beyond the schema:
/// URL references, duplicate names, description quality).
fn ours(path: &Path) -> BTreeSet<String> {
    let doc = document::parse(&std::fs::read_to_string(path).unwrap());
    assert!(doc.syntax.is_none(), "{}", path.display());
    doc.problems
        .iter()
        .chain(doc.entries.iter().flat_map(|e| &e.problems))
        .filter(|p| matches!(p.code, "schema" | "schema-uri"))
        .map(|p| p.pointer.clone())
        .collect()
}

fn reference(py: &Path, files: &[PathBuf]) -> BTreeMap<PathBuf, BTreeSet<String>> {
    let out = Command::new(py)
        .arg(repo_root().join("tests/reference/eval_schema_check.py"))
        .arg(repo_root().join("schemas/agent-skills-discovery-0.2.0.schema.json"))
        .arg("json")
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
fn python_jsonschema_agrees_on_every_index() {
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
    // and an index `index build` writes from real skills
    let out = tmp.path().join("site");
    let built = skillwatch(
        &[
            "index",
            "build",
            corpus_dir()
                .join("dotnet__skills/plugins")
                .to_str()
                .unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code(&built), 0, "{}", stderr(&built));
    files.push(out.join(".well-known/agent-skills/index.json"));
    let theirs = reference(&py, &files);
    let mut broken = 0;
    for path in &files {
        let expected = theirs
            .get(path)
            .unwrap_or_else(|| panic!("{}", path.display()));
        assert_eq!(&ours(path), expected, "{}", path.display());
        broken += usize::from(!expected.is_empty());
    }
    // every crafted index but the first two is broken, and the built one is not
    assert_eq!(broken, crafted_count - 2);
    assert!(theirs[files.last().unwrap()].is_empty());
}
