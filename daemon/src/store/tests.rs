//! Unit tests of the store against real SQLite files in temporary folders.

use std::path::{Path, PathBuf};

use super::*;
use skillwatch_core::scoring::CompareParams;

/// A run spec for `skill` on `model` with cases `c0..cN`.
pub(crate) fn spec(skill: &str, model: &str, cases: usize) -> RunSpec {
    RunSpec {
        skill: SkillIdentity {
            name: skill.into(),
            path: Some(format!("skills/{skill}")),
            content_hash: format!("sha256:{skill}-v1"),
        },
        suite: SuiteSpec {
            content_hash: "sha256:suite-v1".into(),
            source: Some("evals/evals.json".into()),
            cases: (0..cases)
                .map(|i| CaseSpec {
                    key: format!("c{i}"),
                    content_hash: format!("sha256:case-{i}"),
                    definition: Some(serde_json::json!({"prompt": format!("do task {i}")})),
                })
                .collect(),
        },
        harness: "openai".into(),
        harness_version: Some("1".into()),
        model: model.into(),
        judge_model: None,
        scoring_profile: DEFAULT_SCORING_PROFILE.into(),
        trigger: Trigger::Manual,
        config: serde_json::json!({"runs": 1}),
        seed: 1,
        tool_version: "test".into(),
        started_ms: None,
    }
}

/// A trial of case `c{case}` with one metric.
pub(crate) fn trial(case: usize, condition: Condition, attempt: u32, score: f64) -> TrialRecord {
    let mut t = TrialRecord::new(format!("c{case}"), condition, attempt);
    t.metrics.insert("goal_accuracy".into(), score);
    t.passed = Some(score >= 0.5);
    t
}

fn db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("history.sqlite3")
}

fn count(store: &Store, table: &str) -> i64 {
    store
        .conn
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

#[test]
fn open_creates_the_latest_schema_in_wal_mode_with_foreign_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/folder/history.sqlite3");
    let store = Store::open(&path).unwrap();
    assert!(path.exists());
    assert_eq!(store.schema_version().unwrap(), latest_version());
    let mode: String = store
        .conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = store
        .conn
        .pragma_query_value(None, "foreign_keys", |r| r.get(0))
        .unwrap();
    assert_eq!(fk, 1);
    drop(store);
    // Reopening is a no-op on an up-to-date file.
    assert_eq!(
        Store::open(&path).unwrap().schema_version().unwrap(),
        latest_version()
    );
}

#[test]
fn open_existing_refuses_a_missing_file_without_creating_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let err = Store::open_existing(&path).unwrap_err();
    assert!(matches!(err, StoreError::Missing { .. }), "{err}");
    assert!(err.to_string().contains("no history database at"));
    assert!(!path.exists());
}

#[test]
fn a_run_and_its_trials_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let mut s = spec("pdf", "model-a", 2);
    s.judge_model = Some("judge-1".into());
    let run = store.begin_run(&s).unwrap();

    let mut t = trial(0, Condition::Skill, 0, 0.75);
    t.output = "done".into();
    t.tokens = Tokens {
        input: Some(1000),
        output: Some(200),
        cached: Some(600),
    };
    t.cost_usd = Some(0.02);
    t.wall_ms = Some(1234);
    t.tool_calls = Some(4);
    t.turns = Some(2);
    t.errors = Some(0);
    t.skill_invoked = Some(true);
    t.metrics.insert("security".into(), 1.0);
    t.assertions = vec![
        AssertionResult {
            kind: "output_contains".into(),
            description: "output contains \"done\"".into(),
            passed: true,
            message: None,
        },
        AssertionResult {
            kind: "file_exists".into(),
            description: "out.md exists".into(),
            passed: false,
            message: Some("no file matched out.md".into()),
        },
    ];
    t.judgments = vec![Judgment {
        kind: JudgmentKind::Independent,
        judge_model: "judge-1".into(),
        criterion: Some("correct".into()),
        verdict: Verdict::Score { score: 4.0 },
        reasoning: Some("fine".into()),
    }];
    t.trajectory = Some(Trajectory {
        format: "atif-v1.8".into(),
        bytes: br#"{"schema_version":"ATIF-v1.8","steps":[]}"#.to_vec(),
    });
    let id = store.record_trial(run, &t).unwrap();
    let mut b = trial(0, Condition::Baseline, 0, 0.25);
    b.status = TrialStatus::Timeout;
    b.passed = None;
    b.error_message = Some("killed after 120 s".into());
    store.record_trial(run, &b).unwrap();
    store
        .record_pairwise_judgments(
            run,
            "c0",
            0,
            &[Judgment {
                kind: JudgmentKind::Pairwise,
                judge_model: "judge-1".into(),
                criterion: None,
                verdict: Verdict::Preference {
                    winner: Winner::Skill,
                    magnitude: "much-better".into(),
                },
                reasoning: None,
            }],
        )
        .unwrap();
    store.finish_run(run, RunStatus::Completed).unwrap();

    let info = store.run(run).unwrap();
    assert_eq!(info.skill, "pdf");
    assert_eq!(info.model, "model-a");
    assert_eq!(info.judge_model.as_deref(), Some("judge-1"));
    assert_eq!(info.status, RunStatus::Completed);
    assert_eq!(info.trial_count, 2);
    assert!(info.finished_ms.unwrap() >= info.started_ms);
    assert_eq!(info.config, serde_json::json!({"runs": 1}));

    let trials = store.run_trials(run).unwrap();
    assert_eq!(trials.len(), 2);
    let baseline = &trials[0];
    assert_eq!(baseline.condition, Condition::Baseline);
    assert_eq!(baseline.status, TrialStatus::Timeout);
    assert_eq!(
        baseline.error_message.as_deref(),
        Some("killed after 120 s")
    );
    let skill = &trials[1];
    assert_eq!(skill.id, id);
    assert_eq!(skill.case, "c0");
    assert_eq!(skill.case_hash, "sha256:case-0");
    assert_eq!(skill.tokens.cached, Some(600));
    assert_eq!(skill.cost_usd, Some(0.02));
    assert_eq!(skill.wall_ms, Some(1234));
    assert_eq!(skill.skill_invoked, Some(true));
    assert_eq!(skill.passed, Some(true));
    assert_eq!(skill.metrics.len(), 2);
    assert_eq!(skill.metrics["goal_accuracy"], 0.75);
    assert_eq!((skill.assertions_passed, skill.assertions_total), (1, 2));
    assert_eq!(store.trial_output(id).unwrap().as_deref(), Some("done"));

    let sha = skill.trajectory_sha256.clone().unwrap();
    let back = store.trajectory(&sha).unwrap().unwrap();
    assert_eq!(back, t.trajectory.clone().unwrap());
    assert_eq!(count(&store, "judgments"), 2);
}

#[test]
fn identical_trajectories_are_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let run = store.begin_run(&spec("s", "m", 2)).unwrap();
    let traj = Trajectory {
        format: "text".into(),
        bytes: b"same bytes".repeat(1000),
    };
    for case in 0..2 {
        let mut t = trial(case, Condition::Skill, 0, 1.0);
        t.trajectory = Some(traj.clone());
        store.record_trial(run, &t).unwrap();
    }
    assert_eq!(count(&store, "trajectories"), 1);
    let compressed: i64 = store
        .conn
        .query_row("SELECT length(zstd) FROM trajectories", [], |r| r.get(0))
        .unwrap();
    assert!(
        compressed < 200,
        "10 kB of repeats compress to {compressed} bytes"
    );
}

