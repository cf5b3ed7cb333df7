//! Calibration by simulation: do the verdicts and intervals mean what they say?
//!
//! A 95% verdict rule is honest only if, over many skills that do nothing (A/A), it says
//! "improves" or "regresses" at most 5% of the time, and a 95% interval only if it covers a
//! known lift about 95% of the time. This module simulates skills whose true lift is known,
//! runs them through the real pipeline ([`Trial`]s → [`skill_lift`] → [`decide`], and two
//! runs → [`compare_lifts`]), and counts, for one design (cases x attempts). A unit test runs
//! a fast subset with a fixed seed; the `calibration` bench binary runs every design the
//! documentation reports, longer.
//!
//! The simulated skill: case i has a difficulty p_i ~ Uniform(`difficulty`); each trial
//! passes with probability p_i (baseline) or p_i + effect (with the skill), and its
//! `behavior_check` is the fraction of `checks` independent checks it passes, each with the
//! same probability. So every case's expected outcome delta is exactly `effect` (0 in A/A),
//! scores are discrete and bounded like real ones, and cases differ in difficulty like real
//! suites do. With `process_metrics`, every with-skill trial also loads the skill
//! (`skill_execution` 1 vs the baseline's 0, `skill_efficiency` 1 vs 0.5): the situation in
//! which ACES's six-metric overall calls a skill that does nothing for the outcome "improves".

use serde::{Deserialize, Serialize};

use super::ScoringError;
use super::case_test::CaseFinding;
use super::compare::{CompareParams, CompareTarget, compare_lifts};
use super::lift::{LiftParams, LiftReport, ScoringProfile, skill_lift};
use super::passk::pass_rate;
use super::plan::{PlanParams, VarianceModel, cases_needed, variance_from_trials};
use super::rng::SplitMix64;
use super::stats::{InferenceParams, Interval, bootstrap_interval, wilson_interval};
use super::trial::{Condition, Metric, Trial, TrialStatus};
use super::verdict::{Decision, Verdict, VerdictInterval, VerdictParams, decide};

/// Cases x attempts per case and condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Design {
    /// Cases in the suite.
    pub cases: usize,
    /// Attempts per case and condition (`--runs`).
    pub attempts: u32,
}

/// Which outcome metrics a simulated trial carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Outcomes {
    /// `pass` and a `behavior_check` (the share of `checks` checks held): a second outcome
    /// metric that averages the noise of several checks into the per-case value.
    #[default]
    PassAndChecks,
    /// `pass` alone: the per-case value is a difference of 0/1 results, the noisiest case.
    PassOnly,
}

impl Outcomes {
    /// `pass and a 4-check behavior_check`, `pass/fail only`.
    pub fn label(self) -> &'static str {
        match self {
            Outcomes::PassAndChecks => "pass and a 4-check behavior_check",
            Outcomes::PassOnly => "pass/fail only",
        }
    }
}

/// What to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CalibrationParams {
    /// Simulated skills (runs, or run pairs for comparisons) per scenario.
    pub skills: usize,
    /// The design.
    pub design: Design,
    /// Checks per trial behind `behavior_check`.
    pub checks: u32,
    /// The outcome metrics each trial carries.
    pub outcomes: Outcomes,
    /// Range of per-case baseline pass probability.
    pub difficulty: (f64, f64),
    /// The known lift for coverage and power.
    pub effect: f64,
    /// Simulate process metrics (the skill always loaded) too.
    pub process_metrics: bool,
    /// Interval and test settings under test.
    pub inference: InferenceParams,
    /// The verdict's effect floor.
    pub min_effect: f64,
    /// Seed of the simulation (each simulated run derives its own statistics seeds from it).
    pub seed: u64,
}

impl Default for CalibrationParams {
    fn default() -> Self {
        Self {
            skills: 1_000,
            design: Design {
                cases: 10,
                attempts: 3,
            },
            checks: 4,
            outcomes: Outcomes::PassAndChecks,
            difficulty: (0.15, 0.65),
            effect: 0.2,
            process_metrics: false,
            inference: InferenceParams::default(),
            min_effect: 0.05,
            seed: 20_261_119,
        }
    }
}

/// A count of events over trials, with its Wilson interval for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Rate {
    /// Events.
    pub hits: usize,
    /// Trials.
    pub n: usize,
}

