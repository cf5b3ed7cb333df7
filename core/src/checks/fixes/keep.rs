//! What a fix must keep: every piece of text the author wrote, though not necessarily where
//! or how it was written.
//!
//! A fix may rename a key, move a field, quote a value or reshape it (a flow list into a
//! block list, a list into one string, `yes` into `true`); it may not drop what a value or
//! the body says. "Says" is compared as words (runs of letters and digits, case folded), so
//! quoting, escaping, re-indenting and changing separators (`My_Skill` into `my-skill`,
//! `scripts\run.py` into `scripts/run.py`) keep the text, and replacing `pdf-tools` by `pdf`
//! does not.
//!
//! What counts as the author's text depends on what the file is, and on whether it parses:
//! - a frontmatter or eval file that parses: the text of every value, at any depth (keys are
//!   names a fix may correct). Each must still be written, in order, inside one value after
//!   the fix, and the result must still parse;
//! - the Markdown body, a frontmatter or eval.yaml that does not parse, any other file: the
//!   words in order. The fix may add words, never drop or reorder them. In YAML that does
//!   not parse, a line's leading `key:` is still a key (a later round, once the YAML
//!   parses, may rename it), so it is left out; this keeps the relation transitive, and a
//!   chain of rounds keeps what its first text said.
//!
//! Lines holding a `skillwatch-ignore` directive are left out: the directive is the tool's
//! syntax, and SW002's fix removes a stale one with its reason.

use crate::evalspec::{self, FileKind};
use crate::skill::{Frontmatter, SKILL_FILE, SkillDocument};
use crate::yaml::{Node, Value};

use super::super::ignore::DIRECTIVE;

/// What kind of text a fix is applied to, which decides what its author wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A SKILL.md: frontmatter values and the body.
    SkillMd,
    /// An eval file: its values.
    Eval(FileKind),
    /// Any other file (a script, a reference): all its words.
    Plain,
}

impl Shape {
    /// The shape of the file at `path`, by its name.
    pub fn of_path(path: &std::path::Path) -> Shape {
        if path.file_name().is_some_and(|n| n == SKILL_FILE) {
            return Shape::SkillMd;
        }
        FileKind::of_path(path).map_or(Shape::Plain, Shape::Eval)
    }
}

/// A value's text and its words.
#[derive(Debug)]
struct Said {
    text: String,
    words: Vec<String>,
}

/// The author's text in one version of a file.
#[derive(Debug)]
pub(crate) struct Authored {
    /// The values of the structured part, when it parses.
    values: Option<Vec<Said>>,
    /// The words outside it: the body of a SKILL.md whose frontmatter parses.
    body: Vec<String>,
    /// The words of the whole text: what a later version offers.
    all: Vec<String>,
    /// The words a version whose structured part does not parse must keep: all of them but
    /// the YAML's line-leading keys.
    loose: Vec<String>,
}

impl Authored {
    /// Read the author's text out of `text`, a file of `shape`.
    pub fn of(shape: Shape, text: &str) -> Authored {
        let all = words_of_prose(text, false);
        let unparsed = |loose: Vec<String>| Authored {
            values: None,
            body: Vec::new(),
            all: all.clone(),
            loose,
        };
        match shape {
            Shape::SkillMd => {
                let doc = SkillDocument::parse(text.to_owned());
                match &doc.frontmatter {
                    Frontmatter::Parsed { root, .. } => Authored {
                        values: Some(values(root)),
                        body: words_of_prose(doc.slice(doc.body), false),
                        loose: Vec::new(),
                        all: all.clone(),
                    },
                    Frontmatter::Invalid { .. } => {
                        let (yaml, body) = doc.text.split_at(doc.body.start);
                        let mut loose = words_of_prose(yaml, true);
                        loose.extend(words_of_prose(body, false));
                        unparsed(loose)
                    }
                    _ => unparsed(all.clone()),
                }
            }
            Shape::Eval(kind) => match evalspec::parse_tree(kind, text) {
                Ok(root) => Authored {
                    values: Some(values(&root)),
                    body: Vec::new(),
                    loose: Vec::new(),
                    all: all.clone(),
                },
                Err(_) => unparsed(words_of_prose(text, kind == FileKind::EvalYaml)),
            },
            Shape::Plain => unparsed(all.clone()),
        }
    }

