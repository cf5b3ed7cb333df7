//! Harbor job folders into the history: each finished trial graded as a local trial is
//! (`core::harbor`) and stored as a trial of a run per (agent, model), by Harbor's trial id so
//! importing a job again adds only what finished since.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;
use skillwatch_core::evalspec::Case;
use skillwatch_core::grading::GRADING_VERSION;
use skillwatch_core::harbor::{
    Arm, ArmRule, HarborTrial, JobScan, Manifest, REWARD_KEY, TrialStatus as HarborStatus,
    epoch_us, grade, read_trial, scan_job,
};
use skillwatch_core::plural::count;
use skillwatch_core::skill::hash_bytes;

use crate::runner::{assertion_rows, suite_hash};
use crate::store::{
    CaseSpec, Condition, ExternalRun, RunSpec, RunStatus, SkillIdentity, SuiteSpec, Tokens,
    Trajectory, TrialRecord, TrialStatus, Trigger, UNKNOWN_HASH,
};

/// How to read a job.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The skill under test, for jobs skillwatch did not export (their manifest names it).
    pub skill: Option<String>,
    /// How to tell the arms apart.
    pub arm_from: ArmRule,
}

/// A job folder, read and mapped.
#[derive(Debug)]
pub struct JobImport {
    /// The folder.
    pub dir: PathBuf,
    /// Runs to write (one per agent and model).
    pub runs: Vec<ExternalRun>,
    /// Trials that did not read: the folder and why.
    pub damaged: Vec<String>,
    /// Trials the job has not finished.
    pub missing: usize,
}

/// Several job folders of one skill read together: Harbor users run the two arms as separate
/// jobs (SkillsBench did), and their trials pair only when they land in one run.
#[derive(Debug)]
pub struct JobsImport {
    /// Each job that read, in the order given, with its own damaged and missing trials (its
    /// `runs` are empty: the runs are the call's).
    pub jobs: Vec<JobImport>,
    /// Jobs that could not be read at all (the others still import).
    pub failed: Vec<JobError>,
    /// Runs to write: one per agent and model over all the jobs.
    pub runs: Vec<ExternalRun>,
    /// Tasks with trials in one arm only, over all the jobs: they have no partner to pair with.
    pub unpaired: Vec<Unpaired>,
}

/// A task whose trials are all of one arm.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unpaired {
    /// The task (case key).
    pub task: String,
    /// The arm it has trials in: `baseline` or `skill`.
    pub only: &'static str,
    /// How many trials it has there.
    pub trials: usize,
}

impl std::fmt::Display for Unpaired {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let other = if self.only == "baseline" {
            "skill"
        } else {
            "baseline"
        };
        write!(
            f,
            "task {:?} has {} in the {} arm and none in the {other} arm: no pair, no lift from it",
            self.task,
            count(self.trials, "trial"),
            self.only
        )
    }
}

/// A job folder that cannot be imported at all.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", dir.display())]
pub struct JobError {
    /// The folder.
    pub dir: PathBuf,
    /// Why.
    pub reason: String,
}

/// Read the job in `dir` and map its finished trials; trials for which `stored` says yes (by
/// Harbor's trial id) are counted but not graded again.
pub fn read_job(
    dir: &Path,
    opts: &ImportOptions,
    stored: &dyn Fn(&str) -> bool,
) -> Result<JobImport, JobError> {
    let mut all = read_jobs(&[dir.to_path_buf()], opts, stored)?;
    if let Some(e) = all.failed.pop() {
        return Err(e);
    }
    let mut job = all.jobs.pop().expect("one job read");
    job.runs = all.runs;
    Ok(job)
}

/// One job folder, scanned.
struct Scanned {
    dir: PathBuf,
    job_id: String,
    scan: JobScan,
}

fn scan_one(dir: &Path) -> Result<Scanned, JobError> {
    let fail = |reason: String| JobError {
        dir: dir.to_path_buf(),
        reason,
    };
    let scan = scan_job(dir).map_err(|e| fail(e.to_string()))?;
    let job_id = scan
        .job_id()
        .ok_or_else(|| fail("expected a Harbor job folder (a result.json with its id, or trial folders of one job), found neither".into()))?;
    Ok(Scanned {
        dir: dir.to_path_buf(),
        job_id,
        scan,
    })
}