impl Rate {
    /// Count one trial, an event when `hit` (public for checks outside core that report their
    /// counts the same way, e.g. client-cli's JUnit check).
    pub fn add(&mut self, hit: bool) {
        self.hits += usize::from(hit);
        self.n += 1;
    }

    /// hits / n (0 for no trials).
    pub fn rate(&self) -> f64 {
        self.hits as f64 / self.n.max(1) as f64
    }

    /// The 95% Wilson upper bound of the rate.
    pub fn upper(&self) -> f64 {
        wilson_interval(self.hits as u64, self.n.max(1) as u64, 0.95).map_or(1.0, |ci| ci.high)
    }

    /// `12.5% [9.6, 16.1]`: the rate and its 95% Wilson interval, as every calibration table
    /// (the bench's, client-cli's JUnit check) prints it.
    pub fn with_interval(&self) -> String {
        let (low, high) = wilson_interval(self.hits as u64, self.n.max(1) as u64, 0.95)
            .map_or((0.0, 1.0), |ci| (ci.low, ci.high));
        format!(
            "{:.1}% [{:.1}, {:.1}]",
            self.rate() * 100.0,
            low * 100.0,
            high * 100.0
        )
    }
}

/// Rates for one verdict interval (t or bootstrap).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MethodRates {
    /// A/A runs given "improves" or "regresses" (nominal at most 1 − level).
    pub run_false_verdicts: Rate,
    /// A/A runs given "no change" (the equivalence test shown).
    #[serde(default)]
    pub run_no_change: Rate,
    /// A/A comparisons (same lift twice) given "improves" or "regresses".
    pub compare_false_verdicts: Rate,
    /// Runs with the known lift whose reported interval contains it (nominal level).
    pub coverage: Rate,
    /// Runs with the known lift given "improves" (power).
    pub run_power: Rate,
    /// Comparisons whose lift fell by the known lift, given "regresses" (power).
    pub compare_power: Rate,
}

/// The rates of one design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CalibrationReport {
    /// The settings simulated.
    pub params: CalibrationParams,
    /// With the t interval.
    pub t: MethodRates,
    /// With the bootstrap interval (the t interval where the bootstrap is not offered).
    pub bootstrap: MethodRates,
    /// Whether the bootstrap interval is offered at this many cases.
    pub bootstrap_offered: bool,
    /// A/A on outcome with the skill always loaded (`process_metrics`): ACES's six-metric
    /// overall says "improves" this often under the same rule.
    pub aces_false_improves: Rate,
    /// Runs whose verdict was "inconclusive (n too small)".
    pub too_small: Rate,
    /// Coverage of the known lift by the expanded bootstrap interval computed even where it is
    /// not offered: the evidence for [`super::stats::BootstrapParams::min_cases`].
    pub bootstrap_if_offered: Rate,
}

/// Simulate one design: A/A and known-effect runs, and A/A and known-drop comparisons.
pub fn simulate(params: &CalibrationParams) -> Result<CalibrationReport, ScoringError> {
    check(params)?;
    let mut rng = SplitMix64::new(params.seed);
    let mut report = CalibrationReport {
        params: *params,
        t: MethodRates::default(),
        bootstrap: MethodRates::default(),
        bootstrap_offered: params.design.cases >= params.inference.bootstrap.min_cases,
        aces_false_improves: Rate::default(),
        too_small: Rate::default(),
        bootstrap_if_offered: Rate::default(),
    };
    let methods = [VerdictInterval::StudentT, VerdictInterval::Bootstrap];
    for _ in 0..params.skills {
        let difficulty = difficulties(params, &mut rng);
        // A/A run.
        let null = simulated_lift(params, &difficulty, 0.0, &mut rng)?;
        for method in methods {
            let d = run_decision(&null, params, method);
            let r = rates(&mut report, method);
            r.run_false_verdicts.add(is_verdict(&d));
            r.run_no_change.add(d.verdict == Verdict::NoChange);
        }
        let d = run_decision(&null, params, VerdictInterval::StudentT);
        report.too_small.add(d.needed_cases.is_some());
        if params.process_metrics {
            let aces = null.aces.as_ref().map(|a| a.summary);
            let v = aces.map(|s| {
                decide(
                    &s,
                    &verdict_params(params, VerdictInterval::StudentT),
                    "lift",
                )
            });
            report
                .aces_false_improves
                .add(v.is_some_and(|v| v.verdict == Verdict::Improves));
        }
        // Known lift.
        let effect = simulated_lift(params, &difficulty, params.effect, &mut rng)?;
        for method in methods {
            let d = run_decision(&effect, params, method);
            let r = rates(&mut report, method);
            r.coverage
                .add(d.interval.is_some_and(|ci| ci.contains(params.effect)));
            r.run_power.add(d.verdict == Verdict::Improves);
        }
        if let Some(ci) = forced_bootstrap(&effect, params)? {
            report.bootstrap_if_offered.add(ci.contains(params.effect));
        }
        // A/A comparison: the same lift on both sides; then a drop of the known lift.
        let again = simulated_lift(params, &difficulty, params.effect, &mut rng)?;
        let dropped = simulated_lift(params, &difficulty, 0.0, &mut rng)?;
        for method in methods {
            let cmp = compare_params(params, method);
            let same = compare_lifts(&effect, &again, &cmp)?;
            let fell = compare_lifts(&effect, &dropped, &cmp)?;
            let r = rates(&mut report, method);
            r.compare_false_verdicts.add(matches!(
                same.verdict,
                Verdict::Improves | Verdict::Regresses
            ));
            r.compare_power.add(fell.verdict == Verdict::Regresses);
        }
    }
    Ok(report)
}

