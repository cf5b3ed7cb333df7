//! Running an agent process in its own process group, with a timeout that kills the group.
//!
//! Agents spawn children (shells, language servers, test runners) that outlive them if only the
//! agent is killed. Each agent therefore starts as the leader of a new process group, and the
//! whole group is killed at the timeout, after a normal exit (stragglers left running in the
//! background), and when the trial is cancelled (the future dropped).
//!
//! The group is killed *before* the leader is reaped: until then the leader's pid, which is the
//! group id, cannot be reused, so the kill can never reach another trial's processes.
//!
//! A process that left the group (`setsid`) is found by the trial's tag or its descent
//! ([`super::trial_procs`]) and killed with the group.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::process::Command;

use super::trial_procs;

/// After SIGTERM at a timeout, how long the agent gets to flush its output before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(500);

/// How often a watched process's output is looked at: a model reply takes far longer, so the
/// agent is stopped before it can send its next request.
const WATCH_EVERY: Duration = Duration::from_millis(5);

/// Stops an agent early: called with its output so far whenever it grew, and the agent's
/// process group is killed as soon as it answers true (a trigger trial's decision is visible).
#[derive(Clone)]
pub struct StopWhen(pub Arc<dyn Fn(&str) -> bool + Send + Sync>);

impl std::fmt::Debug for StopWhen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StopWhen(..)")
    }
}

/// A program to run, fully resolved: nothing of the parent's environment is inherited.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The program (a path, or a name looked up in the `PATH` of `env`).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The complete environment.
    pub env: Vec<(String, String)>,
    /// The working directory.
    pub cwd: PathBuf,
}

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// It was ended by this signal (not ours).
    Signal(i32),
    /// It was killed at the timeout.
    TimedOut,
    /// It was killed because its output showed what was watched for ([`StopWhen`]).
    Stopped,
}

/// The end of a process run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessOutcome {
    /// How it ended.
    pub exit: Exit,
    /// From spawn to the leader's exit (or the kill).
    pub wall: Duration,
}

/// Run `inv` with stdin from /dev/null and stdout/stderr into the given files (files, not
/// pipes: a background child holding a pipe open cannot stall us, and the output is kept).
/// Errors are only those of starting the process.
pub async fn run_process(
    inv: &Invocation,
    stdout: &Path,
    stderr: &Path,
    timeout: Duration,
) -> io::Result<ProcessOutcome> {
    run_process_watched(inv, stdout, stderr, timeout, None).await
}

/// [`run_process`], killing the process group as soon as `stop` says so of its stdout.
pub async fn run_process_watched(
    inv: &Invocation,
    stdout: &Path,
    stderr: &Path,
    timeout: Duration,
    stop: Option<&StopWhen>,
) -> io::Result<ProcessOutcome> {
    let out = File::create(stdout)?;
    let err = if stderr == stdout {
        out.try_clone()?
    } else {
        File::create(stderr)?
    };
    let tag = trial_procs::new_tag();
    let mut cmd = Command::new(&inv.program);
    cmd.args(&inv.args)
        .env_clear()
        .envs(inv.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&inv.cwd)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .env(trial_procs::TAG_VAR, &tag)
        .process_group(0)
        .kill_on_drop(true);
    let start = Instant::now();
    let mut child = trial_procs::spawn(&mut cmd)?;
    let pid = child
        .id()
        .ok_or_else(|| io::Error::other("child exited before its pid was read"))?;
    let group = GroupGuard { pid, tag };

    let mut exited = tokio::task::spawn_blocking(move || wait_exited(pid));
    let (mut done, stopped) = match stop {
        None => (
            tokio::time::timeout(timeout, &mut exited).await.is_ok(),
            false,
        ),
        Some(stop) => watch(&mut exited, stdout, stop, start + timeout).await,
    };
    if stopped {
        group.signal(libc::SIGKILL);
        let _ = (&mut exited).await;
        done = true;
    }
    let timed_out = !done;
    if timed_out {
        group.signal(libc::SIGTERM);
        done = tokio::time::timeout(TERM_GRACE, &mut exited).await.is_ok();
    }
    let wall = start.elapsed();
    group.signal(libc::SIGKILL);
    if !done {
        let _ = exited.await;
    }
    let tag = group.tag.clone();
    let _ = tokio::task::spawn_blocking(move || trial_procs::kill_trial(&tag, pid)).await;
    std::mem::forget(group);
    let status = child.wait().await;
    trial_procs::reaped(pid);
    let status = status?;
    let exit = if timed_out {
        Exit::TimedOut
    } else if stopped {
        Exit::Stopped
    } else {
        exit_of(status)
    };
    Ok(ProcessOutcome { exit, wall })
}

