//! `skillwatch loads` on every pinned agent CLI (installed by scripts/test into
//! target/agent-clis), and the loader-profile table held to what the CLIs did:
//!
//! - what `loads` reports for each skill is what the request the CLI sent shows (checked here
//!   on the raw request, without `loads`' own reading of it);
//! - each CLI's measured behaviour is what its row of `skillwatch_core::loaders::PROFILES`
//!   predicts, so a version bump that changes a loader fails here, naming the difference.
//!
//! The probe: a folder of five small skills (a 1,100-character description, a repeated
//! `description` key, an unclosed quote, `Use when: ...` unquoted, no `name`) and a folder of
//! 40 skills with 846-character descriptions.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skillwatch_core::loaders::{DescriptionLimit, DuplicateKey, Listing, YamlRule, profile};
use skillwatch_tests::skillwatch_bin;
use skillwatch_tests::trial::{agent_cli, skip_agent_clis};

const LONG: usize = 1100;

fn skill(dir: &Path, name: &str, frontmatter: &str) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("SKILL.md"),
        format!("---\n{frontmatter}---\n# {name}\nDo it.\n"),
    )
    .unwrap();
    d
}

fn long_description() -> String {
    let text: String = (0..200).map(|i| format!("Long{i:04} ")).collect();
    text[..LONG].to_string()
}

fn bulk(i: usize) -> String {
    format!(
        "Bulk{i:02} {}",
        format!("word{i:02} ").repeat(120).trim_end()
    )
}

/// The small folder: (folder, its skills).
fn small(root: &Path) -> Vec<PathBuf> {
    let dir = root.join("small");
    vec![
        skill(
            &dir,
            "s-long",
            &format!("name: s-long\ndescription: {}\n", long_description()),
        ),
        skill(
            &dir,
            "s-dup",
            "name: s-dup\ndescription: first of dup\ndescription: second of dup\n",
        ),
        skill(
            &dir,
            "s-quote",
            "name: s-quote\ndescription: \"unclosed quote\n",
        ),
        skill(
            &dir,
            "s-colon",
            "name: s-colon\ndescription: Use when: the user asks\n",
        ),
        skill(&dir, "s-noname", "description: no name field here\n"),
    ]
}

fn many(root: &Path) -> Vec<PathBuf> {
    let dir = root.join("many");
    (0..40)
        .map(|i| {
            skill(
                &dir,
                &format!("b{i:02}"),
                &format!("name: b{i:02}\ndescription: {}\n", bulk(i)),
            )
        })
        .collect()
}

/// `skillwatch loads --json` on `skills`, with the captured requests kept in `requests`.
fn loads(skills: &[PathBuf], requests: &Path) -> Vec<Value> {
    let bin_dir = agent_cli("claude").parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(skillwatch_bin())
        .arg("loads")
        .args(skills)
        .args(["--json", "--keep-requests"])
        .arg(requests)
        .env("PATH", path)
        .output()
        .expect("run skillwatch loads");
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "loads --json: {e}\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    report.as_array().cloned().unwrap()
}

/// Every string of a request, joined: the text the model was given.
fn strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|i| strings(i, out)),
        Value::Object(m) => m.values().for_each(|i| strings(i, out)),
        _ => {}
    }
}

/// The reported outcome agrees with the raw request: a listed description is in it whole, a
/// cut one only up to the cut, a dropped or unparsed skill's description not at all.
fn agrees(harness: &str, row: &Value, request: &str, description: &str) {
    let outcome = row["outcome"].as_str().unwrap();
    let whole = request.contains(description);
    match outcome {
        "listed" => assert!(whole, "{harness}: {row}"),
        "description_cut" => {
            let kept = row["kept"].as_u64().unwrap() as usize;
            let head: String = description.chars().take(kept).collect();
            assert!(!whole && request.contains(&head), "{harness}: {row}");
        }
        "name_only" | "dropped" | "not_parsed" => {
            let head: String = description.chars().take(40).collect();
            assert!(
                !request.contains(&head),
                "{harness}: {row} but the request has {head:?}"
            );
        }
        _ => {}
    }
}

