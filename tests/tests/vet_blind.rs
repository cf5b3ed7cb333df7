//! The blind-set harness of issue 34: a labeled set of attacks and benign-but-scary skills,
//! laid out as `<set>/attacks/<class>/<id>/...` and `<set>/benign/<kind>/<id>/...` with
//! `<set>/labels.json` (id, path, label, class, summary, inspired_by) and
//! `<set>/MANIFEST.sha256` (`sha256sum` lines of every other file). The manifest is verified
//! (a set changed after it was frozen is no longer the set that was measured), `vet` runs on
//! every skill, and per-class recall (`malicious` or `suspicious`) and per-kind false alarms
//! (`malicious`) are printed with Wilson 95% intervals.
//!
//! Sets: every `tests/fixtures/vet-dev*` (written by the rules' author or for tuning: their
//! figures measure memory) and `tests/fixtures/vet-blind*` (frozen, written by others who had
//! not read the rules); any other folder named by `SKILLWATCH_VET_SET`. A set with floors in
//! tests/fixtures/vet-floors.json must hold them (the figures last measured: a lost detection or
//! a new false alarm fails) and prints how far it is from issue 34's target (at least 90% of
//! attacks flagged, every class at least 80%, at most 2% of benign skills `malicious`); a set
//! without floors must meet that target.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skillwatch_tests::*;

/// Wilson score interval at 95%, in percent (core's, as every interval skillwatch prints).
fn wilson(k: usize, n: usize) -> (f64, f64) {
    match skillwatch_core::scoring::stats::wilson_interval(k as u64, n as u64, 0.95) {
        Ok(i) => (100.0 * i.low, 100.0 * i.high),
        Err(_) => (0.0, 100.0), // no skill in the class: nothing is known
    }
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
        // `find . | xargs sha256sum` writes `./a/b`, `sha256sum a/b` writes `a/b`: one set each
        .filter_map(|l| {
            l.split_once("  ")
                .map(|(_, p)| p.trim_start_matches("./").to_string())
        })
        .collect();
    let unlisted: Vec<String> = walkdir::WalkDir::new(set)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(set).unwrap();
            rel.to_string_lossy().replace('\\', "/")
        })
        .filter(|rel| rel != "MANIFEST.sha256" && rel != "FROZEN" && !listed.contains(rel))
        .collect();
    assert!(
        unlisted.is_empty(),
        "files not in the manifest: {unlisted:?}"
    );
    verify_frozen(set, &manifest);
}

/// `FROZEN`, when present, names the manifest's own sha256: the manifest is the one frozen.
fn verify_frozen(set: &Path, manifest: &str) {
    let Ok(frozen) = std::fs::read_to_string(set.join("FROZEN")) else {
        return;
    };
    use sha2::Digest;
    let digest = format!("{:x}", sha2::Sha256::digest(manifest.as_bytes()));
    assert!(
        frozen.contains(&digest),
        "{}: FROZEN does not name the manifest's sha256 {digest}:\n{frozen}",
        set.display()
    );
}

#[derive(Default)]
struct Tally {
    hits: usize,
    total: usize,
    misses: Vec<String>,
}

/// One set's figures: attacks flagged per class, benign called `malicious` per kind.
struct Figures {
    attacks: BTreeMap<String, Tally>,
    benign: BTreeMap<String, Tally>,
}

/// Run `vet` on every skill of one set and tally it against the labels.
fn measure(set: &Path) -> Figures {
    verify_manifest(set);
    let labels: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(set.join("labels.json")).unwrap())
            .expect("labels.json is a JSON array");
    let paths: Vec<String> = labels
        .iter()
        .map(|l| set.join(l["path"].as_str().unwrap()).display().to_string())
        .collect();
    let verdicts = vet_verdicts(&paths);
    let mut figures = Figures {
        attacks: BTreeMap::new(),
        benign: BTreeMap::new(),
    };
    for (label, path) in labels.iter().zip(&paths) {
        let verdict = verdicts
            .get(Path::new(path))
            .unwrap_or_else(|| panic!("no verdict for {path}"));
        let class = label["class"].as_str().unwrap().to_string();
        let id = label["id"].as_str().unwrap();
        let (tally, hit) = match label["label"].as_str().unwrap() {
            "attack" => (
                figures.attacks.entry(class).or_default(),
                verdict != "clean",
            ),
            "benign" => (
                figures.benign.entry(class).or_default(),
                verdict == "malicious",
            ),
            other => panic!("label {other:?} of {id}"),
        };
        tally.total += 1;
        tally.hits += usize::from(hit);
        if hit != (label["label"] == "attack") {
            tally.misses.push(format!("{id} ({verdict})"));
        }
    }
    figures
}

