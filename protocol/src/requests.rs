//! What a run is asked to do, one typed request per kind of run: a paired run, a paired run
//! whose trials Harbor executes, the security probes, the trigger trials. The CLI builds them
//! from its flags and `skillwatch.toml`, the daemon keeps them in its queue and the run engine
//! (`skillwatch_daemon::runs`) runs them; [`RunSpec`] is the one enum they travel in, so a
//! daemon that does not know a kind says so instead of running it as another.
//!
//! Every field but the skill, the harness and the model has a default, so a request decoded
//! from a few JSON keys is complete.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use skillwatch_core::scoring::skilltester::SkillTesterParams;

use super::JobTrigger;

/// A paired run's row id in the history: what the store's `begin_run` returns and every later
/// call names. Here, not in the store, because a request names one (`--resume RUN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(feature = "sql")]
impl rusqlite::types::ToSql for RunId {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

#[cfg(feature = "sql")]
impl rusqlite::types::FromSql for RunId {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        i64::column_result(value).map(RunId)
    }
}

/// The per-trial timeout when neither the case nor the request sets one (skill-validator's).
pub const DEFAULT_TIMEOUT_SECS: u32 = 120;

/// A trial's timeout: the request's when it sets one, else the case's, else the default.
pub fn trial_timeout(request_secs: Option<u32>, case_secs: Option<u32>) -> Duration {
    let secs = request_secs.or(case_secs).unwrap_or(DEFAULT_TIMEOUT_SECS);
    Duration::from_secs(u64::from(secs))
}

/// The harnesses skillwatch drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HarnessKind {
    /// The Claude Code CLI.
    ClaudeCode,
    /// The Codex CLI.
    Codex,
    /// The Gemini CLI.
    GeminiCli,
    /// OpenCode.
    Opencode,
    /// The Copilot CLI.
    CopilotCli,
    /// skillwatch's own loop over an OpenAI-compatible endpoint.
    Openai,
    /// Any program writing an ATIF file.
    Command,
}

impl HarnessKind {
    /// Every harness, in the order help texts list them.
    pub const ALL: [HarnessKind; 7] = [
        HarnessKind::ClaudeCode,
        HarnessKind::Codex,
        HarnessKind::GeminiCli,
        HarnessKind::Opencode,
        HarnessKind::CopilotCli,
        HarnessKind::Openai,
        HarnessKind::Command,
    ];

    /// The name used on the command line, in config files and in the history.
    pub fn as_str(self) -> &'static str {
        match self {
            HarnessKind::ClaudeCode => "claude-code",
            HarnessKind::Codex => "codex",
            HarnessKind::GeminiCli => "gemini-cli",
            HarnessKind::Opencode => "opencode",
            HarnessKind::CopilotCli => "copilot-cli",
            HarnessKind::Openai => "openai",
            HarnessKind::Command => "command",
        }
    }

    /// Every harness's name, comma-separated, for help texts and errors.
    pub fn names() -> String {
        HarnessKind::ALL.map(HarnessKind::as_str).join(", ")
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<HarnessKind> {
        HarnessKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The environment variable holding the API key when none is configured.
    pub fn default_api_key_env(self) -> Option<&'static str> {
        match self {
            HarnessKind::ClaudeCode => Some("ANTHROPIC_API_KEY"),
            HarnessKind::Codex | HarnessKind::Openai | HarnessKind::Opencode => {
                Some("OPENAI_API_KEY")
            }
            HarnessKind::GeminiCli => Some("GEMINI_API_KEY"),
            HarnessKind::CopilotCli => Some("COPILOT_PROVIDER_API_KEY"),
            HarnessKind::Command => None,
        }
    }
}

/// How to reach and run one harness. Fields that do not apply to a kind are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarnessSettings {
    /// Which harness.
    pub kind: HarnessKind,
    /// The executable: `claude`, `codex` (looked up in PATH by default), or the `command`
    /// harness's program (required for it).
    #[serde(default)]
    pub program: Option<PathBuf>,
    /// Extra arguments: appended before the prompt for the CLIs; the whole argument list (with
    /// `{prompt}` placeholders) for `command`.
    #[serde(default)]
    pub args: Vec<String>,
    /// API base URL: `ANTHROPIC_BASE_URL` for Claude Code, a Responses endpoint for Codex, the
    /// chat-completions base (`http://host/v1`) for `openai` (required for it).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (the key itself is never stored).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Further host environment variables the agent may see.
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// `openai`: model calls per trial.
    #[serde(default)]
    pub max_turns: Option<u32>,
    /// `openai`: sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// `command`: where skills are staged, relative to the workspace.
    #[serde(default)]
    pub skills_dir: Option<PathBuf>,
    /// `command`: the version recorded with trials (default: a hash of the program).
    #[serde(default)]
    pub version: Option<String>,
}

