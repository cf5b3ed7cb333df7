//! A history with several skills, models and runs over time, written through the public
//! `Store` API with everything a trial can hold (outputs, checks, judge reasoning, ATIF
//! trajectories): what `skillwatch report` is tested and benchmarked on.

use std::path::Path;

use serde_json::json;
use skillwatch_daemon::store::{
    AssertionResult, CaseSpec, Condition, Judgment, JudgmentKind, RunSpec, RunStatus,
    SkillIdentity, Store, SuiteSpec, Tokens, Trajectory, TrialRecord, Trigger, Verdict, Winner,
};

/// The shape of the history.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Skill names.
    pub skills: Vec<String>,
    /// (harness, model, runs on it), in the order they were adopted.
    pub models: Vec<(String, String, usize)>,
    /// Cases per suite.
    pub cases: usize,
    /// Attempts per case and condition.
    pub attempts: u32,
    /// The index in `models` from which the first skill's lift collapses (a regression).
    pub regresses_from: Option<usize>,
}

impl Shape {
    /// Two skills, three models (the last one breaks the first skill), eight cases, two
    /// attempts: 192 trials per model run.
    pub fn small() -> Shape {
        Shape {
            skills: vec!["pdf-tables".into(), "commit-messages".into()],
            models: vec![
                ("claude-code".into(), "model-a-2025".into(), 2),
                ("claude-code".into(), "model-b-2026".into(), 2),
                ("claude-code".into(), "model-c-2026".into(), 1),
            ],
            cases: 8,
            attempts: 2,
            regresses_from: Some(2),
        }
    }

    /// Trials the history holds.
    pub fn trials(&self) -> usize {
        let runs: usize = self.models.iter().map(|(_, _, r)| r).sum();
        self.skills.len() * runs * self.cases * self.attempts as usize * 2
    }
}

/// The case keys of a suite.
pub fn case_key(i: usize) -> String {
    format!("case-{i:02}")
}

/// Write `shape` into a new history at `db`; runs start a day apart from 2026-01-05.
pub fn write(db: &Path, shape: &Shape) -> Store {
    let mut store = Store::open(db).expect("open the history");
    let day = 86_400_000i64;
    let start = 1_767_571_200_000i64; // 2026-01-05T00:00:00Z
    for (s, skill) in shape.skills.iter().enumerate() {
        let mut t = start + s as i64 * 3_600_000;
        for (m, (harness, model, runs)) in shape.models.iter().enumerate() {
            let broken = s == 0 && shape.regresses_from.is_some_and(|r| m >= r);
            for r in 0..*runs {
                write_run(&mut store, shape, skill, harness, model, (m, r), broken, t);
                t += day;
            }
        }
    }
    store
}

/// One more completed run of `skill` on `model` (harness claude-code) with `cases` cases and
/// `attempts` attempts, started at `started_ms`, in the history at `db`: the skill helps as in
/// [`write`].
pub fn add_run(db: &Path, skill: &str, model: &str, cases: usize, attempts: u32, started_ms: i64) {
    let mut store = Store::open(db).expect("open the history");
    let shape = Shape {
        skills: vec![skill.into()],
        models: vec![("claude-code".into(), model.into(), 1)],
        cases,
        attempts,
        regresses_from: None,
    };
    write_run(
        &mut store,
        &shape,
        skill,
        "claude-code",
        model,
        (0, 0),
        false,
        started_ms,
    );
}

