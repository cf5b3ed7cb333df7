//! Microsoft Vally's eval spec (`stimuli:`) and experiment files (`variants:`) -> [`Suite`].
//!
//! The spec is Vally's (microsoft.github.io/vally, reference/eval-spec and the grader catalog)
//! as dotnet/skills writes it in `tests/<plugin>/<skill>/eval.vally.yaml`: `stimuli[]` with
//! name, prompt, graders `[{type, config}]`, rubric, constraints, environment (files, commands,
//! skills) and `expect_activation`; a root `environment` merged into every stimulus; `config`
//! (or its newer name `defaults`: runs, timeout, model, judge_model, executor); `scoring`.
//!
//! What a grader checks deterministically becomes an [`Assertion`]; `prompt` (the LLM judge
//! over `rubric`) becomes judged criteria; what the Suite cannot express (pairwise graders,
//! scoring weights and thresholds, run-command and tool-call graders, skills staged beside
//! the skill, an experiment's other variants) becomes a [`super::Note`] where it is written.
//! An experiment's plugin arm becomes the suite's [`PluginArm`], run as a third condition.

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use crate::yaml::Node;

use super::ParseError;
use super::eval_yaml::DEFAULT_TIMEOUT_SECS;
use super::fields::{Fields, Texts, describe, key_span, scalar_text};
use super::mapping::{
    Notes, beside, case_sensitive, contains_exactly, duration_secs, lacks_exactly,
    run_setting_notes,
};
use super::model::{
    Activation, Assertion, Case, Constraints, Criterion, CriterionKind, FileContent, Format,
    Judged, Origin, PluginArm, Setup, SetupFile, Suite,
};

/// Every grader type Vally ships (its grader catalog), with whether skillwatch runs it.
pub const GRADER_TYPES: &[&str] = &[
    "completed",
    "error-count",
    "exit-success",
    "file-contains",
    "file-exists",
    "file-matches",
    "file-not-contains",
    "file-not-exists",
    "file-not-matches",
    "output-contains",
    "output-matches",
    "output-not-contains",
    "output-not-matches",
    "pairwise",
    "prompt",
    "panel",
    "run-command",
    "program",
    "tool-calls",
    "skill-invocation",
    "loop-outcome",
];