impl HarnessSettings {
    /// Settings of `kind` with every default.
    pub fn new(kind: HarnessKind) -> HarnessSettings {
        HarnessSettings {
            kind,
            program: None,
            args: Vec::new(),
            base_url: None,
            api_key_env: None,
            env_allow: Vec::new(),
            max_turns: None,
            temperature: None,
            skills_dir: None,
            version: None,
        }
    }

    /// The variable holding the API key: the configured one, else the harness's default.
    pub fn key_var(&self) -> Option<&str> {
        self.api_key_env
            .as_deref()
            .or(self.kind.default_api_key_env())
    }
}

/// Which judge calls a run makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JudgeMode {
    /// Each trial scored on its own (accuracy, goal accuracy, judged expectations).
    Independent,
    /// Independent scores plus a position-swapped pairwise comparison of each pair
    /// (skill-validator's default: pairwise always comes with independent scores).
    Pairwise,
}

impl JudgeMode {
    /// `independent` or `pairwise`.
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeMode::Independent => "independent",
            JudgeMode::Pairwise => "pairwise",
        }
    }
}

/// How the judge model is reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "via", rename_all = "kebab-case")]
pub enum JudgeEndpoint {
    /// An OpenAI-compatible chat-completions endpoint (no tools, one message in, one out).
    Openai {
        /// The API base, e.g. `http://127.0.0.1:11434/v1`.
        base_url: String,
        /// Name of the environment variable holding the API key.
        #[serde(default)]
        api_key_env: Option<String>,
    },
    /// A harness run in an empty workspace with the judge prompt as its task.
    Harness {
        /// The harness.
        settings: HarnessSettings,
    },
}

impl JudgeEndpoint {
    /// The variable holding the key of an OpenAI-compatible judge endpoint.
    pub fn openai_key_var(named: Option<&str>) -> &str {
        named.unwrap_or("OPENAI_API_KEY")
    }
}

/// LLM judging of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeSettings {
    /// The judge model (ideally of another family than the agent's).
    pub model: String,
    /// Which calls.
    #[serde(default = "pairwise")]
    pub mode: JudgeMode,
    /// How it is reached.
    pub endpoint: JudgeEndpoint,
}

fn pairwise() -> JudgeMode {
    JudgeMode::Pairwise
}

impl JudgeSettings {
    /// What identifies the judge in a baseline's identity: model, mode and transport kind.
    pub fn identity(&self) -> String {
        let via = match &self.endpoint {
            JudgeEndpoint::Openai { .. } => "openai".to_owned(),
            JudgeEndpoint::Harness { settings } => settings.kind.as_str().to_owned(),
        };
        format!("{}|{}|{via}", self.model, self.mode.as_str())
    }
}

/// What one run may spend, and the prices its tokens are counted at: the engine starts no
/// trial that would cross a limit. A limit left `None` is no limit. Tokens are the harness's
/// own usage figures; cost is tokens at [`Budget::price`], and a judge's calls at
/// [`Budget::judge_price`] (the run pays for its judge too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Trials (agent executions) at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_trials: Option<u32>,
    /// Tokens (input and output) at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Cost in USD at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// The agent model's price: its row of skillwatch's price table, or of `[prices]` in
    /// `skillwatch.toml` over it (resolved by whoever builds the request); `None`: no price
    /// is known, and the run's cost is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// The judge model's price, resolved the same way; `None` without a judge or a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_price: Option<Price>,
}

impl Budget {
    /// Whether no limit is set.
    pub fn is_unlimited(&self) -> bool {
        self.max_trials.is_none() && self.max_tokens.is_none() && self.max_cost_usd.is_none()
    }

