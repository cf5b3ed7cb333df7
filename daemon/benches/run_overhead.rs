//! Benchmark: the paired runner's own overhead per trial, with an agent that answers at once.
//!
//! The agent is the `command` harness running a two-line `sh` script that writes a one-step
//! ATIF file and one output file. Everything else is the real runner: a fresh workspace per
//! trial (a setup file written), skills staged, fresh HOME and TMPDIR, the process started in
//! its own group and reaped, the trajectory read and validated, grading (an output assertion
//! and a file glob), the security scan, the record written to a real SQLite history (WAL,
//! `synchronous = FULL`, so one fsync per trial), the trial folder deleted off the hot path.
//!
//! Reported, for `--jobs 1` and `--jobs 4`:
//! - trials per second over the whole run (prepare included);
//! - skillwatch's overhead per trial: (run wall time − the agent processes' own wall time)
//!   / trials, at `--jobs 1` where nothing overlaps; and the p50 / p95 of each trial's span
//!   from "started" to "recorded" minus its agent's wall time.
//!
//! Run: `cargo bench -p skillwatch-daemon --bench run_overhead [-- --cases N --runs R]`.
//! Goal (issue 6): overhead < 20 ms per trial.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use skillwatch_daemon::harness::HostEnv;
use skillwatch_daemon::runner::{
    HarnessKind, HarnessSettings, ProgressSink, RunEvent, RunRequest, Runner,
};
use skillwatch_daemon::store::{Condition, Store};
use tokio_util::sync::CancellationToken;

const AGENT: &str = r#"#!/bin/sh
printf '{"schema_version":"ATIF-v1.8","agent":{"name":"instant","version":"1"},"steps":[{"step_id":1,"source":"agent","message":"GOOD done","metrics":{"prompt_tokens":10,"completion_tokens":1}}]}' > "$SKILLWATCH_TRAJECTORY"
echo ok > out.txt
"#;

fn options() -> (usize, u32) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    (value("--cases", 25), value("--runs", 2) as u32)
}

fn skill(root: &Path, cases: usize) -> PathBuf {
    let dir = root.join("bench-skill");
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: bench-skill\ndescription: Benchmarks the runner. Use when benchmarking.\n---\n# Steps\n1. Answer GOOD.\n",
    )
    .unwrap();
    let mut yaml = String::from("scenarios:\n");
    for i in 0..cases {
        yaml.push_str(&format!(
            "  - name: case-{i}\n    prompt: task {i}\n    setup:\n      files:\n        - path: input.txt\n          content: data {i}\n    assertions:\n      - type: output_contains\n        value: GOOD\n      - type: file_exists\n        path: \"*.txt\"\n"
        ));
    }
    std::fs::write(dir.join("tests/eval.yaml"), yaml).unwrap();
    dir
}

fn agent(root: &Path) -> HarnessSettings {
    let program = root.join("agent.sh");
    std::fs::write(&program, AGENT).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    HarnessSettings {
        program: Some(program),
        ..HarnessSettings::new(HarnessKind::Command)
    }
}

type Key = (String, Condition, u32);

/// When each trial started and when it was recorded.
type Spans = Arc<Mutex<BTreeMap<Key, (Instant, Option<Instant>)>>>;

/// Records when each trial started and was recorded.
fn timing_sink() -> (ProgressSink, Spans) {
    let spans = Arc::new(Mutex::new(BTreeMap::new()));
    let s = spans.clone();
    let sink: ProgressSink = Arc::new(move |e: &RunEvent| match e {
        RunEvent::TrialStarted {
            case,
            condition,
            attempt,
        } => {
            s.lock()
                .unwrap()
                .insert((case.clone(), *condition, *attempt), (Instant::now(), None));
        }
        RunEvent::TrialFinished {
            case,
            condition,
            attempt,
            ..
        } => {
            if let Some(span) = s
                .lock()
                .unwrap()
                .get_mut(&(case.clone(), *condition, *attempt))
            {
                span.1 = Some(Instant::now());
            }
        }
        _ => {}
    });
    (sink, spans)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

async fn measure(root: &Path, skill: &Path, jobs: usize, cases: usize, runs: u32) {
    let db = root.join(format!("history-j{jobs}.sqlite3"));
    let store = Arc::new(Mutex::new(Store::open(&db).unwrap()));
    let host = HostEnv::from_pairs([("PATH", "/usr/local/bin:/usr/bin:/bin")]);
    let runner = Runner::new(store.clone()).with_host_env(host);
    let mut request = RunRequest::new(skill, agent(root), "instant");
    request.runs = runs;
    request.jobs = jobs;
    request.reuse_baselines = false;
    let (sink, spans) = timing_sink();
    let started = Instant::now();
    let prepared = runner.prepare(&request).await.unwrap();
    let prepare = started.elapsed();
    let report = prepared
        .execute(sink, CancellationToken::new())
        .await
        .unwrap();
    let total = started.elapsed();
    let trials = store.lock().unwrap().run_trials(report.run.id).unwrap();
    assert_eq!(trials.len(), cases * 2 * runs as usize);
    assert!(
        trials.iter().all(|t| t.passed == Some(true)),
        "every instant trial passes"
    );
    let agent_ms: BTreeMap<Key, u64> = trials
        .iter()
        .map(|t| {
            (
                (t.case.clone(), t.condition, t.attempt),
                t.wall_ms.unwrap_or(0),
            )
        })
        .collect();
    let agent_total: u64 = agent_ms.values().sum();
    let n = trials.len() as f64;
    let overhead_ms = (total.as_secs_f64() * 1000.0 - agent_total as f64) / n;
    let mut per_trial: Vec<f64> = spans
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(k, (s, e))| {
            let span = e.map(|e| e.duration_since(*s))?.as_secs_f64() * 1000.0;
            Some(span - *agent_ms.get(k)? as f64)
        })
        .collect();
    per_trial.sort_by(f64::total_cmp);
    println!(
        "jobs {jobs}: {} trials in {:.2} s (prepare {:.1} ms) = {:.1} trials/s; agent processes {:.1} ms/trial; \
         skillwatch overhead {:.1} ms/trial (whole run{}), per-trial span minus agent p50 {:.1} ms, p95 {:.1} ms",
        trials.len(),
        total.as_secs_f64(),
        prepare.as_secs_f64() * 1000.0,
        n / total.as_secs_f64(),
        agent_total as f64 / n,
        overhead_ms,
        if jobs == 1 {
            ""
        } else {
            ", trials overlap: not a per-trial cost"
        },
        percentile(&per_trial, 0.5),
        percentile(&per_trial, 0.95),
    );
}

fn main() {
    let (cases, runs) = options();
    let tmp = tempfile::tempdir().unwrap();
    let skill = skill(tmp.path(), cases);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("run_overhead: {cases} cases x 2 conditions x {runs} runs, instant `command` agent");
    for jobs in [1, 4] {
        rt.block_on(measure(tmp.path(), &skill, jobs, cases, runs));
        std::thread::sleep(Duration::from_millis(200));
    }
}
