//! `skillwatch check` over the bundled corpus of real skills (tests/fixtures/corpus): every
//! SKILL.md parses, the run finishes, and every error it reports is a true specification violation, re-verified here
//! independently of the rule that raised it.

use std::path::Path;

use skillwatch_core::skill::{SkillDocument, load_document};
use skillwatch_tests::*;

fn corpus_report(profile: &str) -> serde_json::Value {
    let corpus = corpus_dir();
    let out = skillwatch(
        &[
            "check",
            corpus.to_str().unwrap(),
            "--json",
            "--profile",
            profile,
        ],
        None,
    );
    assert!(
        [0, 1].contains(&code(&out)),
        "exit {}: {}",
        code(&out),
        stderr(&out)
    );
    json_report(&out)
}

#[test]
fn every_corpus_skill_is_found_and_parses() {
    let report = corpus_report("default");
    let expected = count_skill_files(&corpus_dir());
    assert!(
        expected > 0,
        "the corpus is missing at {}",
        corpus_dir().display()
    );
    assert_eq!(report["summary"]["skills"].as_u64(), Some(expected as u64));
    assert_check_json_follows_schema(&report);
    for d in diagnostics(&report) {
        let rule = d["rule"].as_str().unwrap();
        assert!(
            !["SW100", "SW101", "SW102", "SW103", "SW104"].contains(&rule),
            "a corpus SKILL.md does not parse: {d}"
        );
    }
}

/// The frontmatter value of `key` in a corpus SKILL.md, parsed again by core.
fn field(doc: &SkillDocument, key: &str) -> Option<String> {
    doc.field_str(key).map(|(s, _)| s.to_string())
}

/// Re-check one error finding from first principles; returns why it is a violation.
fn verify_error(d: &serde_json::Value) -> String {
    let rule = d["rule"].as_str().unwrap();
    let path = Path::new(d["path"].as_str().unwrap());
    let doc = load_document(path).expect("the file loads");
    let folder = path
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    match rule {
        "SW106" | "SW107" | "SW108" => {
            let name = field(&doc, "name").unwrap_or_default();
            let valid = !name.is_empty()
                && name.chars().count() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !name.starts_with('-')
                && !name.ends_with('-')
                && !name.contains("--");
            assert!(
                !valid || name != folder,
                "{rule} but name `{name}` is valid and matches"
            );
            format!("name `{name}` in folder `{folder}`")
        }
        "SW111" => {
            let n = field(&doc, "description").unwrap().chars().count();
            assert!(n > 1024, "{n}");
            format!("description of {n} characters")
        }
        "SW112" => {
            let n = field(&doc, "compatibility")
                .unwrap_or_default()
                .chars()
                .count();
            assert!(n == 0 || n > 500, "{n}");
            format!("compatibility of {n} characters")
        }
        "SW405" => {
            // The corpus was copied keeping only files under 50 KB (from ../shared/corpus), so eval
            // fixtures can be missing: a real error (the case cannot be staged), checked here
            // against the file system rather than trusted.
            let message = d["message"].as_str().unwrap();
            let (_, target) = message
                .rsplit_once("so this is ")
                .expect("SW405 names the resolved path");
            assert!(!Path::new(target).exists(), "SW405 but {target} exists");
            format!("missing eval fixture {target}")
        }
        "SW117" => {
            let message = d["message"].as_str().unwrap();
            assert!(message.starts_with("duplicate field"), "{message}");
            message.to_string()
        }
        other => panic!(
            "unexpected error {other} on the corpus; review it and add an independent check here: {d}"
        ),
    }
}

#[test]
fn every_error_on_the_corpus_is_a_true_spec_violation() {
    let report = corpus_report("default");
    let errors: Vec<_> = diagnostics(&report)
        .into_iter()
        .filter(|d| d["severity"] == "error")
        .collect();
    for d in &errors {
        assert!(
            d["category"] == "spec" || d["rule"] == "SW405",
            "an error on the corpus that is neither a spec violation nor a missing eval \
             fixture: {d}"
        );
        let why = verify_error(d);
        eprintln!("{}: {} ({why})", d["path"], d["rule"]);
    }
    assert_eq!(
        report["summary"]["errors"].as_u64(),
        Some(errors.len() as u64)
    );
}

#[test]
fn human_output_over_the_corpus_points_into_real_lines() {
    let corpus = corpus_dir();
    let out = skillwatch(
        &["check", corpus.to_str().unwrap(), "--color", "never"],
        None,
    );
    let text = stdout(&out);
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| l.contains("]: ") && l.contains("SKILL.md:"))
    {
        let (location, _) = line.split_once(": ").unwrap();
        let mut parts = location.rsplitn(3, ':');
        let column: usize = parts.next().unwrap().parse().unwrap();
        let line_no: usize = parts.next().unwrap().parse().unwrap();
        let path = parts.next().unwrap();
        let content = std::fs::read_to_string(path).unwrap();
        let content = content.strip_prefix('\u{feff}').unwrap_or(&content);
        let source = content.lines().nth(line_no - 1).unwrap_or("");
        assert!(column <= source.chars().count() + 1, "{line}");
        checked += 1;
    }
    assert!(checked > 0);
}

/// `check --fix` over a copy of the corpus, under both profiles: every file it rewrote still
/// says all its author wrote (`checks::text_kept`, the rule bulk fixing obeys), and one
/// more pass finds nothing left to fix.
#[test]
fn fix_over_the_corpus_keeps_every_authored_text() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("corpus");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(corpus_dir())
        .arg(&copy)
        .status()
        .expect("cp");
    assert!(copied.success());
    for profile in ["default", "agentskills"] {
        let out = skillwatch(
            &[
                "check",
                copy.to_str().unwrap(),
                "--profile",
                profile,
                "--fix",
            ],
            None,
        );
        assert!(stderr(&out).contains("fixed "), "{}", stderr(&out));
    }
    let mut changed = 0;
    for entry in walkdir::WalkDir::new(&copy)
        .into_iter()
        .filter_map(Result::ok)
    {
        let Ok(after) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let original = corpus_dir().join(entry.path().strip_prefix(&copy).unwrap());
        let before = std::fs::read_to_string(&original).unwrap();
        if before == after {
            continue;
        }
        changed += 1;
        let shape = skillwatch_core::checks::Shape::of_path(entry.path());
        if let Err(lost) = skillwatch_core::checks::text_kept(shape, &before, &after) {
            panic!("{}: --fix lost {lost}", original.display());
        }
    }
    assert!(
        changed >= 10,
        "only {changed} files fixed: is the corpus there?"
    );
    let again = skillwatch(&["check", copy.to_str().unwrap(), "--diff"], None);
    assert_eq!(stdout(&again), "", "{}", stderr(&again));
}