    /// Whether `after` still says all that `self` says; if not, a short quote of the first
    /// text it lost.
    pub fn kept_in(&self, after: &Authored) -> Result<(), String> {
        let Some(values) = &self.values else {
            return in_order(&self.loose, &after.all);
        };
        let Some(after_values) = &after.values else {
            return Err("the rest of the file: the fix leaves it unparseable".into());
        };
        for value in values.iter().filter(|v| !v.words.is_empty()) {
            if !after_values
                .iter()
                .any(|a| contains(&a.words, &value.words))
            {
                return Err(quote(&value.text));
            }
        }
        in_order(&self.body, &after.body)
    }
}

/// Every scalar value under `node` (mapping keys left out), in document order.
fn values(node: &Node) -> Vec<Said> {
    let mut out = Vec::new();
    collect(node, &mut out);
    out
}

fn collect(node: &Node, out: &mut Vec<Said>) {
    match &node.value {
        Value::Scalar(s) => out.push(Said {
            words: canonical(words(&s.text)),
            text: s.text.clone(),
        }),
        Value::Sequence(items) => items.iter().for_each(|i| collect(i, out)),
        Value::Mapping(entries) => entries.iter().for_each(|e| collect(&e.value, out)),
    }
}

/// YAML 1.1's other spellings of a boolean, which a fix may write the 1.2 way.
fn canonical(words: Vec<String>) -> Vec<String> {
    match words.as_slice() {
        [w] if w == "yes" || w == "on" => vec!["true".into()],
        [w] if w == "no" || w == "off" => vec!["false".into()],
        _ => words,
    }
}

/// The words of `text`, lines holding a directive left out, and with `yaml_keys` each line's
/// leading `key:` too.
fn words_of_prose(text: &str, yaml_keys: bool) -> Vec<String> {
    text.lines()
        .filter(|line| !line.contains(DIRECTIVE))
        .map(|line| if yaml_keys { after_key(line) } else { line })
        .flat_map(words)
        .collect()
}

/// `line` after its leading `key:` (`  - key:` too), when it starts with one.
fn after_key(line: &str) -> &str {
    let rest = line.trim_start().trim_start_matches("- ").trim_start();
    let key_len = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    match rest[key_len..].strip_prefix(':') {
        Some(value) if key_len > 0 => value,
        _ => line,
    }
}

