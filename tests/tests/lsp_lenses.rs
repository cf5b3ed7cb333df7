//! End-to-end: code lenses show the lift that was put into a test history database, refresh
//! when new results land, and the lens commands run the CLI.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skillwatch_daemon::store::{Store, parse_trial_file};
use skillwatch_tests::history::probe_run;
use skillwatch_tests::lsp::LspClient;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/trials/example.json")
}

/// Import the documented example trial file (skill `csv-report`, model `claude-sonnet-4-5`),
/// with its `totals` case copied twice more with other scores so the run has enough complete
/// pairs for an interval.
fn import_example(db: &Path, run_id: &str) {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let mut file: Value = serde_json::from_str(&text).unwrap();
    let run = &mut file["runs"][0];
    // a distinct run id makes a second import a new run rather than a duplicate
    run["id"] = json!(run_id);
    let totals: Vec<Value> = run["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["case"] == "totals")
        .cloned()
        .collect();
    for (copy, skill_accuracy) in [("totals-2", 0.6), ("totals-3", 0.7)] {
        let mut case = run["suite"]["cases"][0].clone();
        case["id"] = json!(copy);
        run["suite"]["cases"].as_array_mut().unwrap().push(case);
        for trial in &totals {
            let mut trial = trial.clone();
            trial["case"] = json!(copy);
            if trial["condition"] == "skill" {
                trial["metrics"]["accuracy"] = json!(skill_accuracy);
            }
            run["trials"].as_array_mut().unwrap().push(trial);
        }
    }
    let text = serde_json::to_string(&file).unwrap();
    let file = parse_trial_file(&fixture(), text.as_bytes()).unwrap();
    let mut store = Store::open(db).unwrap();
    store.import(&file, &mut |_, _| {}).unwrap();
}

/// The lens title the store's own numbers call for (the time part is left out).
fn expected_prefix(db: &Path, runs: usize) -> String {
    let store = Store::open_existing(db).unwrap();
    let lifts = store.latest_lift_per_model("csv-report").unwrap();
    // (the lens reads a run under the scoring profile recorded with it, as `history` does)
    let headline = lifts[0].headline.profile(lifts[0].run.profile());
    let interval = headline
        .interval
        .as_ref()
        .map(|i| {
            format!(
                " [{:+.2}, {:+.2}] {:.0}% n={}",
                i.low,
                i.high,
                i.level * 100.0,
                i.n
            )
        })
        .unwrap_or_default();
    let runs = if runs == 1 {
        "1 run".to_string()
    } else {
        format!("{runs} runs")
    };
    format!(
        "Lift {:+.2}{interval} · {} · claude-sonnet-4-5 · {runs} · ",
        headline.lift.unwrap(),
        headline.verdict.label()
    )
}

fn skill(root: &Path) -> PathBuf {
    let dir = root.join("csv-report");
    std::fs::create_dir_all(dir.join("evals")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: csv-report\ndescription: Summarises CSV files.\n---\n",
    )
    .unwrap();
    dir
}

fn titles_of(lenses: &Value) -> Vec<String> {
    lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn skill_and_case_lenses_show_the_stored_lift() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("history.sqlite3");
    import_example(&db, "run-one");
    let dir = skill(root.path());
    let mut client = LspClient::initialized(json!({"historyDb": db}));
    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let uri = client.open(&dir.join("SKILL.md"), "markdown", &text);
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let titles = titles_of(&lenses);
    let prefix = expected_prefix(&db, 1);
    assert!(
        titles[0].starts_with(&prefix) && titles[0].ends_with(" ago"),
        "{titles:?} vs {prefix}"
    );
    assert!(
        titles[0].contains('['),
        "the example run has an interval: {titles:?}"
    );
    // Four cases: too few for any verdict, and the lens says so, not "no change".
    assert!(
        titles[0].contains(" · inconclusive (n too small) · "),
        "{titles:?}"
    );
    assert_eq!(
        lenses[0]["range"]["start"],
        json!({"line": 0, "character": 0})
    );
    assert_eq!(lenses[0]["command"]["command"], "skillwatch.showHistory");
    assert_eq!(
        lenses[0]["command"]["arguments"],
        json!([dir.display().to_string(), "claude-sonnet-4-5"])
    );
    assert_eq!(titles.last().unwrap(), "▶ Run paired eval");

    // per-case lenses in evals.json, above each case
    let evals = "{\"skill_name\": \"csv-report\", \"evals\": [\n  {\"id\": \"totals\", \"prompt\": \"p\"},\n  {\"id\": \"new-case\", \"prompt\": \"q\"}\n]}\n";
    let uri = client.open(&dir.join("evals/evals.json"), "json", evals);
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let titles = titles_of(&lenses);
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(
        titles[0].starts_with("Last lift ") && titles[0].contains("claude-sonnet-4-5"),
        "{titles:?}"
    );
    assert_eq!(titles[1], "No runs yet · ▶ run");
    assert_eq!(lenses[1]["range"]["start"]["line"], 2);
    assert_eq!(
        lenses[1]["command"]["arguments"],
        json!([dir.display().to_string(), "new-case"])
    );
    assert!(client.shutdown().success());
}

/// `SKILLWATCH_DB` names the history for the server as it does for the CLI: with no
/// `historyDb` setting, the lens shows the runs `skillwatch history` lists.
#[test]
fn the_history_database_comes_from_skillwatch_db_as_for_the_cli() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("elsewhere.sqlite3");
    import_example(&db, "run-one");
    let dir = skill(root.path());
    let cli = skillwatch_tests::skillwatch_bin();
    let listed = std::process::Command::new(&cli)
        .args(["history", "csv-report"])
        .env("SKILLWATCH_DB", &db)
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    assert!(String::from_utf8_lossy(&listed.stdout).contains("claude-sonnet-4-5"));

    let db_text = db.display().to_string();
    let mut client = LspClient::spawn_with_env(&[("SKILLWATCH_DB", &db_text)]);
    client.initialize(Value::Null);
    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let uri = client.open(&dir.join("SKILL.md"), "markdown", &text);
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    let titles = titles_of(&lenses);
    assert!(
        titles[0].starts_with(&expected_prefix(&db, 1)),
        "{titles:?}"
    );
    assert!(client.shutdown().success());
}

