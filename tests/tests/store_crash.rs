//! kill -9 during a write transaction leaves a consistent history: a child process
//! (`store-writer`) writes runs through the public `Store` API, announcing each transaction
//! before it starts and after it commits; the test kills it with SIGKILL at varying moments,
//! reopens the file and checks that
//! - SQLite's integrity and foreign-key checks pass;
//! - every transaction the child reported committed is there;
//! - nothing half-written is there: each stored trial has all its metrics, assertions and its
//!   trajectory, a batch is all or nothing, a run is only `completed` with all its trials;
//! - the next process picks up: interrupted runs are marked, and history can be scored.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::Connection;
use skillwatch_daemon::store::{RunFilter, RunStatus, Store};

/// What the child said, line by line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Begin(String),
    Commit(String),
}

/// Where to kill: after the `occurrence`-th announcement starting with `trigger`, plus a pause.
#[derive(Debug, Clone, Copy)]
struct KillPoint {
    trigger: &'static str,
    occurrence: usize,
    pause_ms: u64,
}

/// Start the writer, SIGKILL it at `at`, and return everything it wrote to stdout.
fn run_and_kill(db: &Path, at: KillPoint) -> Vec<Event> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_store-writer"))
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start store-writer");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen: Vec<String> = Vec::new();
    let mut hits = 0;
    while hits < at.occurrence {
        match rx.recv_timeout(skillwatch_tests::wait::PATIENCE) {
            Ok(line) => {
                hits += usize::from(line.starts_with(at.trigger));
                seen.push(line);
            }
            Err(e) => panic!(
                "store-writer stopped talking after {} lines: {e}",
                seen.len()
            ),
        }
    }
    std::thread::sleep(Duration::from_millis(at.pause_ms));
    child.kill().expect("SIGKILL the writer"); // std's kill() is SIGKILL on Unix
    let status = child.wait().unwrap();
    assert!(!status.success(), "the writer was killed, not finished");
    reader.join().unwrap();
    seen.extend(rx.try_iter());
    seen.iter()
        .filter_map(|l| {
            if let Some(rest) = l.strip_prefix("begin ") {
                Some(Event::Begin(rest.to_string()))
            } else {
                l.strip_prefix("commit ")
                    .map(|r| Event::Commit(r.to_string()))
            }
        })
        .collect()
}

