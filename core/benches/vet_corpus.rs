//! How well and how fast `skillwatch vet` works: recall and false alarms per behaviour class on
//! the labeled corpus (tests/fixtures/vet/<class>/{malicious,benign}/<skill>), the verdicts on
//! the real skills of ../shared/corpus (all taken as benign), and the time of a vet pass over
//! that corpus against a plain check pass, measured in this one run.
//!
//! A malicious skill counts as found when its verdict is `malicious` (the verdict that exits
//! 1); a benign twin counts as a false alarm when its verdict is `malicious`, and the table
//! also shows how many twins are `suspicious` (a review, not an alarm). Intervals are Wilson
//! score intervals at 95%.
//!
//! `cargo bench -p skillwatch-core --bench vet_corpus`; `SKILLWATCH_VET_PASSES=N` sets the
//! timed passes (default 5, one thread each, as `skillwatch vet -j1` would run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use skillwatch_core::checks::{CheckOptions, check_skill_dirs_each};
use skillwatch_core::skill::Discovered;
use skillwatch_core::vet::{self, Verdict};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Wilson score interval of `k` of `n` at 95% (core's `stats::wilson_interval`).
fn wilson(k: usize, n: usize) -> (f64, f64) {
    match skillwatch_core::scoring::stats::wilson_interval(k as u64, n as u64, 0.95) {
        Ok(i) => (i.low, i.high),
        Err(_) => (0.0, 1.0), // no skill in the class: nothing is known
    }
}

fn pct(k: usize, n: usize) -> String {
    let (lo, hi) = wilson(k, n);
    let p = if n == 0 {
        0.0
    } else {
        100.0 * k as f64 / n as f64
    };
    format!(
        "{k:>3}/{n:<3} {p:5.1}% [{:5.1}, {:5.1}]",
        100.0 * lo,
        100.0 * hi
    )
}

/// The verdict of every skill found under `dir`, by folder.
fn verdicts(dir: &Path, options: &CheckOptions) -> Vec<(PathBuf, Verdict)> {
    let skills = Discovered::walk(dir);
    let folders: Vec<PathBuf> = skills.dirs().cloned().collect();
    let mut out = Vec::new();
    check_skill_dirs_each(&skills, options, 1, |reports| {
        let d = folders[out.len()].clone();
        let v = vet::verdict(&d, &reports).verdict;
        out.push((d, v));
    });
    out
}

#[derive(Default)]
struct Row {
    found: usize,
    malicious: usize,
    suspicious_only: usize,
    false_alarms: usize,
    twins_suspicious: usize,
    benign: usize,
    missed: Vec<String>,
    alarms: Vec<String>,
}

fn labeled(options: &CheckOptions) {
    let base = root().join("tests/fixtures/vet");
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut classes: Vec<_> = std::fs::read_dir(&base)
        .expect("tests/fixtures/vet")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    classes.sort();
    for class in classes {
        let row = rows.entry(class.clone()).or_default();
        for (d, v) in verdicts(&base.join(&class).join("malicious"), options) {
            row.malicious += 1;
            match v {
                Verdict::Malicious => row.found += 1,
                Verdict::Suspicious => {
                    row.suspicious_only += 1;
                    row.missed.push(name(&d));
                }
                Verdict::Clean => row.missed.push(name(&d)),
            }
        }
        for (d, v) in verdicts(&base.join(&class).join("benign"), options) {
            row.benign += 1;
            match v {
                Verdict::Malicious => {
                    row.false_alarms += 1;
                    row.alarms.push(name(&d));
                }
                Verdict::Suspicious => row.twins_suspicious += 1,
                Verdict::Clean => {}
            }
        }
    }
    println!("| class | recall (malicious verdict) | false alarms on twins | twins suspicious |");
    println!("|---|---|---|---|");
    let mut total = Row::default();
    for (class, row) in &rows {
        println!(
            "| {class} | {} | {} | {} |",
            pct(row.found, row.malicious),
            pct(row.false_alarms, row.benign),
            row.twins_suspicious
        );
        total.found += row.found;
        total.malicious += row.malicious;
        total.false_alarms += row.false_alarms;
        total.benign += row.benign;
        total.twins_suspicious += row.twins_suspicious;
        total.suspicious_only += row.suspicious_only;
    }
    println!(
        "| **all** | {} | {} | {} |",
        pct(total.found, total.malicious),
        pct(total.false_alarms, total.benign),
        total.twins_suspicious
    );
    println!(
        "\nmalicious skills judged only suspicious: {}",
        total.suspicious_only
    );
    for (class, row) in &rows {
        if !row.missed.is_empty() {
            println!("missed in {class}: {}", row.missed.join(", "));
        }
        if !row.alarms.is_empty() {
            println!("false alarms in {class}: {}", row.alarms.join(", "));
        }
    }
}

fn name(d: &Path) -> String {
    d.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn real_corpus(options: &CheckOptions) {
    let corpus = root().join("../shared/corpus");
    if !corpus.is_dir() {
        println!("\n../shared/corpus not found: no real-skill figures");
        return;
    }
    let all = verdicts(&corpus, options);
    let n = all.len();
    let count = |v| all.iter().filter(|(_, x)| *x == v).count();
    println!(
        "\nreal skills of ../shared/corpus (benign): malicious {}, suspicious {}, clean {}",
        pct(count(Verdict::Malicious), n),
        count(Verdict::Suspicious),
        count(Verdict::Clean)
    );
    for (d, v) in &all {
        if *v == Verdict::Malicious {
            println!("  flagged malicious: {}", d.display());
        }
    }
    timing(&corpus);
}

/// A check pass and a vet pass over the corpus, alternated, one thread each.
fn timing(corpus: &Path) {
    let passes: usize = std::env::var("SKILLWATCH_VET_PASSES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let skills = Discovered::walk(corpus);
    let check = CheckOptions::default();
    let vetting = CheckOptions {
        vet: true,
        ..CheckOptions::default()
    };
    let mut times = [Vec::new(), Vec::new()];
    for _ in 0..passes {
        for (i, options) in [&check, &vetting].into_iter().enumerate() {
            let folders: Vec<PathBuf> = skills.dirs().cloned().collect();
            let start = Instant::now();
            let mut n = 0;
            check_skill_dirs_each(&skills, options, 1, |reports| {
                if options.vet {
                    std::hint::black_box(vet::verdict(&folders[n], &reports));
                }
                n += 1;
            });
            times[i].push(start.elapsed());
        }
    }
    let median = |t: &mut Vec<Duration>| {
        t.sort();
        t[t.len() / 2]
    };
    let (c, v) = (median(&mut times[0]), median(&mut times[1]));
    println!(
        "\ntime over the corpus ({} skills, 1 thread, median of {passes}): check {:.0} ms, vet {:.0} ms, ratio {:.2}",
        skills.len(),
        c.as_secs_f64() * 1e3,
        v.as_secs_f64() * 1e3,
        v.as_secs_f64() / c.as_secs_f64()
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too, with no need to
    // time anything
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let options = CheckOptions {
        vet: true,
        ..CheckOptions::default()
    };
    labeled(&options);
    real_corpus(&options);
}

#[cfg(test)]
mod tests {
    #[test]
    fn wilson_matches_the_formula() {
        let (lo, hi) = super::wilson(10, 10);
        assert!((lo - 0.7225).abs() < 1e-3 && hi == 1.0);
        let (lo, hi) = super::wilson(0, 100);
        assert!(lo == 0.0 && (hi - 0.0370).abs() < 1e-3);
    }
}
