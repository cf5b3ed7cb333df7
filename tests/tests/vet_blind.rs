//! The blind-set harness of issue 34: a labeled set of attacks and benign-but-scary skills,
//! laid out as `<set>/attacks/<class>/<id>/...` and `<set>/benign/<kind>/<id>/...` with
//! `<set>/labels.json` (id, path, label, class, summary, inspired_by) and
//! `<set>/MANIFEST.sha256` (`sha256sum` lines of every other file). The manifest is verified
//! (a set changed after it was frozen is no longer the set that was measured), `vet` runs on
//! every skill, and per-class recall (`malicious` or `suspicious`) and per-kind false alarms
//! (`malicious`) are printed with Wilson 95% intervals.
//!
//! Sets: tests/fixtures/vet-dev (written by the rules' author: tuned on, its figures measure
//! memory) always; tests/fixtures/vet-blind (frozen, written by others) when present; any
//! other folder named by `SKILLWATCH_VET_SET`. The acceptance thresholds of issue 34 (at least
//! 90% of attacks flagged, every class at least 80%, at most 2% of benign skills `malicious`)
//! are asserted on each.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skillwatch_tests::*;

/// Wilson score interval at 95%, in percent.
fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 100.0);
    }
    let (k, n, z) = (k as f64, n as f64, 1.96_f64);
    let p = k / n;
    let den = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / den;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / den;
    (
        100.0 * (centre - half).max(0.0),
        100.0 * (centre + half).min(1.0),
    )
}

/// Verify `MANIFEST.sha256`: every line checks, and every file of the set is listed.
fn verify_manifest(set: &Path) {
    let out = Command::new("sha256sum")
        .args(["-c", "--quiet", "--strict", "MANIFEST.sha256"])
        .current_dir(set)
        .output()
        .expect("sha256sum runs");
    assert!(
        out.status.success(),
        "{}: manifest does not verify:\n{}{}",
        set.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest = std::fs::read_to_string(set.join("MANIFEST.sha256")).unwrap();
    let listed: BTreeSet<String> = manifest
        .lines()
        .filter_map(|l| l.split_once("  ").map(|(_, p)| p.to_string()))
        .collect();
    let unlisted: Vec<String> = walkdir::WalkDir::new(set)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(set).unwrap();
            rel.to_string_lossy().replace('\\', "/")
        })
        .filter(|rel| rel != "MANIFEST.sha256" && !listed.contains(rel))
        .collect();
    assert!(
        unlisted.is_empty(),
        "files not in the manifest: {unlisted:?}"
    );
}

#[derive(Default)]
struct Tally {
    hits: usize,
    total: usize,
    misses: Vec<String>,
}

/// Run the harness on one set; returns the lines printed and the failed thresholds.
fn measure(set: &Path) -> (String, Vec<String>) {
    verify_manifest(set);
    let labels: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(set.join("labels.json")).unwrap())
            .expect("labels.json is a JSON array");
    let paths: Vec<String> = labels
        .iter()
        .map(|l| set.join(l["path"].as_str().unwrap()).display().to_string())
        .collect();
    let mut args = vec!["vet", "--json"];
    args.extend(paths.iter().map(String::as_str));
    let out = skillwatch(&args, None);
    let report: Value = serde_json::from_str(&stdout(&out)).expect("vet --json");
    let verdicts: BTreeMap<PathBuf, String> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                PathBuf::from(s["path"].as_str().unwrap()),
                s["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut attacks: BTreeMap<String, Tally> = BTreeMap::new();
    let mut benign: BTreeMap<String, Tally> = BTreeMap::new();
    for (label, path) in labels.iter().zip(&paths) {
        let verdict = verdicts
            .get(Path::new(path))
            .unwrap_or_else(|| panic!("no verdict for {path}"));
        let class = label["class"].as_str().unwrap().to_string();
        let id = label["id"].as_str().unwrap();
        let (tally, hit) = match label["label"].as_str().unwrap() {
            "attack" => (attacks.entry(class).or_default(), verdict != "clean"),
            "benign" => (benign.entry(class).or_default(), verdict == "malicious"),
            other => panic!("label {other:?} of {id}"),
        };
        tally.total += 1;
        tally.hits += usize::from(hit);
        if hit != (label["label"] == "attack") {
            tally.misses.push(format!("{id} ({verdict})"));
        }
    }
    report_lines(set, &attacks, &benign)
}

