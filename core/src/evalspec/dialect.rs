//! Which tool's format an eval file is written in, told from its content.
//!
//! Four tools write a file called `eval.yaml`, each with another shape (skill-validator's
//! `scenarios:`, Microsoft Vally's `stimuli:`, microsoft/waza's `tasks:` globs, alibaba
//! skill-up's `cases: {files}`), and `evals.json` comes as JSON, YAML or JSON Lines. The name
//! says little; the top-level keys say which. [`detect`] reads them from the text (line by
//! line, so a file that does not parse yet is still placed), [`of_tree`] from a parsed tree;
//! both give the [`Detected`] dialect with the reason, which diagnostics, `check --json` and the
//! editor show.

use std::path::Path;

use serde::Serialize;

use super::FileKind;
use crate::yaml::Node;

/// The eval file formats skillwatch reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// skill-validator's `eval.yaml` (`scenarios:`).
    SkillValidator,
    /// A Microsoft Vally eval spec (`stimuli:`).
    Vally,
    /// A Microsoft Vally experiment file (`evals:` with `variants:`): the arms, not cases.
    VallyExperiment,
    /// A microsoft/waza `eval.yaml` (`tasks:` globs, `metrics:`, `config.trials_per_task`).
    Waza,
    /// One microsoft/waza task file (`id`, `inputs.prompt`).
    WazaTask,
    /// An alibaba/skill-up `eval.yaml` (`schema_version`, `cases.files`).
    SkillUp,
    /// One alibaba/skill-up case file (`input.prompt`, `expect`, `judge`).
    SkillUpCase,
    /// `evals.json` of agentskills.io / skill-creator / NVIDIA SkillEvaluator, in any of its
    /// shapes and syntaxes (`.json`, `.jsonl`, `.yaml`).
    EvalsJson,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 8] = [
        Dialect::SkillValidator,
        Dialect::Vally,
        Dialect::VallyExperiment,
        Dialect::Waza,
        Dialect::WazaTask,
        Dialect::SkillUp,
        Dialect::SkillUpCase,
        Dialect::EvalsJson,
    ];

    /// A short stable id (`check --json`, `skillwatch schema`).
    pub fn id(self) -> &'static str {
        match self {
            Dialect::SkillValidator => "skill-validator",
            Dialect::Vally => "vally",
            Dialect::VallyExperiment => "vally-experiment",
            Dialect::Waza => "waza",
            Dialect::WazaTask => "waza-task",
            Dialect::SkillUp => "skill-up",
            Dialect::SkillUpCase => "skill-up-case",
            Dialect::EvalsJson => "evals-json",
        }
    }

    /// What to call it in messages.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::SkillValidator => "skill-validator eval.yaml",
            Dialect::Vally => "Microsoft Vally eval spec",
            Dialect::VallyExperiment => "Microsoft Vally experiment",
            Dialect::Waza => "microsoft/waza eval.yaml",
            Dialect::WazaTask => "microsoft/waza task",
            Dialect::SkillUp => "alibaba/skill-up eval.yaml",
            Dialect::SkillUpCase => "alibaba/skill-up case",
            Dialect::EvalsJson => "evals.json (agentskills.io / skill-creator / SkillEvaluator)",
        }
    }

    /// Whether the file holds other files' cases (waza's tasks, skill-up's cases) rather
    /// than its own.
    pub fn has_members(self) -> bool {
        matches!(self, Dialect::Waza | Dialect::SkillUp)
    }

    /// The dialect of the files a file of this dialect lists as its cases.
    pub fn member(self) -> Option<Dialect> {
        match self {
            Dialect::Waza => Some(Dialect::WazaTask),
            Dialect::SkillUp => Some(Dialect::SkillUpCase),
            _ => None,
        }
    }
}

/// A file's dialect and what gave it away.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detected {
    /// The dialect.
    pub dialect: Dialect,
    /// Why: the key that decided (`top-level \`stimuli:\``), or the file name when no key did.
    pub why: String,
}

impl Detected {
    fn by_key(dialect: Dialect, key: &str) -> Detected {
        Detected {
            dialect,
            why: format!("top-level `{key}:`"),
        }
    }
}

