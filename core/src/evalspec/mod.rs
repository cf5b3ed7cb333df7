//! Eval files -> one [`Suite`] of [`Case`]s, whatever format the author wrote.
//!
//! Skill authors already write evaluation cases in other tools' formats: skill-validator's
//! `tests/eval.yaml`, Microsoft Vally's eval specs and experiments, microsoft/waza's and
//! alibaba/skill-up's `eval.yaml` with their task and case files, and the `evals/evals.json`
//! of agentskills.io / Anthropic skill-creator / NVIDIA SkillEvaluator (in several shapes,
//! as JSON, JSON Lines or YAML). skillwatch reads them as they are, so nobody rewrites
//! anything to adopt it: [`find_eval_files`] finds them, [`dialect::detect`] tells which
//! format a file is from its content, [`parse_suite`] reads one file's text, [`load_suite`]
//! reads every eval file of a skill. What a format has that the [`Suite`] cannot express is a
//! [`Note`] where it is written, never dropped silently. The JSON Schemas of the formats live
//! in [`schema`]; the diagnostics on these files are in `crate::checks::eval_files`.

pub mod dialect;
mod discover;
mod eval_yaml;
mod evals_json;
mod fields;
pub mod json;
mod mapping;
mod model;
mod regex_verdict;
pub mod schema;
mod skill_up;
mod triggers;
mod vally;
mod waza;

pub use dialect::{Detected, Dialect};
pub(crate) use discover::find_eval_files_in;
pub use discover::{AboveSkills, find_eval_files, skill_dir_for_eval_file};
pub use eval_yaml::{ASSERTION_TYPES, DEFAULT_TIMEOUT_SECS};
pub use evals_json::{TYPED_ASSERTIONS, files_source};
pub use model::{
    Activation, Assertion, Case, Constraints, Criterion, CriterionKind, FileContent, Format,
    Judged, Note, NoteLevel, Origin, Pattern, PatternError, PluginArm, Setup, SetupFile, Suite,
};
pub use triggers::{
    TRIGGER_SET_FILES, TriggerKind, TriggerQuery, load_trigger_queries, parse_trigger_set,
    trigger_queries,
};
pub use vally::{EVAL_PARENT, GRADER_TYPES as VALLY_GRADER_TYPES, staged_skill_dirs};

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::skill::{LoadError, decode};
use crate::text::{LineIndex, Span};
use crate::yaml::{self, Node};

/// Eval files larger than this are refused unread: the largest real one is under 100 KB.
pub const MAX_EVAL_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The syntax of an eval file, told apart by file name; which tool's format it is comes from
/// its content ([`dialect::detect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    /// YAML (`*.yaml`, `*.yml`): any eval.yaml, Vally, waza, skill-up, evals.yaml.
    EvalYaml,
    /// JSON (`*.json`): evals.json in any of its shapes.
    EvalsJson,
    /// JSON Lines (`*.jsonl`): SkillEvaluator's `evals.jsonl`, one case per line.
    JsonLines,
}

impl FileKind {
    /// The kind of an eval file by its name: `*.yaml`/`*.yml`, `*.json` or `*.jsonl`.
    pub fn of_path(path: &Path) -> Option<FileKind> {
        match path.extension()?.to_str()? {
            "yaml" | "yml" => Some(FileKind::EvalYaml),
            "json" => Some(FileKind::EvalsJson),
            "jsonl" => Some(FileKind::JsonLines),
            _ => None,
        }
    }

    /// The conventional file name, for messages.
    pub fn file_name(self) -> &'static str {
        match self {
            FileKind::EvalYaml => "eval.yaml",
            FileKind::EvalsJson => "evals.json",
            FileKind::JsonLines => "evals.jsonl",
        }
    }
}

/// An eval file found for a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalFile {
    /// The file on disk.
    pub path: PathBuf,
    /// Its syntax.
    pub kind: FileKind,
    /// What it gives the skill's suite.
    pub role: Role,
}

/// What an eval file gives a skill's suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// Cases (or, for waza and skill-up, the list of the files holding them).
    Suite,
    /// Cases, listed by a waza or skill-up eval.yaml (the file named).
    Member(PathBuf),
    /// A Vally experiment naming one of the skill's eval files: its arms, no cases.
    Experiment,
}

