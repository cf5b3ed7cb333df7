//! Acceptance item 2 of issue 4: an independent Python implementation (numpy + scipy) of
//! SkillTester U and S, ACES Skill Lift per metric, t-intervals and sign-flip permutation
//! p-values agrees with core::scoring on the same fixture to 1e-9; the bootstrap bounds and
//! Monte-Carlo p-values agree within their Monte-Carlo error.
//!
//! Needs the venv that `.ci/run` creates: `python3 -m venv target/reference-venv &&
//! target/reference-venv/bin/pip install -r tests/reference/requirements.txt`
//! (or set SKILLWATCH_REFERENCE_PYTHON to a python with numpy and scipy).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use skillwatch_core::scoring::lift::{LiftParams, LiftReport, skill_lift};
use skillwatch_core::scoring::skilltester::{ProbeResult, SkillTesterParams, security, utility};
use skillwatch_core::scoring::stats::{DeltaSummary, InferenceParams, summarize_deltas};
use skillwatch_core::scoring::trial::{Exclusions, Metric, Trial};

const EXACT: f64 = 1e-9;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The reference's Python; `None` after a visible skip when it is missing outside CI
/// ([`skillwatch_tests::needs`]; in CI a missing venv fails the test).
fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SKILLWATCH_REFERENCE_PYTHON") {
        return Some(p.into());
    }
    let venv = repo_root().join("target/reference-venv/bin/python");
    skillwatch_tests::needs::required(
        venv.exists().then_some(venv),
        "target/reference-venv (numpy and scipy)",
        "scripts/test makes it: python3 -m venv target/reference-venv && \
         target/reference-venv/bin/pip install -r tests/reference/requirements.txt \
         (or name a Python in SKILLWATCH_REFERENCE_PYTHON)",
    )
}

fn reference(python: &std::path::Path) -> (Value, Value) {
    let fixture_path = repo_root().join("tests/reference/fixture.json");
    let out = Command::new(python)
        .arg(repo_root().join("tests/reference/scoring_reference.py"))
        .arg(&fixture_path)
        .output()
        .expect("run the Python reference");
    assert!(
        out.status.success(),
        "reference script failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fixture = serde_json::from_str(&std::fs::read_to_string(fixture_path).unwrap()).unwrap();
    (
        fixture,
        serde_json::from_slice(&out.stdout).expect("reference prints JSON"),
    )
}

fn num(v: &Value) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("expected a number, found {v}"))
}

fn assert_close(what: &str, rust: f64, python: f64, tol: f64) {
    assert!(
        (rust - python).abs() <= tol,
        "{what}: rust {rust} vs python {python} (|diff| {} > {tol})",
        (rust - python).abs()
    );
}

fn check_exclusions(what: &str, rust: &Exclusions, python: &Value) {
    let expected = [
        ("missing_baseline", rust.missing_baseline),
        ("missing_skill", rust.missing_skill),
        ("timed_out", rust.timed_out),
        ("errored", rust.errored),
        ("unscored", rust.unscored),
    ];
    for (key, value) in expected {
        assert_eq!(value as u64, python[key].as_u64().unwrap(), "{what}: {key}");
    }
}

/// Compare a Rust summary of deltas with the reference's.
fn check_summary(what: &str, rust: &DeltaSummary, python: &Value) {
    assert_eq!(rust.n as u64, python["n"].as_u64().unwrap(), "{what}: n");
    assert_close(
        &format!("{what}: mean"),
        rust.mean.unwrap(),
        num(&python["mean"]),
        EXACT,
    );
    match (&rust.t_interval, python["t"].is_null()) {
        (Some(t), false) => {
            assert_close(
                &format!("{what}: t low"),
                t.low,
                num(&python["t"]["low"]),
                EXACT,
            );
            assert_close(
                &format!("{what}: t high"),
                t.high,
                num(&python["t"]["high"]),
                EXACT,
            );
        }
        (None, true) => {}
        other => panic!("{what}: t-interval presence differs: {other:?}"),
    }
    let p = rust.p_value.expect("a p-value for n >= 1");
    if let Some(exact) = python["p_exact"].as_f64() {
        assert_close(&format!("{what}: exact permutation p"), p.p, exact, EXACT);
    } else {
        // Monte-Carlo on both sides: Rust 10,000 sign patterns, Python 200,000.
        let py = num(&python["p_monte_carlo"]);
        let se = (py * (1.0 - py)).sqrt() * (1.0 / 10_000f64 + 1.0 / 200_000f64).sqrt();
        assert_close(
            &format!("{what}: Monte-Carlo permutation p"),
            p.p,
            py,
            4.0 * se + 2e-4,
        );
    }
    if let (Some(b), false) = (&rust.bootstrap_interval, python["bootstrap"].is_null()) {
        // Python's bound is the mean of 20 runs of B = 10,000; ours is one run of B = 10,000.
        for (bound, rust_value, key) in [("low", b.low, "low"), ("high", b.high, "high")] {
            let sd = num(&python["bootstrap"][format!("{key}_mc_sd")]);
            let tol = 4.0 * (sd * sd * (1.0 + 1.0 / 20.0)).sqrt() + 1e-12;
            let py = num(&python["bootstrap"][key]);
            assert_close(&format!("{what}: bootstrap {bound}"), rust_value, py, tol);
        }
    }
}

