//! Issue 35, acceptance 3, measured through the JUnit writer itself: A/A runs of
//! SkillsBench-sized suites (87 cases x 3 attempts), and issue 35's SkillsBench configuration.
//!
//! Each run takes the path results from outside take into the history: its trials are written
//! as a trial file (`skillwatch-trials/1`, docs/trial-format.md), parsed and imported by the
//! store (which scores the run as the daemon's runner does when a run ends), read back with
//! `RunReport::load` (what `run --report junit:` writes from), and written by [`junit`]; the
//! XML is then parsed and its failing test cases counted. The A/A trials come from core's
//! calibration simulation (`simulated_runs`, the generator the calibration bench scores), the
//! configuration from tests/fixtures/skillsbench/, so nothing here simulates or judges on
//! its own.
//!
//! Tests of the binary rather than a bench: `skillwatch` has no library target, so a bench
//! target could not reach the writer; and the share is an acceptance the suite keeps holding.
//! `SKILLWATCH_JUNIT_AA_RUNS` sets the A/A runs per outcome kind (default 40, issue 35's
//! count; docs/scoring.md reports 500), `SKILLWATCH_JUNIT_AA_SEED` the seed.

use std::path::Path;

use serde_json::{Value, json};
use skillwatch_core::scoring::calibration::{
    CalibrationParams, Design, Outcomes, Rate, TaskCounts, simulated_runs, task_counts,
};
use skillwatch_core::scoring::{Condition, Trial};
use skillwatch_daemon::runner::{RunReport, TrialTally};
use skillwatch_daemon::store::{Store, TRIAL_FILE_FORMAT, parse_trial_file};

use super::junit;

/// The configuration issue 35 reports (one source with core's per-case test).
const SKILLSBENCH: &str = include_str!("../../../tests/fixtures/skillsbench/issue35-tasks.csv");

/// The calibration bench's seed; the A/A block offsets it as the bench's `suite` block did.
const SEED: u64 = 20_261_120;

/// A fresh history in a temporary folder (the real file, migrations applied).
fn history() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("history.db")).unwrap();
    (dir, store)
}

/// Import one run (its cases and trial entries) as a trial file, and read its report back.
fn imported(
    store: &mut Store,
    id: &str,
    seed: u64,
    cases: &[&str],
    trials: Vec<Value>,
) -> RunReport {
    let file = json!({
        "format": TRIAL_FILE_FORMAT,
        "runs": [{
            "id": id,
            "skill": {"name": "under-test"},
            "suite": {"cases": cases.iter().map(|c| json!({"id": c})).collect::<Vec<_>>()},
            "harness": "simulated",
            "model": "simulated",
            "seed": seed,
            "started_at": "2026-11-28T00:00:00Z",
            "trials": trials,
        }]
    });
    let bytes = serde_json::to_vec(&file).unwrap();
    let parsed = parse_trial_file(Path::new("simulated.json"), &bytes).unwrap();
    let report = store.import(&parsed, &mut |_, _| {}).unwrap();
    let run = *report.imported.first().expect("the run is new");
    RunReport::load(store, run, TrialTally::default(), 0).unwrap()
}

/// A simulated trial as a trial file's entry.
fn entry(t: &Trial) -> Value {
    let metrics: serde_json::Map<String, Value> = t
        .metrics
        .iter()
        .map(|(m, v)| (m.to_string(), json!(v)))
        .collect();
    json!({
        "case": t.case_id,
        "condition": t.condition.as_str(),
        "attempt": t.attempt,
        "passed": t.passed,
        "skill_invoked": t.invoked,
        "metrics": metrics,
    })
}

/// The names of the failing `<testcase>`s of a JUnit document, parsed as XML (a document a CI
/// reporter could not read fails here).
fn failing(xml: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    doc.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .filter(|n| n.children().any(|c| c.has_tag_name("failure")))
        .map(|n| n.attribute("name").unwrap_or_default().to_owned())
        .collect()
}

/// What the JUnit reports of A/A runs held.
#[derive(Debug, Default)]
struct AaJunit {
    /// Runs with some failing test case.
    failing: Rate,
    /// Runs with a failing per-case test case.
    case_failing: Rate,
    /// Runs whose `overall` test case failed (the run regresses).
    overall_failing: Rate,
}

/// `runs` A/A runs of 87 cases x 3 attempts with `outcomes`, each imported, reported and
/// written as JUnit.
fn aa_junit(outcomes: Outcomes, runs: usize, seed: u64) -> AaJunit {
    let params = CalibrationParams {
        skills: runs,
        design: Design {
            cases: 87,
            attempts: 3,
        },
        outcomes,
        effect: 0.0,
        seed,
        ..CalibrationParams::default()
    };
    let (_dir, mut store) = history();
    let mut seen = AaJunit::default();
    for (i, run) in simulated_runs(&params).unwrap().enumerate() {
        // The suite: the run's cases, in the order the simulation wrote them.
        let mut cases: Vec<&str> = run.trials.iter().map(|t| t.case_id.as_str()).collect();
        cases.dedup();
        let trials = run.trials.iter().map(entry).collect();
        // The trial file's seed is at most i64::MAX (SQLite's integer).
        let seed = run.seeds.0 >> 1;
        let report = imported(&mut store, &format!("aa-{i}"), seed, &cases, trials);
        let failed = failing(&junit(&report, None));
        let overall = failed.iter().any(|n| n.ends_with(" / overall"));
        assert_eq!(overall, report.verdict.verdict.fails(), "{failed:?}");
        seen.failing.add(!failed.is_empty());
        seen.overall_failing.add(overall);
        seen.case_failing.add(failed.len() > usize::from(overall));
    }
    seen
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name}: expected a number, found {v:?}"))
    })
}