/// Runs of letters and digits, lowercased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `needle` occurs in `haystack` as a run of consecutive words.
fn contains(haystack: &[String], needle: &[String]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// Whether `before` is a subsequence of `after`; else the first word that is not.
fn in_order(before: &[String], after: &[String]) -> Result<(), String> {
    let mut rest = after.iter();
    for (i, word) in before.iter().enumerate() {
        if !rest.any(|w| w == word) {
            let shown: Vec<&str> = before[i..].iter().take(6).map(String::as_str).collect();
            return Err(quote(&shown.join(" ")));
        }
    }
    Ok(())
}

/// A short quote of `text` for a message.
fn quote(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let short: String = one_line.chars().take(40).collect();
    let dots = if short.len() < one_line.len() {
        "..."
    } else {
        ""
    };
    format!("`{short}{dots}`")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(shape: Shape, before: &str, after: &str) -> Result<(), String> {
        Authored::of(shape, before).kept_in(&Authored::of(shape, after))
    }

    const FM: &str = "---\nname: My_Skill\ndescription: Reads PDFs. Use when asked.\n---\n# T\n\nSee scripts\\run.py now.\n";

    #[test]
    fn reshaping_keeps_text_and_dropping_or_replacing_does_not() {
        let reshaped = FM
            .replace("My_Skill", "my-skill")
            .replace(
                "description: Reads PDFs. Use when asked.",
                "description: 'Reads PDFs. Use when asked.'",
            )
            .replace("scripts\\run.py", "scripts/run.py");
        assert_eq!(kept(Shape::SkillMd, FM, &reshaped), Ok(()));
        let renamed_key = FM.replace("description:", "metadata:\n  x: a\ndescription:");
        assert_eq!(kept(Shape::SkillMd, FM, &renamed_key), Ok(()));
        let replaced = FM.replace("My_Skill", "pdf");
        assert_eq!(
            kept(Shape::SkillMd, FM, &replaced),
            Err("`My_Skill`".into())
        );
        let dropped = FM.replace("See scripts\\run.py now.", "See now.");
        assert_eq!(
            kept(Shape::SkillMd, FM, &dropped),
            Err("`scripts run py now`".into())
        );
        let broken = FM.replace("name: My_Skill", "name: [My_Skill");
        assert!(kept(Shape::SkillMd, FM, &broken).is_err());
    }

    #[test]
    fn a_value_must_stay_whole_inside_one_value() {
        // repro: `name: pdf-tools description: ...` quoted into `name`, then `name` replaced
        let joined =
            "---\nname: pdf-tools description: Extract text. Use when reading PDFs.\n---\nBody\n";
        let quoted =
            "---\nname: 'pdf-tools description: Extract text. Use when reading PDFs.'\n---\nBody\n";
        let renamed = "---\nname: pdf\n---\nBody\n";
        let split =
            "---\nname: pdf-tools\ndescription: Extract text. Use when reading PDFs.\n---\nBody\n";
        assert_eq!(kept(Shape::SkillMd, joined, quoted), Ok(()));
        assert!(kept(Shape::SkillMd, quoted, renamed).is_err());
        assert_eq!(kept(Shape::SkillMd, joined, split), Ok(()));
        // a list joined into one string keeps each item, in one value
        let list = "---\nname: a\ntags: [pdf, csv]\n---\n";
        let joined = "---\nname: a\nmetadata:\n  tags: \"pdf, csv\"\n---\n";
        assert_eq!(kept(Shape::SkillMd, list, joined), Ok(()));
        let yes = "---\nname: a\nuser-invocable: yes\n---\n";
        assert_eq!(
            kept(Shape::SkillMd, yes, &yes.replace("yes", "true")),
            Ok(())
        );
        assert!(kept(Shape::SkillMd, yes, &yes.replace("yes", "false")).is_err());
    }

    #[test]
    fn rounds_compose_from_yaml_that_does_not_parse() {
        // round 1 splits the joined fields (the YAML then parses), round 2 renames a key
        let joined = "---\nname: a description: Writes notes.\nlicence: MIT\n---\nBody\n";
        let split = "---\nname: a\ndescription: Writes notes.\nlicence: MIT\n---\nBody\n";
        let renamed = split.replace("licence", "license");
        assert_eq!(kept(Shape::SkillMd, joined, split), Ok(()));
        assert_eq!(kept(Shape::SkillMd, split, &renamed), Ok(()));
        assert_eq!(kept(Shape::SkillMd, joined, &renamed), Ok(()));
        // a value is still protected
        assert!(kept(Shape::SkillMd, joined, &renamed.replace("MIT", "GPL")).is_err());
    }

    #[test]
    fn directive_lines_may_go_and_other_files_keep_their_words() {
        let with = "---\nname: a\n---\n<!-- skillwatch-ignore SW307: our docs -->\nhttps://x.dev\n";
        let without = "---\nname: a\n---\nhttps://x.dev\n";
        assert_eq!(kept(Shape::SkillMd, with, without), Ok(()));
        assert_eq!(kept(Shape::Plain, "a b c", "a x b c"), Ok(()));
        assert!(kept(Shape::Plain, "a b c", "a c b").is_err());
        let yaml = Shape::Eval(FileKind::EvalYaml);
        assert_eq!(
            kept(yaml, "prompt: Sum: the file\n", "prompt: 'Sum: the file'\n"),
            Ok(())
        );
        assert_eq!(
            kept(yaml, "skil: x\nprompt: p\n", "skill: x\nprompt: p\n"),
            Ok(())
        );
        assert!(kept(yaml, "skill: pdf-tools\n", "skill: pdf\n").is_err());
    }
}
