//! End-to-end: the daemon watches a real amount of skills without exhausting the machine
//! (issue 36). 500 skill folders opened one by one through the language server, with no
//! workspace folders (what an editor sends for loose files): 300 side by side in one folder
//! of skills and 200 in a repository each, so 201 roots, more than the 128 inotify instances
//! a user has by default. The daemon the server starts on demand holds one inotify instance
//! for all of them, stays small, sees saves (in a folder made after it started too), and
//! leaves other programs their instances. `skillwatch daemon unwatch` forgets a root; a root
//! nobody used for `--forget-roots-after` is gone after a restart.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillwatch_protocol::EventKind;
use skillwatch_tests::daemon::{DaemonFixture, ctx, runtime};
use skillwatch_tests::wait;

const SIDE_BY_SIDE: usize = 300;
const IN_REPOSITORIES: usize = 200;

fn skill_md(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Formats {name} tables so columns line up. Use when a table is ragged.\n---\n# {name}\n\nPad every cell to its column's width.\n"
    )
}

fn write_skill(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    let name = dir.file_name().unwrap().to_str().unwrap();
    let file = dir.join("SKILL.md");
    std::fs::write(&file, skill_md(name)).unwrap();
    file
}

/// `(inotify instances, resident MiB, threads)` of a process, from /proc.
fn footprint(pid: u32) -> (usize, f64, usize) {
    let instances = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
        .filter(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|target| target.to_string_lossy() == "anon_inode:inotify")
        })
        .count();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {status}"))
    };
    (
        instances,
        field("VmRSS:") as f64 / 1024.0,
        field("Threads:") as usize,
    )
}