/// Read the jobs in `dirs` as one import: the skill is taken from any job that names it (an
/// exported job's manifest, `--skill`, or the one skill all the trials name), the trials of
/// every job go into one run per agent and model (several jobs of one arm add attempts), and
/// tasks left with one arm are listed in [`JobsImport::unpaired`]. Fails only when no job
/// read, or none names the skill.
pub fn read_jobs(
    dirs: &[PathBuf],
    opts: &ImportOptions,
    stored: &dyn Fn(&str) -> bool,
) -> Result<JobsImport, JobError> {
    let mut scanned = Vec::new();
    let mut failed = Vec::new();
    for dir in dirs {
        match scan_one(dir) {
            Ok(s) => scanned.push(s),
            Err(e) => failed.push(e),
        }
    }
    let Some(first) = scanned.first() else {
        return Err(failed.remove(0));
    };
    let suite = scanned
        .iter()
        .flat_map(|s| &s.scan.trials)
        .find_map(|t| t.manifest.clone());
    let skill = suite
        .as_ref()
        .map(|m| m.skill.name.clone())
        .or_else(|| opts.skill.clone())
        .or_else(|| only_named_skill(scanned.iter().map(|s| &s.scan)))
        .ok_or_else(|| JobError {
            dir: first.dir.clone(),
            reason: if scanned.len() == 1 {
                "expected the skill under test to be known: the tasks were not exported by skillwatch and the trials name no single skill; say which with --skill NAME".into()
            } else {
                "expected the skill under test to be known: the tasks were not exported by skillwatch and the trials of these jobs name no single skill; say which with --skill NAME".into()
            },
        })?;
    let definitions: BTreeMap<String, Case> = scanned
        .iter()
        .flat_map(|s| &s.scan.trials)
        .filter_map(|t| t.manifest.as_ref())
        .map(|m| (m.case.key.clone(), m.case.definition.clone()))
        .collect();
    let mut trials: Vec<HarborTrial> = Vec::new();
    let mut jobs = Vec::new();
    for s in &scanned {
        let (read, damaged) = read_trials(&s.scan, suite.as_ref(), &skill, opts);
        trials.extend(read);
        jobs.push(JobImport {
            dir: s.dir.clone(),
            runs: Vec::new(),
            damaged,
            missing: s.scan.missing(),
        });
    }
    let unpaired = unpaired(&trials);
    let mut job_ids: Vec<&str> = scanned.iter().map(|s| s.job_id.as_str()).collect();
    job_ids.sort_unstable();
    job_ids.dedup();
    let ctx = RunContext {
        job_id: job_ids.join("+"),
        skill: &skill,
        suite: suite.as_ref(),
        definitions: &definitions,
        opts,
        complete: failed.is_empty() && scanned.iter().all(|s| s.scan.complete()),
        finished_ms: scanned
            .iter()
            .map(|s| {
                s.scan
                    .meta
                    .as_ref()
                    .and_then(|m| m.finished_at.as_deref())
                    .and_then(epoch_us)
                    .map(|us| us / 1000)
            })
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().max()),
    };
    Ok(JobsImport {
        jobs,
        failed,
        runs: ctx.runs(trials, stored),
        unpaired,
    })
}

/// The trials of one scanned job that belong to the suite, and the folders that did not.
fn read_trials(
    scan: &JobScan,
    suite: Option<&Manifest>,
    skill: &str,
    opts: &ImportOptions,
) -> (Vec<HarborTrial>, Vec<String>) {
    let mut damaged: Vec<String> = scan.errors.iter().map(ToString::to_string).collect();
    let mut trials = Vec::new();
    for dir in &scan.trials {
        let t = read_trial(dir, suite, Some(skill), &opts.arm_from);
        let known = suite.is_none_or(|m| m.suite.cases.iter().any(|c| c.key == t.case));
        if known {
            trials.push(t);
        } else {
            damaged.push(format!(
                "{}: expected a task of the exported suite, found task {:?}, which is none of its cases",
                dir.path.display(),
                t.case
            ));
        }
    }
    (trials, damaged)
}

/// Tasks whose trials (over every agent and model) are all of one arm.
fn unpaired(trials: &[HarborTrial]) -> Vec<Unpaired> {
    let mut arms: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for t in trials {
        let n = arms.entry(t.case.as_str()).or_default();
        match t.arm {
            Arm::Baseline => n.0 += 1,
            Arm::Skill => n.1 += 1,
        }
    }
    arms.into_iter()
        .filter_map(|(task, (baseline, skill))| {
            let (only, trials) = match (baseline, skill) {
                (0, n) => ("skill", n),
                (n, 0) => ("baseline", n),
                _ => return None,
            };
            Some(Unpaired {
                task: task.to_owned(),
                only,
                trials,
            })
        })
        .collect()
}