/// The dialect of an eval file from its text, its syntax and its name. Never fails: a file
/// whose keys say nothing is placed by its name (`eval.yaml` is skill-validator's, as
/// skillwatch has always read it).
pub fn detect(kind: FileKind, text: &str, path: &Path) -> Detected {
    match kind {
        FileKind::EvalsJson | FileKind::JsonLines => Detected {
            dialect: Dialect::EvalsJson,
            why: "a JSON file".into(),
        },
        FileKind::EvalYaml => {
            let keys = top_level_keys(text);
            let has = |k: &str| keys.iter().any(|(key, _)| *key == k);
            let cases_mapping = keys
                .iter()
                .find(|(k, _)| *k == "cases")
                .is_some_and(|(_, block)| *block == Block::Mapping);
            by_keys(&has, cases_mapping, keys.first().map(|k| k.1)).unwrap_or_else(|| by_name(path))
        }
    }
}

/// The dialect of a parsed tree (for callers holding the tree, not the file): as [`detect`],
/// from the tree's keys.
pub fn of_tree(kind: FileKind, root: &Node, path: &Path) -> Detected {
    if kind != FileKind::EvalYaml {
        return detect(kind, "", path);
    }
    if root.as_sequence().is_some() {
        return Detected {
            dialect: Dialect::EvalsJson,
            why: "a top-level list of cases".into(),
        };
    }
    let has = |k: &str| root.get(k).is_some();
    let cases_mapping = root
        .get("cases")
        .is_some_and(|e| e.value.as_mapping().is_some());
    by_keys(&has, cases_mapping, None).unwrap_or_else(|| by_name(path))
}

/// The decision from the top-level keys, most specific first: each dialect's required key,
/// then keys only one of them uses.
fn by_keys(
    has: &dyn Fn(&str) -> bool,
    cases_mapping: bool,
    first: Option<Block>,
) -> Option<Detected> {
    let found = |d: Dialect, k: &str| Some(Detected::by_key(d, k));
    if has("scenarios") {
        return found(Dialect::SkillValidator, "scenarios");
    }
    if has("stimuli") {
        return found(Dialect::Vally, "stimuli");
    }
    if has("variants") && (has("evals") || has("vary")) {
        return found(Dialect::VallyExperiment, "variants");
    }
    if has("matrix") && has("evals") {
        return found(Dialect::VallyExperiment, "matrix");
    }
    // an experiment whose `variants:` is still being typed
    if has("vary") && has("evals") {
        return found(Dialect::VallyExperiment, "vary");
    }
    if cases_mapping {
        return found(Dialect::SkillUp, "cases");
    }
    for key in ["schema_version", "engine", "benchmark"] {
        if has(key) {
            return found(Dialect::SkillUp, key);
        }
    }
    for key in ["tasks", "metrics", "tasks_from"] {
        if has(key) {
            return found(Dialect::Waza, key);
        }
    }
    if has("inputs") {
        return found(Dialect::WazaTask, "inputs");
    }
    if has("input") {
        return found(Dialect::SkillUpCase, "input");
    }
    for key in ["evals", "skill_name", "cases", "question"] {
        if has(key) {
            return found(Dialect::EvalsJson, key);
        }
    }
    if first == Some(Block::Item) {
        return Some(Detected {
            dialect: Dialect::EvalsJson,
            why: "a top-level list of cases".into(),
        });
    }
    None
}

/// The dialect a file's name suggests, for a file whose keys say nothing (empty, or broken
/// before its first key).
fn by_name(path: &Path) -> Detected {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let parent = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let dialect = if name.ends_with(".experiment.yaml") || name.ends_with(".experiment.yml") {
        Dialect::VallyExperiment
    } else if name == "eval.vally.yaml" || name.ends_with(".eval.yaml") {
        Dialect::Vally
    } else if name.starts_with("evals.") || name.starts_with("dataset.") {
        Dialect::EvalsJson
    } else if parent == "tasks" {
        Dialect::WazaTask
    } else if parent == "cases" {
        Dialect::SkillUpCase
    } else {
        Dialect::SkillValidator
    };
    Detected {
        dialect,
        why: format!("the file name `{name}` (no top-level key decides)"),
    }
}

/// What the first non-blank line under a top-level key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    /// A `- item` (or the key is a list item itself, for the first entry).
    Item,
    /// A nested `key:`.
    Mapping,
    /// A value on the key's own line, or nothing.
    Inline,
}

