//! End-to-end: a daemon the language server starts on demand serves the editor and ends after
//! it. It starts only once a skill file is open (a markdown file of another kind starts
//! nothing), watches only the workspace folder holding the skill (not the one without any),
//! and exits once no client is connected and no job is left for its idle limit; a daemon
//! started with `skillwatch daemon start` stays.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use skillwatch_daemon::client;
use skillwatch_tests::daemon::{DaemonFixture, ctx, runtime};
use skillwatch_tests::lsp::LspClient;

/// Stops whatever daemon answers on the fixture's socket when the test ends, passed or not.
struct StopDaemon<'f>(&'f DaemonFixture);

impl Drop for StopDaemon<'_> {
    fn drop(&mut self) {
        let _ = self.0.cli(&["daemon", "stop"]);
    }
}

fn answers(fx: &DaemonFixture) -> bool {
    runtime()
        .block_on(client::connect_checked(&fx.socket()))
        .is_ok()
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    start.elapsed()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_daemon_started_by_the_editor_watches_only_skills_and_ends_after_it() {
    let fx = DaemonFixture::new();
    let _stop = StopDaemon(&fx);
    let notes = fx.workspace.join("notes");
    let repo = fx.workspace.join("repo");
    write(&notes.join("NOTES.md"), "# Notes\n\nNot a skill.\n");
    let skill_md = repo.join("skills/alpha/SKILL.md");
    write(
        &skill_md,
        "---\nname: alpha\ndescription: Formats Markdown tables so columns line up.\n---\n# Alpha\n",
    );
    let env = [
        ("SKILLWATCH_NO_DAEMON", "0".to_string()),
        ("XDG_RUNTIME_DIR", fx.runtime_dir.display().to_string()),
        ("XDG_STATE_HOME", fx.state_dir.display().to_string()),
        ("SKILLWATCH_DB", fx.db.display().to_string()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut lsp = LspClient::spawn_with_env(&env);
    lsp.initialize_in(
        json!({"historyPollMs": 0, "daemonIdleSecs": 2}),
        serde_json::Value::Null,
        &[&notes, &repo],
    );

    // a markdown file that is no skill file starts nothing
    lsp.open(
        &notes.join("NOTES.md"),
        "markdown",
        "# Notes\n\nNot a skill.\n",
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!answers(&fx), "a daemon started for a non-skill file");

    // the first skill file starts it; it watches the folder holding the skill, not the other
    lsp.open(
        &skill_md,
        "markdown",
        &std::fs::read_to_string(&skill_md).unwrap(),
    );
    wait_until("the daemon answers", Duration::from_secs(30), || {
        answers(&fx)
    });
    {
        // (the runtime goes with the client: its connection task runs only while driven)
        let rt = runtime();
        let rpc = rt.block_on(fx.client());
        let repo = repo.canonicalize().unwrap();
        wait_until(
            "the skill's folder is watched",
            Duration::from_secs(30),
            || rt.block_on(rpc.status(ctx())).unwrap().roots == [repo.clone()],
        );
    }

    // the editor goes: the daemon ends after its idle limit
    assert!(lsp.shutdown().success());
    // (watched by its lock, not by connecting: a client keeps a daemon alive)
    let lock = fx.runtime_dir.join("skillwatch/daemon.lock");
    let took = wait_until("the daemon exits", Duration::from_secs(30), || {
        !skillwatch_daemon::server::is_held(&lock)
    });
    assert!(
        took >= Duration::from_secs(1),
        "exited before its idle limit: {took:?}"
    );
    assert!(fx.log_text().contains("idle for"), "{}", fx.log_text());

    // `skillwatch daemon start` is the user's: it stays past any idle limit
    let started = fx.cli(&["daemon", "start"]);
    assert!(started.status.success(), "{started:?}");
    std::thread::sleep(Duration::from_secs(4));
    assert!(answers(&fx), "a daemon started by hand exited by itself");
}
