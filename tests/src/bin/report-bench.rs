//! `skillwatch report --html` on a large history: writes a history of about `--trials N`
//! trials (default 10,000) through the `Store` API, renders it with the real binary (the one
//! beside this one, or `--skillwatch PATH`), and prints the file's size and the time taken.
//!
//! ```text
//! cargo build --release -p skillwatch -p skillwatch-tests --bin skillwatch --bin report-bench
//! target/release/report-bench --trials 10000 [--one-run] [--keep DIR]
//! ```
//!
//! By default the trials spread over two skills, four models and runs over time (the usual
//! history); `--one-run` puts them all in one run of one skill (50 cases), the worst case for
//! the drill-down, which details only the latest runs.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use skillwatch_tests::history::{self, Shape};

fn main() {
    let mut trials = 10_000usize;
    let mut keep: Option<PathBuf> = None;
    let mut one_run = false;
    let mut bin = std::env::current_exe()
        .expect("own path")
        .with_file_name("skillwatch");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--trials" => trials = value().parse().expect("--trials N"),
            "--keep" => keep = Some(value().into()),
            "--one-run" => one_run = true,
            "--skillwatch" => bin = value().into(),
            other => panic!("unknown argument {other}"),
        }
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = keep.unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).expect("output folder");
    let shape = if one_run {
        one_run_of(trials)
    } else {
        shape_for(trials)
    };
    let db = dir.join("history.sqlite3");
    let _ = std::fs::remove_file(&db);
    let t = Instant::now();
    drop(history::write(&db, &shape));
    let wrote = t.elapsed();
    let html = dir.join("report.html");
    let t = Instant::now();
    let out = Command::new(&bin)
        .args(["report", "--html"])
        .arg(&html)
        .arg("--db")
        .arg(&db)
        .output()
        .expect("run skillwatch report");
    let rendered = t.elapsed();
    assert!(
        out.status.success(),
        "skillwatch report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let size = std::fs::metadata(&html).expect("report written").len();
    println!(
        "history: {} trials ({} skills x {} models, {} runs, {} cases x {} attempts x 2 conditions per run), written in {:.1} s",
        shape.trials(),
        shape.skills.len(),
        shape.models.len(),
        shape.models.iter().map(|m| m.2).sum::<usize>() * shape.skills.len(),
        shape.cases,
        shape.attempts,
        wrote.as_secs_f64()
    );
    println!(
        "report: {:.2} MB in {:.2} s ({})",
        size as f64 / 1e6,
        rendered.as_secs_f64(),
        html.display()
    );
}

/// Two skills on four models (runs over time on each), 25 cases x 3 attempts: sized to hold
/// about `trials` trials.
fn shape_for(trials: usize) -> Shape {
    let (cases, attempts) = (25usize, 3u32);
    let per_run = cases * attempts as usize * 2;
    let runs_per_skill = trials.div_ceil(per_run * 2).max(4);
    let per_model = runs_per_skill / 4;
    let extra = runs_per_skill - per_model * 4;
    let models = [
        "model-a-2025",
        "model-b-2025",
        "model-c-2026",
        "model-d-2026",
    ];
    Shape {
        skills: vec!["pdf-tables".into(), "commit-messages".into()],
        models: models
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let runs = per_model + usize::from(i < extra);
                ("claude-code".to_string(), m.to_string(), runs)
            })
            .collect(),
        cases,
        attempts,
        regresses_from: Some(3),
    }
}

/// One skill, one model, one run: 50 cases with as many attempts as `trials` needs.
fn one_run_of(trials: usize) -> Shape {
    let cases = 50usize;
    Shape {
        skills: vec!["pdf-tables".into()],
        models: vec![("claude-code".into(), "model-a-2025".into(), 1)],
        cases,
        attempts: trials.div_ceil(cases * 2).max(1) as u32,
        regresses_from: None,
    }
}