fn status(fx: &DaemonFixture) -> Value {
    let out = fx.cli(&["daemon", "status", "--json"]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn roots(status: &Value) -> Vec<String> {
    status["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_owned())
        .collect()
}

/// Folders of `root`'s tree the daemon watches now.
fn watched_folders(fx: &DaemonFixture, root: &str) -> u64 {
    status(fx)["watched"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["path"] == root)
        .and_then(|w| w["folders"].as_u64())
        .unwrap_or(0)
}

/// Save `file` (appending a line) and wait for the daemon's `checked` event for it.
fn saved_and_checked(fx: &DaemonFixture, file: &Path) {
    let rt = runtime();
    let rpc = rt.block_on(fx.client());
    let mut cursor = rt
        .block_on(rpc.next_events(ctx(), u64::MAX, 0))
        .unwrap()
        .next;
    let text = std::fs::read_to_string(file).unwrap();
    std::fs::write(file, format!("{text}\nAlign numbers to the right.\n")).unwrap();
    let file = file.canonicalize().unwrap();
    wait::until(&format!("a `checked` event for {}", file.display()), || {
        let batch = rt.block_on(rpc.next_events(ctx(), cursor, 1000)).unwrap();
        cursor = batch.next;
        let seen = batch
            .events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Checked { path, .. } if *path == file));
        wait::when(seen, || fx.log_text())
    });
}

#[test]
fn five_hundred_skills_opened_in_an_editor_cost_one_watcher_and_roots_are_forgotten() {
    let fx = DaemonFixture::new();
    let side = fx.workspace.join("agent-skills");
    let mut files: Vec<PathBuf> = (0..SIDE_BY_SIDE)
        .map(|i| write_skill(&side.join(format!("table-{i:03}"))))
        .collect();
    for i in 0..IN_REPOSITORIES {
        let repo = fx.workspace.join(format!("projects/p{i:03}"));
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        files.push(write_skill(
            &repo.join(format!(".claude/skills/tool-{i:03}")),
        ));
    }

    // an editor with no workspace folders opens every skill, one by one
    let mut lsp = fx.editor_lsp(&[]);
    lsp.initialize(json!({"historyPollMs": 0}));
    // (not waiting for each one's diagnostics: the client's backlog of the siblings'
    // republished diagnostics would make the wait quadratic)
    for file in &files {
        lsp.open(file, "markdown", &std::fs::read_to_string(file).unwrap());
    }
    let t0 = Instant::now();
    let expected = 1 + IN_REPOSITORIES;
    wait::until("every folder of skills to be watched", || {
        let out = fx.cli(&["daemon", "status", "--json"]);
        let now = match out.status.success() {
            true => roots(&serde_json::from_slice(&out.stdout).unwrap()).len(),
            false => 0,
        };
        wait::when(now == expected, || format!("{now} of {expected} roots"))
    });
    eprintln!("every root watched {:?} after the last open", t0.elapsed());
    let status_now = status(&fx);
    let pid = status_now["pid"].as_u64().unwrap() as u32;
    let side_root = side.canonicalize().unwrap().display().to_string();
    let all = roots(&status_now);
    assert!(all.contains(&side_root), "{all:?}");
    assert!(
        all.iter()
            .all(|r| r == &side_root || r.ends_with("/.claude/skills")),
        "one root per folder of skills, never a skill's own folder: {all:?}"
    );
    assert!(
        status_now["watched"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["complete"] == true),
        "{status_now:#}"
    );
    assert_eq!(status_now["watch_problem"], Value::Null, "{status_now:#}");

    // one watcher, a small process; other programs still get an inotify instance
    let (instances, rss_mib, threads) = footprint(pid);
    eprintln!(
        "daemon with {expected} roots, {} skills: {instances} inotify instance(s), {rss_mib:.1} MiB resident, {threads} threads",
        files.len()
    );
    assert!(instances <= 2, "{instances} inotify instances");
    assert!(rss_mib < 60.0, "{rss_mib:.1} MiB resident");
    assert!(threads < 30, "{threads} threads");
    // SAFETY: creating and closing a file descriptor of our own.
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
    assert!(
        fd >= 0,
        "another process cannot create an inotify instance: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: closing the descriptor made above.
    unsafe { libc::close(fd) };

    // saves are seen: in a repository's skill, and in a skill made after the daemon started
    saved_and_checked(&fx, &files[SIDE_BY_SIDE + 7]);
    let late = side.join("table-late");
    let before = watched_folders(&fx, &side_root);
    std::fs::create_dir_all(&late).unwrap();
    wait::until("the new skill folder to be watched", || {
        let now = watched_folders(&fx, &side_root);
        wait::when(now > before, || {
            format!("{now} folders watched, {before} before")
        })
    });
    let late = write_skill(&late);
    saved_and_checked(&fx, &late);

    // `daemon unwatch` forgets a root; a path that is no root is refused, naming the roots
    let gone = fx.workspace.join("projects/p000/.claude/skills");
    let out = fx.cli(&["daemon".as_ref(), "unwatch".as_ref(), gone.as_os_str()]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no longer watching"), "{text}");
    assert!(
        text.contains(&format!("{} watched roots left", expected - 1)),
        "{text}"
    );
    let left = roots(&status(&fx));
    assert_eq!(left.len(), expected - 1);
    assert!(
        !left
            .iter()
            .any(|r| Path::new(r) == gone.canonicalize().unwrap())
    );
    let out = fx.cli(&[
        "daemon".as_ref(),
        "unwatch".as_ref(),
        fx.workspace.as_os_str(),
    ]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a watched root (watched: "), "{err}");
    let human = fx.cli(&["daemon", "status"]);
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains(&format!("watching {side_root} (")) && human.contains("folders, used "),
        "{human}"
    );

    // the editor goes; a restarted daemon remembers the roots (not the unwatched one)
    assert!(lsp.shutdown().success());
    assert!(fx.cli(&["daemon", "stop"]).status.success());
    let started = fx.cli(&["daemon", "start", "--json"]);
    assert!(started.status.success(), "{started:?}");
    assert_eq!(roots(&status(&fx)).len(), expected - 1);
    assert!(fx.cli(&["daemon", "stop"]).status.success());

    // unused past --forget-roots-after: gone after a restart, and said so in the log
    std::thread::sleep(Duration::from_secs(3));
    let started = fx.cli(&["daemon", "start", "--forget-roots-after", "2s"]);
    assert!(started.status.success(), "{started:?}");
    let after = status(&fx);
    assert_eq!(roots(&after), Vec::<String>::new(), "{after:#}");
    assert_eq!(after["forget_roots_after_secs"], 2);
    assert!(
        fx.log_text()
            .contains("forgetting a remembered root: last used"),
        "{}",
        fx.log_text()
    );
    assert!(fx.cli(&["daemon", "stop"]).status.success());
}
