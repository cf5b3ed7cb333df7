//! One Harbor trial as a skillwatch trial: its case, its arm, what happened, and its grading.
//!
//! The arm comes from the trial's own agent entry (`config.agent.skills`), never from the
//! job's stats: Harbor merges two agent entries that differ only in skills into one eval and
//! scores them as two attempts. `exception_info` makes an errored trial (no observation),
//! except an agent timeout, which is a timed-out trial as locally (a failed task). The
//! trajectory is graded by [`crate::grading`] exactly as a local trial's is, with the `file_*`
//! assertions taken from the sandbox verifier's rewards ([`super::verifier`]).

use std::collections::BTreeMap;
use std::path::Path;

use crate::evalspec::Case;
use crate::grading::{self, Grading, TrialInput, Workspace, assertions};
use crate::trajectory::Trajectory;

use super::WORKDIR;
use super::export::SKILLED_SUFFIX;
use super::job::TrialDir;
use super::manifest::{Manifest, ManifestArm};
use super::verifier::{REWARD_KEY, assertion_key, sandbox_checked};

/// Harbor's exception type for an agent that ran out of time.
const AGENT_TIMEOUT: &str = "AgentTimeoutError";

/// Which arm a trial ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arm {
    /// Without the skill under test.
    Baseline,
    /// With it.
    Skill,
}

/// How to tell the arm of a trial whose task skillwatch did not export as a baked variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArmRule {
    /// The agent entry's `skills` name the skill under test (by its last path segment), or,
    /// when the skill is not known, name any skill: what `skillwatch export harbor` writes.
    AgentSkills,
    /// Tasks whose name ends with the suffix are the skill arm (SkillsBench-style variants
    /// with the skill baked into `environment/skills/`): `--arm-from task-suffix:-skilled`.
    TaskSuffix(String),
}

impl ArmRule {
    /// Parse `agent-skills` or `task-suffix:SUFFIX`.
    pub fn parse(text: &str) -> Result<ArmRule, String> {
        match text.split_once(':') {
            None if text == "agent-skills" => Ok(ArmRule::AgentSkills),
            Some(("task-suffix", s)) if !s.is_empty() => Ok(ArmRule::TaskSuffix(s.to_owned())),
            _ => Err(format!(
                "expected `agent-skills` or `task-suffix:SUFFIX` (e.g. task-suffix:-skilled), found {text:?}"
            )),
        }
    }
}

/// How a trial ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrialStatus {
    /// The agent ran and the verifier (if any) reported.
    Completed,
    /// The agent was stopped at its timeout: a failed task.
    Timeout(String),
    /// Harbor could not run the trial (environment, agent set-up, verifier): no observation.
    Errored(String),
}

/// A Harbor trial, read and placed.
#[derive(Debug, Clone, PartialEq)]
pub struct HarborTrial {
    /// Harbor's trial id: what makes re-importing it a no-op.
    pub id: String,
    /// The trial folder's name, for messages.
    pub trial_name: String,
    /// The case key (the manifest's), else the task's name with a baked variant's suffix cut.
    pub case: String,
    /// The arm.
    pub arm: Arm,
    /// How it ended.
    pub status: TrialStatus,
    /// The verifier's rewards.
    pub rewards: BTreeMap<String, f64>,
    /// Input tokens, cached included.
    pub input_tokens: Option<u64>,
    /// Cached input tokens.
    pub cached_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// Cost the agent reported.
    pub cost_usd: Option<f64>,
    /// The agent's execution time.
    pub wall_ms: Option<u64>,
    /// When the trial started, RFC 3339.
    pub started_at: Option<String>,
    /// The agent (`claude-code`, or the `module:Class` given).
    pub harness: String,
    /// Its version, when Harbor reported one.
    pub harness_version: Option<String>,
    /// The model, as Harbor's agent reported it (provider prefix dropped), else as given.
    pub model: String,
    /// Harbor's digest of the skill under test (`lock.json`), on the skill arm.
    pub skill_digest: Option<String>,
    /// The trajectory, when it was there and parsed.
    pub trajectory: Option<Trajectory>,
    /// Why `agent/trajectory.json` was there but did not parse.
    pub trajectory_error: Option<String>,
}