impl EvalFile {
    pub(crate) fn new(path: PathBuf, role: Role) -> EvalFile {
        EvalFile {
            kind: FileKind::of_path(&path).unwrap_or(FileKind::EvalYaml),
            path,
            role,
        }
    }
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
        FileKind::JsonLines => json::parse_lines(text),
    }
    .map_err(|error| ParseError::syntax(error, text))
}

/// Read one eval file's text into a suite, in the dialect its content shows. `file` is the
/// file's path relative to the skill folder (`tests/eval.yaml`), recorded in each case's
/// origin. A waza or skill-up eval.yaml gives its notes but no cases (they are in its member
/// files: [`load_suite`] reads those); a member file read alone is read with no eval.yaml
/// around it.
pub fn parse_suite(kind: FileKind, text: &str, file: &str) -> Result<Suite, ParseError> {
    let tree = parse_tree(kind, text)?;
    suite_from_tree(kind, &tree, file)
}

/// Read an already parsed tree into a suite (see [`parse_suite`]).
pub fn suite_from_tree(kind: FileKind, tree: &Node, file: &str) -> Result<Suite, ParseError> {
    let detected = dialect::of_tree(kind, tree, Path::new(file));
    suite_of_dialect(detected.dialect, tree, file)
}

/// Read a tree in a given dialect, a member file with no context.
pub(crate) fn suite_of_dialect(
    dialect: Dialect,
    tree: &Node,
    file: &str,
) -> Result<Suite, ParseError> {
    match dialect {
        Dialect::SkillValidator => eval_yaml::suite_from_tree(tree, file),
        Dialect::EvalsJson => evals_json::suite_from_tree(tree, file),
        Dialect::Vally => vally::suite_from_tree(tree, file),
        Dialect::VallyExperiment => vally::experiment_from_tree(tree, file, None),
        Dialect::Waza => waza::eval_from_tree(tree, file).map(|(s, _)| s),
        Dialect::SkillUp => skill_up::eval_from_tree(tree, file).map(|(s, _)| s),
        Dialect::WazaTask => waza::task_from_tree(tree, file, &waza::Context::default()),
        Dialect::SkillUpCase => skill_up::case_from_tree(tree, file, &skill_up::Context::default()),
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

/// Find the cases in a tree of `dialect`; `None` when the top level has no recognisable
/// shape, or the file holds no cases of its own (a waza or skill-up eval.yaml, an
/// experiment).
pub(crate) fn case_nodes(dialect: Dialect, root: &Node) -> Option<CaseNodes<'_>> {
    let listed = |key: &str, format: Format| -> Option<CaseNodes<'_>> {
        let items = root.get(key)?.value.as_sequence()?;
        Some(CaseNodes {
            format,
            skill_name: None,
            cases: items
                .iter()
                .enumerate()
                .map(|(i, n)| (format!("/{key}/{i}"), n))
                .collect(),
        })
    };
    let whole = |format: Format| {
        root.as_mapping().map(|_| CaseNodes {
            format,
            skill_name: None,
            cases: vec![(String::new(), root)],
        })
    };
    match dialect {
        Dialect::SkillValidator => listed("scenarios", Format::EvalYaml),
        Dialect::Vally => listed("stimuli", Format::Vally),
        Dialect::WazaTask => whole(Format::Waza),
        Dialect::SkillUpCase => whole(Format::SkillUp),
        Dialect::Waza | Dialect::SkillUp | Dialect::VallyExperiment => None,
        Dialect::EvalsJson => {
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
    let positive = Activation::Expected {
        skill: None,
        acceptable: Vec::new(),
    };
    let flag = |value: Option<&Node>, negative_when: bool| match value {
        None => Some(positive.clone()),
        Some(v) if v.is_null() => Some(positive.clone()),
        Some(v) => match v.as_scalar()?.resolve() {
            yaml::Resolved::Bool(b) if b == negative_when => Some(Activation::MustNotTrigger),
            yaml::Resolved::Bool(_) => Some(positive.clone()),
            _ => None,
        },
    };
    match format {
        Format::EvalYaml | Format::Vally => {
            flag(node.get("expect_activation").map(|e| &e.value), false)
        }
        Format::Waza => flag(
            node.get("expected")
                .and_then(|e| e.value.get("should_trigger"))
                .map(|e| &e.value),
            false,
        ),
        Format::SkillUp => Some(positive),
        _ => evals_json::activation_of(node, format, skill_name),
    }
}

/// Every eval file of the skill in `skill_dir`, read into one suite: eval.yaml-like files
/// first (a waza or skill-up eval.yaml with its member files), then the evals.json family,
/// then the notes of the Vally experiments naming them. Fails on the first file that cannot
/// be read or parsed, naming the file, line and column. Each note is placed (line, column).
pub fn load_suite(skill_dir: &Path) -> Result<Suite, LoadSuiteError> {
    let files = find_eval_files(skill_dir);
    if files.iter().all(|f| f.role == Role::Experiment) {
        return Err(LoadSuiteError::NoEvalFiles {
            dir: skill_dir.to_path_buf(),
        });
    }
    let skill = skill_dir
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string);
    let mut suite = Suite {
        plugin: None,
        skill_name: None,
        cases: Vec::new(),
        triggers: Vec::new(),
        notes: Vec::new(),
    };
    for file in &files {
        let loaded = Loaded::read(&file.path, skill_dir)?;
        let part = match (&file.role, loaded.dialect) {
            (Role::Experiment, _) => loaded.parse(|t, rel| {
                let mut part = vally::experiment_from_tree(t, rel, skill.as_deref())?;
                if let Some(first) = &suite.plugin {
                    vally::second_plugin_arm(&mut part, first);
                }
                Ok(part)
            })?,
            (_, Dialect::Waza) => {
                let (mut part, ctx) = loaded.parse(waza::eval_from_tree)?;
                for path in waza_tasks(&file.path, &ctx) {
                    let task = Loaded::read(&path, skill_dir)?;
                    part.absorb(task.parse(|t, rel| waza::task_from_tree(t, rel, &ctx))?);
                }
                part
            }
            (_, Dialect::SkillUp) => {
                let (mut part, ctx) = loaded.parse(skill_up::eval_from_tree)?;
                for path in skill_up_cases(&file.path, &ctx) {
                    let case = Loaded::read(&path, skill_dir)?;
                    part.absorb(case.parse(|t, rel| skill_up::case_from_tree(t, rel, &ctx))?);
                }
                part
            }
            (_, dialect) => loaded.parse(|t, rel| suite_of_dialect(dialect, t, rel))?,
        };
        suite.skill_name = suite.skill_name.or(part.skill_name.clone());
        suite.absorb(part);
    }
    Ok(suite)
}

impl Suite {
    /// Add another file's cases, triggers and notes.
    fn absorb(&mut self, other: Suite) {
        self.skill_name = self.skill_name.take().or(other.skill_name);
        self.cases.extend(other.cases);
        self.triggers.extend(other.triggers);
        self.notes.extend(other.notes);
        self.plugin = self.plugin.take().or(other.plugin);
    }
}

/// One eval file read and parsed, for [`load_suite`].
struct Loaded {
    path: PathBuf,
    text: String,
    rel: String,
    tree: Node,
    dialect: Dialect,
}

impl Loaded {
    fn read(path: &Path, skill_dir: &Path) -> Result<Loaded, LoadSuiteError> {
        let text = read_eval_text(path).map_err(|error| LoadSuiteError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        let kind = FileKind::of_path(path).unwrap_or(FileKind::EvalYaml);
        let tree = match parse_tree(kind, &text) {
            Ok(tree) => tree,
            Err(error) => return Err(parse_error(path, &text, error)),
        };
        let dialect = dialect::of_tree(kind, &tree, path).dialect;
        Ok(Loaded {
            rel: relative_path(skill_dir, path),
            path: path.to_path_buf(),
            text,
            tree,
            dialect,
        })
    }

    /// Read the tree with `reader`, placing the notes of what it gives (or the error).
    fn parse<T: Placed>(
        &self,
        reader: impl FnOnce(&Node, &str) -> Result<T, ParseError>,
    ) -> Result<T, LoadSuiteError> {
        let mut out = reader(&self.tree, &self.rel)
            .map_err(|error| parse_error(&self.path, &self.text, error))?;
        let lines = LineIndex::new(&self.text);
        for note in out.notes_mut() {
            let at = lines.line_col(&self.text, note.span.start);
            note.line = at.line;
            note.column = at.column;
        }
        Ok(out)
    }
}

/// A reader's result whose notes [`Loaded::parse`] places.
trait Placed {
    fn notes_mut(&mut self) -> &mut Vec<Note>;
}

impl Placed for Suite {
    fn notes_mut(&mut self) -> &mut Vec<Note> {
        &mut self.notes
    }
}

impl<C> Placed for (Suite, C) {
    fn notes_mut(&mut self) -> &mut Vec<Note> {
        &mut self.0.notes
    }
}

fn parse_error(path: &Path, text: &str, error: ParseError) -> LoadSuiteError {
    let at = LineIndex::new(text).line_col(text, error.span.start);
    LoadSuiteError::Parse {
        path: path.to_path_buf(),
        line: at.line,
        column: at.column,
        error,
    }
}

/// The task files of a waza eval.yaml: its `tasks` globs, relative to its folder, sorted and
/// without repeats.
fn waza_tasks(eval: &Path, ctx: &waza::Context) -> Vec<PathBuf> {
    let dir = eval.parent().unwrap_or(Path::new("."));
    let mut out: Vec<PathBuf> = ctx
        .tasks
        .iter()
        .flat_map(|g| crate::grading::glob::find(dir, g, &[]))
        .filter(|p| p != eval)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The case files of a skill-up eval.yaml: `cases.files`, relative to the skill folder (the
/// folder holding `evals/`), else every `cases/*.yaml` beside the eval.yaml.
fn skill_up_cases(eval: &Path, ctx: &skill_up::Context) -> Vec<PathBuf> {
    let dir = eval.parent().unwrap_or(Path::new("."));
    if ctx.cases.is_empty() {
        return crate::grading::glob::find(dir, "cases/*.yaml", &[]);
    }
    let root = skill_up_root(eval);
    ctx.cases.iter().map(|c| root.join(c)).collect()
}

/// The folder skill-up resolves paths against: the one holding the eval.yaml's `evals/`.
pub(crate) fn skill_up_root(eval: &Path) -> PathBuf {
    let dir = eval.parent().unwrap_or(Path::new("."));
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("evals" | "eval") => dir.parent().unwrap_or(dir).to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

/// The folder a skill-up case file's paths (its `repo_fixture`) resolve against: the one
/// holding the `evals/` folder the case is in, else the skill folder.
pub(crate) fn skill_up_root_of_case(case: &Path, skill_dir: &Path) -> PathBuf {
    case.ancestors()
        .skip(1)
        .find(|d| d.file_name().is_some_and(|n| n == "evals"))
        .and_then(Path::parent)
        .map_or_else(|| skill_dir.to_path_buf(), Path::to_path_buf)
}

/// The case nodes of an evals.json-family tree, with their pointers (for SW415).
pub(crate) fn evals_json_shape(root: &Node) -> Result<Vec<(String, &Node)>, ParseError> {
    evals_json::shape_of(root).map(|s| s.cases)
}

/// The member files of the eval file at `path` with text `text`: a waza eval.yaml's task
/// files, a skill-up eval.yaml's case files; empty for any other file or one that does not
/// read.
pub fn member_paths(path: &Path, text: &str) -> Vec<PathBuf> {
    let kind = FileKind::of_path(path).unwrap_or(FileKind::EvalYaml);
    let Ok(tree) = parse_tree(kind, text) else {
        return Vec::new();
    };
    member_files(path, dialect::of_tree(kind, &tree, path).dialect, &tree)
}

/// [`member_paths`] of a parsed tree in its dialect.
fn member_files(eval: &Path, dialect: Dialect, tree: &Node) -> Vec<PathBuf> {
    match dialect {
        Dialect::Waza => waza::eval_from_tree(tree, "")
            .map(|(_, ctx)| waza_tasks(eval, &ctx))
            .unwrap_or_default(),
        Dialect::SkillUp => skill_up::eval_from_tree(tree, "")
            .map(|(_, ctx)| skill_up_cases(eval, &ctx))
            .unwrap_or_default(),
        _ => Vec::new(),
    }
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