    /// These limits where set, else `defaults`' (flags over `[budget]` of skillwatch.toml).
    pub fn or(self, defaults: Budget) -> Budget {
        Budget {
            max_trials: self.max_trials.or(defaults.max_trials),
            max_tokens: self.max_tokens.or(defaults.max_tokens),
            max_cost_usd: self.max_cost_usd.or(defaults.max_cost_usd),
            price: self.price.or(defaults.price),
            judge_price: self.judge_price.or(defaults.judge_price),
        }
    }
}

/// A model's price in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Base input tokens.
    pub input: f64,
    /// Input tokens read from the provider's prompt cache (default: the input price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<f64>,
    /// Output tokens.
    pub output: f64,
}

impl Price {
    /// What `input` tokens (of which `cached` came from the cache) and `output` tokens cost.
    pub fn cost(&self, input: u64, cached: u64, output: u64) -> f64 {
        let cached = cached.min(input);
        let per = |tokens: u64, usd: f64| tokens as f64 * usd / 1e6;
        per(input - cached, self.input)
            + per(cached, self.cached.unwrap_or(self.input))
            + per(output, self.output)
    }

    /// Whether every figure is a finite number >= 0.
    pub fn is_valid(&self) -> bool {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        ok(self.input) && ok(self.output) && self.cached.is_none_or(ok)
    }
}

/// One paired evaluation to run (`skillwatch run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedRequest {
    /// The skill folder (with SKILL.md and its eval file).
    pub skill_dir: PathBuf,
    /// The harness that runs the agent.
    pub harness: HarnessSettings,
    /// The agent's model.
    pub model: String,
    /// LLM judging; `None` grades with deterministic checks only.
    #[serde(default)]
    pub judge: Option<JudgeSettings>,
    /// Attempts per case and condition (pairs per case).
    #[serde(default = "one")]
    pub runs: u32,
    /// Trials in flight at once.
    #[serde(default = "one_usize")]
    pub jobs: usize,
    /// Seconds per trial, overriding the cases' own timeouts; `None` uses each case's
    /// `timeout` (eval.yaml's default is 120 s), else [`DEFAULT_TIMEOUT_SECS`].
    #[serde(default)]
    pub timeout_secs: Option<u32>,
    /// Support and decoy skill folders, installed in both conditions.
    #[serde(default)]
    pub support_skills: Vec<PathBuf>,
    /// Only these case ids (all cases when empty).
    #[serde(default)]
    pub cases: Vec<String>,
    /// Why the run happens.
    #[serde(default = "manual")]
    pub trigger: JobTrigger,
    /// Seed of the run's statistics.
    #[serde(default)]
    pub seed: u64,
    /// Copy baseline trials from earlier runs when nothing they depend on changed.
    #[serde(default = "yes")]
    pub reuse_baselines: bool,
    /// Retries of a trial whose workspace or agent could not be started (each into a fresh
    /// workspace); agent failures are recorded, not retried.
    #[serde(default = "two")]
    pub retries: u32,
    /// Resume this interrupted run instead of starting a new one: its recorded trials are kept
    /// and only the missing ones run.
    #[serde(default)]
    pub resume: Option<RunId>,
    /// Keep each trial's workspace and logs (under the system temp dir) for debugging.
    #[serde(default)]
    pub keep_workspaces: bool,
    /// What the run may spend.
    #[serde(default)]
    pub budget: Budget,
}

fn one() -> u32 {
    1
}
fn one_usize() -> usize {
    1
}
fn two() -> u32 {
    2
}
fn yes() -> bool {
    true
}
fn manual() -> JobTrigger {
    JobTrigger::Manual
}

impl PairedRequest {
    /// A request with every default: one attempt, one job, no judge.
    pub fn new(
        skill_dir: impl Into<PathBuf>,
        harness: HarnessSettings,
        model: impl Into<String>,
    ) -> PairedRequest {
        PairedRequest {
            skill_dir: skill_dir.into(),
            harness,
            model: model.into(),
            judge: None,
            runs: 1,
            jobs: 1,
            timeout_secs: None,
            support_skills: Vec::new(),
            cases: Vec::new(),
            trigger: JobTrigger::Manual,
            seed: 0,
            reuse_baselines: true,
            retries: 2,
            resume: None,
            keep_workspaces: false,
            budget: Budget::default(),
        }
    }

