//! Verdicts a skill author can trust (issue 19), end to end: `skillwatch run` (the real binary
//! and history file) on the `openai` harness against scripted agents on 127.0.0.1 that always
//! load the skill and then do well or badly per case. Loading the skill earns the with-skill
//! side `skill_execution` and `skill_efficiency` the baseline cannot have; the verdict must
//! follow what happened to the tasks, not that.

use std::sync::Arc;

use serde_json::{Value, json};
use skillwatch_tests::mock::{self, MockServer, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::run::{RunFixture, eval_yaml};
use skillwatch_tests::trial::{SKILL_MARKER, SKILL_NAME};
use skillwatch_tests::{code, skillwatch, stderr, stdout};

const CASES: usize = 8;

fn usage() -> MockUsage {
    MockUsage {
        input: 50,
        cached: 0,
        output: 5,
    }
}

/// Loads the skill whenever it is listed; then answers GOOD when `good(case, skill_read)`.
fn agent(good: fn(usize, bool) -> bool) -> Script {
    Arc::new(move |req: &ModelRequest| {
        if req.turn == 0 && req.mentions(&format!("- {SKILL_NAME}:")) {
            return ModelReply::tool("load_skill", json!({"name": SKILL_NAME}), usage());
        }
        let case = (0..CASES)
            .find(|i| req.mentions(&format!("line up ({i})")))
            .expect("a case prompt");
        if good(case, req.tool_result_mentions(SKILL_MARKER)) {
            ModelReply::text("GOOD: columns padded", usage())
        } else {
            ModelReply::text("BAD: unchanged", usage())
        }
    })
}

struct Scenario {
    fx: RunFixture,
    server: MockServer,
}

impl Scenario {
    fn new(good: fn(usize, bool) -> bool) -> Scenario {
        Scenario {
            fx: RunFixture::new(&eval_yaml(CASES, "")),
            server: mock::openai_chat::server(agent(good)),
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

fn report_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(out), stderr(out)))
}

/// The skill is read in every with-skill trial and makes seven of eight tasks fail: pass rate
/// 100% -> 12.5%. ACES's six-metric overall still rises; the outcome lift falls, and the run
/// says "regresses" with exit status 1, in the table, the JSON, JUnit and markdown.
#[test]
fn a_loaded_but_harmful_skill_regresses() {
    let s = Scenario::new(|case, read| !read || case == 0);
    let junit = s.fx.path("out/junit.xml");
    let md = s.fx.path("out/summary.md");
    let junit_arg = format!("junit:{}", junit.display());
    let md_arg = format!("markdown:{}", md.display());
    let out = s.run(&["--report", &junit_arg, "--report", &md_arg]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}\n{}", stderr(&out));
    for part in [
        "Skill Lift   -0.875 [",
        "(outcome: pass, behavior_check)",
        "Beside it    skill read 100% [68%, 100%] n=8 · skill_efficiency +1.000 · skill_execution +1.000 · pass rate 100% [68%, 100%] n=8 -> 12% [2%, 47%] n=8",
        "Verdict      regresses: lift -0.875, 95% t interval [",
        "sign-flip p = 0.0156",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    // Seven cases fell from 1/1 to 0/1: each alone is Fisher's p = 1, so none fails (they
    // are reported in their output); the verdict, which rests on all eight, does.
    assert!(
        xml.contains("tests=\"9\" failures=\"1\""),
        "only the verdict fails: {xml}"
    );
    assert!(
        xml.contains("lift -1.000 · baseline 1/1 passed · with skill 0/1 passed · skill read 1/1 · not shown at 95% (Fisher&apos;s exact test p = 1.000, Holm-adjusted over 8 cases 1.000)"),
        "{xml}"
    );
    assert!(
        xml.contains("<testcase name=\"table-format / overall\" classname=\"skillwatch.run\"><failure message=\"verdict regresses"),
        "{xml}"
    );
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(markdown.contains("verdict **regresses**"), "{markdown}");
    assert!(
        markdown.contains(
            "| case-3 | 1/1 passed · 1.00 | 0/1 passed · 0.00 | -1.000 | not shown, p = 1.000 | 1/1 |"
        ),
        "{markdown}"
    );

    // The same run read as ACES's overall: the artefact the default profile removes.
    let json_out = s.run(&["--json", "--scoring-profile", "aces"]);
    assert_eq!(code(&json_out), 0, "{}", stderr(&json_out));
    let report = report_of(&json_out);
    let headline = &report["summary"]["headline"];
    assert_eq!(report["verdict"]["verdict"], "improves", "{headline}");
    assert!(
        headline["aces"]["lift"].as_f64().unwrap() > 0.2,
        "{headline}"
    );
    assert_eq!(headline["outcome"]["verdict"]["verdict"], "regresses");
    // That run was made with the ACES profile and is read under it by history too (the
    // first run, made under the default, still regresses there).
    let db = s.fx.db.to_str().unwrap();
    let history = skillwatch(&["history", "table-format", "--db", db], None);
    let text = stdout(&history);
    assert!(
        text.contains("· improves (ACES overall (six metrics))"),
        "{text}"
    );
    assert!(text.contains("regresses"), "{text}");
    let outcome = skillwatch(
        &[
            "history",
            "table-format",
            "--scoring-profile",
            "outcome",
            "--db",
            db,
        ],
        None,
    );
    assert!(
        !stdout(&outcome).contains("improves"),
        "{}",
        stdout(&outcome)
    );

    // Three of those cases can show nothing at 95%, and say so.
    let small = s.run(&["--case", "case-1", "--case", "case-2", "--case", "case-3"]);
    assert_eq!(code(&small), 0, "{}", stderr(&small));
    assert!(
        stdout(&small).contains(
            "Verdict      inconclusive: 3 cases cannot show a difference at 95%; at least 6 are needed"
        ),
        "{}",
        stdout(&small)
    );
    assert!(
        stderr(&small).contains(
            "design: 3 cases x 1 attempt; smallest lift it can detect (80% power, 95%): none: 3 cases cannot show a difference at 95%"
        ),
        "{}",
        stderr(&small)
    );
}

/// Both conditions fail every task, the skill is loaded every time: never an improvement
/// (ACES's overall would call it one), exit 0; and not "no change" either: eight failures a
/// side do not rule out a change of 0.05 (issue 35).
#[test]
fn both_failing_everything_is_never_an_improvement() {
    let s = Scenario::new(|_, _| false);
    let out = s.run(&["--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report = report_of(&out);
    let verdict = report["verdict"]["verdict"].as_str().unwrap();
    assert_eq!(verdict, "inconclusive", "{}", report["verdict"]);
    assert_eq!(report["verdict"]["equivalence"]["shown"], false);
    assert_eq!(report["verdict"]["equivalence"]["floored"], true);
    let headline = &report["summary"]["headline"];
    assert_eq!(headline["outcome"]["lift"], 0.0);
    assert_eq!(
        headline["aces"]["verdict"]["verdict"], "improves",
        "{headline}"
    );
}

/// Both conditions pass every task, the skill is loaded every time: exit 0, never an
/// improvement, and not "no change" from a zero-width interval: eight passes a side are what a
/// skill that drops the pass rate to 0.8 gives 17% of the time.
#[test]
fn equal_pass_rates_are_never_an_improvement() {
    let s = Scenario::new(|_, _| true);
    let out = s.run(&[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Verdict      inconclusive: all 8 cases moved by exactly +0.000"),
        "{text}"
    );
    assert!(
        text.contains(
            "the equivalence test cannot rule out changes of 0.05 (90% equivalence bounds ["
        ),
        "{text}"
    );
    assert!(!text.contains("Verdict      improves"), "{text}");
}

/// `skillwatch plan`: the cases x attempts a lift needs, from the skill's own variance once
/// the history has a run, from the stated default before.
#[test]
fn plan_uses_the_history_variance_once_there_is_one() {
    use skillwatch_core::scoring::plan::{PlanParams, VarianceModel, cases_needed};
    let s = Scenario::new(|case, read| !read || case % 2 == 0);
    let db = s.fx.db.to_str().unwrap();
    let skill = s.fx.skill.to_str().unwrap();
    let before = skillwatch(&["plan", skill, "--detect", "0.1", "--db", db], None);
    assert_eq!(code(&before), 0, "{}", stderr(&before));
    let text = stdout(&before);
    for part in [
        "variance: the stated default (pass/fail outcomes at 50%, no history for this skill): case-to-case sd 0.10, attempt sd 0.71",
        "this suite (8 cases x 1 attempt) detects lifts of: 0.82",
        "to detect a lift of 0.10:",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }

    let run = s.run(&["--runs", "2"]);
    assert!(matches!(code(&run), 0 | 1), "{}", stderr(&run));
    let out = skillwatch(
        &[
            "plan", skill, "--detect", "0.1", "--runs", "2", "--json", "--db", db,
        ],
        None,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let plan = report_of(&out);
    assert_eq!(plan["cases"], 8);
    assert_eq!(plan["variance_run"], 1, "{plan}");
    assert_eq!(plan["variance"]["source"]["kind"], "history");
    assert_eq!(plan["variance"]["source"]["attempts"], 2);
    // The table is core::scoring::plan's answer for the variance shown.
    let variance: VarianceModel = serde_json::from_value(plan["variance"].clone()).unwrap();
    for row in plan["needed"].as_array().unwrap() {
        let attempts = row[0].as_u64().unwrap() as u32;
        let expected = cases_needed(0.1, attempts, &variance, &PlanParams::default(), 100_000);
        assert_eq!(row[1].as_u64().map(|n| n as usize), expected, "{row}");
    }
    // By the history's name: planned at the design of the run the variance came from.
    let out = skillwatch(
        &["plan", "table-format", "--detect", "0.1", "--db", db],
        None,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("this suite (8 cases x 2 attempts) detects lifts of: "),
        "{}",
        stdout(&out)
    );
    let out = skillwatch(
        &[
            "plan",
            "table-format",
            "--detect",
            "0.1",
            "--json",
            "--db",
            db,
        ],
        None,
    );
    let plan = report_of(&out);
    assert_eq!(plan["cases"], 8, "{plan}");
    assert_eq!(plan["runs"], 2, "{plan}");
    assert!(plan["current"]["kind"].is_string(), "{plan}");
}