/// Read a Vally eval spec. `file` is the file's path relative to the skill folder.
pub fn suite_from_tree(root: &Node, file: &str) -> Result<Suite, ParseError> {
    let top = Fields::new(root, String::new(), Texts::AnyScalar)?;
    let mut notes = Notes::new(file);
    let timeout = config(&top, &mut notes)?;
    let shared = match top.present("environment") {
        Some(node) => environment(node, "/environment", file, &mut notes)?,
        None => Environment::default(),
    };
    if top.present("scoring").is_some() {
        notes.warn_at(
            &top,
            "scoring",
            "`scoring` (grader weights and a score threshold): a case passes under skillwatch \
             when every deterministic grader passes, and the rubric is judged beside it",
        );
    }
    let stimuli = top.present("stimuli").ok_or_else(|| {
        ParseError::shape(
            root.span,
            "expected a top-level `stimuli:` list with at least one stimulus, found none".into(),
        )
    })?;
    let items = stimuli.as_sequence().ok_or_else(|| {
        ParseError::shape(
            stimuli.span,
            format!(
                "/stimuli: expected a list of stimuli, found {}",
                describe(stimuli)
            ),
        )
    })?;
    if items.is_empty() {
        return Err(ParseError::shape(
            stimuli.span,
            "/stimuli: expected at least one stimulus, found an empty list".into(),
        ));
    }
    let cases = items
        .iter()
        .enumerate()
        .map(|(i, node)| {
            stimulus(
                node,
                format!("/stimuli/{i}"),
                file,
                timeout,
                &shared,
                &mut notes,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Suite {
        plugin: None,
        skill_name: None,
        cases,
        triggers: Vec::new(),
        notes: notes.list,
    })
}

/// `config` / `defaults`: the timeout is read, the other settings are notes.
fn config(top: &Fields<'_>, notes: &mut Notes<'_>) -> Result<Option<NonZeroU32>, ParseError> {
    let key = match (top.present("config"), top.present("defaults")) {
        (Some(_), Some(_)) => {
            let span = key_span(top.node, "defaults").unwrap_or(top.node.span);
            return Err(ParseError::shape(
                span,
                "(top level): expected one of `config` and `defaults` (`config` is Vally's \
                 older name for the same block, and Vally refuses a spec with both), found both"
                    .into(),
            ));
        }
        (Some(_), None) => "config",
        (None, Some(_)) => "defaults",
        (None, None) => return Ok(None),
    };
    let node = top.present(key).expect("present");
    let f = Fields::new(node, top.path(key), Texts::AnyScalar)?;
    run_setting_notes(
        &f,
        &[
            ("runs", "--runs N"),
            ("model", "--model"),
            ("judge_model", "--judge-model"),
            ("executor", "--harness"),
        ],
        notes,
    );
    duration_secs(&f, "timeout")
}

/// A stimulus's or the root's environment, as far as skillwatch stages it.
#[derive(Debug, Clone, Default)]
struct Environment {
    /// `src: . dest: .`: the eval file's folder copied whole.
    copy_all: bool,
    files: Vec<SetupFile>,
    commands: Vec<String>,
}

fn environment(
    node: &Node,
    pointer: &str,
    file: &str,
    notes: &mut Notes<'_>,
) -> Result<Environment, ParseError> {
    if let Some(name) = scalar_text(node, Texts::AnyScalar) {
        notes.warn(
            node.span,
            format!(
                "the named environment `{name}` (defined in .vally.yaml, outside the eval \
                 file): the workspace starts from the case's own files"
            ),
        );
        return Ok(Environment::default());
    }
    let f = Fields::new(node, pointer.to_string(), Texts::AnyScalar)?;
    let mut env = Environment {
        commands: f.text_list("commands")?,
        ..Environment::default()
    };
    if let Some(list) = f.present("files") {
        let items = list.as_sequence().ok_or_else(|| {
            ParseError::shape(
                list.span,
                format!(
                    "{}: expected a list of files, found {}",
                    f.path("files"),
                    describe(list)
                ),
            )
        })?;
        for (i, item) in items.iter().enumerate() {
            let e = Fields::new(item, format!("{}/{i}", f.path("files")), Texts::AnyScalar)?;
            let src = e.required_text("src")?;
            let dest = e.required_text("dest")?;
            let whole = |p: &str| matches!(p.trim(), "." | "./" | "");
            if whole(&src) && whole(&dest) {
                env.copy_all = true;
                continue;
            }
            env.files.push(SetupFile {
                path: dest,
                content: FileContent::Source {
                    path: beside(file, &src),
                },
            });
        }
    }
    if f.present("skills").is_some() {
        notes.warn_at(
            &f,
            "skills",
            "`environment.skills`: skillwatch stages the skill under test in the skill arm \
             only; give other skills to both arms with `skillwatch run --support-skill DIR`",
        );
    }
    for key in ["git", "commandTimeout", "mcp", "mcpServers"] {
        if f.present(key).is_some() {
            notes.warn_at(&f, key, format!("`environment.{key}`"));
        }
    }
    Ok(env)
}

fn stimulus(
    node: &Node,
    pointer: String,
    file: &str,
    timeout: Option<NonZeroU32>,
    shared: &Environment,
    notes: &mut Notes<'_>,
) -> Result<Case, ParseError> {
    let f = Fields::new(node, pointer.clone(), Texts::AnyScalar)?;
    let name = f.required_text("name")?;
    let prompt = match (f.present("prompt"), f.present("turns")) {
        (None, Some(turns)) => {
            notes.warn_at(
                &f,
                "turns",
                "a multi-turn stimulus (`turns`): only its first turn is sent",
            );
            first_turn(turns, &f)?
        }
        _ => f.required_text("prompt")?,
    };
    if f.present("simulation").is_some() {
        notes.warn_at(&f, "simulation", "`simulation` (simulated tool responses)");
    }
    let own = match f.present("environment") {
        Some(env) => environment(env, &f.path("environment"), file, notes)?,
        None => Environment::default(),
    };
    let mut criteria = rubric(&f)?;
    let assertions = graders(&f, &mut criteria, notes)?;
    let mut extra = BTreeMap::new();
    if let Some(tags) = f.present("tags") {
        extra.insert("tags".to_string(), tags.to_json());
    }
    Ok(Case {
        id: name.clone(),
        name,
        prompt,
        setup: Setup {
            copy_test_files: shared.copy_all || own.copy_all,
            files: shared.files.iter().chain(&own.files).cloned().collect(),
            commands: shared
                .commands
                .iter()
                .chain(&own.commands)
                .cloned()
                .collect(),
        },
        assertions,
        judged: Judged {
            expected_output: None,
            criteria,
        },
        activation: match f.optional_bool("expect_activation")? {
            Some(false) => Activation::MustNotTrigger,
            _ => Activation::Expected {
                skill: None,
                acceptable: Vec::new(),
            },
        },
        timeout_secs: Some(
            timeout.unwrap_or(NonZeroU32::new(DEFAULT_TIMEOUT_SECS).expect("non-zero")),
        ),
        constraints: constraints(&f, notes)?,
        expected_script: None,
        extra,
        origin: Origin {
            file: file.to_string(),
            format: Format::Vally,
            span: node.span,
            pointer,
        },
    })
}

fn first_turn(turns: &Node, f: &Fields<'_>) -> Result<String, ParseError> {
    let first = turns.as_sequence().and_then(|t| t.first()).ok_or_else(|| {
        ParseError::shape(
            turns.span,
            format!(
                "{}: expected a list of turns, found {}",
                f.path("turns"),
                describe(turns)
            ),
        )
    })?;
    if let Some(text) = scalar_text(first, Texts::AnyScalar) {
        return Ok(text.to_string());
    }
    let t = Fields::new(first, format!("{}/0", f.path("turns")), Texts::AnyScalar)?;
    match t.optional_text("prompt")? {
        Some(p) => Ok(p),
        None => t.required_text("content"),
    }
}

fn rubric(f: &Fields<'_>) -> Result<Vec<Criterion>, ParseError> {
    let items = match f.present("rubric") {
        None => return Ok(Vec::new()),
        Some(node) if scalar_text(node, Texts::AnyScalar).is_some() => {
            vec![f.required_text("rubric")?]
        }
        Some(_) => f.text_list("rubric")?,
    };
    Ok(items
        .into_iter()
        .map(|text| Criterion {
            kind: CriterionKind::Rubric,
            text,
            name: None,
        })
        .collect())
}

fn graders(
    f: &Fields<'_>,
    criteria: &mut Vec<Criterion>,
    notes: &mut Notes<'_>,
) -> Result<Vec<Assertion>, ParseError> {
    let Some(node) = f.present("graders") else {
        return Ok(Vec::new());
    };
    let items = node.as_sequence().ok_or_else(|| {
        ParseError::shape(
            node.span,
            format!(
                "{}: expected a list of graders, found {}",
                f.path("graders"),
                describe(node)
            ),
        )
    })?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let g = Fields::new(item, format!("{}/{i}", f.path("graders")), Texts::AnyScalar)?;
        let kind = g.required_text("type")?;
        let empty = Node {
            span: item.span,
            value: crate::yaml::Value::Mapping(Vec::new()),
        };
        let config_node = g.present("config").unwrap_or(&empty);
        let c = Fields::new(config_node, g.path("config"), Texts::AnyScalar)?;
        if let Some(a) = grader(&kind, &g, &c, criteria, notes)? {
            out.push(a);
        }
    }
    Ok(out)
}

/// One grader: the assertion it is, or `None` with a note (or judged criteria) instead.
fn grader(
    kind: &str,
    g: &Fields<'_>,
    c: &Fields<'_>,
    criteria: &mut Vec<Criterion>,
    notes: &mut Notes<'_>,
) -> Result<Option<Assertion>, ParseError> {
    let negate = c.optional_bool("negate")?.unwrap_or(false);
    let type_span = key_span(g.node, "type").map(|_| g.get("type").expect("present").span);
    let at = type_span.unwrap_or(g.node.span);
    let pattern = |key: &str| -> Result<_, ParseError> {
        let text = c.required_text(key)?;
        let node = c.get(key).expect("present");
        case_sensitive(&text, node, &c.path(key))
    };
    Ok(Some(match (kind, negate) {
        ("output-contains", false) | ("output-not-contains", true) => {
            let value = c.required_text("substring")?;
            match c.optional_bool("case_sensitive")? {
                Some(true) => contains_exactly(&value),
                _ => Assertion::OutputContains { value },
            }
        }
        ("output-not-contains", false) | ("output-contains", true) => {
            let value = c.required_text("substring")?;
            match c.optional_bool("case_sensitive")? {
                Some(true) => lacks_exactly(&value),
                _ => Assertion::OutputNotContains { value },
            }
        }
        ("output-matches", false) | ("output-not-matches", true) => Assertion::OutputMatches {
            pattern: pattern("pattern")?,
        },
        ("output-not-matches", false) | ("output-matches", true) => Assertion::OutputNotMatches {
            pattern: pattern("pattern")?,
        },
        ("file-exists", false) | ("file-not-exists", true) => Assertion::FileExists {
            path: c.required_text("path")?,
        },
        ("file-not-exists", false) | ("file-exists", true) => Assertion::FileNotExists {
            path: c.required_text("path")?,
        },
        ("file-contains", false) | ("file-not-contains", true) => Assertion::FileContains {
            path: c.required_text("path")?,
            value: c.required_text("value")?,
        },
        ("file-not-contains", false) | ("file-contains", true) => Assertion::FileNotContains {
            path: c.required_text("path")?,
            value: c.required_text("value")?,
        },
        ("exit-success", _) => Assertion::ExitSuccess,
        ("completed", _) => {
            // "non-empty output, no errors, turn completed": an errored or timed-out trial is
            // never a pass under skillwatch, so what is left is the non-empty output
            Assertion::ExitSuccess
        }
        ("prompt" | "panel", _) => {
            if let Some(text) = c.optional_text("prompt")? {
                criteria.push(Criterion {
                    kind: CriterionKind::Rubric,
                    text,
                    name: g.optional_text("name")?,
                });
            }
            if kind == "panel" {
                notes.warn(
                    at,
                    "the `panel` grader's several judges: skillwatch asks its one judge model",
                );
            }
            return Ok(None);
        }
        ("pairwise", _) => {
            notes.warn(
                at,
                "the `pairwise` grader (a judge comparing the baseline and skilled answers, \
                 position-swapped): skillwatch judges the rubric on each trial and takes the \
                 lift from the pairs of trials",
            );
            return Ok(None);
        }
        (other, _) => {
            notes.warn(at, format!("the `{other}` grader"));
            return Ok(None);
        }
    }))
}

fn constraints(f: &Fields<'_>, notes: &mut Notes<'_>) -> Result<Constraints, ParseError> {
    let Some(node) = f.present("constraints") else {
        return Ok(Constraints::default());
    };
    let c = Fields::new(node, f.path("constraints"), Texts::AnyScalar)?;
    for key in ["reject_skills", "expect_skills"] {
        if c.present(key).is_some() {
            notes.warn_at(
                &c,
                key,
                format!(
                    "`constraints.{key}`: the skill arm has the skill under test staged; a \
                     case where it must stay unused is written `expect_activation: false`"
                ),
            );
        }
    }
    Ok(Constraints {
        expect_tools: c.text_list("expect_tools")?,
        reject_tools: c.text_list("reject_tools")?,
        max_turns: c.optional_positive_u32("max_turns")?,
        max_tokens: c.optional_positive("max_tokens")?,
    })
}

/// Vally's variable for the eval spec's folder, in experiment paths.
pub const EVAL_PARENT: &str = "${eval.parent}";

/// The skill folders an experiment arm's `environment.skills` entry stages, as Vally resolves
/// it from the experiment's folder `base`: a path naming a skill folder is that skill, one
/// naming a folder of skills (a plugin's `skills/`) is every skill directly in it, in name
/// order (canonical paths). Empty when it names neither: the runner refuses such an arm and
/// `check` says so where it is written (SW405), from this one rule. `${eval.parent}` (Vally's
/// name for the folder holding the eval spec, in dotnet/skills' layout the skill's name) is
/// the name of `skill_dir`, the skill under test's folder.
pub fn staged_skill_dirs(
    base: &std::path::Path,
    entry: &str,
    skill_dir: &std::path::Path,
) -> Vec<std::path::PathBuf> {
    let is_skill = |d: &std::path::Path| d.join(crate::skill::SKILL_FILE).is_file();
    let folder = skill_dir.file_name().unwrap_or_default().to_string_lossy();
    let entry = entry.trim().replace(EVAL_PARENT, &folder);
    let Ok(dir) = base.join(entry).canonicalize() else {
        return Vec::new();
    };
    if is_skill(&dir) {
        return vec![dir];
    }
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|d| is_skill(d))
        .collect();
    found.sort();
    found
}

