//! A Vally experiment with a plugin arm (issue 38, acceptance 2): `run` through the daemon
//! runs three conditions (baseline, the skill, the whole plugin) and gives two lifts, each
//! paired with the baseline by case and attempt; `history`, the markdown report and the HTML
//! report show both.
//!
//! The plugin here has two skills, dump-collect (under test) and dump-analyze. The scripted
//! model reads the skill it is offered; offered both (only the plugin arm offers both), it
//! reads dump-analyze except on cases (0) and (1), and dump-analyze's text does not make it
//! pass. So the skill lifts every case and the plugin arm a third of them: a plugin arm that staged the skill
//! alone, or was not run, fails the test.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use skillwatch_tests::daemon::DaemonFixture;
use skillwatch_tests::mock::{self, MockUsage, ModelReply, ModelRequest, Script};
use skillwatch_tests::{code, json_report, stderr, stdout};

const COLLECT_MARKER: &str = "COLLECT-MARKER-5e1";
const ANALYZE_MARKER: &str = "ANALYZE-MARKER-9c4";

/// Reads the skill offered (dump-analyze first, when offered, except on cases (0) and (1)) and
/// answers from what it read: COLLECTED from dump-collect, ANALYZED from dump-analyze, BAD
/// from nothing.
fn arm_sensitive_model() -> Script {
    Arc::new(|req: &ModelRequest| {
        let usage = MockUsage::tokens(100, 10);
        if req.tool_result_mentions(COLLECT_MARKER) {
            return ModelReply::text("COLLECTED: DOTNET_DbgEnableMiniDump=1", usage);
        }
        if req.tool_result_mentions(ANALYZE_MARKER) {
            return ModelReply::text("ANALYZED: opened the dump in dotnet-dump", usage);
        }
        if req.turn == 0 {
            let first_two = req.mentions("(0)") || req.mentions("(1)");
            let analyze = req.mentions("- dump-analyze:") && !first_two;
            let collect = req.mentions("- dump-collect:");
            let name = match (analyze, collect) {
                (true, _) => Some("dump-analyze"),
                (false, true) => Some("dump-collect"),
                _ => None,
            };
            if let Some(name) = name {
                return ModelReply::tool("load_skill", json!({ "name": name }), usage);
            }
        }
        ModelReply::text("BAD: nothing configured", usage)
    })
}

/// A plugin repository as dotnet/skills lays it out: the plugin's skills, the skill's Vally
/// eval spec in the tests tree, and an experiment at the root whose plugin arm stages the
/// plugin's whole `skills/` folder. Returns the skill under test.
fn plugin_repo(root: &Path) -> PathBuf {
    let skill = |name: &str, description: &str, marker: &str| {
        let dir = root.join("plugins/diag/skills").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let md = format!(
            "---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n{marker}: \
             follow these steps.\n"
        );
        std::fs::write(dir.join("SKILL.md"), md).unwrap();
        dir
    };
    let target = skill(
        "dump-collect",
        "Configures crash dump collection for .NET apps. Use when asked to collect dumps.",
        COLLECT_MARKER,
    );
    skill(
        "dump-analyze",
        "Analyses .NET crash dumps. Use when asked what a dump says.",
        ANALYZE_MARKER,
    );
    let stimulus = |i: usize| {
        format!(
            "  - name: case-{i}\n    prompt: Configure crash dumps for my app ({i}).\n    \
             graders:\n      - type: output-contains\n        config:\n          substring: \
             COLLECTED\n"
        )
    };
    let spec = format!(
        "name: dump-collect\nstimuli:\n{}",
        (0..6).map(stimulus).collect::<String>()
    );
    let tests = root.join("tests/diag/dump-collect");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(tests.join("eval.vally.yaml"), spec).unwrap();
    std::fs::write(
        root.join("dump-collect.experiment.yaml"),
        r#"name: dump-collect-arms
evals:
  - tests/diag/dump-collect/eval.vally.yaml
vary:
  - /environment/skills
baseline: baseline
variants:
  baseline:
    environment:
      skills: []
  skilled:
    environment:
      skills:
        - plugins/diag/skills/dump-collect
  plugin:
    environment:
      skills:
        - plugins/diag/skills
"#,
    )
    .unwrap();
    target
}

