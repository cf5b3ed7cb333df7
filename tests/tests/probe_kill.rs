//! A probe run killed with `kill -9` leaves nothing behind: its agent and what the agent
//! started are killed, its folder is deleted, and its honeypot no longer answers.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};

use skillwatch_tests::run::{RunFixture, command_agent, eval_yaml};
use skillwatch_tests::{skillwatch_bin, wait};

/// Running: /proc has it and it is not a zombie waiting to be reaped.
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim_start().to_owned()))
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

#[test]
fn a_killed_probe_run_leaves_no_agent_folder_or_honeypot() {
    if !skillwatch_tests::needs::met(
        Path::new("/proc/self/environ").exists(),
        "/proc (the watchdog reads it)",
        "run the tests on Linux with /proc mounted",
    ) {
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
    wait::until("the agent to start", || {
        let (agent, child) = (read("agent.pid"), read("child.pid"));
        wait::when(!agent.is_empty() && !child.is_empty(), || {
            format!("agent.pid {agent:?}, child.pid {child:?}")
        })
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

    wait::until("the agent and its child to die", || {
        let (agent, child) = (alive(&agent_pid), alive(&child_pid));
        wait::when(!agent && !child, || {
            format!("agent {agent_pid} alive: {agent}, child {child_pid} alive: {child}")
        })
    });
    wait::until("the probe folder to go", || {
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        wait::when(left.is_empty(), || format!("{left:?}"))
    });
    assert!(
        TcpStream::connect(&honeypot).is_err(),
        "the honeypot died with the run"
    );
}