/// Read a Vally experiment file: no cases; its plugin arm, and a note for every arm
/// skillwatch does not run. `skill` is the skill under test when the experiment is read for
/// one (its name picks the skilled arm among variants that load one skill each).
///
/// An arm whose `environment.skills` is empty is the baseline, the one loading the skill
/// under test alone is the skilled arm (skillwatch's two arms); an arm loading several
/// skills, or the folder of skills holding the skilled arm's skill, is the plugin arm (the
/// whole plugin beside the skill), run as the third condition (the first such arm: a second
/// gets a note). Any other arm (another skill, another model) is another comparison: a note
/// at its name.
pub fn experiment_from_tree(
    root: &Node,
    file: &str,
    skill: Option<&str>,
) -> Result<Suite, ParseError> {
    let top = Fields::new(root, String::new(), Texts::AnyScalar)?;
    let mut notes = Notes::new(file);
    if let Some(node) = top.present("overrides") {
        let o = Fields::new(node, "/overrides".into(), Texts::AnyScalar)?;
        run_setting_notes(
            &o,
            &[
                ("runs", "--runs N"),
                ("model", "--model"),
                ("judge_model", "--judge-model"),
            ],
            &mut notes,
        );
    }
    if top.present("matrix").is_some() {
        notes.warn_at(&top, "matrix", "the experiment's `matrix` of variants");
    }
    let plugin = match top.present("variants") {
        Some(node) => arms(node, file, skill, &mut notes)?,
        None => None,
    };
    Ok(Suite {
        plugin,
        skill_name: None,
        cases: Vec::new(),
        triggers: Vec::new(),
        notes: notes.list,
    })
}

