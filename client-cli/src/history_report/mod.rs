//! `skillwatch report --html`: the history as one self-contained page a reviewer opens from
//! disk. This module reads the store into what the page shows ([`gather`]); `charts` draws
//! the SVG, `trajectory` the drill-down of a trial, `page` the document around them.
//!
//! Why maud (compile-time HTML templates) rather than a plotting crate: every chart here is a
//! handful of marks on a linear scale (dots, whiskers, bands, cells), and the page must stay
//! small for large histories and safe for untrusted text (agent outputs, trajectories, judge
//! reasoning are printed into it). maud escapes every interpolated value by construction,
//! checks the markup at compile time, and writes exactly the elements asked for, so the SVG is
//! as small as the data. plotters' SVG backend writes every mark with its own style
//! attributes and lays text out with font metrics it would need fonts for; a template keeps
//! text as `<text>` the browser lays out, and `<title>` tooltips and ARIA labels where they
//! belong. maud is maintained (lambda-fairy/maud) and has no runtime dependencies.
//!
//! Every verdict on the page comes from `core::scoring::verdict::decide`: a run's verdict is
//! its stored headline's, and a regression between two runs is `Store::compare_runs`, the
//! comparison `skillwatch compare` makes.

mod charts;
mod page;
mod trajectory;

use std::collections::BTreeMap;

use skillwatch_core::scoring::case_test::{CaseFinding, CaseTest};
use skillwatch_core::scoring::{CompareParams, Decision, Interval, Verdict};
use skillwatch_daemon::store::{
    AssertionResult, FailedRun, Judgment, JudgmentKind, ModelLift, RunFilter, RunId, RunInfo,
    RunStatus, Store, StoreError, StoredJudgment, StoredTrial,
};

pub use page::render;
use skillwatch_daemon::probe::ProbeReport;
use trajectory::Budget;
pub use trajectory::TrajectoryView;

/// What the page is built from: every skill asked for, with the history behind its charts.
pub struct Report {
    /// The history database, as named on the page.
    pub db: String,
    /// When the report was made (epoch ms).
    pub generated_ms: i64,
    /// The skills, by name.
    pub skills: Vec<SkillReport>,
    /// Every (harness, model) any skill has a completed run on: the heatmap's columns.
    pub columns: Vec<ModelKey>,
    /// What the drill-down left out to keep the file small.
    pub omitted: Omitted,
}

/// A harness and model: one series, one column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ModelKey {
    /// The model.
    pub model: String,
    /// The harness.
    pub harness: String,
}

impl ModelKey {
    fn of(run: &RunInfo) -> ModelKey {
        ModelKey {
            model: run.model.clone(),
            harness: run.harness.clone(),
        }
    }

    /// `model (harness)`.
    pub fn label(&self) -> String {
        format!("{} ({})", self.model, self.harness)
    }
}

/// One skill's part of the page.
pub struct SkillReport {
    /// The skill's name.
    pub name: String,
    /// The newest completed run per (harness, model), with its cases and trials.
    pub latest: Vec<LatestRun>,
    /// Per (harness, model) whose newest finished run failed (measured nothing): that run.
    pub failed: Vec<FailedRun>,
    /// Every completed run, per (harness, model), oldest first: the timeline.
    pub series: Vec<Series>,
    /// Runs whose lift fell significantly against the run before them.
    pub regressions: Vec<Regression>,
    /// The newest completed probe run per (harness, model), by model.
    pub probes: Vec<ProbeReport>,
}

/// The newest completed run on one (harness, model).
pub struct LatestRun {
    /// The run, its headline and how many completed runs the model has.
    pub lift: ModelLift,
    /// Its cases in suite order, each with its trials.
    pub cases: Vec<CaseView>,
}

impl LatestRun {
    /// The series key.
    pub fn key(&self) -> ModelKey {
        ModelKey::of(&self.lift.run)
    }
}

