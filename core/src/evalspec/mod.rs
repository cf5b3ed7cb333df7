//! Eval files -> one [`Suite`] of [`Case`]s, whatever format the author wrote.
//!
//! Skill authors already write evaluation cases in two formats: skill-validator's
//! `tests/eval.yaml` and the `evals/evals.json` of agentskills.io / Anthropic skill-creator /
//! NVIDIA ACES (in several shapes). skillwatch reads both as they are, so nobody rewrites
//! anything to adopt it: [`find_eval_files`] finds them, [`parse_suite`] reads one file's
//! text, [`load_suite`] reads every eval file of a skill. The JSON Schemas of both formats
//! live in [`schema`]; the diagnostics on these files are in `crate::checks::eval_files`.

mod discover;
mod eval_yaml;
mod evals_json;
mod fields;
pub mod json;
mod model;
mod regex_verdict;
pub mod schema;
mod triggers;

pub(crate) use discover::find_eval_files_in;
pub use discover::{AboveSkills, find_eval_files, skill_dir_for_eval_file};
pub use eval_yaml::{ASSERTION_TYPES, DEFAULT_TIMEOUT_SECS};
pub use evals_json::{TYPED_ASSERTIONS, files_source};
pub use model::{
    Activation, Assertion, Case, Constraints, Criterion, CriterionKind, FileContent, Format,
    Judged, Origin, Pattern, PatternError, Setup, SetupFile, Suite,
};
pub use triggers::{
    TRIGGER_SET_FILES, TriggerKind, TriggerQuery, load_trigger_queries, parse_trigger_set,
    trigger_queries,
};

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::skill::{LoadError, decode};
use crate::text::{LineIndex, Span};
use crate::yaml::{self, Node};

/// Eval files larger than this are refused unread: the largest real one is under 100 KB.
pub const MAX_EVAL_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The two eval file formats, told apart by file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    /// skill-validator's `eval.yaml`.
    EvalYaml,
    /// `evals.json` in any of its shapes.
    EvalsJson,
}

impl FileKind {
    /// The kind of an eval file by its name: `*.yaml`/`*.yml` or `*.json`.
    pub fn of_path(path: &Path) -> Option<FileKind> {
        match path.extension()?.to_str()? {
            "yaml" | "yml" => Some(FileKind::EvalYaml),
            "json" => Some(FileKind::EvalsJson),
            _ => None,
        }
    }

    /// The conventional file name, for messages.
    pub fn file_name(self) -> &'static str {
        match self {
            FileKind::EvalYaml => "eval.yaml",
            FileKind::EvalsJson => "evals.json",
        }
    }
}

/// An eval file found for a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalFile {
    /// The file on disk.
    pub path: PathBuf,
    /// Its format.
    pub kind: FileKind,
}

/// Why an eval file's text is not a suite.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    /// Syntax (the text is not YAML/JSON) or shape (it is, but not an eval file).
    pub kind: ParseErrorKind,
    /// Where (for a syntax error, the character the parser stopped at; empty at a line end
    /// or the end of the text).
    pub span: Span,
    /// What was expected and what was found.
    pub message: String,
}

/// The two ways a text fails to be a suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// Not well-formed YAML or JSON.
    Syntax,
    /// Well-formed, but a field is missing or of the wrong type.
    Shape,
}

impl ParseError {
    pub(crate) fn shape(span: Span, message: String) -> ParseError {
        ParseError {
            kind: ParseErrorKind::Shape,
            span,
            message,
        }
    }

    /// A syntax error in `text`, whose message names the open bracket it concerns.
    fn syntax(error: yaml::YamlError, text: &str) -> ParseError {
        ParseError {
            kind: ParseErrorKind::Syntax,
            span: error.span,
            message: error.describe(text),
        }
    }
}

/// Why [`load_suite`] could not produce a suite.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadSuiteError {
    /// The skill has no eval file in any of the places skillwatch looks.
    #[error(
        "no eval file for the skill in {dir}: expected tests/eval.yaml, evals/evals.json, or \
         tests/<plugin>/<skill>/eval.yaml in a plugin repository"
    )]
    NoEvalFiles {
        /// The skill folder.
        dir: PathBuf,
    },
    /// An eval file could not be read as text.
    #[error("{path}: {error}", path = path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: LoadError,
    },
    /// An eval file is not a valid suite.
    #[error("{path}:{line}:{column}: {error}", path = path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: u32,
        /// 1-based column of the error.
        column: u32,
        /// The error.
        error: ParseError,
    },
}

/// Parse the text of an eval file into its spanned tree (YAML or JSON by `kind`).
pub fn parse_tree(kind: FileKind, text: &str) -> Result<Node, ParseError> {
    match kind {
        FileKind::EvalYaml => yaml::parse(text, 0),
        FileKind::EvalsJson => json::parse(text),
    }
    .map_err(|error| ParseError::syntax(error, text))
}

/// Read one eval file's text into a suite. `file` is the file's path relative to the skill
/// folder (`tests/eval.yaml`), recorded in each case's origin.
pub fn parse_suite(kind: FileKind, text: &str, file: &str) -> Result<Suite, ParseError> {
    let tree = parse_tree(kind, text)?;
    suite_from_tree(kind, &tree, file)
}

