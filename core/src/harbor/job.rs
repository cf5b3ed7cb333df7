//! A Harbor job folder as files: the job's `result.json` and, per trial folder, its
//! `result.json` (TrialResult), `lock.json`, `verifier/skillwatch.json` and
//! `agent/trajectory.json`.
//!
//! Only the fields skillwatch uses are read, and none is required beyond what identifies a
//! trial: Harbor adds fields between versions, and a job from a newer Harbor should still
//! import. Absolute paths Harbor writes (`trial_uri`, task paths) are never read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::manifest::{MANIFEST_FILE, Manifest};

/// Largest `result.json` or `lock.json` read: real ones are a few KiB.
const MAX_RESULT_BYTES: u64 = 16 << 20;

/// Largest trajectory read.
const MAX_TRAJECTORY_BYTES: u64 = 256 << 20;

/// The job's own `result.json` (JobResult), what the import needs of it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct JobMeta {
    /// The job's id.
    pub id: String,
    /// Trials the job will run in all.
    #[serde(default)]
    pub n_total_trials: Option<usize>,
    /// Set once the job ended.
    #[serde(default)]
    pub finished_at: Option<String>,
}

/// A trial's `result.json` (TrialResult), the fields the import reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TrialResult {
    /// The trial's id (a UUID): what makes re-importing it a no-op.
    pub id: String,
    /// `[task].name`, e.g. `skillwatch/pdf-extract-table`.
    #[serde(default)]
    pub task_name: Option<String>,
    /// The trial folder's name.
    pub trial_name: String,
    /// The trial's configuration as given.
    pub config: TrialConfig,
    /// The agent as Harbor saw it.
    #[serde(default)]
    pub agent_info: Option<AgentInfo>,
    /// What the agent reported.
    #[serde(default)]
    pub agent_result: Option<AgentResult>,
    /// The verifier's rewards.
    #[serde(default)]
    pub verifier_result: Option<VerifierResult>,
    /// Why the trial failed to run (not: why its task failed).
    #[serde(default)]
    pub exception_info: Option<ExceptionInfo>,
    /// When the trial started.
    #[serde(default)]
    pub started_at: Option<String>,
    /// When it ended; `None` while it runs.
    #[serde(default)]
    pub finished_at: Option<String>,
    /// The agent's own phase.
    #[serde(default)]
    pub agent_execution: Option<Phase>,
}

/// The exception Harbor records for a trial it stopped (Ctrl-C, a stopped job): the trial has
/// no outcome, and `harbor jobs resume` deletes its folder and runs it again.
pub const CANCELLED: &str = "CancelledError";

impl TrialResult {
    /// Whether Harbor stopped this trial before it ended: not an outcome (an errored trial
    /// would be counted, then run again by a resume), so it counts as not finished.
    pub fn was_cancelled(&self) -> bool {
        self.exception_info
            .as_ref()
            .and_then(|e| e.exception_type.as_deref())
            == Some(CANCELLED)
    }
}

/// `config` of a trial.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TrialConfig {
    /// The agent entry this trial ran.
    pub agent: AgentConfig,
    /// The job it belongs to.
    #[serde(default)]
    pub job_id: Option<String>,
}

/// `config.agent`: one agent entry of the job.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AgentConfig {
    /// `claude-code`, `codex`, or `module:Class`.
    #[serde(default)]
    pub name: Option<String>,
    /// `provider/model`.
    #[serde(default)]
    pub model_name: Option<String>,
    /// Skills injected into this entry's trials (paths or references as given).
    #[serde(default)]
    pub skills: Option<Vec<String>>,
}

/// `agent_info`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AgentInfo {
    /// The agent's name (`claude-code`).
    #[serde(default)]
    pub name: Option<String>,
    /// Its version (the CLI's).
    #[serde(default)]
    pub version: Option<String>,
    /// The model it ran.
    #[serde(default)]
    pub model_info: Option<ModelInfo>,
}

