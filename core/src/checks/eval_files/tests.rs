//! A failing and a passing example for every SW4xx rule, with positions asserted as
//! line:col, and malformed input that must never panic.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::text::LineCol;

/// A skill `pdf-tools` (frontmatter name too) with a sibling skill `other-skill`, in a
/// `skills/` folder so the sibling counts as "the tree".
struct Fixture {
    _tmp: tempfile::TempDir,
    skill: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let skills = tmp.path().join("repo/skills");
        let skill = skills.join("pdf-tools");
        fs::create_dir_all(skill.join("tests")).unwrap();
        fs::create_dir_all(skill.join("evals")).unwrap();
        fs::write(
            skill.join(SKILL_FILE),
            "---\nname: pdf-tools\ndescription: d\n---\nBody\n",
        )
        .unwrap();
        fs::create_dir_all(skills.join("other-skill")).unwrap();
        fs::write(
            skills.join("other-skill").join(SKILL_FILE),
            "---\nname: other-skill\n---\n",
        )
        .unwrap();
        Fixture { _tmp: tmp, skill }
    }

    fn yaml_path(&self) -> PathBuf {
        self.skill.join("tests/eval.yaml")
    }

    fn json_path(&self) -> PathBuf {
        self.skill.join("evals/evals.json")
    }

    fn yaml(&self, text: &str) -> Vec<Diagnostic> {
        check_eval_text(
            &self.yaml_path(),
            text,
            &self.skill,
            &CheckOptions::default(),
        )
    }

    /// The findings on an evals.json, but SW415 (which evals.json dialect the file writes:
    /// on most files, and tested on its own in `dialects`).
    fn json(&self, text: &str) -> Vec<Diagnostic> {
        let mut d = self.json_all(text);
        d.retain(|d| d.rule != "SW415");
        d
    }

    fn json_all(&self, text: &str) -> Vec<Diagnostic> {
        check_eval_text(
            &self.json_path(),
            text,
            &self.skill,
            &CheckOptions::default(),
        )
    }
}

/// The 1-based line:col of every finding of `rule`.
fn at(text: &str, diagnostics: &[Diagnostic], rule: &str) -> Vec<(u32, u32)> {
    let index = LineIndex::new(text);
    diagnostics
        .iter()
        .filter(|d| d.rule == rule)
        .map(|d| {
            let LineCol { line, column } = index.line_col(text, d.span.start);
            (line, column)
        })
        .collect()
}

fn rules(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics.iter().map(|d| d.rule).collect()
}

const GOOD_YAML: &str = "\
scenarios:
  - name: merge
    prompt: Merge a.pdf and b.pdf into out.pdf
    assertions:
      - type: file_exists
        path: out.pdf
      - type: output_matches
        pattern: \"(?<=merged )\\\\d+ pages\"
    rubric:
      - The output file has both documents in order
    timeout: 60
  - name: not-a-pdf-task
    prompt: Write a haiku about autumn
    expect_activation: false
";

const GOOD_JSON: &str = r#"{
  "skill_name": "pdf-tools",
  "evals": [
    {"id": 1, "prompt": "Split report.pdf into pages", "expected_output": "One file per page",
     "assertions": ["Creates one file per page"], "expected_skill": "pdf-tools",
     "acceptable_skills": ["other-skill"]},
    {"id": 2, "prompt": "Write a haiku", "expected_output": "A haiku", "expected_skill": null}
  ]
}"#;

#[test]
fn good_files_have_no_findings() {
    let f = Fixture::new();
    assert_eq!(f.yaml(GOOD_YAML), vec![]);
    assert_eq!(f.json(GOOD_JSON), vec![]);
}

/// `check_skill_dir` hands over the text its folder walk already read; the report must be
/// the one reading the file again gives, NUL bytes and all.
#[test]
fn eval_text_from_the_folder_walk_matches_a_fresh_read() {
    let f = Fixture::new();
    let cases: [&[u8]; 3] = [
        GOOD_JSON.as_bytes(),
        b"{\"skill_name\": \"pdf-tools\", \"evals\": [\x00]}\n",
        b"{\"skill_name\": \"pdf-tools\", \"evals\": 3}\n",
    ];
    for bytes in cases {
        fs::write(f.json_path(), bytes).unwrap();
        let fresh = check_eval_file(&f.json_path(), &f.skill, &CheckOptions::default());
        let reports = crate::checks::check_skill_dir(&f.skill, &CheckOptions::default());
        let walked = reports
            .iter()
            .find(|r| r.path == f.json_path())
            .expect("evals.json checked");
        assert_eq!(walked.diagnostics, fresh.diagnostics);
        assert_eq!(walked.text, fresh.text);
    }
}