impl HarborTrial {
    /// The agent's final answer: the last agent text of the trajectory.
    pub fn output(&self) -> String {
        self.trajectory
            .as_ref()
            .and_then(Trajectory::final_agent_text)
            .unwrap_or_default()
    }

    /// The headline reward, when the verifier gave one.
    pub fn reward(&self) -> Option<f64> {
        self.rewards.get(REWARD_KEY).copied()
    }
}

/// Place and read one trial folder. `suite` is a manifest of the same export (any trial's),
/// used for trials whose own manifest is missing (the verifier never ran); `skill` is the
/// skill under test when known.
pub fn read_trial(
    dir: &TrialDir,
    suite: Option<&Manifest>,
    skill: Option<&str>,
    rule: &ArmRule,
) -> HarborTrial {
    let r = &dir.result;
    let task = r
        .task_name
        .clone()
        .or_else(|| dir.lock.as_ref()?.task.as_ref()?.name.clone())
        .unwrap_or_else(|| {
            r.trial_name
                .rsplit_once("__")
                .map_or(r.trial_name.clone(), |(t, _)| t.to_owned())
        });
    let arm = arm_of(dir, suite, &task, skill, rule);
    let case = case_of(dir.manifest.as_ref().or(suite), &task, rule);
    let status = match &r.exception_info {
        None => TrialStatus::Completed,
        Some(e) => {
            let kind = e.exception_type.clone().unwrap_or_else(|| "error".into());
            let message = format!(
                "{kind}: {}",
                e.exception_message.as_deref().unwrap_or("(no message)")
            );
            if kind == AGENT_TIMEOUT {
                TrialStatus::Timeout(message)
            } else {
                TrialStatus::Errored(message)
            }
        }
    };
    let (trajectory, trajectory_error) = match &dir.trajectory {
        None => (None, None),
        Some(bytes) => match serde_json::from_slice::<Trajectory>(bytes) {
            Ok(t) => (Some(t), None),
            Err(e) => (None, Some(format!("agent/trajectory.json: {e}"))),
        },
    };
    let agent = r.agent_result.unwrap_or(super::job::AgentResult {
        n_input_tokens: None,
        n_cache_tokens: None,
        n_output_tokens: None,
        cost_usd: None,
    });
    let info = r.agent_info.as_ref();
    let model = info
        .and_then(|i| i.model_info.as_ref()?.name.clone())
        .or_else(|| r.config.agent.model_name.clone())
        .map(|m| m.rsplit_once('/').map_or(m.clone(), |(_, n)| n.to_owned()))
        .unwrap_or_else(|| "unknown".into());
    let skill_digest = match (arm, skill, &dir.lock) {
        (Arm::Skill, Some(name), Some(lock)) => lock
            .skills
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.digest.clone()),
        _ => None,
    };
    HarborTrial {
        id: r.id.clone(),
        trial_name: r.trial_name.clone(),
        case,
        arm,
        status,
        rewards: r
            .verifier_result
            .as_ref()
            .and_then(|v| v.rewards.clone())
            .unwrap_or_default(),
        input_tokens: agent.n_input_tokens,
        cached_tokens: agent.n_cache_tokens,
        output_tokens: agent.n_output_tokens,
        cost_usd: agent.cost_usd.filter(|c| c.is_finite() && *c >= 0.0),
        wall_ms: r
            .agent_execution
            .as_ref()
            .and_then(|p| duration_ms(p.started_at.as_deref()?, p.finished_at.as_deref()?)),
        started_at: r.started_at.clone(),
        harness: info
            .and_then(|i| i.name.clone())
            .or_else(|| r.config.agent.name.clone())
            .unwrap_or_else(|| "harbor".into()),
        harness_version: info.and_then(|i| i.version.clone()),
        model,
        skill_digest,
        trajectory,
        trajectory_error,
    }
}

