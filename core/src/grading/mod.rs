//! Grading one trial: what the agent produced, checked against its case.
//!
//! Deterministic parts run in [`grade`]: the eval.yaml assertions ([`assertions`]), the
//! constraints ([`constraints`]), skill activation and expected scripts ([`execution`]), the
//! trace security scan ([`security`]). The LLM judge ([`judge`]) runs after, through a
//! transport the caller supplies; [`Grading::metrics`] and [`Grading::passed`] then combine
//! both into the six ACES metrics ([`metrics`]) and the task outcome.
//!
//! Task outcome (`passed`), skill-validator's rule (anchors-evals.md b1.1): all assertions and
//! constraints hold; a case with neither passes when its judged expectations all hold (with a
//! judge), else when the agent finished without error. A trial that timed out did not
//! complete its task. Activation is reported apart (a skill that was not loaded is a
//! discoverability problem, not a wrong answer).

pub mod assertions;
pub mod constraints;
pub mod execution;
pub mod glob;
pub mod judge;
pub mod metrics;
pub mod security;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::evalspec::{self, Case};
use crate::trajectory::Trajectory;

pub use assertions::Workspace;
pub use execution::Execution;
pub use judge::{IndependentScores, JudgeClient, JudgeFailure, PairwiseResult};
pub use security::{Finding, SecurityScan, Severity};

/// Version of the grading rules: part of a baseline's identity, so changing a rule re-runs
/// cached baselines instead of comparing them with trials graded differently.
pub const GRADING_VERSION: &str = "skillwatch-grading-1";

/// Which part of grading a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckGroup {
    /// A deterministic eval.yaml assertion.
    Assertion,
    /// A constraint (tools, turns, tokens).
    Constraint,
    /// Skill activation and expected scripts.
    Activation,
    /// A judged yes/no expectation.
    Expectation,
}

/// One graded statement about a trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// Which part of grading it belongs to.
    pub group: CheckGroup,
    /// Its type as the eval file names it (`output_contains`, `expect_tools`,
    /// `expect_activation`, `expected_behavior`, ...).
    pub kind: String,
    /// What was checked, for people.
    pub description: String,
    /// Whether it held.
    pub passed: bool,
    /// Why it failed: expected, found, where.
    pub message: Option<String>,
}

impl Check {
    /// The group of a stored check by its kind (what a re-judge reads back from the store).
    pub fn group_of_kind(kind: &str) -> CheckGroup {
        match kind {
            "expect_tools" | "reject_tools" | "max_turns" | "max_tokens" => CheckGroup::Constraint,
            "expect_activation" | "must_not_trigger" | "expected_script" | "acceptable_skill" => {
                CheckGroup::Activation
            }
            "expected_behavior" => CheckGroup::Expectation,
            _ => CheckGroup::Assertion,
        }
    }
}

/// What one trial left behind, as grading reads it.
#[derive(Debug, Clone, Copy)]
pub struct TrialInput<'a> {
    /// The agent's final output.
    pub output: &'a str,
    /// What it did (`None`: nothing could be read).
    pub trajectory: Option<&'a Trajectory>,
    /// Input plus output tokens, when reported.
    pub tokens: Option<u64>,
    /// Agent turns.
    pub turns: u32,
    /// False when the trial was killed at its timeout.
    pub finished: bool,
    /// The workspace as the agent left it.
    pub workspace: Workspace<'a>,
}

/// The deterministic grading of one trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Grading {
    /// Assertions, constraints and activation checks, in the case's order.
    pub checks: Vec<Check>,
    /// Skill use.
    pub execution: Execution,
    /// Routing and tool efficiency.
    pub efficiency: Option<f64>,
    /// The trace scan (`None` without a trajectory).
    pub security: Option<SecurityScan>,
    /// False when the trial timed out.
    pub finished: bool,
}

/// Grade a trial of `case`, where `skill` is the skill under test.
pub fn grade(case: &Case, skill: &str, input: TrialInput<'_>) -> Grading {
    grade_decided(case, skill, input, &|_, _| None)
}

/// [`grade`], where `decided` gives the check of the assertion at an index when it was
/// decided elsewhere (a Harbor sandbox's verifier decides the `file_*` ones, which need the
/// files only the sandbox has): those assertions never look at `input.workspace`.
pub fn grade_decided(
    case: &Case,
    skill: &str,
    input: TrialInput<'_>,
    decided: &dyn Fn(usize, &evalspec::Assertion) -> Option<Check>,
) -> Grading {
    let mut checks: Vec<Check> = case
        .assertions
        .iter()
        .enumerate()
        .map(|(i, a)| {
            decided(i, a).unwrap_or_else(|| assertions::check(a, input.output, input.workspace))
        })
        .collect();
    checks.extend(constraints::check(
        &case.constraints,
        constraints::RunFigures {
            trajectory: input.trajectory,
            turns: input.turns,
            tokens: input.tokens,
        },
    ));
    let execution = execution::assess(case, skill, input.trajectory);
    checks.extend(execution.checks.iter().cloned());
    let efficiency = metrics::skill_efficiency(case, skill, &execution, input.trajectory);
    let security = input
        .trajectory
        .map(|t| security::scan(t, input.output, input.workspace.root));
    Grading {
        checks,
        execution,
        efficiency,
        security,
        finished: input.finished,
    }
}