fn report_lines(
    set: &Path,
    attacks: &BTreeMap<String, Tally>,
    benign: &BTreeMap<String, Tally>,
) -> (String, Vec<String>) {
    let mut text = format!("vet on {}\n", set.display());
    let mut failed = Vec::new();
    let line = |name: &str, t: &Tally| {
        let (lo, hi) = wilson(t.hits, t.total);
        let pct = 100.0 * t.hits as f64 / t.total.max(1) as f64;
        format!(
            "  {name:<28} {:>3}/{:<3} {pct:5.1}%  [{lo:4.1}, {hi:5.1}]  {}\n",
            t.hits,
            t.total,
            t.misses.join(", ")
        )
    };
    text.push_str("attacks flagged (malicious or suspicious), per class:\n");
    let mut all = Tally::default();
    for (class, t) in attacks {
        text.push_str(&line(class, t));
        all.hits += t.hits;
        all.total += t.total;
        if t.hits * 5 < t.total * 4 {
            failed.push(format!("class {class}: {}/{} < 80%", t.hits, t.total));
        }
    }
    text.push_str(&line("ALL ATTACKS", &all));
    if all.hits * 10 < all.total * 9 {
        failed.push(format!("attacks: {}/{} < 90%", all.hits, all.total));
    }
    text.push_str("benign called malicious, per kind:\n");
    let mut all = Tally::default();
    for (kind, t) in benign {
        text.push_str(&line(kind, t));
        all.hits += t.hits;
        all.total += t.total;
    }
    text.push_str(&line("ALL BENIGN", &all));
    if all.hits * 50 > all.total {
        failed.push(format!("benign malicious: {}/{} > 2%", all.hits, all.total));
    }
    (text, failed)
}

/// The sets to measure: the development set, the frozen blind set when present, and one
/// named by `SKILLWATCH_VET_SET`.
fn sets() -> Vec<PathBuf> {
    let fixtures = workspace_root().join("tests/fixtures");
    let mut sets = vec![fixtures.join("vet-dev")];
    let blind = fixtures.join("vet-blind");
    if blind.join("labels.json").exists() {
        sets.push(blind);
    } else {
        eprintln!(
            "vet_blind: tests/fixtures/vet-blind not present; measuring the development set only"
        );
    }
    if let Some(extra) = std::env::var_os("SKILLWATCH_VET_SET") {
        sets.push(PathBuf::from(extra));
    }
    sets
}

#[test]
fn vet_meets_the_thresholds_on_every_labeled_set() {
    let mut failed = Vec::new();
    for set in sets() {
        let (text, fails) = measure(&set);
        println!("{text}");
        failed.extend(fails.into_iter().map(|f| format!("{}: {f}", set.display())));
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn wilson_intervals_match_known_values() {
    let (lo, hi) = wilson(87, 177);
    assert!(
        (lo - 41.9).abs() < 0.1 && (hi - 56.5).abs() < 0.1,
        "{lo} {hi}"
    );
    let (lo, hi) = wilson(0, 165);
    assert!(lo == 0.0 && (hi - 2.27).abs() < 0.05, "{lo} {hi}");
}

#[test]
fn a_file_changed_after_freezing_fails_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path();
    std::fs::create_dir_all(set.join("attacks/x/a")).unwrap();
    std::fs::write(set.join("attacks/x/a/SKILL.md"), "one").unwrap();
    let out = Command::new("sha256sum")
        .arg("attacks/x/a/SKILL.md")
        .current_dir(set)
        .output()
        .unwrap();
    std::fs::write(set.join("MANIFEST.sha256"), out.stdout).unwrap();
    verify_manifest(set);
    std::fs::write(set.join("attacks/x/a/SKILL.md"), "two").unwrap();
    let changed = std::panic::catch_unwind(|| verify_manifest(set));
    assert!(changed.is_err(), "a changed file must fail the manifest");
    std::fs::write(set.join("attacks/x/a/SKILL.md"), "one").unwrap();
    std::fs::write(set.join("attacks/x/a/extra.py"), "x").unwrap();
    let added = std::panic::catch_unwind(|| verify_manifest(set));
    assert!(
        added.is_err(),
        "a file added after freezing must fail the manifest"
    );
}
