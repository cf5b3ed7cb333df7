//! Shared helpers for the end-to-end tests in `tests/tests/`: the built `skillwatch` binary,
//! the shared corpus, and small builders for skill folders.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The `skillwatch` binary, built on first use. Cargo only builds binaries for the integration
/// tests of their own package, so this suite asks cargo for it (a no-op when up to date).
/// `SKILLWATCH_TEST_BIN` runs the suite against another build instead (e.g. the one before a
/// fix, to see its test fail).
pub fn skillwatch_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("SKILLWATCH_TEST_BIN") {
            return PathBuf::from(bin);
        }
        let mut dir = std::env::current_exe().expect("test executable path");
        dir.pop();
        if dir.ends_with("deps") {
            dir.pop();
        }
        let release = dir.ends_with("release");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.args([
            "build",
            "--quiet",
            "-p",
            "skillwatch",
            "--bin",
            "skillwatch",
        ]);
        if release {
            build.arg("--release");
        }
        let status = build
            .status()
            .expect("run cargo build for the skillwatch binary");
        assert!(status.success(), "cargo build -p skillwatch failed");
        dir.join("skillwatch")
    })
    .clone()
}

/// The corpus of real skills the tests read: a subset of the development corpus kept in the
/// repository (tests/fixtures/corpus/README.md), so a bare clone runs every test.
pub fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus")
}

/// The whole development corpus beside the checkout (`../shared/corpus`), when it is there:
/// only the skills-ref differential test reads it (besides the benchmarks), on top of
/// [`corpus_dir`].
pub fn shared_corpus_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    dir.is_dir().then_some(dir)
}

/// The workspace root (the folder holding `target/`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Run `skillwatch` with `args` in `cwd` (the workspace root when None), in-process
/// (`SKILLWATCH_NO_DAEMON=1`: no test starts a per-user daemon by accident; the daemon's own
/// tests start theirs in private runtime folders).
pub fn skillwatch(args: &[&str], cwd: Option<&Path>) -> Output {
    Command::new(skillwatch_bin())
        .args(args)
        .current_dir(cwd.map(Path::to_path_buf).unwrap_or_else(workspace_root))
        .env_remove("NO_COLOR")
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .expect("run skillwatch")
}

/// The exit code, failing the test on a signal (a crash is never an acceptable outcome).
pub fn code(output: &Output) -> i32 {
    output.status.code().unwrap_or_else(|| {
        panic!(
            "skillwatch died by a signal\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Write a skill folder `root/name` with `SKILL.md` = `skill_md` (bytes, so tests can write
/// invalid UTF-8) and extra `files`. Returns the folder.
pub fn write_skill(root: &Path, name: &str, skill_md: &[u8], files: &[(&str, &str)]) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("create skill folder");
    std::fs::write(dir.join("SKILL.md"), skill_md).expect("write SKILL.md");
    for (path, content) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("create folders");
        std::fs::write(path, content).expect("write file");
    }
    dir
}

/// A SKILL.md that passes every rule, for a folder named `name`.
pub fn good_skill_md(name: &str) -> String {
    format!(
        "---
name: {name}
description: Extracts tables from PDF invoices into CSV files. Use when the user asks to pull line items, totals or dates out of PDF invoices.
license: Apache-2.0
---
# Invoice tables

Turn the tables of a PDF invoice into CSV that a spreadsheet opens directly.

## Workflow

1. Read the invoice with `pdftotext -layout invoice.pdf -` and find the table header row.
2. Split each following row on runs of two or more spaces; stop at the totals block.
3. Write the rows to `invoice.csv` with a header line, one row per line item.
4. Check that the sum of the amounts equals the invoice total; report any difference.

## Example

Input: a one-page invoice with three line items and a total of 120.00.

```csv
description,quantity,unit_price,amount
Widget,2,20.00,40.00
Gadget,1,50.00,50.00
Cable,3,10.00,30.00
```

## Edge cases

- Multi-page invoices repeat the header on every page: keep only the first header.
- Amounts with thousands separators (1,200.00) must be unquoted numbers in the CSV.
- Credit notes have negative amounts; keep the sign.
"
    )
}

/// Parse `check --json` output.
pub fn json_report(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr: {}",
            stdout(output),
            stderr(output)
        )
    })
}

/// Every diagnostic of a `check --json` report, flattened.
pub fn diagnostics(report: &serde_json::Value) -> Vec<serde_json::Value> {
    report["files"]
        .as_array()
        .expect("files array")
        .iter()
        .flat_map(|f| f["diagnostics"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Every SKILL.md under `root` outside skipped folders, found independently of skillwatch's
/// own discovery.
pub fn count_skill_files(root: &Path) -> usize {
    fn walk(dir: &Path, n: &mut usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if ![".git", "node_modules", "target", ".hg", ".svn"]
                    .contains(&name.to_string_lossy().as_ref())
                {
                    walk(&path, n);
                }
            } else if name == "SKILL.md" {
                *n += 1;
            }
        }
    }
    let mut n = 0;
    walk(root, &mut n);
    n
}

pub mod daemon;
pub mod history;
pub mod lsp;
pub mod mock;
pub mod needs;
pub mod probe;
pub mod run;
pub mod site;
pub mod trial;
pub mod trials;
pub mod wait;

/// Assert that `report` (the output of `skillwatch check --json`) follows the published
/// schema, schemas/check-output.schema.json, itself checked against the Draft 2020-12
/// metaschema.
pub fn assert_check_json_follows_schema(report: &serde_json::Value) {
    static VALIDATOR: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let path = workspace_root().join("schemas/check-output.schema.json");
        let text = std::fs::read_to_string(&path).expect("the shipped schema");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("schema JSON");
        assert!(
            jsonschema::meta::is_valid(&schema),
            "a valid Draft 2020-12 schema"
        );
        jsonschema::draft202012::new(&schema).expect("the schema compiles")
    });
    let errors: Vec<String> = validator
        .iter_errors(report)
        .take(20)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the report breaks its schema: {errors:#?}"
    );
}

/// Assert that `value` follows the shipped schema `schemas/NAME` (itself checked against the
/// Draft 2020-12 metaschema).
pub fn assert_follows_schema(value: &serde_json::Value, name: &str) {
    let path = workspace_root().join("schemas").join(name);
    let text = std::fs::read_to_string(&path).expect("the shipped schema");
    let schema: serde_json::Value = serde_json::from_str(&text).expect("schema JSON");
    assert!(
        jsonschema::meta::is_valid(&schema),
        "{name}: a valid Draft 2020-12 schema"
    );
    let validator = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(20)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "breaks {name}: {errors:#?}");
}