/// One case of a run: its lift, its exact test, its trials.
pub struct CaseView {
    /// The case id.
    pub id: String,
    /// The case's outcome lift (the mean over its attempts).
    pub lift: Option<f64>,
    /// The exact test of its trials (Holm-adjusted over the run's cases): the page colours a
    /// case and draws its interval only when the test shows it worse or better.
    pub test: Option<CaseTest>,
    /// Its trials, baseline and with-skill, by attempt.
    pub trials: Vec<TrialView>,
    /// Pairwise judge verdicts on the case (baseline against with-skill).
    pub pairwise: Vec<StoredJudgment>,
    /// (passed, trials) without the skill, over every attempt.
    pub baseline: (usize, usize),
    /// (passed, trials) with the skill, over every attempt.
    pub skill: (usize, usize),
    /// Trials not detailed (attempts past [`trajectory::MAX_ATTEMPTS`]).
    pub hidden: usize,
}

impl CaseView {
    /// What the exact test found; `NotShown` without a test.
    pub fn finding(&self) -> CaseFinding {
        self.test
            .as_ref()
            .map_or(CaseFinding::NotShown, |t| t.finding)
    }

    /// The interval the page draws: only for a case the exact test shows worse or better.
    pub fn shown_interval(&self) -> Option<&Interval> {
        match self.finding() {
            CaseFinding::NotShown => None,
            _ => self.test.as_ref()?.interval.as_ref(),
        }
    }

    /// `baseline 1/3 passed · skill 3/3 passed · not shown at 95% (Fisher's exact test p =
    /// 0.400, Holm-adjusted over 12 cases 1.000)`.
    pub fn counts_and_finding(&self, cases: usize) -> String {
        let counts = format!(
            "baseline {}/{} passed · skill {}/{} passed",
            self.baseline.0, self.baseline.1, self.skill.0, self.skill.1
        );
        match &self.test {
            None => counts,
            Some(t) => {
                let what = match t.finding {
                    CaseFinding::Worse => "worse with the skill",
                    CaseFinding::Better => "better with the skill",
                    CaseFinding::NotShown => "not shown either way",
                };
                format!("{counts} · {what} ({})", t.describe(cases))
            }
        }
    }
}

/// One trial with what the drill-down shows of it.
pub struct TrialView {
    /// The trial as stored.
    pub trial: StoredTrial,
    /// Its output, cut to [`trajectory::OUTPUT_CHARS`].
    pub output: Option<String>,
    /// It had an output the page's budget could not hold.
    pub output_omitted: bool,
    /// Its checks (assertions, constraints, judged expectations).
    pub checks: Vec<AssertionResult>,
    /// Its independent judge verdicts.
    pub judgments: Vec<Judgment>,
    /// Its trajectory's steps, or why they are not shown.
    pub trajectory: TrajectoryView,
}

/// One (harness, model)'s completed runs, oldest first.
pub struct Series {
    /// Which series.
    pub key: ModelKey,
    /// Its runs.
    pub points: Vec<Point>,
}

/// One completed run on the timeline.
pub struct Point {
    /// The run.
    pub run: RunId,
    /// When it started (epoch ms).
    pub at_ms: i64,
    /// The skill version's short hash.
    pub version: String,
    /// Its outcome lift's verdict (estimate, interval, reason).
    pub verdict: Decision,
}

/// A run whose lift fell against the run before it (same harness, any model).
pub struct Regression {
    /// When the regressed run started.
    pub at_ms: i64,
    /// Its lift (where the marker goes).
    pub lift: Option<f64>,
    /// The comparison's reason, from the verdict rule.
    pub reason: String,
}

/// What the drill-down did not include, said on the page.
#[derive(Debug, Default, Clone, Copy)]
pub struct Omitted {
    /// Trajectories left out once the budget was spent.
    pub trajectories: usize,
    /// Outputs left out once the budget was spent.
    pub outputs: usize,
    /// Trials past [`trajectory::MAX_ATTEMPTS`] per case and condition, not detailed.
    pub trials: usize,
}