    /// The timeout of a trial of a case that sets `case_secs`.
    pub fn timeout(&self, case_secs: Option<u32>) -> Duration {
        trial_timeout(self.timeout_secs, case_secs)
    }

    /// The API key variables the request names itself (`--api-key-env`, `api_key_env`), with
    /// whose they are: they must be set where the run runs, or it would measure something
    /// else. Default variables (`ANTHROPIC_API_KEY`, ...) may be unset: local endpoints need
    /// none.
    pub fn named_key_vars(&self) -> Vec<(&'static str, &str)> {
        let judge = match self.judge.as_ref().map(|j| &j.endpoint) {
            Some(JudgeEndpoint::Openai { api_key_env, .. }) => api_key_env.as_deref(),
            Some(JudgeEndpoint::Harness { settings }) => settings.api_key_env.as_deref(),
            None => None,
        };
        [
            ("the harness", self.harness.api_key_env.as_deref()),
            ("the judge", judge),
        ]
        .into_iter()
        .filter_map(|(whose, var)| Some((whose, var?)))
        .collect()
    }
}

/// Variables Harbor and the tools it drives read (Docker, remote backends' credentials, a
/// custom agent's module path): a Harbor run through the daemon takes them from the client.
pub const HARBOR_VARS: &[&str] = &[
    "PATH",
    "DOCKER_CONFIG",
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "PYTHONPATH",
    "LITELLM_LOCAL_MODEL_COST_MAP",
    "DAYTONA_API_KEY",
    "DAYTONA_API_URL",
    "MODAL_TOKEN_ID",
    "MODAL_TOKEN_SECRET",
    "E2B_API_KEY",
    "RUNLOOP_API_KEY",
    "GCP_PROJECT",
    "KUBECONFIG",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_PROFILE",
];

/// Where and how a run's trials go to Harbor (`skillwatch run --on harbor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarborTarget {
    /// The `harbor` executable.
    pub program: PathBuf,
    /// Harbor's environment type (`-e`): docker, daytona, modal, e2b, ...
    pub env: String,
    /// Harbor's agent (`-a`); `None`: the harness's own name (claude-code, codex; the others
    /// have no Harbor agent of that name).
    #[serde(default)]
    pub agent: Option<String>,
    /// The image the tasks build `FROM` (for a remote backend, one in a registry).
    pub base_image: String,
    /// `network_mode: host`, so a model served on the host's 127.0.0.1 is reachable.
    #[serde(default)]
    pub host_network: bool,
    /// Folder for the export and the job; `None`: `harbor/<skill>-<time>` beside the history.
    #[serde(default)]
    pub dir: Option<PathBuf>,
}

impl HarborTarget {
    /// Harbor's `-a` for a run on `kind`.
    pub fn agent_for(&self, kind: HarnessKind) -> Result<String, String> {
        if let Some(a) = &self.agent {
            return Ok(a.clone());
        }
        match kind {
            HarnessKind::ClaudeCode | HarnessKind::Codex => Ok(kind.as_str().to_owned()),
            other => Err(format!(
                "harness {} has no Harbor agent of that name: expected --harbor-agent (claude-code, codex, opencode, gemini-cli, ..., or module:Class)",
                other.as_str()
            )),
        }
    }
}

/// A paired run whose trials Harbor executes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarborRun {
    /// The paired run.
    #[serde(flatten)]
    pub run: PairedRequest,
    /// Where Harbor runs it.
    pub harbor: HarborTarget,
}

/// Default per-probe timeout: probes are short tasks, and an agent that loops is itself a
/// finding (ABC-04), not a reason to wait.
pub const DEFAULT_PROBE_TIMEOUT_SECS: u32 = 120;

/// The security probes to run (`skillwatch probe`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRequest {
    /// The skill folder.
    pub skill_dir: PathBuf,
    /// The harness.
    pub harness: HarnessSettings,
    /// The agent's model.
    pub model: String,
    /// Only these probe ids (all when empty).
    #[serde(default)]
    pub only: Vec<String>,
    /// Per-probe timeout in seconds.
    #[serde(default)]
    pub timeout_secs: Option<u32>,
    /// Retries of infrastructure failures per probe.
    #[serde(default = "two")]
    pub retries: u32,
    /// Keep the probes' folders (for debugging).
    #[serde(default)]
    pub keep_workspaces: bool,
    /// θs and the other SkillTester constants.
    #[serde(default)]
    pub params: SkillTesterParams,
    /// What the run may spend.
    #[serde(default)]
    pub budget: Budget,
}

