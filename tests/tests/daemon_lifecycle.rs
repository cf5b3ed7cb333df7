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
use skillwatch_tests::trial::process_gone;
use skillwatch_tests::wait;

fn answers(fx: &DaemonFixture) -> bool {
    runtime()
        .block_on(client::connect_checked(&fx.socket()))
        .is_ok()
}

/// Wait for process `pid` to end; on giving up, the daemon's log says how far it got.
fn wait_gone(fx: &DaemonFixture, pid: i32) {
    wait::until(&format!("the daemon {pid} to exit"), || {
        wait::when(process_gone(pid), || format!("its log:\n{}", fx.log_text()))
    });
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
    // (the server's debug line for a file it ignores shows when it has handled the open)
    let mut lsp = fx.editor_lsp(&[("SKILLWATCH_LOG", "info,skillwatch_lsp=debug")]);
    lsp.initialize_in(
        json!({"historyPollMs": 0, "daemonIdleSecs": 2}),
        serde_json::Value::Null,
        &[&notes, &repo],
    );

    // a markdown file that is no skill file starts nothing: the server handles an open at
    // once (a daemon it starts, it starts from there), so once it has said it ignored the
    // file, any daemon that file started would be there
    lsp.open(
        &notes.join("NOTES.md"),
        "markdown",
        "# Notes\n\nNot a skill.\n",
    );
    wait::until("the server to ignore NOTES.md", || {
        let log = lsp.stderr();
        wait::when(log.contains("not a skill file; ignored"), || log)
    });
    assert!(!answers(&fx), "a daemon started for a non-skill file");

    // the first skill file starts it; it watches the folder of skills holding the skill, not
    // the other workspace folder
    lsp.open(
        &skill_md,
        "markdown",
        &std::fs::read_to_string(&skill_md).unwrap(),
    );
    wait::until("the daemon to answer", || {
        wait::when(answers(&fx), || {
            format!(
                "server log:\n{}\ndaemon log:\n{}",
                lsp.stderr(),
                fx.log_text()
            )
        })
    });
    {
        // (the runtime goes with the client: its connection task runs only while driven)
        let rt = runtime();
        let rpc = rt.block_on(fx.client());
        let skills = repo.join("skills").canonicalize().unwrap();
        wait::until("the skill's folder of skills to be watched", || {
            let roots = rt.block_on(rpc.status(ctx())).unwrap().roots;
            wait::when(roots == [skills.clone()], || format!("roots {roots:?}"))
        });
    }

    // the editor goes: the daemon ends after its idle limit
    assert!(lsp.shutdown().success());
    // (watched by its lock, not by connecting: a client keeps a daemon alive)
    let lock = fx.runtime_dir.join("skillwatch/daemon.lock");
    let start = Instant::now();
    wait::until("the daemon to exit after its idle limit", || {
        let held = skillwatch_daemon::server::is_held(&lock);
        wait::when(!held, || format!("its log:\n{}", fx.log_text()))
    });
    let took = start.elapsed();
    assert!(
        took >= Duration::from_secs(1),
        "exited before its idle limit: {took:?}"
    );
    assert!(fx.log_text().contains("idle for"), "{}", fx.log_text());

    // `skillwatch daemon start` is the user's: it stays past any idle limit. A negative with
    // no later event to prove it: its lock is watched (a connection would keep it alive) for
    // twice the idle limit the editor's daemon had here, failing at once if it exits.
    let started = fx.cli(&["daemon", "start"]);
    assert!(started.status.success(), "{started:?}");
    wait::holds(
        "a daemon started by hand runs on",
        Duration::from_secs(4),
        || {
            let held = skillwatch_daemon::server::is_held(&lock);
            wait::when(held, || {
                format!("it exited by itself; its log:\n{}", fx.log_text())
            })
        },
    );
    assert!(answers(&fx), "a daemon started by hand exited by itself");
}