/// `agent_info.model_info`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ModelInfo {
    /// Model name without provider.
    #[serde(default)]
    pub name: Option<String>,
    /// Provider.
    #[serde(default)]
    pub provider: Option<String>,
}

/// `agent_result`: counters; `n_input_tokens` includes the cached ones.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct AgentResult {
    /// Input tokens, cached included.
    #[serde(default)]
    pub n_input_tokens: Option<u64>,
    /// Cached input tokens.
    #[serde(default)]
    pub n_cache_tokens: Option<u64>,
    /// Output tokens.
    #[serde(default)]
    pub n_output_tokens: Option<u64>,
    /// Cost the agent reported.
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

/// `verifier_result`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct VerifierResult {
    /// Reward name to value (`reward` from reward.txt).
    #[serde(default)]
    pub rewards: Option<BTreeMap<String, f64>>,
}

/// `exception_info`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ExceptionInfo {
    /// The Python exception's class.
    #[serde(default)]
    pub exception_type: Option<String>,
    /// Its message.
    #[serde(default)]
    pub exception_message: Option<String>,
}

/// A phase's timestamps.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Phase {
    /// Start.
    #[serde(default)]
    pub started_at: Option<String>,
    /// End.
    #[serde(default)]
    pub finished_at: Option<String>,
}

/// A trial's `lock.json`: the digests Harbor resolved.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TrialLock {
    /// The task and its digest.
    #[serde(default)]
    pub task: Option<LockedTask>,
    /// The injected skills and their digests.
    #[serde(default)]
    pub skills: Vec<LockedSkill>,
}

/// `lock.json` `task`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LockedTask {
    /// The task's name.
    #[serde(default)]
    pub name: Option<String>,
    /// `sha256:<hex>` of the task.
    #[serde(default)]
    pub digest: Option<String>,
}

/// `lock.json` `skills[]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LockedSkill {
    /// The skill's name.
    pub name: String,
    /// `sha256:<hex>` of its folder as Harbor hashes it.
    #[serde(default)]
    pub digest: Option<String>,
}

/// One finished trial folder, read.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialDir {
    /// The folder, for messages.
    pub path: PathBuf,
    /// Its `result.json`.
    pub result: TrialResult,
    /// Its `lock.json`, when present and readable.
    pub lock: Option<TrialLock>,
    /// `verifier/skillwatch.json`: present when skillwatch exported the task and the verifier ran.
    pub manifest: Option<Manifest>,
    /// `agent/trajectory.json`, raw.
    pub trajectory: Option<Vec<u8>>,
}

/// A trial folder that did not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub struct ScanError {
    /// The file at fault.
    pub path: PathBuf,
    /// Expected and found.
    pub reason: String,
}

/// What a job folder holds now.
#[derive(Debug, Clone, PartialEq)]
pub struct JobScan {
    /// The job's `result.json`, when it has one.
    pub meta: Option<JobMeta>,
    /// Finished trials, by folder name.
    pub trials: Vec<TrialDir>,
    /// Trial folders whose `result.json` is not there yet or has no `finished_at` (running),
    /// or that Harbor cancelled (to be run again by `harbor jobs resume`).
    pub running: Vec<PathBuf>,
    /// Trial folders that did not read, with why.
    pub errors: Vec<ScanError>,
}

impl JobScan {
    /// The job's identity: its id, else the one job id its trials name.
    pub fn job_id(&self) -> Option<String> {
        if let Some(m) = &self.meta {
            return Some(m.id.clone());
        }
        let mut ids = self
            .trials
            .iter()
            .filter_map(|t| t.result.config.job_id.clone());
        let first = ids.next()?;
        ids.all(|i| i == first).then_some(first)
    }

    /// Trials not (yet) readable as finished: the job's total minus the finished ones, or the
    /// running folders when the job does not say its total.
    pub fn missing(&self) -> usize {
        let total = self.meta.as_ref().and_then(|m| m.n_total_trials);
        match total {
            Some(n) => n.saturating_sub(self.trials.len()),
            None => self.running.len() + self.errors.len(),
        }
    }