fn scalar(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> i64 {
    conn.query_row(sql, params, |r| r.get(0)).unwrap()
}

/// Check every reported commit is stored and nothing is half-stored.
fn check_consistent(db: &Path, events: &[Event]) {
    let store = Store::open(db).expect("reopen after kill -9");
    assert_eq!(store.integrity_check().unwrap(), Vec::<String>::new());
    let conn = Connection::open(db).unwrap();
    for event in events {
        let Event::Commit(what) = event else { continue };
        let parts: Vec<&str> = what.split(' ').collect();
        match parts.as_slice() {
            ["trial", run, case, condition] => {
                let n = scalar(
                    &conn,
                    "SELECT count(*) FROM trials t JOIN cases c ON c.id = t.case_id
                     WHERE t.run_id = ?1 AND c.case_key = ?2 AND t.condition = ?3",
                    rusqlite::params![run.parse::<i64>().unwrap(), case, condition],
                );
                assert_eq!(n, 1, "committed trial {what} is missing");
            }
            ["batch", run, n] => {
                let stored = scalar(
                    &conn,
                    "SELECT count(*) FROM trials WHERE run_id = ?1",
                    [run.parse::<i64>().unwrap()],
                );
                assert_eq!(stored, n.parse::<i64>().unwrap(), "committed batch {what}");
            }
            ["finish", run] => {
                let status: String = conn
                    .query_row(
                        "SELECT status FROM runs WHERE id = ?1",
                        [run.parse::<i64>().unwrap()],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert_eq!(status, "completed", "finished run {run}");
            }
            other => panic!("unexpected announcement {other:?}"),
        }
    }
    // No partial trial: all 6 metrics, 3 assertions and the trajectory, or no trial at all.
    let partial = scalar(
        &conn,
        "SELECT count(*) FROM trials t WHERE
             (SELECT count(*) FROM metric_scores m WHERE m.trial_id = t.id) != 6
          OR (SELECT count(*) FROM assertion_results a WHERE a.trial_id = t.id) != 3
          OR t.trajectory_id IS NULL",
        [],
    );
    assert_eq!(partial, 0, "trials with missing parts");
    // Batch runs (odd run numbers use one transaction for all 50 trials): 0 or 50 trials.
    let odd_batches = scalar(
        &conn,
        "SELECT count(*) FROM runs r WHERE r.seed % 2 = 1 AND
             (SELECT count(*) FROM trials t WHERE t.run_id = r.id) NOT IN (0, 50)",
        [],
    );
    assert_eq!(odd_batches, 0, "a batch was half written");
    // Completed runs have all their trials and a summary.
    let incomplete = scalar(
        &conn,
        "SELECT count(*) FROM runs r WHERE r.status = 'completed' AND (
             (SELECT count(*) FROM trials t WHERE t.run_id = r.id) != 50
          OR NOT EXISTS (SELECT 1 FROM run_summaries s WHERE s.run_id = r.id))",
        [],
    );
    assert_eq!(incomplete, 0, "completed runs missing trials or summaries");
}

/// Whether the kill came between a `begin` and its `commit`: the last announcement is a begin.
fn killed_inside_a_transaction(events: &[Event]) -> bool {
    matches!(events.last(), Some(Event::Begin(_)))
}

#[test]
fn kill_9_during_writes_leaves_a_consistent_history() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("history.sqlite3");
    let mut inside = 0;
    let mut committed_total = 0;
    // Different kill points: early in a run, in the middle of a batch, late; pauses spread the
    // kill over the transaction's phases (statement execution, WAL write, fsync).
    // Kill inside each kind of transaction (one trial, a 50-trial batch, finishing a run with
    // its summary) at varying depths: right after it starts and a few milliseconds in.
    let kill = |trigger, occurrence, pause_ms| KillPoint {
        trigger,
        occurrence,
        pause_ms,
    };
    let plan = [
        kill("begin trial", 3, 0),
        kill("begin batch", 1, 2),
        kill("begin finish", 1, 0),
        kill("begin trial", 40, 1),
        kill("begin batch", 1, 10),
        kill("begin finish", 2, 1),
        kill("begin batch", 2, 0),
        kill("begin trial", 77, 3),
        kill("begin batch", 1, 25),
        kill("begin trial", 12, 0),
        kill("begin batch", 2, 5),
        kill("begin finish", 1, 2),
    ];
    let mut rounds = 0;
    for at in plan {
        let events = run_and_kill(&db, at);
        rounds += 1;
        if killed_inside_a_transaction(&events) {
            inside += 1;
        }
        committed_total += events
            .iter()
            .filter(|e| matches!(e, Event::Commit(_)))
            .count();
        check_consistent(&db, &events);
        eprintln!(
            "round {rounds} ({at:?}): {} announcements, killed inside a transaction: {}",
            events.len(),
            killed_inside_a_transaction(&events)
        );
    }
    assert!(
        inside >= plan.len() / 2,
        "only {inside} of {rounds} kills landed inside a transaction; the test did not exercise what it claims"
    );
    assert!(
        committed_total > 100,
        "the writer committed too little: {committed_total}"
    );

    // The next process takes over: runs left running are interrupted, the history is scored.
    let mut store = Store::open(&db).unwrap();
    let interrupted = store.interrupt_running_runs().unwrap();
    assert!(
        interrupted <= 1,
        "only the last writer's run can be left running: {interrupted}"
    );
    let runs = store.runs("crash-skill", &RunFilter::default()).unwrap();
    let statuses: BTreeSet<RunStatus> = runs.iter().map(|r| r.status).collect();
    assert!(statuses.contains(&RunStatus::Interrupted), "{statuses:?}");
    assert!(statuses.contains(&RunStatus::Completed), "{statuses:?}");
    let history = store.history("crash-skill", &RunFilter::default()).unwrap();
    assert!(
        history
            .iter()
            .all(|h| h.headline.is_some() || h.run.status == RunStatus::Running)
    );
    assert_eq!(store.integrity_check().unwrap(), Vec::<String>::new());
}