fn arm_of(
    dir: &TrialDir,
    suite: Option<&Manifest>,
    task: &str,
    skill: Option<&str>,
    rule: &ArmRule,
) -> Arm {
    if let Some(arm) = dir.manifest.as_ref().and_then(|m| m.arm) {
        return match arm {
            ManifestArm::Baseline => Arm::Baseline,
            ManifestArm::Skill => Arm::Skill,
        };
    }
    if baked_variant(suite, task).is_some() {
        return Arm::Skill;
    }
    match rule {
        ArmRule::TaskSuffix(suffix) if task.ends_with(suffix.as_str()) => Arm::Skill,
        ArmRule::TaskSuffix(_) => Arm::Baseline,
        ArmRule::AgentSkills => {
            let skills = dir.result.config.agent.skills.as_deref().unwrap_or(&[]);
            let named = |s: &String| {
                let s = s.trim_end_matches('/');
                let s = s.split_once('@').map_or(s, |(p, _)| p);
                s.rsplit('/').next() == skill
            };
            let has = match skill {
                Some(_) => skills.iter().any(named),
                None => !skills.is_empty(),
            };
            if has { Arm::Skill } else { Arm::Baseline }
        }
    }
}

/// The case key of a baked skill variant of an exported suite (its verifier never ran, so it
/// has no manifest of its own).
fn baked_variant<'a>(suite: Option<&'a Manifest>, task: &str) -> Option<&'a str> {
    let base = task.strip_suffix(SKILLED_SUFFIX)?;
    let m = suite.filter(|m| m.arm.is_some())?;
    m.suite
        .cases
        .iter()
        .find(|c| c.task == base)
        .map(|c| c.key.as_str())
}

fn case_of(manifest: Option<&Manifest>, task: &str, rule: &ArmRule) -> String {
    if let Some(key) = baked_variant(manifest, task) {
        return key.to_owned();
    }
    let base = match rule {
        ArmRule::TaskSuffix(s) => task.strip_suffix(s.as_str()).unwrap_or(task),
        ArmRule::AgentSkills => task,
    };
    manifest
        .and_then(|m| {
            m.suite
                .cases
                .iter()
                .find(|c| c.task == task || c.task == base)
        })
        .map_or_else(|| base.to_owned(), |c| c.key.clone())
}

/// Milliseconds between two RFC 3339 times (Harbor writes `...Z` with microseconds).
fn duration_ms(start: &str, end: &str) -> Option<u64> {
    let (a, b) = (epoch_us(start)?, epoch_us(end)?);
    (b >= a).then(|| ((b - a) / 1000) as u64)
}

/// Microseconds since the epoch of an RFC 3339 UTC time `YYYY-MM-DDTHH:MM:SS[.ffffff][Z|+00:00]`;
/// `None` for anything else (a missing time is better than a wrong one).
pub fn epoch_us(text: &str) -> Option<i64> {
    let text = text
        .strip_suffix('Z')
        .or_else(|| text.strip_suffix("+00:00"))
        .unwrap_or(text);
    let (date, time) = text.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, min, s) = (t.next()??, t.next()??, t.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || h > 23 || min > 59 || s > 60 {
        return None;
    }
    let micros = if frac.is_empty() {
        0
    } else {
        if !frac.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
        digits.parse::<i64>().ok()?
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + h * 3600 + min * 60 + s) * 1_000_000) + micros)
}