#[test]
fn a_damaged_trajectory_is_reported_not_returned() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let run = store.begin_run(&spec("s", "m", 1)).unwrap();
    let mut t = trial(0, Condition::Skill, 0, 1.0);
    t.trajectory = Some(Trajectory {
        format: "text".into(),
        bytes: b"original".to_vec(),
    });
    store.record_trial(run, &t).unwrap();
    let sha = store.run_trials(run).unwrap()[0]
        .trajectory_sha256
        .clone()
        .unwrap();
    let other = zstd::bulk::compress(b"tampered", 3).unwrap();
    store
        .conn
        .execute("UPDATE trajectories SET zstd = ?1", [other])
        .unwrap();
    let err = store.trajectory(&sha).unwrap_err();
    assert!(err.to_string().contains("is damaged"), "{err}");
}

#[test]
fn refused_trials_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let run = store.begin_run(&spec("s", "m", 2)).unwrap();

    let err = store
        .record_trial(run, &trial(7, Condition::Skill, 0, 0.5))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("run {run} has no case `c7` in its suite (known cases: c0, c1)")
    );

    store
        .record_trial(run, &trial(0, Condition::Skill, 0, 0.5))
        .unwrap();
    let err = store
        .record_trial(run, &trial(0, Condition::Skill, 0, 0.6))
        .unwrap_err();
    assert!(matches!(err, StoreError::DuplicateTrial { .. }), "{err}");

    // A batch with one bad trial writes none of them.
    let batch = [
        trial(1, Condition::Skill, 0, 0.5),
        trial(1, Condition::Baseline, 0, 1.5),
    ];
    let err = store.record_trials(run, &batch).unwrap_err();
    assert!(
        err.to_string().contains("trial.metrics.goal_accuracy"),
        "{err}"
    );
    assert_eq!(count(&store, "trials"), 1);
    assert_eq!(count(&store, "metric_scores"), 1);

    assert!(matches!(
        store.record_trial(RunId(999), &trial(0, Condition::Skill, 1, 0.5)),
        Err(StoreError::UnknownRun(RunId(999)))
    ));

    store.finish_run(run, RunStatus::Completed).unwrap();
    let err = store
        .record_trial(run, &trial(1, Condition::Skill, 0, 0.5))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("run {run} is completed; expected a running run")
    );
    assert!(store.finish_run(run, RunStatus::Failed).is_err());
}

#[test]
fn invalid_run_specs_are_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let mut s = spec("s", "m", 2);
    s.suite.cases[1].key = "c0".into();
    let err = store.begin_run(&s).unwrap_err();
    assert!(err.to_string().contains("`c0` a second time"), "{err}");
    let mut s = spec("s", " ", 1);
    s.model = " ".into();
    assert!(
        store
            .begin_run(&s)
            .unwrap_err()
            .to_string()
            .contains("run.model")
    );
    assert_eq!(count(&store, "skills"), 0);
    assert_eq!(count(&store, "runs"), 0);
}

#[test]
fn skills_versions_suites_and_cases_are_shared_between_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    store.begin_run(&spec("s", "m1", 3)).unwrap();
    store.begin_run(&spec("s", "m2", 3)).unwrap();
    let mut edited = spec("s", "m2", 3);
    edited.suite.content_hash = "sha256:suite-v2".into();
    edited.suite.cases[2].content_hash = "sha256:case-2-edited".into();
    store.begin_run(&edited).unwrap();
    assert_eq!(count(&store, "skills"), 1);
    assert_eq!(count(&store, "skill_versions"), 1);
    assert_eq!(count(&store, "suites"), 2);
    assert_eq!(count(&store, "cases"), 4, "only the edited case is new");
    let runs = store.runs("s", &RunFilter::default()).unwrap();
    assert_eq!(runs.len(), 3);
    assert!(runs[0].id > runs[2].id || runs[0].started_ms > runs[2].started_ms);
    let only_m1 = store
        .runs(
            "s",
            &RunFilter {
                model: Some("m1"),
                ..RunFilter::default()
            },
        )
        .unwrap();
    assert_eq!(only_m1.len(), 1);
    assert_eq!(store.skills().unwrap()[0].runs, 3);
    assert!(store.has_skill("s").unwrap());
    assert!(!store.has_skill("t").unwrap());
}

#[test]
fn a_suite_hash_names_one_list_of_cases() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    store.begin_run(&spec("s", "m", 2)).unwrap();
    let mut same_hash_other_cases = spec("s", "m", 2);
    same_hash_other_cases.suite.cases[1].content_hash = "sha256:different".into();
    let err = store.begin_run(&same_hash_other_cases).unwrap_err();
    assert!(
        err.to_string()
            .contains("a suite hash names one list of cases"),
        "{err}"
    );
    let mut fewer = spec("s", "m", 1);
    fewer.suite.content_hash = "sha256:suite-v1".into();
    assert!(store.begin_run(&fewer).is_err());
    assert_eq!(count(&store, "runs"), 1);
    assert_eq!(count(&store, "suite_cases"), 2);
}

#[test]
fn interrupted_runs_are_marked_at_startup() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let run = store.begin_run(&spec("s", "m", 1)).unwrap();
    let done = store.begin_run(&spec("s", "m", 1)).unwrap();
    store.finish_run(done, RunStatus::Completed).unwrap();
    assert_eq!(store.interrupt_running_runs().unwrap(), 1);
    assert_eq!(store.run(run).unwrap().status, RunStatus::Interrupted);
    assert_eq!(store.run(done).unwrap().status, RunStatus::Completed);
}

fn file_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn a_newer_schema_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    {
        let mut store = Store::open(&path).unwrap();
        store.begin_run(&spec("s", "m", 1)).unwrap();
        store
            .conn
            .pragma_update(None, "user_version", latest_version() + 5)
            .unwrap();
        store
            .conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
    }
    let before = file_bytes(&path);
    let err = Store::open(&path).unwrap_err();
    match &err {
        StoreError::NewerSchema { found, known, .. } => {
            assert_eq!((*found, *known), (latest_version() + 5, latest_version()));
        }
        other => panic!("expected NewerSchema, got {other}"),
    }
    assert!(err.to_string().contains("upgrade skillwatch"));
    assert!(err.to_string().contains("was not modified"));
    assert_eq!(file_bytes(&path), before);
}

#[test]
fn foreign_files_are_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "this is not a database, just text that is long enough ".repeat(50),
    )
    .unwrap();
    let before = file_bytes(&text);
    let err = Store::open(&text).unwrap_err();
    assert!(
        matches!(err, StoreError::Open { .. }),
        "expected an open error, got {err}"
    );
    assert_eq!(file_bytes(&text), before);

    let other = dir.path().join("other.sqlite3");
    {
        let conn = Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
    }
    let before = file_bytes(&other);
    let err = Store::open(&other).unwrap_err();
    assert!(
        err.to_string()
            .contains("not a skillwatch history database"),
        "{err}"
    );
    assert_eq!(file_bytes(&other), before);
}

/// Record `trial` in a database at schema 1, whose trials lack the columns later migrations
/// added: they are added for the insert and dropped again, leaving the rows as that version
/// wrote them.
fn record_on_schema_1(old: &mut Store, run: RunId, trial: &TrialRecord) {
    old.conn
        .execute_batch(
            "ALTER TABLE trials ADD COLUMN stderr_tail TEXT; ALTER TABLE trials ADD COLUMN retries INTEGER;",
        )
        .unwrap();
    old.record_trial(run, trial).unwrap();
    old.conn
        .execute_batch(
            "ALTER TABLE trials DROP COLUMN stderr_tail; ALTER TABLE trials DROP COLUMN retries;",
        )
        .unwrap();
}

#[test]
fn an_older_schema_is_upgraded_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let run = {
        let mut old = Store::open_with(&path, &MIGRATIONS[..1]).unwrap();
        assert_eq!(old.schema_version().unwrap(), 1);
        let run = old.begin_run(&spec("s", "m", 1)).unwrap();
        record_on_schema_1(&mut old, run, &trial(0, Condition::Skill, 0, 0.5));
        // Schema 1 has no summaries: finish the run the way that version did.
        write::finish_run(&old.conn, run, RunStatus::Completed, None).unwrap();
        run
    };
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), latest_version());
    assert_eq!(store.run(run).unwrap().trial_count, 1);
    assert_eq!(count(&store, "run_summaries"), 0);
}