impl ProbeRequest {
    /// Probe `skill_dir` with every probe, defaults elsewhere.
    pub fn new(
        skill_dir: impl Into<PathBuf>,
        harness: HarnessSettings,
        model: impl Into<String>,
    ) -> ProbeRequest {
        ProbeRequest {
            skill_dir: skill_dir.into(),
            harness,
            model: model.into(),
            only: Vec::new(),
            timeout_secs: None,
            retries: 2,
            keep_workspaces: false,
            params: SkillTesterParams::default(),
            budget: Budget::default(),
        }
    }
}

/// Seconds a trigger trial may take by default: a decision is one model request away.
pub const DEFAULT_TRIGGER_TIMEOUT_SECS: u32 = 60;

/// The trigger trials to run (`skillwatch trigger`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerRequest {
    /// The skill folder.
    pub skill_dir: PathBuf,
    /// The harness.
    pub harness: HarnessSettings,
    /// The agent's model.
    pub model: String,
    /// Trials per query.
    #[serde(default = "one")]
    pub runs: u32,
    /// Trials in flight at once.
    #[serde(default = "one_usize")]
    pub jobs: usize,
    /// Seconds per trial.
    #[serde(default)]
    pub timeout_secs: Option<u32>,
    /// Stage the skills beside the target too (the default: that is what the agent chooses
    /// among).
    #[serde(default = "yes")]
    pub siblings: bool,
    /// Decoy skill folders staged with it.
    #[serde(default)]
    pub decoys: Vec<PathBuf>,
    /// A trigger eval set (skill-creator's JSON list) besides the skill's eval files.
    #[serde(default)]
    pub eval_set: Option<PathBuf>,
    /// Let the agent run to its end instead of stopping at the decision (what a full trial
    /// costs, for comparison).
    #[serde(default)]
    pub full: bool,
    /// An alternative description: the skill is staged as a copy with only its
    /// `description:` changed (`--description-file`, the A/B arm).
    #[serde(default)]
    pub description: Option<String>,
    /// With `description`: an alternative `when_to_use` too (a description search's rewrite,
    /// where the harness reads it); the staged copy's `when_to_use:` is replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_to_use: Option<String>,
    /// Record the run in the history (an A/B arm is not: it measures an edit, not a version).
    #[serde(default = "yes")]
    pub record: bool,
    /// Ask only the queries with these texts (one split of `trigger --optimize`); every query
    /// when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_queries: Vec<String>,
    /// What the run may spend.
    #[serde(default)]
    pub budget: Budget,
}

impl TriggerRequest {
    /// A request with the defaults: one run, one job, siblings staged, early stop.
    pub fn new(
        skill_dir: impl Into<PathBuf>,
        harness: HarnessSettings,
        model: impl Into<String>,
    ) -> TriggerRequest {
        TriggerRequest {
            skill_dir: skill_dir.into(),
            harness,
            model: model.into(),
            runs: 1,
            jobs: 1,
            timeout_secs: None,
            siblings: true,
            decoys: Vec::new(),
            eval_set: None,
            full: false,
            description: None,
            when_to_use: None,
            record: true,
            only_queries: Vec::new(),
            budget: Budget::default(),
        }
    }
}

/// Every kind of run, as one request: what the daemon queues and the run engine runs. Tagged
/// by `kind`; a kind this side does not know decodes as [`RunSpec::Unknown`] (with its name),
/// so the daemon refuses it with both protocol versions instead of failing to decode the call.
/// A known kind whose request does not decode is an error of that kind, never "unknown".
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunSpec {
    /// A paired run on this machine.
    Paired(PairedRequest),
    /// A paired run whose trials Harbor executes.
    Harbor(HarborRun),
    /// The security probes.
    Probe(ProbeRequest),
    /// The trigger trials.
    Trigger(TriggerRequest),
    /// A description search: its measurements are trigger runs, children of the job.
    Optimize(crate::OptimizeRequest),
    /// A kind of run this build does not know (a newer client's).
    #[serde(untagged)]
    Unknown(UnknownRun),
}

