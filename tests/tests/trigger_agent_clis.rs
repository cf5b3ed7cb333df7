//! `skillwatch trigger` end to end: the real Claude Code CLI (installed by .ci/run) against a
//! scripted Anthropic Messages server that picks the skill only for some queries, so every
//! rate is known exactly; the early stop's cost against a full trial of the same query; and
//! the visibility check that runs nothing when the listing would not show the skill.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::trial::{agent_cli, skip_agent_clis};
use skillwatch_tests::{code, skillwatch_bin, stderr, stdout};

const TARGET: &str = "pdf-tools";
const SIBLING: &str = "docx-tools";

const EVAL_YAML: &str = "scenarios:
  - name: split
    prompt: Split report.pdf into one file per page
  - name: haiku
    prompt: Write a haiku about autumn
    expect_activation: false
triggers:
  positive:
    - Merge a.pdf and b.pdf into one document
    - Extract the text of invoice.pdf
  near_miss:
    - Convert notes.docx to Markdown
    - Turn slides.pptx into a PDF handout
";

/// The tokens the scripted model reports for a request at `turn`: a prompt that grows with
/// the conversation, as a real one does.
fn usage_at(turn: usize) -> MockUsage {
    MockUsage {
        input: 3000 + 400 * turn as u64,
        cached: 0,
        output: 40,
    }
}

/// Picks `pdf-tools` for the split, merge and pptx queries (the last a false trigger), the
/// sibling `docx-tools` for the docx query, looks around first (`ls`) for the invoice query,
/// answers the haiku; only ever picks a skill the listing shows. After loading a skill it
/// does the task in four shell steps and answers: a full trial is six requests.
fn scripted_model(served: Arc<Mutex<Vec<MockUsage>>>) -> Script {
    Arc::new(move |req: &ModelRequest| {
        let usage = usage_at(req.turn);
        served.lock().unwrap().push(usage);
        let listed = |skill: &str| req.mentions(&format!("- {skill}:"));
        let skill = |name: &str| ModelReply::tool("Skill", json!({"skill": name}), usage);
        let bash = |cmd: &str| ModelReply::tool("Bash", json!({"command": cmd}), usage);
        if req.turn == 0 {
            let asks = |text: &str| req.mentions(text);
            return if (asks("Split report.pdf") || asks("Merge a.pdf") || asks("slides.pptx"))
                && listed(TARGET)
            {
                skill(TARGET)
            } else if asks("notes.docx") && listed(SIBLING) {
                skill(SIBLING)
            } else if asks("invoice.pdf") {
                bash("ls")
            } else {
                ModelReply::text("Leaves fall, crisp and gold.", usage)
            };
        }
        match req.turn {
            1 => bash("ls"),
            2 => bash("echo one > page-1.txt"),
            3 => bash("echo two > page-2.txt"),
            4 => bash("ls page-*.txt"),
            _ => ModelReply::text("Done: split into 2 files.", usage),
        }
    })
}

fn write_skill(parent: &Path, name: &str, description: &str, extra: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nSteps.\n"),
    )
    .unwrap();
    dir
}

/// `skills/pdf-tools` (with its eval.yaml) beside `skills/docx-tools`.
fn fixture(root: &Path) -> PathBuf {
    let skills = root.join("skills");
    let target = write_skill(
        &skills,
        TARGET,
        "Splits, merges and extracts text from PDF files. Use when the user works with PDFs.",
        "",
    );
    write_skill(
        &skills,
        SIBLING,
        "Converts and edits Word .docx documents. Use for .docx files.",
        "",
    );
    std::fs::create_dir_all(target.join("tests")).unwrap();
    std::fs::write(target.join("tests/eval.yaml"), EVAL_YAML).unwrap();
    target
}

fn trigger(skill: &Path, server: &mock::MockServer, extra: &[&str]) -> Output {
    trigger_on("mock-model", skill, server, extra)
}

fn trigger_on(model: &str, skill: &Path, server: &mock::MockServer, extra: &[&str]) -> Output {
    let claude = agent_cli("claude");
    let mut args = vec![
        "trigger".to_string(),
        skill.display().to_string(),
        "--harness".into(),
        "claude-code".into(),
        "--model".into(),
        model.into(),
        "--program".into(),
        claude.display().to_string(),
        "--base-url".into(),
        server.url(),
        "--api-key-env".into(),
        "SW_TEST_KEY".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Command::new(skillwatch_bin())
        .args(&args)
        .env("SW_TEST_KEY", "sk-test")
        .env("SKILLWATCH_NO_DAEMON", "1")
        .env("SKILLWATCH_DB", history_db(skill))
        .output()
        .expect("run skillwatch trigger")
}

/// A history database beside the test's skills (trigger records every run).
fn history_db(skill: &Path) -> PathBuf {
    skill.ancestors().nth(2).unwrap().join("history.sqlite3")
}

fn model_requests(server: &mock::MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.starts_with("/v1/messages"))
        .filter(|r| !r.path.starts_with("/v1/messages/count_tokens"))
        .count()
}