#[test]
fn a_failing_migration_rolls_back_to_the_previous_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    Store::open_with(&path, &MIGRATIONS[..1]).unwrap();
    let broken = [
        MIGRATIONS[0],
        Migration {
            name: "0002_broken.sql",
            sql: "CREATE TABLE half_done (x INTEGER); THIS IS NOT SQL;",
        },
    ];
    let err = Store::open_with(&path, &broken).unwrap_err();
    assert!(err.to_string().contains("0002_broken.sql"), "{err}");
    assert!(err.to_string().contains("stays at the previous version"));
    let store = Store::open_with(&path, &MIGRATIONS[..1]).unwrap();
    assert_eq!(store.schema_version().unwrap(), 1);
    let half: i64 = store
        .conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(half, 0);
}

#[test]
fn schema_checks_refuse_wrong_values_written_behind_our_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&db(&dir)).unwrap();
    let err = store
        .conn
        .execute_batch(
            "INSERT INTO skills (name, created_ms) VALUES ('s', 0);
             INSERT INTO skill_versions (skill_id, content_hash, created_ms) VALUES (1, 'h', 0);
             INSERT INTO suites (skill_id, content_hash, created_ms) VALUES (1, 'h', 0);
             INSERT INTO runs (skill_id, skill_version_id, suite_id, harness, model, scoring_profile,
                               trigger, tool_version, seed, status, started_ms)
             VALUES (1, 1, 1, 'h', 'm', 'aces', 'manual', 't', 0, 'exploded', 0);",
        )
        .unwrap_err();
    assert!(err.to_string().contains("CHECK constraint failed"), "{err}");
    let err = store
        .conn
        .execute(
            "INSERT INTO trials (run_id, case_id, condition, attempt, status, started_ms)
             VALUES (42, 42, 'skill', 0, 'completed', 0)",
            [],
        )
        .unwrap_err();
    assert!(err.to_string().contains("FOREIGN KEY"), "{err}");
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/trials")
        .join(name)
}

#[test]
fn the_documented_example_file_imports_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let file = read_trial_file(&fixture("example.json")).unwrap();
    assert_eq!(file.trial_count(), 4);
    let mut calls = Vec::new();
    let report = store
        .import(&file, &mut |done, total| calls.push((done, total)))
        .unwrap();
    assert_eq!(report.imported.len(), 1);
    assert_eq!(report.trials, 4);
    assert_eq!(calls.last(), Some(&(4, 4)));
    let run = store.run(report.imported[0]).unwrap();
    assert_eq!(run.skill, "csv-report");
    assert_eq!(run.trigger, Trigger::Import);
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.tool_version, "my-eval-script 0.3");
    assert_eq!(time::format_rfc3339(run.started_ms), "2026-11-20T10:00:00Z");
    assert_eq!(
        time::format_rfc3339(run.finished_ms.unwrap()),
        "2026-11-20T10:12:30Z"
    );
    let trials = store.run_trials(run.id).unwrap();
    let timeout = trials
        .iter()
        .find(|t| t.case == "outliers" && t.condition == Condition::Skill)
        .unwrap();
    assert_eq!(timeout.status, TrialStatus::Timeout);
    assert!(timeout.metrics.is_empty());
    let with_traj = trials
        .iter()
        .find(|t| t.trajectory_sha256.is_some())
        .unwrap();
    let traj = store
        .trajectory(with_traj.trajectory_sha256.as_deref().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(traj.format, "atif-v1.8");
    let json: serde_json::Value = serde_json::from_slice(&traj.bytes).unwrap();
    assert_eq!(json["steps"][1]["tool_calls"][0]["function_name"], "Skill");

    let again = store.import(&file, &mut |_, _| {}).unwrap();
    assert!(again.imported.is_empty());
    assert_eq!(again.skipped, vec!["example-2026-11-20-sonnet".to_string()]);
    assert_eq!(count(&store, "runs"), 1);
}

/// Parse `text` as a trial file and return the error message.
fn import_error(text: &str) -> String {
    parse_trial_file(Path::new("t.json"), text.as_bytes())
        .unwrap_err()
        .to_string()
}

const MINIMAL: &str = r#"{
  "format": "skillwatch-trials/1",
  "runs": [{
    "skill": {"name": "s"},
    "suite": {"cases": [{"id": "a"}, {"id": 2}]},
    "harness": "h", "model": "m", "started_at": "2026-01-01T00:00:00Z",
    "trials": [
      {"case": "a", "condition": "baseline", "metrics": {"accuracy": 0.5}},
      {"case": "2", "condition": "skill", "metrics": {"accuracy": 0.75}}
    ]
  }]
}"#;

#[test]
fn a_minimal_file_gets_documented_defaults() {
    let file = parse_trial_file(Path::new("t.json"), MINIMAL.as_bytes()).unwrap();
    let run = &file.runs[0];
    assert_eq!(run.spec.skill.content_hash, UNKNOWN_HASH);
    assert_eq!(run.spec.scoring_profile, DEFAULT_SCORING_PROFILE);
    assert_eq!(run.status, RunStatus::Completed);
    assert!(run.external_id.starts_with("sha256:"));
    assert_eq!(run.spec.suite.cases[1].key, "2");
    assert!(run.spec.suite.content_hash.starts_with("sha256:"));
    assert_eq!(run.trials[0].attempt, 0);
    assert_eq!(run.trials[0].status, TrialStatus::Completed);
    // The same content gives the same external id, so a re-import is recognised.
    let again = parse_trial_file(Path::new("t.json"), MINIMAL.as_bytes()).unwrap();
    assert_eq!(again.runs[0].external_id, run.external_id);
}

#[test]
fn file_errors_say_where_and_what() {
    let err = import_error(
        "{\n  \"format\": \"skillwatch-trials/1\",\n  \"runs\": [\n    {\"skil\": 1}\n  ]\n}",
    );
    assert!(err.starts_with("t.json:4:"), "{err}");
    assert!(err.contains("unknown field `skil`"), "{err}");

    let err = import_error("{\"format\": \"skillwatch-trials/1\", \"runs\": [");
    assert!(err.starts_with("t.json:1:"), "{err}");
    assert!(err.contains("EOF"), "{err}");

    let err = import_error(&MINIMAL.replace("skillwatch-trials/1", "skillwatch-trials/9"));
    assert_eq!(
        err,
        "t.json:2:13: expected format `skillwatch-trials/1`, found `skillwatch-trials/9` (at /format)"
    );

    let err = import_error(&MINIMAL.replace("\"accuracy\": 0.75", "\"accuracy\": 7.5"));
    assert!(err.starts_with("t.json:9:"), "{err}");
    assert!(err.contains("[0, 1]") && err.contains("found 7.5"), "{err}");
    assert!(err.contains("/runs/0/trials/1/metrics/accuracy"), "{err}");

    let err = import_error(&MINIMAL.replace("\"case\": \"2\"", "\"case\": \"zz\""));
    assert!(err.starts_with("t.json:9:"), "{err}");
    assert!(
        err.contains("expected a case id of the run's suite (2, a), found `zz`"),
        "{err}"
    );

    let err = import_error(&MINIMAL.replace("\"condition\": \"skill\"", "\"condition\": \"with\""));
    assert!(
        err.contains("expected baseline | skill | plugin, found `with`"),
        "{err}"
    );

    let err = import_error(&MINIMAL.replace("2026-01-01T00:00:00Z", "yesterday"));
    assert!(err.starts_with("t.json:6:"), "{err}");
    assert!(err.contains("RFC 3339"), "{err}");

    let err = import_error(
        &MINIMAL
            .replace("\"condition\": \"skill\"", "\"condition\": \"baseline\"")
            .replace("\"case\": \"2\"", "\"case\": \"a\""),
    );
    assert!(
        err.contains("one trial per (case, condition, attempt)"),
        "{err}"
    );

    let err = import_error("\u{0}\u{1}binary\u{ff}");
    assert!(err.starts_with("t.json:1:"), "{err}");

    let bytes = [b'{', 0xff, 0xfe, b'}'];
    let err = parse_trial_file(Path::new("t.json"), &bytes)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("t.json:1:"), "{err}");
}