/// The kinds this build knows, as they decode.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Known {
    Paired(PairedRequest),
    Harbor(HarborRun),
    Probe(ProbeRequest),
    Trigger(TriggerRequest),
    Optimize(crate::OptimizeRequest),
}

impl<'de> Deserialize<'de> for RunSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RunSpec, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(d)?;
        let kind = value
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| D::Error::custom("a run request: expected its `kind`, found none"))?;
        if !matches!(kind, "paired" | "harbor" | "probe" | "trigger" | "optimize") {
            return Ok(RunSpec::Unknown(UnknownRun {
                kind: kind.to_owned(),
            }));
        }
        let known = Known::deserialize(value).map_err(D::Error::custom)?;
        Ok(match known {
            Known::Paired(r) => RunSpec::Paired(r),
            Known::Harbor(r) => RunSpec::Harbor(r),
            Known::Probe(r) => RunSpec::Probe(r),
            Known::Trigger(r) => RunSpec::Trigger(r),
            Known::Optimize(r) => RunSpec::Optimize(r),
        })
    }
}

/// A request of a kind of run this build does not know: only its name is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnknownRun {
    /// The kind it names.
    pub kind: String,
}

impl From<PairedRequest> for RunSpec {
    fn from(r: PairedRequest) -> RunSpec {
        RunSpec::Paired(r)
    }
}

impl From<HarborRun> for RunSpec {
    fn from(r: HarborRun) -> RunSpec {
        RunSpec::Harbor(r)
    }
}

impl From<ProbeRequest> for RunSpec {
    fn from(r: ProbeRequest) -> RunSpec {
        RunSpec::Probe(r)
    }
}

impl From<crate::OptimizeRequest> for RunSpec {
    fn from(r: crate::OptimizeRequest) -> RunSpec {
        RunSpec::Optimize(r)
    }
}

impl From<TriggerRequest> for RunSpec {
    fn from(r: TriggerRequest) -> RunSpec {
        RunSpec::Trigger(r)
    }
}

impl RunSpec {
    /// Its kind.
    pub fn kind(&self) -> super::JobKind {
        use super::JobKind;
        match self {
            RunSpec::Paired(_) => JobKind::Paired,
            RunSpec::Harbor(_) => JobKind::Harbor,
            RunSpec::Probe(_) => JobKind::Probe,
            RunSpec::Trigger(_) => JobKind::Trigger,
            RunSpec::Optimize(_) => JobKind::Optimize,
            RunSpec::Unknown(_) => JobKind::Unknown,
        }
    }

    /// The skill it runs; `None` for an unknown kind.
    pub fn skill_dir(&self) -> Option<&std::path::Path> {
        Some(match self {
            RunSpec::Paired(r) => &r.skill_dir,
            RunSpec::Harbor(h) => &h.run.skill_dir,
            RunSpec::Probe(r) => &r.skill_dir,
            RunSpec::Trigger(r) => &r.skill_dir,
            RunSpec::Optimize(r) => &r.trigger.skill_dir,
            RunSpec::Unknown(_) => return None,
        })
    }

    /// The harness and model it runs on; `None` for an unknown kind.
    pub fn harness_and_model(&self) -> Option<(&HarnessSettings, &str)> {
        Some(match self {
            RunSpec::Paired(r) => (&r.harness, &r.model),
            RunSpec::Harbor(h) => (&h.run.harness, &h.run.model),
            RunSpec::Probe(r) => (&r.harness, &r.model),
            RunSpec::Trigger(r) => (&r.harness, &r.model),
            RunSpec::Optimize(r) => (&r.trigger.harness, &r.trigger.model),
            RunSpec::Unknown(_) => return None,
        })
    }

    /// What it may spend.
    pub fn budget(&self) -> Budget {
        match self {
            RunSpec::Paired(r) => r.budget,
            RunSpec::Harbor(h) => h.run.budget,
            RunSpec::Probe(r) => r.budget,
            RunSpec::Trigger(r) => r.budget,
            RunSpec::Optimize(r) => r.budget(),
            RunSpec::Unknown(_) => Budget::default(),
        }
    }