/// What runs of one scenario said: every case's true lift is `params.effect`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ScenarioReport {
    /// Runs called "improves".
    pub improves: Rate,
    /// Runs called "regresses".
    pub regresses: Rate,
    /// Runs called "no change".
    pub no_change: Rate,
    /// Runs called "inconclusive" (the too-small ones included).
    pub inconclusive: Rate,
    /// Runs too small for any verdict.
    pub too_small: Rate,
    /// Runs whose t interval holds the true lift.
    pub coverage: Rate,
    /// Runs with some case the per-case exact test (Holm-adjusted) calls worse. Whether a
    /// JUnit report fails is the writer's to say: client-cli's `junit_aa` check measures it
    /// through the writer itself, so no copy of its rule lives here.
    pub any_case_worse: Rate,
    /// Pass-rate intervals (both arms) clustered by case holding the population pass rate.
    pub pass_rate_coverage: Rate,
    /// The same for the plain Wilson interval over trials (attempts taken as independent).
    pub pooled_pass_rate_coverage: Rate,
}

/// Simulate `params.skills` runs of one scenario (true lift `params.effect` on every case).
pub fn simulate_scenario(params: &CalibrationParams) -> Result<ScenarioReport, ScoringError> {
    let mut r = ScenarioReport::default();
    let level = params.inference.level;
    let (lo, hi) = params.difficulty;
    let truth = [(lo + hi) / 2.0, (lo + hi) / 2.0 + params.effect];
    for run in simulated_runs(params)? {
        let trials = run.trials;
        let lift = score_seeded(params, &trials, run.seeds)?;
        let d = run_decision(&lift, params, VerdictInterval::StudentT);
        r.improves.add(d.verdict == Verdict::Improves);
        r.regresses.add(d.verdict == Verdict::Regresses);
        r.no_change.add(d.verdict == Verdict::NoChange);
        r.inconclusive.add(d.verdict == Verdict::Inconclusive);
        r.too_small.add(d.needed_cases.is_some());
        r.coverage
            .add(d.interval.is_some_and(|ci| ci.contains(params.effect)));
        let worse = lift.cases.iter().any(|c| {
            c.outcome_test
                .as_ref()
                .is_some_and(|t| t.finding == CaseFinding::Worse)
        });
        r.any_case_worse.add(worse);
        for (condition, truth) in [Condition::Baseline, Condition::Skill]
            .into_iter()
            .zip(truth)
        {
            if let Some(ci) = pass_rate(&trials, condition, level)? {
                r.pass_rate_coverage.add(ci.contains(truth));
            }
            let (hits, n) = trials
                .iter()
                .filter(|t| t.condition == condition)
                .filter_map(Trial::task_outcome)
                .fold((0u64, 0u64), |(h, n), p| (h + u64::from(p), n + 1));
            let plain = wilson_interval(hits, n, level)?;
            r.pooled_pass_rate_coverage.add(plain.contains(truth));
        }
    }
    Ok(r)
}