#[test]
fn sw400_unreadable_file() {
    let f = Fixture::new();
    fs::write(f.yaml_path(), b"scenarios:\n  - name: a\x00\n").unwrap();
    let report = check_eval_file(&f.yaml_path(), &f.skill, &CheckOptions::default());
    assert_eq!(rules(&report.diagnostics), ["SW400"]);
    let shown = "scenarios:\n  - name: a\u{0}\n";
    assert_eq!(at(shown, &report.diagnostics, "SW400"), [(2, 12)]);
    assert!(report.diagnostics[0].message.contains("NUL"));
    fs::write(f.yaml_path(), [b'a', 0xff, b'\n']).unwrap();
    let report = check_eval_file(&f.yaml_path(), &f.skill, &CheckOptions::default());
    assert_eq!(rules(&report.diagnostics), ["SW400"]);
    assert!(report.diagnostics[0].message.contains("UTF-8"));

    fs::write(f.yaml_path(), GOOD_YAML).unwrap();
    let report = check_eval_file(&f.yaml_path(), &f.skill, &CheckOptions::default());
    assert_eq!(report.diagnostics, vec![]);
    assert_eq!(report.text.as_deref(), Some(GOOD_YAML));
}

#[test]
fn sw401_syntax_errors_carry_the_parser_position() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    prompt: [x\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW401"]);
    assert!(
        d[0].message.starts_with("not valid YAML"),
        "{}",
        d[0].message
    );
    assert_eq!(at(text, &d, "SW401"), [(4, 1)]);

    let text = "{\n  \"skill_name\": \"pdf-tools\",\n  \"evals\": [,]\n}";
    let d = f.json(text);
    assert_eq!(rules(&d), ["SW401"]);
    assert!(
        d[0].message.contains("expected a JSON value"),
        "{}",
        d[0].message
    );
    assert_eq!(at(text, &d, "SW401"), [(3, 13)]);
}

#[test]
fn sw401_a_colon_in_a_plain_prompt_is_quoted_and_the_file_parses() {
    let f = Fixture::new();
    let cases = [
        (
            "prompt: Merge a.pdf and b.pdf into out.pdf",
            "prompt: Merge: a.pdf and b.pdf",
        ),
        ("  - name: merge\n", "  - name: merge: the two PDFs\n"),
    ];
    for (from, to) in cases {
        let text = GOOD_YAML.replacen(from, to, 1);
        let d = f.yaml(&text);
        assert_eq!(rules(&d), ["SW401"], "{to}");
        assert!(
            d[0].message.ends_with("nested mapping: quote it"),
            "{}",
            d[0].message
        );
        let repaired = d[0].fix.as_ref().expect("a fix").apply(&text).unwrap();
        assert!(f.yaml(&repaired).is_empty(), "{repaired}");
    }
    // JSON has no such repair.
    let d = f.json(&GOOD_JSON.replacen("\"skill_name\"", "skill_name", 1));
    assert!(d[0].fix.is_none());
}

#[test]
fn sw402_schema_errors_at_the_field() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    timeout: 10\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW402"]);
    assert!(
        d[0].message.contains("expected field `prompt`"),
        "{}",
        d[0].message
    );
    assert_eq!(at(text, &d, "SW402"), [(2, 5)]);

    let text = "scenarios:\n  - name: a\n    prompt: p\n    max_turns: many\n";
    let d = f.yaml(text);
    assert_eq!(at(text, &d, "SW402"), [(4, 16)]);
    assert!(
        d[0].message.contains("found string `many`"),
        "{}",
        d[0].message
    );

    let text = "{\"skill_name\": \"pdf-tools\", \"evals\": [{\"id\": 1, \"prompt\": \"p\"}]}";
    let d = f.json(text);
    assert_eq!(rules(&d), ["SW402"]);
    assert_eq!(at(text, &d, "SW402"), [(1, 39)]);
    assert_eq!(f.yaml(GOOD_YAML), vec![]);
}

