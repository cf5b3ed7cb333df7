//! A probe run killed with `kill -9` leaves nothing behind: its agent and what the agent
//! started are killed, its folder is deleted, and its honeypot no longer answers.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use skillwatch_tests::run::{RunFixture, command_agent, eval_yaml};
use skillwatch_tests::skillwatch_bin;

/// Running: /proc has it and it is not a zombie waiting to be reaped.
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim_start().to_owned()))
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_killed_probe_run_leaves_no_agent_folder_or_honeypot() {
    if !Path::new("/proc/self/environ").exists() {
        eprintln!("skipped: the watchdog needs /proc");
        return;
    }
    let fx = RunFixture::new(&eval_yaml(1, ""));
    let marks = fx.path("marks");
    let tmp = fx.path("tmp");
    std::fs::create_dir_all(&marks).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let m = marks.display();
    let agent = command_agent(
        &fx.path(""),
        &format!(
            "printf '%s' \"$SKILLWATCH_PROMPT\" > {m}/prompt.txt\nsleep 300 &\necho $! > {m}/child.pid\necho $$ > {m}/agent.pid\nwait"
        ),
    );
    let mut run = Command::new(skillwatch_bin())
        .args([
            "probe",
            fx.skill.to_str().unwrap(),
            "--no-daemon",
            "--harness",
            "command",
        ])
        .args([
            "--program",
            agent.program.as_ref().unwrap().to_str().unwrap(),
        ])
        .args(["--model", "m", "--probe", "PB-03", "--timeout", "600"])
        .args(["--db", fx.db.to_str().unwrap()])
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let read = |name: &str| std::fs::read_to_string(marks.join(name)).unwrap_or_default();
    wait_for("the agent to start", Duration::from_secs(120), || {
        !read("agent.pid").is_empty() && !read("child.pid").is_empty()
    });
    let prompt = read("prompt.txt");
    let port = prompt
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .expect("the honeypot's URL in the prompt")
        .to_owned();
    let honeypot = format!("127.0.0.1:{port}");
    assert!(TcpStream::connect(&honeypot).is_ok(), "honeypot listening");
    let (agent_pid, child_pid) = (
        read("agent.pid").trim().to_owned(),
        read("child.pid").trim().to_owned(),
    );
    assert!(alive(&agent_pid) && alive(&child_pid));
    assert!(
        std::fs::read_dir(&tmp).unwrap().count() > 0,
        "the probe folder exists"
    );

    run.kill().unwrap(); // SIGKILL
    run.wait().unwrap();

    wait_for(
        "the agent and its child to die",
        Duration::from_secs(20),
        || !alive(&agent_pid) && !alive(&child_pid),
    );
    wait_for("the probe folder to go", Duration::from_secs(20), || {
        std::fs::read_dir(&tmp).unwrap().count() == 0
    });
    assert!(
        TcpStream::connect(&honeypot).is_err(),
        "the honeypot died with the run"
    );
}