/// One simulated run of a scenario: its trials, and the (bootstrap, permutation) seeds its
/// statistics are drawn with.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedRun {
    /// Every trial of the run, both arms, as a runner records them.
    pub trials: Vec<Trial>,
    /// Seeds for the run's bootstrap and permutation statistics.
    pub seeds: (u64, u64),
}

/// The runs [`simulate_scenario`] scores, one per simulated skill, in order. Public so a
/// check outside core can put the very same simulated trials through another part of the
/// real pipeline (client-cli's JUnit check imports them into a history and writes the JUnit
/// report) instead of keeping a second simulation.
#[derive(Debug, Clone)]
pub struct SimulatedRuns {
    params: CalibrationParams,
    rng: SplitMix64,
    left: usize,
}

impl Iterator for SimulatedRuns {
    type Item = SimulatedRun;

    fn next(&mut self) -> Option<SimulatedRun> {
        self.left = self.left.checked_sub(1)?;
        let difficulty = difficulties(&self.params, &mut self.rng);
        let trials = simulated_trials(&self.params, &difficulty, self.params.effect, &mut self.rng);
        let seeds = (self.rng.next_u64(), self.rng.next_u64());
        Some(SimulatedRun { trials, seeds })
    }
}

/// `params.skills` simulated runs of one scenario (true lift `params.effect` on every case).
pub fn simulated_runs(params: &CalibrationParams) -> Result<SimulatedRuns, ScoringError> {
    check(params)?;
    Ok(SimulatedRuns {
        params: *params,
        rng: SplitMix64::new(params.seed),
        left: params.skills,
    })
}

/// One case of a recorded configuration: its pass counts per arm at `attempts` a side, the
/// shape benchmarks publish per task (SkillsBench).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCounts {
    /// The task (case) name.
    pub task: String,
    /// Attempts per arm.
    pub attempts: u32,
    /// Baseline attempts that passed.
    pub baseline_passed: u32,
    /// With-skill attempts that passed.
    pub skill_passed: u32,
}

impl TaskCounts {
    /// The arm's pass/fail values, passes first (attempt labels carry nothing: issue 35).
    /// A configuration has two arms: the plugin arm has none.
    pub fn values(&self, condition: Condition) -> Vec<f64> {
        let passed = match condition {
            Condition::Baseline => self.baseline_passed,
            Condition::Skill => self.skill_passed,
            Condition::Plugin => return Vec::new(),
        };
        (0..self.attempts)
            .map(|i| if i < passed { 1.0 } else { 0.0 })
            .collect()
    }
}

/// Read a configuration table (`task,attempts,baseline_passed,skill_passed`, a header line,
/// `#` comments). Public because core's per-case tests and client-cli's JUnit check replay
/// the same recorded configuration (tests/fixtures/skillsbench/), read once, one way.
pub fn task_counts(table: &str) -> Result<Vec<TaskCounts>, ScoringError> {
    let bad = |line: &str| ScoringError::InvalidParams(format!("task counts: bad line {line:?}"));
    table
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .skip(1)
        .map(|line| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let n = |i: usize| {
                f.get(i)
                    .and_then(|v| v.parse::<u32>().ok())
                    .ok_or_else(|| bad(line))
            };
            let counts = TaskCounts {
                task: f
                    .first()
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| bad(line))?
                    .to_string(),
                attempts: n(1)?,
                baseline_passed: n(2)?,
                skill_passed: n(3)?,
            };
            let fits = counts.baseline_passed.max(counts.skill_passed) <= counts.attempts;
            if f.len() != 4 || !fits {
                return Err(bad(line));
            }
            Ok(counts)
        })
        .collect()
}

/// `plan`'s promise checked: the design it suggests for `detect` at `attempts` attempts per
/// case, given `history`'s variance, and how often that design finds a true lift of
/// `truth.effect` (a verdict in its direction) over `truth.skills` simulated runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanCheck {
    /// The variance `plan` read from the history.
    pub variance: VarianceModel,
    /// The cases it says are needed.
    pub cases: usize,
    /// Attempts per case.
    pub attempts: u32,
    /// The power it promises.
    pub stated_power: f64,
    /// The share of simulated runs of that design that found the lift.
    pub simulated: Rate,
}