#[test]
fn a_skill_without_runs_says_so_and_new_results_refresh_lenses() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("history.sqlite3");
    let dir = skill(root.path());
    let mut client = LspClient::initialized(json!({"historyDb": db, "historyPollMs": 100}));
    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let uri = client.open(&dir.join("SKILL.md"), "markdown", &text);
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(titles_of(&lenses)[0], "No runs yet");

    // results land (the database is created by the import): the server asks for a refresh
    import_example(&db, "run-one");
    client.wait_for("codeLens refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    assert!(titles_of(&lenses)[0].starts_with(&expected_prefix(&db, 1)));

    import_example(&db, "run-two");
    client.wait_for("second refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    assert!(
        titles_of(&lenses)[0].starts_with(&expected_prefix(&db, 2)),
        "{:?}",
        titles_of(&lenses)
    );
    assert!(client.shutdown().success());
}

/// A stand-in for the `skillwatch` CLI: records its arguments and prints a line. `skillwatch
/// run` (a later issue) does not exist yet; this checks what the server runs and what it does
/// with the outcome.
fn recording_cli(root: &Path) -> (PathBuf, PathBuf) {
    let log = root.join("argv.log");
    let script = root.join("fake-skillwatch");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\necho \"history of $2: Lift +0.10\"\necho \"done: $1\" >&2\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, log)
}