#[test]
fn sw403_unknown_field_with_rename_fix() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    prompt: p\n    rubrik:\n      - ok\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW403"]);
    assert_eq!(d[0].severity, Severity::Warning);
    assert_eq!(at(text, &d, "SW403"), [(4, 5)]);
    let fix = d[0].fix.as_ref().unwrap();
    assert_eq!(fix.edits[0].replacement, "rubric");

    let text = "[{\"id\": \"a\", \"question\": \"q\", \"expected_skil\": null}]";
    let d = f.json(text);
    let unknown: Vec<_> = d.iter().filter(|d| d.rule == "SW403").collect();
    assert_eq!(unknown.len(), 1);
    assert_eq!(at(text, &d, "SW403"), [(1, 31)]);
    assert_eq!(
        unknown[0].fix.as_ref().unwrap().edits[0].replacement,
        "\"expected_skill\""
    );
    assert!(at(GOOD_YAML, &f.yaml(GOOD_YAML), "SW403").is_empty());
}

#[test]
fn sw402_a_misspelt_assertion_type_names_the_type_it_is_a_typo_of() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    prompt: p\n    assertions:\n      - { type: output_contian, value: x }\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW402"]);
    assert_eq!(at(text, &d, "SW402"), [(5, 17)]);
    assert!(
        d[0].message
            .contains("found string `output_contian` (did you mean `output_contains`?)"),
        "{}",
        d[0].message
    );
    let fix = d[0].fix.as_ref().unwrap();
    assert_eq!(fix.title, "Replace with `output_contains`");
    assert_eq!(fix.edits[0].replacement, "output_contains");
    // a value close to no type: the list, and no fix
    let text = text.replace("output_contian", "banana");
    let d = f.yaml(&text);
    assert!(
        d[0].fix.is_none() && d[0].message.contains("expected one of"),
        "{}",
        d[0].message
    );
}

#[test]
fn sw404_invalid_regex() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    prompt: p\n    assertions:\n      - type: output_not_matches\n        pattern: \"fail(ed\"\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW404"]);
    assert!(d[0].message.contains("fail(ed"), "{}", d[0].message);
    assert_eq!(at(text, &d, "SW404"), [(6, 18)]);

    let text = r#"{"skill_name": "pdf-tools", "evals": [{"id": 1, "prompt": "p", "expected_output": "o",
  "assertions": [{"text": "no key", "type": "not_contains_pattern", "pattern": "sk-[a-z"}]}]}"#;
    let d = f.json(text);
    assert_eq!(rules(&d), ["SW404"]);
    assert_eq!(at(text, &d, "SW404"), [(2, 80)]);
    // Look-behind is fine (skill-validator's engines accept it).
    assert!(at(GOOD_YAML, &f.yaml(GOOD_YAML), "SW404").is_empty());
}

#[test]
fn sw405_missing_sources() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    prompt: p\n    setup:\n      files:\n        - path: in.csv\n          source: fixtures/in.csv\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW405"]);
    assert_eq!(at(text, &d, "SW405"), [(7, 19)]);
    fs::create_dir_all(f.skill.join("fixtures")).unwrap();
    fs::write(f.skill.join("fixtures/in.csv"), "a,b\n").unwrap();
    assert_eq!(f.yaml(text), vec![]);

    let text = r#"[{"id": "a", "question": "q", "expected_skill": "pdf-tools",
  "files": ["files/x.pdf", "evals/files/y.pdf"]}]"#;
    let d = f.json(text);
    assert_eq!(at(text, &d, "SW405"), [(2, 13), (2, 28)]);
    fs::create_dir_all(f.skill.join("evals/files")).unwrap();
    fs::write(f.skill.join("evals/files/x.pdf"), "%PDF").unwrap();
    fs::write(f.skill.join("evals/files/y.pdf"), "%PDF").unwrap();
    assert!(at(text, &f.json(text), "SW405").is_empty());
}

#[test]
fn sw406_duplicate_names_and_ids() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    prompt: p\n  - name: a\n    prompt: q\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW406"]);
    assert!(
        d[0].message.contains("first used on line 2"),
        "{}",
        d[0].message
    );
    assert_eq!(at(text, &d, "SW406"), [(4, 11)]);

    let text = r#"{"skill_name": "pdf-tools", "evals": [
  {"id": 1, "prompt": "p", "expected_output": "o"},
  {"id": "1", "prompt": "q", "expected_output": "o"}]}"#;
    let d = f.json(text);
    assert_eq!(rules(&d), ["SW406"]);
    assert_eq!(at(text, &d, "SW406"), [(3, 10)]);
    assert!(at(GOOD_JSON, &f.json(GOOD_JSON), "SW406").is_empty());
}

