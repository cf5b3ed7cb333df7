//! Rules SW4xx: diagnostics on eval files, in every dialect skillwatch reads (skill-validator,
//! Vally, waza, skill-up, the evals.json family; `evalspec::dialect`).
//!
//! The checks run on the spanned tree, not on the [`Suite`](crate::evalspec::Suite): a suite
//! exists only when the whole file is valid, and an author fixing one broken case still wants
//! to hear about the invalid regex in the next one. Order: syntax (nothing else runs on text
//! that does not parse), the schema of the file's dialect, then the semantic rules the schema
//! cannot express, and what the file asks for that skillwatch does not run (SW416, the
//! readers' notes). Which dialect a file was read as is named in the messages of its syntax,
//! schema and no-cases findings, unless it is one of the two formats skillwatch always read.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tree_names::TreeNames;
pub(crate) use tree_names::Trees;

use crate::evalspec::dialect::{self, Detected, Dialect};
use crate::evalspec::{
    self, Activation, FileKind, Format, NoteLevel, schema, schema::SchemaViolation,
};
use crate::skill::{Frontmatter, SKILL_FILE, SkillDocument, load_document};
use crate::text::{LineIndex, Span};
use crate::yaml::{Node, Resolved};

use super::quote_fix::quote_fix;
use super::{CheckOptions, Diagnostic, Edit, FileReport, Fix, Severity, catalog};

/// Check an eval file read from disk (for `skillwatch check`). An unreadable file is itself a
/// finding (SW400).
pub fn check_eval_file(path: &Path, skill_dir: &Path, options: &CheckOptions) -> FileReport {
    check_eval_file_of(
        path,
        skill_dir,
        skill_names(skill_dir),
        options,
        None,
        &Trees::Recent,
    )
}

/// [`check_eval_file`] for a skill whose names (see [`names_of`]) the caller already has, so
/// the SKILL.md is not read and parsed again for every eval file; `kept` is the file's text
/// when the folder's walk already read it (then the file is not opened again); `trees` is
/// where SW411 learns the other skills of the tree.
pub(crate) fn check_eval_file_of(
    path: &Path,
    skill_dir: &Path,
    names: Vec<String>,
    options: &CheckOptions,
    kept: Option<&str>,
    trees: &Trees,
) -> FileReport {
    // What `read_eval_text` would give for that text: it refuses NUL bytes and large files.
    let read = match kept {
        Some(text)
            if memchr::memchr(0, text.as_bytes()).is_none()
                && text.len() as u64 <= evalspec::MAX_EVAL_FILE_BYTES =>
        {
            Ok(text.to_string())
        }
        _ => evalspec::read_eval_text(path),
    };
    match read {
        Ok(text) => {
            let (diagnostics, ignored, detected) =
                check_text(path, &text, skill_dir, names, options, trees);
            FileReport {
                path: path.to_path_buf(),
                diagnostics,
                ignored,
                text: Some(text),
                dialect: detected,
                capabilities: Vec::new(),
            }
        }
        Err(error) => {
            let mut diagnostics = vec![finding(
                "SW400",
                path,
                Span::empty(error.offset().unwrap_or(0)),
                format!("eval file cannot be checked: {error}"),
            )];
            options.apply_overrides(&mut diagnostics);
            FileReport {
                path: path.to_path_buf(),
                text: None,
                diagnostics,
                ignored: Vec::new(),
                dialect: None,
                capabilities: Vec::new(),
            }
        }
    }
}

/// Check an eval file given as text (an editor buffer, or a file just read). `path` decides
/// the syntax (`*.yaml`/`*.yml`, `*.json` or `*.jsonl`; any other name yields no findings),
/// the content the dialect; `skill_dir` is the skill the file evaluates, against which
/// `source` paths, the skill's name and other skills are resolved. Never panics; findings
/// are sorted by position.
pub fn check_eval_text(
    path: &Path,
    text: &str,
    skill_dir: &Path,
    options: &CheckOptions,
) -> Vec<Diagnostic> {
    if FileKind::of_path(path).is_none() {
        return Vec::new();
    }
    check_text(
        path,
        text,
        skill_dir,
        skill_names(skill_dir),
        options,
        &Trees::Recent,
    )
    .0
}

/// The findings, those a comment silenced, and the dialect the file was read as.
type Checked = (
    Vec<Diagnostic>,
    Vec<super::ignore::Ignored>,
    Option<Detected>,
);