impl Grading {
    /// The checks of the judged expectations, to add to the deterministic ones.
    pub fn expectation_checks(judged: &IndependentScores) -> Vec<Check> {
        judged
            .expectations
            .iter()
            .map(|e| Check {
                group: CheckGroup::Expectation,
                kind: "expected_behavior".into(),
                description: e.expectation.clone(),
                passed: e.satisfied,
                message: e.reasoning.clone(),
            })
            .collect()
    }

    /// Every check including the judge's expectations.
    pub fn all_checks(&self, judged: Option<&IndependentScores>) -> Vec<Check> {
        let mut all = self.checks.clone();
        if let Some(j) = judged {
            all.extend(Grading::expectation_checks(j));
        }
        all
    }

    /// The six ACES metrics (those that could be scored).
    pub fn metrics(
        &self,
        case: &Case,
        judged: Option<&IndependentScores>,
    ) -> BTreeMap<String, f64> {
        metrics::metrics(
            &self.execution,
            self.efficiency,
            &self.all_checks(judged),
            self.security.as_ref().map(|s| s.score),
            judged,
            case,
        )
    }

    /// The task outcome (see the module docs).
    pub fn passed(&self, judged: Option<&IndependentScores>) -> bool {
        task_passed(&self.all_checks(judged), self.finished)
    }
}

/// The task outcome from a trial's checks (see the module docs); also what a re-judge uses.
pub fn task_passed(checks: &[Check], finished: bool) -> bool {
    if !finished {
        return false;
    }
    let hard: Vec<&Check> = checks
        .iter()
        .filter(|c| matches!(c.group, CheckGroup::Assertion | CheckGroup::Constraint))
        .collect();
    if !hard.is_empty() {
        return hard.iter().all(|c| c.passed);
    }
    checks
        .iter()
        .filter(|c| c.group == CheckGroup::Expectation)
        .all(|c| c.passed)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::evalspec::{FileKind, parse_suite};

    fn case(yaml: &str) -> Case {
        parse_suite(FileKind::EvalYaml, yaml, "tests/eval.yaml")
            .unwrap()
            .cases
            .remove(0)
    }

    fn input<'a>(output: &'a str, root: &'a Path) -> TrialInput<'a> {
        TrialInput {
            output,
            trajectory: None,
            tokens: Some(10),
            turns: 1,
            finished: true,
            workspace: Workspace { root, skip: &[] },
        }
    }

    #[test]
    fn assertions_decide_the_outcome_and_behavior_check() {
        let c = case(
            "scenarios:\n  - name: a\n    prompt: p\n    assertions:\n      - type: output_contains\n        value: GOOD\n      - type: exit_success\n",
        );
        let tmp = tempfile::tempdir().unwrap();
        let good = grade(&c, "s", input("all GOOD", tmp.path()));
        assert!(good.passed(None));
        let m = good.metrics(&c, None);
        assert_eq!(m["behavior_check"], 1.0);
        assert_eq!(
            m["skill_execution"], 0.0,
            "eval.yaml cases expect activation"
        );
        assert!(!m.contains_key("security"), "no trajectory, no scan");
        assert!(!m.contains_key("accuracy"), "no judge, no accuracy");
        let bad = grade(&c, "s", input("BAD", tmp.path()));
        assert!(!bad.passed(None));
        assert_eq!(bad.metrics(&c, None)["behavior_check"], 0.5);
        let mut timed_out = input("all GOOD", tmp.path());
        timed_out.finished = false;
        assert!(!grade(&c, "s", timed_out).passed(None));
    }

    #[test]
    fn cases_without_assertions_pass_on_judged_expectations() {
        let c = case("scenarios:\n  - name: a\n    prompt: p\n");
        let tmp = tempfile::tempdir().unwrap();
        let g = grade(&c, "s", input("x", tmp.path()));
        assert!(g.passed(None), "no graders: finished without error");
        let judged = IndependentScores {
            rubric: vec![],
            overall: 5.0,
            overall_reasoning: None,
            goal: None,
            expectations: vec![judge::ExpectationVerdict {
                expectation: "e".into(),
                satisfied: false,
                reasoning: None,
            }],
        };
        assert!(!g.passed(Some(&judged)));
        let m = g.metrics(&c, Some(&judged));
        assert_eq!((m["accuracy"], m["behavior_check"]), (1.0, 0.0));
    }

    #[test]
    fn stored_kinds_map_back_to_groups() {
        assert_eq!(
            Check::group_of_kind("output_matches"),
            CheckGroup::Assertion
        );
        assert_eq!(Check::group_of_kind("max_tokens"), CheckGroup::Constraint);
        assert_eq!(
            Check::group_of_kind("expected_behavior"),
            CheckGroup::Expectation
        );
    }
}