fn lift(headline: &Value) -> f64 {
    headline["outcome"]["lift"]
        .as_f64()
        .unwrap_or_else(|| panic!("no outcome lift in {headline:#}"))
}

#[test]
fn a_plugin_arm_runs_as_a_third_condition_with_its_own_lift() {
    let server = mock::openai_chat::server(arm_sensitive_model());
    let mut fx = DaemonFixture::new();
    let skill = plugin_repo(&fx.workspace.join("repo"));
    fx.start();
    let markdown = fx.root.path().join("run.md");
    let mut args = vec!["run".to_owned(), skill.to_str().unwrap().to_owned()];
    args.extend(server.openai_args("mock-model"));
    args.extend(["--runs", "2", "--no-reuse"].map(str::to_owned));
    let mut json_args = args.clone();
    json_args.extend(["--json".into(), "--report".into()]);
    json_args.push(format!("markdown:{}", markdown.display()));
    let junit = fx.root.path().join("run.xml");
    json_args.extend(["--report".into(), format!("junit:{}", junit.display())]);

    let out = fx.cli(&json_args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let r = json_report(&out);
    // 6 cases x 3 conditions x 2 attempts, every one run
    assert_eq!(r["tally"]["planned"], 36, "{:#}", r["tally"]);
    assert_eq!(r["tally"]["ran"], 36, "{:#}", r["tally"]);
    let h = &r["summary"]["headline"];
    assert_eq!(lift(h), 1.0, "the skill passes every case");
    let plugin = &h["plugin"];
    assert!(
        (lift(plugin) - 1.0 / 3.0).abs() < 1e-9,
        "the plugin arm passes cases (0) and (1) alone: {plugin:#}"
    );
    assert_eq!(plugin["outcome"]["cases"], 6);
    assert_eq!(plugin["outcome"]["pairs"], 12);
    assert!(
        plugin["outcome"]["interval"]["low"].is_number(),
        "{plugin:#}"
    );
    assert_eq!(h["trials"]["plugin"]["completed"], 12, "{:#}", h["trials"]);
    assert_eq!(r["verdict"]["verdict"], "improves", "{:#}", r["verdict"]);
    assert!(r["plugin_verdict"]["reason"].is_string(), "{r:#}");
    let skills = &r["run"]["config"]["plugin"]["skills"];
    let names: Vec<&str> = skills
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["dump-analyze", "dump-collect"]);
    // cases (0) and (1): the skill and the plugin arm both lift them; the others, the skill alone
    let case0 = &r["cases"][0];
    assert_eq!(case0["plugin_lift"], 1.0, "{case0:#}");
    assert_eq!(r["cases"][2]["plugin_lift"], 0.0, "{:#}", r["cases"][2]);
    assert_eq!(r["cases"][2]["lift"], 1.0, "{:#}", r["cases"][2]);

    let md = std::fs::read_to_string(&markdown).unwrap();
    assert!(md.contains("**Plugin Lift** +0.333"), "{md}");
    assert!(md.contains("2 skills of the arm `plugin`"), "{md}");
    // the per-case tables (markdown, JUnit) carry the plugin arm's side and lift
    assert!(
        md.contains("| exact test | plugin arm | plugin lift | skill read |"),
        "{md}"
    );
    let case2 = md.lines().find(|l| l.starts_with("| case-2 |")).unwrap();
    assert!(
        case2.contains("| +1.000 |") && case2.contains("| +0.000 |"),
        "{case2}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("plugin arm 0/2 passed, lift +0.000"), "{xml}");

    // the human output, a second run through the daemon
    let text = fx.cli(&args);
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    let text = stdout(&text);
    let line = text
        .lines()
        .find(|l| l.starts_with("Plugin Lift  +0.333 ["))
        .unwrap_or_else(|| panic!("no plugin lift in {text}"));
    assert!(
        line.contains("pass rate 0% [") && line.contains("-> 33% ["),
        "{line}"
    );
    assert!(text.contains("Skill Lift   +1.000"), "{text}");
    // the per-case table has the plugin arm's side and lift: case-0 lifted by both arms,
    // case-2 by the skill alone
    assert!(text.contains("plugin (pass, score)"), "{text}");
    let row = |case: &str| -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.starts_with(case))
            .unwrap_or_else(|| panic!("no row for {case} in {text}"));
        line.split_whitespace().map(str::to_owned).collect()
    };
    let lifts = |case: &str| -> Vec<String> {
        row(case)
            .into_iter()
            .filter(|w| w.starts_with('+') || w.starts_with('-'))
            .collect()
    };
    assert_eq!(
        lifts("case-0 "),
        ["+1.000", "+1.000"],
        "{:?}",
        row("case-0 ")
    );
    assert_eq!(
        lifts("case-2 "),
        ["+1.000", "+0.000"],
        "{:?}",
        row("case-2 ")
    );

    history_shows_both(&fx);
    html_report_shows_both(&fx);
    lens_shows_both(&fx, &skill);
}

