//! Speed of the static checks: the whole shared corpus (every skill folder, as `skillwatch
//! check` runs it: SKILL.md rules plus the credential scan of every file), the SKILL.md rules
//! alone on documents already in memory, and one keystroke on a 2,000-line SKILL.md (the LSP's
//! budget is 10 ms). Throughput is in skills per second; compare with skills-ref's figure from
//! `tests/scripts/skills_ref_validate.py --time 3 ../shared/corpus`.
//!
//! For instruction counts, `SKILLWATCH_BENCH_PASSES=N` skips criterion and runs N plain passes
//! of `check_skill_dir` over the corpus (default profile, one thread), so a profiler sees the
//! check and nothing else: `valgrind --tool=callgrind <bench binary>` with N=1 and N=3 gives
//! the cost of one pass (the difference over 2) apart from start-up and regex compilation.
//! `SKILLWATCH_BENCH_KEYSTROKES=N` likewise runs N keystroke checks (the 2,000-line SKILL.md).

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group};
use skillwatch_core::checks::{CheckOptions, Profile, check_skill_dir, check_skill_document};
use skillwatch_core::skill::{SKILL_FILE, SkillDocument, discover, load_document};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

fn whole_corpus(c: &mut Criterion) {
    let dirs = discover(&corpus());
    assert!(!dirs.is_empty(), "no corpus at {}", corpus().display());
    let docs: Vec<(PathBuf, SkillDocument)> = dirs
        .iter()
        .filter_map(|d| {
            load_document(&d.join(SKILL_FILE))
                .ok()
                .map(|doc| (d.clone(), doc))
        })
        .collect();
    let mut group = c.benchmark_group("corpus");
    group.sample_size(20);
    group.throughput(Throughput::Elements(dirs.len() as u64));
    for (label, profile) in [
        ("default", Profile::Default),
        ("agentskills", Profile::AgentSkills),
    ] {
        let options = CheckOptions {
            profile,
            overrides: Vec::new(),
        };
        group.bench_function(format!("check_skill_dir/{label}"), |b| {
            b.iter(|| {
                for dir in &dirs {
                    black_box(check_skill_dir(dir, &options));
                }
            })
        });
    }
    let options = CheckOptions::default();
    group.throughput(Throughput::Elements(docs.len() as u64));
    group.bench_function("check_skill_document/in_memory", |b| {
        b.iter(|| {
            for (dir, doc) in &docs {
                black_box(check_skill_document(
                    dir,
                    &dir.join(SKILL_FILE),
                    doc,
                    &options,
                ));
            }
        })
    });
    group.finish();
}

/// A 2,000-line SKILL.md built from the corpus's largest one, repeated, with its folder.
fn keystroke_document() -> (PathBuf, String) {
    let dirs = discover(&corpus());
    let (dir, text) = dirs
        .iter()
        .filter_map(|d| {
            std::fs::read_to_string(d.join(SKILL_FILE))
                .ok()
                .map(|t| (d.clone(), t))
        })
        .max_by_key(|(_, t)| t.len())
        .expect("a corpus skill");
    let body_start = text.find("\n---\n").map_or(0, |i| i + 5);
    let mut big = text.clone();
    while big.lines().count() < 2_000 {
        big.push_str(&text[body_start..]);
    }
    let big: String = big.lines().take(2_000).collect::<Vec<_>>().join("\n");
    (dir, big)
}

/// One keystroke in the editor: parse and check the 2,000-line SKILL.md.
fn keystroke(c: &mut Criterion) {
    let (dir, big) = keystroke_document();
    let options = CheckOptions::default();
    let path = dir.join(SKILL_FILE);
    c.bench_function("keystroke/parse_and_check_2000_lines", |b| {
        b.iter(|| {
            let doc = SkillDocument::parse(black_box(big.clone()));
            black_box(check_skill_document(&dir, &path, &doc, &options))
        })
    });
}

/// `SKILLWATCH_BENCH_PASSES=N`: N passes of `check_skill_dir` over the corpus, for profilers.
fn plain_passes(passes: usize) {
    let dirs = discover(&corpus());
    let options = CheckOptions::default();
    let started = std::time::Instant::now();
    let mut findings = 0;
    for _ in 0..passes {
        for dir in &dirs {
            findings += check_skill_dir(dir, &options)
                .iter()
                .map(|r| r.diagnostics.len())
                .sum::<usize>();
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{passes} passes over {} skills: {findings} findings, {:.0} skills/s",
        dirs.len(),
        (passes * dirs.len()) as f64 / seconds
    );
}

/// `SKILLWATCH_BENCH_KEYSTROKES=N`: N keystroke checks, for profilers.
fn plain_keystrokes(n: usize) {
    let (dir, big) = keystroke_document();
    let options = CheckOptions::default();
    let path = dir.join(SKILL_FILE);
    let started = std::time::Instant::now();
    let mut findings = 0;
    for _ in 0..n {
        let doc = SkillDocument::parse(black_box(big.clone()));
        findings += check_skill_document(&dir, &path, &doc, &options).len();
    }
    println!(
        "{n} keystrokes: {findings} findings, {:.3} ms each",
        started.elapsed().as_secs_f64() * 1e3 / n as f64
    );
}

criterion_group!(benches, whole_corpus, keystroke);

fn main() {
    if let Some(passes) = std::env::var("SKILLWATCH_BENCH_PASSES")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        return plain_passes(passes);
    }
    if let Some(n) = std::env::var("SKILLWATCH_BENCH_KEYSTROKES")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        return plain_keystrokes(n);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
