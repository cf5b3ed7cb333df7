//! Trigger results in the history: `skillwatch trigger` stores each run per skill version and
//! model, `history` shows them, `compare --triggers` pairs two models' runs by query and
//! reports a fall in recall or a rise in false triggers as a regression (exit 1), in text and
//! JSON. The built-in openai harness against a scripted OpenAI-compatible server: its model
//! name decides which queries pick the skill, so every rate is known.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use serde_json::{Value, json};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::{code, skillwatch, stderr, stdout, write_skill};

const SKILL: &str = "pdf-tools";

/// Eight positive queries and eight near misses.
fn trigger_set() -> String {
    let mut set: Vec<Value> = (0..8)
        .map(|i| json!({"query": format!("Split report-{i}.pdf into pages"), "should_trigger": true}))
        .collect();
    set.extend((0..8).map(|i| {
        json!({"query": format!("Convert notes-{i}.docx to text"), "should_trigger": false, "near_miss": true})
    }));
    serde_json::to_string(&set).unwrap()
}

/// `old-model` picks the skill for every PDF query and leaves the docx ones alone;
/// `new-model` picks it for two of the eight PDF queries and for every docx one. A query's
/// decision is its first reply; the conversation then ends.
pub fn by_model() -> Script {
    Arc::new(|req: &ModelRequest| {
        let usage = MockUsage::tokens(500, 10);
        if req.turn > 0 {
            return ModelReply::text("Done.", usage);
        }
        let new = req.body["model"] == "new-model";
        let pdf = (0..8).find(|i| req.mentions(&format!("report-{i}.pdf")));
        let picks = match pdf {
            Some(i) => !new || i < 2,
            None => new,
        };
        if picks && req.mentions(&format!("- {SKILL}:")) {
            ModelReply::tool("load_skill", json!({"name": SKILL}), usage)
        } else {
            ModelReply::text("Here is how you could do it.", usage)
        }
    })
}

pub fn fixture(root: &Path) -> PathBuf {
    write_skill(
        root,
        SKILL,
        format!(
            "---\nname: {SKILL}\ndescription: Splits and merges PDF files. Use for PDFs.\n---\n# PDF\n\nSteps.\n"
        )
        .as_bytes(),
        &[("evals/trigger_evals.json", &trigger_set())],
    )
}

/// `skillwatch trigger SKILL` in-process on `model` of `server`, recorded in `db`, with `extra`
/// arguments.
pub fn trigger(
    skill: &Path,
    server: &mock::MockServer,
    model: &str,
    db: &Path,
    extra: &[&str],
) -> Output {
    let mut args = vec![
        "trigger",
        skill.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ];
    let harness = server.openai_args(model);
    args.extend(harness.iter().map(String::as_str));
    args.extend_from_slice(extra);
    skillwatch(&args, None)
}

#[test]
fn trigger_runs_are_kept_per_model_shown_by_history_and_compared() {
    let tmp = tempfile::tempdir().unwrap();
    let skill = fixture(tmp.path());
    let db = tmp.path().join("history.sqlite3");
    let server = mock::openai_chat::server(by_model());
    for model in ["old-model", "new-model"] {
        let out = trigger(&skill, &server, model, &db, &["--json"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert!(report["run_id"].as_i64().is_some(), "{report:#}");
    }

    let history = skillwatch(&["history", SKILL, "--db", db.to_str().unwrap()], None);
    assert_eq!(code(&history), 0, "{}", stderr(&history));
    let text = stdout(&history);
    assert!(
        text.contains("Trigger tests (skillwatch trigger)"),
        "{text}"
    );
    let line = |model: &str| {
        text.lines()
            .find(|l| l.contains(model) && l.contains("completed"))
            .unwrap_or_else(|| panic!("no trigger line for {model}: {text}"))
            .to_owned()
    };
    assert!(line("old-model").contains("8/8 100%"), "{text}");
    assert!(line("old-model").contains("0/8 0%"), "{text}");
    assert!(line("new-model").contains("2/8 25%"), "{text}");
    assert!(line("new-model").contains("8/8 100%"), "{text}");
    let json = skillwatch(
        &["history", SKILL, "--db", db.to_str().unwrap(), "--json"],
        None,
    );
    let json: Value = serde_json::from_str(&stdout(&json)).unwrap();
    let runs = json["trigger_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["model"], "new-model", "newest first");
    assert_eq!(runs[0]["summary"]["recall"]["hits"], 2);
    assert_eq!(runs[0]["trials"], 16);
    assert_eq!(runs[0]["skill_hash"], runs[1]["skill_hash"]);

    let compare = |extra: &[&str]| {
        let mut args = vec![
            "compare",
            SKILL,
            "--triggers",
            "--model",
            "old-model",
            "--model",
            "new-model",
            "--db",
            db.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        skillwatch(&args, None)
    };
    let text = compare(&[]);
    assert_eq!(code(&text), 1, "a regression fails: {}", stderr(&text));
    let text = stdout(&text);
    assert!(text.contains("Recall          100% -> 25%"), "{text}");
    assert!(text.contains("False triggers  0% -> 100%"), "{text}");
    assert!(text.contains("Verdict: regresses"), "{text}");
    let json = compare(&["--json"]);
    assert_eq!(code(&json), 1);
    let json: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(json["verdict"], "regresses");
    let recall = &json["change"]["recall"];
    assert_eq!(recall["queries"], 8);
    assert_eq!(recall["interval"]["estimate"], -0.75);
    assert_eq!(recall["interval"]["method"]["kind"], "paired_adjusted_wald");
    assert_eq!(recall["decision"]["verdict"], "regresses", "{recall:#}");
    let false_triggers = &json["change"]["false_trigger"];
    assert_eq!(false_triggers["interval"]["estimate"], 1.0);
    assert_eq!(false_triggers["decision"]["verdict"], "regresses");

    // The other way round the same changes are improvements, and exit 0.
    let back = skillwatch(
        &[
            "compare",
            SKILL,
            "--triggers",
            "--model",
            "new-model",
            "--model",
            "old-model",
            "--db",
            db.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code(&back), 0, "{}", stdout(&back));
    assert!(stdout(&back).contains("Verdict: improves"));
}