/// Issue 35: in at least 95% of A/A runs of 87 cases x 3 attempts the JUnit report holds no
/// failing test case (before the per-case exact test, 36 of 40 did), with pass/fail outcomes
/// and with a second outcome metric. Prints docs/scoring.md's table.
#[test]
fn junit_aa_suites_rarely_fail_a_test_case() {
    let runs = env_number("SKILLWATCH_JUNIT_AA_RUNS", 40) as usize;
    let seed = env_number("SKILLWATCH_JUNIT_AA_SEED", SEED);
    let kinds = [Outcomes::PassOnly, Outcomes::PassAndChecks];
    let seen: Vec<AaJunit> = (0..)
        .zip(kinds)
        .map(|(i, outcomes)| aa_junit(outcomes, runs, seed.wrapping_add(400 + i)))
        .collect();
    let mut table = format!(
        "A/A runs of 87 cases x 3 attempts, seed {seed}: JUnit reports written by junit()\n\n\
         | outcomes | runs | a case failing | overall failing (the run regresses) | any test case failing | no failing test case |\n\
         |---|---|---|---|---|---|\n"
    );
    for (outcomes, s) in kinds.iter().zip(&seen) {
        table += &format!(
            "| {} | {runs} | {} | {} | {} | {} |\n",
            outcomes.label(),
            s.case_failing.with_interval(),
            s.overall_failing.with_interval(),
            s.failing.with_interval(),
            Rate {
                hits: s.failing.n - s.failing.hits,
                n: s.failing.n
            }
            .with_interval()
        );
    }
    show(&table);
    for (outcomes, s) in kinds.iter().zip(&seen) {
        assert!(s.failing.rate() <= 0.05, "{}: {s:?}", outcomes.label());
    }
}

/// A table for the person running the check (captured by the test harness unless
/// `--nocapture`; the crate otherwise writes only through `out`).
#[allow(clippy::print_stdout)]
fn show(text: &str) {
    println!("{text}");
}

/// Trial entries of a recorded configuration, passes first in each arm.
fn configuration_trials(counts: &[TaskCounts]) -> Vec<Value> {
    let mut trials = Vec::new();
    for c in counts {
        for arm in [Condition::Baseline, Condition::Skill] {
            for (attempt, v) in c.values(arm).into_iter().enumerate() {
                trials.push(json!({
                    "case": c.task,
                    "condition": arm.as_str(),
                    "attempt": attempt,
                    "passed": v == 1.0,
                }));
            }
        }
    }
    trials
}

/// The JUnit report of a configuration, through the import and the writer.
fn configuration_junit(
    store: &mut Store,
    id: &str,
    counts: &[TaskCounts],
) -> (RunReport, Vec<String>) {
    let cases: Vec<&str> = counts.iter().map(|c| c.task.as_str()).collect();
    let report = imported(store, id, SEED, &cases, configuration_trials(counts));
    let failed = failing(&junit(&report, None));
    (report, failed)
}

/// The failing test cases other than the run's `overall`.
fn case_failures(failed: &[String]) -> Vec<&str> {
    failed
        .iter()
        .map(String::as_str)
        .filter(|n| !n.ends_with(" / overall"))
        .collect()
}

/// Issue 35's SkillsBench configuration: none of its 16 single-trial drops (nor the two larger
/// drops 3 attempts allow) is a failing test case. The same run with one more case that the
/// exact test does show worse (10 of 10 passed without the skill, 0 of 10 with it: Fisher's
/// p = 1.1e-5, Holm-adjusted over 88 cases 0.001) fails that case and only it among the cases,
/// so the writer can fail a case at all. The `overall` test case follows the run's verdict:
/// the rebuilt configuration has no task that gained (the published per-task gains are not in
/// the repository), so its run reads "regresses" and that test case fails; the per-case rule
/// is what is checked here.
#[test]
fn junit_skillsbench_single_trial_drops_are_not_failed() {
    let counts = task_counts(SKILLSBENCH).unwrap();
    let drops: Vec<&str> = counts
        .iter()
        .filter(|c| c.baseline_passed == c.skill_passed + 1)
        .map(|c| c.task.as_str())
        .collect();
    assert_eq!((counts.len(), drops.len()), (87, 16));
    let (_dir, mut store) = history();
    let (report, failed) = configuration_junit(&mut store, "skillsbench", &counts);
    let per_case = case_failures(&failed);
    assert!(per_case.is_empty(), "{failed:?}");
    let overall = failed.len() > per_case.len();
    assert_eq!(overall, report.verdict.verdict.fails(), "{failed:?}");
    show(&format!(
        "SkillsBench configuration: {}; failing: {failed:?}",
        report.verdict.reason
    ));

    let mut with_worse = counts.clone();
    with_worse.push(TaskCounts {
        task: "collapsed".into(),
        attempts: 10,
        baseline_passed: 10,
        skill_passed: 0,
    });
    let (_, failed) = configuration_junit(&mut store, "skillsbench-and-worse", &with_worse);
    let per_case = case_failures(&failed);
    assert_eq!(per_case, ["under-test / collapsed"], "{failed:?}");
    for task in drops {
        assert!(!failed.iter().any(|n| n.ends_with(&format!(" / {task}"))));
    }
}
