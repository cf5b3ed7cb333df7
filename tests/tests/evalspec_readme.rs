//! The eval file examples of docs/evals.md are real: each parses into a Suite with the
//! documented cases, and passes its schema.

use std::path::PathBuf;

use skillwatch_core::evalspec::{self, Activation, FileKind, schema};

fn readme_block(heading: &str, lang: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/evals.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let section = &readme[readme
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading}"))..];
    let start = section.find(&format!("```{lang}\n")).unwrap() + lang.len() + 4;
    let end = start + section[start..].find("```").unwrap();
    section[start..end].to_string()
}

fn check(kind: FileKind, text: &str) -> evalspec::Suite {
    let tree = evalspec::parse_tree(kind, text).unwrap();
    let dialect = evalspec::dialect::of_tree(kind, &tree, std::path::Path::new("example")).dialect;
    assert_eq!(schema::validate(dialect, &tree, text), vec![]);
    evalspec::parse_suite(kind, text, "example").unwrap()
}

#[test]
fn eval_yaml_example() {
    let suite = check(
        FileKind::EvalYaml,
        &readme_block("## tests/eval.yaml", "yaml"),
    );
    assert_eq!(suite.cases.len(), 2);
    assert_eq!(suite.cases[0].assertions.len(), 2);
    assert_eq!(suite.cases[0].setup.files.len(), 2);
    assert_eq!(suite.cases[1].activation, Activation::MustNotTrigger);
}

#[test]
fn evals_json_example() {
    let suite = check(
        FileKind::EvalsJson,
        &readme_block("## evals/evals.json", "json"),
    );
    assert_eq!(suite.cases.len(), 2);
    assert_eq!(suite.cases[0].assertions.len(), 1);
    assert_eq!(suite.cases[0].judged.criteria.len(), 1);
    assert_eq!(suite.cases[1].activation, Activation::MustNotTrigger);
}
