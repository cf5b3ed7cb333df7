//! Acceptance 4 of the daemon: another uid cannot talk to the socket (the private folder stops
//! it, and when the folder and socket are opened up on purpose the peer-uid check still
//! refuses it), malformed RPC frames do not crash the daemon, and 50 clients calling status
//! at once during a run all get answers.
//!
//! The other-uid part needs root (to run a child as `nobody`); run as another user it is
//! skipped with a message saying so.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

use skillwatch_protocol::{EventKind, JobState, RunRequest};
use skillwatch_tests::daemon::{DaemonFixture, config, ctx, events_until, model, wait_finished};
use skillwatch_tests::mock::openai_chat;

const NOBODY: u32 = 65534;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `skillwatch daemon status --json` run as uid/gid 65534.
fn status_as_nobody(fx: &DaemonFixture) -> std::process::Output {
    let mut cmd = fx.cli_command(&["daemon", "status", "--json"]);
    cmd.current_dir("/").env("HOME", "/nonexistent");
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(NOBODY) != 0
                || libc::setuid(NOBODY) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().expect("run skillwatch as nobody")
}

fn daemon_answers(fx: &DaemonFixture) -> bool {
    let out = fx.cli(&["daemon", "status", "--json"]);
    out.status.success()
        && serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .is_ok_and(|v| v["running"] == true)
}

#[test]
fn another_uid_is_refused() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !skillwatch_tests::needs::met(
        root,
        "root, to run a client under another uid",
        "run the tests as root (CI does)",
    ) {
        return;
    }
    let mut fx = DaemonFixture::new();
    fx.start();
    let socket = fx.socket();
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "socket mode");
    let dir_mode = std::fs::metadata(socket.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700, "runtime folder mode");

    // 1. the private folder keeps the other user out
    let out = status_as_nobody(&fx);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"running\":false"));

    // 2. opened up on purpose, the socket still refuses a peer of another uid
    for dir in [fx.root.path(), &fx.runtime_dir, socket.parent().unwrap()] {
        chmod(dir, 0o755);
    }
    chmod(&socket, 0o666);
    let out = status_as_nobody(&fx);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("\"pid\""),
        "another uid got an answer: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let log = fx.log_text();
    assert!(
        log.contains("refused a connection from another user") && log.contains("65534"),
        "{log}"
    );

    // 3. a client of another uid that keeps retrying does not fill the log (issue 20, 13)
    let before = fx.log_text().lines().count();
    for _ in 0..40 {
        let out = status_as_nobody(&fx);
        assert_ne!(out.status.code(), Some(0), "{out:?}");
    }
    let log = fx.log_text();
    let refusals = log
        .lines()
        .skip(before)
        .filter(|l| l.contains("refused a connection from another user"))
        .count();
    assert!(
        refusals <= 1,
        "{refusals} lines for 40 refused clients of one uid within a minute:\n{log}"
    );
    chmod(&socket, 0o600);
    chmod(socket.parent().unwrap(), 0o700);
    assert!(daemon_answers(&fx), "the daemon still serves its user");
    assert!(fx.terminate().success());
}

/// Write `bytes` on a fresh connection and wait until the daemon closes it.
fn send_and_expect_close(socket: &Path, bytes: &[u8]) {
    let mut stream = UnixStream::connect(socket).expect("connect");
    stream
        .set_read_timeout(Some(skillwatch_tests::wait::PATIENCE))
        .unwrap();
    let _ = stream.write_all(bytes);
    let mut buf = [0u8; 256];
    match stream.read(&mut buf) {
        Ok(0) => {}
        Ok(n) => panic!(
            "expected the connection closed, got {n} bytes: {:?}",
            &buf[..n]
        ),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("expected the connection closed, got {e}"),
    }
}

#[test]
fn malformed_frames_do_not_crash_the_daemon() {
    let mut fx = DaemonFixture::new();
    fx.start();
    let socket = fx.socket();
    let frame = |body: &[u8]| {
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    };
    let cases: Vec<Vec<u8>> = vec![
        // a length far above the frame limit
        [0xff, 0xff, 0xff, 0xff, b'x', b'y'].to_vec(),
        // not JSON
        frame(b"hello, daemon"),
        // invalid UTF-8
        frame(&[0xc3, 0x28, 0xa0, 0xa1]),
        // JSON of the wrong shape
        frame(br#"{"message": {"Request": {"id": "x"}}}"#),
        // a truncated frame followed by the writer hanging up
        [0, 0, 0, 50, b'{'].to_vec(),
    ];
    for bytes in &cases {
        if bytes.starts_with(&[0, 0, 0, 50]) {
            let mut s = UnixStream::connect(&socket).unwrap();
            s.write_all(bytes).unwrap();
            drop(s);
        } else {
            send_and_expect_close(&socket, bytes);
        }
        assert!(
            daemon_answers(&fx),
            "daemon gone after {bytes:?}; log:\n{}",
            fx.log_text()
        );
    }
    let pid = fx.pid() as i32;
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    assert!(fx.terminate().success());
}

#[test]
fn fifty_clients_get_status_during_a_run() {
    let server = openai_chat::server(model(&[], Duration::from_millis(150)));
    let mut fx = DaemonFixture::new();
    fx.write_config(&config(&server.url(), &["model-a"], ""));
    let skill = fx.add_skill("alpha", 6).canonicalize().unwrap();
    fx.start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rpc = rt.block_on(fx.client());
    let job = rt
        .block_on(rpc.enqueue_run(ctx(), RunRequest::new(&skill, "openai", "model-a")))
        .unwrap()
        .unwrap();
    let (mut cursor, mut seen) = (0, Vec::new());
    rt.block_on(events_until(&rpc, &mut cursor, &mut seen, |events| {
        events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Progress { job: j, .. } if *j == job.id))
    }));
    let answers = rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..50 {
            let socket = fx.socket();
            let id = job.id;
            tasks.spawn(async move {
                let client = skillwatch_daemon::client::connect(&socket).await.unwrap();
                let status = client.status(ctx()).await.unwrap();
                let job = client.run_status(ctx(), id).await.unwrap().unwrap();
                (status.running, job.state)
            });
        }
        tasks.join_all().await
    });
    assert_eq!(answers.len(), 50);
    for (running, state) in &answers {
        assert_eq!((*running, *state), (1, JobState::Running), "{answers:?}");
    }
    let done = rt.block_on(wait_finished(&rpc, job.id));
    assert_eq!(done.state, JobState::Completed, "{done:#?}");
    assert!(fx.terminate().success());
}