/// A daemon that could not start when the first skill file opened (here: the history path held
/// another program's SQLite file, which the daemon refuses) is started again once the cause is
/// gone, and then watches the skill's folder: a passing failure at start (a loaded machine,
/// another process holding the new history file) does not leave the editor without a daemon
/// for its whole session.
#[test]
fn a_daemon_that_failed_to_start_is_started_again_by_the_editor() {
    let fx = DaemonFixture::new();
    let skill_md = fx.workspace.join("skills/alpha/SKILL.md");
    write(
        &skill_md,
        "---\nname: alpha\ndescription: Formats Markdown tables so columns line up.\n---\n# Alpha\n",
    );
    let foreign = rusqlite::Connection::open(&fx.db).unwrap();
    foreign
        .execute_batch("CREATE TABLE notes (body TEXT);")
        .unwrap();
    drop(foreign);
    let mut lsp = fx.editor_lsp(&[]);
    lsp.initialize(json!({"historyPollMs": 0}));
    let text = std::fs::read_to_string(&skill_md).unwrap();
    lsp.open(&skill_md, "markdown", &text);
    wait::until("the first start to fail", || {
        let log = lsp.stderr();
        wait::when(
            log.contains("could not start the skillwatch daemon"),
            || log,
        )
    });
    std::fs::remove_file(&fx.db).unwrap();
    let rt = runtime();
    let skills = fx.workspace.join("skills").canonicalize().unwrap();
    wait::until(
        "the daemon started again to watch the skill's folder",
        || {
            let roots = answers(&fx).then(|| {
                let rpc = rt.block_on(fx.client());
                rt.block_on(rpc.status(ctx())).unwrap().roots
            });
            wait::when(roots.as_deref() == Some(&[skills.clone()][..]), || {
                format!("roots {roots:?}; server log:\n{}", lsp.stderr())
            })
        },
    );
    assert!(lsp.shutdown().success());
}

/// A daemon whose socket is deleted can never be reached again, and one whose temporary
/// folder is removed serves nobody: either way it exits by itself, whoever started it.
#[test]
fn a_daemon_whose_socket_or_folder_is_removed_exits_by_itself() {
    // the socket of a daemon run in the foreground
    let mut fx = DaemonFixture::new();
    fx.start();
    let pid = fx.pid() as i32;
    std::fs::remove_file(fx.socket()).unwrap();
    wait_gone(&fx, pid);
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
    // (its log went with the folder)
    wait::until("the daemon to exit", || {
        wait::when(process_gone(pid), || format!("process {pid} runs"))
    });
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
        // the drop waited for them: a detached daemon is reaped by init, a moment later
        wait::until("the daemon to be gone", || {
            wait::when(process_gone(pid), || format!("process {pid} runs"))
        });
    }
}

/// A client killed in the middle of a call (here a long poll of the event stream, which the
/// daemon answers only after up to 30 s) is gone at once for the daemon: the connection ends
/// when its read side does, not when the answer fails to be written, so the idle limit of a
/// daemon whose editor crashed counts from the crash.
#[test]
fn a_client_killed_in_a_long_poll_is_dropped_at_once_and_the_idle_limit_counts_from_then() {
    let mut fx = DaemonFixture::new();
    let idle = Duration::from_secs(3);
    fx.start_with_idle_limit(idle.as_secs());
    let others = || {
        let rt = runtime();
        let rpc = rt.block_on(fx.client());
        rt.block_on(rpc.status(ctx())).unwrap().clients
    };
    let mut follower = fx
        .cli_command(&["events", "--follow"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait::until("the follower is connected", || {
        let n = others();
        wait::when(n == 1, || format!("{n} other clients"))
    });
    follower.kill().unwrap();
    follower.wait().unwrap();
    let killed = Instant::now();
    wait::until("the daemon drops the killed client", || {
        let n = others();
        wait::when(n == 0, || format!("{n} other clients"))
    });
    let dropped = killed.elapsed();
    assert!(
        dropped <= Duration::from_secs(2),
        "the killed client was dropped only after {dropped:?}; log:\n{}",
        fx.log_text()
    );
    // (no more status calls: each is a client, and restarts the idle time)
    let start = Instant::now();
    wait::until("the daemon exits", || {
        wait::when(
            !skillwatch_daemon::server::is_held(&fx.lock()),
            || "its lock still held",
        )
    });
    let took = start.elapsed();
    assert!(
        took + Duration::from_millis(500) >= idle,
        "exited before its idle limit: {took:?}"
    );
    assert!(fx.log_text().contains("idle for"), "{}", fx.log_text());
}