#[test]
fn sw407_prompt_names_the_skill() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    prompt: \"Use the PDF-Tools skill to merge a.pdf\"\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW407"]);
    assert_eq!(d[0].severity, Severity::Warning);
    assert_eq!(at(text, &d, "SW407"), [(3, 22)]);

    // A negative case may name the skill (a hard negative); a word inside another is no name.
    let text = "scenarios:\n  - name: a\n    prompt: merge with my-pdf-tools-fork\n  - name: b\n    prompt: not a pdf-tools job\n    expect_activation: false\n";
    assert!(at(text, &f.yaml(text), "SW407").is_empty());

    // One-word names count only next to "skill" or as $name / /name.
    let tmp = tempfile::tempdir().unwrap();
    let pdf = tmp.path().join("pdf");
    fs::create_dir_all(&pdf).unwrap();
    let check = |prompt: &str| {
        let text = format!("scenarios:\n  - name: a\n    prompt: {prompt}\n");
        let d = check_eval_text(
            &pdf.join("tests/eval.yaml"),
            &text,
            &pdf,
            &CheckOptions::default(),
        );
        rules(&d).contains(&"SW407")
    };
    assert!(!check("Convert this pdf to text"));
    assert!(check("Use the pdf skill on a.txt"));
    assert!(check("Run $pdf on a.txt"));
}

#[test]
fn sw408_negative_without_positive() {
    let f = Fixture::new();
    let text =
        "scenarios:\n  - name: haiku\n    prompt: Write a haiku\n    expect_activation: false\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW408"]);
    assert_eq!(at(text, &d, "SW408"), [(4, 24)]);
    assert!(at(GOOD_YAML, &f.yaml(GOOD_YAML), "SW408").is_empty());

    let text = r#"[{"id": "n", "question": "Write a haiku", "expected_skill": null}]"#;
    let d = f.json(text);
    assert_eq!(at(text, &d, "SW408"), [(1, 61)]);
    // A positive case in the skill's other eval file makes the suite whole.
    fs::write(f.yaml_path(), GOOD_YAML).unwrap();
    assert!(at(text, &f.json(text), "SW408").is_empty());
}

#[test]
fn sw409_timeouts_must_be_positive() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    prompt: p\n    timeout: 0\n  - name: b\n    prompt: p\n    timeout: -5\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW409", "SW409"]);
    assert_eq!(at(text, &d, "SW409"), [(4, 14), (7, 14)]);
    assert!(at(GOOD_YAML, &f.yaml(GOOD_YAML), "SW409").is_empty());
}

#[test]
fn sw410_empty_criteria() {
    let f = Fixture::new();
    let text =
        "scenarios:\n  - name: a\n    prompt: p\n    rubric:\n      - Good\n      - \"  \"\n";
    let d = f.yaml(text);
    assert_eq!(rules(&d), ["SW410"]);
    assert_eq!(at(text, &d, "SW410"), [(6, 9)]);

    let text = r#"[{"id": "a", "question": "q", "expected_skill": "pdf-tools",
  "expected_behavior": ["ok", ""]}]"#;
    let d = f.json(text);
    assert_eq!(at(text, &d, "SW410"), [(2, 31)]);
    assert!(at(GOOD_JSON, &f.json(GOOD_JSON), "SW410").is_empty());
}

#[test]
fn sw411_expected_skill_must_exist_in_the_tree() {
    let f = Fixture::new();
    let text = r#"[{"id": "a", "question": "q", "expected_skill": "pdf-tool"},
 {"id": "b", "question": "q", "expected_skill": "other-skill"},
 {"id": "c", "question": "q", "expected_skill": "pdf-tools"}]"#;
    let d = f.json(text);
    assert_eq!(at(text, &d, "SW411"), [(1, 49)]);
    assert!(
        d.iter()
            .find(|d| d.rule == "SW411")
            .unwrap()
            .message
            .contains("pdf-tool`")
    );
}

#[test]
fn sw412_legacy_shapes_are_info() {
    let f = Fixture::new();
    let text = r#"[{"id": "a", "question": "q", "expected_skill": "pdf-tools"}]"#;
    let d = f.json(text);
    assert_eq!(rules(&d), ["SW412"]);
    assert_eq!(d[0].severity, Severity::Info);
    assert_eq!(at(text, &d, "SW412"), [(1, 1)]);
    let single = r#"{"id": "a", "question": "q", "expected_skill": "pdf-tools"}"#;
    assert!(f.json(single)[0].message.contains("single case object"));
    assert!(at(GOOD_JSON, &f.json(GOOD_JSON), "SW412").is_empty());
}

