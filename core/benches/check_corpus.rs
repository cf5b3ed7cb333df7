//! Speed of the static checks: the whole shared corpus (every skill folder, as `skillwatch
//! check` runs it: SKILL.md rules plus the credential scan of every file; on one thread and on
//! all cores as the CLI does), the floor under it (only listing and reading every file, on one
//! thread and on all cores), the SKILL.md rules alone on documents already in memory, and one
//! keystroke on a 2,000-line SKILL.md (the LSP's budget is 10 ms). Throughput is in skills per second; compare with
//! skills-ref's figure from `tests/scripts/skills_ref_validate.py --time 3 ../shared/corpus`.
//!
//! For instruction counts, `SKILLWATCH_BENCH_PASSES=N` skips criterion and runs N plain passes
//! of the batch (`check_skill_dirs_each`, as `skillwatch check` runs it) over the corpus
//! (default profile, one thread), so a profiler sees the check and nothing else:
//! `valgrind --tool=callgrind <bench binary>` with N=1 and N=3 gives the cost of one pass
//! (the difference over 2) apart from start-up and regex compilation.
//! `SKILLWATCH_BENCH_KEYSTROKES=N` likewise runs N keystroke checks (the 2,000-line SKILL.md).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group};
use skillwatch_core::checks::{
    CheckOptions, Profile, check_skill_dir, check_skill_dirs_each, check_skill_document,
};
use skillwatch_core::skill::{Discovered, SKILL_FILE, SkillDocument, discover, load_document};

/// The allocator the `skillwatch` binary uses, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

fn whole_corpus(c: &mut Criterion) {
    let (skills, dirs) = corpus_skills();
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
            ..CheckOptions::default()
        };
        group.bench_function(format!("check_skill_dirs/{label}/1_thread"), |b| {
            b.iter(|| black_box(findings_of_batch(&skills, &options, 1)))
        });
    }
    let options = CheckOptions::default();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    group.bench_function(format!("check_skill_dirs/default/{threads}_threads"), |b| {
        b.iter(|| black_box(findings_of_batch(&skills, &options, threads)))
    });
    // One folder at a time, as the daemon and the editor check: nothing shared between skills
    // but the editor's 10 s cache of SW411's tree names, which the iterations reuse as an
    // editing session does (a `skillwatch check` run walks once: `check_skill_dirs` above).
    group.bench_function("check_skill_dir/default", |b| {
        b.iter(|| {
            for dir in &dirs {
                black_box(check_skill_dir(dir, &options));
            }
        })
    });
    for (threads, label) in [
        (1, "1_thread".to_string()),
        (threads, format!("{threads}_threads")),
    ] {
        group.bench_function(format!("read_only_floor/{label}"), |b| {
            b.iter(|| black_box(floor_of_batch(&dirs, threads)))
        });
    }
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

/// The floor under any check that scans every file: list the skill's folder and read each
/// regular file, nothing else. Its skills/s bounds what `check_skill_dir` can reach.
fn read_every_file(dir: &Path) -> usize {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| std::fs::read(e.path()).map_or(0, |b| b.len()))
        .sum()
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

/// The corpus's skill folders, found as `skillwatch check ../shared/corpus` finds them before
/// it checks (outside the timed passes, as `skills_ref_validate.py` lists its folders before
/// timing), and as a list.
fn corpus_skills() -> (Discovered, Vec<PathBuf>) {
    let skills = Discovered::walk(&corpus());
    assert!(!skills.is_empty(), "no corpus at {}", corpus().display());
    let dirs = skills.dirs().cloned().collect();
    (skills, dirs)
}

/// One `skillwatch check` run's checking: the batch hands each folder's reports over in
/// folder order, and the caller (here: a count; in the CLI: the human printer) drops them.
fn findings_of_batch(skills: &Discovered, options: &CheckOptions, threads: usize) -> usize {
    let mut findings = 0;
    check_skill_dirs_each(skills, options, threads, |reports| {
        findings += reports.iter().map(|r| r.diagnostics.len()).sum::<usize>();
    });
    findings
}

/// `SKILLWATCH_BENCH_PASSES=N`: N passes of the batch over the corpus (one
/// `skillwatch check` run each), for profilers.
///
/// `SKILLWATCH_BENCH_THREADS=N` works on N threads; `SKILLWATCH_BENCH_FLOOR=1` only lists and
/// reads the files (see [`read_every_file`]).
fn plain_passes(passes: usize) {
    let (skills, dirs) = corpus_skills();
    let options = CheckOptions::default();
    let threads = env_number("SKILLWATCH_BENCH_THREADS").unwrap_or(1);
    let floor = env_number("SKILLWATCH_BENCH_FLOOR").is_some_and(|n| n > 0);
    let started = std::time::Instant::now();
    let mut findings = 0;
    for _ in 0..passes {
        if floor {
            findings += floor_of_batch(&dirs, threads);
        } else {
            findings += findings_of_batch(&skills, &options, threads);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let counted = if floor { "bytes read" } else { "findings" };
    println!(
        "{passes} passes over {} skills on {threads} thread(s): {findings} {counted}, {:.0} skills/s",
        dirs.len(),
        (passes * dirs.len()) as f64 / seconds
    );
}

/// The floor on `threads` threads, handing folders out one at a time as the batch does:
/// the bytes read.
fn floor_of_batch(dirs: &[PathBuf], threads: usize) -> usize {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut bytes = 0;
        while let Some(dir) = dirs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
            bytes += read_every_file(dir);
        }
        bytes
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        work()
            + others
                .into_iter()
                .map(|t| t.join().unwrap_or(0))
                .sum::<usize>()
    })
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

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}

criterion_group!(benches, whole_corpus, keystroke);

fn main() {
    if let Some(passes) = env_number("SKILLWATCH_BENCH_PASSES") {
        return plain_passes(passes);
    }
    if let Some(n) = env_number("SKILLWATCH_BENCH_KEYSTROKES") {
        return plain_keystrokes(n);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