/// Grade a trial of `case` as a local trial is graded, with each `file_*` assertion taken from
/// the verifier's `assertion_<i>` reward. `None` for a trial that was not observed (errored).
pub fn grade(case: &Case, skill: &str, trial: &HarborTrial) -> Option<Grading> {
    if matches!(trial.status, TrialStatus::Errored(_)) {
        return None;
    }
    let output = trial.output();
    let tokens = match (trial.input_tokens, trial.output_tokens) {
        (Some(i), Some(o)) => Some(i + o),
        _ => None,
    };
    let decided = |i: usize, a: &crate::evalspec::Assertion| {
        sandbox_checked(a).then(|| {
            let result = match trial.rewards.get(&assertion_key(i)) {
                Some(v) if *v >= 1.0 => Ok(()),
                Some(_) => Err("the sandbox verifier found it false".to_owned()),
                None => Err(format!(
                    "the sandbox verifier did not report it (no `{}` reward)",
                    assertion_key(i)
                )),
            };
            assertions::decided(a, result)
        })
    };
    Some(grading::grade_decided(
        case,
        skill,
        TrialInput {
            output: &output,
            trajectory: trial.trajectory.as_ref(),
            tokens,
            turns: trial
                .trajectory
                .as_ref()
                .map_or(0, |t| t.agent_steps() as u32),
            finished: trial.status == TrialStatus::Completed,
            workspace: Workspace {
                root: Path::new(WORKDIR),
                skip: &[],
            },
        },
        &decided,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harbor::job::{read_trial_dir, scan_job};

    fn fixtures() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/harbor")
    }

    #[test]
    fn the_arm_comes_from_each_trials_agent_skills_not_the_job_stats() {
        let scan = scan_job(&fixtures().join("jobs/twoarms")).unwrap();
        let trials: Vec<HarborTrial> = scan
            .trials
            .iter()
            .map(|t| read_trial(t, None, Some("release-codename"), &ArmRule::AgentSkills))
            .collect();
        let by = |arm| trials.iter().find(|t| t.arm == arm).unwrap();
        let (base, with) = (by(Arm::Baseline), by(Arm::Skill));
        assert_eq!(base.case, "skillwatch/codename");
        assert_eq!(with.case, base.case, "both arms share the task");
        assert_eq!((base.reward(), with.reward()), (Some(0.0), Some(1.0)));
        assert_eq!(
            (base.input_tokens, base.output_tokens, with.input_tokens),
            (Some(78), Some(63), Some(234))
        );
        assert_eq!(with.harness, "skillwatch-scripted-loop");
        assert_eq!(with.harness_version.as_deref(), Some("0.1.0"));
        assert_eq!(with.model, "codename-v1");
        assert_eq!(with.status, TrialStatus::Completed);
        // agent_execution 04:03:27.786736 -> 04:03:28.205782
        assert_eq!(with.wall_ms, Some(419));
        assert!(with.trajectory.is_some(), "{:?}", with.trajectory_error);
    }

    #[test]
    fn claude_codes_atif_v1_7_reads_and_shows_the_skill_call() {
        let dir =
            read_trial_dir(&fixtures().join("jobs/cc-withskill/codename-cc__MxRFiai")).unwrap();
        let t = read_trial(
            &dir.unwrap(),
            None,
            Some("release-codename"),
            &ArmRule::AgentSkills,
        );
        assert_eq!(t.arm, Arm::Skill);
        assert_eq!(
            (t.harness.as_str(), t.model.as_str()),
            ("claude-code", "claude-sonnet-4-5")
        );
        assert_eq!(t.harness_version.as_deref(), Some("2.1.332"));
        assert_eq!(
            t.skill_digest.as_deref(),
            Some("sha256:952092f8467e2ba7bcdb230cd86d4fae0c7111d9fcea4751bfccbe9b41955e85")
        );
        assert_eq!(t.cost_usd, Some(0.027291));
        let traj = t.trajectory.as_ref().expect("ATIF v1.7 parses");
        assert!(crate::trajectory::was_invoked(traj, "release-codename"));
        let case = crate::evalspec::parse_suite(
            crate::evalspec::FileKind::EvalYaml,
            "scenarios:\n  - name: codename\n    prompt: p\n    assertions:\n      - type: file_contains\n        path: answer.txt\n        value: BLUE-HERON\n      - type: exit_success\n",
            "tests/eval.yaml",
        )
        .unwrap()
        .cases
        .remove(0);
        let g = grade(&case, "release-codename", &t).unwrap();
        assert!(g.execution.target_invoked);
        // No assertion_0 reward in a task skillwatch did not export: failed, with why.
        assert!(!g.checks[0].passed);
        assert!(
            g.checks[0]
                .message
                .as_deref()
                .unwrap()
                .contains("assertion_0")
        );
        assert!(g.checks[1].passed, "{:?}", g.checks[1]);
        let mut with_reward = t.clone();
        with_reward.rewards.insert(assertion_key(0), 1.0);
        let g = grade(&case, "release-codename", &with_reward).unwrap();
        assert!(g.passed(None));
    }

    #[test]
    fn an_exception_is_an_errored_trial_and_a_timeout_a_timed_out_one() {
        let dir =
            read_trial_dir(&fixtures().join("jobs/cc-withskill/codename-cc__MxRFiai")).unwrap();
        let mut dir = dir.unwrap();
        dir.result.exception_info = Some(super::super::job::ExceptionInfo {
            exception_type: Some("EnvironmentStartError".into()),
            exception_message: Some("compose up failed".into()),
        });
        let t = read_trial(&dir, None, None, &ArmRule::AgentSkills);
        assert_eq!(
            t.status,
            TrialStatus::Errored("EnvironmentStartError: compose up failed".into())
        );
        let case = crate::evalspec::parse_suite(
            crate::evalspec::FileKind::EvalYaml,
            "scenarios:\n  - name: c\n    prompt: p\n",
            "tests/eval.yaml",
        )
        .unwrap()
        .cases
        .remove(0);
        assert!(grade(&case, "x", &t).is_none());
        dir.result.exception_info.as_mut().unwrap().exception_type = Some(AGENT_TIMEOUT.into());
        let t = read_trial(&dir, None, None, &ArmRule::AgentSkills);
        assert!(matches!(t.status, TrialStatus::Timeout(_)));
        assert!(!grade(&case, "x", &t).unwrap().passed(None));
    }

    #[test]
    fn task_suffix_rule_places_baked_variants() {
        let rule = ArmRule::parse("task-suffix:-skilled").unwrap();
        let dir = read_trial_dir(&fixtures().join("jobs/twoarms/codename__fxG6Tab"))
            .unwrap()
            .unwrap();
        let mut skilled = dir.clone();
        skilled.result.task_name = Some("skillwatch/codename-skilled".into());
        let (a, b) = (
            read_trial(&dir, None, None, &rule),
            read_trial(&skilled, None, None, &rule),
        );
        assert_eq!((a.arm, b.arm), (Arm::Baseline, Arm::Skill));
        assert_eq!(a.case, b.case);
        assert!(ArmRule::parse("task-suffix:").is_err());
        assert!(ArmRule::parse("suffix").is_err());
    }

    #[test]
    fn rfc3339_times_read_as_harbor_writes_them() {
        assert_eq!(epoch_us("1970-01-01T00:00:01Z"), Some(1_000_000));
        assert_eq!(
            epoch_us("2026-11-26T04:03:28.205782Z").unwrap()
                - epoch_us("2026-11-26T04:03:27.786736Z").unwrap(),
            419_046
        );
        assert_eq!(
            epoch_us("2026-11-26T04:03:49.176285"),
            epoch_us("2026-11-26T04:03:49.176285+00:00")
        );
        assert_eq!(epoch_us("2026-13-01T00:00:00Z"), None);
        assert_eq!(epoch_us("yesterday"), None);
    }
}
