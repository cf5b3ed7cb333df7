//! The eval-file rules on the other tools' dialects (Vally, waza, skill-up, the evals.json
//! variants): valid files give no errors, broken ones positioned errors that name the
//! dialect, and what skillwatch does not run is said where it is written (SW416).

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::checks::Severity;

/// A repository with `plugins/p/skills/<name>/SKILL.md` and its tests tree.
struct Repo {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        fs::create_dir_all(root.join(".git")).unwrap();
        Repo { _tmp: tmp, root }
    }

    fn skill(&self, name: &str) -> PathBuf {
        let dir = self.root.join("plugins/p/skills").join(name);
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join(SKILL_FILE),
            format!("---\nname: {name}\ndescription: d\n---\nBody\n"),
        )
        .unwrap();
        dir
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }
}

fn check(path: &Path, skill: &Path) -> Vec<Diagnostic> {
    let text = fs::read_to_string(path).unwrap();
    check_eval_text(path, &text, skill, &CheckOptions::default())
}

fn errors(d: &[Diagnostic]) -> Vec<&Diagnostic> {
    d.iter().filter(|d| d.severity == Severity::Error).collect()
}

/// The text a finding of `rule` points at.
fn quoted<'t>(text: &'t str, d: &[Diagnostic], rule: &str) -> Vec<&'t str> {
    d.iter()
        .filter(|d| d.rule == rule)
        .map(|d| &text[d.span.start..d.span.end])
        .collect()
}

const VALLY: &str = r#"name: dump-collect
type: capability
config:
  timeout: 3m
  runs: 5
stimuli:
  - name: Configure dumps
    prompt: |
      Configure automatic crash dumps for my app on Linux.
    graders:
      - type: output-contains
        config:
          substring: DOTNET_DbgEnableMiniDump
      - type: prompt
      - type: pairwise
    rubric:
      - Sets DOTNET_DbgEnableMiniDump=1
  - name: Decline analysis
    prompt: Analyze my dump
    expect_activation: false
    graders:
      - type: output-matches
        config:
          pattern: out of scope|cannot
"#;

#[test]
fn a_valid_vally_spec_has_no_errors_and_says_what_is_not_run() {
    let repo = Repo::new();
    let skill = repo.skill("dump-collect");
    let path = repo.write("tests/p/dump-collect/eval.vally.yaml", VALLY);
    let d = check(&path, &skill);
    assert!(errors(&d).is_empty(), "{d:?}");
    assert_eq!(quoted(VALLY, &d, "SW416"), ["runs", "pairwise"], "{d:?}");
    let pairwise = d.iter().find(|d| d.message.contains("pairwise")).unwrap();
    assert_eq!(pairwise.severity, Severity::Warning);
    assert!(pairwise.message.starts_with("not run by skillwatch: "));
    let runs = d
        .iter()
        .find(|d| d.message.contains("`config.runs`"))
        .unwrap();
    assert_eq!(runs.severity, Severity::Info);
}

#[test]
fn a_broken_vally_spec_gives_positioned_errors_naming_the_dialect() {
    let repo = Repo::new();
    let skill = repo.skill("dump-collect");
    let text = VALLY
        .replace("type: output-contains", "type: output-contain")
        .replace(
            "          pattern: out of scope|cannot",
            "          pattern: \"(unclosed\"",
        )
        .replace("    prompt: Analyze my dump\n", "");
    let path = repo.write("tests/p/dump-collect/eval.vally.yaml", &text);
    let d = check(&path, &skill);
    let e = errors(&d);
    assert!(
        quoted(&text, &d, "SW402").contains(&"output-contain"),
        "{d:?}"
    );
    let typo = e
        .iter()
        .find(|d| &text[d.span.start..d.span.end] == "output-contain")
        .unwrap();
    assert!(
        typo.message.contains("did you mean `output-contains`"),
        "{}",
        typo.message
    );
    assert!(
        typo.message
            .contains("[read as Microsoft Vally eval spec: top-level `stimuli:`]"),
        "{}",
        typo.message
    );
    assert!(e.iter().any(|d| d.message.contains("`prompt`")), "{e:?}");
    assert_eq!(quoted(&text, &d, "SW404"), ["\"(unclosed\""], "{d:?}");
}