fn check_text(
    path: &Path,
    text: &str,
    skill_dir: &Path,
    names: Vec<String>,
    options: &CheckOptions,
    trees: &Trees,
) -> Checked {
    let Some(kind) = FileKind::of_path(path) else {
        return (Vec::new(), Vec::new(), None);
    };
    let detected = dialect::detect(kind, text, path);
    let mut ctx = Ctx::new(path, text, skill_dir, kind, detected, names, trees);
    match evalspec::parse_tree(kind, text) {
        Err(error) => syntax_error(&mut ctx, kind, &error),
        Ok(root) => {
            ctx.detected = dialect::of_tree(kind, &root, path);
            ctx.check_tree(&root)
        }
    }
    let detected = ctx.detected.clone();
    let (diagnostics, ignored) =
        super::settle(path, text, super::Shape::Eval(kind), ctx.out, options);
    (diagnostics, ignored, Some(detected))
}

/// SW401 for a file that is not YAML or JSON, with [`quote_fix`]'s repair when it applies.
fn syntax_error(ctx: &mut Ctx<'_>, kind: FileKind, error: &evalspec::ParseError) {
    let mut message = format!(
        "not valid {}: {}{}",
        kind_word(kind),
        error.message,
        ctx.read_as()
    );
    let whole = Span::new(0, ctx.text.len());
    let repair = match kind {
        FileKind::EvalYaml => quote_fix(
            ctx.text,
            whole,
            error.span.start,
            &error.message,
            &schema::field_names(ctx.dialect()),
        ),
        FileKind::EvalsJson | FileKind::JsonLines => None,
    };
    match repair {
        Some((why, fix)) => {
            message.push_str("; ");
            message.push_str(&why);
            ctx.push_fix("SW401", error.span, message, fix);
        }
        None => ctx.push("SW401", error.span, message),
    }
}

fn kind_word(kind: FileKind) -> &'static str {
    match kind {
        FileKind::EvalYaml => "YAML",
        FileKind::EvalsJson => "JSON",
        FileKind::JsonLines => "JSON Lines",
    }
}

/// A diagnostic at the rule's default severity.
fn finding(rule: &'static str, path: &Path, span: Span, message: String) -> Diagnostic {
    Diagnostic {
        rule,
        severity: catalog::rule(rule).map_or(Severity::Error, |r| r.severity),
        path: path.to_path_buf(),
        span,
        message,
        fix: None,
    }
}

struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
    skill_dir: &'a Path,
    kind: FileKind,
    /// The dialect the file is read as (from its text, then from its tree).
    detected: Detected,
    /// Built on first need: only a duplicate case (SW406) names a line.
    lines: Option<LineIndex>,
    /// The skill's own names: its folder name and its frontmatter `name`.
    names: Vec<String>,
    /// Where the other skills of the tree come from, and what it answered.
    trees: &'a Trees,
    tree: Option<Arc<TreeNames>>,
    out: Vec<Diagnostic>,
}