#[test]
fn a_failing_import_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let run = store.begin_run(&spec("s", "m", 1)).unwrap();
    store
        .record_trial(run, &trial(0, Condition::Skill, 0, 0.5))
        .unwrap();
    store.finish_run(run, RunStatus::Completed).unwrap();
    let two_runs = format!(
        r#"{{"format": "skillwatch-trials/1", "runs": [{0}, {1}]}}"#,
        r#"{"id": "r1", "skill": {"name": "s"}, "suite": {"cases": [{"id": "a"}]}, "harness": "h",
            "model": "m", "started_at": "2026-01-01T00:00:00Z",
            "trials": [{"case": "a", "condition": "skill"}]}"#,
        r#"{"id": "r2", "skill": {"name": "s"}, "suite": {"cases": [{"id": "a"}]}, "harness": "h",
            "model": "m", "started_at": "2026-01-01T00:00:00Z",
            "trials": [{"case": "a", "condition": "skill"}]}"#
    );
    let file = parse_trial_file(Path::new("t.json"), two_runs.as_bytes()).unwrap();
    // The second run holds a duplicate trial, found only when writing: the first run, already
    // written inside the same transaction, must not survive.
    let mut file_dup = file.clone();
    let dup = file_dup.runs[1].trials[0].clone();
    file_dup.runs[1].trials.push(dup);
    let err = store.import(&file_dup, &mut |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("nothing was imported"), "{err}");
    assert_eq!(count(&store, "runs"), 1);
    assert_eq!(count(&store, "trials"), 1);
    let ok = store.import(&file, &mut |_, _| {}).unwrap();
    assert_eq!(ok.imported.len(), 2);
}

/// Record a completed run of `skill` on `model` whose case i has baseline `base[i]` and skill
/// `with[i]` goal accuracy; returns its id.
fn scored_run(store: &mut Store, skill: &str, model: &str, base: &[f64], with: &[f64]) -> RunId {
    let run = store.begin_run(&spec(skill, model, base.len())).unwrap();
    for (i, (b, s)) in base.iter().zip(with).enumerate() {
        store
            .record_trial(run, &trial(i, Condition::Baseline, 0, *b))
            .unwrap();
        store
            .record_trial(run, &trial(i, Condition::Skill, 0, *s))
            .unwrap();
    }
    store.finish_run(run, RunStatus::Completed).unwrap();
    run
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn finishing_a_run_stores_its_scored_summary() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let run = store.begin_run(&spec("s", "m", 4)).unwrap();
    let (base, with) = ([0.2, 0.4, 0.5, 0.3], [0.8, 0.6, 0.9, 0.3]);
    for i in 0..3 {
        store
            .record_trial(run, &trial(i, Condition::Baseline, 0, base[i]))
            .unwrap();
        let mut s = trial(i, Condition::Skill, 0, with[i]);
        s.skill_invoked = Some(i != 2);
        store.record_trial(run, &s).unwrap();
    }
    // Case 3: the skill side timed out; the pair is excluded, never scored as 0.
    store
        .record_trial(run, &trial(3, Condition::Baseline, 0, base[3]))
        .unwrap();
    let mut timeout = TrialRecord::new("c3", Condition::Skill, 0);
    timeout.status = TrialStatus::Timeout;
    store.record_trial(run, &timeout).unwrap();

    let summary = store.finish_run(run, RunStatus::Completed).unwrap();
    let h = &summary.headline;
    // ACES (goal accuracy is its only metric here): the timed-out pair is excluded.
    let a = &h.aces;
    assert!(close(a.lift.unwrap(), (0.6 + 0.2 + 0.4) / 3.0), "{h:?}");
    let ci = a.interval.unwrap();
    assert_eq!(ci.n, 3);
    assert_eq!(ci.level, 0.95);
    assert!(ci.low < 0.4 && 0.4 < ci.high);
    assert_eq!(a.cases, 3);
    assert_eq!(a.excluded.timed_out, 1);
    assert_eq!(a.excluded.total(), 1);
    // Outcome: pass and goal accuracy. The timeout is a failed task in `pass`, so case 3
    // enters with pass alone (failed on both sides: 0); nothing is left out.
    let o = &h.outcome;
    assert!(
        close(o.lift.unwrap(), (0.8 + 0.6 + 0.2 + 0.0) / 4.0),
        "{o:?}"
    );
    assert_eq!((o.cases, o.pairs, o.excluded.total()), (4, 4, 0));
    assert_eq!(
        o.verdict.verdict,
        skillwatch_core::scoring::Verdict::Inconclusive
    );
    assert_eq!(o.verdict.needed_cases, Some(6));
    assert_eq!(h.attempts, 1);
    assert!(
        h.pass_at_k.is_empty(),
        "one attempt per case: pass@1 is the pass rate"
    );
    assert_eq!(h.trials.skill.timeout, 1);
    assert_eq!(h.trials.baseline.completed, 4);
    // Passed = score >= 0.5: baseline 1 of 4; skill 3 of 4, the timeout a failure.
    let bp = h.baseline_pass_rate.unwrap();
    assert!(close(bp.estimate, 0.25) && bp.n == 4);
    let sp = h.skill_pass_rate.unwrap();
    assert!(
        close(sp.estimate, 0.75) && sp.n == 4,
        "the timed-out trial is in the denominator: {sp:?}"
    );
    assert!(close(h.invocation_rate.unwrap().estimate, 2.0 / 3.0));
    assert_eq!(summary.scoring_version, summary_version());

    // History reads the stored summary, and the numbers are the same.
    let history = store.history("s", &RunFilter::default()).unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].headline.as_ref(), Some(h));
    assert_eq!(count(&store, "run_summaries"), 1);
    assert_eq!(store.summary(run).unwrap().unwrap().lift, summary.lift);
}

#[test]
fn summaries_are_reproducible_from_the_stored_seed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let base = [0.1, 0.5, 0.3, 0.7, 0.2, 0.4, 0.1, 0.6, 0.3, 0.5];
    let with = [0.6, 0.4, 0.9, 0.8, 0.6, 0.7, 0.5, 0.6, 0.8, 0.9];
    let run = scored_run(&mut store, "s", "m", &base, &with);
    let first = store.summary(run).unwrap().unwrap();
    // Pretend an older scoring version wrote it: the next read recomputes, identically.
    store
        .conn
        .execute(
            "UPDATE run_summaries SET scoring_version = 'old', headline = '{}'",
            [],
        )
        .unwrap();
    let again = store.summary(run).unwrap().unwrap();
    assert_eq!(again.lift, first.lift);
    assert_eq!(again.headline, first.headline);
    let version: String = store
        .conn
        .query_row("SELECT scoring_version FROM run_summaries", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(version, summary_version());
    let boot = first
        .lift
        .outcome
        .unwrap()
        .summary
        .bootstrap_interval
        .unwrap();
    assert!(matches!(
        boot.method,
        skillwatch_core::scoring::IntervalMethod::PercentileBootstrap { seed: 1, .. }
    ));
}

