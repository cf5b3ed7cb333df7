//! `skillwatch check --format sarif` validates against the SARIF 2.1.0 JSON schema (OASIS
//! errata 01, vendored in tests/fixtures), over the corpus and over skills that exercise
//! fixes, empty spans, non-ASCII text and unreadable files.

use skillwatch_tests::*;

fn sarif_schema() -> jsonschema::Validator {
    let path = workspace_root().join("tests/fixtures/sarif-schema-2.1.0.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("vendored schema"))
            .expect("schema JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn assert_valid(log: &serde_json::Value) {
    let validator = sarif_schema();
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .take(20)
        .collect();
    assert!(
        errors.is_empty(),
        "SARIF schema errors:\n{}",
        errors.join("\n")
    );
}

#[test]
fn corpus_sarif_is_valid_and_matches_the_json_findings() {
    let corpus = corpus_dir();
    let corpus = corpus.to_str().unwrap();
    let sarif = skillwatch(&["check", corpus, "--format", "sarif"], None);
    let log: serde_json::Value = serde_json::from_slice(&sarif.stdout).expect("SARIF is JSON");
    assert_valid(&log);
    assert_eq!(log["version"], "2.1.0");
    let run = &log["runs"][0];
    let results = run["results"].as_array().unwrap();
    let json = json_report(&skillwatch(&["check", corpus, "--json"], None));
    assert_eq!(results.len(), diagnostics(&json).len());
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"]);
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().unwrap() >= 1);
    }
}

#[test]
fn fixes_unreadable_files_and_non_ascii_are_valid_sarif() {
    let tmp = tempfile::tempdir().unwrap();
    let mismatch = good_skill_md("fixable").replace("name: fixable", "name: other");
    write_skill(tmp.path(), "fixable", mismatch.as_bytes(), &[]);
    let unicode = good_skill_md("unicode").replace("Turn the tables", "Überführe die Tabellen 😀");
    write_skill(tmp.path(), "unicode", unicode.as_bytes(), &[]);
    write_skill(tmp.path(), "binary", b"\x00\x01\x02", &[]);
    write_skill(tmp.path(), "no frontmatter", b"# Title only\n", &[]);
    let out = skillwatch(&["check", ".", "--format", "sarif"], Some(tmp.path()));
    assert_eq!(code(&out), 1);
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    let fix = results
        .iter()
        .find(|r| r["ruleId"] == "SW108")
        .and_then(|r| r["fixes"].as_array())
        .expect("SW108 carries a fix");
    assert_eq!(
        fix[0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"],
        "fixable"
    );
    let uris: Vec<&str> = results
        .iter()
        .filter_map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str())
        .collect();
    assert!(uris.contains(&"no%20frontmatter/SKILL.md"), "{uris:?}");
    assert!(uris.contains(&"binary/SKILL.md"), "{uris:?}");
}

#[test]
fn findings_silenced_by_a_comment_are_suppressed_results() {
    let tmp = tempfile::tempdir().unwrap();
    let text = good_skill_md("inv").replace(
        "license: Apache-2.0",
        "license: Apache-2.0\nversion: 1.0  # skillwatch-ignore SW116: kept for our registry",
    );
    write_skill(tmp.path(), "inv", text.as_bytes(), &[]);
    let out = skillwatch(&["check", "inv", "--format", "sarif"], Some(tmp.path()));
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:#?}");
    assert_eq!(results[0]["ruleId"], "SW116");
    assert_eq!(
        results[0]["suppressions"],
        serde_json::json!([{"kind": "inSource", "status": "accepted",
                            "justification": "kept for our registry"}])
    );
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        5
    );
}

#[test]
fn the_schema_rejects_a_broken_log() {
    // Guards the guard: a validator that accepts anything would make the tests above vacuous.
    let broken = serde_json::json!({"version": "2.1.0", "runs": [{"results": []}]});
    assert!(!sarif_schema().is_valid(&broken));
}