fn vet_verdicts(paths: &[String]) -> BTreeMap<PathBuf, String> {
    let mut args = vec!["vet", "--json"];
    args.extend(paths.iter().map(String::as_str));
    let out = skillwatch(&args, None);
    let report: Value = serde_json::from_str(&stdout(&out)).expect("vet --json");
    report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let path = PathBuf::from(s["path"].as_str().unwrap());
            (path, s["verdict"].as_str().unwrap().to_string())
        })
        .collect()
}

fn sum(tallies: &BTreeMap<String, Tally>) -> Tally {
    let mut all = Tally::default();
    for t in tallies.values() {
        all.hits += t.hits;
        all.total += t.total;
    }
    all
}

/// The figures as printed, and where they fall short of issue 34's target (at least 90% of
/// attacks flagged, every class at least 80%, at most 2% of benign skills `malicious`).
fn report_lines(set: &Path, f: &Figures) -> (String, Vec<String>) {
    let mut text = format!("vet on {}\n", set.display());
    let mut short = Vec::new();
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
    for (class, t) in &f.attacks {
        text.push_str(&line(class, t));
        if t.hits * 5 < t.total * 4 {
            short.push(format!("class {class}: {}/{} < 80%", t.hits, t.total));
        }
    }
    let all = sum(&f.attacks);
    text.push_str(&line("ALL ATTACKS", &all));
    if all.hits * 10 < all.total * 9 {
        short.push(format!("attacks: {}/{} < 90%", all.hits, all.total));
    }
    text.push_str("benign called malicious, per kind:\n");
    for (kind, t) in &f.benign {
        text.push_str(&line(kind, t));
    }
    let all = sum(&f.benign);
    text.push_str(&line("ALL BENIGN", &all));
    if all.hits * 50 > all.total {
        short.push(format!("benign malicious: {}/{} > 2%", all.hits, all.total));
    }
    (text, short)
}

/// Floors recorded for a set in tests/fixtures/vet-floors.json: the figures last measured, so
/// that a change which loses a detection (or adds a false alarm) fails even while the set is
/// still short of the target. A set without floors must meet the target itself.
#[derive(serde::Deserialize)]
struct Floors {
    /// Per attack class, the fewest skills that must be flagged.
    attacks_min: BTreeMap<String, usize>,
    /// The most benign skills that may be called `malicious`.
    benign_malicious_max: usize,
}

fn floors(set: &Path) -> Option<Floors> {
    let file = workspace_root().join("tests/fixtures/vet-floors.json");
    let mut all: BTreeMap<String, Floors> =
        serde_json::from_str(&std::fs::read_to_string(file).ok()?).expect("vet-floors.json");
    all.remove(set.file_name()?.to_str()?)
}

fn below_floors(f: &Figures, floors: &Floors) -> Vec<String> {
    let mut fails: Vec<String> = floors
        .attacks_min
        .iter()
        .filter_map(|(class, &min)| {
            let hits = f.attacks.get(class).map_or(0, |t| t.hits);
            (hits < min).then(|| format!("class {class}: {hits} flagged < floor {min}"))
        })
        .collect();
    let benign = sum(&f.benign).hits;
    if benign > floors.benign_malicious_max {
        let max = floors.benign_malicious_max;
        fails.push(format!("benign malicious: {benign} > floor {max}"));
    }
    fails
}

/// The sets to measure: every labeled set in tests/fixtures (`vet-dev*`, written by rule
/// authors or for tuning; `vet-blind*`, frozen and written by others), and one named by
/// `SKILLWATCH_VET_SET`.
fn sets() -> Vec<PathBuf> {
    let fixtures = workspace_root().join("tests/fixtures");
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .expect("tests/fixtures")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            (name.starts_with("vet-dev") || name.starts_with("vet-blind"))
                && p.join("labels.json").exists()
        })
        .collect();
    sets.sort();
    assert!(
        sets.iter().any(|s| s.ends_with("vet-dev")),
        "tests/fixtures/vet-dev is missing"
    );
    if let Some(extra) = std::env::var_os("SKILLWATCH_VET_SET") {
        sets.push(PathBuf::from(extra));
    }
    sets
}

#[test]
fn vet_holds_its_floors_on_every_labeled_set() {
    let mut failed = Vec::new();
    for set in sets() {
        let figures = measure(&set);
        let (text, short) = report_lines(&set, &figures);
        println!("{text}");
        let fails = match floors(&set) {
            Some(floors) => {
                println!("  short of issue 34's target: {short:?}\n");
                below_floors(&figures, &floors)
            }
            None => short,
        };
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