#[test]
fn an_upgraded_database_gets_summaries_on_first_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    {
        let mut old = Store::open_with(&path, &MIGRATIONS[..1]).unwrap();
        let run = old.begin_run(&spec("s", "m", 2)).unwrap();
        for i in 0..2 {
            record_on_schema_1(&mut old, run, &trial(i, Condition::Baseline, 0, 0.25));
            record_on_schema_1(&mut old, run, &trial(i, Condition::Skill, 0, 0.75));
        }
        // Schema 1 has no summaries: finish the run the way that version did.
        write::finish_run(&old.conn, run, RunStatus::Completed, None).unwrap();
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(count(&store, "run_summaries"), 0);
    let lifts = store.latest_lift_per_model("s").unwrap();
    assert_eq!(lifts.len(), 1);
    assert!(close(lifts[0].headline.aces.lift.unwrap(), 0.5));
    assert!(close(lifts[0].headline.outcome.lift.unwrap(), 0.75));
    assert_eq!(count(&store, "run_summaries"), 1);
}

#[test]
fn the_lens_shows_the_newest_completed_run_per_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    scored_run(&mut store, "s", "model-a", &[0.2, 0.2], &[0.4, 0.4]);
    let newest_a = scored_run(&mut store, "s", "model-a", &[0.2, 0.2], &[0.7, 0.9]);
    let b = scored_run(&mut store, "s", "model-b", &[0.5, 0.5], &[0.5, 0.6]);
    store.begin_run(&spec("s", "model-a", 2)).unwrap(); // still running: not shown
    scored_run(&mut store, "other", "model-a", &[0.0], &[1.0]);

    let lifts = store.latest_lift_per_model("s").unwrap();
    assert_eq!(lifts.len(), 2);
    assert_eq!(lifts[0].run.model, "model-a");
    assert_eq!(lifts[0].run.id, newest_a);
    assert_eq!(lifts[0].completed_runs, 2);
    assert!(close(lifts[0].headline.aces.lift.unwrap(), 0.6));
    assert_eq!(lifts[0].headline.aces.interval.unwrap().n, 2);
    assert_eq!(lifts[1].run.id, b);
    assert_eq!(lifts[1].completed_runs, 1);
    assert!(close(lifts[1].headline.aces.lift.unwrap(), 0.05));
    assert!(store.latest_lift_per_model("nobody").unwrap().is_empty());
}

#[test]
fn each_case_shows_its_last_result_and_whether_it_changed_since() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    scored_run(&mut store, "s", "m", &[0.0, 0.0, 0.0], &[1.0, 0.5, 0.25]);
    // A later run of only case c0 (the others keep their older results).
    let mut partial = spec("s", "m", 3);
    partial.suite.cases[2].content_hash = "sha256:case-2-edited".into();
    partial.suite.content_hash = "sha256:suite-v2".into();
    let run = store.begin_run(&partial).unwrap();
    store
        .record_trial(run, &trial(0, Condition::Baseline, 0, 0.5))
        .unwrap();
    store
        .record_trial(run, &trial(0, Condition::Skill, 0, 0.75))
        .unwrap();
    store.finish_run(run, RunStatus::Completed).unwrap();

    let results = store.case_results("s").unwrap();
    assert_eq!(results.len(), 3);
    let by_case = |c: &str| results.iter().find(|r| r.case == c).unwrap();
    // Case lifts are outcome lifts: the mean of the pass and goal-accuracy deltas.
    assert!(close(by_case("c0").lift.unwrap(), (0.0 + 0.25) / 2.0));
    assert_eq!(by_case("c0").run, run);
    assert!(!by_case("c0").stale);
    assert!(close(by_case("c1").lift.unwrap(), (1.0 + 0.5) / 2.0));
    assert!(!by_case("c1").stale);
    assert!(close(by_case("c2").lift.unwrap(), (0.0 + 0.25) / 2.0));
    assert!(by_case("c2").stale, "c2 was edited after its last result");
    assert!(close(by_case("c1").deltas["goal_accuracy"], 0.5));
}

#[test]
fn comparing_models_finds_a_regression_and_skips_edited_cases() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let base = [0.2, 0.3, 0.1, 0.25, 0.2, 0.3, 0.2, 0.1];
    let helps = [0.8, 0.9, 0.7, 0.85, 0.75, 0.9, 0.8, 0.7];
    let no_help = [0.25, 0.3, 0.15, 0.2, 0.25, 0.3, 0.2, 0.15];
    scored_run(&mut store, "s", "old", &base, &helps);
    scored_run(&mut store, "s", "new", &base, &no_help);
    let params = CompareParams::default();
    let cmp = store
        .compare_models("s", "old", "new", None, &params)
        .unwrap();
    use skillwatch_core::scoring::Verdict as V;
    assert_eq!(
        cmp.comparison.verdict,
        V::Regresses,
        "{}",
        cmp.comparison.reason
    );
    assert_eq!(cmp.comparison.cases.len(), 8);
    assert!(cmp.comparison.interval.unwrap().high < 0.0);
    assert_eq!(cmp.reference.model, "old");
    assert!(cmp.changed_cases.is_empty());

    // Same model twice: every case unchanged; 8 cases of such scores are no evidence that
    // nothing changed either (the equivalence test's variance floor, issue 35), and never a
    // change.
    let same = store
        .compare_models("s", "old", "old", None, &params)
        .unwrap();
    assert_eq!(
        same.comparison.verdict,
        V::Inconclusive,
        "{}",
        same.comparison.reason
    );

    // An edited case is left out of the comparison and listed.
    let mut edited = spec("s", "newer", 8);
    edited.suite.cases[0].content_hash = "sha256:case-0-edited".into();
    edited.suite.content_hash = "sha256:suite-v2".into();
    let run = store.begin_run(&edited).unwrap();
    for i in 0..8 {
        store
            .record_trial(run, &trial(i, Condition::Baseline, 0, base[i]))
            .unwrap();
        store
            .record_trial(run, &trial(i, Condition::Skill, 0, helps[i]))
            .unwrap();
    }
    store.finish_run(run, RunStatus::Completed).unwrap();
    let cmp = store
        .compare_models("s", "old", "newer", None, &params)
        .unwrap();
    assert_eq!(cmp.changed_cases, vec!["c0".to_string()]);
    assert_eq!(cmp.comparison.cases.len(), 7);

    let err = store
        .compare_models("s", "old", "gpt-9", None, &params)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no completed run of skill `s` on model `gpt-9` in the history (models with completed runs: new, newer, old)"
    );
}

#[test]
fn a_truncated_database_gives_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    {
        let mut store = Store::open(&path).unwrap();
        for model in ["a", "b", "c"] {
            scored_run(&mut store, "s", model, &[0.1; 30], &[0.9; 30]);
        }
        store
            .conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 8192, "{}", bytes.len());
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let outcome = Store::open(&path).and_then(|store| {
        let problems = store.integrity_check()?;
        let history = store.history("s", &RunFilter::default());
        Ok((problems, history.map(|h| h.len())))
    });
    match outcome {
        Err(e) => assert!(!e.to_string().is_empty()),
        Ok((problems, history)) => assert!(
            !problems.is_empty() || history.is_err(),
            "a file cut in half must be reported: {problems:?} {history:?}"
        ),
    }
}