/// The experiment's `variants`: the plugin arm, if one, and a note for each arm not run.
fn arms(
    node: &Node,
    file: &str,
    skill: Option<&str>,
    notes: &mut Notes<'_>,
) -> Result<Option<PluginArm>, ParseError> {
    let variants = node.as_mapping().ok_or_else(|| {
        ParseError::shape(
            node.span,
            format!(
                "/variants: expected a mapping of named variants, found {}",
                describe(node)
            ),
        )
    })?;
    let arms = variants
        .iter()
        .map(|e| Variant::read(&e.value, e.key.as_key().unwrap_or("?")))
        .collect::<Result<Vec<_>, _>>()?;
    let skilled = skilled_arm(&arms, skill);
    // the skilled arm's staged skill, for telling a whole plugin's folder staged alone
    let skilled_path = skilled.and_then(|i| match &arms[i] {
        Variant::Skills(list) => list.first().map(|p| p.trim_end_matches('/').to_string()),
        Variant::Other => None,
    });
    let holds_skill = |dir: &str| {
        skilled_path
            .as_deref()
            .is_some_and(|p| p.starts_with(&format!("{}/", dir.trim_end_matches('/'))))
    };
    let mut plugin: Option<PluginArm> = None;
    for (i, (entry, arm)) in variants.iter().zip(&arms).enumerate() {
        let name = entry.key.as_key().unwrap_or("?");
        let span = entry.key.span;
        match arm {
            Variant::Skills(list)
                if list.len() > 1 || (list.len() == 1 && holds_skill(&list[0])) =>
            {
                match &plugin {
                    None => {
                        plugin = Some(PluginArm {
                            name: name.to_owned(),
                            file: file.to_owned(),
                            span,
                            skills: list.clone(),
                        })
                    }
                    Some(first) => notes.warn_yet(
                        span,
                        format!(
                            "a second plugin arm `{name}`; skillwatch runs `{}` as the plugin \
                             condition",
                            first.name
                        ),
                    ),
                }
            }
            Variant::Skills(list) if list.len() == 1 && skilled != Some(i) => notes.warn(
                span,
                format!(
                    "the variant `{name}`, which stages `{}` instead of the skill under test",
                    list[0]
                ),
            ),
            Variant::Other => notes.warn(
                span,
                format!(
                    "the variant `{name}`, which changes more than the skills (a model or \
                     run setting); compare models with `skillwatch compare SKILL --model A \
                     --model B`"
                ),
            ),
            Variant::Skills(_) => {}
        }
    }
    Ok(plugin)
}