/// Plan from `history` for a lift of `|truth.effect|` at `attempts` attempts per case, then
/// simulate the suggested design under `truth`. `None` when no design up to 100,000 cases
/// detects it.
pub fn plan_check(
    history: &[Trial],
    attempts: u32,
    truth: &CalibrationParams,
) -> Result<Option<PlanCheck>, ScoringError> {
    let Some(variance) = variance_from_trials(history, ScoringProfile::Outcome, &[])? else {
        return Err(ScoringError::InvalidParams(
            "plan_check: the history needs two cases".into(),
        ));
    };
    let plan = PlanParams::default();
    let Some(cases) = cases_needed(truth.effect.abs(), attempts, &variance, &plan, 100_000) else {
        return Ok(None);
    };
    let params = CalibrationParams {
        design: Design { cases, attempts },
        ..*truth
    };
    let found = simulate_scenario(&params)?;
    Ok(Some(PlanCheck {
        variance,
        cases,
        attempts,
        stated_power: plan.power,
        simulated: if truth.effect > 0.0 {
            found.improves
        } else {
            found.regresses
        },
    }))
}

/// A one-attempt pass/fail history: each case's (baseline passed, skill passed).
pub fn history_of(cases: &[(bool, bool)]) -> Vec<Trial> {
    let params = CalibrationParams {
        outcomes: Outcomes::PassOnly,
        ..CalibrationParams::default()
    };
    let mut rng = SplitMix64::new(0);
    let mut trials = Vec::new();
    for (i, (base, skill)) in cases.iter().enumerate() {
        for (condition, passed) in [(Condition::Baseline, *base), (Condition::Skill, *skill)] {
            let p = if passed { 1.0 } else { 0.0 };
            trials.push(simulated_trial(&params, i, 0, condition, p, &mut rng));
        }
    }
    trials
}

/// Score simulated trials with fresh statistics seeds.
fn score(
    params: &CalibrationParams,
    trials: &[Trial],
    rng: &mut SplitMix64,
) -> Result<LiftReport, ScoringError> {
    let seeds = (rng.next_u64(), rng.next_u64());
    score_seeded(params, trials, seeds)
}

/// Score simulated trials with the given (bootstrap, permutation) seeds.
fn score_seeded(
    params: &CalibrationParams,
    trials: &[Trial],
    (bootstrap, permutation): (u64, u64),
) -> Result<LiftReport, ScoringError> {
    let mut inference = params.inference;
    inference.bootstrap.seed = bootstrap;
    inference.permutation.seed = permutation;
    skill_lift(
        trials,
        &LiftParams {
            inference,
            ..LiftParams::default()
        },
    )
}

fn check(params: &CalibrationParams) -> Result<(), ScoringError> {
    let (lo, hi) = params.difficulty;
    if params.design.cases == 0
        || params.design.attempts == 0
        || params.checks == 0
        || lo + params.effect.min(0.0) < 0.0
        || hi + params.effect.max(0.0) > 1.0
        || lo > hi
    {
        return Err(ScoringError::InvalidParams(format!(
            "calibration {params:?}: need ≥ 1 case, attempt and check, and pass probabilities inside [0, 1]"
        )));
    }
    Ok(())
}

fn rates(report: &mut CalibrationReport, method: VerdictInterval) -> &mut MethodRates {
    match method {
        VerdictInterval::StudentT => &mut report.t,
        VerdictInterval::Bootstrap => &mut report.bootstrap,
    }
}

fn is_verdict(d: &Decision) -> bool {
    matches!(d.verdict, Verdict::Improves | Verdict::Regresses)
}

fn verdict_params(params: &CalibrationParams, interval: VerdictInterval) -> VerdictParams {
    VerdictParams {
        level: params.inference.level,
        min_effect: params.min_effect,
        interval,
    }
}

fn compare_params(params: &CalibrationParams, interval: VerdictInterval) -> CompareParams {
    CompareParams {
        inference: params.inference,
        min_effect: params.min_effect,
        interval,
        target: CompareTarget::Outcome,
    }
}

/// The verdict a run's summary would carry: the outcome profile under the rule.
fn run_decision(
    lift: &LiftReport,
    params: &CalibrationParams,
    interval: VerdictInterval,
) -> Decision {
    let summary = lift
        .profile(ScoringProfile::Outcome)
        .map(|p| p.summary)
        .unwrap_or_default();
    decide(&summary, &verdict_params(params, interval), "lift")
}

