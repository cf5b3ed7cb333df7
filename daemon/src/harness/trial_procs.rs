//! Every process a trial started, found and killed even when it left the trial's process
//! group: an agent's child that calls `setsid` (or double-forks) is out of the group
//! [`super::process`] kills, and after a kill -9 of the daemon nothing would ever end it.
//!
//! Each agent process gets an environment variable, [`TAG_VAR`], naming its owner (this daemon,
//! by its socket, or this CLI process) and its trial; children inherit it through `setsid`
//! and forks. A trial's end kills the processes that carry its tag and every descendant of its
//! leader (for a child that cleared its environment but not its parentage), repeatedly until
//! none is left (a process can fork while being killed). A daemon starting kills every process
//! tagged with its socket: an earlier daemon of the same socket left them running.
//!
//! A cgroup would hold them all without a tag, but needs a delegated cgroup v2 subtree, which
//! a user service seldom has. The daemon is also a child subreaper (`PR_SET_CHILD_SUBREAPER`):
//! an orphan of a trial is re-parented to the daemon, not to PID 1, so it stays a descendant
//! the daemon can find. Orphans it adopts are reaped here, never with `waitpid(-1)`: tokio
//! reaps the children it spawned by pid, and taking one of them would fail its wait. Spawns
//! therefore go through [`spawn`], which records the pid, and only unrecorded zombie children
//! (adopted orphans) are reaped.

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The variable each agent process carries: `OWNER#N`.
pub const TAG_VAR: &str = "SKILLWATCH_TRIAL";

static OWNER: OnceLock<String> = OnceLock::new();
static NEXT: AtomicU64 = AtomicU64::new(1);
static SUBREAPER: AtomicBool = AtomicBool::new(false);
/// Children spawned by tokio in this process, which tokio reaps itself.
static SPAWNED: Mutex<Option<HashSet<u32>>> = Mutex::new(None);

/// Name this process's trials after `owner` (the daemon's socket); without it, after the pid.
/// Only the first call counts.
pub fn set_owner(owner: &str) {
    let _ = OWNER.set(owner.to_owned());
}

fn owner() -> &'static str {
    OWNER.get_or_init(|| format!("pid {}", std::process::id()))
}

/// A fresh tag for one trial's processes.
pub fn new_tag() -> String {
    format!("{}#{}", owner(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Make this process the child subreaper of everything it starts (Linux only; elsewhere
/// nothing happens).
pub fn become_subreaper() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with an integer argument has no memory effects.
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        SUBREAPER.store(true, Ordering::Relaxed);
    }
    Ok(())
}

/// Spawn `cmd`, recording its pid as one tokio reaps.
pub fn spawn(cmd: &mut tokio::process::Command) -> io::Result<tokio::process::Child> {
    let mut spawned = SPAWNED.lock().unwrap_or_else(|p| p.into_inner());
    let child = cmd.spawn()?;
    if let Some(pid) = child.id() {
        spawned.get_or_insert_with(HashSet::new).insert(pid);
    }
    Ok(child)
}

/// Forget `pid` once tokio has reaped it.
pub fn reaped(pid: u32) {
    let mut spawned = SPAWNED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(set) = spawned.as_mut() {
        set.remove(&pid);
    }
}

/// One process as /proc shows it.
struct Proc {
    pid: u32,
    ppid: u32,
    zombie: bool,
}

fn processes() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // after the command's closing parenthesis: state, ppid, ...
            let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
            let zombie = rest.next()? == "Z";
            let ppid = rest.next()?.parse().ok()?;
            Some(Proc { pid, ppid, zombie })
        })
        .collect()
}

/// The value of [`TAG_VAR`] in `pid`'s environment (unreadable for another user's process).
fn tag_of(pid: u32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{TAG_VAR}=");
    environ
        .split(|b| *b == 0)
        .find_map(|v| v.strip_prefix(prefix.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// Living processes that carry a tag `matches` accepts, or descend from `root`; never this
/// process, never `root` itself.
fn targets(root: Option<u32>, matches: &dyn Fn(&str) -> bool) -> Vec<u32> {
    let me = std::process::id();
    let procs = processes();
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in &procs {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut found: HashSet<u32> = HashSet::new();
    if let Some(root) = root {
        let mut stack = vec![root];
        while let Some(pid) = stack.pop() {
            for &c in children.get(&pid).into_iter().flatten() {
                if found.insert(c) {
                    stack.push(c);
                }
            }
        }
    }
    for p in &procs {
        if !p.zombie && tag_of(p.pid).is_some_and(|t| matches(&t)) {
            found.insert(p.pid);
        }
    }
    let zombies: HashSet<u32> = procs.iter().filter(|p| p.zombie).map(|p| p.pid).collect();
    found.retain(|pid| *pid != me && Some(*pid) != root && !zombies.contains(pid));
    found.into_iter().collect()
}

/// SIGKILL every process that carries a tag `matches` accepts or descends from `root`, until
/// none is left (bounded: a process forking faster than it is killed is given up on); how
/// many were killed. Adopted orphans among them are reaped.
fn kill_all(root: Option<u32>, matches: &dyn Fn(&str) -> bool) -> usize {
    let mut killed = HashSet::new();
    for _ in 0..20 {
        let found = targets(root, matches);
        if found.is_empty() {
            break;
        }
        for pid in found {
            // SAFETY: kill has no memory effects; ESRCH (already gone) is fine.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            killed.insert(pid);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    reap_adopted();
    killed.len()
}

/// Kill what is left of the trial tagged `tag` whose leader is `leader` (not reaped yet, so
/// its pid cannot have been reused).
pub fn kill_trial(tag: &str, leader: u32) -> usize {
    kill_all(Some(leader), &|t| t == tag)
}

/// Kill every process an earlier owner of the same name left running (call before this
/// process starts any trial); how many.
pub fn kill_leftovers() -> usize {
    let prefix = format!("{}#", owner());
    kill_all(None, &|t| t.starts_with(&prefix))
}

/// Reap zombie children this process adopted as subreaper (not those tokio waits for).
pub fn reap_adopted() {
    if !SUBREAPER.load(Ordering::Relaxed) {
        return;
    }
    let me = std::process::id();
    let spawned = SPAWNED.lock().unwrap_or_else(|p| p.into_inner());
    for p in processes() {
        if p.ppid == me && p.zombie && !spawned.as_ref().is_some_and(|s| s.contains(&p.pid)) {
            // SAFETY: waitpid on one specific pid, a zombie child no one else waits for.
            unsafe {
                let mut status = 0;
                libc::waitpid(p.pid as libc::pid_t, &mut status, libc::WNOHANG);
            }
        }
    }
}