/// Wait for `exited` until `deadline`, looking at the output in `stdout` whenever it grew;
/// (whether it exited, whether `stop` asked to stop it).
async fn watch(
    exited: &mut tokio::task::JoinHandle<()>,
    stdout: &Path,
    stop: &StopWhen,
    deadline: Instant,
) -> (bool, bool) {
    let mut seen = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (false, false);
        }
        if tokio::time::timeout(left.min(WATCH_EVERY), &mut *exited)
            .await
            .is_ok()
        {
            return (true, false);
        }
        let size = std::fs::metadata(stdout).map_or(0, |m| m.len());
        if size != seen {
            seen = size;
            if let Ok((text, _)) = read_capped(stdout, super::cli::MAX_OUTPUT_BYTES)
                && (stop.0)(&text)
            {
                return (false, true);
            }
        }
    }
}

/// Block until `pid` has exited, without reaping it (`WNOWAIT`), so its pid stays reserved.
fn wait_exited(pid: u32) {
    loop {
        // SAFETY: waitid only writes into the zeroed siginfo we own.
        let rc = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

fn exit_of(status: ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(sig)) => Exit::Signal(sig),
        (None, None) => Exit::Code(-1),
    }
}

/// Kills the process group, and the trial's processes outside it, when dropped: a cancelled
/// trial leaves nothing running.
struct GroupGuard {
    /// The leader, whose pid is the group's id.
    pid: u32,
    /// The trial's [`trial_procs::TAG_VAR`].
    tag: String,
}

