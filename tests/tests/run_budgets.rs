//! Budgets, enforced by the run engine for every kind of run (issue 37): against a scripted
//! model whose every reply reports 100 input and 20 output tokens, each trial (a paired trial,
//! a probe, a trigger query) is one model request of 120 tokens, so the trial at which
//! `--max-tokens` and `--max-cost` stop a run is known exactly. The run ends `stopped: budget`
//! with what it spent, its partial results are stored and read by `history` and `compare`,
//! and a cost limit on a model with no price is refused before any trial.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use skillwatch_tests::mock::{self, MockServer, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::run::{eval_yaml, skill_md};
use skillwatch_tests::{code, skillwatch, stderr, stdout, write_skill};

use crate::trigger_history::fixture as trigger_fixture;

/// Every reply: a final answer that passes the eval cases (`GOOD`), 100 tokens in, 20 out.
fn flat_model() -> Script {
    Arc::new(|_: &ModelRequest| ModelReply::text("GOOD: done as asked", MockUsage::tokens(100, 20)))
}

/// `[prices]` making `priced-model` cost $1,000 per million input tokens and $5,000 per
/// million output: a trial (100 in, 20 out) costs $0.10 + $0.10 = $0.20.
const PRICES: &str = "[prices.\"priced-model\"]\ninput = 1000.0\noutput = 5000.0\n";

/// A workspace with `skillwatch.toml` (the prices) and the demo skill with `cases` cases.
fn workspace(cases: usize) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("skillwatch.toml"), PRICES).unwrap();
    let skill = write_skill(
        tmp.path(),
        "table-format",
        skill_md("pad cells so columns line up").as_bytes(),
        &[("tests/eval.yaml", &eval_yaml(cases, ""))],
    );
    let db = tmp.path().join("history.sqlite3");
    (tmp, skill, db)
}

/// `skillwatch CMD SKILL --json --db DB` on `model` of `server`, with `extra`.
fn json_run(
    cmd: &str,
    skill: &Path,
    db: &Path,
    server: &MockServer,
    model: &str,
    extra: &[&str],
) -> (i32, Value, String) {
    let mut args = vec![
        cmd,
        skill.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--json",
    ];
    let harness = server.openai_args(model);
    args.extend(harness.iter().map(String::as_str));
    args.extend_from_slice(extra);
    let out = skillwatch(&args, None);
    let report = serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null);
    (code(&out), report, stderr(&out))
}

/// The report says the budget stopped the run, with what it spent.
fn assert_stopped(report: &Value, trials: u64) {
    assert_eq!(report["stop"]["reason"], "budget", "{report:#}");
    assert_eq!(report["spent"]["trials"], trials, "{report:#}");
    assert_eq!(report["spent"]["tokens_in"], trials * 100, "{report:#}");
    assert_eq!(report["spent"]["tokens_out"], trials * 20, "{report:#}");
}