#[test]
fn sw413_skill_name_must_match() {
    let f = Fixture::new();
    let text = r#"{"skill_name": "pdf-tool", "evals": [{"id": 1, "prompt": "p", "expected_output": "o"}]}"#;
    let d = f.json(text);
    assert_eq!(rules(&d), ["SW413"]);
    assert_eq!(at(text, &d, "SW413"), [(1, 16)]);
    assert_eq!(
        d[0].fix.as_ref().unwrap().edits[0].replacement,
        "\"pdf-tools\""
    );
    assert!(at(GOOD_JSON, &f.json(GOOD_JSON), "SW413").is_empty());
}

#[test]
fn sw414_no_cases() {
    let f = Fixture::new();
    let d = f.json("[]");
    assert!(rules(&d).contains(&"SW414"), "{d:?}");
    let text = "{\n  \"skill_name\": \"pdf-tools\",\n  \"evals\": []\n}";
    let d = f.json(text);
    assert_eq!(at(text, &d, "SW414"), [(3, 12)]);
    assert!(at(GOOD_JSON, &f.json(GOOD_JSON), "SW414").is_empty());
}

#[test]
fn overrides_silence_and_regrade() {
    let f = Fixture::new();
    let text = "scenarios:\n  - name: a\n    prompt: Use pdf-tools\n    rubric: [\"\"]\n";
    let options = CheckOptions {
        overrides: vec![
            ("SW407".into(), None),
            ("SW410".into(), Some(Severity::Error)),
        ],
        ..CheckOptions::default()
    };
    let d = check_eval_text(&f.yaml_path(), text, &f.skill, &options);
    assert_eq!(rules(&d), ["SW410"]);
    assert_eq!(d[0].severity, Severity::Error);
}

#[test]
fn check_skill_dir_reports_eval_files_after_skill_md() {
    let f = Fixture::new();
    fs::write(
        f.yaml_path(),
        "scenarios:\n  - name: a\n    prompt: p\n    timeout: 0\n",
    )
    .unwrap();
    fs::write(f.json_path(), GOOD_JSON).unwrap();
    let reports = crate::checks::check_skill_dir(&f.skill, &CheckOptions::default());
    let paths: Vec<_> = reports.iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        paths,
        [f.skill.join(SKILL_FILE), f.yaml_path(), f.json_path()]
    );
    assert_eq!(rules(&reports[1].diagnostics), ["SW409"]);
    assert_eq!(rules(&reports[2].diagnostics), ["SW415"]);
    let d = reports[2].dialect.as_ref().unwrap();
    assert_eq!(d.dialect, Dialect::EvalsJson);
}

#[test]
fn non_eval_paths_are_ignored() {
    let f = Fixture::new();
    let d = check_eval_text(
        Path::new("notes.txt"),
        "{",
        &f.skill,
        &CheckOptions::default(),
    );
    assert!(d.is_empty());
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    fn run(fixture: &Fixture, text: &str) {
        let _ = fixture.yaml(text);
        let _ = fixture.json(text);
        for kind in [FileKind::EvalYaml, FileKind::EvalsJson] {
            let _ = evalspec::parse_suite(kind, text, "f");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn arbitrary_text(text in "\\PC{0,200}") {
            run(&Fixture::new(), &text);
        }

        #[test]
        fn structural_soup(text in "[\\[\\]{}:,\"' \\n\\t#&*!|>a-z0-9-]{0,120}") {
            run(&Fixture::new(), &text);
        }

        #[test]
        fn mutated_valid_files(cut in 0usize..400, insert in "[\\[\\]{}:,\"\\n -]{0,3}") {
            let f = Fixture::new();
            for good in [GOOD_YAML, GOOD_JSON] {
                let at = crate::text::floor_char_boundary(good, cut.min(good.len()));
                let text = format!("{}{insert}{}", &good[..at], &good[at..]);
                run(&f, &text);
                run(&f, &good[..at]);
            }
        }
    }

    #[test]
    fn hostile_inputs() {
        let f = Fixture::new();
        let deep_yaml = format!("scenarios: {}", "[".repeat(50_000));
        let deep_json = "[".repeat(50_000);
        let bomb = {
            let mut s = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
            for i in 1..8 {
                let prev = format!("*a{}", i - 1);
                s.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
            }
            s
        };
        let huge = format!(
            "scenarios:\n{}",
            "  - name: n\n    prompt: p\n".repeat(5_000)
        );
        for text in [
            deep_yaml.as_str(),
            deep_json.as_str(),
            bomb.as_str(),
            huge.as_str(),
            "\u{feff}",
            "\0",
            "---\n---\n",
        ] {
            run(&f, text);
        }
        let d = f.yaml(&huge);
        assert!(rules(&d).iter().all(|r| *r == "SW406"), "{:?}", &d[..3]);
    }
}
