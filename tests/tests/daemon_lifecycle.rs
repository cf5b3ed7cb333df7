//! End-to-end: a daemon the language server starts on demand serves the editor and ends after
//! it. It starts only once a skill file is open (a markdown file of another kind starts
//! nothing), watches only the folder of skills holding the skill (not the workspace folder
//! without any, nor the whole repository),
//! and exits once no client is connected and no job is left for its idle limit; a daemon
//! started with `skillwatch daemon start` stays, until its socket or its folder is removed.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use skillwatch_daemon::client;
use skillwatch_tests::daemon::{DaemonFixture, ctx, runtime};
use skillwatch_tests::lsp::LspClient;
use skillwatch_tests::trial::process_gone;

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

    // the first skill file starts it; it watches the folder of skills holding the skill, not
    // the other workspace folder
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
        let skills = repo.join("skills").canonicalize().unwrap();
        wait_until(
            "the skill's folder of skills is watched",
            Duration::from_secs(30),
            || rt.block_on(rpc.status(ctx())).unwrap().roots == [skills.clone()],
        );
    }

    // the editor goes: the daemon ends after its idle limit
    assert!(lsp.shutdown().success());
    // (watched by its lock, not by connecting: a client keeps a daemon alive)
    let lock = fx.runtime_dir.join("skillwatch/daemon.lock");
    let start = Instant::now();
    while skillwatch_daemon::server::is_held(&lock) {
        // (this has failed now and then on a loaded machine: the log says how far it got)
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the daemon exits: not within 30 s; its log:\n{}",
            fx.log_text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = start.elapsed();
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

/// A daemon whose socket is deleted can never be reached again, and one whose temporary
/// folder is removed serves nobody: either way it exits by itself, whoever started it.
#[test]
fn a_daemon_whose_socket_or_folder_is_removed_exits_by_itself() {
    let limit = Duration::from_secs(30);
    // the socket of a daemon run in the foreground
    let mut fx = DaemonFixture::new();
    fx.start();
    let pid = fx.pid() as i32;
    std::fs::remove_file(fx.socket()).unwrap();
    wait_until("the daemon exits", limit, || process_gone(pid));
    let log = fx.log_text();
    assert!(
        log.contains(&format!("its socket {} was removed", fx.socket().display())),
        "{log}"
    );
    assert!(!fx.daemon_running());

    // a daemon started on demand (detached, not ours to reap) whose whole folder goes
    let fx = DaemonFixture::new();
    let started = fx.cli(&["daemon", "start", "--json"]);
    assert!(started.status.success(), "{started:?}");
    let status: serde_json::Value = serde_json::from_slice(&started.stdout).unwrap();
    let pid = status["pid"].as_i64().expect("the daemon's pid") as i32;
    std::fs::remove_dir_all(fx.root.path()).unwrap();
    wait_until("the daemon exits", limit, || process_gone(pid));
}

/// The fixture is the guard of every daemon a test starts: dropped, even by a panic, it stops
/// the daemon it ran as a child and one a client started on demand in its folder.
#[test]
fn the_fixture_stops_every_daemon_it_led_to_even_on_panic() {
    let pids = std::sync::Mutex::new(Vec::new());
    let unwound = std::panic::catch_unwind(|| {
        let mut child = DaemonFixture::new();
        child.start();
        pids.lock().unwrap().push(child.pid() as i32);
        let detached = DaemonFixture::new();
        let started = detached.cli(&["daemon", "start", "--json"]);
        let status: serde_json::Value = serde_json::from_slice(&started.stdout).unwrap();
        pids.lock()
            .unwrap()
            .push(status["pid"].as_i64().unwrap() as i32);
        panic!("the test fails with both daemons running");
    });
    assert!(unwound.is_err());
    let pids = pids.into_inner().unwrap();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        // the drop waited for them: a detached daemon is reaped by init, so allow a moment
        wait_until("the daemon is gone", Duration::from_secs(2), || {
            process_gone(pid)
        });
    }
}