#[test]
fn an_experiments_plugin_arm_is_a_condition_not_a_note() {
    let repo = Repo::new();
    let skill = repo.skill("csharp-expert");
    let eval = repo.write(
        "tests/p/csharp-expert/coexistence.eval.yaml",
        "stimuli:\n  - name: a\n    prompt: Refactor this\n",
    );
    let text = "name: coexistence\nevals:\n  - tests/p/csharp-expert/coexistence.eval.yaml\nvary:\n  - /environment/skills\nbaseline: baseline\nvariants:\n  baseline:\n    environment:\n      skills: []\n  skilled:\n    environment:\n      skills:\n        - plugins/p/skills/csharp-expert\n  plugin:\n    environment:\n      skills:\n        - plugins/p/skills/csharp-expert\n        - plugins/p/skills/other\n";
    let exp = repo.write("coexistence.experiment.yaml", text);
    // an arm staging a folder that is no skill: said where it is written (SW405), from the
    // rule the runner stages by
    let d = check(&exp, &skill);
    assert_eq!(
        quoted(text, &d, "SW405"),
        ["plugins/p/skills/other"],
        "{d:?}"
    );
    assert!(
        d.iter().any(|d| d.rule == "SW405"
            && d.message
                .contains("the arm `plugin` stages `plugins/p/skills/other`")),
        "{d:?}"
    );
    // `${eval.parent}` names the skill under test's folder: staged, nothing to say
    let by_variable = text.replace(
        "        - plugins/p/skills/other",
        "        - plugins/p/skills/${eval.parent}",
    );
    repo.write("coexistence.experiment.yaml", &by_variable);
    assert!(quoted(&by_variable, &check(&exp, &skill), "SW405").is_empty());
    // opened alone (an editor, no skill under test): the variable cannot be resolved, and
    // nothing is said about it
    let alone = check(&exp, &repo.root);
    assert!(
        quoted(&by_variable, &alone, "SW405").is_empty(),
        "{alone:?}"
    );
    repo.write("coexistence.experiment.yaml", text);
    repo.skill("other");
    let files = evalspec::find_eval_files(&skill);
    let paths: Vec<_> = files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(paths, [eval.clone(), exp.clone()]);
    assert_eq!(files[1].role, evalspec::Role::Experiment);
    let d = check(&exp, &skill);
    assert!(errors(&d).is_empty(), "{d:?}");
    // the plugin arm runs as the third condition: nothing to say about it
    assert!(quoted(text, &d, "SW416").is_empty(), "{d:?}");
    // the suite: the spec's case, and the plugin arm read from the experiment
    let suite = evalspec::load_suite(&skill).unwrap();
    assert_eq!(suite.cases.len(), 1);
    assert!(suite.notes.is_empty(), "{:?}", suite.notes);
    let plugin = suite.plugin.expect("the plugin arm");
    assert_eq!(plugin.name, "plugin");
    assert_eq!(plugin.skills.len(), 2);
    assert!(
        plugin.file.ends_with("../coexistence.experiment.yaml"),
        "{}",
        plugin.file
    );
    // a batch over two skills of the same experiment reports it once
    let reports = crate::checks::check_skill_dir(&skill, &CheckOptions::default());
    assert_eq!(reports.iter().filter(|r| r.path == exp).count(), 1);
    // a second experiment's plugin arm: the first stays the condition, the second a note
    repo.write("z.experiment.yaml", &text.replace("  plugin:", "  whole:"));
    let suite = evalspec::load_suite(&skill).unwrap();
    assert_eq!(suite.plugin.expect("the first plugin arm").name, "plugin");
    let note = &suite.notes[..];
    assert_eq!(note.len(), 1, "{note:?}");
    assert!(
        note[0]
            .message
            .starts_with("not run by skillwatch yet: a second plugin arm `whole`")
    );
    assert!(
        note[0].file.ends_with("z.experiment.yaml") && note[0].line == 15,
        "{note:?}"
    );
}

