//! Every eval file in the shared corpus of real skills parses into a Suite and passes its
//! schema; a few files' case counts are checked against a count made by hand.

use std::path::{Path, PathBuf};

use skillwatch_core::evalspec::{self, FileKind, schema};
use skillwatch_core::skill::discover;
use skillwatch_tests::corpus_dir;

fn eval_files_under(root: &Path) -> Vec<(PathBuf, FileKind)> {
    let mut out = Vec::new();
    for entry in walk(root) {
        let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
        match name {
            "eval.yaml" => out.push((entry, FileKind::EvalYaml)),
            "evals.json" => out.push((entry, FileKind::EvalsJson)),
            _ => {}
        }
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn every_corpus_eval_file_parses_and_validates() {
    let files = eval_files_under(&corpus_dir());
    let yaml = files
        .iter()
        .filter(|(_, k)| *k == FileKind::EvalYaml)
        .count();
    let json = files.len() - yaml;
    assert!(
        (yaml, json) == (4, 19), // tests/fixtures/corpus/README.md
        "corpus has {yaml} eval.yaml and {json} evals.json"
    );
    let mut failures = Vec::new();
    let mut cases = 0;
    for (path, kind) in &files {
        let text = evalspec::read_eval_text(path).unwrap();
        match evalspec::parse_suite(*kind, &text, "x") {
            Ok(suite) => {
                // `[]` occurs in real evals.json files (a warning, SW414); eval.yaml needs one.
                if *kind == FileKind::EvalYaml {
                    assert!(!suite.cases.is_empty(), "{}: no cases", path.display());
                }
                cases += suite.cases.len();
            }
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
        let tree = evalspec::parse_tree(*kind, &text).unwrap();
        // Unknown fields are warnings (real files carry a few, e.g. `scope`); any other
        // schema error would mean the schema and the reader disagree about a real file.
        let dialect = evalspec::dialect::of_tree(*kind, &tree, path).dialect;
        for v in schema::validate(dialect, &tree, &text) {
            if !v.unknown_field {
                failures.push(format!("{}: schema: {}", path.display(), v.message));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} problems:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(cases, 92, "the cases of tests/fixtures/corpus");
}

fn load(rel: &str) -> evalspec::Suite {
    let dir = corpus_dir().join(rel);
    evalspec::load_suite(&dir).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Counts made by reading the files (`grep -c '^  - name:'`, counting `"id"` keys).
#[test]
fn hand_checked_case_counts_and_fields() {
    use evalspec::{Activation, Assertion, CriterionKind, FileContent, Format};

    // dotnet/skills: eval.yaml in the tests tree beside plugins/.
    let dump = load("dotnet__skills/plugins/dotnet-diag/skills/dump-collect");
    assert_eq!(dump.cases.len(), 9);
    let first = &dump.cases[0];
    assert_eq!(
        first.name,
        "Configure automatic crash dumps for CoreCLR app on Linux"
    );
    assert_eq!(
        first.origin.file,
        "../../../../tests/dotnet-diag/dump-collect/eval.yaml"
    );
    assert_eq!(first.assertions.len(), 4);
    assert_eq!(
        first.assertions[0],
        Assertion::OutputContains {
            value: "DOTNET_DbgEnableMiniDump".into()
        }
    );
    assert_eq!(first.judged.criteria.len(), 5);
    assert!(
        first
            .judged
            .criteria
            .iter()
            .all(|c| c.kind == CriterionKind::Rubric)
    );
    assert_eq!(first.timeout_secs.unwrap().get(), 120);

    let clr = load("dotnet__skills/plugins/dotnet-diag/skills/clr-activation-debugging");
    assert_eq!(clr.cases.len(), 7);
    assert!(matches!(
        &clr.cases[0].setup.files[0].content,
        FileContent::Source { path } if path.ends_with("fixtures/mt-fod-launched.txt")
    ));

    let binlog = load("dotnet__skills/plugins/dotnet-msbuild/skills/binlog-failure-analysis");
    assert_eq!(binlog.cases.len(), 1);
    assert!(binlog.cases[0].setup.copy_test_files);
    assert_eq!(binlog.cases[0].setup.commands.len(), 2);

    let sample = load("dotnet__skills/eng/skill-validator/tests/fixtures/sample-skill");
    assert_eq!(sample.cases.len(), 2);
    assert_eq!(sample.cases[0].timeout_secs.unwrap().get(), 30);
    assert_eq!(sample.cases[0].origin.file, "tests/eval.yaml");

    // NVIDIA/skills: every evals.json shape.
    let legacy = load("NVIDIA__skills/skills/aiq-deploy");
    assert_eq!(legacy.cases.len(), 2);
    assert_eq!(legacy.cases[0].origin.format, Format::EvalsJsonLegacyArray);

    let current = load("NVIDIA__skills/skills/deepstream-generate-pipeline");
    assert_eq!(current.cases.len(), 5);
    assert_eq!(current.cases[0].id, "1");
    assert_eq!(current.cases[0].name, "happy-path-video-inference-display");
    assert_eq!(current.cases[0].origin.format, Format::EvalsJson);
    assert!(current.cases.iter().any(|c| !c.assertions.is_empty()));

    let gradients = load("NVIDIA__skills/skills/warp-debug-gradients");
    assert_eq!(gradients.cases.len(), 6);
    let negatives = gradients
        .cases
        .iter()
        .filter(|c| c.activation == Activation::MustNotTrigger)
        .count();
    assert_eq!(
        negatives, 2,
        "should_trigger: false wins over expected_skill"
    );

    let cases_shape = load("NVIDIA__skills/skills/dynamo-router-starter");
    assert_eq!(cases_shape.cases.len(), 6);
    assert_eq!(
        cases_shape.skill_name.as_deref(),
        Some("dynamo-router-starter")
    );
    assert_eq!(cases_shape.cases[0].origin.format, Format::EvalsJsonCases);

    let single = load("NVIDIA__skills/skills/data-designer");
    assert_eq!(single.cases.len(), 1);
    assert_eq!(single.cases[0].id, "data-designer-001");
    assert_eq!(single.cases[0].origin.format, Format::EvalsJsonSingleCase);
}

#[test]
fn every_corpus_skill_with_eval_files_loads() {
    let mut loaded = 0;
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in discover(&corpus_dir()) {
        let files = evalspec::find_eval_files(&dir);
        if files.is_empty() {
            continue;
        }
        found.extend(files.into_iter().map(|f| f.path));
        evalspec::load_suite(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        loaded += 1;
    }
    // Discovery reaches every eval file in the corpus from its skill, the dotnet tests tree
    // included, and each eval file maps back to the skill that found it.
    found.sort();
    let all: Vec<PathBuf> = eval_files_under(&corpus_dir())
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(found, all);
    for path in &found {
        let skill = evalspec::skill_dir_for_eval_file(path)
            .unwrap_or_else(|| panic!("no skill for {}", path.display()));
        assert!(
            evalspec::find_eval_files(&skill)
                .iter()
                .any(|f| &f.path == path)
        );
    }
    // 19 evals.json skills and 4 dotnet skills with a tests-tree eval.yaml
    // (tests/fixtures/corpus/README.md)
    assert_eq!(loaded, 23);
}
