//! Idle cost of the daemon (acceptance 5): start the real `skillwatch daemon` watching a
//! workspace and the shared corpus of real skills, let it settle, then measure over 60 s of
//! idleness its CPU time (from /proc/PID/stat) and its resident memory (VmRSS, VmHWM).
//! Goal: under 30 MB resident and about 0% CPU.
//!
//! `cargo bench -p skillwatch-tests --bench daemon_idle` (SKILLWATCH_IDLE_SECS changes the
//! measured span; SKILLWATCH_IDLE_NO_CORPUS=1 watches the small workspace only).

use std::time::{Duration, Instant};

use skillwatch_tests::daemon::DaemonFixture;
use skillwatch_tests::{count_skill_files, shared_corpus_dir};

/// utime + stime of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read stat");
    let after_name = stat.rsplit(')').next().expect("stat fields");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // fields after the name start at field 3 (state); utime and stime are fields 14 and 15
    let utime: u64 = fields[11].parse().expect("utime");
    let stime: u64 = fields[12].parse().expect("stime");
    utime + stime
}

/// A `Vm*` line of /proc/PID/status, in KiB.
fn status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    status
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

fn main() {
    let secs: u64 = std::env::var("SKILLWATCH_IDLE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let mut fx = DaemonFixture::new();
    for name in ["alpha", "beta", "gamma"] {
        fx.add_skill(name, 3);
    }
    fx.write_config("[models]\nopenai = [\"model-a\"]\n");
    let shared = shared_corpus_dir();
    let with_corpus = std::env::var("SKILLWATCH_IDLE_NO_CORPUS").is_err() && shared.is_some();
    let corpus = shared.unwrap_or_default();
    let started = Instant::now();
    fx.start();
    if with_corpus {
        let out = fx.cli(&["daemon", "start", "--root", corpus.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let pid = fx.pid();
    println!(
        "daemon pid {pid} up in {:.2} s, watching the workspace{}",
        started.elapsed().as_secs_f64(),
        if with_corpus {
            format!(" and the corpus ({} skills)", count_skill_files(&corpus))
        } else {
            String::new()
        }
    );
    std::thread::sleep(Duration::from_secs(5));
    let ticks_per_sec = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let cpu_before = cpu_ticks(pid);
    let rss_before = status_kib(pid, "VmRSS:");
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    let wall = t0.elapsed().as_secs_f64();
    let cpu_after = cpu_ticks(pid);
    let cpu_secs = (cpu_after - cpu_before) as f64 / ticks_per_sec;
    let rss_after = status_kib(pid, "VmRSS:");
    let hwm = status_kib(pid, "VmHWM:");
    println!("idle span:         {wall:.1} s");
    println!(
        "CPU time:          {cpu_secs:.3} s ({:.3}% of one core; tick = {:.0} ms)",
        cpu_secs / wall * 100.0,
        1000.0 / ticks_per_sec
    );
    println!(
        "resident memory:   {:.1} MiB at the start, {:.1} MiB at the end, peak {:.1} MiB",
        rss_before as f64 / 1024.0,
        rss_after as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    println!("threads:           {}", threads(pid));
    let goal_ok = rss_after < 30 * 1024 && cpu_secs / wall < 0.01;
    println!(
        "goal (< 30 MB, ~0% CPU): {}",
        if goal_ok { "met" } else { "NOT met" }
    );
    assert!(fx.terminate().success());
}