/// What every run of one import shares.
struct RunContext<'a> {
    /// The job id, or the sorted ids of several jobs joined by `+` (a run's identity across
    /// imports of the same jobs, in any order).
    job_id: String,
    skill: &'a str,
    suite: Option<&'a Manifest>,
    definitions: &'a BTreeMap<String, Case>,
    opts: &'a ImportOptions,
    complete: bool,
    finished_ms: Option<i64>,
}

impl RunContext<'_> {
    /// One run per agent and model, its trials in (task, arm, start) order.
    fn runs(
        &self,
        mut trials: Vec<HarborTrial>,
        stored: &dyn Fn(&str) -> bool,
    ) -> Vec<ExternalRun> {
        trials.sort_by(|a, b| {
            (&a.case, a.arm, &a.started_at, &a.trial_name).cmp(&(
                &b.case,
                b.arm,
                &b.started_at,
                &b.trial_name,
            ))
        });
        let mut groups: BTreeMap<(String, String), Vec<HarborTrial>> = BTreeMap::new();
        for t in trials {
            groups
                .entry((t.harness.clone(), t.model.clone()))
                .or_default()
                .push(t);
        }
        groups
            .into_iter()
            .map(|((harness, model), trials)| self.run(&harness, &model, &trials, stored))
            .collect()
    }

    fn run(
        &self,
        harness: &str,
        model: &str,
        trials: &[HarborTrial],
        stored: &dyn Fn(&str) -> bool,
    ) -> ExternalRun {
        let spec = run_spec(
            &self.job_id,
            self.skill,
            self.suite,
            self.definitions,
            harness,
            model,
            trials,
            self.opts,
        );
        let (old, new): (Vec<&HarborTrial>, Vec<&HarborTrial>) =
            trials.iter().partition(|t| stored(&t.id));
        let records = new
            .into_iter()
            .map(|t| {
                (
                    t.id.clone(),
                    record(t, self.definitions.get(&t.case), self.skill),
                )
            })
            .collect();
        ExternalRun {
            external_id: format!("harbor:{}:{harness}:{model}", self.job_id),
            spec,
            trials: records,
            stored: old.len(),
            complete: self.complete,
            finished_ms: self.finished_ms,
        }
    }
}

