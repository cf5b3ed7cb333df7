//! End to end: `skillwatch import`, `history` and `compare` on real SQLite files, including
//! databases left by an older schema and refused newer ones.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use skillwatch_tests::{skillwatch_bin, trials};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn example_file() -> PathBuf {
    repo_root().join("tests/fixtures/trials/example.json")
}

/// Run `skillwatch ARGS --db DB` in-process (the daemon path has its own tests).
fn sw(db: &Path, args: &[&str]) -> Output {
    Command::new(skillwatch_bin())
        .args(args)
        .arg("--db")
        .arg(db)
        .env_remove("SKILLWATCH_DB")
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .expect("run skillwatch")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            stdout(out),
            stderr(out)
        )
    })
}

fn write_file(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    path
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn import_then_history_shows_the_lift_with_its_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite3");
    let runs = vec![
        trials::run(
            "a1",
            "sum",
            "model-a",
            "2026-11-01T00:00:00Z",
            &[0.2, 0.4, 0.3],
            &[0.8, 0.9, 0.6],
        ),
        trials::run(
            "a2",
            "sum",
            "model-a",
            "2026-11-02T00:00:00Z",
            &[0.2, 0.4, 0.3],
            &[0.7, 0.8, 0.5],
        ),
        trials::run(
            "b1",
            "sum",
            "model-b",
            "2026-11-03T00:00:00Z",
            &[0.5, 0.5, 0.5],
            &[0.5, 0.6, 0.4],
        ),
    ];
    let file = write_file(tmp.path(), "runs.json", &trials::file(runs));
    let out = sw(&db, &["import", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("imported 3 runs (18 trials)"),
        "{}",
        stdout(&out)
    );

    let out = sw(&db, &["history", "sum", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = json(&out);
    let latest = report["latest_per_model"].as_array().unwrap();
    assert_eq!(latest.len(), 2);
    assert_eq!(latest[0]["run"]["model"], "model-a");
    assert_eq!(latest[0]["completed_runs"], 2);
    // Newest model-a run: deltas 0.5, 0.4, 0.2 on both graded metrics (the ACES overall), and
    // every case flips from failed to passed: the outcome lift adds `pass` (+1) to them.
    let aces = latest[0]["headline"]["aces"]["lift"].as_f64().unwrap();
    assert!(close(aces, (0.5 + 0.4 + 0.2) / 3.0), "{aces}");
    let lift = latest[0]["headline"]["outcome"]["lift"].as_f64().unwrap();
    assert!(close(lift, (3.0 + 2.0 * (0.5 + 0.4 + 0.2)) / 9.0), "{lift}");
    assert_eq!(
        latest[0]["headline"]["outcome"]["verdict"]["needed_cases"], 6,
        "three cases: inconclusive (n too small)"
    );
    let ci = &latest[0]["headline"]["outcome"]["interval"];
    assert_eq!(ci["n"], 3);
    assert_eq!(ci["level"], 0.95);
    assert_eq!(ci["method"]["kind"], "student_t");
    assert!(ci["low"].as_f64().unwrap() < lift && lift < ci["high"].as_f64().unwrap());
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0]["run"]["model"], "model-b", "newest first");
    assert!(runs[0].get("trials").is_none());

    let out = sw(
        &db,
        &["history", "sum", "--model", "model-a", "--trials", "--json"],
    );
    let report = json(&out);
    assert_eq!(report["runs"].as_array().unwrap().len(), 2);
    assert_eq!(report["latest_per_model"].as_array().unwrap().len(), 1);
    assert_eq!(report["runs"][0]["trials"].as_array().unwrap().len(), 6);

    let out = sw(&db, &["history", "sum"]);
    let text = stdout(&out);
    assert!(text.contains("model-a on openai: lift +0.578 ["), "{text}");
    assert!(text.contains("95% t n=3"), "{text}");
    assert!(text.contains("inconclusive (n too small)"), "{text}");
    assert!(text.contains("(2 completed runs"), "{text}");
    let out = sw(&db, &["history", "sum", "--scoring-profile", "aces"]);
    let text = stdout(&out);
    assert!(text.contains("ACES overall (six metrics)"), "{text}");
    assert!(text.contains("model-a on openai: lift +0.367 ["), "{text}");
}

/// `history ... | head -1` closes the pipe after one line: no panic, exit 0.
#[test]
fn history_into_a_closed_pipe_is_not_a_crash() {
    use std::io::Read;
    use std::process::Stdio;
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite3");
    // Far more than a pipe buffer (64 KiB) of output, so the writer meets the closed pipe.
    let runs: Vec<Value> = (0..300)
        .map(|i| {
            trials::run(
                &format!("r{i}"),
                "sum",
                "model-a",
                &format!("2026-11-01T{:02}:{:02}:00Z", i / 60, i % 60),
                &[0.2, 0.4, 0.3],
                &[0.8, 0.9, 0.6],
            )
        })
        .collect();
    let file = write_file(tmp.path(), "runs.json", &trials::file(runs));
    assert!(
        sw(&db, &["import", file.to_str().unwrap()])
            .status
            .success()
    );
    let mut child = Command::new(skillwatch_bin())
        .args(["history", "sum", "--limit", "300", "--trials", "--db"])
        .arg(&db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn importing_the_same_file_twice_keeps_one_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite3");
    let example = example_file();
    let out = sw(&db, &["import", "--json", example.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)[0]["trials"], 4);
    let out = sw(&db, &["import", "--json", example.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let again = json(&out);
    assert_eq!(again[0]["trials"], 0);
    assert_eq!(again[0]["skipped"][0], "example-2026-11-20-sonnet");
    let out = sw(&db, &["history", "csv-report", "--json"]);
    assert_eq!(json(&out)["runs"].as_array().unwrap().len(), 1);
}

#[test]
fn a_bad_file_is_reported_with_its_position_and_nothing_is_imported() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite3");
    let mut runs = vec![trials::run(
        "ok",
        "sum",
        "m",
        "2026-11-01T00:00:00Z",
        &[0.2],
        &[0.8],
    )];
    let mut bad = trials::run("bad", "sum", "m", "2026-11-01T00:00:00Z", &[0.2], &[0.8]);
    bad["trials"][1]["metrics"]["accuracy"] = Value::from(80);
    runs.push(bad);
    let file = write_file(tmp.path(), "bad.json", &trials::file(runs));
    let out = sw(&db, &["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("\"accuracy\": 80"))
        .unwrap()
        + 1;
    assert!(
        err.contains(&format!("bad.json:{line}:")),
        "expected line {line} in: {err}"
    );
    assert!(
        err.contains("expected a number on [0, 1], found 80"),
        "{err}"
    );
    let out = sw(&db, &["history", "sum"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no history for skill `sum`"),
        "{}",
        stderr(&out)
    );

    std::fs::write(tmp.path().join("binary.json"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    let out = sw(
        &db,
        &["import", tmp.path().join("binary.json").to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("binary.json:1:"), "{}", stderr(&out));
}

#[test]
fn read_commands_never_create_a_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("typo.sqlite3");
    for args in [
        &["history", "sum"][..],
        &["compare", "sum", "--model", "a", "--model", "b"][..],
    ] {
        let out = sw(&db, args);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("no history database at"),
            "{}",
            stderr(&out)
        );
    }
    assert!(!db.exists());
}

#[test]
fn a_skill_folder_argument_names_the_skill() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite3");
    let out = sw(&db, &["import", example_file().to_str().unwrap()]);
    assert!(out.status.success());
    let skill_dir = tmp.path().join("some-folder");
    std::fs::create_dir(&skill_dir).unwrap();
    std::fs::write(
        skill_dir.join("SKILL.md"),
        "---\nname: csv-report\ndescription: Reports on CSV files.\n---\n# CSV\n",
    )
    .unwrap();
    let out = sw(&db, &["history", skill_dir.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["skill"], "csv-report");
}

/// A history where the skill helped a lot on `old` and barely on `new`.
fn regression_history(dir: &Path) -> PathBuf {
    let db = dir.join("h.sqlite3");
    let base = [0.2, 0.3, 0.1, 0.25, 0.2, 0.3, 0.2, 0.1];
    let helps = [0.8, 0.9, 0.7, 0.85, 0.75, 0.9, 0.8, 0.7];
    let barely = [0.25, 0.3, 0.15, 0.2, 0.25, 0.35, 0.2, 0.15];
    let runs = vec![
        trials::run(
            "old",
            "sum",
            "old-model",
            "2026-11-01T00:00:00Z",
            &base,
            &helps,
        ),
        trials::run(
            "new",
            "sum",
            "new-model",
            "2026-11-02T00:00:00Z",
            &base,
            &barely,
        ),
        trials::run(
            "same",
            "sum",
            "same-model",
            "2026-11-03T00:00:00Z",
            &base,
            &helps,
        ),
    ];
    let file = write_file(dir, "runs.json", &trials::file(runs));
    let out = sw(&db, &["import", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    db
}

#[test]
fn compare_exits_1_on_a_regression_and_explains_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = regression_history(tmp.path());
    let out = sw(
        &db,
        &[
            "compare",
            "sum",
            "--model",
            "old-model",
            "--model",
            "new-model",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(text.contains("verdict: regresses"), "{text}");
    assert!(text.contains("case-0"), "{text}");
    assert!(text.contains("95% t n=8"), "{text}");

    let out = sw(
        &db,
        &[
            "compare",
            "sum",
            "--model",
            "old-model",
            "--model",
            "new-model",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let result = json(&out);
    let cmp = &result["comparison"];
    assert_eq!(cmp["verdict"], "regresses");
    assert_eq!(cmp["cases"].as_array().unwrap().len(), 8);
    let mean = cmp["summary"]["mean"].as_f64().unwrap();
    // Per-case outcome lift (pass, goal_accuracy, accuracy) fell from (1 + 2·(helps - base))/3
    // to (0 + 2·(barely - base))/3: means of helps - base 0.59375, barely - base 0.025.
    assert!(
        close(mean, (2.0 * 0.025 - 1.0 - 2.0 * 0.59375) / 3.0),
        "{mean}"
    );
    assert!(cmp["interval"]["high"].as_f64().unwrap() < 0.0);
    assert_eq!(result["reference"]["model"], "old-model");

    // The reverse direction is an improvement, and the same skill on an equal model is
    // unchanged: both exit 0.
    let out = sw(
        &db,
        &[
            "compare",
            "sum",
            "--model",
            "new-model",
            "--model",
            "old-model",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("verdict: improves"),
        "{}",
        stdout(&out)
    );
    let out = sw(
        &db,
        &[
            "compare",
            "sum",
            "--model",
            "old-model",
            "--model",
            "same-model",
        ],
    );
    // every case moved by exactly 0: a zero-width interval is no evidence of no change
    // (issue 35), so not "no change", and not a failure either
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("verdict: inconclusive")
            && stdout(&out).contains("cannot rule out changes of 0.05"),
        "{}",
        stdout(&out)
    );

    // A drop smaller than --min-effect is not a regression.
    let out = sw(
        &db,
        &[
            "compare",
            "sum",
            "--model",
            "old-model",
            "--model",
            "new-model",
            "--min-effect",
            "0.9",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn compare_takes_two_runs_for_version_comparisons() {
    let tmp = tempfile::tempdir().unwrap();
    let db = regression_history(tmp.path());
    let history = json(&sw(&db, &["history", "sum", "--json"]));
    let id_of = |model: &str| {
        history["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["run"]["model"] == model)
            .unwrap()["run"]["id"]
            .as_i64()
            .unwrap()
            .to_string()
    };
    let (old, new) = (id_of("old-model"), id_of("new-model"));
    let out = sw(
        &db,
        &["compare", "sum", "--run", &old, "--run", &new, "--json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(json(&out)["comparison"]["verdict"], "regresses");
    let out = sw(&db, &["compare", "sum", "--run", &old, "--model", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let out = sw(&db, &["compare", "sum", "--run", "999", "--run", &new]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no run with id 999"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn compare_needs_two_known_models() {
    let tmp = tempfile::tempdir().unwrap();
    let db = regression_history(tmp.path());
    let out = sw(&db, &["compare", "sum", "--model", "old-model"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("expected exactly two models"),
        "{}",
        stderr(&out)
    );
    let out = sw(
        &db,
        &["compare", "sum", "--model", "old-model", "--model", "gpt-9"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("models with completed runs: new-model, old-model, same-model"),
        "{}",
        stderr(&out)
    );
}

/// A database as the first schema left it: 0001_init.sql applied by hand, one finished run
/// written with plain SQL, `user_version = 1`.
fn schema_1_database(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let init = std::fs::read_to_string(repo_root().join("migrations/0001_init.sql")).unwrap();
    conn.execute_batch(&init).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA application_id = {};
         INSERT INTO skills (id, name, created_ms) VALUES (1, 'legacy', 0);
         INSERT INTO skill_versions (id, skill_id, content_hash, created_ms) VALUES (1, 1, 'sha256:v', 0);
         INSERT INTO suites (id, skill_id, content_hash, created_ms) VALUES (1, 1, 'sha256:s', 0);
         INSERT INTO cases (id, skill_id, case_key, content_hash, created_ms) VALUES
             (1, 1, 'a', 'sha256:a', 0), (2, 1, 'b', 'sha256:b', 0);
         INSERT INTO suite_cases VALUES (1, 1, 0), (1, 2, 1);
         INSERT INTO runs (id, skill_id, skill_version_id, suite_id, harness, model, scoring_profile,
                           trigger, tool_version, seed, status, started_ms, finished_ms)
             VALUES (1, 1, 1, 1, 'openai', 'm', 'aces', 'manual', 'skillwatch 0.0.1', 3, 'completed',
                     1700000000000, 1700000060000);
         INSERT INTO trials (id, run_id, case_id, condition, attempt, status, started_ms) VALUES
             (1, 1, 1, 'baseline', 0, 'completed', 0), (2, 1, 1, 'skill', 0, 'completed', 0),
             (3, 1, 2, 'baseline', 0, 'completed', 0), (4, 1, 2, 'skill', 0, 'completed', 0);
         INSERT INTO metric_scores VALUES (1, 'goal_accuracy', 0.25), (2, 'goal_accuracy', 0.75),
             (3, 'goal_accuracy', 0.5), (4, 'goal_accuracy', 0.75);
         PRAGMA user_version = 1;",
        skillwatch_daemon::store::APPLICATION_ID
    ))
    .unwrap();
}

fn user_version(path: &Path) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn a_database_from_the_first_schema_is_upgraded_and_keeps_its_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("old.sqlite3");
    schema_1_database(&db);
    assert_eq!(user_version(&db), 1);
    let out = sw(&db, &["history", "legacy", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        user_version(&db),
        skillwatch_daemon::store::latest_version() as i64
    );
    let report = json(&out);
    let lift = report["latest_per_model"][0]["headline"]["aces"]["lift"]
        .as_f64()
        .unwrap();
    assert!(close(lift, (0.5 + 0.25) / 2.0), "{lift}");
    assert_eq!(report["runs"][0]["run"]["tool_version"], "skillwatch 0.0.1");
    let summaries: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM run_summaries", [], |r| r.get(0))
        .unwrap();
    assert_eq!(summaries, 1, "the summary computed on first read is kept");
}

#[test]
fn a_database_from_a_newer_skillwatch_is_refused_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("new.sqlite3");
    schema_1_database(&db);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    for args in [
        &["history", "legacy"][..],
        &["import", example_file().to_str().unwrap()][..],
    ] {
        let out = sw(&db, args);
        assert_eq!(out.status.code(), Some(2));
        let err = stderr(&out);
        assert!(err.contains("schema version 99"), "{err}");
        assert!(err.contains("upgrade skillwatch"), "{err}");
        assert!(err.contains("not modified"), "{err}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(user_version(&db), 99);
}