impl<'a> Ctx<'a> {
    fn new(
        path: &'a Path,
        text: &'a str,
        skill_dir: &'a Path,
        kind: FileKind,
        detected: Detected,
        names: Vec<String>,
        trees: &'a Trees,
    ) -> Ctx<'a> {
        Ctx {
            path,
            text,
            skill_dir,
            kind,
            detected,
            lines: None,
            names,
            trees,
            tree: None,
            out: Vec::new(),
        }
    }

    fn push(&mut self, rule: &'static str, span: Span, message: String) {
        self.out.push(finding(rule, self.path, span, message));
    }

    fn push_fix(&mut self, rule: &'static str, span: Span, message: String, fix: Fix) {
        let mut d = finding(rule, self.path, span, message);
        d.fix = Some(fix);
        self.out.push(d);
    }

    fn line_of(&mut self, span: Span) -> u32 {
        let text = self.text;
        let lines = self.lines.get_or_insert_with(|| LineIndex::new(text));
        lines.line_col(text, span.start).line
    }

    fn dialect(&self) -> Dialect {
        self.detected.dialect
    }

    /// ` [read as ...]` for messages about the file's shape, when the dialect is one of the
    /// other tools' or was only guessed from the name; empty for skill-validator's eval.yaml
    /// and evals.json read by their keys (what skillwatch always read).
    fn read_as(&self) -> String {
        let d = &self.detected;
        let by_name = d.why.starts_with("the file name");
        match d.dialect {
            Dialect::SkillValidator | Dialect::EvalsJson if !by_name => String::new(),
            Dialect::SkillValidator => format!(
                " [read as {}: {}; a top-level `scenarios:` is skill-validator's, `stimuli:` \
                 Vally's, `tasks:` waza's, `cases: {{files}}` skill-up's]",
                d.dialect.name(),
                d.why
            ),
            other => format!(" [read as {}: {}]", other.name(), d.why),
        }
    }

    fn check_tree(&mut self, root: &Node) {
        for violation in schema::validate(self.dialect(), root, self.text) {
            self.schema_violation(violation);
        }
        if let Some(cases) = evalspec::case_nodes(self.dialect(), root) {
            self.check_cases(root, &cases);
        }
        self.file_rules(root);
        self.parse_safety_net(root);
    }

    fn schema_violation(&mut self, mut v: SchemaViolation) {
        v.message.push_str(&self.read_as());
        let (rule, verb) = match v.unknown_field {
            true => ("SW403", "Rename to"),
            false => ("SW402", "Replace with"),
        };
        match v.suggestion {
            Some(name) => {
                let raw = &self.text[v.span.start..v.span.end];
                let replacement = match raw.chars().next() {
                    Some(q @ ('"' | '\'')) => format!("{q}{name}{q}"),
                    _ => name.clone(),
                };
                let fix = Fix {
                    title: format!("{verb} `{name}`"),
                    edits: vec![Edit {
                        span: v.span,
                        replacement,
                    }],
                };
                self.push_fix(rule, v.span, v.message, fix);
            }
            None => self.push(rule, v.span, v.message),
        }
    }

    /// The readers reject a few things the schema allows (a timeout of 0 is an integer); if
    /// the file does not read as a suite and no error says why yet, say it. A file that reads
    /// gives its notes: what it asks for that skillwatch does not run (SW416).
    fn parse_safety_net(&mut self, root: &Node) {
        // An error already given (a missing file, say) may leave the file readable: its notes
        // still belong beside the error.
        let has_error = self.out.iter().any(|d| d.severity == Severity::Error);
        // The file name only goes into each case's origin, never into an error, so the
        // readers' verdict does not depend on it (and `relative_path` asks the OS for the
        // current directory).
        match evalspec::suite_of_dialect(self.dialect(), root, "") {
            Err(_) if has_error => {}
            Err(e) => {
                let message = format!("{}{}", e.message, self.read_as());
                self.push("SW402", e.span, message);
            }
            Ok(suite) => {
                for note in suite.notes {
                    let mut d = finding("SW416", self.path, note.span, note.message);
                    d.severity = match note.level {
                        NoteLevel::Warning => Severity::Warning,
                        NoteLevel::Info => Severity::Info,
                    };
                    self.out.push(d);
                }
            }
        }
    }

    fn check_cases(&mut self, root: &Node, cases: &evalspec::CaseNodes<'_>) {
        self.shape_findings(root, cases);
        let mut seen: HashMap<String, Span> = HashMap::new();
        // Each case's activation, read once for the per-case rules and SW408.
        let activations: Vec<Option<Activation>> = cases
            .cases
            .iter()
            .map(|(_, node)| {
                evalspec::activation_of(cases.format, node, cases.skill_name.as_deref())
            })
            .collect();
        for ((pointer, node), activation) in cases.cases.iter().zip(&activations) {
            if node.as_mapping().is_none() {
                continue;
            }
            self.duplicate(node, pointer, &mut seen);
            self.patterns(node, pointer);
            self.sources(node);
            self.timeout(node);
            self.empty_criteria(node);
            if *activation != Some(Activation::MustNotTrigger) {
                self.prompt_names_skill(node);
            }
            if self.dialect() == Dialect::EvalsJson {
                self.expected_skills(node);
            }
        }
        self.negatives_without_positive(cases, activations);
    }
}

// ---- file-level rules: shape, skill_name, no cases ----

impl Ctx<'_> {
    fn shape_findings(&mut self, root: &Node, cases: &evalspec::CaseNodes<'_>) {
        let head = Span::new(root.span.start, root.span.start + 1.min(root.span.len()));
        if cases.format.is_legacy_json() {
            let what = match cases.format {
                Format::EvalsJsonLegacyArray => "a flat array of cases",
                Format::EvalsJsonCases => "`{\"skill\", \"cases\": [...]}`",
                _ => "a single case object",
            };
            self.push(
                "SW412",
                head,
                format!(
                    "legacy evals.json shape ({what}): it still works, but the agentskills.io \
                     shape `{{\"skill_name\": ..., \"evals\": [...]}}` is preferred (`question` -> \
                     `prompt`, `ground_truth` -> `expected_output`, `expected_behavior` -> \
                     `assertions`)"
                ),
            );
        }
        if matches!(cases.format, Format::EvalsJson | Format::EvalsJsonCases) {
            self.skill_name_matches(root);
        }
        if cases.cases.is_empty() {
            let list = ["evals", "cases", "scenarios", "stimuli"]
                .iter()
                .find_map(|k| root.get(k).map(|e| e.value.span))
                .unwrap_or(head);
            let message = format!(
                "the eval file defines no cases, so it evaluates nothing{}",
                self.read_as()
            );
            self.push("SW414", list, message);
        }
    }

    fn skill_name_matches(&mut self, root: &Node) {
        let Some(entry) = ["skill_name", "skill"].iter().find_map(|k| root.get(k)) else {
            return;
        };
        let Some(written) = entry.value.as_str() else {
            return;
        };
        if self.names.is_empty() || self.is_own_name(written) {
            return;
        }
        let name = self.names.last().expect("non-empty").clone();
        let fix = Fix {
            title: format!(
                "Set `{}` to `{name}`",
                entry.key.as_key().unwrap_or("skill_name")
            ),
            edits: vec![Edit {
                span: entry.value.span,
                replacement: serde_json::Value::String(name.clone()).to_string(),
            }],
        };
        let message = format!(
            "`{}` is `{written}`, but the skill is named `{name}`",
            entry.key.as_key().unwrap_or("skill_name")
        );
        self.push_fix("SW413", entry.value.span, message, fix);
    }

    fn is_own_name(&self, name: &str) -> bool {
        self.names
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name.trim()))
    }
}