/// The expanded bootstrap of the outcome per-case values, whatever the number of cases.
fn forced_bootstrap(
    lift: &LiftReport,
    params: &CalibrationParams,
) -> Result<Option<Interval>, ScoringError> {
    let values: Vec<f64> = lift.cases.iter().filter_map(|c| c.outcome).collect();
    if values.len() < 2 {
        return Ok(None);
    }
    let bootstrap = lift.params.inference.bootstrap;
    Ok(Some(bootstrap_interval(
        &values,
        params.inference.level,
        &bootstrap,
    )?))
}

fn difficulties(params: &CalibrationParams, rng: &mut SplitMix64) -> Vec<f64> {
    let (lo, hi) = params.difficulty;
    (0..params.design.cases)
        .map(|_| lo + (hi - lo) * rng.next_f64())
        .collect()
}

/// One simulated run scored by the real pipeline, with its own statistics seeds.
fn simulated_lift(
    params: &CalibrationParams,
    difficulty: &[f64],
    effect: f64,
    rng: &mut SplitMix64,
) -> Result<LiftReport, ScoringError> {
    let trials = simulated_trials(params, difficulty, effect, rng);
    score(params, &trials, rng)
}

fn simulated_trials(
    params: &CalibrationParams,
    difficulty: &[f64],
    effect: f64,
    rng: &mut SplitMix64,
) -> Vec<Trial> {
    let mut trials = Vec::with_capacity(2 * difficulty.len() * params.design.attempts as usize);
    for (case, p) in difficulty.iter().enumerate() {
        for attempt in 0..params.design.attempts {
            for (condition, prob) in [(Condition::Baseline, *p), (Condition::Skill, p + effect)] {
                trials.push(simulated_trial(params, case, attempt, condition, prob, rng));
            }
        }
    }
    trials
}