/// What the profile of `harness` predicts for the small folder's skills, by folder name.
fn predicted(harness: &str) -> Vec<(&'static str, String)> {
    let p = profile(harness).unwrap_or_else(|| panic!("{harness}: no loader profile"));
    let long = match p.description {
        DescriptionLimit::Whole { .. } => "listed".to_string(),
        DescriptionLimit::Cut { kept, ellipsis } if LONG > kept + ellipsis.chars().count() => {
            format!("description_cut {kept}")
        }
        DescriptionLimit::Cut { .. } => "listed".to_string(),
        DescriptionLimit::Dropped { over } if LONG > over => "dropped".to_string(),
        DescriptionLimit::Dropped { .. } => "listed".to_string(),
    };
    let dup = match p.duplicate_key {
        DuplicateKey::LastWins => "listed",
        DuplicateKey::Dropped => "not_parsed",
    };
    let colon = match p.yaml {
        YamlRule::Lenient => "listed",
        YamlRule::Strict => "not_parsed",
    };
    let noname = if p.needs_name { "dropped" } else { "listed" };
    vec![
        ("s-long", long),
        ("s-dup", dup.into()),
        ("s-colon", colon.into()),
        ("s-noname", noname.into()),
    ]
}

fn shown(row: &Value) -> String {
    match row["outcome"].as_str().unwrap() {
        "description_cut" => format!("description_cut {}", row["kept"]),
        other => other.to_string(),
    }
}

fn folder(row: &Value) -> String {
    Path::new(row["skill"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn loads_reports_what_each_cli_sent_and_each_cli_matches_its_profile() {
    if skip_agent_clis("loads_reports_what_each_cli_sent_and_each_cli_matches_its_profile") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let requests = tmp.path().join("requests");
    let small = small(tmp.path());
    let report = loads(&small, &requests.join("small"));
    let names: Vec<&str> = report
        .iter()
        .map(|h| h["harness"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "claude-code",
            "codex",
            "gemini-cli",
            "opencode",
            "copilot-cli"
        ],
        "every pinned CLI is measured"
    );
    let mut differences = Vec::new();
    for h in &report {
        let harness = h["harness"].as_str().unwrap();
        assert!(h["error"].is_null(), "{harness}: {}", h["error"]);
        let p = profile(harness).unwrap();
        if h["version"] != p.version {
            differences.push(format!(
                "{harness}: version {} measured, profile is of {}",
                h["version"], p.version
            ));
        }
        let raw = std::fs::read_to_string(requests.join("small").join(format!("{harness}.json")))
            .unwrap();
        let mut request = String::new();
        strings(&serde_json::from_str(&raw).unwrap(), &mut request);
        let rows = h["skills"].as_array().unwrap();
        for row in rows {
            let text =
                std::fs::read_to_string(Path::new(row["skill"].as_str().unwrap()).join("SKILL.md"))
                    .unwrap();
            let description = text
                .lines()
                .filter_map(|l| l.strip_prefix("description: "))
                .next_back()
                .unwrap()
                .trim_matches('"')
                .to_string();
            agrees(harness, row, &request, &description);
        }
        for (name, expected) in predicted(harness) {
            let row = rows.iter().find(|r| folder(r) == name).unwrap();
            if shown(row) != expected {
                differences.push(format!(
                    "{harness} {}: {name} measured {}, profile predicts {expected}",
                    h["version"],
                    shown(row)
                ));
            }
        }
    }

    let many = many(tmp.path());
    let report = loads(&many, &requests.join("many"));
    for h in &report {
        let harness = h["harness"].as_str().unwrap();
        let rows = h["skills"].as_array().unwrap();
        let listed = rows.iter().filter(|r| r["outcome"] == "listed").count();
        let cut: Vec<u64> = rows.iter().filter_map(|r| r["kept"].as_u64()).collect();
        let measured = match profile(harness).unwrap().listing {
            Listing::Whole => (listed == 40).then_some(()),
            Listing::NamesPastBudget {
                probe_with_description,
            } => {
                let names = rows.iter().filter(|r| r["outcome"] == "name_only").count();
                (listed == probe_with_description && names == 40 - listed).then_some(())
            }
            Listing::Shortened { probe_kept } => (cut.len() == 40
                && cut.iter().all(|k| k.abs_diff(probe_kept as u64) <= 4))
            .then_some(()),
        };
        if measured.is_none() {
            differences.push(format!(
                "{harness}: 40 skills: {listed} listed whole, cut to {cut:?}; profile says {:?}",
                profile(harness).unwrap().listing
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "measured behaviour differs from the loader profiles (re-measure and update PROFILES):\n{}",
        differences.join("\n")
    );
}
