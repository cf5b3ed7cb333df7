//! `skillwatch schema`: the binary prints the schemas shipped in `schemas/`, byte for byte, so
//! `skillwatch schema eval-yaml > eval.schema.json` is what yaml-language-server users get;
//! and `check --json`'s real output, in every variant, follows its published schema.

use std::path::PathBuf;
use std::process::Command;

use skillwatch_tests::skillwatch_bin;

fn shipped(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../schemas")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn prints_each_schema_as_shipped() {
    for (arg, file) in [
        ("eval-yaml", "eval-yaml.schema.json"),
        ("evals-json", "evals-json.schema.json"),
        ("check-output", "check-output.schema.json"),
        ("index-check-output", "index-check-output.schema.json"),
        ("vet-card", "vet-card.schema.json"),
        (
            "agent-skills-discovery",
            "agent-skills-discovery-0.2.0.schema.json",
        ),
    ] {
        let out = Command::new(skillwatch_bin())
            .args(["schema", arg])
            .output()
            .unwrap();
        assert!(out.status.success(), "{arg}: {out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout, shipped(file), "{arg}");
        let schema: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
}

#[test]
fn unknown_format_is_a_usage_error() {
    let out = Command::new(skillwatch_bin())
        .args(["schema", "eval-toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("eval-yaml") && stderr.contains("evals-json"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

/// Real reports in each variant: findings with fixes, silenced findings with reasons, eval
/// file and script findings, a SKILL.md too large to read (positioned at 1:1, not left
/// without a position), and `--fix`'s list of fixes.
#[test]
fn check_json_follows_its_published_schema() {
    use skillwatch_tests::{assert_check_json_follows_schema, skillwatch, stdout, write_skill};
    let tmp = tempfile::tempdir().unwrap();
    let text = "---\nname: INV\ndescription: Use when testing. Extracts tables.\nversion: 1.0\n---\n\
                <!-- skillwatch-ignore SW307: our own site -->\nSee https://docs.acme.dev/x\n";
    let token = format!("ghp_{}", "Zq8Lr3Tv9Wm2Xp7Kd4Hs6Jn1Bc5Fg0Ya8Ue3Ri");
    write_skill(
        tmp.path(),
        "inv",
        text.as_bytes(),
        &[
            (
                "evals/evals.json",
                r#"{"skill_name": "other", "evals": []}"#,
            ),
            ("scripts/run.py", &format!("TOKEN = \"{token}\"\n")),
        ],
    );
    let huge = tmp.path().join("huge");
    std::fs::create_dir(&huge).unwrap();
    let file = std::fs::File::create(huge.join("SKILL.md")).unwrap();
    file.set_len(skillwatch_core::skill::MAX_SKILL_MD_BYTES + 1)
        .unwrap();

    let report: serde_json::Value = serde_json::from_str(&stdout(&skillwatch(
        &["check", ".", "--json"],
        Some(tmp.path()),
    )))
    .unwrap();
    assert_check_json_follows_schema(&report);
    let files = report["files"].as_array().unwrap();
    let huge_finding = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().contains("huge/"))
        .map(|f| &f["diagnostics"][0])
        .unwrap();
    assert_eq!(huge_finding["rule"], "SW100");
    assert_eq!(
        huge_finding["start"],
        serde_json::json!({"line": 1, "column": 1})
    );
    assert!(
        files.iter().any(|f| f.get("ignored").is_some()),
        "{report:#}"
    );

    let fixed: serde_json::Value = serde_json::from_str(&stdout(&skillwatch(
        &["check", "inv", "--json", "--fix"],
        Some(tmp.path()),
    )))
    .unwrap();
    assert!(!fixed["fixed"].as_array().unwrap().is_empty());
    assert_check_json_follows_schema(&fixed);
}