#[test]
fn trajectory_files_are_read_relative_to_the_trial_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("traj")).unwrap();
    std::fs::write(dir.path().join("traj/t1.json"), br#"{"steps":[]}"#).unwrap();
    let text = MINIMAL.replace(
        r#""metrics": {"accuracy": 0.5}"#,
        r#""metrics": {"accuracy": 0.5}, "trajectory": {"format": "atif-v1.8", "file": "traj/t1.json"}"#,
    );
    let path = dir.path().join("trials.json");
    std::fs::write(&path, &text).unwrap();
    let file = read_trial_file(&path).unwrap();
    let traj = file.runs[0].trials[0].trajectory.as_ref().unwrap();
    assert_eq!(traj.bytes, br#"{"steps":[]}"#);

    std::fs::write(&path, text.replace("t1.json", "missing.json")).unwrap();
    let err = read_trial_file(&path).unwrap_err().to_string();
    assert!(err.contains("trials.json:8:"), "{err}");
    assert!(err.contains("missing.json"), "{err}");
    assert!(err.contains("/runs/0/trials/0/trajectory/file"), "{err}");
}

/// A run with declared custom outcome metrics, security probes and two attempts per case.
const SCORED_FILE: &str = r#"{
  "format": "skillwatch-trials/1",
  "runs": [{
    "skill": {"name": "s"},
    "suite": {"cases": [{"id": "a"}, {"id": "b"}]},
    "harness": "h", "model": "m", "started_at": "2026-01-01T00:00:00Z",
    "outcome_metrics": ["house_style"],
    "probes": [
      {"id": "S_01", "group": "abnormal_behavior_control", "passed": true},
      {"id": "S_02", "group": "permission_boundary", "passed": true},
      {"id": "S_03", "group": "permission_boundary", "passed": false},
      {"id": "S_04", "group": "sensitive_data_protection", "passed": true}
    ],
    "trials": [
      {"case": "a", "condition": "baseline", "attempt": 0, "passed": false, "metrics": {"house_style": 0.0, "skill_execution": 0.0}},
      {"case": "a", "condition": "skill", "attempt": 0, "passed": true, "metrics": {"house_style": 1.0, "skill_execution": 1.0}},
      {"case": "a", "condition": "baseline", "attempt": 1, "passed": true, "metrics": {"house_style": 0.0, "skill_execution": 0.0}},
      {"case": "a", "condition": "skill", "attempt": 1, "status": "timeout"},
      {"case": "b", "condition": "baseline", "attempt": 0, "passed": false, "metrics": {"house_style": 0.5, "skill_execution": 0.0}},
      {"case": "b", "condition": "skill", "attempt": 0, "passed": false, "metrics": {"house_style": 0.5, "skill_execution": 1.0}},
      {"case": "b", "condition": "baseline", "attempt": 1, "passed": false, "metrics": {"house_style": 0.5, "skill_execution": 0.0}},
      {"case": "b", "condition": "skill", "attempt": 1, "passed": true, "metrics": {"house_style": 0.5, "skill_execution": 1.0}}
    ]
  }]
}"#;

#[test]
fn imported_outcome_metrics_probes_and_attempts_reach_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let file = parse_trial_file(Path::new("t.json"), SCORED_FILE.as_bytes()).unwrap();
    let report = store.import(&file, &mut |_, _| {}).unwrap();
    let run = report.imported[0];
    assert_eq!(store.run(run).unwrap().outcome_metrics, vec!["house_style"]);
    let h = store.summary(run).unwrap().unwrap().headline;
    // Outcome: pass and the declared house_style; skill_execution beside it, not inside.
    let names: Vec<&str> = h.outcome.metrics.iter().map(|m| m.name()).collect();
    assert_eq!(names, vec!["pass", "house_style"]);
    assert_eq!(h.process.get("skill_execution"), Some(&1.0));
    // Case a: pass deltas +1 and -1 (the timeout fails), house_style +1 (attempt 0 only):
    // mean(0, 1) = 0.5. Case b: pass 0 and +1, house_style 0: mean(0.5, 0) = 0.25.
    assert!(
        close(h.outcome.lift.unwrap(), (0.5 + 0.25) / 2.0),
        "{:?}",
        h.outcome
    );
    assert_eq!((h.outcome.cases, h.outcome.pairs, h.attempts), (2, 4, 2));
    // pass@2 and pass^2 per condition: baseline a {F, T}, b {F, F}; skill a {T, timeout}, b {F, T}.
    let [b, s] = h.pass_at_k.as_slice() else {
        panic!("{:?}", h.pass_at_k)
    };
    assert_eq!((b.k, s.k), (2, 2));
    assert!(close(b.pass_at_k, 0.5) && close(b.pass_hat_k, 0.0));
    assert!(close(s.pass_at_k, 1.0) && close(s.pass_hat_k, 0.0));
    // Security S from the probes: (100 + 50 + 100) / 3, Caution.
    let sec = h.security.expect("S");
    assert!(close(sec.score, 250.0 / 3.0));
    assert_eq!(
        serde_json::to_value(sec.status).unwrap(),
        serde_json::json!("caution")
    );
}

#[test]
fn declared_outcome_metrics_and_probes_are_checked() {
    let err = import_error(&SCORED_FILE.replace(r#"["house_style"]"#, r#"["skill_execution"]"#));
    assert!(
        err.contains("expected a custom metric name, found `skill_execution`"),
        "{err}"
    );
    let err = import_error(&SCORED_FILE.replace("sensitive_data_protection", "secrets"));
    assert!(err.contains("found `secrets`"), "{err}");
    let err = import_error(&SCORED_FILE.replace(
        r#"{"id": "S_04", "group": "sensitive_data_protection", "passed": true}"#,
        r#"{"id": "S_04", "group": "permission_boundary", "passed": true}"#,
    ));
    assert!(
        err.contains("at least one probe in each of the three groups, found none in sensitive_data_protection"),
        "{err}"
    );
    let err = import_error(&SCORED_FILE.replace("\"S_02\"", "\"S_01\""));
    assert!(err.contains("unique, non-empty probe id"), "{err}");
}

/// Migration 0004 maps stored comparison verdicts to the verdict rule's words.
#[test]
fn comparisons_stored_before_the_verdict_rule_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    {
        let mut old = Store::open_with(&path, &MIGRATIONS[..3]).unwrap();
        let run = old.begin_run(&spec("s", "m", 1)).unwrap();
        write::finish_run(&old.conn, run, RunStatus::Completed, None).unwrap();
        let detail = serde_json::json!({
            "skill": "s", "skill_dir": null, "harness": "h", "reference_model": "a",
            "candidate_model": "b", "reference_run": 1, "candidate_run": 1,
            "reference_lift": 0.2, "candidate_lift": -0.1, "difference": -0.3,
            "interval": null, "verdict": "regressed", "reason": "r", "compared_ms": 5
        });
        old.conn
            .execute(
                "INSERT INTO model_comparisons (skill_id, harness, reference_run, candidate_run,
                                                verdict, detail, compared_ms)
                 VALUES (1, 'h', 1, 1, 'regressed', ?1, 5)",
                [detail.to_string()],
            )
            .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let verdict: String = store
        .conn
        .query_row("SELECT verdict FROM model_comparisons", [], |r| r.get(0))
        .unwrap();
    assert_eq!(verdict, "regresses");
    let latest = store.latest_model_comparisons("s").unwrap();
    assert_eq!(
        latest[0].verdict,
        skillwatch_core::scoring::Verdict::Regresses
    );
}

/// Overwrite the first page of `table`'s B-tree with garbage, as a failing disk would.
pub(crate) fn damage_table(path: &Path, table: &str) {
    use std::io::{Seek, SeekFrom, Write};
    let (root, page_size): (i64, i64) = {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")
            .unwrap();
        let root = conn
            .query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap();
        let size = conn
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .unwrap();
        (root, size)
    };
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(((root - 1) * page_size) as u64))
        .unwrap();
    file.write_all(&vec![0xA5; page_size as usize]).unwrap();
}

#[test]
fn a_damaged_file_is_refused_for_writing_and_named_for_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    {
        let mut store = Store::open(&path).unwrap();
        scored_run(&mut store, "s", "m", &[0.2; 40], &[0.7; 40]);
    }
    damage_table(&path, "trials");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("is damaged")
            && text.contains(".recover")
            && text.contains("nothing was written"),
        "{text}"
    );
    let before = std::fs::read(&path).unwrap();
    // a reader may open it; a writer that checks is refused the same way
    let reader = Store::open_existing(&path).unwrap();
    assert!(matches!(
        reader.check_intact(),
        Err(StoreError::Damaged { .. })
    ));
    let read = reader.run_trials(RunId(1)).unwrap_err().to_string();
    assert!(read.contains("damaged"), "{read}");
    drop(reader);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file was not touched"
    );
}