    /// Whether the job ended and every trial it planned was read.
    pub fn complete(&self) -> bool {
        self.meta.as_ref().is_some_and(|m| m.finished_at.is_some())
            && self.missing() == 0
            && self.errors.is_empty()
    }
}

/// Read the job folder `dir`. Fails only when `dir` is not a readable folder; problems with one
/// trial are collected in [`JobScan::errors`] so the others still import.
pub fn scan_job(dir: &Path) -> Result<JobScan, ScanError> {
    let err = |path: &Path, reason: String| ScanError {
        path: path.to_path_buf(),
        reason,
    };
    let entries = std::fs::read_dir(dir)
        .map_err(|e| err(dir, format!("expected a Harbor job folder: {e}")))?;
    let job_result = dir.join("result.json");
    let meta = match read_limited(&job_result, MAX_RESULT_BYTES) {
        Ok(Some(bytes)) => Some(
            serde_json::from_slice::<JobMeta>(&bytes)
                .map_err(|e| err(&job_result, format!("not a Harbor job result: {e}")))?,
        ),
        Ok(None) => None,
        Err(reason) => return Err(err(&job_result, reason)),
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| p.join("config.json").is_file() || p.join("result.json").is_file())
        .collect();
    dirs.sort();
    let mut scan = JobScan {
        meta,
        trials: Vec::new(),
        running: Vec::new(),
        errors: Vec::new(),
    };
    for d in dirs {
        match read_trial_dir(&d) {
            Ok(Some(t)) => scan.trials.push(t),
            Ok(None) => scan.running.push(d),
            Err(e) => scan.errors.push(e),
        }
    }
    Ok(scan)
}

/// One trial folder: `None` while it runs.
pub fn read_trial_dir(dir: &Path) -> Result<Option<TrialDir>, ScanError> {
    let err = |path: PathBuf, reason: String| ScanError { path, reason };
    let result_path = dir.join("result.json");
    let Some(bytes) =
        read_limited(&result_path, MAX_RESULT_BYTES).map_err(|r| err(result_path.clone(), r))?
    else {
        return Ok(None);
    };
    let result: TrialResult = serde_json::from_slice(&bytes).map_err(|e| {
        err(
            result_path.clone(),
            format!("not a Harbor trial result: {e}"),
        )
    })?;
    if result.finished_at.is_none() || result.was_cancelled() {
        return Ok(None);
    }
    let lock_path = dir.join("lock.json");
    let lock = match read_limited(&lock_path, MAX_RESULT_BYTES) {
        Ok(Some(b)) => Some(
            serde_json::from_slice::<TrialLock>(&b)
                .map_err(|e| err(lock_path.clone(), format!("not a Harbor lock file: {e}")))?,
        ),
        Ok(None) => None,
        Err(r) => return Err(err(lock_path, r)),
    };
    let manifest_path = dir.join("verifier").join(MANIFEST_FILE);
    let manifest = match read_limited(&manifest_path, MAX_RESULT_BYTES) {
        Ok(Some(b)) => Some(Manifest::parse(&b).map_err(|r| err(manifest_path.clone(), r))?),
        Ok(None) => None,
        Err(r) => return Err(err(manifest_path, r)),
    };
    let trajectory_path = dir.join("agent").join("trajectory.json");
    let trajectory = read_limited(&trajectory_path, MAX_TRAJECTORY_BYTES)
        .map_err(|r| err(trajectory_path, r))?;
    Ok(Some(TrialDir {
        path: dir.to_path_buf(),
        result,
        lock,
        manifest,
        trajectory,
    }))
}