impl GroupGuard {
    fn signal(&self, sig: libc::c_int) {
        // SAFETY: killpg has no memory effects; ESRCH (group already gone) is fine.
        unsafe {
            libc::killpg(self.pid as libc::pid_t, sig);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
        trial_procs::kill_trial(&self.tag, self.pid);
        // tokio reaps the leader (kill_on_drop); it is no longer ours to skip
        trial_procs::reaped(self.pid);
    }
}

/// Read at most `limit` bytes of a file as text (invalid UTF-8 replaced), and whether it was
/// cut. A missing file reads as empty.
pub(super) fn read_capped(path: &Path, limit: u64) -> io::Result<(String, bool)> {
    use std::io::Read;
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((String::new(), false)),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let mut bytes = Vec::with_capacity(len.min(limit) as usize);
    file.take(limit).read_to_end(&mut bytes)?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), len > limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, dir: &Path) -> Invocation {
        Invocation {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            cwd: dir.to_path_buf(),
        }
    }

    fn alive(pid: i32) -> bool {
        // A zombie waiting for init to reap it is dead for our purposes.
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z'),
            Err(_) => false,
        }
    }

    #[tokio::test]
    async fn a_watched_process_is_stopped_once_its_output_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let inv = sh(
            "sleep 30 & echo $! > bg; echo start; sleep 0.2; echo DECIDED; wait",
            tmp.path(),
        );
        let stop = StopWhen(Arc::new(|text: &str| text.contains("DECIDED")));
        let r = run_process_watched(&inv, &out, &out, Duration::from_secs(20), Some(&stop))
            .await
            .unwrap();
        assert_eq!(r.exit, Exit::Stopped);
        assert!(r.wall < Duration::from_secs(10), "{:?}", r.wall);
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains("start\nDECIDED"), "{text}");
        let bg: i32 = std::fs::read_to_string(tmp.path().join("bg"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(!alive(bg), "the group was killed with the agent");
        // Output that never shows it: the process ends by itself.
        let never = StopWhen(Arc::new(|text: &str| text.contains("NEVER")));
        let r = run_process_watched(
            &sh("echo hi", tmp.path()),
            &out,
            &out,
            Duration::from_secs(20),
            Some(&never),
        )
        .await
        .unwrap();
        assert_eq!(r.exit, Exit::Code(0));
    }

    #[tokio::test]
    async fn exit_codes_env_and_output_files() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let inv = sh("echo \"$PATH\" ; echo err >&2; exit 3", tmp.path());
        let r = run_process(&inv, &out, &out, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(r.exit, Exit::Code(3));
        let (text, cut) = read_capped(&out, 1 << 20).unwrap();
        assert_eq!(text, "/usr/bin:/bin\nerr\n");
        assert!(!cut);
        assert_eq!(read_capped(&out, 4).unwrap(), ("/usr".into(), true));
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group_including_background_children() {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("child.pid");
        let script = format!("sleep 300 & echo $! > {}; sleep 300", pidfile.display());
        let out = tmp.path().join("out");
        let r = run_process(
            &sh(&script, tmp.path()),
            &out,
            &out,
            Duration::from_millis(500),
        )
        .await
        .unwrap();
        assert_eq!(r.exit, Exit::TimedOut);
        assert!(r.wall >= Duration::from_millis(500));
        let child: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        for _ in 0..50 {
            if !alive(child) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("background child {child} survived the timeout");
    }

    #[tokio::test]
    async fn an_agent_ignoring_sigterm_is_killed_after_the_grace() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let inv = sh(
            "trap '' TERM; echo started; while :; do sleep 0.05; done",
            tmp.path(),
        );
        let r = run_process(&inv, &out, &out, Duration::from_millis(300))
            .await
            .unwrap();
        assert_eq!(r.exit, Exit::TimedOut);
        assert!(
            r.wall >= Duration::from_millis(300) + TERM_GRACE,
            "{:?}",
            r.wall
        );
        assert_eq!(read_capped(&out, 100).unwrap().0, "started\n");
    }

    #[tokio::test]
    async fn stragglers_are_killed_after_a_normal_exit() {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("child.pid");
        let script = format!("sleep 300 & echo $! > {}; exit 0", pidfile.display());
        let out = tmp.path().join("out");
        let r = run_process(
            &sh(&script, tmp.path()),
            &out,
            &out,
            Duration::from_secs(10),
        )
        .await
        .unwrap();
        assert_eq!(r.exit, Exit::Code(0));
        let child: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        for _ in 0..50 {
            if !alive(child) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("straggler {child} survived");
    }

    fn pid_in(file: &Path) -> i32 {
        std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    async fn gone(pid: i32) -> bool {
        for _ in 0..100 {
            if !alive(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    /// `setsid` leaves the process group; the trial's tag still finds it, at the timeout and
    /// after a normal exit.
    #[tokio::test]
    async fn a_child_in_its_own_session_is_killed_too() {
        for (script, timeout) in [
            ("setsid sleep 300 & echo $! > {pid}; sleep 300", 300),
            (
                "setsid sh -c 'echo $$ > {pid}; exec sleep 300' & sleep 0.3; exit 0",
                10_000,
            ),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let pidfile = tmp.path().join("escaped.pid");
            let script = script.replace("{pid}", &pidfile.display().to_string());
            let out = tmp.path().join("out");
            let inv = Invocation {
                env: vec![("PATH".into(), "/usr/bin:/bin".into())],
                ..sh(&script, tmp.path())
            };
            run_process(&inv, &out, &out, Duration::from_millis(timeout))
                .await
                .unwrap();
            let escaped = pid_in(&pidfile);
            assert!(gone(escaped).await, "{script}: {escaped} survived");
        }
    }

    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error() {
        let tmp = tempfile::tempdir().unwrap();
        let mut inv = sh("true", tmp.path());
        inv.program = tmp.path().join("no-such-agent");
        let out = tmp.path().join("out");
        let err = run_process(&inv, &out, &out, Duration::from_secs(1))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