#[test]
fn lens_commands_run_the_cli_and_refresh() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("history.sqlite3");
    let dir = skill(root.path());
    let (cli, log) = recording_cli(root.path());
    std::fs::write(
        dir.join("skillwatch.toml"),
        "[run]\nharness = \"openai\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let mut client = LspClient::initialized(json!({"historyDb": db, "cliPath": cli}));
    let dir_arg = dir.display().to_string();

    let started = client.request(
        "workspace/executeCommand",
        json!({"command": "skillwatch.runEval", "arguments": [dir_arg, "totals"]}),
    );
    assert_eq!(started["started"], true);
    let finished = client.notification("skillwatch/runFinished", |_| true);
    assert_eq!(finished["success"], true, "{finished}");
    assert_eq!(finished["case"], "totals");
    assert!(finished["message"].as_str().unwrap().contains("done: run"));
    let argv = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        argv.trim(),
        format!(
            "run {dir_arg} --harness openai --model m --case totals --db {}",
            db.display()
        )
    );
    client.wait_for("refresh after the run", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    assert!(
        client
            .server_requests
            .iter()
            .any(|(m, _)| m == "window/workDoneProgress/create"),
        "{:?}",
        client.server_requests
    );

    let shown = client.request(
        "workspace/executeCommand",
        json!({"command": "skillwatch.showHistory", "arguments": [dir_arg, "claude-sonnet-4-5"]}),
    );
    assert!(shown.as_str().unwrap().contains("history of"), "{shown}");
    let (_, params) = client
        .server_requests
        .iter()
        .find(|(m, _)| m == "window/showDocument")
        .cloned()
        .expect("showDocument sent");
    let report = params["uri"]
        .as_str()
        .unwrap()
        .trim_start_matches("file://");
    assert!(
        std::fs::read_to_string(report)
            .unwrap()
            .contains("Lift +0.10")
    );

    let bad = client.send_request(
        "workspace/executeCommand",
        json!({"command": "skillwatch.runEval", "arguments": []}),
    );
    assert_eq!(client.response(bad)["error"]["code"], -32602);
    assert!(client.shutdown().success());
}

/// After a probe run on the lift lens's model, the security lens follows it ("Security 93 ·
/// Caution"), refreshed when the probe run lands as the lift lens is; a probe run on another
/// model makes no lens.
#[test]
fn the_security_lens_shows_the_newest_probe_run_on_the_lifts_model() {
    let root = tempfile::tempdir().unwrap();
    let db = root.path().join("history.sqlite3");
    import_example(&db, "run-one");
    let dir = skill(root.path());
    let mut client = LspClient::initialized(json!({"historyDb": db, "historyPollMs": 100}));
    let text = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let uri = client.open(&dir.join("SKILL.md"), "markdown", &text);
    let lenses = |client: &mut LspClient| {
        titles_of(&client.request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri.clone()}}),
        ))
    };
    let titles = lenses(&mut client);
    assert_eq!(titles.len(), 2, "lift and run, no security yet: {titles:?}");

    probe_run(&db, "csv-report", "claude-code", "another-model", 9);
    client.wait_for("codeLens refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    assert_eq!(
        lenses(&mut client).len(),
        2,
        "another model's probes show nothing"
    );

    // 2 of 9 sensitive-data probes failed: S = (100 + 100 + 77.8) / 3 = 92.6
    let s = probe_run(&db, "csv-report", "claude-code", "claude-sonnet-4-5", 2);
    assert!((s - (200.0 + 700.0 / 9.0) / 3.0).abs() < 1e-9);
    client.wait_for("codeLens refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    let titles = lenses(&mut client);
    assert_eq!(titles.len(), 3, "{titles:?}");
    assert!(titles[0].starts_with("Lift "), "{titles:?}");
    assert_eq!(
        titles[1],
        "Security 93 · Caution · claude-sonnet-4-5 · 2 probes failed"
    );
    assert_eq!(titles[2], "▶ Run paired eval");

    // the newest probe run wins
    probe_run(&db, "csv-report", "claude-code", "claude-sonnet-4-5", 0);
    client.wait_for("codeLens refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    assert_eq!(
        lenses(&mut client)[1],
        "Security 100 · Pass · claude-sonnet-4-5"
    );
    assert!(client.shutdown().success());
}
