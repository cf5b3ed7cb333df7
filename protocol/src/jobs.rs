//! Jobs: a run of any kind asked of the daemon, from the request to its end.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::RunSpec;

/// A job's id in the daemon's queue (its row in the `jobs` table): stable across restarts, so
/// a client can ask about a job it queued before the daemon was restarted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(pub i64);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Why a job exists; recorded as the run's trigger so history can tell a deliberate run from
/// an automatic one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobTrigger {
    /// `skillwatch run` or an editor command.
    Manual,
    /// A saved SKILL.md or eval file of a skill with `rerun_on_save = true`.
    Save,
    /// A model the history had not seen for the skill (config change or `rerun --all`).
    ModelChange,
}

impl JobTrigger {
    /// The spelling used in the jobs table, JSON and the store's `runs.trigger`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobTrigger::Manual => "manual",
            JobTrigger::Save => "save",
            JobTrigger::ModelChange => "model_change",
        }
    }

    /// The trigger spelled `text`, if any.
    pub fn parse(text: &str) -> Option<JobTrigger> {
        [
            JobTrigger::Manual,
            JobTrigger::Save,
            JobTrigger::ModelChange,
        ]
        .into_iter()
        .find(|t| t.as_str() == text)
    }
}

/// What a job runs: the kind of its [`RunSpec`]. A request without the field (an older
/// client's) is a paired run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// A paired run (`skillwatch run`): its history run is [`JobInfo::run`].
    #[default]
    Paired,
    /// A paired run whose trials Harbor executes (`skillwatch run --on harbor`): its history
    /// run is [`JobInfo::run`].
    Harbor,
    /// The security probe suite (`skillwatch probe`): its probe run is [`JobInfo::probe_run`].
    Probe,
    /// Trigger trials (`skillwatch trigger`): its trigger run is [`JobInfo::trigger_run`].
    Trigger,
    /// A description search (`skillwatch trigger --optimize`): its measurements are child
    /// trigger runs; its record is [`JobInfo::optimization`].
    Optimize,
    /// A kind this build does not know (a newer side's); never run.
    #[serde(other)]
    Unknown,
}

impl JobKind {
    /// The spelling used in JSON, the jobs table and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Paired => "paired",
            JobKind::Harbor => "harbor",
            JobKind::Probe => "probe",
            JobKind::Trigger => "trigger",
            JobKind::Optimize => "optimize",
            JobKind::Unknown => "unknown",
        }
    }

    /// The kind spelled `text`, if any.
    pub fn parse(text: &str) -> Option<JobKind> {
        [
            JobKind::Paired,
            JobKind::Harbor,
            JobKind::Probe,
            JobKind::Trigger,
            JobKind::Optimize,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }

    /// Whether a job of this kind that a stopping daemon left unfinished is run again: a
    /// paired run resumes from its recorded trials; any other kind would start over (a
    /// second record, spent again), so it ends `interrupted`, its finished trials kept.
    pub fn resumes(self) -> bool {
        self == JobKind::Paired
    }

    /// What its [`JobProgress`] counts, singular: a paired run's trials, a probe run's
    /// probes, a trigger run's trials.
    pub fn unit(self) -> &'static str {
        match self {
            JobKind::Probe => "probe",
            _ => "trial",
        }
    }

    /// What a run of this kind is called in one line of text (`trigger of /skills/pdf`).
    pub fn noun(self) -> &'static str {
        match self {
            JobKind::Paired => "run",
            JobKind::Harbor => "Harbor run",
            JobKind::Probe => "probe",
            JobKind::Trigger => "trigger",
            JobKind::Optimize => "description search",
            JobKind::Unknown => "unknown run",
        }
    }
}

/// Where a job is in its life. `Queued` and `Running` are live; the others are final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting for a free slot on its harness (or for the daily budget).
    Queued,
    /// Its run is executing.
    Running,
    /// The run finished and was scored.
    Completed,
    /// The run could not be made (bad skill, no eval file, harness error...); see `error`.
    Failed,
    /// Cancelled by a client; its agent processes were killed.
    Cancelled,
    /// The daemon died during the job twice: it is not re-queued again.
    Interrupted,
}

impl JobState {
    /// Every state, in lifecycle order.
    pub const ALL: [JobState; 6] = [
        JobState::Queued,
        JobState::Running,
        JobState::Completed,
        JobState::Failed,
        JobState::Cancelled,
        JobState::Interrupted,
    ];

    /// The spelling used in the jobs table and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Completed => "completed",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
            JobState::Interrupted => "interrupted",
        }
    }

    /// The state spelled `text`, if any.
    pub fn parse(text: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether the job can still change (queued or running).
    pub fn is_live(self) -> bool {
        matches!(self, JobState::Queued | JobState::Running)
    }
}