/// Read the history of `skills` (every skill in the history when empty) into a report.
/// `trajectory_budget` caps the bytes of trajectory and output text the drill-down embeds.
pub fn gather(
    store: &Store,
    skills: &[String],
    trajectory_budget: usize,
    generated_ms: i64,
) -> Result<Report, StoreError> {
    let names: Vec<String> = if skills.is_empty() {
        store.skills()?.into_iter().map(|s| s.name).collect()
    } else {
        skills.to_vec()
    };
    let mut budget = Budget::new(trajectory_budget);
    let mut reports = Vec::new();
    for name in names {
        reports.push(skill_report(store, &name, &mut budget)?);
    }
    let mut columns: Vec<ModelKey> = reports
        .iter()
        .flat_map(|s| s.latest.iter().map(LatestRun::key))
        .collect();
    columns.sort();
    columns.dedup();
    let hidden = reports
        .iter()
        .flat_map(|s| &s.latest)
        .flat_map(|r| &r.cases)
        .map(|c| c.hidden)
        .sum();
    Ok(Report {
        db: store.path().display().to_string(),
        generated_ms,
        skills: reports,
        columns,
        omitted: Omitted {
            trajectories: budget.omitted(),
            outputs: budget.omitted_outputs(),
            trials: hidden,
        },
    })
}

fn skill_report(store: &Store, name: &str, budget: &mut Budget) -> Result<SkillReport, StoreError> {
    let latest = store
        .latest_lift_per_model(name)?
        .into_iter()
        .map(|lift| latest_run(store, lift, budget))
        .collect::<Result<Vec<_>, _>>()?;
    let completed = store.history(
        name,
        &RunFilter {
            status: Some(RunStatus::Completed),
            ..RunFilter::default()
        },
    )?;
    let mut by_key: BTreeMap<ModelKey, Vec<Point>> = BTreeMap::new();
    let mut in_time: Vec<&RunInfo> = Vec::new();
    for entry in completed.iter().rev() {
        let Some(headline) = &entry.headline else {
            continue;
        };
        in_time.push(&entry.run);
        by_key
            .entry(ModelKey::of(&entry.run))
            .or_default()
            .push(Point {
                run: entry.run.id,
                at_ms: entry.run.started_ms,
                version: short_hash(&entry.run.skill_hash),
                verdict: headline.profile(entry.run.profile()).verdict.clone(),
            });
    }
    let regressions = regressions(store, &in_time, &by_key)?;
    let mut probes: BTreeMap<(String, String), ProbeReport> = BTreeMap::new();
    for run in store.probe_runs(name, None, PROBE_RUNS_SCANNED)? {
        if run.status == RunStatus::Completed {
            probes
                .entry((run.model.clone(), run.harness.clone()))
                .or_insert_with(|| ProbeReport::of(run));
        }
    }
    Ok(SkillReport {
        name: name.to_string(),
        latest,
        failed: store.latest_failed_per_model(name)?,
        series: by_key
            .into_iter()
            .map(|(key, points)| Series { key, points })
            .collect(),
        regressions,
        probes: probes.into_values().collect(),
    })
}

/// Probe runs of a skill looked at for the newest completed one per (harness, model).
const PROBE_RUNS_SCANNED: usize = 200;

/// Each completed run against the completed run before it on the same harness (the previous
/// model, or the previous skill version): those the comparison calls a regression.
fn regressions(
    store: &Store,
    in_time: &[&RunInfo],
    by_key: &BTreeMap<ModelKey, Vec<Point>>,
) -> Result<Vec<Regression>, StoreError> {
    let params = CompareParams::default();
    let mut previous: BTreeMap<&str, &RunInfo> = BTreeMap::new();
    let mut found = Vec::new();
    for run in in_time {
        if let Some(before) = previous.insert(&run.harness, run) {
            let c = store.compare_runs(before.id, run.id, &params)?;
            if c.comparison.verdict == Verdict::Regresses {
                let lift = by_key
                    .get(&ModelKey::of(run))
                    .and_then(|points| points.iter().find(|p| p.run == run.id))
                    .and_then(|p| p.verdict.estimate);
                found.push(Regression {
                    at_ms: run.started_ms,
                    lift,
                    reason: format!(
                        "run {} ({}) against run {} ({}): {}",
                        run.id, run.model, before.id, before.model, c.comparison.reason
                    ),
                });
            }
        }
    }
    Ok(found)
}

