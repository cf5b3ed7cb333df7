//! Acceptance 3 of the daemon: a new model in `skillwatch.toml` triggers a rerun of the
//! tracked skill; the mock model is scripted to ignore the skill on the new model, so the
//! skill is reported as regressed, with the interval, by the daemon's events, by an SW501
//! warning in the editor, and by `skillwatch compare --all`'s exit code.

use std::time::Duration;

use serde_json::Value;
use skillwatch_core::scoring::Verdict;
use skillwatch_protocol::{EventKind, JobState, JobTrigger};
use skillwatch_tests::daemon::{DaemonFixture, config, ctx, events_until, model, wait_finished};
use skillwatch_tests::mock::openai_chat;

#[test]
fn a_new_model_that_ignores_the_skill_is_a_regression_everywhere() {
    let server = openai_chat::server(model(&["model-b"], Duration::from_millis(10)));
    let mut fx = DaemonFixture::new();
    fx.write_config(&config(&server.url(), &["model-a"], ""));
    // Seven cases: the model ignores the skill on six of them, enough for the exact sign-flip
    // test to reach p < 0.05 (2/64); six cases with one unchanged could not (2/32).
    let skill = fx.add_skill("alpha", 7).canonicalize().unwrap();
    fx.start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rpc = rt.block_on(fx.client());

    // the history on the first model, made through the CLI (and so the daemon)
    let first = fx.cli(&[
        "run",
        skill.to_str().unwrap(),
        "--harness",
        "openai",
        "--model",
        "model-a",
        "--json",
    ]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let report: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(report["run"]["status"], "completed", "{report}");

    let (mut lsp, uri) = fx.lsp_on(&skill.join("SKILL.md"));
    let initial = lsp.diagnostics(&uri, None);
    assert!(initial.iter().all(|d| d["code"] != "SW501"), "{initial:?}");

    // the config now lists a second model: the daemon reruns the skill on it and compares
    let (mut cursor, mut seen) = (0, Vec::new());
    fx.write_config(&config(&server.url(), &["model-a", "model-b"], ""));
    rt.block_on(events_until(&rpc, &mut cursor, &mut seen, |events| {
        events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Compared { .. }))
    }));
    let job = seen
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::JobQueued { job } if job.request.trigger == JobTrigger::ModelChange => {
                Some(job.clone())
            }
            _ => None,
        })
        .expect("a queued model-change job");
    assert_eq!(
        (job.request.trigger, job.request.model.as_str()),
        (JobTrigger::ModelChange, "model-b")
    );
    assert!(
        seen.iter()
            .any(|e| matches!(&e.kind, EventKind::ConfigReloaded { error: None, .. }))
    );
    let comparison = seen
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Compared { comparison } => Some(comparison.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(comparison.verdict, Verdict::Regresses, "{comparison:#?}");
    assert_eq!(
        (
            comparison.reference_model.as_str(),
            comparison.candidate_model.as_str()
        ),
        ("model-a", "model-b")
    );
    let interval = comparison.interval.expect("an interval");
    assert!(interval.high < 0.0, "{interval:?}");
    assert_eq!(interval.n, 7);
    let done = rt.block_on(wait_finished(&rpc, job.id));
    assert_eq!(done.state, JobState::Completed);

    // the editor shows SW501 on SKILL.md, with the numbers and the interval
    let headline = comparison.headline();
    assert!(
        headline.starts_with("lift fell from +1.00 to +0.14 on model model-b: regresses"),
        "{headline}"
    );
    let warning = loop {
        let found = lsp.diagnostics(&uri, None);
        if let Some(d) = found.iter().find(|d| d["code"] == "SW501") {
            break d.clone();
        }
    };
    assert_eq!(warning["severity"], 2, "a warning: {warning}");
    let message = warning["message"].as_str().unwrap();
    assert!(
        message.contains("on model model-b: regresses") && message.contains("interval ["),
        "{message}"
    );

    // CI: compare --all exits 1 and says which skill regressed
    let out = fx.cli(&["compare", "--all", "--since-model", "model-a"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("alpha") && l.contains("model-b") && l.ends_with("regresses")),
        "{text}"
    );
    let json_out = fx.cli(&["compare", "--all", "--since-model", "model-a", "--json"]);
    assert_eq!(json_out.status.code(), Some(1));
    let rows: Value = serde_json::from_slice(&json_out.stdout).unwrap();
    assert_eq!(rows[0]["outcome"]["Ok"]["verdict"], "regresses", "{rows}");
    // and in-process, without the daemon, the same answer
    let local = fx.cli(&[
        "compare",
        "--all",
        "--since-model",
        "model-a",
        "--no-daemon",
    ]);
    assert_eq!(local.status.code(), Some(1));

    // rerun --all queues a model-change run of every tracked skill
    let rerun = fx.cli(&["rerun", "--all", "--model", "model-c", "--json"]);
    assert!(
        rerun.status.success(),
        "{}",
        String::from_utf8_lossy(&rerun.stderr)
    );
    let jobs: Value = serde_json::from_slice(&rerun.stdout).unwrap();
    assert_eq!(jobs.as_array().unwrap().len(), 1, "{jobs}");
    assert_eq!(jobs[0]["request"]["trigger"], "model_change");
    let id = jobs[0]["id"].as_i64().unwrap();
    let c = fx.cli(&["cancel", &id.to_string()]);
    assert!(c.status.success());
    let _ = rt.block_on(rpc.status(ctx()));
    assert!(lsp.shutdown().success());
    assert!(fx.terminate().success());
}