/// Read an already parsed tree into a suite.
pub fn suite_from_tree(kind: FileKind, tree: &Node, file: &str) -> Result<Suite, ParseError> {
    match kind {
        FileKind::EvalYaml => eval_yaml::suite_from_tree(tree, file),
        FileKind::EvalsJson => evals_json::suite_from_tree(tree, file),
    }
}

/// The case nodes of an eval file's tree, for checks that must still run when another case
/// in the file is broken (a [`Suite`] exists only for a fully valid file).
pub(crate) struct CaseNodes<'a> {
    /// The file's format and shape.
    pub format: Format,
    /// evals.json `skill_name` (or `skill`), when written as a string.
    pub skill_name: Option<String>,
    /// Each case node with its JSON pointer.
    pub cases: Vec<(String, &'a Node)>,
}

/// Find the cases in a tree; `None` when the top level has no recognisable shape.
pub(crate) fn case_nodes(kind: FileKind, root: &Node) -> Option<CaseNodes<'_>> {
    match kind {
        FileKind::EvalYaml => {
            let items = root.get("scenarios")?.value.as_sequence()?;
            Some(CaseNodes {
                format: Format::EvalYaml,
                skill_name: None,
                cases: items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (format!("/scenarios/{i}"), n))
                    .collect(),
            })
        }
        FileKind::EvalsJson => {
            let shape = evals_json::shape_of(root).ok()?;
            let skill_name = ["skill_name", "skill"]
                .iter()
                .find_map(|k| root.get(k)?.value.as_str().map(str::to_string));
            Some(CaseNodes {
                format: shape.format,
                skill_name,
                cases: shape.cases,
            })
        }
    }
}

/// The activation a case node declares (as the readers interpret it); `None` when the
/// deciding fields are malformed.
pub(crate) fn activation_of(
    format: Format,
    node: &Node,
    skill_name: Option<&str>,
) -> Option<Activation> {
    if format != Format::EvalYaml {
        return evals_json::activation_of(node, format, skill_name);
    }
    match node.get("expect_activation").map(|e| &e.value) {
        None => Some(Activation::Expected {
            skill: None,
            acceptable: Vec::new(),
        }),
        Some(v) if v.is_null() => Some(Activation::Expected {
            skill: None,
            acceptable: Vec::new(),
        }),
        Some(v) => match v.as_scalar()?.resolve() {
            yaml::Resolved::Bool(true) => Some(Activation::Expected {
                skill: None,
                acceptable: Vec::new(),
            }),
            yaml::Resolved::Bool(false) => Some(Activation::MustNotTrigger),
            _ => None,
        },
    }
}

/// Every eval file of the skill in `skill_dir`, read into one suite: eval.yaml cases first,
/// then evals.json cases. Fails on the first file that cannot be read or parsed, naming the
/// file, line and column.
pub fn load_suite(skill_dir: &Path) -> Result<Suite, LoadSuiteError> {
    let files = find_eval_files(skill_dir);
    if files.is_empty() {
        return Err(LoadSuiteError::NoEvalFiles {
            dir: skill_dir.to_path_buf(),
        });
    }
    let mut suite = Suite {
        skill_name: None,
        cases: Vec::new(),
        triggers: Vec::new(),
    };
    for file in files {
        let text = read_eval_text(&file.path).map_err(|error| LoadSuiteError::Read {
            path: file.path.clone(),
            error,
        })?;
        let rel = relative_path(skill_dir, &file.path);
        let part = parse_suite(file.kind, &text, &rel).map_err(|error| {
            let at = LineIndex::new(&text).line_col(&text, error.span.start);
            LoadSuiteError::Parse {
                path: file.path.clone(),
                line: at.line,
                column: at.column,
                error,
            }
        })?;
        suite.skill_name = suite.skill_name.or(part.skill_name);
        suite.cases.extend(part.cases);
        suite.triggers.extend(part.triggers);
    }
    Ok(suite)
}