/// A plugin arm read after another experiment's: a run has one plugin condition, so the
/// later arm is a note where it is written, not dropped.
pub(crate) fn second_plugin_arm(part: &mut Suite, first: &PluginArm) {
    let Some(extra) = part.plugin.take() else {
        return;
    };
    let mut notes = Notes::new(&extra.file);
    notes.warn_yet(
        extra.span,
        format!(
            "a second plugin arm `{}`; skillwatch runs `{}` of {} as the plugin condition",
            extra.name, first.name, first.file
        ),
    );
    part.notes.extend(notes.list);
}

/// One variant of an experiment.
enum Variant {
    /// It varies the staged skills alone: these.
    Skills(Vec<String>),
    /// It varies something else.
    Other,
}

impl Variant {
    fn read(node: &Node, name: &str) -> Result<Variant, ParseError> {
        let v = Fields::new(node, format!("/variants/{name}"), Texts::AnyScalar)?;
        let overrides = v
            .present("overrides")
            .and_then(|o| o.as_mapping())
            .is_some_and(|m| !m.is_empty());
        let skills = match v.present("environment") {
            Some(env) => {
                let e = Fields::new(env, v.path("environment"), Texts::AnyScalar)?;
                e.text_list("skills")?
            }
            None if overrides => return Ok(Variant::Other),
            None => Vec::new(),
        };
        Ok(if overrides {
            Variant::Other
        } else {
            Variant::Skills(skills)
        })
    }
}