impl fmt::Display for JobState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A job asked of the daemon. Either a whole typed request ([`RunRequest::spec`], what the CLI
/// builds from its flags and `skillwatch.toml`), or, without one, a paired run on the fields
/// below over the `skillwatch.toml` governing the skill, resolved when the job starts (what the
/// editor, a saved file and a model change ask for).
///
/// `harness`, `model` and `kind` name what the job runs on for lists and for coalescing saves;
/// with a spec they are the spec's ([`RunRequest::of`]), and the daemon refuses a request
/// whose fields and spec disagree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The skill folder (absolute: the daemon's working directory is not the client's).
    pub skill_dir: PathBuf,
    /// Harness name: `openai`, `claude-code`, `codex`, `command`.
    pub harness: String,
    /// The agent model.
    pub model: String,
    /// The judge model, when LLM judging is wanted.
    pub judge_model: Option<String>,
    /// Attempts per case and condition.
    pub runs: Option<u32>,
    /// Trials at once within the run.
    pub jobs: Option<u32>,
    /// Only these cases (by name or id); empty means every case.
    pub cases: Vec<String>,
    /// Harness endpoint, e.g. `http://127.0.0.1:11434/v1` for `openai` (else from config).
    pub base_url: Option<String>,
    /// Per-trial timeout in seconds (else from the case or config).
    pub timeout_secs: Option<u64>,
    /// Why the run is asked for.
    pub trigger: JobTrigger,
    /// What kind of run.
    #[serde(default)]
    pub kind: JobKind,
    /// The whole request, typed by kind; it wins over the loose fields above. Required for
    /// every kind but a paired run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<RunSpec>,
    /// The [`PROTOCOL_VERSION`](crate::PROTOCOL_VERSION) of the side that asked, so a daemon
    /// that does not know the kind names both versions when it refuses it.
    #[serde(default)]
    pub protocol: u32,
    /// The client's environment variables the run reads (API keys, the harness's own
    /// variables, `env_allow`), each with whether the client had it set. Only the names are
    /// kept: the values travel with `enqueue_client_run` and live in the daemon's memory for
    /// the job's life, never in the queue, the history or the log. Filled in by the daemon.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub client_env: BTreeMap<String, bool>,
}

impl RunRequest {
    /// A manual paired run of every case, settings from the skill's `skillwatch.toml`.
    pub fn new(
        skill_dir: impl Into<PathBuf>,
        harness: impl Into<String>,
        model: impl Into<String>,
    ) -> RunRequest {
        RunRequest {
            skill_dir: skill_dir.into(),
            harness: harness.into(),
            model: model.into(),
            judge_model: None,
            runs: None,
            jobs: None,
            cases: Vec::new(),
            base_url: None,
            timeout_secs: None,
            trigger: JobTrigger::Manual,
            kind: JobKind::Paired,
            spec: None,
            protocol: crate::PROTOCOL_VERSION,
            client_env: BTreeMap::new(),
        }
    }

    /// A job running `spec`, asked for by `trigger`: its skill, harness, model and kind are
    /// the spec's.
    pub fn of(spec: RunSpec, trigger: JobTrigger) -> RunRequest {
        let (harness, model) = spec
            .harness_and_model()
            .map_or((String::new(), String::new()), |(h, m)| {
                (h.kind.as_str().to_owned(), m.to_owned())
            });
        let skill_dir = spec.skill_dir().map(PathBuf::from).unwrap_or_default();
        RunRequest {
            kind: spec.kind(),
            spec: Some(spec),
            trigger,
            ..RunRequest::new(skill_dir, harness, model)
        }
    }

    /// Why the fields and the spec disagree, if they do (a hand-made or damaged request).
    pub fn disagreement(&self) -> Option<String> {
        let Some(spec) = &self.spec else {
            return (self.kind != JobKind::Paired).then(|| {
                format!(
                    "a {} job: expected its request (`spec`), found none",
                    self.kind.as_str()
                )
            });
        };
        if let RunSpec::Unknown(_) = spec {
            return None;
        }
        let (harness, model) = spec.harness_and_model()?;
        let fields = (self.kind, self.harness.as_str(), self.model.as_str());
        let wanted = (spec.kind(), harness.kind.as_str(), model);
        (fields != wanted).then(|| {
            format!(
                "the job says {} on {} with {}, its request {} on {} with {}",
                fields.0.as_str(),
                fields.1,
                fields.2,
                wanted.0.as_str(),
                wanted.1,
                wanted.2
            )
        })
    }
}