#[test]
fn a_scripted_model_gives_exactly_the_expected_rates_on_the_real_cli() {
    if skip_agent_clis("a_scripted_model_gives_exactly_the_expected_rates_on_the_real_cli") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let skill = fixture(tmp.path());
    let served = Arc::new(Mutex::new(Vec::new()));
    let server = mock::anthropic::server(scripted_model(served.clone()));
    let out = trigger(&skill, &server, &["--runs", "2", "--jobs", "2", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON report");
    let s = &report["summary"];
    let pair = |v: &Value| (v["hits"].as_u64().unwrap(), v["trials"].as_u64().unwrap());
    // Positives: split 2/2, merge 2/2, invoice 0/2 (it looked around first).
    assert_eq!(pair(&s["recall"]), (4, 6), "{s:#}");
    // Negatives: haiku 0/2; near misses: docx 0/2 (its own skill), pptx 2/2.
    assert_eq!(pair(&s["false_trigger"]), (2, 6));
    assert_eq!(pair(&s["near_miss_false_trigger"]), (2, 4));
    assert_eq!(s["picked_instead"], json!({SIBLING: 2}));
    assert_eq!(s["undecided"], 0);
    let rows: Vec<(String, &str, u64, u64)> = s["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["query"]["query"].as_str().unwrap().to_owned(),
                q["query"]["kind"].as_str().unwrap(),
                q["triggered"].as_u64().unwrap(),
                q["decided"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("Split report.pdf into one file per page", "positive", 2),
        ("Write a haiku about autumn", "negative", 0),
        ("Merge a.pdf and b.pdf into one document", "positive", 2),
        ("Extract the text of invoice.pdf", "positive", 0),
        ("Convert notes.docx to Markdown", "near_miss", 0),
        ("Turn slides.pptx into a PDF handout", "near_miss", 2),
    ];
    assert_eq!(rows.len(), expected.len());
    for (row, (query, kind, triggered)) in rows.iter().zip(expected) {
        assert_eq!(
            (row.0.as_str(), row.1, row.2, row.3),
            (query, kind, triggered, 2)
        );
    }
    // The Wilson interval of 4/6 at 95%.
    let recall = &s["recall"]["interval"];
    assert!(
        (recall["low"].as_f64().unwrap() - 0.3000).abs() < 1e-3,
        "{recall}"
    );
    assert!(
        (recall["high"].as_f64().unwrap() - 0.9032).abs() < 1e-3,
        "{recall}"
    );
    // Every decision was taken on the first request: twelve trials, twelve model requests,
    // and the harness listed the skill in each.
    let trials = report["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 12);
    assert!(
        trials.iter().all(|t| t["listed"] == json!(true)),
        "{trials:#?}"
    );
    let stopped = trials
        .iter()
        .filter(|t| t["stopped_early"] == json!(true))
        .count();
    assert_eq!(
        stopped, 10,
        "every trial but the two answered haikus is stopped"
    );
    assert_eq!(model_requests(&server), 12);
    assert_eq!(served.lock().unwrap().len(), 12);

    // The human report says the same.
    let text = trigger(&skill, &server, &[]);
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    let text = stdout(&text);
    assert!(text.contains("Recall          2/3 67%"), "{text}");
    assert!(text.contains("Picked instead  docx-tools 1"), "{text}");
}

#[test]
fn the_early_stop_costs_a_fraction_of_a_full_trial() {
    if skip_agent_clis("the_early_stop_costs_a_fraction_of_a_full_trial") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("one.json");
    std::fs::write(
        &set,
        r#"[{"query": "Split report.pdf into one file per page", "should_trigger": true}]"#,
    )
    .unwrap();
    // The skill alone, with no eval file: the one query is the whole set.
    let target = write_skill(
        &tmp.path().join("alone"),
        TARGET,
        "Splits, merges and extracts text from PDF files. Use when the user works with PDFs.",
        "",
    );
    let cost = |full: bool| {
        let served = Arc::new(Mutex::new(Vec::new()));
        let server = mock::anthropic::server(scripted_model(served.clone()));
        let mut extra = vec!["--eval-set", set.to_str().unwrap(), "--json"];
        if full {
            extra.push("--full");
        }
        let out = trigger(&target, &server, &extra);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(report["summary"]["recall"]["hits"], 1, "{report:#}");
        let tokens: u64 = served
            .lock()
            .unwrap()
            .iter()
            .map(|u| u.input + u.output)
            .sum();
        (model_requests(&server), tokens, report)
    };
    let (early_requests, early_tokens, early) = cost(false);
    let (full_requests, full_tokens, full) = cost(true);
    assert_eq!(full_requests, 6, "the full trial does the task: {full:#}");
    assert_eq!(full_tokens, 6 * 3040 + 400 * 15);
    assert_eq!(early_requests, 1, "{early:#}");
    assert_eq!(early_tokens, 3040);
    assert_eq!(early["trials"][0]["stopped_early"], true);
    let ratio = early_tokens as f64 / full_tokens as f64;
    eprintln!(
        "early stop: {early_requests}/{full_requests} model requests, {early_tokens}/{full_tokens} tokens ({:.1}%), {:.2} s / {:.2} s",
        ratio * 100.0,
        early["summary"]["mean_seconds"].as_f64().unwrap(),
        full["summary"]["mean_seconds"].as_f64().unwrap()
    );
    assert!(ratio < 0.2, "{ratio}");
}

#[test]
fn a_skill_the_listing_drops_is_reported_and_no_trial_runs_unless_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let skills = tmp.path().join("skills");
    let long = format!("when_to_use: {}\n", "Read invoices quickly. ".repeat(80));
    for i in 0..5 {
        write_skill(&skills, &format!("s{i}"), "Reads invoices.", &long);
    }
    let target = write_skill(&skills, "s5", "Reads invoices.", &long);
    std::fs::write(
        target.join("trigger_evals.json"),
        r#"[{"query": "read this invoice", "should_trigger": true}]"#,
    )
    .unwrap();
    let served = Arc::new(Mutex::new(Vec::new()));
    let server = mock::anthropic::server(scripted_model(served));
    let out = Command::new(skillwatch_bin())
        .args([
            "trigger",
            target.to_str().unwrap(),
            "--harness",
            "claude-code",
            "--model",
            "claude-sonnet-4-5",
            "--program",
            "/nonexistent/claude",
            "--base-url",
            &server.url(),
        ])
        .env("SKILLWATCH_NO_DAEMON", "1")
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("over Claude Code's budget of 8000 characters for this model"),
        "{err}"
    );
    assert!(
        err.contains("only its first 1536 characters are listed"),
        "{err}"
    );
    assert!(err.contains("no trials run"), "{err}");
    assert!(
        server.requests().is_empty(),
        "no model request before the check"
    );
    // The check cannot know the model and assumes Claude Code's default one, whose budget
    // holds all six descriptions: SW222 names none (tests/tests/listing_budget.rs compares
    // both budgets with the real listing).
    let check = Command::new(skillwatch_bin())
        .args(["check", skills.to_str().unwrap()])
        .output()
        .unwrap();
    let listing = stdout(&check);
    let dropped: Vec<&str> = listing
        .lines()
        .filter(|l| l.contains("[SW222]"))
        .map(|l| l.split("/SKILL.md").next().unwrap_or(""))
        .map(|p| p.rsplit('/').next().unwrap_or(""))
        .collect();
    assert!(dropped.is_empty(), "{listing}");
}

#[test]
fn asked_anyway_the_trials_run_for_a_dropped_skill() {
    if skip_agent_clis("asked_anyway_the_trials_run_for_a_dropped_skill") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let skills = tmp.path().join("skills");
    let long = format!("when_to_use: {}\n", "Split PDF pages quickly. ".repeat(70));
    for i in 0..5 {
        write_skill(&skills, &format!("a{i}"), "Reads invoices.", &long);
    }
    let target = write_skill(&skills, TARGET, "Splits PDF files.", &long);
    std::fs::write(
        target.join("trigger_evals.json"),
        r#"[{"query": "Split report.pdf into one file per page", "should_trigger": true}]"#,
    )
    .unwrap();
    // The listing line the real CLI sent for the target in its first request.
    let sent = |server: &mock::MockServer| {
        let body = &server.bodies("/v1/messages")[0];
        let text = mock::anthropic::model_request(body).text;
        text.lines()
            .find(|l| *l == format!("- {TARGET}") || l.starts_with(&format!("- {TARGET}: ")))
            .expect("the skill is listed")
            .to_string()
    };

    // claude-sonnet-4-5's budget drops the target's description, as the check predicts; run
    // anyway, the real CLI lists it by name only and the model (which picks only what it
    // sees described) does not pick it.
    let server = mock::anthropic::server(scripted_model(Arc::new(Mutex::new(Vec::new()))));
    let out = trigger_on(
        "claude-sonnet-4-5",
        &target,
        &server,
        &["--anyway", "--json"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        report["visibility"]["problems"][0]["kind"],
        "dropped_by_budget"
    );
    assert_eq!(sent(&server), format!("- {TARGET}"));
    assert_ne!(report["trials"][0]["decision"]["skill"], TARGET);

    // mock-model's budget (30,000 characters) holds every description: the check sees no
    // drop, and the real CLI lists the description cut to exactly 1,536 characters (SW223).
    let server = mock::anthropic::server(scripted_model(Arc::new(Mutex::new(Vec::new()))));
    let out = trigger(&target, &server, &["--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(model_requests(&server), 1);
    assert_eq!(report["trials"][0]["decision"]["skill"], TARGET);
    let line = sent(&server);
    let listed = &line[format!("- {TARGET}: ").len()..];
    assert_eq!(listed.chars().count(), 1536, "{listed}");
    assert!(listed.ends_with('\u{2026}'), "{listed}");
}

/// The Codex version of [`scripted_model`]: Codex has no skill tool, so the model picks a
/// skill by reading its SKILL.md with `exec_command`.
fn scripted_codex_model() -> Script {
    Arc::new(move |req: &ModelRequest| {
        let usage = usage_at(req.turn);
        let listed = |skill: &str| req.mentions(&format!("- {skill}:"));
        let run = |cmd: &str| ModelReply::tool("exec_command", json!({"cmd": cmd}), usage);
        let read = |skill: &str| run(&format!("sed -n '1,200p' .agents/skills/{skill}/SKILL.md"));
        if req.turn == 0 {
            let asks = |text: &str| req.mentions(text);
            return if (asks("Split report.pdf") || asks("Merge a.pdf") || asks("slides.pptx"))
                && listed(TARGET)
            {
                read(TARGET)
            } else if asks("notes.docx") && listed(SIBLING) {
                read(SIBLING)
            } else if asks("invoice.pdf") {
                run("ls")
            } else {
                ModelReply::text("Leaves fall, crisp and gold.", usage)
            };
        }
        match req.turn {
            1..=4 => run("ls"),
            _ => ModelReply::text("Done.", usage),
        }
    })
}

#[test]
fn the_same_rates_on_the_real_codex_cli() {
    if skip_agent_clis("the_same_rates_on_the_real_codex_cli") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let skill = fixture(tmp.path());
    let server = mock::responses::server(scripted_codex_model());
    let codex = agent_cli("codex");
    let out = Command::new(skillwatch_bin())
        .args([
            "trigger",
            skill.to_str().unwrap(),
            "--harness",
            "codex",
            "--model",
            "mock-model",
            "--program",
            codex.to_str().unwrap(),
            "--base-url",
            &format!("{}/v1", server.url()),
            "--api-key-env",
            "SW_TEST_KEY",
            "--json",
        ])
        .env("SW_TEST_KEY", "sk-test")
        .env("SKILLWATCH_NO_DAEMON", "1")
        .env("SKILLWATCH_DB", history_db(&skill))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).expect("JSON report");
    let s = &report["summary"];
    let pair = |v: &Value| (v["hits"].as_u64().unwrap(), v["trials"].as_u64().unwrap());
    assert_eq!(pair(&s["recall"]), (2, 3), "{report:#}");
    assert_eq!(pair(&s["false_trigger"]), (1, 3));
    assert_eq!(pair(&s["near_miss_false_trigger"]), (1, 2));
    assert_eq!(s["picked_instead"], json!({SIBLING: 1}));
    let requests = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.contains("/responses"))
        .count();
    assert_eq!(requests, 6, "one model request per trial");

    // The split query alone, stopped at the decision and run to its end.
    let set = tmp.path().join("one.json");
    std::fs::write(
        &set,
        r#"[{"query": "Split report.pdf into one file per page", "should_trigger": true}]"#,
    )
    .unwrap();
    let alone = write_skill(
        &tmp.path().join("alone"),
        TARGET,
        "Splits, merges and extracts text from PDF files. Use when the user works with PDFs.",
        "",
    );
    let requests = |full: bool| {
        let server = mock::responses::server(scripted_codex_model());
        let base = format!("{}/v1", server.url());
        let mut args = vec![
            "trigger",
            alone.to_str().unwrap(),
            "--harness",
            "codex",
            "--model",
            "mock-model",
            "--program",
            codex.to_str().unwrap(),
            "--base-url",
            &base,
            "--api-key-env",
            "SW_TEST_KEY",
            "--eval-set",
            set.to_str().unwrap(),
        ];
        if full {
            args.push("--full");
        }
        let out = Command::new(skillwatch_bin())
            .args(&args)
            .env("SW_TEST_KEY", "sk-test")
            .env("SKILLWATCH_NO_DAEMON", "1")
            .env("SKILLWATCH_DB", history_db(&alone))
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        server
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path.contains("/responses"))
            .count()
    };
    let (early, full) = (requests(false), requests(true));
    eprintln!("codex early stop: {early}/{full} model requests");
    assert_eq!((early, full), (1, 6));
}
