//! Skill execution evidence from the trajectory: did the agent load the skill the case expects
//! (or, in a negative case, leave the skill under test alone), and did it run the script the
//! case names (ACES `expected_script`).
//!
//! Activation follows ACES (anchors-evals.md b3.3): the expected skill loaded scores 1, only an
//! acceptable alternate 0.75, neither 0; a negative case scores 1 when the skill under test was
//! not loaded. The same rule applies in both conditions, so a baseline trial of a positive case
//! scores 0 (its target is withheld): that is the discoverability the skill adds.

use crate::evalspec::{Activation, Case};
use crate::trajectory::{Trajectory, skill_loads};

use super::{Check, CheckGroup};

/// Partial credit for loading an acceptable alternate instead of the expected skill.
pub const ACCEPTABLE_ALTERNATE_SCORE: f64 = 0.75;

/// What the trajectory shows about skill use, scored.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    /// Skills the agent read, in order, without repeats (failed attempts are not loads).
    pub loaded: Vec<String>,
    /// Skills the agent tried to read without success, with why, in order, without repeats
    /// of a skill it did read later.
    pub failed_loads: Vec<(String, String)>,
    /// Whether the skill under test was loaded.
    pub target_invoked: bool,
    /// Activation score on [0, 1]; `None` when the case does not say whether to activate.
    pub activation: Option<f64>,
    /// 1 when the expected script ran, 0 when not; `None` when the case names none.
    pub script: Option<f64>,
    /// The checks behind the scores, for the trial's record.
    pub checks: Vec<Check>,
}

/// Read skill use off `trajectory` for `case`, where `skill` is the skill under test.
pub fn assess(case: &Case, skill: &str, trajectory: Option<&Trajectory>) -> Execution {
    let mut loaded: Vec<String> = Vec::new();
    let mut failed_loads: Vec<(String, String)> = Vec::new();
    if let Some(t) = trajectory {
        for load in skill_loads(t) {
            match load.failure {
                None if !loaded.contains(&load.skill) => loaded.push(load.skill),
                None => {}
                Some(why) if !failed_loads.iter().any(|(s, _)| *s == load.skill) => {
                    failed_loads.push((load.skill, why))
                }
                Some(_) => {}
            }
        }
    }
    failed_loads.retain(|(skill, _)| !loaded.contains(skill));
    let has = |name: &str| loaded.iter().any(|l| l.eq_ignore_ascii_case(name));
    let target_invoked = has(skill);
    let mut checks = Vec::new();
    let activation = match &case.activation {
        Activation::Expected {
            skill: expected,
            acceptable,
        } => {
            let want = expected.as_deref().unwrap_or(skill);
            let score = if has(want) {
                1.0
            } else if let Some(alt) = acceptable.iter().find(|a| has(a)) {
                checks.push(note(format!("loaded the acceptable alternate {alt}")));
                ACCEPTABLE_ALTERNATE_SCORE
            } else {
                0.0
            };
            checks.push(Check {
                group: CheckGroup::Activation,
                kind: "expect_activation".into(),
                description: format!("the agent loaded the skill {want}"),
                passed: score > 0.0,
                message: (score == 0.0).then(|| {
                    let attempt = failed_loads
                        .iter()
                        .find(|(s, _)| s.eq_ignore_ascii_case(want))
                        .map_or_else(String::new, |(_, why)| {
                            format!(" (an attempt to read it failed: {why})")
                        });
                    format!(
                        "expected the agent to load {want}, found {}{attempt}",
                        loaded_list(&loaded)
                    )
                }),
            });
            Some(score)
        }
        Activation::MustNotTrigger => {
            checks.push(Check {
                group: CheckGroup::Activation,
                kind: "must_not_trigger".into(),
                description: format!("the agent did not load the skill {skill}"),
                passed: !target_invoked,
                message: target_invoked.then(|| {
                    format!(
                        "expected {skill} not to be loaded in this negative case, found it loaded"
                    )
                }),
            });
            Some(if target_invoked { 0.0 } else { 1.0 })
        }
        Activation::Unspecified => None,
    };
    let script = case.expected_script.as_deref().map(|script| {
        let ran = trajectory.is_some_and(|t| ran_script(t, script));
        checks.push(Check {
            group: CheckGroup::Activation,
            kind: "expected_script".into(),
            description: format!("the agent ran {script}"),
            passed: ran,
            message: (!ran).then(|| format!("expected a tool call running {script}, found none")),
        });
        if ran { 1.0 } else { 0.0 }
    });
    Execution {
        loaded,
        failed_loads,
        target_invoked,
        activation,
        script,
        checks,
    }
}