/// The index of the skilled arm: the one-skill variant naming the skill under test (or the
/// eval's own folder, `${eval.parent}`), else the first one-skill variant.
fn skilled_arm(arms: &[Variant], skill: Option<&str>) -> Option<usize> {
    let single = |a: &Variant| match a {
        Variant::Skills(list) if list.len() == 1 => Some(list[0].clone()),
        _ => None,
    };
    let names_it = |path: &str| {
        let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
        last.contains(EVAL_PARENT) || skill.is_some_and(|s| last == s)
    };
    arms.iter()
        .position(|a| single(a).is_some_and(|p| names_it(&p)))
        .or_else(|| {
            arms.iter()
                .position(|a| single(a).is_some())
                .filter(|_| skill.is_none())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evalspec::model::NoteLevel;
    use crate::yaml;

    fn parse(text: &str) -> Result<Suite, ParseError> {
        suite_from_tree(
            &yaml::parse(text, 0).unwrap(),
            "../../../../tests/p/s/eval.vally.yaml",
        )
    }

    #[test]
    fn stimuli_graders_and_environment() {
        let text = r#"
name: s
config:
  timeout: 3m
  runs: 5
environment:
  commands: [npm install]
stimuli:
  - name: Configure dumps
    prompt: |
      Set up crash dumps
    environment:
      files:
        - src: fixtures/App.csproj
          dest: App/App.csproj
    graders:
      - type: output-contains
        config:
          substring: DOTNET_DbgEnableMiniDump
      - type: output-matches
        config:
          pattern: (?i)net(8|9)\.0
      - type: output-not-contains
        config:
          substring: --no-https
          case_sensitive: true
      - type: file-contains
        config:
          path: "**/*.csproj"
          value: Validation.fs
      - type: exit-success
      - type: prompt
      - type: pairwise
      - type: run-command
        config:
          command: dotnet test
    rubric:
      - Sets the variable
    constraints:
      expect_tools: [bash]
      max_turns: 12
  - name: Decline analysis
    prompt: Analyze my dump
    expect_activation: false
    environment:
      files:
        - src: .
          dest: .
"#;
        let suite = parse(text).unwrap();
        let [a, b] = &suite.cases[..] else { panic!() };
        assert_eq!(a.id, "Configure dumps");
        assert_eq!(a.timeout_secs.unwrap().get(), 180);
        assert_eq!(a.setup.commands, ["npm install"]);
        assert_eq!(
            a.setup.files[0].content,
            FileContent::Source {
                path: "../../../../tests/p/s/fixtures/App.csproj".into()
            }
        );
        assert_eq!(a.setup.files[0].path, "App/App.csproj");
        assert_eq!(a.assertions.len(), 5);
        assert_eq!(
            a.assertions[0],
            Assertion::OutputContains {
                value: "DOTNET_DbgEnableMiniDump".into()
            }
        );
        let Assertion::OutputMatches { pattern } = &a.assertions[1] else {
            panic!()
        };
        assert!(pattern.compile().is_match("NET9.0").unwrap());
        assert!(matches!(
            a.assertions[2],
            Assertion::OutputNotMatches { .. }
        ));
        assert_eq!(a.judged.criteria[0].text, "Sets the variable");
        assert_eq!(a.constraints.max_turns.unwrap().get(), 12);
        assert_eq!(a.origin.format, Format::Vally);
        assert!(b.setup.copy_test_files);
        assert_eq!(b.activation, Activation::MustNotTrigger);
        let said: Vec<_> = suite
            .notes
            .iter()
            .map(|n| (n.level, &text[n.span.start..n.span.end]))
            .collect();
        assert!(said.contains(&(NoteLevel::Info, "runs")), "{said:?}");
        assert!(said.contains(&(NoteLevel::Warning, "pairwise")), "{said:?}");
        assert!(
            said.contains(&(NoteLevel::Warning, "run-command")),
            "{said:?}"
        );
        assert!(
            suite
                .notes
                .iter()
                .all(|n| n.message.starts_with("not run by skillwatch: "))
        );
    }

    #[test]
    fn errors_point_at_the_field() {
        let cases = [
            ("stimuli: []\n", "at least one", "[]"),
            ("stimuli:\n  - prompt: p\n", "`name`", "prompt: p"),
            (
                "config: {}\ndefaults: {}\nstimuli:\n  - name: a\n    prompt: p\n",
                "both",
                "defaults",
            ),
            (
                "config:\n  timeout: soon\nstimuli:\n  - name: a\n    prompt: p\n",
                "duration",
                "soon",
            ),
            (
                "stimuli:\n  - name: a\n    prompt: p\n    graders:\n      - type: output-matches\n        config:\n          pattern: \"(x\"\n",
                "invalid regular expression",
                "\"(x\"",
            ),
        ];
        for (text, needle, at) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.message.contains(needle), "{text}: {}", err.message);
            assert!(
                text[err.span.start..].starts_with(at),
                "{text}: at {:?}",
                &text[err.span.start..]
            );
        }
    }

    #[test]
    fn experiment_names_the_arms_it_does_not_run() {
        let text = r#"
name: coexistence
evals:
  - tests/dotnet/csharp-expert/coexistence.eval.yaml
overrides:
  model: gpt-5.6-luna
vary:
  - /environment/skills
baseline: baseline
variants:
  baseline:
    environment:
      skills: []
  skilled:
    environment:
      skills:
        - plugins/dotnet/skills/csharp-expert
  plugin:
    environment:
      skills:
        - plugins/dotnet/skills/csharp-expert
        - plugins/dotnet-advanced/skills/csharp-scripts
"#;
        let suite = experiment_from_tree(
            &yaml::parse(text, 0).unwrap(),
            "x.experiment.yaml",
            Some("csharp-expert"),
        )
        .unwrap();
        assert!(suite.cases.is_empty());
        // the plugin arm is the third condition now, not a note
        let plugin = suite.plugin.as_ref().expect("the plugin arm");
        assert_eq!(plugin.name, "plugin");
        assert_eq!(plugin.file, "x.experiment.yaml");
        assert_eq!(&text[plugin.span.start..plugin.span.end], "plugin");
        assert_eq!(
            plugin.skills,
            [
                "plugins/dotnet/skills/csharp-expert",
                "plugins/dotnet-advanced/skills/csharp-scripts"
            ]
        );
        assert!(!suite.notes.iter().any(|n| n.message.contains("plugin arm")));
        assert!(
            suite
                .notes
                .iter()
                .any(|n| n.message.contains("overrides.model"))
        );
        assert_eq!(suite.notes.len(), 1, "{:?}", suite.notes);
        // read for another skill, the one-skill arm is not its skilled arm
        let other = experiment_from_tree(
            &yaml::parse(text, 0).unwrap(),
            "x.experiment.yaml",
            Some("csharp-scripts"),
        )
        .unwrap();
        assert!(
            other
                .notes
                .iter()
                .any(|n| n.message.contains("`skilled`, which stages")),
            "{:?}",
            other.notes
        );
    }
}