/// The one skill the trials' lock files and agent entries name, if there is exactly one.
fn only_named_skill<'a>(scans: impl Iterator<Item = &'a JobScan>) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for t in scans.flat_map(|s| &s.trials) {
        if let Some(lock) = &t.lock {
            names.extend(lock.skills.iter().map(|s| s.name.as_str()));
        }
        for s in t.result.config.agent.skills.iter().flatten() {
            let s = s.trim_end_matches('/');
            let s = s.split_once('@').map_or(s, |(p, _)| p);
            names.extend(s.rsplit('/').next());
        }
    }
    names.sort_unstable();
    names.dedup();
    match names.as_slice() {
        [one] => Some((*one).to_owned()),
        _ => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn run_spec(
    job_id: &str,
    skill: &str,
    suite: Option<&Manifest>,
    definitions: &BTreeMap<String, Case>,
    harness: &str,
    model: &str,
    trials: &[HarborTrial],
    opts: &ImportOptions,
) -> RunSpec {
    let digest = trials.iter().find_map(|t| t.skill_digest.clone());
    let (content_hash, suite_spec) = match suite {
        Some(m) => (
            m.skill.content_hash.clone(),
            SuiteSpec {
                content_hash: m.suite.content_hash.clone(),
                source: m.suite.source.clone(),
                cases: m
                    .suite
                    .cases
                    .iter()
                    .map(|c| CaseSpec {
                        key: c.key.clone(),
                        content_hash: c.content_hash.clone(),
                        definition: definitions
                            .get(&c.key)
                            .and_then(|d| serde_json::to_value(d).ok()),
                    })
                    .collect(),
            },
        ),
        None => {
            let mut keys: Vec<&str> = trials.iter().map(|t| t.case.as_str()).collect();
            keys.sort_unstable();
            keys.dedup();
            let cases: Vec<CaseSpec> = keys
                .iter()
                .map(|k| CaseSpec {
                    key: (*k).to_owned(),
                    content_hash: hash_bytes(format!("harbor-task:{k}").as_bytes()),
                    definition: Some(json!({"harbor_task": k})),
                })
                .collect();
            (
                digest.clone().unwrap_or_else(|| UNKNOWN_HASH.into()),
                SuiteSpec {
                    content_hash: suite_hash(&cases),
                    source: None,
                    cases,
                },
            )
        }
    };
    let started_ms = trials
        .iter()
        .filter_map(|t| epoch_us(t.started_at.as_deref()?))
        .min()
        .map(|us| us / 1000);
    RunSpec {
        skill: SkillIdentity {
            name: skill.to_owned(),
            path: None,
            content_hash,
        },
        suite: suite_spec,
        harness: harness.to_owned(),
        harness_version: trials.iter().find_map(|t| t.harness_version.clone()),
        model: model.to_owned(),
        judge_model: None,
        scoring_profile: crate::store::DEFAULT_SCORING_PROFILE.into(),
        trigger: Trigger::Import,
        config: json!({
            "harbor": {
                "job_id": job_id,
                "skill_digest": digest,
                "arm_from": match &opts.arm_from {
                    ArmRule::AgentSkills => "agent-skills".to_owned(),
                    ArmRule::TaskSuffix(s) => format!("task-suffix:{s}"),
                },
                "exported_by_skillwatch": suite.is_some(),
            },
            "support_skills": suite.map(|m| m.support.clone()).unwrap_or_default(),
            "grading_version": GRADING_VERSION,
        }),
        seed: 0,
        tool_version: format!("skillwatch {} (harbor import)", env!("CARGO_PKG_VERSION")),
        started_ms,
    }
}

/// The trial as a local trial's record: graded from its trajectory when its case is known,
/// else passed when the headline reward is 1.
fn record(t: &HarborTrial, case: Option<&Case>, skill: &str) -> TrialRecord {
    let condition = match t.arm {
        Arm::Baseline => Condition::Baseline,
        Arm::Skill => Condition::Skill,
    };
    let mut r = TrialRecord::new(t.case.clone(), condition, 0);
    r.status = match &t.status {
        HarborStatus::Completed => TrialStatus::Completed,
        HarborStatus::Timeout(_) => TrialStatus::Timeout,
        HarborStatus::Errored(_) => TrialStatus::Error,
    };
    r.error_message = match &t.status {
        HarborStatus::Completed => t.trajectory_error.clone(),
        HarborStatus::Timeout(m) | HarborStatus::Errored(m) => Some(m.clone()),
    };
    r.output = t.output();
    r.tokens = Tokens {
        input: t.input_tokens,
        output: t.output_tokens,
        cached: match (t.cached_tokens, t.input_tokens) {
            (Some(c), Some(i)) => Some(c.min(i)),
            (c, _) => c,
        },
    };
    r.cost_usd = t.cost_usd;
    r.wall_ms = t.wall_ms;
    r.started_ms = t
        .started_at
        .as_deref()
        .and_then(epoch_us)
        .map(|us| us / 1000);
    if let Some(traj) = &t.trajectory {
        r.tool_calls = Some(traj.tool_calls().count() as u32);
        r.turns = Some(traj.agent_steps() as u32);
        r.skill_invoked = Some(skillwatch_core::trajectory::was_invoked(traj, skill));
        r.trajectory = serde_json::to_vec(traj).ok().map(|bytes| Trajectory {
            format: traj.schema_version.to_ascii_lowercase(),
            bytes,
        });
    }
    if r.status == TrialStatus::Error {
        return r;
    }
    match case.and_then(|c| Some((c, grade(c, skill, t)?))) {
        Some((c, g)) => {
            r.passed = Some(g.passed(None));
            if t.trajectory.is_some() {
                r.skill_invoked = Some(g.execution.target_invoked);
            }
            r.metrics = g.metrics(c, None);
            r.assertions = assertion_rows(&g.all_checks(None));
        }
        None => {
            r.passed = t
                .rewards
                .get(REWARD_KEY)
                .map(|v| *v >= 1.0 && r.status == TrialStatus::Completed);
        }
    }
    r
}

/// What an import of several jobs says about one job, for people.
pub fn describe(job: &JobImport, added: usize, already: usize, status: RunStatus) -> String {
    let mut s = format!("{}: {} imported", job.dir.display(), count(added, "trial"));
    if already > 0 {
        s.push_str(&format!(", {already} already in the history"));
    }
    if job.missing > 0 {
        s.push_str(&format!(
            "; {} not finished yet (import again later; the run stays {status})",
            count(job.missing, "trial")
        ));
    }
    s
}