// ---- per-case rules ----

impl Ctx<'_> {
    fn duplicate(&mut self, node: &Node, pointer: &str, seen: &mut HashMap<String, Span>) {
        let key = match self.dialect() {
            Dialect::SkillValidator | Dialect::Vally => "name",
            Dialect::EvalsJson => "id",
            _ => return,
        };
        let Some(value) = node.get(key).map(|e| &e.value) else {
            return;
        };
        let Some(id) = case_key(value) else { return };
        match seen.get(&id) {
            None => {
                seen.insert(id, value.span);
            }
            Some(first) => {
                let line = self.line_of(*first);
                let what = if key == "name" {
                    "case name"
                } else {
                    "case id"
                };
                self.push(
                    "SW406",
                    value.span,
                    format!("{pointer}: duplicate {what} `{id}`, first used on line {line}"),
                );
            }
        }
    }

    fn patterns(&mut self, node: &Node, pointer: &str) {
        for (at, pattern) in pattern_sites(self.dialect(), node, pointer) {
            let Some(text) = pattern.as_scalar().map(|s| s.text.as_str()) else {
                continue;
            };
            if let Err(e) = evalspec::Pattern::new(text) {
                self.push("SW404", pattern.span, format!("{at}: {e}"));
            }
        }
    }

    fn sources(&mut self, node: &Node) {
        let here = self.path.parent().unwrap_or(self.skill_dir);
        match self.dialect() {
            Dialect::SkillValidator => {
                let Some(setup) = node.get("setup").map(|e| &e.value) else {
                    return;
                };
                for file in items(setup, "files") {
                    if let Some(src) = file.get("source").map(|e| &e.value) {
                        self.source_exists(
                            src,
                            self.skill_dir,
                            "setup file source",
                            "sources are relative to the skill folder",
                        );
                    }
                }
            }
            Dialect::Vally => {
                if let Some(env) = node.get("environment").map(|e| &e.value) {
                    self.vally_files(env);
                }
            }
            Dialect::WazaTask => {
                let eval_dir = match here.file_name().and_then(|n| n.to_str()) {
                    Some("tasks") => here.parent().unwrap_or(here),
                    _ => here,
                };
                let fixtures = node
                    .get("context_dir")
                    .and_then(|e| e.value.as_str())
                    .map_or_else(|| eval_dir.join("fixtures"), |d| eval_dir.join(d));
                let inputs = node.get("inputs").map(|e| &e.value);
                for file in inputs.map_or(&[][..], |i| items(i, "files")) {
                    if file.get("content").is_some() {
                        continue;
                    }
                    if let Some(path) = file.get("path").map(|e| &e.value) {
                        self.source_exists(path, &fixtures, "task file", "task files are relative to the task's `context_dir`, else `fixtures/` beside the eval.yaml");
                    }
                }
            }
            Dialect::SkillUpCase => {
                let fixture = node
                    .get("context")
                    .and_then(|c| c.value.get("repo_fixture"))
                    .map(|e| &e.value);
                if let Some(fixture) = fixture {
                    let root = evalspec::skill_up_root_of_case(self.path, self.skill_dir);
                    self.source_exists(
                        fixture,
                        &root,
                        "repo fixture",
                        "skill-up resolves it against the skill folder",
                    );
                }
            }
            Dialect::EvalsJson => {
                let Some(files) = node.get("files").map(|e| &e.value) else {
                    return;
                };
                let refs: Vec<&Node> = match files.as_sequence() {
                    Some(list) => list.iter().collect(),
                    None => vec![files],
                };
                for r in refs {
                    let Some(reference) = r.as_str() else {
                        continue;
                    };
                    let rel = evalspec::files_source(reference);
                    if reference.trim().is_empty() || self.skill_dir.join(&rel).exists() {
                        continue;
                    }
                    let message = format!(
                        "file `{reference}` does not exist: `files` entries are relative to \
                         evals/, so this is {}",
                        self.skill_dir.join(&rel).display()
                    );
                    self.push("SW405", r.span, message);
                }
            }
            _ => {}
        }
    }

    /// SW405 for a Vally `environment.files` list: each `src` beside the eval file.
    fn vally_files(&mut self, env: &Node) {
        let here = self.path.parent().unwrap_or(self.skill_dir).to_path_buf();
        for file in items(env, "files") {
            if let Some(src) = file.get("src").map(|e| &e.value) {
                self.source_exists(
                    src,
                    &here,
                    "environment file `src`",
                    "`src` is relative to the eval file",
                );
            }
        }
    }

    /// SW405 when the path written in `value` does not exist under `base`.
    fn source_exists(&mut self, value: &Node, base: &Path, what: &str, rule: &str) {
        let Some(rel) = value.as_scalar().map(|s| s.text.as_str()) else {
            return;
        };
        if rel.trim().is_empty() || base.join(rel.trim()).exists() {
            return;
        }
        let message = format!(
            "{what} `{rel}` does not exist: {rule}, so this is {}",
            base.join(rel.trim()).display()
        );
        self.push("SW405", value.span, message);
    }

    fn timeout(&mut self, node: &Node) {
        if self.dialect() != Dialect::SkillValidator {
            return;
        }
        let Some(value) = node.get("timeout").map(|e| &e.value) else {
            return;
        };
        if let Some(Resolved::Int(t)) = value.as_scalar().map(|s| s.resolve())
            && t <= 0
        {
            self.push(
                "SW409",
                value.span,
                format!(
                    "timeout is {t}: expected a positive number of seconds (the default is 120)"
                ),
            );
        }
    }

    fn empty_criteria(&mut self, node: &Node) {
        let keys: &[&str] = match self.dialect() {
            Dialect::SkillValidator | Dialect::Vally => &["rubric"],
            Dialect::EvalsJson => &[
                "assertions",
                "expected_behavior",
                "expectations",
                "must_not",
            ],
            _ => &[],
        };
        for key in keys {
            for item in items(node, key) {
                let (blank, span) = match item.as_mapping() {
                    Some(_) if item.get("type").is_some() => continue,
                    Some(_) => match item.get("text") {
                        Some(t) => (
                            t.value
                                .as_scalar()
                                .is_some_and(|s| s.text.trim().is_empty()),
                            t.value.span,
                        ),
                        None => continue,
                    },
                    None => (
                        item.as_scalar().is_some_and(|s| s.text.trim().is_empty()),
                        item.span,
                    ),
                };
                if blank {
                    let what = if *key == "rubric" {
                        "rubric item"
                    } else {
                        "criterion"
                    };
                    self.push(
                        "SW410",
                        span,
                        format!("empty {what} in `{key}`: the judge has nothing to check"),
                    );
                }
            }
        }
    }

    fn prompt_names_skill(&mut self, node: &Node) {
        let holder = match self.dialect() {
            Dialect::WazaTask => node.get("inputs").map(|e| &e.value),
            Dialect::SkillUpCase => node.get("input").map(|e| &e.value),
            _ => Some(node),
        };
        let prompt = ["question", "prompt"]
            .iter()
            .find_map(|k| holder?.get(k).map(|e| &e.value).filter(|v| !v.is_null()));
        let Some(prompt) = prompt else { return };
        let Some(scalar) = prompt.as_scalar() else {
            return;
        };
        // Each text is lower-cased once for all the names (not once per name and text).
        let raw = Haystack::new(&self.text[prompt.span.start..prompt.span.end]);
        let mut value: Option<Haystack<'_>> = None;
        let found = self.names.iter().find_map(|name| {
            let span = match raw.mention(name) {
                Some((s, e)) => Span::new(prompt.span.start + s, prompt.span.start + e),
                None if value
                    .get_or_insert_with(|| Haystack::new(&scalar.text))
                    .mention(name)
                    .is_some() =>
                {
                    prompt.span
                }
                None => return None,
            };
            Some((name.clone(), span))
        });
        if let Some((name, span)) = found {
            self.push(
                "SW407",
                span,
                format!(
                    "the prompt names the skill `{name}`: the eval then measures following an \
                     instruction, not whether the agent finds the skill on its own"
                ),
            );
        }
    }

    fn expected_skills(&mut self, node: &Node) {
        let mut named: Vec<&Node> = Vec::new();
        if let Some(e) = node.get("expected_skill") {
            named.push(&e.value);
        }
        for key in ["acceptable_skills", "acceptable_alternates"] {
            named.extend(items(node, key));
        }
        for value in named {
            let Some(name) = value.as_str() else { continue };
            if name.trim().is_empty() || self.is_own_name(name) {
                continue;
            }
            let (dir, trees) = (self.skill_dir, self.trees);
            let tree = self.tree.get_or_insert_with(|| trees.names_for(dir));
            if !tree.contains(name) {
                let root = tree.root.display().to_string();
                self.push(
                    "SW411",
                    value.span,
                    format!("no skill named `{name}` under {root} (by folder name or frontmatter `name`)"),
                );
            }
        }
    }

    /// SW408; `activations` are the cases' [`evalspec::activation_of`], in order.
    fn negatives_without_positive(
        &mut self,
        cases: &evalspec::CaseNodes<'_>,
        activations: Vec<Option<Activation>>,
    ) {
        let mut first_negative = None;
        let mut has_positive = false;
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        for ((_, node), activation) in cases.cases.iter().zip(activations) {
            match activation {
                Some(Activation::MustNotTrigger) => {
                    first_negative.get_or_insert(*node);
                }
                Some(Activation::Expected { skill: None, .. }) => has_positive = true,
                Some(Activation::Expected { skill: Some(s), .. }) => {
                    has_positive |= names.iter().any(|n| n.eq_ignore_ascii_case(&s))
                        || cases
                            .skill_name
                            .as_deref()
                            .is_some_and(|n| n.eq_ignore_ascii_case(&s));
                }
                _ => {}
            }
        }
        let Some(negative) = first_negative else {
            return;
        };
        if has_positive || self.other_files_have_positive() {
            return;
        }
        let span = ["expect_activation", "should_trigger", "expected_skill"]
            .iter()
            .find_map(|k| negative.get(k).map(|e| e.value.span))
            .unwrap_or(negative.span);
        self.push(
            "SW408",
            span,
            "negative case (the skill must not be used) in a suite with no positive case for \
             the skill: add a case where the skill should be used, or the suite cannot show it \
             helps"
                .into(),
        );
    }

    /// Whether another eval file of the same skill has a positive case (a skill's suite is
    /// every eval file it has).
    fn other_files_have_positive(&self) -> bool {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let this = std::fs::canonicalize(self.path).unwrap_or_else(|_| self.path.to_path_buf());
        evalspec::find_eval_files(self.skill_dir)
            .into_iter()
            .filter(|f| std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone()) != this)
            .filter_map(|f| {
                let text = evalspec::read_eval_text(&f.path).ok()?;
                evalspec::parse_suite(f.kind, &text, "other").ok()
            })
            .any(|suite| {
                let mut all = names.clone();
                all.extend(suite.skill_name.as_deref());
                suite.cases.iter().any(|c| c.is_positive_for(&all))
            })
    }
}