#[test]
fn waza_eval_and_tasks() {
    let repo = Repo::new();
    let skill = repo.skill("code-explainer");
    let eval = "name: e\nskill: code-explainr\nversion: \"1.0\"\nconfig:\n  trials_per_task: 3\n  timeout_seconds: 300\n  executor: mock\n  model: m\nmetrics:\n  - name: task_completion\n    weight: 0.4\n    threshold: 0.8\ntasks:\n  - \"tasks/*.yaml\"\n  - \"more/*.yaml\"\n";
    let eval_path = repo.write("plugins/p/skills/code-explainer/evals/eval.yaml", eval);
    let task = "id: t1\nname: Explain\ninputs:\n  prompt: What does this code do?\n  files:\n    - path: missing.js\ngraders:\n  - name: g\n    type: text\n    config:\n      regex_match: [\"(x\"]\n";
    let task_path = repo.write("plugins/p/skills/code-explainer/evals/tasks/t1.yaml", task);
    let d = check(&eval_path, &skill);
    // the only error: the glob that matches no task file
    assert_eq!(errors(&d).len(), 1, "{d:?}");
    assert_eq!(quoted(eval, &d, "SW413"), ["code-explainr"]);
    assert_eq!(quoted(eval, &d, "SW405"), ["\"more/*.yaml\""]);
    assert_eq!(
        quoted(eval, &d, "SW416"),
        ["trials_per_task", "executor", "model", "metrics"],
        "{d:?}"
    );
    let d = check(&task_path, &skill);
    assert_eq!(quoted(task, &d, "SW404"), ["\"(x\""], "{d:?}");
    assert_eq!(quoted(task, &d, "SW405"), ["missing.js"], "{d:?}");
    // the check of the skill checks the task file too
    let reports = crate::checks::check_skill_dir(&skill, &CheckOptions::default());
    assert!(
        reports.iter().any(|r| r.path == task_path),
        "{:?}",
        reports.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    let broken = "id: t1\nname: Explain\ninputs:\n  promt: What does this code do?\n";
    let path = repo.write(
        "plugins/p/skills/code-explainer/evals/tasks/t2.yaml",
        broken,
    );
    let d = check(&path, &skill);
    assert_eq!(quoted(broken, &d, "SW403"), ["promt"], "{d:?}");
    assert!(
        errors(&d)
            .iter()
            .any(|d| d.message.contains("`prompt`") && d.message.contains("microsoft/waza task")),
        "{d:?}"
    );
}

#[test]
fn skill_up_eval_and_cases() {
    let repo = Repo::new();
    let skill = repo.skill("code-stats");
    let eval = "schema_version: v1alpha1\nengine:\n  name: claude_code\ncases:\n  files:\n    - evals/cases/a.yaml\n    - evals/cases/gone.yaml\n";
    let eval_path = repo.write("plugins/p/skills/code-stats/evals/eval.yaml", eval);
    let case = "id: a\ninput:\n  prompt: Count lines\nexpect:\n  must_contain: [\"Total Files: 3\"]\njudge:\n  type: script\n  script_path: evals/check.sh\n";
    let case_path = repo.write("plugins/p/skills/code-stats/evals/cases/a.yaml", case);
    let d = check(&eval_path, &skill);
    // the only error: the case file that does not exist
    assert_eq!(errors(&d).len(), 1, "{d:?}");
    assert_eq!(quoted(eval, &d, "SW405"), ["evals/cases/gone.yaml"]);
    let d = check(&case_path, &skill);
    assert!(errors(&d).is_empty(), "{d:?}");
    assert_eq!(quoted(case, &d, "SW416"), ["script"]);
    let broken = "id: a\ninput:\n  text: Count lines\n";
    let path = repo.write("plugins/p/skills/code-stats/evals/cases/b.yaml", broken);
    let d = check(&path, &skill);
    assert_eq!(quoted(broken, &d, "SW403"), ["text"], "{d:?}");
}

#[test]
fn sw415_says_which_evals_json_dialect_a_file_writes() {
    let repo = Repo::new();
    let skill = repo.skill("pdf");
    let case = |key: &str| {
        format!(
            "{{\"skill_name\": \"pdf\", \"evals\": [{{\"id\": 1, \"prompt\": \"p\", \"expected_output\": \"o\", \"{key}\": [\"x\"]}}]}}"
        )
    };
    for (key, says) in [
        ("assertions", "agentskills.io guide's name"),
        ("expectations", "skill-creator's name"),
    ] {
        let text = case(key);
        let path = repo.write("plugins/p/skills/pdf/evals/evals.json", &text);
        let d = check(&path, &skill);
        assert_eq!(quoted(&text, &d, "SW415"), [format!("\"{key}\"").as_str()]);
        assert!(d[0].message.contains(says), "{}", d[0].message);
        assert_eq!(d[0].severity, Severity::Info);
    }
    let jsonl = "{\"id\": \"a\", \"question\": \"q\", \"expected_skill\": null}\n{\"id\": \"b\", \"question\": \"q2\", \"expected_skill\": \"pdf\"}\n";
    fs::remove_file(repo.root.join("plugins/p/skills/pdf/evals/evals.json")).unwrap();
    let path = repo.write("plugins/p/skills/pdf/evals/evals.jsonl", jsonl);
    let d = check(&path, &skill);
    assert!(errors(&d).is_empty(), "{d:?}");
    assert!(
        d.iter()
            .any(|d| d.rule == "SW415" && d.message.contains("JSON Lines")),
        "{d:?}"
    );
    let suite = evalspec::load_suite(&skill).unwrap();
    assert_eq!(suite.cases.len(), 2);
    assert_eq!(suite.cases[0].activation, Activation::MustNotTrigger);
    let broken = "{\"id\": \"a\", \"question\": \"q\"}\n{\"id\": \"b\",\n \"question\": \"q\"}\n";
    let d = check(
        &repo.write("plugins/p/skills/pdf/evals/evals.jsonl", broken),
        &skill,
    );
    assert_eq!(rules(&d), ["SW401"], "{d:?}");
    assert!(
        d[0].message.contains("one JSON value per line"),
        "{}",
        d[0].message
    );
}

#[test]
fn an_eval_yaml_no_key_places_says_how_it_was_read() {
    let repo = Repo::new();
    let skill = repo.skill("s");
    let text = "cases_list:\n  - name: a\n";
    let path = repo.write("plugins/p/skills/s/tests/eval.yaml", text);
    let d = check(&path, &skill);
    assert!(
        d.iter().any(|d| d.rule == "SW402"
            && d.message
                .contains("read as skill-validator eval.yaml: the file name")
            && d.message.contains("`stimuli:` Vally's")),
        "{d:?}"
    );
}

fn rules(d: &[Diagnostic]) -> Vec<&str> {
    d.iter().map(|d| d.rule).collect()
}
