//! `skillwatch run` and `skillwatch rejudge` as a user runs them: the real binary, the real
//! history file, the `openai` harness and an LLM judge on a scripted chat-completions server
//! on 127.0.0.1.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::run::{RunFixture, eval_yaml};
use skillwatch_tests::trial::{SKILL_MARKER, SKILL_NAME};
use skillwatch_tests::{code, skillwatch, stderr, stdout};

fn usage() -> MockUsage {
    MockUsage {
        input: 50,
        cached: 0,
        output: 5,
    }
}

/// The agent: GOOD once the skill was loaded, BAD otherwise. The judge (requests without
/// tools): independent scores 5 for GOOD and 3 otherwise, pairwise prefers the GOOD response
/// wherever it is shown; while `broken`, the judge answers prose without JSON.
fn agent_and_judge(broken: Arc<AtomicBool>) -> Script {
    Arc::new(move |req: &ModelRequest| {
        if req.tool_names.is_empty() {
            if broken.load(Ordering::SeqCst) {
                return ModelReply::text("I would rather not give a score.", usage());
            }
            return ModelReply::text(judge_reply(req), usage());
        }
        if req.tool_result_mentions(SKILL_MARKER) {
            return ModelReply::text("GOOD: columns padded", usage());
        }
        if req.turn == 0 && req.mentions(&format!("- {SKILL_NAME}:")) {
            return ModelReply::tool("load_skill", json!({"name": SKILL_NAME}), usage());
        }
        ModelReply::text("BAD: unchanged", usage())
    })
}

fn judge_reply(req: &ModelRequest) -> String {
    let user = req.body["messages"][1]["content"].as_str().unwrap_or("");
    if user.contains("## Response A") {
        let a_first = user.find("## Response A").unwrap();
        let b_first = user.find("## Response B").unwrap();
        let good = user.find("GOOD: columns").unwrap_or(0);
        let winner = if good > a_first && good < b_first {
            "A"
        } else {
            "B"
        };
        return format!(
            "Comparing both:\n```json\n{{\"rubric_results\": [{{\"criterion\": \"c\", \"winner\": \"{winner}\", \"magnitude\": \"much-better\"}}, {{\"winner\": \"{winner}\", \"magnitude\": \"slightly-better\",}}], \"overall_winner\": \"{winner}\", \"overall_magnitude\": \"much-better\"}}\n```"
        );
    }
    let score = if user.contains("### Output\n\nGOOD") {
        5
    } else {
        3
    };
    format!(
        "Here you go: {{\"rubric_scores\": [{{\"score\": {score}}}, {{\"score\": {score}}}], \"overall_score\": {score}, \"overall_reasoning\": \"r\"}}"
    )
}

struct Cli {
    fx: RunFixture,
    server: mock::MockServer,
    broken: Arc<AtomicBool>,
}

impl Cli {
    fn new(cases: usize) -> Cli {
        let broken = Arc::new(AtomicBool::new(false));
        Cli {
            fx: RunFixture::new(&eval_yaml(cases, "")),
            server: mock::openai_chat::server(agent_and_judge(broken.clone())),
            broken,
        }
    }

    fn run(&self, extra: &[&str]) -> std::process::Output {
        let url = format!("{}/v1", self.server.url());
        let mut args = vec![
            "run",
            self.fx.skill.to_str().unwrap(),
            "--harness",
            "openai",
            "--base-url",
            &url,
            "--model",
            "mock-model",
            "--db",
            self.fx.db.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        skillwatch(&args, Some(self.fx.root.path()))
    }
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(out), stderr(out)))
}