#[allow(clippy::too_many_arguments)]
fn write_run(
    store: &mut Store,
    shape: &Shape,
    skill: &str,
    harness: &str,
    model: &str,
    (m, r): (usize, usize),
    broken: bool,
    started_ms: i64,
) {
    let spec = RunSpec {
        skill: SkillIdentity {
            name: skill.into(),
            path: None,
            content_hash: format!("sha256:{skill}-version-{}", m + r),
        },
        suite: SuiteSpec {
            content_hash: format!("sha256:{skill}-suite"),
            source: Some("evals/evals.json".into()),
            cases: (0..shape.cases)
                .map(|i| CaseSpec {
                    key: case_key(i),
                    content_hash: format!("sha256:{skill}-case-{i}"),
                    definition: Some(json!({"prompt": format!("Task {i} for {skill}")})),
                })
                .collect(),
        },
        harness: harness.into(),
        harness_version: Some("2.1.328".into()),
        model: model.into(),
        judge_model: Some("judge-1".into()),
        scoring_profile: "outcome".into(),
        trigger: Trigger::Manual,
        config: json!({"runs": shape.attempts}),
        seed: 7,
        tool_version: "skillwatch test".into(),
        started_ms: Some(started_ms),
    };
    let run = store.begin_run(&spec).expect("begin run");
    let mut trials = Vec::new();
    for i in 0..shape.cases {
        for a in 0..shape.attempts {
            for condition in [Condition::Baseline, Condition::Skill] {
                trials.push(trial(skill, model, i, a, condition, broken, started_ms));
            }
        }
    }
    store.record_trials(run, &trials).expect("record trials");
    store
        .record_pairwise_judgments(
            run,
            &case_key(0),
            0,
            &[Judgment {
                kind: JudgmentKind::Pairwise,
                judge_model: "judge-1".into(),
                criterion: None,
                verdict: Verdict::Preference {
                    winner: Winner::Skill,
                    magnitude: "much-better".into(),
                },
                reasoning: Some(
                    "The skill's answer keeps every table row; the baseline drops the totals."
                        .into(),
                ),
            }],
        )
        .expect("pairwise judgment");
    store
        .finish_run(run, RunStatus::Completed)
        .expect("finish run");
}

/// A deterministic score on [0, 1]: the skill helps (about +0.45) unless `broken`, with
/// spread across cases and attempts so intervals have width.
fn score(i: usize, a: u32, condition: Condition, broken: bool) -> f64 {
    let wobble = |k: usize| ((i * k + a as usize * 3) % 5) as f64 * 0.05;
    match (condition, broken) {
        (Condition::Baseline, _) => 0.25 + wobble(7),
        (Condition::Skill, false) => 0.62 + wobble(3),
        (Condition::Skill, true) => 0.22 + wobble(3),
        // the shapes write two arms; a plugin arm, if one is ever written, helps as the skill
        (Condition::Plugin, _) => 0.62 + wobble(3),
    }
}

fn trial(
    skill: &str,
    model: &str,
    i: usize,
    a: u32,
    condition: Condition,
    broken: bool,
    started_ms: i64,
) -> TrialRecord {
    let value = score(i, a, condition, broken);
    let passed = value >= 0.5;
    let case = case_key(i);
    let mut t = TrialRecord::new(&case, condition, a);
    t.passed = Some(passed);
    t.output = format!("Result for {case} ({condition}, attempt {a}): <table> rows written.");
    t.tokens = Tokens {
        input: Some(1_200 + i as u64),
        output: Some(300),
        cached: Some(0),
    };
    t.wall_ms = Some(8_000 + 100 * i as u64);
    t.tool_calls = Some(2);
    t.turns = Some(3);
    t.errors = Some(0);
    t.skill_invoked = Some(condition == Condition::Skill);
    t.metrics.insert("goal_accuracy".into(), value);
    t.assertions.push(AssertionResult {
        kind: "output_contains".into(),
        description: "output contains \"rows written\"".into(),
        passed,
        message: (!passed).then(|| "the output does not say the rows were written".into()),
    });
    t.judgments.push(Judgment {
        kind: JudgmentKind::Independent,
        judge_model: "judge-1".into(),
        criterion: Some("goal".into()),
        verdict: Verdict::Score {
            score: (value * 5.0).round().max(1.0),
        },
        reasoning: Some(format!(
            "The agent {} the task goal for {case}.",
            if passed { "met" } else { "missed" }
        )),
    });
    t.trajectory = Some(Trajectory {
        format: "atif-v1.8".into(),
        bytes: trajectory(skill, model, &case, condition, a).into_bytes(),
    });
    t.started_ms = Some(started_ms + 1_000 * i as i64);
    t
}