fn simulated_trial(
    params: &CalibrationParams,
    case: usize,
    attempt: u32,
    condition: Condition,
    prob: f64,
    rng: &mut SplitMix64,
) -> Trial {
    let passed = rng.bernoulli(prob);
    let mut metrics = Vec::new();
    if params.outcomes == Outcomes::PassAndChecks {
        let held = (0..params.checks).filter(|_| rng.bernoulli(prob)).count();
        metrics.push((
            Metric::BehaviorCheck,
            held as f64 / f64::from(params.checks),
        ));
    }
    let with = condition == Condition::Skill;
    if params.process_metrics {
        metrics.extend([
            (Metric::Security, 1.0),
            (Metric::SkillExecution, if with { 1.0 } else { 0.0 }),
            (Metric::SkillEfficiency, if with { 1.0 } else { 0.5 }),
        ]);
    }
    Trial {
        case_id: format!("case-{case:04}"),
        condition,
        attempt,
        status: TrialStatus::Completed,
        passed: Some(passed),
        metrics: metrics.into_iter().collect(),
        tokens: None,
        wall_ms: None,
        invoked: Some(with && params.process_metrics),
        assertions: None,
        tool_calls: None,
        turns: None,
        errors: None,
        judge: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::stats::{BootstrapParams, PermutationParams};

    fn quick(design: Design, skills: usize) -> CalibrationParams {
        CalibrationParams {
            skills,
            design,
            inference: InferenceParams {
                level: 0.95,
                bootstrap: BootstrapParams {
                    resamples: 1_000,
                    ..BootstrapParams::default()
                },
                permutation: PermutationParams {
                    resamples: 2_000,
                    ..PermutationParams::default()
                },
            },
            ..CalibrationParams::default()
        }
    }

    /// The fast subset of the calibration bench, fixed seed: at the smallest designs no A/A
    /// run or comparison gets a verdict at all (the sign-flip floor), and at 10 x 3 the rate
    /// of false verdicts stays under 5% with its Wilson upper bound under 7%, for t and the
    /// bootstrap, while the reported interval covers the known lift 93-97% of the time.
    #[test]
    fn verdicts_and_intervals_are_calibrated_on_simulated_skills() {
        let small = simulate(&quick(
            Design {
                cases: 3,
                attempts: 1,
            },
            300,
        ))
        .unwrap();
        for r in [small.t, small.bootstrap] {
            assert_eq!(r.run_false_verdicts.hits, 0);
            assert_eq!(r.compare_false_verdicts.hits, 0);
            assert_eq!(r.run_power.hits, 0, "3 cases can show nothing");
        }
        assert_eq!(small.too_small.hits, 300);

        let r = simulate(&quick(
            Design {
                cases: 10,
                attempts: 3,
            },
            600,
        ))
        .unwrap();
        eprintln!("{r:#?}");
        for (name, m) in [("t", r.t), ("bootstrap", r.bootstrap)] {
            for (what, rate) in [
                ("run", m.run_false_verdicts),
                ("compare", m.compare_false_verdicts),
            ] {
                assert!(rate.rate() <= 0.05, "{name} {what} A/A verdicts {rate:?}");
                assert!(
                    rate.upper() < 0.07,
                    "{name} {what} A/A upper bound {rate:?}"
                );
            }
            let c = m.coverage.rate();
            assert!((0.93..=0.97).contains(&c), "{name} coverage {c}");
            // A lift of 0.2 over 10 cases x 3 attempts: found most of the time, not always.
            assert!(
                (0.3..0.95).contains(&m.run_power.rate()),
                "{name} power {:?}",
                m.run_power
            );
        }
        assert_eq!(r.too_small.hits, 0);
    }

    /// The artefact, measured: a skill that is always loaded and changes no outcome
    /// is called "improves" by ACES's six-metric overall, never by the outcome lift.
    #[test]
    fn process_metrics_make_the_aces_overall_call_a_useless_skill_improving() {
        let params = CalibrationParams {
            process_metrics: true,
            ..quick(
                Design {
                    cases: 8,
                    attempts: 1,
                },
                100,
            )
        };
        let r = simulate(&params).unwrap();
        assert!(
            r.aces_false_improves.rate() > 0.9,
            "{:?}",
            r.aces_false_improves
        );
        assert!(
            r.t.run_false_verdicts.rate() <= 0.05,
            "{:?}",
            r.t.run_false_verdicts
        );
    }

    /// The fast subset of the bench's `drop`, `suite` and `plan` blocks (issue 35): a true drop
    /// of 0.2 from a pass rate of 1.0 is never called "no change" at 8 x 1 (it used to be in
    /// 19% of runs); A/A runs of 87 cases x 3 attempts have no case the exact test calls
    /// worse (the JUnit report itself: client-cli's `junit_aa` check);
    /// the clustered pass-rate interval covers; `plan` after a run without spread keeps its
    /// promise.
    #[test]
    fn no_change_per_case_failures_pass_rates_and_plan_are_calibrated() {
        let drop = simulate_scenario(&CalibrationParams {
            outcomes: Outcomes::PassOnly,
            difficulty: (1.0, 1.0),
            effect: -0.2,
            ..quick(
                Design {
                    cases: 8,
                    attempts: 1,
                },
                200,
            )
        })
        .unwrap();
        assert_eq!(drop.no_change.hits, 0, "{drop:?}");
        let suite = simulate_scenario(&CalibrationParams {
            outcomes: Outcomes::PassOnly,
            effect: 0.0,
            ..quick(
                Design {
                    cases: 87,
                    attempts: 3,
                },
                40,
            )
        })
        .unwrap();
        assert_eq!(suite.any_case_worse.hits, 0, "{suite:?}");
        let rates = simulate_scenario(&CalibrationParams {
            outcomes: Outcomes::PassOnly,
            ..quick(
                Design {
                    cases: 20,
                    attempts: 3,
                },
                300,
            )
        })
        .unwrap();
        let c = rates.pass_rate_coverage.rate();
        assert!((0.92..=0.98).contains(&c), "{:?}", rates.pass_rate_coverage);
        // 4 cases passed and 4 failed on both sides: no spread at all.
        let history = history_of(&[(true, true), (false, false)].repeat(4));
        let check = plan_check(
            &history,
            3,
            &CalibrationParams {
                outcomes: Outcomes::PassOnly,
                difficulty: (0.25, 0.65),
                effect: 0.1,
                ..quick(
                    Design {
                        cases: 1,
                        attempts: 1,
                    },
                    200,
                )
            },
        )
        .unwrap()
        .unwrap();
        let power = check.simulated.rate();
        assert!(
            (check.stated_power - 0.1..=check.stated_power + 0.1).contains(&power),
            "{check:?}"
        );
    }

    #[test]
    fn impossible_settings_are_refused() {
        let params = CalibrationParams {
            effect: 0.5,
            ..CalibrationParams::default()
        };
        assert!(simulate(&params).is_err());
    }
}