/// Read an eval file as text: bounded in size, refusing binary and invalid UTF-8 with the
/// offset of the first bad byte.
pub fn read_eval_text(path: &Path) -> Result<String, LoadError> {
    let file = File::open(path).map_err(|e| LoadError::Io(e.to_string()))?;
    let size = file
        .metadata()
        .map_err(|e| LoadError::Io(e.to_string()))?
        .len();
    if size > MAX_EVAL_FILE_BYTES {
        return Err(LoadError::TooLarge {
            size,
            limit: MAX_EVAL_FILE_BYTES,
        });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(MAX_EVAL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| LoadError::Io(e.to_string()))?;
    if bytes.len() as u64 > MAX_EVAL_FILE_BYTES {
        return Err(LoadError::TooLarge {
            size: bytes.len() as u64,
            limit: MAX_EVAL_FILE_BYTES,
        });
    }
    decode(bytes)
}

/// `path` relative to the folder `base`, `/`-separated, with `..` where it leaves `base`.
/// Lexical: both are made absolute against the current directory first, not canonicalised.
pub fn relative_path(base: &Path, path: &Path) -> String {
    let abs = |p: &Path| -> Vec<String> {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        let mut parts: Vec<String> = Vec::new();
        for c in p.components() {
            match c {
                Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                Component::ParentDir => {
                    parts.pop();
                }
                _ => {}
            }
        }
        parts
    };
    let (base, path) = (abs(base), abs(path));
    let common = base.iter().zip(&path).take_while(|(a, b)| a == b).count();
    let mut out: Vec<String> = vec!["..".to_string(); base.len() - common];
    out.extend(path[common..].iter().cloned());
    out.join("/")
}

/// A hash of everything a run of `case` depends on: [`Case::content_hash`] plus the bytes of
/// every `source` fixture and, with `copy_test_files`, of the files beside the eval file.
/// Editing a fixture then invalidates cached baseline trials, as it should. A missing file
/// contributes a marker, so its later appearance changes the hash too.
pub fn case_fingerprint(case: &Case, skill_dir: &Path) -> String {
    let mut parts = vec![case.content_hash()];
    for file in &case.setup.files {
        if let FileContent::Source { path } = &file.content {
            let bytes = std::fs::read(skill_dir.join(path));
            parts.push(match bytes {
                Ok(b) => crate::skill::hash_bytes(&b),
                Err(_) => format!("missing:{path}"),
            });
        }
    }
    if case.setup.copy_test_files {
        let eval_path = skill_dir.join(&case.origin.file);
        parts.push(discover::sibling_files_hash(&eval_path));
    }
    crate::skill::hash_bytes(parts.join("\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_walk_up_and_down() {
        assert_eq!(
            relative_path(
                Path::new("/r/plugins/p/skills/s"),
                Path::new("/r/tests/p/s/eval.yaml")
            ),
            "../../../../tests/p/s/eval.yaml"
        );
        assert_eq!(
            relative_path(Path::new("/r/s"), Path::new("/r/s/tests/eval.yaml")),
            "tests/eval.yaml"
        );
    }

    #[test]
    fn kinds_by_extension() {
        assert_eq!(
            FileKind::of_path(Path::new("a/eval.yaml")),
            Some(FileKind::EvalYaml)
        );
        assert_eq!(
            FileKind::of_path(Path::new("a/evals.json")),
            Some(FileKind::EvalsJson)
        );
        assert_eq!(FileKind::of_path(Path::new("a/SKILL.md")), None);
    }

    #[test]
    fn load_suite_reports_file_line_and_column() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path().join("s");
        std::fs::create_dir_all(skill.join("tests")).unwrap();
        std::fs::write(skill.join("SKILL.md"), "---\nname: s\n---\n").unwrap();
        assert!(matches!(
            load_suite(&skill),
            Err(LoadSuiteError::NoEvalFiles { .. })
        ));
        std::fs::write(
            skill.join("tests/eval.yaml"),
            "scenarios:\n  - name: a\n    prompt: [x\n",
        )
        .unwrap();
        let err = load_suite(&skill).unwrap_err().to_string();
        assert!(err.contains("eval.yaml:"), "{err}");
        std::fs::write(
            skill.join("tests/eval.yaml"),
            "scenarios:\n  - name: a\n    prompt: p\n",
        )
        .unwrap();
        std::fs::create_dir_all(skill.join("evals")).unwrap();
        std::fs::write(
            skill.join("evals/evals.json"),
            r#"{"skill_name": "s", "evals": [{"id": 1, "prompt": "q", "expected_output": "o"}]}"#,
        )
        .unwrap();
        let suite = load_suite(&skill).unwrap();
        assert_eq!(suite.cases.len(), 2);
        assert_eq!(suite.cases[0].origin.file, "tests/eval.yaml");
        assert_eq!(suite.cases[1].origin.file, "evals/evals.json");
        assert_eq!(suite.skill_name.as_deref(), Some("s"));
    }

    #[test]
    fn fingerprint_follows_fixture_content() {
        let tmp = tempfile::tempdir().unwrap();
        let skill = tmp.path();
        std::fs::create_dir_all(skill.join("tests")).unwrap();
        let yaml = "scenarios:\n  - name: a\n    prompt: p\n    setup:\n      copy_test_files: true\n      files:\n        - path: x\n          source: fx.txt\n";
        std::fs::write(skill.join("tests/eval.yaml"), yaml).unwrap();
        let suite = parse_suite(FileKind::EvalYaml, yaml, "tests/eval.yaml").unwrap();
        let case = &suite.cases[0];
        let missing = case_fingerprint(case, skill);
        std::fs::write(skill.join("fx.txt"), "1").unwrap();
        let one = case_fingerprint(case, skill);
        assert_ne!(missing, one);
        std::fs::write(skill.join("tests/data.txt"), "d").unwrap();
        let with_sibling = case_fingerprint(case, skill);
        assert_ne!(one, with_sibling);
        std::fs::write(skill.join("tests/eval.yaml"), format!("{yaml}# edit\n")).unwrap();
        assert_eq!(with_sibling, case_fingerprint(case, skill));
    }
}