    /// The skill folder, set (the daemon's copy of a job names it once, absolute).
    pub fn set_skill_dir(&mut self, dir: PathBuf) {
        match self {
            RunSpec::Paired(r) => r.skill_dir = dir,
            RunSpec::Harbor(h) => h.run.skill_dir = dir,
            RunSpec::Probe(r) => r.skill_dir = dir,
            RunSpec::Trigger(r) => r.skill_dir = dir,
            RunSpec::Optimize(r) => r.trigger.skill_dir = dir,
            RunSpec::Unknown(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minimal_json_request_gets_every_default() {
        let req: PairedRequest = serde_json::from_str(
            r#"{"skill_dir": "s", "harness": {"kind": "openai", "base_url": "http://x/v1"}, "model": "m"}"#,
        )
        .unwrap();
        assert_eq!(
            req,
            PairedRequest::new(
                "s",
                HarnessSettings {
                    base_url: Some("http://x/v1".into()),
                    ..HarnessSettings::new(HarnessKind::Openai)
                },
                "m"
            )
        );
        assert_eq!(req.timeout(None), Duration::from_secs(120));
        assert_eq!(req.timeout(Some(5)), Duration::from_secs(5));
        let set = PairedRequest {
            timeout_secs: Some(600),
            ..req
        };
        assert_eq!(
            set.timeout(Some(5)),
            Duration::from_secs(600),
            "the request overrides"
        );
    }

    #[test]
    fn every_kind_round_trips_under_its_tag() {
        let harness = HarnessSettings::new(HarnessKind::Codex);
        let paired = PairedRequest::new("/s", harness.clone(), "m");
        let specs = [
            RunSpec::Paired(paired.clone()),
            RunSpec::Harbor(HarborRun {
                run: paired,
                harbor: HarborTarget {
                    program: "harbor".into(),
                    env: "docker".into(),
                    agent: None,
                    base_image: "debian".into(),
                    host_network: true,
                    dir: None,
                },
            }),
            RunSpec::Probe(ProbeRequest::new("/s", harness.clone(), "m")),
            RunSpec::Trigger(TriggerRequest::new("/s", harness, "m")),
        ];
        for spec in specs {
            let json = serde_json::to_value(&spec).unwrap();
            assert_eq!(json["kind"], spec.kind().as_str(), "{json}");
            let back: RunSpec = serde_json::from_value(json).unwrap();
            assert_eq!(back, spec);
        }
    }

    #[test]
    fn a_kind_this_build_does_not_know_decodes_with_its_name() {
        let spec: RunSpec =
            serde_json::from_str(r#"{"kind": "distill", "skill_dir": "/s", "rounds": 3}"#).unwrap();
        assert_eq!(
            spec,
            RunSpec::Unknown(UnknownRun {
                kind: "distill".into()
            })
        );
        assert_eq!(spec.skill_dir(), None);
        // a known kind that does not decode is that kind's error, not an unknown kind
        let err = serde_json::from_str::<RunSpec>(r#"{"kind": "probe", "skill_dir": "/s"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field `harness`"), "{err}");
    }

    #[test]
    fn budgets_take_flags_over_defaults() {
        let flags = Budget {
            max_tokens: Some(10),
            ..Budget::default()
        };
        let file = Budget {
            max_tokens: Some(99),
            max_cost_usd: Some(1.5),
            ..Budget::default()
        };
        assert_eq!(
            flags.or(file),
            Budget {
                max_tokens: Some(10),
                max_cost_usd: Some(1.5),
                ..Budget::default()
            }
        );
        assert!(Budget::default().is_unlimited() && !flags.is_unlimited());
    }

    #[test]
    fn a_price_charges_cached_input_at_its_own_rate() {
        let p = Price {
            input: 3.0,
            cached: Some(0.3),
            output: 15.0,
        };
        // 1M input of which 0.5M cached, 0.1M output: 1.5 + 0.15 + 1.5
        assert!((p.cost(1_000_000, 500_000, 100_000) - 3.15).abs() < 1e-9);
        let flat = Price { cached: None, ..p };
        assert!((flat.cost(1_000_000, 500_000, 0) - 3.0).abs() < 1e-9);
        assert!(p.is_valid() && !Price { input: -1.0, ..p }.is_valid());
    }
}
