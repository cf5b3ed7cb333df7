//! The cleaner of a probe run that died: a `kill -9` of skillwatch leaves no chance to kill
//! the agents it started (each in its own process group) or to delete the probe folders, so a
//! small shell process started beside the run does it. It waits on a pipe from the run; when
//! the pipe closes without the run having finished, it kills every process whose working
//! directory or environment points into the run's folder (the agents and what they started,
//! all of which run with HOME and the workspace there) and deletes the folder.
//!
//! Linux only (it reads /proc); elsewhere the watchdog is not started and a killed run leaves
//! its folder and agents behind, as `skillwatch run` does.

use std::path::Path;
use std::process::Stdio;

use tokio::process::{Child, Command};

/// The cleanup, in POSIX sh: `$1` is the folder as the run names it, `$2` its canonical path
/// (what /proc shows as a working directory). Two passes, as a process killed in the first
/// may have started another.
const SCRIPT: &str = r#"
read -r line
[ "$line" = done ] && exit 0
root=$1
real=$2
for pass in 1 2; do
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$$" ] && continue
    case "$(readlink "$d/cwd" 2>/dev/null)" in
      "$root"*|"$real"*) kill -KILL "$p" 2>/dev/null; continue ;;
    esac
    if tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -q "^HOME=$root"; then
      kill -KILL "$p" 2>/dev/null
    fi
  done
  sleep 0.2
done
rm -rf -- "$root"
"#;

/// A running watchdog; [`Watchdog::disarm`] it when the run ends normally.
pub struct Watchdog {
    child: Option<Child>,
}

impl Watchdog {
    /// Watch `root` (an absolute folder owned by this run). `None` where /proc is missing or
    /// the shell cannot be started: the run goes on without it.
    pub fn arm(root: &Path) -> Option<Watchdog> {
        if !Path::new("/proc/self/environ").exists() {
            return None;
        }
        let child = Command::new("/bin/sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("skillwatch-probe-watchdog")
            .arg(root)
            .arg(root.canonicalize().unwrap_or_else(|_| root.to_path_buf()))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own group: a signal to the terminal's job (Ctrl-C) must not take it along
            // before the run has cleaned up itself.
            .process_group(0)
            .spawn()
            .ok()?;
        Some(Watchdog { child: Some(child) })
    }

    /// The run finished and cleaned up: tell the watchdog to exit without doing anything.
    pub async fn disarm(mut self) {
        if let Some(mut child) = self.child.take() {
            if let Some(mut stdin) = child.stdin.take() {
                use tokio::io::AsyncWriteExt;
                let _ = stdin.write_all(b"done\n").await;
            }
            let _ = child.wait().await;
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Dropped without `disarm` (an error path): the pipe closes and the watchdog cleans up,
        // which is what an abandoned run needs. Reap it in the background.
        if let Some(mut child) = self.child.take() {
            drop(child.stdin.take());
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
        }
    }
}