#[test]
fn run_prints_the_table_and_writes_every_report_format() {
    let cli = Cli::new(2);
    let md = cli.fx.path("out/summary.md");
    let junit = cli.fx.path("out/junit.xml");
    let js = cli.fx.path("out/report.json");
    let reports = [
        format!("markdown:{}", md.display()),
        format!("junit:{}", junit.display()),
        format!("json:{}", js.display()),
    ];
    let out = cli.run(&[
        "--runs",
        "2",
        "--jobs",
        "2",
        "--report",
        &reports[0],
        "--report",
        &reports[1],
        "--report",
        &reports[2],
    ]);
    assert_eq!(code(&out), 0, "stderr: {}", stderr(&out));
    let text = stdout(&out);
    // Two cases that both flip from fail to pass: a zero-width interval over two cases is no
    // evidence at 95% (the exact sign-flip test cannot go below 2^(1-2) = 0.5).
    for part in [
        "table-format on mock-model (openai ",
        "8 trials: 8 run",
        "case-0",
        "0/2 passed 0.00",
        "2/2 passed 1.00",
        "+1.000",
        "Skill Lift   +1.000 [+1.000, +1.000] 95% t n=2  (outcome: pass, behavior_check)",
        "Design       2 cases x 2 attempts (averaged within each case; n = cases)",
        "Beside it    skill read 100% [51%, 100%] n=4 · skill_efficiency +1.000 · skill_execution +1.000 · pass rate 0% [0%, 49%] n=4 -> 100% [51%, 100%] n=4",
        "ACES overall (six metrics) +0.750 [+0.750, +0.750] 95% t n=2 · inconclusive (n too small) (not the verdict; --scoring-profile aces)",
        "pass@2/^2   baseline 0.00 / 0.00 · with skill 1.00 / 1.00",
        "Verdict      inconclusive: 2 cases cannot show a difference at 95%; at least 6 are needed",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
    let progress = stderr(&out);
    assert!(
        progress.contains("case-1 skill #1: completed, passed"),
        "plain progress lines off a TTY: {progress}"
    );
    assert!(
        progress.contains(
            "design: 2 cases x 2 attempts; smallest lift it can detect (80% power, 95%): none: 2 cases cannot show a difference at 95%; at least 6 are needed"
        ),
        "the design is printed before the run: {progress}"
    );

    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(
        markdown.starts_with("## skillwatch: `table-format` on `mock-model`"),
        "{markdown}"
    );
    assert!(
        markdown.contains("**Skill Lift (outcome) +1.000**")
            && markdown.contains("verdict **inconclusive (n too small)**"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| case-1 | 0/2 passed · 0.00 | 2/2 passed · 1.00 | +1.000 | not shown, p = 0.667 | 2/2 |"),
        "{markdown}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testsuite name=\"skillwatch run: table-format\" tests=\"3\" failures=\"0\""),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase name=\"table-format / case-0\""),
        "{xml}"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&js).unwrap()).unwrap();
    assert_eq!(report["verdict"]["verdict"], "inconclusive");
    assert_eq!(report["verdict"]["needed_cases"], 6);
    assert_eq!(report["summary"]["headline"]["outcome"]["lift"], 1.0);
    assert_eq!(report["summary"]["headline"]["aces"]["lift"], 0.75);
    let pass_at_k = &report["summary"]["headline"]["pass_at_k"];
    assert_eq!(pass_at_k[1]["condition"], "skill", "{pass_at_k}");
    assert_eq!(pass_at_k[1]["pass_at_k"], 1.0, "{pass_at_k}");

    // The run is in the history the other commands read.
    let history = skillwatch(
        &[
            "history",
            SKILL_NAME,
            "--db",
            cli.fx.db.to_str().unwrap(),
            "--json",
        ],
        None,
    );
    assert_eq!(code(&history), 0, "{}", stderr(&history));
    let runs = &json_of(&history)["runs"];
    assert_eq!(runs[0]["headline"]["outcome"]["lift"], 1.0);
    assert_eq!(runs[0]["headline"]["pass_at_k"][0]["k"], 2);
    let table = skillwatch(
        &["history", SKILL_NAME, "--db", cli.fx.db.to_str().unwrap()],
        None,
    );
    assert!(
        stdout(&table).contains("inconclusive (n too small)"),
        "{}",
        stdout(&table)
    );
}

