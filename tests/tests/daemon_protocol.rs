//! The client/daemon protocol version check, across versions: frames captured from
//! skillwatch 0.1.0 at protocol 1 (tests/fixtures/protocol/v1) replayed against today's daemon
//! and today's client. Either way the mismatch is found at the `status` handshake and said
//! clearly, with what to do, instead of a decoding error or a 15 s wait.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use skillwatch_protocol::PROTOCOL_VERSION;
use skillwatch_tests::daemon::{DaemonFixture, frame};
use skillwatch_tests::{code, stderr};

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/protocol/v1")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_protocol_1_client_reads_todays_status_and_its_protocol_number() {
    let mut fx = DaemonFixture::new();
    fx.start();
    let mut stream = UnixStream::connect(fx.socket()).unwrap();
    stream
        .set_read_timeout(Some(skillwatch_tests::wait::PATIENCE))
        .unwrap();
    frame::write(&mut stream, &fixture("status-request.json"));
    let answer = frame::read(&mut stream).expect("an answer to the protocol-1 status request");
    assert_eq!(answer["request_id"], 0, "{answer}");
    let status = &answer["message"]["Ok"]["Status"];
    assert_eq!(status["protocol"], PROTOCOL_VERSION, "{answer}");
    // every field a protocol-1 client decodes is still there, so it gets to compare numbers
    let old = fixture("status-response.json");
    let old = old["message"]["Ok"]["Status"].as_object().unwrap();
    for field in old.keys() {
        assert!(
            status.get(field).is_some(),
            "{field} is gone from status: {answer}"
        );
    }
}

/// A socket that answers every request like the protocol-1 daemon did (the captured status
/// answer, with the request's id).
fn old_daemon(fx: &DaemonFixture) -> std::thread::JoinHandle<()> {
    let dir = fx.socket().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let listener = UnixListener::bind(fx.socket()).unwrap();
    let answer = fixture("status-response.json");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut answer = answer.clone();
            std::thread::spawn(move || {
                while let Some(request) = frame::read(&mut stream) {
                    answer["request_id"] = request["Request"]["id"].clone();
                    frame::write(&mut stream, &answer);
                }
            });
        }
    })
}

#[test]
fn todays_client_says_at_once_that_the_daemon_is_older_and_what_to_do() {
    let fx = DaemonFixture::new();
    let _server = old_daemon(&fx);
    let skill = fx.add_skill("table-align", 1);
    let skill = skill.display().to_string();
    skillwatch_tests::skillwatch_bin(); // built before anything is timed
    for args in [
        vec!["daemon", "status"],
        vec!["daemon", "start"],
        vec!["run", &skill, "--harness", "openai", "--model", "m"],
    ] {
        let started = Instant::now();
        let out = fx.cli(&args);
        let took = started.elapsed();
        let err = stderr(&out);
        assert_eq!(code(&out), 2, "{args:?}: {err}");
        assert!(
            err.contains("speaks protocol 1")
                && err.contains(&format!("protocol {PROTOCOL_VERSION}"))
                && err.contains("skillwatch 0.1.0, pid 4242")
                && err.contains("skillwatch daemon stop"),
            "{args:?}: {err}"
        );
        assert_eq!(
            err.matches("speaks protocol").count(),
            1,
            "said once: {err}"
        );
        assert!(took < Duration::from_secs(10), "{args:?} took {took:?}");
    }
}