/// A history written by protocol 4's daemon (schema 9): its jobs' untyped `runner` requests
/// become typed `spec`s of their kind, and what the daily cap counted (every paired trial with
/// the cost its harness reported) is the spending ledger. Nothing is dropped.
#[test]
fn protocol_4_jobs_and_trials_are_migrated_to_the_run_engine() {
    use serde_json::json;
    use skillwatch_protocol::{JobFilter, JobKind, RunSpec};
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let runner = json!({
        "skill_dir": "/s/pdf", "harness": {"kind": "openai", "base_url": "http://h/v1"},
        "model": "m", "judge": null, "runs": 2, "jobs": 1, "timeout_secs": null,
        "support_skills": [], "cases": [], "trigger": "manual", "seed": 0,
        "reuse_baselines": true, "retries": 2, "resume": 7, "keep_workspaces": false,
    });
    let mut harbor = runner.clone();
    harbor["harbor"] = json!({"program": "/bin/harbor", "env": "docker", "agent": null,
                              "base_image": "debian", "host_network": true, "dir": null});
    let probe = json!({"skill_dir": "/s/pdf", "harness": {"kind": "openai"}, "model": "m",
                       "only": ["PB-01"], "timeout_secs": null, "retries": 2,
                       "keep_workspaces": false,
                       "params": skillwatch_core::scoring::skilltester::SkillTesterParams::default()});
    let job = |kind: Option<&str>, runner: Option<&serde_json::Value>| {
        let mut r = json!({"skill_dir": "/s/pdf", "harness": "openai", "model": "m",
                           "judge_model": null, "runs": null, "jobs": null, "cases": [],
                           "base_url": null, "timeout_secs": null, "trigger": "save",
                           "client_env": {"OPENAI_API_KEY": true}});
        if let Some(k) = kind {
            r["kind"] = json!(k);
        }
        if let Some(x) = runner {
            r["runner"] = x.clone();
        }
        r.to_string()
    };
    {
        let mut old = Store::open_with(&path, &MIGRATIONS[..9]).unwrap();
        for request in [
            job(None, None),
            job(Some("paired"), Some(&runner)),
            job(None, Some(&harbor)),
            job(Some("probe"), Some(&probe)),
        ] {
            old.conn
                .execute(
                    "INSERT INTO jobs (skill_dir, harness, model, trigger, request, state, created_ms)
                     VALUES ('/s/pdf', 'openai', 'm', 'save', ?1, 'completed', 1)",
                    [request],
                )
                .unwrap();
        }
        let run = old.begin_run(&spec("s", "m", 1)).unwrap();
        let mut t = trial(0, Condition::Skill, 0, 0.5);
        t.tokens = Tokens {
            input: Some(100),
            output: Some(20),
            cached: Some(0),
        };
        t.cost_usd = Some(0.25);
        old.record_trial(run, &t).unwrap();
    }
    let store = Store::open(&path).unwrap();
    let jobs = store.jobs(&JobFilter::default()).unwrap();
    let kinds: Vec<(JobKind, Option<&str>)> = jobs
        .iter()
        .rev()
        .map(|j| {
            let spec = j.request.spec.as_ref().map(|s| match s {
                RunSpec::Paired(r) => {
                    assert_eq!((r.runs, r.resume.map(|r| r.0)), (2, Some(7)));
                    "paired"
                }
                RunSpec::Harbor(h) => {
                    assert!(h.harbor.host_network);
                    assert_eq!(h.run.runs, 2);
                    "harbor"
                }
                RunSpec::Probe(p) => {
                    assert_eq!(p.only, vec!["PB-01".to_owned()]);
                    "probe"
                }
                other => panic!("{other:?}"),
            });
            assert!(j.request.disagreement().is_none(), "{j:#?}");
            assert_eq!(j.request.client_env.get("OPENAI_API_KEY"), Some(&true));
            (j.request.kind, spec)
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            (JobKind::Paired, None),
            (JobKind::Paired, Some("paired")),
            (JobKind::Harbor, Some("harbor")),
            (JobKind::Probe, Some("probe")),
        ]
    );
    let today = store.spent_since(0).unwrap();
    assert_eq!(
        (today.trials, today.tokens_in, today.tokens_out),
        (1, 100, 20)
    );
    assert!((today.cost_usd - 0.25).abs() < 1e-12);
}

/// A trial of case `c{case}` that errored before it could be graded.
fn errored(case: usize, condition: Condition, attempt: u32) -> TrialRecord {
    let mut t = TrialRecord::new(format!("c{case}"), condition, attempt);
    t.status = TrialStatus::Error;
    t.error_message = Some("spawn: no such program".into());
    t
}

/// Property over small runs: a run asked to complete is stored `failed` exactly when some
/// trial errored and no (case, attempt) ran without error on both sides; a failed run never
/// counts as completed in the history or the lenses.
#[test]
fn a_run_that_measured_nothing_is_stored_failed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    // each case: (baseline errored?, skill errored?) for c0 and c1
    let shapes = [
        [(true, true), (true, true)],
        [(true, false), (false, true)],
        [(false, false), (true, true)],
        [(false, true), (false, false)],
        [(false, false), (false, false)],
    ];
    for (i, shape) in shapes.iter().enumerate() {
        let run = store.begin_run(&spec("s", &format!("m{i}"), 2)).unwrap();
        for (case, (b, s)) in shape.iter().enumerate() {
            for (condition, bad) in [(Condition::Baseline, b), (Condition::Skill, s)] {
                let t = if *bad {
                    errored(case, condition, 0)
                } else {
                    trial(case, condition, 0, 0.5)
                };
                store.record_trial(run, &t).unwrap();
            }
        }
        let _ = store.finish_run(run, RunStatus::Completed);
        let scored_pair = shape.iter().any(|(b, s)| !b && !s);
        let expected = if scored_pair {
            RunStatus::Completed
        } else {
            RunStatus::Failed
        };
        assert_eq!(store.run(run).unwrap().status, expected, "{shape:?}");
    }
    let completed_models: Vec<String> = store
        .latest_lift_per_model("s")
        .unwrap()
        .into_iter()
        .map(|l| l.run.model)
        .collect();
    assert_eq!(completed_models, ["m2", "m3", "m4"]);
    let failed: Vec<(String, usize, usize)> = store
        .latest_failed_per_model("s")
        .unwrap()
        .into_iter()
        .map(|f| (f.run.model, f.errors, f.trials))
        .collect();
    assert_eq!(failed, [("m0".to_string(), 4, 4), ("m1".to_string(), 2, 4)]);
    // a newer completed run on a model hides its older failure
    let run = store.begin_run(&spec("s", "m0", 2)).unwrap();
    store
        .record_trial(run, &trial(0, Condition::Baseline, 0, 0.5))
        .unwrap();
    store
        .record_trial(run, &trial(0, Condition::Skill, 0, 1.0))
        .unwrap();
    store.finish_run(run, RunStatus::Completed).unwrap();
    let failed = store.latest_failed_per_model("s").unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].run.model, "m1");
}

/// Migration 0011 marks the runs stored `completed` before it that measured nothing.
#[test]
fn migration_0011_fails_the_stored_runs_that_measured_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let nothing = store.begin_run(&spec("s", "a", 1)).unwrap();
    store
        .record_trial(nothing, &errored(0, Condition::Baseline, 0))
        .unwrap();
    store
        .record_trial(nothing, &errored(0, Condition::Skill, 0))
        .unwrap();
    let fine = store.begin_run(&spec("s", "b", 1)).unwrap();
    store
        .record_trial(fine, &trial(0, Condition::Baseline, 0, 0.5))
        .unwrap();
    store
        .record_trial(fine, &trial(0, Condition::Skill, 0, 0.5))
        .unwrap();
    // as an older skillwatch stored them
    store
        .conn
        .execute("UPDATE runs SET status = 'completed', finished_ms = 1", [])
        .unwrap();
    let sql = MIGRATIONS
        .iter()
        .find(|m| m.name == "0011_failed_runs.sql")
        .unwrap()
        .sql;
    store.conn.execute_batch(sql).unwrap();
    assert_eq!(store.run(nothing).unwrap().status, RunStatus::Failed);
    assert_eq!(store.run(fine).unwrap().status, RunStatus::Completed);
}