/// The editor's lift lens (through the daemon, the default path) has the plugin arm's lift
/// beside the skill's.
fn lens_shows_both(fx: &DaemonFixture, skill: &Path) {
    let (mut client, uri) = fx.lsp_on(&skill.join("SKILL.md"));
    let titles = client.lens_titles(&uri);
    assert!(
        titles
            .iter()
            .any(|t| t.starts_with("Lift +1.00") && t.contains(" · plugin arm +0.33 · ")),
        "{titles:#?}"
    );
}

/// `history` (JSON and text) has the plugin arm's lift beside the skill's, for both runs.
fn history_shows_both(fx: &DaemonFixture) {
    let out = fx.cli(&["history", "dump-collect", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let h = json_report(&out);
    let runs = h["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{h:#}");
    for run in runs {
        let headline = &run["headline"];
        assert_eq!(lift(headline), 1.0);
        assert!((lift(&headline["plugin"]) - 1.0 / 3.0).abs() < 1e-9);
    }
    let out = fx.cli(&["history", "dump-collect"]);
    let text = stdout(&out);
    assert_eq!(
        text.matches("plugin arm: lift +0.333 [").count(),
        2,
        "{text}"
    );
}

/// The HTML report's latest-run table has a plugin-arm row.
fn html_report_shows_both(fx: &DaemonFixture) {
    let page = fx.root.path().join("report.html");
    let out = fx.cli(&[
        "report".as_ref(),
        "--html".as_ref(),
        page.as_os_str(),
        "dump-collect".as_ref(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let row = html
        .split("plugin arm (all its skills)")
        .nth(1)
        .unwrap_or_else(|| panic!("no plugin-arm row in the report"));
    let row = &row[..row.find("</tr>").unwrap_or(row.len())];
    assert!(row.contains("+0.333"), "{row}");
}

/// `plan` counts the plugin arm's trials: a suite with a plugin arm costs three conditions per
/// case and attempt, and the trials (and expected spending) it prints say so.
#[test]
fn plan_counts_the_plugin_arm_in_the_trials_it_prices() {
    let fx = DaemonFixture::new();
    let skill = plugin_repo(&fx.workspace.join("repo"));
    let skill = skill.to_str().unwrap();
    let out = fx.cli(&["plan", skill, "--detect", "0.3", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let plan = json_report(&out);
    assert_eq!(plan["cases"], 6, "{plan:#}");
    assert_eq!(plan["conditions"], 3, "{plan:#}");
    let out = fx.cli(&["plan", skill, "--detect", "0.3"]);
    let text = stdout(&out);
    for row in plan["needed"].as_array().unwrap() {
        let (attempts, cases) = (row[0].as_u64().unwrap(), row[1].as_u64());
        let Some(cases) = cases else { continue };
        let line = format!("{attempts:>10}  {cases:>12}  {:>8}", 3 * cases * attempts);
        assert!(text.contains(&line), "no {line:?} in\n{text}");
    }
}