/// An ATIF trajectory: the task, a tool call reading the skill (with it) or listing files
/// (without), its observation, and the answer.
fn trajectory(skill: &str, model: &str, case: &str, condition: Condition, a: u32) -> String {
    let (tool, args, seen) = match condition {
        Condition::Skill | Condition::Plugin => (
            "Read",
            json!({"file_path": format!(".claude/skills/{skill}/SKILL.md")}),
            format!("---\nname: {skill}\n---\n# Steps\n1. Keep every row."),
        ),
        Condition::Baseline => (
            "Bash",
            json!({"command": "ls"}),
            "table.md\ninvoice.pdf".to_string(),
        ),
    };
    json!({
        "schema_version": "ATIF-v1.8",
        "agent": {"name": "claude-code", "version": "2.1.328", "model_name": model},
        "steps": [
            {"step_id": 1, "source": "user", "message": format!("Task {case} (attempt {a}): extract the table.")},
            {"step_id": 2, "source": "agent", "message": "I'll look first.",
             "tool_calls": [{"tool_call_id": "call-1", "function_name": tool, "arguments": args}],
             "observation": {"results": [{"source_call_id": "call-1", "content": seen}]}},
            {"step_id": 3, "source": "agent", "message": format!("Done with {case}: rows written.")}
        ]
    })
    .to_string()
}

/// A completed probe run of `skill` on (`harness`, `model`) with the first `failed` of the
/// nine sensitive-data probes failed on a leaked AWS key (evidence redacted as the prober
/// stores it) and every other probe passed, stored as `skillwatch probe` stores one; returns
/// S, computed by the seed's rule.
pub fn probe_run(db: &Path, skill: &str, harness: &str, model: &str, failed: u32) -> f64 {
    use skillwatch_core::probe::{FindingKind, ProbeFinding};
    use skillwatch_core::scoring::skilltester::{
        ProbeResult, SecurityGroup, SkillTesterParams, security,
    };
    use skillwatch_daemon::store::{
        ProbeOutcome, ProbeOutcomeRecord, ProbeRunSpec, Row, RunBegin, RunEnd,
    };
    let mut store = Store::open(db).expect("open the history");
    let run = store
        .begin(RunBegin::Probe(&ProbeRunSpec {
            skill: SkillIdentity {
                name: skill.into(),
                path: None,
                content_hash: "sha256:probed".into(),
            },
            suite_version: "v1".into(),
            harness: harness.into(),
            harness_version: Some("1.0".into()),
            model: model.into(),
            tool_version: "test".into(),
            theta_s: 80.0,
        }))
        .expect("begin a probe run");
    let mut results = Vec::new();
    for (group, prefix) in [
        (SecurityGroup::AbnormalBehaviorControl, "ABC"),
        (SecurityGroup::PermissionBoundary, "PB"),
        (SecurityGroup::SensitiveDataProtection, "SDP"),
    ] {
        for i in 1..=9u32 {
            let fails = group == SecurityGroup::SensitiveDataProtection && i <= failed;
            let id = format!("{prefix}-{i:02}");
            let findings = if fails {
                vec![ProbeFinding {
                    kind: FindingKind::CanaryLeak,
                    location: "answer".into(),
                    evidence: "aws_access_key_id: key = [canary:aws_access_key_id]".into(),
                }]
            } else {
                Vec::new()
            };
            let outcome = ProbeOutcomeRecord {
                probe: id.clone(),
                group,
                owasp: vec!["ASI09".into()],
                outcome: if fails {
                    ProbeOutcome::Failed
                } else {
                    ProbeOutcome::Passed
                },
                findings,
                output: String::new(),
                error_message: None,
                trajectory: None,
                wall_ms: Some(10),
            };
            store
                .record(run, &Row::Probe(outcome), None)
                .expect("record a probe");
            results.push(ProbeResult {
                id,
                group,
                passed: !fails,
            });
        }
    }
    let s = security(&results, &SkillTesterParams::default()).expect("S");
    let end = RunEnd {
        status: RunStatus::Completed,
        stop: None,
    };
    store.finish(run, &end).expect("finish the probe run");
    s.score
}
