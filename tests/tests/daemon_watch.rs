//! Acceptance 2 of the daemon: saving a SKILL.md in a watched folder (with `rerun_on_save`)
//! starts a rerun within 2 s; the baseline is reused (only with-skill trials reach the model);
//! the language server, connected to the daemon, shows the new lift in its code lens.

use std::time::Duration;

use serde_json::json;
use skillwatch_daemon::store::time::now_ms;
use skillwatch_protocol::{EventKind, JobState, JobTrigger, RunRequest};
use skillwatch_tests::daemon::{DaemonFixture, config, ctx, events_until, model, wait_finished};
use skillwatch_tests::mock::openai_chat;
use skillwatch_tests::trial::SKILL_MARKER;

fn lens_titles(client: &mut skillwatch_tests::lsp::LspClient, uri: &str) -> Vec<String> {
    let lenses = client.request(
        "textDocument/codeLens",
        json!({"textDocument": {"uri": uri}}),
    );
    lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap_or("").to_string())
        .collect()
}

fn refreshes(client: &skillwatch_tests::lsp::LspClient) -> usize {
    client
        .server_requests
        .iter()
        .filter(|(method, _)| method == "workspace/codeLens/refresh")
        .count()
}

#[test]
fn a_save_reruns_the_skill_condition_and_the_lens_follows() {
    let server = openai_chat::server(model(&[], Duration::from_millis(20)));
    let mut fx = DaemonFixture::new();
    fx.write_config(&config(
        &server.url(),
        &["model-a"],
        "[daemon]\ndebounce_ms = 200\n\n[skills.alpha]\nrerun_on_save = true\n",
    ));
    let skill = fx.add_skill("alpha", 4).canonicalize().unwrap();
    fx.start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rpc = rt.block_on(fx.client());

    // a first run gives the history a baseline and a lift
    let first = rt
        .block_on(rpc.enqueue_run(ctx(), RunRequest::new(&skill, "openai", "model-a")))
        .unwrap()
        .unwrap();
    let first = rt.block_on(wait_finished(&rpc, first.id));
    assert_eq!(first.state, JobState::Completed, "{first:#?}");
    let old_lift = first.lift.expect("a lift");

    let skill_md = skill.join("SKILL.md");
    let text = std::fs::read_to_string(&skill_md).unwrap();
    let (mut lsp, uri) = fx.lsp_on(&skill_md);
    let before = lens_titles(&mut lsp, &uri);
    let old_title = format!("Lift {old_lift:+.2}");
    assert!(
        before.iter().any(|t| t.starts_with(&old_title)),
        "{before:?}"
    );

    // save a new version of the skill: its instruction loses the marker the model answers to
    let (mut cursor, mut seen) = (0, Vec::new());
    rt.block_on(events_until(&rpc, &mut cursor, &mut seen, |_| true));
    let requests_before = server.requests().len();
    let refreshes_before = refreshes(&lsp);
    let saved_ms = now_ms();
    std::fs::write(&skill_md, text.replace(SKILL_MARKER, "ALIGN-SOMETIMES")).unwrap();

    rt.block_on(events_until(&rpc, &mut cursor, &mut seen, |events| {
        events.iter().any(|e| {
            matches!(&e.kind, EventKind::JobStarted { job } if job.request.trigger == JobTrigger::Save)
        })
    }));
    let started = seen
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::JobStarted { job } if job.request.trigger == JobTrigger::Save => {
                Some(job.clone())
            }
            _ => None,
        })
        .unwrap();
    let latency = started.started_ms.unwrap() - saved_ms;
    assert!(
        (0..2000).contains(&latency),
        "the rerun started {latency} ms after the save"
    );
    assert!(
        seen.iter().any(|e| matches!(&e.kind,
            EventKind::Checked { path, .. } if path.ends_with("SKILL.md"))),
        "the saved file was checked"
    );

    let rerun = rt.block_on(wait_finished(&rpc, started.id));
    assert_eq!(rerun.state, JobState::Completed, "{rerun:#?}");
    assert_eq!(
        (rerun.progress.reused, rerun.progress.total),
        (4, 8),
        "every baseline trial reused: {rerun:#?}"
    );
    // only with-skill trials reached the model: every request lists the skill
    let after = &server.requests()[requests_before..];
    assert!(!after.is_empty());
    for r in after {
        let system = r.body["messages"][0]["content"].as_str().unwrap_or("");
        assert!(
            system.contains("- alpha:"),
            "a baseline request after the save"
        );
    }
    let new_lift = rerun.lift.expect("new lift");
    assert!(new_lift < old_lift, "{new_lift} vs {old_lift}");

    // the daemon's events make the server refresh its lenses; they show the new lift
    while refreshes(&lsp) <= refreshes_before {
        lsp.wait_for("codeLens refresh", |m| {
            m["method"] == "workspace/codeLens/refresh"
        });
    }
    let new_title = format!("Lift {new_lift:+.2}");
    let after = lens_titles(&mut lsp, &uri);
    assert!(
        after
            .iter()
            .any(|t| t.starts_with(&new_title) && t.contains("2 runs")),
        "{after:?}"
    );
    assert!(lsp.shutdown().success());
    assert!(fx.terminate().success());
}

#[test]
fn saves_and_check_requests_follow_the_check_table() {
    use skillwatch_core::checks::Severity;
    let mut fx = DaemonFixture::new();
    fx.write_config("[daemon]\ndebounce_ms = 50\n\n[check]\nrules = { SW108 = \"info\" }\n");
    let skill = fx.add_skill("alpha", 1).canonicalize().unwrap();
    fx.start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rpc = rt.block_on(fx.client());
    let sw108 = |diagnostics: &[skillwatch_core::checks::Diagnostic]| {
        diagnostics
            .iter()
            .find(|d| d.rule == "SW108")
            .map(|d| d.severity)
    };

    // a save whose name no longer matches the folder: SW108, graded as the table says
    let skill_md = skill.join("SKILL.md");
    let text = std::fs::read_to_string(&skill_md).unwrap();
    std::fs::write(&skill_md, text.replace("name: alpha", "name: other")).unwrap();
    let (mut cursor, mut seen) = (0, Vec::new());
    rt.block_on(events_until(&rpc, &mut cursor, &mut seen, |events| {
        events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Checked { .. }))
    }));
    let on_save = seen
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Checked { diagnostics, .. } => Some(diagnostics.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(sw108(&on_save), Some(Severity::Info), "{on_save:#?}");

    // the check request reads the file as it is now
    fx.write_config("[check]\nrules = { SW108 = \"off\" }\n");
    let files = rt
        .block_on(rpc.check(ctx(), skill.clone()))
        .unwrap()
        .unwrap();
    let all: Vec<_> = files.into_iter().flat_map(|f| f.diagnostics).collect();
    assert_eq!(sw108(&all), None, "{all:#?}");
    fx.write_config("[check]\nrules = { SW1080 = \"off\" }\n");
    let refused = rt.block_on(rpc.check(ctx(), skill.clone())).unwrap();
    let message = refused.unwrap_err().to_string();
    assert!(
        message.contains("skillwatch.toml:2:11: unknown rule `SW1080`"),
        "{message}"
    );
    // the watcher reports the broken table when the file is saved, as it does other tables
    let reported = |events: &[skillwatch_protocol::Event]| {
        events.iter().any(|e| {
            matches!(&e.kind, EventKind::ConfigReloaded { error: Some(error), .. }
                if error.contains("unknown rule `SW1080`"))
        })
    };
    rt.block_on(events_until(&rpc, &mut cursor, &mut seen, reported));
    fx.terminate();
}