fn latest_run(
    store: &Store,
    lift: ModelLift,
    budget: &mut Budget,
) -> Result<LatestRun, StoreError> {
    let id = lift.run.id;
    let summary = match store.summary(id) {
        Ok(s) => s,
        Err(StoreError::Scoring { .. }) => None,
        Err(e) => return Err(e),
    };
    let trials = store.run_trials(id)?;
    let lifts: BTreeMap<&str, (Option<f64>, Option<&CaseTest>)> = summary
        .iter()
        .flat_map(|s| s.lift.cases.iter())
        .map(|c| (c.case_id.as_str(), (c.outcome, c.outcome_test.as_ref())))
        .collect();
    let mut pairwise: BTreeMap<String, Vec<StoredJudgment>> = BTreeMap::new();
    let mut own: BTreeMap<i64, Vec<Judgment>> = BTreeMap::new();
    for j in store.run_judgments(id)? {
        match j.trial {
            Some(trial) if j.judgment.kind != JudgmentKind::Pairwise => {
                own.entry(trial.0).or_default().push(j.judgment)
            }
            _ => pairwise.entry(j.case.clone()).or_default().push(j),
        }
    }
    let mut cases: Vec<CaseView> = store
        .run_cases(id)?
        .into_iter()
        .map(|case| CaseView {
            lift: lifts.get(case.key.as_str()).and_then(|l| l.0),
            test: lifts.get(case.key.as_str()).and_then(|l| l.1).cloned(),
            pairwise: pairwise.remove(&case.key).unwrap_or_default(),
            id: case.key,
            trials: Vec::new(),
            baseline: (0, 0),
            skill: (0, 0),
            hidden: 0,
        })
        .collect();
    for trial in trials {
        let at = match cases.iter().position(|c| c.id == trial.case) {
            Some(at) => at,
            None => {
                cases.push(CaseView {
                    id: trial.case.clone(),
                    lift: None,
                    test: None,
                    trials: Vec::new(),
                    pairwise: Vec::new(),
                    baseline: (0, 0),
                    skill: (0, 0),
                    hidden: 0,
                });
                cases.len() - 1
            }
        };
        let case = &mut cases[at];
        // the case's two-arm tallies; a plugin trial is listed below with its condition
        let tally = match trial.condition {
            skillwatch_daemon::store::Condition::Baseline => Some(&mut case.baseline),
            skillwatch_daemon::store::Condition::Skill => Some(&mut case.skill),
            skillwatch_daemon::store::Condition::Plugin => None,
        };
        if let Some(tally) = tally {
            tally.0 += usize::from(trial.passed == Some(true));
            tally.1 += 1;
        }
        if trial.attempt >= trajectory::MAX_ATTEMPTS {
            case.hidden += 1;
            continue;
        }
        let stored = store.trial_output(trial.id)?;
        let output = stored
            .as_ref()
            .and_then(|o| budget.output(trajectory::cut(o, trajectory::OUTPUT_CHARS)));
        case.trials.push(TrialView {
            output_omitted: stored.is_some() && output.is_none(),
            output,
            checks: store.trial_checks(trial.id)?,
            judgments: own.remove(&trial.id.0).unwrap_or_default(),
            trajectory: trajectory::view(store, &trial, budget)?,
            trial,
        });
    }
    Ok(LatestRun { lift, cases })
}

/// The first characters of a content hash (`sha256:5f1c0a7e…` -> `5f1c0a7e`).
fn short_hash(hash: &str) -> String {
    crate::cmd::history_db::short_hash(hash)
}