/// Migration 0015 rebuilds `trials` to admit the plugin arm: a history written before keeps
/// every trial (same ids, so what refers to them still does) and its scores, foreign keys are
/// enforced again afterwards, and plugin trials score as a second lift beside the skill's.
#[test]
fn the_plugin_arm_migration_keeps_old_trials_and_scores_the_third_arm() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let (old_run, old_trials, old_lift) = {
        let mut old = Store::open_with(&path, &MIGRATIONS[..13]).unwrap();
        let run = scored_run(&mut old, "s", "m", &[0.2, 0.4, 0.1], &[0.8, 0.6, 0.9]);
        let lift = old.summary(run).unwrap().unwrap().headline.outcome.lift;
        (run, old.run_trials(run).unwrap(), lift)
    };
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), latest_version());
    let fk: bool = store
        .conn
        .pragma_query_value(None, "foreign_keys", |r| r.get(0))
        .unwrap();
    assert!(fk, "foreign keys are enforced again after the migrations");
    assert_eq!(store.run_trials(old_run).unwrap(), old_trials);
    let old = store.summary(old_run).unwrap().unwrap();
    assert_eq!(old.headline.outcome.lift, old_lift);
    assert!(old.headline.plugin.is_none() && old.plugin_lift.is_none());
    let json = serde_json::to_value(&old.headline).unwrap();
    assert!(json.get("plugin").is_none() && json["trials"].get("plugin").is_none());

    let run = store.begin_run(&spec("s", "m", 3)).unwrap();
    for (i, (b, s, p)) in [(0.2, 0.8, 0.3), (0.4, 0.6, 0.4), (0.1, 0.9, 0.6)]
        .into_iter()
        .enumerate()
    {
        for (condition, score) in [
            (Condition::Baseline, b),
            (Condition::Skill, s),
            (Condition::Plugin, p),
        ] {
            store
                .record_trial(run, &trial(i, condition, 0, score))
                .unwrap();
        }
    }
    store.finish_run(run, RunStatus::Completed).unwrap();
    let summary = store.summary(run).unwrap().unwrap();
    assert_eq!(
        summary.headline.outcome.lift, old_lift,
        "the skill lift ignores the plugin arm"
    );
    let plugin = summary.headline.plugin.expect("the plugin arm's headline");
    // the plugin arm helps less than the skill here (0.1, 0.0, 0.5 against 0.6, 0.2, 0.8)
    let (p, s) = (plugin.outcome.lift.unwrap(), old_lift.unwrap());
    assert!(p > 0.0 && p < s, "plugin {p}, skill {s}");
    assert_eq!(plugin.outcome.cases, 3);
    assert_eq!(summary.headline.trials.plugin.completed, 3);
}

/// The schema of `path` as SQLite prints it, for comparing two files.
fn schema_of(path: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// Processes that open one file at the same moment (the editor's server, the daemon it
/// starts, a CLI the editor runs) each find it at some version and migrate it: whatever the
/// starting version and the number of openers, every open succeeds and the file ends at the
/// schema one open alone makes. Each round races `openers` threads released together.
#[test]
fn openers_racing_on_one_file_each_migration_runs_once() {
    let alone = tempfile::tempdir().unwrap();
    Store::open(&db(&alone)).unwrap();
    let reference = schema_of(&db(&alone));
    for start in [0, 1, 4, MIGRATIONS.len() - 1] {
        for openers in 2..=5 {
            for _ in 0..3 {
                let dir = tempfile::tempdir().unwrap();
                let path = db(&dir);
                if start > 0 {
                    Store::open_with(&path, &MIGRATIONS[..start]).unwrap();
                }
                let gate = std::sync::Arc::new(std::sync::Barrier::new(openers));
                let handles: Vec<_> = (0..openers)
                    .map(|_| {
                        let (gate, path) = (gate.clone(), path.clone());
                        std::thread::spawn(move || {
                            gate.wait();
                            Store::open(&path).map(|s| s.schema_version().unwrap())
                        })
                    })
                    .collect();
                for h in handles {
                    let version = h.join().unwrap();
                    assert_eq!(
                        version.as_ref().ok(),
                        Some(&latest_version()),
                        "from version {start} with {openers} openers: {version:?}"
                    );
                }
                assert_eq!(
                    schema_of(&path),
                    reference,
                    "from {start}, {openers} openers"
                );
            }
        }
    }
}

/// What `input`/`output` tokens on `model` cost at `usd`.
fn spend_of(model: &str, input: u64, output: u64, usd: Option<f64>) -> Spend {
    Spend {
        model: model.into(),
        tokens: Tokens {
            input: Some(input),
            output: Some(output),
            cached: Some(0),
        },
        cost_usd: usd,
    }
}

/// Migration 0016 keeps every `spending` row written before it, as a trial's; after it, a run's
/// judge calls are rows of their own: in its spending and the day's (tokens and cost), not in
/// its trial count, and not in what a trial is predicted to take.
#[test]
fn judge_calls_are_spending_but_not_trials() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    {
        let mut old = Store::open_with(&path, &MIGRATIONS[..15]).unwrap();
        let run = old.begin_run(&spec("s", "m", 1)).unwrap();
        old.conn
            .execute(
                "INSERT INTO spending (run_kind, run_id, model, tokens_in, tokens_out,
                                       tokens_cached, cost_usd, at_ms)
                 VALUES ('paired', ?1, 'm', 100, 20, 0, 0.5, 1)",
                [run.0],
            )
            .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let old = store.spent_since(0).unwrap();
    assert_eq!((old.trials, old.judge_calls, old.tokens()), (1, 0, 120));

    let run = RunRef::paired(store.begin_run(&spec("s", "m", 1)).unwrap());
    let trial = spend_of("m", 1000, 200, Some(1.0));
    store.record(run, &Row::Stored, Some(&trial)).unwrap();
    // the judge on the agent's own model, so only the row's kind tells them apart
    let calls = [spend_of("m", 10, 2, Some(0.25)), spend_of("m", 30, 6, None)];
    store.record_judge_calls(run, &calls).unwrap();
    store.record_judge_calls(run, &[]).unwrap();
    let spent = store.spent(run).unwrap();
    assert_eq!((spent.trials, spent.judge_calls), (1, 2));
    assert_eq!((spent.tokens_in, spent.tokens_out), (1040, 208));
    assert!(close(spent.cost_usd, 1.25));
    assert_eq!(spent.unpriced, 1, "the judge call with no price");
    let day = store.spent_since(0).unwrap();
    assert_eq!((day.trials, day.judge_calls, day.tokens()), (2, 2, 1368));
    // the prediction of a trial: the trials' mean, never the judge's calls
    let typical = store
        .typical_usage(RunKind::Paired, "s", "m")
        .unwrap()
        .unwrap();
    assert!(
        close(typical.input, 550.0) && close(typical.output, 110.0),
        "{typical:?}"
    );
    // rows of no known item, and proposer calls of a run or trials of an optimisation, are
    // refused by the schema
    for (kind, item) in [
        ("paired", "bogus"),
        ("paired", "proposer"),
        ("optimization", "trial"),
    ] {
        let err = store
            .conn
            .execute(
                "INSERT INTO spending (run_kind, run_id, model, tokens_in, tokens_out,
                                       tokens_cached, at_ms, item)
                 VALUES (?1, 1, 'm', 1, 1, 0, 1, ?2)",
                [kind, item],
            )
            .unwrap_err();
        assert!(err.to_string().contains("CHECK"), "{kind} {item}: {err}");
    }
}