#[test]
fn a_judged_run_scores_accuracy_and_rejudge_repairs_judge_errors() {
    let cli = Cli::new(2);
    cli.broken.store(true, Ordering::SeqCst);
    let out = cli.run(&["--judge-model", "mock-judge", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report = json_of(&out);
    assert!(
        stderr(&out).contains("judge error on case-0"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        report["tally"]["judge_errors"], 6,
        "4 independent + 2 pairwise"
    );
    assert_eq!(
        report["summary"]["headline"]["trials"]["skill"]["completed"], 2,
        "judge errors are not trial failures"
    );
    assert_eq!(
        report["summary"]["headline"]["outcome"]["lift"], 1.0,
        "no accuracy without a verdict"
    );
    let run = report["run"]["id"].as_i64().unwrap().to_string();
    // every answered judge call was paid for, failed verdicts too (each asked again twice)
    let judged = report["spent"]["judge_calls"].as_u64().unwrap();
    // (4 independent + 2 pairs x 2 orders) x 3 attempts
    assert_eq!(judged, 24, "{}", report["spent"]);

    // The judge works again: only what failed is asked again, and accuracy enters the lift.
    cli.broken.store(false, Ordering::SeqCst);
    let db = cli.fx.db.to_str().unwrap();
    let again = skillwatch(&["rejudge", &run, "--db", db, "--json"], None);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    let v = json_of(&again);
    assert_eq!(
        v["rejudged"],
        json!({"trials": 4, "pairs": 2, "failures": 0})
    );
    // the re-judge's calls are the run's spending too: 4 verdicts, 2 pairs in both orders
    assert_eq!(
        v["report"]["spent"]["judge_calls"],
        judged + 8,
        "{}",
        v["report"]["spent"]
    );
    let headline = &v["report"]["summary"]["headline"];
    // accuracy: skill (5-1)/4 = 1, baseline (3-1)/4 = 0.5. Outcome: pass, behavior_check and
    // accuracy, (1 + 1 + 0.5) / 3; ACES: (0 + 1 + 1 + 1 + 0.5) / 5.
    let lift = headline["outcome"]["lift"].as_f64().unwrap();
    assert!((lift - 2.5 / 3.0).abs() < 1e-12, "{lift}");
    let aces = headline["aces"]["lift"].as_f64().unwrap();
    assert!((aces - 0.7).abs() < 1e-12, "{aces}");
    let compat = &v["report"]["compat"];
    assert_eq!(compat["passed"], true, "{compat}");
    assert!(
        compat["overall_improvement_score"].as_f64().unwrap() > 0.5,
        "{compat}"
    );

    // Nothing is missing now: a second rejudge asks nothing.
    let idle = skillwatch(&["rejudge", &run, "--db", db, "--json"], None);
    let idle = json_of(&idle);
    assert_eq!(
        idle["rejudged"],
        json!({"trials": 0, "pairs": 0, "failures": 0})
    );
    assert_eq!(idle["report"]["spent"]["judge_calls"], judged + 8);
}

#[test]
fn usage_mistakes_are_explained() {
    let cli = Cli::new(1);
    let db = cli.fx.db.to_str().unwrap();
    let skill = cli.fx.skill.to_str().unwrap();
    let no_harness = skillwatch(
        &["run", skill, "--model", "m", "--db", db],
        Some(cli.fx.root.path()),
    );
    assert_eq!(code(&no_harness), 2);
    assert!(
        stderr(&no_harness).contains("expected --harness"),
        "{}",
        stderr(&no_harness)
    );
    let bad = skillwatch(
        &[
            "run",
            skill,
            "--harness",
            "clade",
            "--model",
            "m",
            "--db",
            db,
        ],
        None,
    );
    assert!(
        stderr(&bad).contains("expected a harness name"),
        "{}",
        stderr(&bad)
    );
    let no_url = skillwatch(
        &[
            "run",
            skill,
            "--harness",
            "openai",
            "--model",
            "m",
            "--db",
            db,
        ],
        None,
    );
    assert!(
        stderr(&no_url).contains("expected base_url to be set"),
        "{}",
        stderr(&no_url)
    );
    let not_skill = skillwatch(
        &[
            "run",
            db,
            "--harness",
            "openai",
            "--base-url",
            "http://x/v1",
            "--model",
            "m",
            "--db",
            db,
        ],
        None,
    );
    assert_eq!(code(&not_skill), 2);
    let bad_report = skillwatch(&["run", skill, "--report", "pdf:x", "--db", db], None);
    assert!(
        stderr(&bad_report).contains("expected json, junit or markdown"),
        "{}",
        stderr(&bad_report)
    );
    std::fs::write(
        cli.fx.root.path().join("skillwatch.toml"),
        "[run]\nharness = \"openai\"\nmodel = \"m\"\n[harness.openai]\nbase_ulr = \"x\"\n",
    )
    .unwrap();
    let typo = skillwatch(&["run", skill, "--db", db], None);
    assert!(
        stderr(&typo).contains("skillwatch.toml:5:1: unknown field `base_ulr`"),
        "{}",
        stderr(&typo)
    );
}

#[test]
fn skillwatch_toml_supplies_the_defaults() {
    let cli = Cli::new(1);
    let toml = format!(
        "[run]\nharness = \"openai\"\nmodel = \"from-toml\"\nruns = 2\n\n[harness.openai]\nbase_url = \"{}/v1\"\n",
        cli.server.url()
    );
    std::fs::write(cli.fx.root.path().join("skills/skillwatch.toml"), toml).unwrap();
    let out = skillwatch(
        &[
            "run",
            cli.fx.skill.to_str().unwrap(),
            "--db",
            cli.fx.db.to_str().unwrap(),
            "--json",
        ],
        None,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["run"]["model"], "from-toml");
    assert_eq!(report["run"]["trial_count"], 4);
}
