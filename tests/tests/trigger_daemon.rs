//! `skillwatch trigger` through the daemon (the default path): the same rates as in-process,
//! recorded in the daemon's history, and the `description:` line's lens in the editor
//! refreshed with them when the run finishes.

use serde_json::{Value, json};
use skillwatch_tests::daemon::DaemonFixture;
use skillwatch_tests::mock;
use skillwatch_tests::{code, stderr, stdout};

use crate::trigger_history::{by_model, fixture};

fn args(skill: &str, server: &mock::MockServer) -> Vec<String> {
    let mut args = vec!["trigger".to_owned(), skill.to_owned()];
    args.extend(server.openai_args("new-model"));
    args.push("--json".into());
    args
}

/// What must agree between two runs of the same trials (timings may not).
fn rates(report: &Value) -> Value {
    let s = &report["summary"];
    json!({
        "recall": s["recall"],
        "false_trigger": s["false_trigger"],
        "near_miss": s["near_miss_false_trigger"],
        "picked_instead": s["picked_instead"],
        "undecided": s["undecided"],
        "queries": s["queries"],
        "decisions": report["trials"].as_array().unwrap().iter()
            .map(|t| (t["query"].clone(), t["run"].clone(), t["decision"].clone()))
            .collect::<Vec<_>>(),
        "staged": report["staged"],
        "visibility": report["visibility"],
    })
}

#[test]
fn through_the_daemon_the_same_rates_are_recorded_and_the_lens_shows_them() {
    let mut fx = DaemonFixture::new();
    fx.start();
    let tmp = tempfile::tempdir().unwrap();
    let skill = fixture(tmp.path());
    let skill_str = skill.to_str().unwrap();
    let server = mock::openai_chat::server(by_model());

    // The editor is open on the skill before the run.
    let (mut lsp, uri) = fx.lsp_on(&skill.join("SKILL.md"));
    let titles = |lsp: &mut skillwatch_tests::lsp::LspClient| -> Vec<(u64, String)> {
        lsp.request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri}}),
        )
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["range"]["start"]["line"].as_u64().unwrap(),
                l["command"]["title"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
    };
    assert!(
        !titles(&mut lsp)
            .iter()
            .any(|(_, t)| t.starts_with("Triggers")),
        "no trigger lens before a trigger run"
    );

    let through = fx.cli(&args(skill_str, &server));
    assert_eq!(code(&through), 0, "{}", stderr(&through));
    let through: Value = serde_json::from_str(&stdout(&through)).unwrap();
    // The daemon ran it: its event stream says so.
    let events = stdout(&fx.cli(&["events"]));
    let run = through["run_id"].as_i64().expect("recorded");
    assert!(
        events.contains(&format!(
            "trigger run {run} of {} finished",
            skill.display()
        )),
        "{events}"
    );

    let mut in_process = args(skill_str, &server);
    let other_db = tmp.path().join("in-process.sqlite3");
    in_process.extend(["--no-daemon", "--db", other_db.to_str().unwrap()].map(str::to_owned));
    let here = fx.cli(&in_process);
    assert_eq!(code(&here), 0, "{}", stderr(&here));
    let here: Value = serde_json::from_str(&stdout(&here)).unwrap();
    assert_eq!(rates(&through), rates(&here));
    assert_eq!(through["summary"]["recall"]["hits"], 2);

    // Recorded in the daemon's history (read through the daemon).
    let history = fx.cli(&["history", "pdf-tools", "--json"]);
    assert_eq!(code(&history), 0, "{}", stderr(&history));
    let history: Value = serde_json::from_str(&stdout(&history)).unwrap();
    assert_eq!(history["trigger_runs"][0]["id"], through["run_id"]);
    assert_eq!(history["trigger_runs"][0]["summary"]["recall"]["hits"], 2);

    // The lens on the description: line (line 2 of SKILL.md), refreshed by the run's end.
    lsp.wait_for("lens refresh", |m| {
        m["method"] == "workspace/codeLens/refresh"
    });
    let lens = titles(&mut lsp)
        .into_iter()
        .find(|(_, t)| t.starts_with("Triggers"))
        .expect("a trigger lens");
    assert_eq!(lens.0, 2, "{lens:?}");
    assert_eq!(
        lens.1, "Triggers 2/8 [0.07, 0.59] · false 8/8 · new-model",
        "Wilson 95% of 2/8"
    );
}

/// Through the daemon each trial is shown as it finishes, in the line an in-process run
/// prints for it (the daemon publishes an event per trial of the call; the client follows its
/// own).
#[test]
fn through_the_daemon_each_trial_is_shown_as_in_process() {
    let mut fx = DaemonFixture::new();
    fx.start();
    let tmp = tempfile::tempdir().unwrap();
    let skill = fixture(tmp.path());
    let skill_str = skill.to_str().unwrap();
    let server = mock::openai_chat::server(by_model());
    let mut text = args(skill_str, &server);
    text.retain(|a| *a != "--json");
    let trial_lines = |out: &std::process::Output| -> Vec<String> {
        stderr(out)
            .lines()
            .filter(|l| l.starts_with("  ") && (l.contains(".pdf") || l.contains(".docx")))
            .map(str::to_owned)
            .collect()
    };

    let through = fx.cli(&text);
    assert_eq!(code(&through), 0, "{}", stderr(&through));
    let other_db = tmp.path().join("in-process.sqlite3");
    let mut in_process = text.clone();
    in_process.extend(["--no-daemon", "--db", other_db.to_str().unwrap()].map(String::from));
    let here = fx.cli(&in_process);
    assert_eq!(code(&here), 0, "{}", stderr(&here));

    let (through_lines, here_lines) = (trial_lines(&through), trial_lines(&here));
    assert_eq!(through_lines.len(), 16, "{}", stderr(&through));
    assert_eq!(through_lines, here_lines);
    // new-model picks the skill for report-0 and report-1 only, and for every docx query
    let line = |query: &str| {
        through_lines
            .iter()
            .find(|l| l.trim_start().starts_with(query))
            .unwrap_or_else(|| panic!("no line for {query}: {through_lines:#?}"))
            .clone()
    };
    assert!(
        line("Split report-1.pdf").ends_with(" picked pdf-tools"),
        "{through_lines:#?}"
    );
    assert!(line("Split report-5.pdf").ends_with(" answered"));
    assert!(line("Convert notes-3.docx").ends_with(" picked pdf-tools"));
    // the daemon's event stream shows the call's trials too
    let events = stdout(&fx.cli(&["events"]));
    assert!(
        events.contains(&format!("trigger of {}: 16/16 ", skill.display())),
        "{events}"
    );
}
