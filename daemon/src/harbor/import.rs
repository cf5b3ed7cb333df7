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
    let fail = |reason: String| JobError {
        dir: dir.to_path_buf(),
        reason,
    };
    let scan = scan_job(dir).map_err(|e| fail(e.to_string()))?;
    let job_id = scan
        .job_id()
        .ok_or_else(|| fail("expected a Harbor job folder (a result.json with its id, or trial folders of one job), found neither".into()))?;
    let suite = scan.trials.iter().find_map(|t| t.manifest.clone());
    let skill = suite
        .as_ref()
        .map(|m| m.skill.name.clone())
        .or_else(|| opts.skill.clone())
        .or_else(|| only_named_skill(&scan))
        .ok_or_else(|| {
            fail("expected the skill under test to be known: the tasks were not exported by skillwatch and the trials name no single skill; say which with --skill NAME".into())
        })?;
    let skill = Some(skill);
    let definitions: BTreeMap<String, Case> = scan
        .trials
        .iter()
        .filter_map(|t| t.manifest.as_ref())
        .map(|m| (m.case.key.clone(), m.case.definition.clone()))
        .collect();
    let mut damaged: Vec<String> = scan.errors.iter().map(ToString::to_string).collect();
    let mut trials: Vec<HarborTrial> = Vec::new();
    for dir in &scan.trials {
        let t = read_trial(dir, suite.as_ref(), skill.as_deref(), &opts.arm_from);
        let known = suite
            .as_ref()
            .is_none_or(|m| m.suite.cases.iter().any(|c| c.key == t.case));
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
    let complete = scan.complete();
    let finished_ms = scan
        .meta
        .as_ref()
        .and_then(|m| m.finished_at.as_deref())
        .and_then(epoch_us)
        .map(|us| us / 1000);
    let skill_name = skill.clone().unwrap_or_else(|| "unknown".into());
    let runs = groups
        .into_iter()
        .map(|((harness, model), trials)| {
            let spec = run_spec(
                &job_id,
                &skill_name,
                suite.as_ref(),
                &definitions,
                &harness,
                &model,
                &trials,
                opts,
            );
            let (old, new): (Vec<&HarborTrial>, Vec<&HarborTrial>) =
                trials.iter().partition(|t| stored(&t.id));
            let records = new
                .into_iter()
                .map(|t| {
                    (
                        t.id.clone(),
                        record(t, definitions.get(&t.case), &skill_name),
                    )
                })
                .collect();
            ExternalRun {
                external_id: format!("harbor:{job_id}:{harness}:{model}"),
                spec,
                trials: records,
                stored: old.len(),
                complete,
                finished_ms,
            }
        })
        .collect();
    Ok(JobImport {
        dir: dir.to_path_buf(),
        runs,
        damaged,
        missing: scan.missing(),
    })
}

/// The one skill the trials' lock files and agent entries name, if there is exactly one.
fn only_named_skill(scan: &JobScan) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for t in &scan.trials {
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