/// A file's bytes, `None` when it does not exist; refuses files above `max`.
fn read_limited(path: &Path, max: u64) -> Result<Option<Vec<u8>>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read: {e}")),
    };
    if !meta.is_file() {
        return Err("expected a file, found something else".into());
    }
    if meta.len() > max {
        return Err(format!(
            "expected at most {max} bytes, found {} bytes",
            meta.len()
        ));
    }
    std::fs::read(path)
        .map(Some)
        .map_err(|e| format!("cannot read: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/harbor")
    }

    #[test]
    fn real_trial_results_read() {
        for name in [
            "trial-result-claude-code-withskill.json",
            "trial-result-custom-agent-noskill.json",
            "trial-result-custom-agent-withskill.json",
        ] {
            let bytes = std::fs::read(fixtures().join("examples").join(name)).unwrap();
            let r: TrialResult = serde_json::from_slice(&bytes).unwrap();
            assert!(r.finished_at.is_some(), "{name}");
            assert!(r.verifier_result.is_some(), "{name}");
        }
        let lock: TrialLock = serde_json::from_slice(
            &std::fs::read(fixtures().join("examples/trial-lock-claude-code.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(lock.skills[0].name, "release-codename");
        assert!(
            lock.skills[0]
                .digest
                .as_deref()
                .unwrap()
                .starts_with("sha256:")
        );
    }

    #[test]
    fn a_job_folder_scans_its_trials() {
        let scan = scan_job(&fixtures().join("jobs/twoarms")).unwrap();
        assert_eq!(scan.trials.len(), 2);
        assert!(scan.errors.is_empty() && scan.running.is_empty());
        assert_eq!(
            scan.job_id().as_deref(),
            Some("bba83222-be55-4ad6-9c51-2dc85e481176")
        );
        assert_eq!(scan.missing(), 0);
        assert!(scan.complete());
        let with = scan
            .trials
            .iter()
            .find(|t| t.result.trial_name == "codename__rSX2JoP")
            .unwrap();
        assert!(with.trajectory.is_some());
    }

    #[test]
    fn a_job_without_its_result_takes_the_trials_job_id() {
        let scan = scan_job(&fixtures().join("jobs/cc-withskill")).unwrap();
        assert_eq!(
            scan.job_id().as_deref(),
            Some("b6943bdd-9cdc-4945-8395-039d3a5d8a99")
        );
        assert!(!scan.complete(), "no job result: not known to be complete");
    }

    #[test]
    fn damaged_and_running_trials_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path();
        std::fs::write(
            job.join("result.json"),
            r#"{"id": "j", "n_total_trials": 4, "finished_at": null}"#,
        )
        .unwrap();
        let good = job.join("a__1");
        std::fs::create_dir(&good).unwrap();
        std::fs::copy(
            fixtures().join("examples/trial-result-custom-agent-noskill.json"),
            good.join("result.json"),
        )
        .unwrap();
        let bad = job.join("a__2");
        std::fs::create_dir(&bad).unwrap();
        std::fs::write(bad.join("result.json"), "{\"id\": \"x\", \"trial_na").unwrap();
        let running = job.join("a__3");
        std::fs::create_dir(&running).unwrap();
        std::fs::write(running.join("config.json"), "{}").unwrap();
        // a trial Harbor stopped (Ctrl-C): `harbor jobs resume` runs it again, so it is
        // not finished, never an errored trial that the resumed one would duplicate
        let cancelled = job.join("a__4");
        std::fs::create_dir(&cancelled).unwrap();
        let mut r: serde_json::Value = serde_json::from_slice(
            &std::fs::read(fixtures().join("examples/trial-result-custom-agent-noskill.json"))
                .unwrap(),
        )
        .unwrap();
        r["id"] = "cancelled-trial".into();
        r["exception_info"] =
            serde_json::json!({"exception_type": CANCELLED, "exception_message": ""});
        std::fs::write(cancelled.join("result.json"), r.to_string()).unwrap();
        let scan = scan_job(job).unwrap();
        assert_eq!(scan.trials.len(), 1);
        assert_eq!(scan.running, vec![running, cancelled]);
        assert_eq!(scan.errors.len(), 1);
        assert_eq!(scan.errors[0].path, bad.join("result.json"));
        assert!(scan.errors[0].reason.contains("EOF"), "{}", scan.errors[0]);
        assert_eq!(scan.missing(), 3);
        assert!(!scan.complete());
    }
}
