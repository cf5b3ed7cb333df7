//! From checks and judge scores to the six ACES metrics on [0, 1] (seed 001 Table 1,
//! anchors-evals.md b3.3), as skillwatch computes them:
//!
//! | metric | from | absent when |
//! |---|---|---|
//! | `security` | the trace scan: 1 clean, 0.5 minor finding, 0 critical | no trajectory |
//! | `skill_execution` | mean of activation (1 / 0.75 alternate / 0) and expected script (1 / 0) | the case declares neither |
//! | `skill_efficiency` | mean of routing (share of loaded skills that were the expected ones; negative cases: the skill under test left alone) and tool efficiency (productive / scored tool calls) | neither applies |
//! | `behavior_check` | share of deterministic assertions, constraints and judged expectations that held | the case has none |
//! | `accuracy` | independent judge overall score, (s − 1) / 4 | no judge |
//! | `goal_accuracy` | independent judge goal score against `expected_output`, (s − 1) / 4 | no judge or no expected output |
//!
//! ACES's workflow-order and error-recovery checks need an `expected_workflow` the formats
//! rarely carry; they are not part of `skill_execution` here. A metric that cannot be scored
//! is left out, never written as 0.

use std::collections::BTreeMap;

use crate::evalspec::{Activation, Case};
use crate::trajectory::Trajectory;

use super::execution::Execution;
use super::judge::IndependentScores;
use super::{Check, CheckGroup};

/// Tool calls that plan rather than act: neither productive nor wasted.
const PLANNING_TOOLS: &[&str] = &[
    "todowrite",
    "todoread",
    "update_plan",
    "todo_list",
    "think",
    "plan",
];

/// Shell words that mark a call as wasted: asking for help or versions, installing packages.
const WASTED_PATTERNS: &[&str] = &[
    " --help",
    " -h",
    " --version",
    "pip install",
    "pip3 install",
    "npm install",
    "npm i ",
    "apt-get install",
    "apt install",
    "brew install",
    "cargo install",
    "find / ",
    "ls -R /",
    "grep -r / ",
];

/// The trial's ACES metric values, by name.
pub fn metrics(
    execution: &Execution,
    efficiency: Option<f64>,
    checks: &[Check],
    security: Option<f64>,
    judged: Option<&IndependentScores>,
    case: &Case,
) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    let mut put = |name: &str, value: Option<f64>| {
        if let Some(v) = value.filter(|v| v.is_finite()) {
            m.insert(name.to_owned(), v.clamp(0.0, 1.0));
        }
    };
    put("security", security);
    put(
        "skill_execution",
        mean(&[execution.activation, execution.script]),
    );
    put("skill_efficiency", efficiency);
    put("behavior_check", behavior_check(checks));
    if let Some(j) = judged {
        put("accuracy", Some(unit(j.overall)));
        if case.judged.expected_output.is_some() {
            put("goal_accuracy", j.goal.map(unit));
        }
    }
    m
}

/// A 1-5 judge score on [0, 1].
pub fn unit(score: f64) -> f64 {
    ((score - 1.0) / 4.0).clamp(0.0, 1.0)
}

/// The share of behavior checks (assertions, constraints, judged expectations) that held.
pub fn behavior_check(checks: &[Check]) -> Option<f64> {
    let behavior: Vec<&Check> = checks.iter().filter(|c| c.group.is_behavior()).collect();
    if behavior.is_empty() {
        return None;
    }
    let held = behavior.iter().filter(|c| c.passed).count();
    Some(held as f64 / behavior.len() as f64)
}

/// Skill efficiency: the mean of routing and tool efficiency, whichever apply.
pub fn skill_efficiency(
    case: &Case,
    skill: &str,
    execution: &Execution,
    trajectory: Option<&Trajectory>,
) -> Option<f64> {
    mean(&[routing(case, skill, execution), tool_efficiency(trajectory)])
}

/// Of the skills the agent loaded, the share it should have: the expected one or an
/// acceptable alternate. Loading nothing in a positive case is no routing at all (0); in a
/// negative case routing is right when the skill under test is left alone.
fn routing(case: &Case, skill: &str, execution: &Execution) -> Option<f64> {
    match &case.activation {
        Activation::Expected {
            skill: expected,
            acceptable,
        } => {
            if execution.loaded.is_empty() {
                return Some(0.0);
            }
            let want = expected.as_deref().unwrap_or(skill);
            let good = execution
                .loaded
                .iter()
                .filter(|l| {
                    l.eq_ignore_ascii_case(want)
                        || acceptable.iter().any(|a| a.eq_ignore_ascii_case(l))
                })
                .count();
            Some(good as f64 / execution.loaded.len() as f64)
        }
        Activation::MustNotTrigger => Some(if execution.target_invoked { 0.0 } else { 1.0 }),
        Activation::Unspecified => None,
    }
}

/// Productive tool calls over scored ones (planning calls excluded); `None` without calls.
pub fn tool_efficiency(trajectory: Option<&Trajectory>) -> Option<f64> {
    let t = trajectory?;
    let mut scored = 0usize;
    let mut wasted = 0usize;
    for (_, call) in t.tool_calls() {
        if PLANNING_TOOLS.contains(&call.function_name.to_lowercase().as_str()) {
            continue;
        }
        scored += 1;
        let args = serde_json::Value::Object(call.arguments.clone()).to_string();
        let padded = format!("{} ", args.replace(['"', '\''], " "));
        if WASTED_PATTERNS.iter().any(|p| padded.contains(p)) {
            wasted += 1;
        }
    }
    (scored > 0).then(|| (scored - wasted) as f64 / scored as f64)
}

fn mean(values: &[Option<f64>]) -> Option<f64> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64)
}

impl CheckGroup {
    /// Whether checks of this group count toward `behavior_check` and the trial's `passed`.
    pub fn is_behavior(self) -> bool {
        matches!(
            self,
            CheckGroup::Assertion | CheckGroup::Constraint | CheckGroup::Expectation
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(group: CheckGroup, passed: bool) -> Check {
        Check {
            group,
            kind: "k".into(),
            description: String::new(),
            passed,
            message: None,
        }
    }

    #[test]
    fn behavior_check_counts_behavior_groups_only() {
        let checks = [
            check(CheckGroup::Assertion, true),
            check(CheckGroup::Constraint, false),
            check(CheckGroup::Activation, false),
            check(CheckGroup::Expectation, true),
        ];
        let v = behavior_check(&checks).unwrap();
        assert!((v - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(behavior_check(&[check(CheckGroup::Activation, true)]), None);
    }

    #[test]
    fn judge_scores_map_to_the_unit_interval() {
        assert_eq!(unit(1.0), 0.0);
        assert_eq!(unit(5.0), 1.0);
        assert_eq!(unit(3.0), 0.5);
        assert_eq!(unit(9.0), 1.0);
    }
}