#[test]
fn a_paired_run_stops_at_the_predicted_trial_and_its_partial_run_is_history() {
    let (_tmp, skill, db) = workspace(3);
    let server = mock::openai_chat::server(flat_model());
    // 3 cases x 2 conditions = 6 trials of 120 tokens: 4 make 480, a fifth would make 600
    let (status, report, err) = json_run(
        "run",
        &skill,
        &db,
        &server,
        "mock-model",
        &["--max-tokens", "500"],
    );
    assert_eq!(status, 0, "{err}");
    assert_stopped(&report, 4);
    assert_eq!(report["run"]["status"], "completed");
    assert_eq!(report["run"]["trial_count"], 4);
    assert_eq!(server.requests().len(), 4, "no fifth trial started");
    assert!(
        report["stop"]["detail"]
            .as_str()
            .unwrap()
            .contains("token limit of 500 (480 spent"),
        "{report:#}"
    );
    // the cost limit on a priced model: $0.20 a trial, 2 make $0.40, a third $0.60 > $0.50
    let (status, report, err) = json_run(
        "run",
        &skill,
        &db,
        &server,
        "priced-model",
        &["--max-cost", "0.5"],
    );
    assert_eq!(status, 0, "{err}");
    assert_stopped(&report, 2);
    assert!(
        (report["spent"]["cost_usd"].as_f64().unwrap() - 0.4).abs() < 1e-9,
        "{report:#}"
    );
    assert_eq!(server.requests().len(), 6);

    // both partial runs are history: listed, and compared case by case (2 cases were paired
    // on mock-model, 1 on priced-model: too few to say anything, and it says so)
    let history = skillwatch(
        &[
            "history",
            "table-format",
            "--db",
            db.to_str().unwrap(),
            "--json",
        ],
        None,
    );
    assert_eq!(code(&history), 0, "{}", stderr(&history));
    let history: Value = serde_json::from_str(&stdout(&history)).unwrap();
    assert_eq!(history["runs"].as_array().unwrap().len(), 2, "{history:#}");
    let compare = skillwatch(
        &[
            "compare",
            "table-format",
            "--model",
            "mock-model",
            "--model",
            "priced-model",
            "--db",
            db.to_str().unwrap(),
            "--json",
        ],
        None,
    );
    assert_eq!(code(&compare), 0, "{}", stderr(&compare));
    let compare: Value = serde_json::from_str(&stdout(&compare)).unwrap();
    assert!(compare.to_string().contains("inconclusive"), "{compare:#}");
    // `plan` states what a design is expected to spend: 120 tokens and $0.20 a trial here
    let plan = skillwatch(
        &[
            "plan",
            skill.to_str().unwrap(),
            "--detect",
            "0.5",
            "--model",
            "priced-model",
            "--db",
            db.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code(&plan), 0, "{}", stderr(&plan));
    let plan = stdout(&plan);
    let row = plan
        .lines()
        .find(|l| l.trim_start().starts_with("1 ") && l.contains("tokens"))
        .unwrap_or_else(|| panic!("no expected spending for 1 attempt: {plan}"));
    let words: Vec<&str> = row.split_whitespace().collect();
    let trials: f64 = words[2].parse().unwrap();
    assert_eq!(words[4], format!("{:.0}", trials * 120.0), "{row}");
    assert_eq!(words[7], format!("${:.3}", trials * 0.2), "{row}");
    // the text report says it too
    let mut args = vec![
        "run",
        skill.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--max-trials",
        "1",
    ];
    let harness = server.openai_args("mock-model");
    args.extend(harness.iter().map(String::as_str));
    let text = skillwatch(&args, None);
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    let text = stdout(&text);
    assert!(text.contains("stopped: budget"), "{text}");
    assert!(
        text.contains("Stopped      budget: the trial limit of 1 is reached"),
        "{text}"
    );
    assert!(
        text.contains("Spent        1 trial, 120 tokens (100 in, 20 out)"),
        "{text}"
    );
}

#[test]
fn a_cost_limit_on_a_model_with_no_price_is_refused_before_any_trial() {
    let (_tmp, skill, db) = workspace(2);
    let server = mock::openai_chat::server(flat_model());
    for cmd in ["run", "probe", "trigger"] {
        let (status, _, err) = json_run(
            cmd,
            &skill,
            &db,
            &server,
            "mock-model",
            &["--max-cost", "1"],
        );
        assert_eq!(status, 2, "{cmd}: {err}");
        assert!(
            err.contains("no price is known for the model \"mock-model\"")
                && err.contains("[prices.\"mock-model\"]"),
            "{cmd}: {err}"
        );
    }
    assert!(server.requests().is_empty(), "no trial ran");
    assert!(!db.exists(), "nothing was stored");
}

#[test]
fn a_probe_run_stops_at_the_predicted_probe() {
    let (_tmp, skill, db) = workspace(1);
    let server = mock::openai_chat::server(flat_model());
    let probes = ["--probe", "ABC-03", "--probe", "PB-02", "--probe", "SDP-01"];
    // a probe is one request of 120 tokens: 2 make 240, a third would make 360 > 300
    let mut extra = probes.to_vec();
    extra.extend(["--max-tokens", "300"]);
    let (status, report, err) = json_run("probe", &skill, &db, &server, "mock-model", &extra);
    // a group with no probe run: S is not measured (exit 2), and the report says why
    assert_eq!(status, 2, "{err}");
    assert_stopped(&report, 2);
    assert_eq!(report["run"]["outcomes"].as_array().unwrap().len(), 2);
    assert_eq!(server.requests().len(), 2);
    let mut extra = probes.to_vec();
    extra.extend(["--max-cost", "0.3"]);
    let (status, report, err) = json_run("probe", &skill, &db, &server, "priced-model", &extra);
    assert_eq!(status, 2, "{err}");
    assert_stopped(&report, 1);

    let history = skillwatch(
        &[
            "history",
            "table-format",
            "--db",
            db.to_str().unwrap(),
            "--json",
        ],
        None,
    );
    assert_eq!(code(&history), 0, "{}", stderr(&history));
    let history: Value = serde_json::from_str(&stdout(&history)).unwrap();
    assert_eq!(
        history["probe_runs"].as_array().unwrap().len(),
        2,
        "{history:#}"
    );
    // compare reads the partial probe runs beside the lift (a paired run on each model)
    for model in ["mock-model", "priced-model"] {
        let (status, _, err) = json_run("run", &skill, &db, &server, model, &[]);
        assert_eq!(status, 0, "{err}");
    }
    let compare = skillwatch(
        &[
            "compare",
            "table-format",
            "--model",
            "mock-model",
            "--model",
            "priced-model",
            "--db",
            db.to_str().unwrap(),
            "--json",
        ],
        None,
    );
    let compare_out: Value = serde_json::from_str(&stdout(&compare)).unwrap_or(Value::Null);
    assert!(
        compare_out["security"]["reference_run"].is_number(),
        "{}{}",
        stdout(&compare),
        stderr(&compare)
    );
}

#[test]
fn a_trigger_run_stops_at_the_predicted_query_and_compare_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("skillwatch.toml"), PRICES).unwrap();
    let skill = trigger_fixture(tmp.path());
    let db = tmp.path().join("history.sqlite3");
    let server = mock::openai_chat::server(flat_model());
    // 16 queries, one request of 120 tokens each: 4 make 480, a fifth would make 600
    let (status, report, err) = json_run(
        "trigger",
        &skill,
        &db,
        &server,
        "mock-model",
        &["--max-tokens", "500"],
    );
    assert_eq!(status, 0, "{err}");
    assert_stopped(&report, 4);
    assert_eq!(report["trials"].as_array().unwrap().len(), 4);
    assert_eq!(report["status"], "completed");
    let (status, report, err) = json_run(
        "trigger",
        &skill,
        &db,
        &server,
        "priced-model",
        &["--max-cost", "0.7"],
    );
    assert_eq!(status, 0, "{err}");
    assert_stopped(&report, 3);
    assert_eq!(server.requests().len(), 7);

    let history = skillwatch(
        &[
            "history",
            "pdf-tools",
            "--db",
            db.to_str().unwrap(),
            "--json",
        ],
        None,
    );
    assert_eq!(code(&history), 0, "{}", stderr(&history));
    let history: Value = serde_json::from_str(&stdout(&history)).unwrap();
    let runs = history["trigger_runs"].as_array().unwrap();
    assert_eq!(
        runs.iter()
            .map(|r| r["trials"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![3, 4],
        "{history:#}"
    );
    let compare = skillwatch(
        &[
            "compare",
            "pdf-tools",
            "--triggers",
            "--model",
            "mock-model",
            "--model",
            "priced-model",
            "--db",
            db.to_str().unwrap(),
            "--json",
        ],
        None,
    );
    let out: Value = serde_json::from_str(&stdout(&compare)).unwrap_or(Value::Null);
    assert!(
        out["change"]["recall"].is_object(),
        "{}{}",
        stdout(&compare),
        stderr(&compare)
    );
}

#[test]
fn through_the_daemon_a_budget_stops_the_same_trial_and_the_daily_cap_counts_it() {
    use skillwatch_tests::daemon::DaemonFixture;
    let server = mock::openai_chat::server(flat_model());
    let mut fx = DaemonFixture::new();
    fx.write_config(PRICES);
    let skill = fx.add_skill("alpha", 3);
    fx.start();
    let mut args = vec!["run".to_owned(), skill.to_str().unwrap().to_owned()];
    args.extend(server.openai_args("priced-model"));
    args.extend(["--max-cost", "0.5", "--json"].map(str::to_owned));
    let outs = fx.both(&args, &[], &[]);
    let reports: Vec<Value> = outs
        .iter()
        .map(|o| {
            assert_eq!(code(o), 0, "{}", stderr(o));
            serde_json::from_str(&stdout(o)).unwrap()
        })
        .collect();
    for r in &reports {
        assert_stopped(r, 2);
    }
    assert_eq!(reports[0]["stop"], reports[1]["stop"]);
    assert_eq!(reports[0]["spent"], reports[1]["spent"]);
    // today's spending, as the daemon counts it for its daily cap: both runs' four trials
    let status = fx.cli(&["daemon", "status", "--json"]);
    let status: Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(status["budget"]["trials_today"], 4, "{status:#}");
    assert!(
        (status["budget"]["cost_today_usd"].as_f64().unwrap() - 0.8).abs() < 1e-9,
        "{status:#}"
    );
    assert!(fx.terminate().success());
}

/// The agent answers GOOD; the judge (offered no tools) gives a valid independent verdict.
/// Both report 100 input and 20 output tokens a call.
fn flat_model_and_judge() -> Script {
    Arc::new(|req: &ModelRequest| {
        let text = if req.tool_names.is_empty() {
            "{\"rubric_scores\": [], \"overall_score\": 4, \"overall_reasoning\": \"fine\"}"
        } else {
            "GOOD: done as asked"
        };
        ModelReply::text(text, MockUsage::tokens(100, 20))
    })
}

/// A run pays for its judge: each trial's independent verdict is a call of 120 tokens at the
/// judge model's price, in the ledger beside the trials, counted by `--max-tokens` (not by
/// `--max-trials`) and shown on the `Spent` line.
#[test]
fn a_judged_run_counts_its_judge_calls_against_its_budget() {
    let (tmp, skill, db) = workspace(2);
    std::fs::write(
        tmp.path().join("skillwatch.toml"),
        format!("{PRICES}[prices.\"priced-judge\"]\ninput = 1000.0\noutput = 5000.0\n"),
    )
    .unwrap();
    let server = mock::openai_chat::server(flat_model_and_judge());
    let url = format!("{}/v1", server.url());
    let judge = [
        "--judge-model",
        "priced-judge",
        "--judge-url",
        url.as_str(),
        "--judge-mode",
        "independent",
        "--no-reuse",
    ];
    // unlimited: 4 trials and 4 judge calls, 960 tokens, $0.20 each at both prices
    let (status, report, err) = json_run("run", &skill, &db, &server, "priced-model", &judge);
    assert_eq!(status, 0, "{err}");
    let spent = &report["spent"];
    assert_eq!(
        (&spent["trials"], &spent["judge_calls"]),
        (&4.into(), &4.into()),
        "{report:#}"
    );
    assert_eq!(spent["tokens_in"], 800, "{report:#}");
    assert!(
        (spent["cost_usd"].as_f64().unwrap() - 1.6).abs() < 1e-9,
        "{report:#}"
    );
    // --max-tokens 500: a trial and its judge call make 240; after two, 480 + the next trial's
    // 120 would cross 500 (counting trials alone, a fifth trial would have been the first to)
    let mut limited = judge.to_vec();
    limited.extend(["--max-tokens", "500"]);
    let (status, report, err) = json_run("run", &skill, &db, &server, "priced-model", &limited);
    assert_eq!(status, 0, "{err}");
    assert_eq!(report["stop"]["reason"], "budget", "{report:#}");
    let spent = &report["spent"];
    assert_eq!(
        (&spent["trials"], &spent["judge_calls"]),
        (&2.into(), &2.into()),
        "{report:#}"
    );
    assert!(
        report["stop"]["detail"]
            .as_str()
            .unwrap()
            .contains("(480 spent"),
        "{report:#}"
    );
    // the text report names both
    let mut args = vec!["run", skill.to_str().unwrap(), "--db", db.to_str().unwrap()];
    let harness = server.openai_args("priced-model");
    args.extend(harness.iter().map(String::as_str));
    args.extend(judge);
    args.extend(["--max-trials", "1"]);
    let text = skillwatch(&args, None);
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    let text = stdout(&text);
    assert!(
        text.contains(
            "Spent        1 trial and 1 judge call, 240 tokens (200 in, 40 out), $0.4000"
        ),
        "{text}"
    );
}