/// The top-level keys of a YAML text, read line by line (so a file broken further down still
/// has them), each with what its block holds. A top-level `- ` item is recorded as `("-",
/// Item)`.
fn top_level_keys(text: &str) -> Vec<(&str, Block)> {
    let mut keys: Vec<(&str, Block)> = Vec::new();
    let mut open: Option<usize> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || line.starts_with("---") {
            continue;
        }
        if !line.starts_with([' ', '\t']) {
            if let Some(rest) = line.strip_prefix('-')
                && (rest.is_empty() || rest.starts_with(' '))
            {
                keys.push(("-", Block::Item));
                open = None;
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                open = None;
                continue;
            };
            let key = key.trim().trim_matches(['"', '\'']);
            if key.is_empty() || key.contains(' ') {
                open = None;
                continue;
            }
            let inline = !value.trim().is_empty() && !value.trim_start().starts_with('#');
            keys.push((key, Block::Inline));
            open = (!inline).then_some(keys.len() - 1);
            continue;
        }
        if let Some(i) = open.take() {
            keys[i].1 = if trimmed.starts_with("- ") || trimmed == "-" {
                Block::Item
            } else {
                Block::Mapping
            };
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str, name: &str) -> Detected {
        detect(FileKind::EvalYaml, text, Path::new(name))
    }

    #[test]
    fn each_dialect_by_its_keys() {
        let cases = [
            ("scenarios:\n  - name: a\n", Dialect::SkillValidator),
            ("name: x\nstimuli:\n  - name: a\n", Dialect::Vally),
            (
                "name: e\nevals:\n  - t/*.yaml\nvary: [/environment/skills]\nvariants:\n  a: {}\n",
                Dialect::VallyExperiment,
            ),
            (
                "name: e\nevals:\n  - t/*.yaml\nvary: [/environment/skills]\nvar",
                Dialect::VallyExperiment,
            ),
            (
                "name: w\nskill: s\ntasks:\n  - \"tasks/*.yaml\"\n",
                Dialect::Waza,
            ),
            ("id: t1\nname: T\ninputs:\n  prompt: p\n", Dialect::WazaTask),
            (
                "schema_version: v1alpha1\ncases:\n  files:\n    - evals/cases/a.yaml\n",
                Dialect::SkillUp,
            ),
            ("cases:\n  files: [a.yaml]\n", Dialect::SkillUp),
            ("id: c\ninput:\n  prompt: p\n", Dialect::SkillUpCase),
            ("skill: s\ncases:\n  - id: a\n", Dialect::EvalsJson),
            ("skill_name: s\nevals:\n  - id: 1\n", Dialect::EvalsJson),
            ("- id: a\n  question: q\n", Dialect::EvalsJson),
        ];
        for (text, want) in cases {
            assert_eq!(yaml(text, "x/eval.yaml").dialect, want, "{text}");
        }
        assert_eq!(
            yaml("stimuli:\n  - name: a\n", "eval.yaml").why,
            "top-level `stimuli:`"
        );
    }

    #[test]
    fn broken_files_are_placed_by_keys_then_name() {
        // the YAML breaks after the deciding key
        assert_eq!(
            yaml("stimuli:\n  - name: [a\n    prompt: p\n", "eval.yaml").dialect,
            Dialect::Vally
        );
        let named = yaml(": :\n", "tests/p/s/eval.vally.yaml");
        assert_eq!(named.dialect, Dialect::Vally);
        assert!(named.why.contains("eval.vally.yaml"), "{}", named.why);
        assert_eq!(yaml("", "t/eval.yaml").dialect, Dialect::SkillValidator);
        assert_eq!(yaml("", "e/tasks/a.yaml").dialect, Dialect::WazaTask);
        assert_eq!(
            detect(FileKind::JsonLines, "{", Path::new("evals/evals.jsonl")).dialect,
            Dialect::EvalsJson
        );
    }

    #[test]
    fn tree_and_text_agree() {
        for text in [
            "scenarios:\n  - name: a\n",
            "stimuli: []\n",
            "cases:\n  files: [a]\n",
            "skill: s\ncases:\n  - id: a\n",
            "tasks: [x]\n",
            "- id: a\n",
        ] {
            let root = crate::yaml::parse(text, 0).unwrap();
            let p = Path::new("eval.yaml");
            assert_eq!(
                of_tree(FileKind::EvalYaml, &root, p).dialect,
                detect(FileKind::EvalYaml, text, p).dialect,
                "{text}"
            );
        }
    }
}
