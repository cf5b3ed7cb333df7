//! Prints every eval-file finding for the skills under a folder, and counts per rule:
//! `cargo run --release -p skillwatch-core --example eval_corpus_scan -- ../shared/corpus`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use skillwatch_core::checks::{CheckOptions, check_eval_file};
use skillwatch_core::evalspec::find_eval_files;
use skillwatch_core::skill::discover;
use skillwatch_core::text::LineIndex;

fn main() {
    let root = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "../shared/corpus".into()),
    );
    let started = Instant::now();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut files = 0;
    let mut slowest = Vec::new();
    for dir in discover(&root) {
        for file in find_eval_files(&dir) {
            files += 1;
            let one = Instant::now();
            let report = check_eval_file(&file.path, &dir, &CheckOptions::default());
            slowest.push((one.elapsed(), file.path.clone()));
            let text = report.text.unwrap_or_default();
            let index = LineIndex::new(&text);
            for d in report.diagnostics {
                *counts.entry(d.rule).or_default() += 1;
                let at = index.line_col(&text, d.span.start);
                println!(
                    "{}:{}:{}: {} {}: {}",
                    file.path.display(),
                    at.line,
                    at.column,
                    d.severity.as_str(),
                    d.rule,
                    d.message
                );
            }
        }
    }
    eprintln!("{files} eval files in {:?}", started.elapsed());
    phases(&root);
    slowest.sort();
    for (t, path) in slowest.iter().rev().take(5) {
        eprintln!("slowest: {t:?} {}", path.display());
    }
    for (rule, n) in counts {
        eprintln!("{rule}: {n}");
    }
}

/// Time of each phase over all files, to see where checking time goes.
fn phases(root: &std::path::Path) {
    use skillwatch_core::evalspec::{parse_suite, parse_tree, read_eval_text, schema};
    let files: Vec<_> = discover(root)
        .iter()
        .flat_map(|d| find_eval_files(d))
        .collect();
    let texts: Vec<_> = files
        .iter()
        .map(|f| (f.kind, read_eval_text(&f.path).unwrap()))
        .collect();
    let t = Instant::now();
    let trees: Vec<_> = texts
        .iter()
        .map(|(k, t)| parse_tree(*k, t).unwrap())
        .collect();
    eprintln!("parse trees: {:?}", t.elapsed());
    let t = Instant::now();
    for ((f, (_, text)), tree) in files.iter().zip(&texts).zip(&trees) {
        let dialect = skillwatch_core::evalspec::dialect::of_tree(f.kind, tree, &f.path).dialect;
        schema::validate(dialect, tree, text);
    }
    eprintln!("schema: {:?}", t.elapsed());
    let t = Instant::now();
    for (k, text) in &texts {
        let _ = parse_suite(*k, text, "f");
    }
    eprintln!("parse suites: {:?}", t.elapsed());
}