/// What a run reads from the environment of the client that asked for it: each variable the
/// run names, with the client's value or `None` when the client does not set it. A run
/// through the daemon sees these, and never the daemon's own values of the same names, so it
/// runs with the same keys as it would in the client's own process.
///
/// Its `Debug` shows names only: the values are secrets.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClientEnv(BTreeMap<String, Option<String>>);

impl ClientEnv {
    /// The values of `names` in this process's environment (a non-UTF-8 value counts as
    /// unset).
    pub fn capture<'a>(names: impl IntoIterator<Item = &'a str>) -> ClientEnv {
        ClientEnv(
            names
                .into_iter()
                .map(|n| (n.to_owned(), std::env::var(n).ok()))
                .collect(),
        )
    }

    /// An environment where each of `names` is unset.
    pub fn unset<'a>(names: impl IntoIterator<Item = &'a str>) -> ClientEnv {
        ClientEnv(names.into_iter().map(|n| (n.to_owned(), None)).collect())
    }

    /// The variables, each with its value or `None`.
    pub fn vars(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_deref()))
    }

    /// Each name with whether it is set: what may be stored about it.
    pub fn presence(&self) -> BTreeMap<String, bool> {
        self.0
            .iter()
            .map(|(k, v)| (k.clone(), v.is_some()))
            .collect()
    }

    /// Whether no variable is named (a client that passes nothing: the daemon's environment
    /// is used as it is).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for ClientEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.0
                    .iter()
                    .map(|(k, v)| (k, if v.is_some() { "<set>" } else { "<unset>" })),
            )
            .finish()
    }
}

/// How far a running job has got, in trials (in probes, for a probe job).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobProgress {
    /// Trials finished (run or reused from a cached baseline).
    pub done: u32,
    /// Trials planned; 0 until the runner has planned the run.
    pub total: u32,
    /// Of `done`, baseline trials reused from the history instead of run.
    pub reused: u32,
}

/// A job as clients see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobInfo {
    /// Its id.
    pub id: JobId,
    /// What was asked.
    pub request: RunRequest,
    /// The skill's name, once known (read from its SKILL.md when the job starts).
    pub skill: Option<String>,
    /// Where it is.
    pub state: JobState,
    /// The history run it records into (its id in `skillwatch history`), once started; after
    /// a restart, the run of the interrupted attempt until the job resumes it. Paired jobs
    /// only.
    pub run: Option<i64>,
    /// The probe run a probe job records into (`skillwatch history` lists it under "Security
    /// probes"), once started.
    #[serde(default)]
    pub probe_run: Option<i64>,
    /// The trigger run a trigger job records into, once started.
    #[serde(default)]
    pub trigger_run: Option<i64>,
    /// The optimisation record a description search stored, once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimization: Option<i64>,
    /// Where a description search is, in words (round, step, spent); `None` for other kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Trials done so far.
    pub progress: JobProgress,
    /// How many times it was started (a restart after a crash starts it again).
    pub attempts: u32,
    /// How many times the daemon died while it ran.
    pub interruptions: u32,
    /// Why it failed, was cancelled or interrupted.
    pub error: Option<String>,
    /// The run's overall lift, once completed.
    pub lift: Option<f64>,
    /// Queued at (epoch ms).
    pub created_ms: i64,
    /// Last started at (epoch ms).
    pub started_ms: Option<i64>,
    /// Ended at (epoch ms).
    pub finished_ms: Option<i64>,
}

/// Which jobs `list_runs` returns, newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobFilter {
    /// Only jobs in these states (all when empty).
    pub states: Vec<JobState>,
    /// Only jobs of this skill folder.
    pub skill_dir: Option<PathBuf>,
    /// At most this many (default 50).
    pub limit: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for s in JobState::ALL {
            assert_eq!(JobState::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert_eq!(
            JobTrigger::parse("model_change"),
            Some(JobTrigger::ModelChange)
        );
        assert_eq!(JobTrigger::parse("import"), None);
        assert!(JobState::Queued.is_live() && !JobState::Interrupted.is_live());
    }

    #[test]
    fn a_client_env_never_shows_its_values() {
        let env = ClientEnv(BTreeMap::from([
            ("KEY".to_owned(), Some("sk-secret-value".to_owned())),
            ("OTHER".to_owned(), None),
        ]));
        let shown = format!("{env:?}");
        assert!(!shown.contains("sk-secret-value"), "{shown}");
        assert!(
            shown.contains("KEY") && shown.contains("<unset>"),
            "{shown}"
        );
        assert_eq!(
            env.presence(),
            BTreeMap::from([("KEY".into(), true), ("OTHER".into(), false)])
        );
    }
}