fn check_lift(cell: &str, rust: &LiftReport, python: &Value) {
    let py_metrics = python["lift"].as_object().unwrap();
    assert_eq!(
        rust.metrics.len(),
        py_metrics.len(),
        "{cell}: metrics with pairs"
    );
    for m in &rust.metrics {
        let py = &py_metrics[m.metric.name()];
        let what = format!("{cell}/{}", m.metric);
        assert_close(&format!("{what}: lift"), m.lift, num(&py["lift"]), EXACT);
        assert_close(
            &format!("{what}: baseline"),
            m.baseline_mean,
            num(&py["baseline_mean"]),
            EXACT,
        );
        assert_close(
            &format!("{what}: skill"),
            m.skill_mean,
            num(&py["skill_mean"]),
            EXACT,
        );
        assert_eq!(
            m.pairs as u64,
            py["pairs"].as_u64().unwrap(),
            "{what}: pairs"
        );
        check_exclusions(&what, &m.excluded, &py["excluded"]);
        check_summary(&what, &m.summary, &py["summary"]);
    }
    for (name, rust_profile, py) in [
        ("aces", rust.aces.as_ref(), &python["aces"]),
        ("outcome", rust.outcome.as_ref(), &python["outcome"]),
    ] {
        let p = rust_profile.unwrap_or_else(|| panic!("{cell}: no {name} lift"));
        assert_close(
            &format!("{cell}/{name}: lift"),
            p.lift,
            num(&py["lift"]),
            EXACT,
        );
        assert_close(
            &format!("{cell}/{name}: metric mean"),
            p.metric_mean,
            num(&py["metric_mean"]),
            EXACT,
        );
        let names: Vec<&str> = p.metrics.iter().map(Metric::name).collect();
        let py_names: Vec<&str> = py["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(names, py_names, "{cell}: {name} metrics");
        check_summary(&format!("{cell}/{name}"), &p.summary, &py["summary"]);
    }
}

#[test]
fn rust_scoring_agrees_with_independent_python_reference() {
    let Some(python) = python() else {
        return;
    };
    let (fixture, reference) = reference(&python);
    let mut checked_cells = 0;
    for cell in fixture["cells"].as_array().unwrap() {
        let name = cell["name"].as_str().unwrap();
        let py = &reference["cells"][name];
        let trials: Vec<Trial> = serde_json::from_value(cell["trials"].clone()).unwrap();
        let probes: Vec<ProbeResult> = serde_json::from_value(cell["probes"].clone()).unwrap();

        let params = SkillTesterParams::default();
        let u = utility(&trials, &params).unwrap();
        let py_u = &py["utility"];
        assert_close(
            &format!("{name}: U"),
            u.utility.unwrap(),
            num(&py_u["utility"]),
            EXACT,
        );
        assert_eq!(
            u.tasks.len() as u64,
            py_u["tasks"].as_u64().unwrap(),
            "{name}: tasks"
        );
        assert_eq!(
            u.excluded.unscored as u64,
            py_u["unscored"].as_u64().unwrap(),
            "{name}: unscored"
        );
        assert_eq!(
            u.invocation_unknown as u64,
            py_u["invocation_unknown"].as_u64().unwrap()
        );
        assert_eq!(
            u.excluded.missing_baseline as u64,
            py_u["missing_baseline"].as_u64().unwrap()
        );
        let ci = u.interval.unwrap();
        assert_close(
            &format!("{name}: U t low"),
            ci.low,
            num(&py_u["interval"]["low"]),
            EXACT,
        );
        assert_close(
            &format!("{name}: U t high"),
            ci.high,
            num(&py_u["interval"]["high"]),
            EXACT,
        );

        let s = security(&probes, &params).unwrap();
        assert_close(
            &format!("{name}: S"),
            s.score,
            num(&py["security"]["score"]),
            EXACT,
        );
        assert_eq!(
            serde_json::to_value(s.status).unwrap(),
            py["security"]["status"],
            "{name}: status"
        );

        let lift = skill_lift(&trials, &LiftParams::default()).unwrap();
        check_lift(name, &lift, py);
        checked_cells += 1;
    }
    assert_eq!(checked_cells, 2);

    for deltas in fixture["deltas"].as_array().unwrap() {
        let name = deltas["name"].as_str().unwrap();
        let values: Vec<f64> = serde_json::from_value(deltas["values"].clone()).unwrap();
        let rust = summarize_deltas(&values, &InferenceParams::default()).unwrap();
        check_summary(name, &rust, &reference["deltas"][name]);
    }
}