/// Whether a tool call's arguments name the script (by its file name, so `python
/// scripts/fill.py`, `./fill.py` and an absolute path into the staged skill all count).
fn ran_script(t: &Trajectory, script: &str) -> bool {
    let name = script.rsplit('/').next().unwrap_or(script);
    if name.is_empty() {
        return false;
    }
    t.tool_calls().any(|(_, call)| {
        call.arguments.values().any(|v| match v {
            serde_json::Value::String(s) => s.contains(name),
            other => other.to_string().contains(name),
        })
    })
}

fn note(text: String) -> Check {
    Check {
        group: CheckGroup::Activation,
        kind: "acceptable_skill".into(),
        description: text,
        passed: true,
        message: None,
    }
}

fn loaded_list(loaded: &[String]) -> String {
    if loaded.is_empty() {
        "no skill loaded".into()
    } else {
        format!("only {} loaded", loaded.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::{Agent, Step, StepSource, ToolCall};

    fn with_calls(calls: &[(&str, serde_json::Value)]) -> Trajectory {
        let mut t = Trajectory::new(Agent {
            name: "a".into(),
            version: "1".into(),
            model_name: None,
            tool_definitions: None,
            extra: None,
        });
        let mut step = Step::new(0, StepSource::Agent, "");
        step.tool_calls = Some(
            calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| ToolCall {
                    tool_call_id: format!("c{i}"),
                    function_name: (*name).into(),
                    arguments: args.as_object().cloned().unwrap_or_default(),
                    extra: None,
                })
                .collect(),
        );
        t.push(step);
        t
    }

    fn case(activation: Activation) -> Case {
        let yaml = "scenarios:\n  - name: a\n    prompt: p\n";
        let mut c = crate::evalspec::parse_suite(crate::evalspec::FileKind::EvalYaml, yaml, "t")
            .unwrap()
            .cases
            .remove(0);
        c.activation = activation;
        c
    }

    #[test]
    fn positive_cases_score_the_expected_skill_and_alternates() {
        let expected = Activation::Expected {
            skill: None,
            acceptable: vec!["other".into()],
        };
        let t = with_calls(&[("Skill", serde_json::json!({"skill": "pdf"}))]);
        let e = assess(&case(expected.clone()), "pdf", Some(&t));
        assert_eq!((e.activation, e.target_invoked), (Some(1.0), true));
        let alt = with_calls(&[("Skill", serde_json::json!({"skill": "other"}))]);
        let e = assess(&case(expected.clone()), "pdf", Some(&alt));
        assert_eq!(e.activation, Some(ACCEPTABLE_ALTERNATE_SCORE));
        let e = assess(&case(expected), "pdf", None);
        assert_eq!(e.activation, Some(0.0));
        assert!(
            e.checks[0]
                .message
                .as_ref()
                .unwrap()
                .contains("no skill loaded")
        );
    }

    #[test]
    fn negative_cases_pass_when_the_skill_stays_unloaded() {
        let t = with_calls(&[(
            "read_file",
            serde_json::json!({"path": ".agents/skills/pdf/SKILL.md"}),
        )]);
        let e = assess(&case(Activation::MustNotTrigger), "pdf", Some(&t));
        assert_eq!(e.activation, Some(0.0));
        assert!(!e.checks[0].passed);
        let e = assess(&case(Activation::MustNotTrigger), "other", Some(&t));
        assert_eq!(e.activation, Some(1.0));
        assert_eq!(
            assess(&case(Activation::Unspecified), "pdf", Some(&t)).activation,
            None
        );
    }

    #[test]
    fn expected_script_is_found_in_any_argument() {
        let mut c = case(Activation::Unspecified);
        c.expected_script = Some("scripts/fill_form.py".into());
        let t = with_calls(&[(
            "Bash",
            serde_json::json!({"command": "python .claude/skills/pdf/scripts/fill_form.py in.pdf"}),
        )]);
        assert_eq!(assess(&c, "pdf", Some(&t)).script, Some(1.0));
        let none = with_calls(&[("Bash", serde_json::json!({"command": "ls"}))]);
        assert_eq!(assess(&c, "pdf", Some(&none)).script, Some(0.0));
    }
}