// ---- file-level rules of the other dialects ----

impl Ctx<'_> {
    /// What a file's top level holds beside its cases: the files it lists (waza's task
    /// globs, skill-up's case files, Vally's root environment), waza's `skill`, and which
    /// evals.json dialect a file is written in (SW415).
    fn file_rules(&mut self, root: &Node) {
        match self.dialect() {
            Dialect::Vally => {
                if let Some(env) = root.get("environment").map(|e| &e.value) {
                    self.vally_files(env);
                }
            }
            Dialect::Waza => {
                self.skill_name_matches(root);
                let here = self.path.parent().unwrap_or(self.skill_dir).to_path_buf();
                for glob in items(root, "tasks") {
                    let Some(pattern) = glob.as_str() else {
                        continue;
                    };
                    if crate::grading::glob::find(&here, pattern, &[]).is_empty() {
                        let message = format!(
                            "`{pattern}` matches no task file: task globs are relative to the \
                             eval file, so this looks under {}",
                            here.display()
                        );
                        self.push("SW405", glob.span, message);
                    }
                }
            }
            Dialect::SkillUp => {
                let root_dir = evalspec::skill_up_root(self.path);
                let files = root
                    .get("cases")
                    .map_or(&[][..], |c| items(&c.value, "files"));
                for file in files {
                    self.source_exists(
                        file,
                        &root_dir,
                        "case file",
                        "case files are relative to the skill folder",
                    );
                }
            }
            Dialect::EvalsJson => self.evals_json_dialect(root),
            Dialect::VallyExperiment => self.staged_skills(root),
            _ => {}
        }
    }

    /// SW405 for an experiment arm's `environment.skills` entry that stages no skill: the run
    /// would refuse the experiment at its start; the editor says so where it is written.
    fn staged_skills(&mut self, root: &Node) {
        let here = self.path.parent().unwrap_or(self.skill_dir).to_path_buf();
        let Some(variants) = root.get("variants").and_then(|e| e.value.as_mapping()) else {
            return;
        };
        for variant in variants {
            let arm = variant.key.as_key().unwrap_or("?");
            let skills = variant
                .value
                .get("environment")
                .map_or(&[][..], |env| items(&env.value, "skills"));
            for entry in skills {
                let Some(path) = entry.as_str() else {
                    continue;
                };
                // `${eval.parent}` is known only with the skill under test (an experiment
                // opened alone in an editor has none)
                if path.contains(evalspec::EVAL_PARENT)
                    && !self.skill_dir.join(SKILL_FILE).is_file()
                {
                    continue;
                }
                if evalspec::staged_skill_dirs(&here, path, self.skill_dir).is_empty() {
                    let message = format!(
                        "the arm `{arm}` stages `{path}`, which is neither a skill folder (with \
                         a SKILL.md) nor a folder of skills: paths are relative to the \
                         experiment file, so this is {}",
                        here.join(path.trim()).display()
                    );
                    self.push("SW405", entry.span, message);
                }
            }
        }
    }

    /// SW415: which of the evals.json dialects the file writes, and what the other tools make
    /// of it (agentskills/agentskills#459: the agentskills.io guide says `assertions`,
    /// skill-creator's schema `expectations`; SkillEvaluator reads `assertions` alone).
    fn evals_json_dialect(&mut self, root: &Node) {
        let Ok(shape) = evalspec::evals_json_shape(root) else {
            return;
        };
        let first = |key: &str| {
            shape
                .iter()
                .find_map(|(_, case)| case.get(key).map(|e| e.key.span))
        };
        let message = match (first("assertions"), first("expectations")) {
            (Some(at), None) => Some((
                at,
                "this evals.json writes `assertions`, the agentskills.io guide's name: NVIDIA SkillEvaluator reads them as behaviours to check; Anthropic skill-creator's schema (references/schemas.md) names them `expectations`, so its grader may not see them (agentskills/agentskills#459). skillwatch reads both",
            )),
            (None, Some(at)) => Some((
                at,
                "this evals.json writes `expectations`, Anthropic skill-creator's name: its grader reads them; NVIDIA SkillEvaluator reads `assertions` only and ignores these, and the agentskills.io guide calls them `assertions` (agentskills/agentskills#459). skillwatch reads both",
            )),
            (Some(at), Some(_)) => Some((
                at,
                "this evals.json writes both `assertions` (the agentskills.io guide's name, read by NVIDIA SkillEvaluator) and `expectations` (Anthropic skill-creator's): each of those tools reads one of the two lists (agentskills/agentskills#459). skillwatch reads both",
            )),
            (None, None) => None,
        };
        if let Some((at, message)) = message {
            self.push("SW415", at, message.to_string());
        }
        if self.kind != FileKind::EvalsJson {
            let head = Span::new(root.span.start, root.span.start + 1.min(root.span.len()));
            self.push(
                "SW415",
                head,
                "SkillEvaluator's YAML / JSON Lines variant of evals.json: NVIDIA SkillEvaluator reads it; Anthropic skill-creator and agentskills.io tooling read `evals/evals.json` only".into(),
            );
        }
    }
}

/// The regular expressions a case node of `dialect` writes, with where (for SW404).
fn pattern_sites<'n>(dialect: Dialect, node: &'n Node, pointer: &str) -> Vec<(String, &'n Node)> {
    let mut out = Vec::new();
    let typed = |item: &Node, types: &[&str]| {
        item.get("type")
            .and_then(|e| e.value.as_scalar())
            .is_some_and(|t| types.contains(&t.text.as_str()))
    };
    match dialect {
        Dialect::SkillValidator | Dialect::EvalsJson => {
            let (keys, types): (&[&str], &[&str]) = if dialect == Dialect::SkillValidator {
                (&["assertions"], &["output_matches", "output_not_matches"])
            } else {
                (
                    &[
                        "assertions",
                        "expected_behavior",
                        "expectations",
                        "must_not",
                    ],
                    &["contains_pattern", "not_contains_pattern"],
                )
            };
            for key in keys {
                for (i, item) in items(node, key).iter().enumerate() {
                    if typed(item, types)
                        && let Some(p) = item.get("pattern")
                    {
                        out.push((format!("{pointer}/{key}/{i}/pattern"), &p.value));
                    }
                }
            }
        }
        Dialect::Vally => {
            let types = &[
                "output-matches",
                "output-not-matches",
                "file-matches",
                "file-not-matches",
            ];
            for (i, item) in items(node, "graders").iter().enumerate() {
                if typed(item, types)
                    && let Some(p) = item.get("config").and_then(|c| c.value.get("pattern"))
                {
                    out.push((format!("{pointer}/graders/{i}/config/pattern"), &p.value));
                }
            }
        }
        Dialect::WazaTask => {
            for (i, item) in items(node, "graders").iter().enumerate() {
                let Some(config) = item.get("config").map(|e| &e.value) else {
                    continue;
                };
                for key in ["regex_match", "regex_not_match"] {
                    for (j, p) in items(config, key).iter().enumerate() {
                        out.push((format!("/graders/{i}/config/{key}/{j}"), p));
                    }
                }
            }
        }
        Dialect::SkillUpCase => {
            let mut judges: Vec<(String, &Node)> = Vec::new();
            if let Some(j) = node.get("judge") {
                judges.push(("/judge".into(), &j.value));
            }
            for (k, j) in items(node, "judges").iter().enumerate() {
                judges.push((format!("/judges/{k}"), j));
            }
            for (at, judge) in judges {
                for list in ["success", "failure"] {
                    for (i, rule) in items(judge, list).iter().enumerate() {
                        let Some(m) = rule.get("output_matches").map(|e| &e.value) else {
                            continue;
                        };
                        for key in ["all", "any", "not"] {
                            for (j, p) in items(m, key).iter().enumerate() {
                                out.push((format!("{at}/{list}/{i}/output_matches/{key}/{j}"), p));
                            }
                        }
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// The items of a list field (empty when absent or not a list).
fn items<'n>(node: &'n Node, key: &str) -> &'n [Node] {
    node.get(key)
        .and_then(|e| e.value.as_sequence())
        .unwrap_or(&[])
}

/// A case's name or id as compared for duplicates: integers as their decimal text.
fn case_key(value: &Node) -> Option<String> {
    let scalar = value.as_scalar()?;
    match scalar.resolve() {
        Resolved::Null => None,
        Resolved::Int(i) => Some(i.to_string()),
        _ => Some(scalar.text.clone()),
    }
}

/// A prompt's text prepared for [`Haystack::mention`]: lower-cased once.
struct Haystack<'t> {
    text: &'t str,
    /// `text` lower-cased, when that keeps every byte offset (None for the rare scripts
    /// whose lower case changes byte lengths: offsets would not map back).
    lower: Option<String>,
}

impl<'t> Haystack<'t> {
    fn new(text: &'t str) -> Haystack<'t> {
        let lower = text.to_lowercase();
        Haystack {
            text,
            lower: (lower.len() == text.len()).then_some(lower),
        }
    }

    /// Where the text names the skill `name`, as a byte range. A multi-word name
    /// (`dump-collect`) counts anywhere as a whole token; a one-word name (`pdf`) only as
    /// `$pdf`, `/pdf`, or next to the word "skill", since the word alone is usually just the
    /// subject of the task. Case-insensitive, except in the rare scripts above.
    fn mention(&self, name: &str) -> Option<(usize, usize)> {
        match &self.lower {
            Some(lower) => mention_exact(lower, &name.to_lowercase()),
            None => mention_exact(self.text, name),
        }
    }
}

fn mention_exact(text: &str, name: &str) -> Option<(usize, usize)> {
    if name.is_empty() {
        return None;
    }
    let multi_word = name.contains(['-', '_']);
    let is_token = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    for (start, _) in text.match_indices(name) {
        let end = start + name.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        if before.is_some_and(is_token) || after.is_some_and(is_token) {
            continue;
        }
        if multi_word || single_word_context(text, start, end, before) {
            return Some((start, end));
        }
    }
    None
}

fn single_word_context(text: &str, start: usize, end: usize, before: Option<char>) -> bool {
    if matches!(before, Some('$' | '/')) {
        return true;
    }
    let after = text[end..].trim_start_matches([' ', '`', '"', '\'']);
    let before_text = text[..start].trim_end_matches([' ', '`', '"', '\'']);
    after.starts_with("skill") || before_text.ends_with("skill")
}

/// The skill's own names: the folder name and the frontmatter `name` (last, as it is the
/// name agents see).
fn skill_names(skill_dir: &Path) -> Vec<String> {
    let doc = load_document(&skill_dir.join(SKILL_FILE)).ok();
    names_of(skill_dir, doc.as_ref())
}

/// The names of the skill in `skill_dir` whose SKILL.md is `doc` (None when it cannot be
/// read): the folder name, then the frontmatter `name` when it differs.
pub(crate) fn names_of(skill_dir: &Path, doc: Option<&SkillDocument>) -> Vec<String> {
    let mut names: Vec<String> = skill_dir
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .into_iter()
        .collect();
    if let Some(name) = doc.and_then(name_field)
        && !names.iter().any(|n| n == &name)
    {
        names.push(name);
    }
    names
}

/// The trimmed, non-empty `name` of a SKILL.md's frontmatter.
fn name_field(doc: &SkillDocument) -> Option<String> {
    match &doc.frontmatter {
        Frontmatter::Parsed { root, .. } => tree_names::name_in(root),
        _ => None,
    }
}

#[cfg(test)]
mod dialects;
#[cfg(test)]
mod tests;
mod tree_names;
