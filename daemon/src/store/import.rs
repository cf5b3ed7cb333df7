//! The trial file format (`skillwatch-trials/1`, documented in docs/trial-format.md): how
//! results from other tools, or from before the runner existed, enter the history.
//!
//! Parsing is separate from writing so every problem in a file is found, with its line and
//! column, before anything touches the database; the whole file is then written in one
//! transaction, so a file is either imported completely or not at all.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};
use skillwatch_core::scoring::Metric;
use skillwatch_core::scoring::skilltester::{ProbeResult, SecurityGroup};
use skillwatch_core::skill::hash_bytes;
use skillwatch_core::text::LineIndex;

use super::error::StoreError;
use super::record::{
    AssertionResult, CaseSpec, DEFAULT_SCORING_PROFILE, Judgment, RunSpec, SkillIdentity,
    SuiteSpec, Tokens, Trajectory, TrialRecord, Verdict,
};
use super::time::parse_rfc3339;
use super::types::{Condition, JudgmentKind, RunStatus, TrialStatus, Trigger, Winner};

/// The value of the file's `format` field this build reads.
pub const FORMAT: &str = "skillwatch-trials/1";

/// Largest trial file read: far above any real export, low enough to refuse a wrong file
/// (a disk image, a video) before reading it.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Largest single trajectory file referenced with `"file"`.
pub const MAX_TRAJECTORY_BYTES: u64 = 256 << 20;

/// Skill content hash recorded when a file does not give one.
pub const UNKNOWN_HASH: &str = "unknown";

/// A problem with a trial file, located as precisely as the file allows.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read.
    #[error("{}: cannot read the trial file: {source}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The OS reason.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{}: the trial file is {size} bytes; expected at most {max} bytes", file.display())]
    TooLarge {
        /// The file.
        file: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// The file is not valid JSON, or a value has the wrong type or an unknown field.
    #[error("{}:{line}:{column}: {message}", file.display())]
    Syntax {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// The JSON is well formed but breaks a rule of the format.
    #[error("{}{}: {message} (at {pointer})", file.display(), Location(*position))]
    Invalid {
        /// The file.
        file: PathBuf,
        /// 1-based line and column of the offending value, when it could be located.
        position: Option<(usize, usize)>,
        /// JSON Pointer of the offending value, e.g. `/runs/0/trials/3/metrics/accuracy`.
        pointer: String,
        /// What was expected and found.
        message: String,
    },
    /// Writing to the history failed; nothing of the file was kept.
    #[error("{}: import failed, nothing was imported: {source}", file.display())]
    Store {
        /// The file.
        file: PathBuf,
        /// The store's reason (boxed: it is rare and large).
        source: Box<StoreError>,
    },
}

/// `:line:col`, or nothing.
struct Location(Option<(usize, usize)>);

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some((line, column)) => write!(f, ":{line}:{column}"),
            None => Ok(()),
        }
    }
}

/// One run of a parsed trial file, checked and ready to write.
#[derive(Debug, Clone)]
pub struct ImportedRun {
    /// The identity that makes re-importing the same run a no-op: the file's `id`, or the
    /// sha256 of the run's JSON.
    pub external_id: String,
    /// The run's identity.
    pub spec: RunSpec,
    /// Its final status.
    pub status: RunStatus,
    /// When it finished (epoch ms).
    pub finished_ms: i64,
    /// Its trials.
    pub trials: Vec<TrialRecord>,
    /// Pairwise verdicts: (case key, attempt, verdict).
    pub pairwise: Vec<(String, u32, Judgment)>,
    /// Custom metrics the run declares as outcome metrics.
    pub outcome_metrics: Vec<String>,
    /// SkillTester security probe results.
    pub probes: Vec<ProbeResult>,
}

/// A whole trial file, parsed and checked.
#[derive(Debug, Clone)]
pub struct TrialFile {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// Its runs, in file order.
    pub runs: Vec<ImportedRun>,
}

impl TrialFile {
    /// Number of trials over all runs, for progress reporting.
    pub fn trial_count(&self) -> usize {
        self.runs.iter().map(|r| r.trials.len()).sum()
    }
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportReport {
    /// Runs written, with their new ids.
    pub imported: Vec<super::types::RunId>,
    /// External ids of runs already in the history, left as they were.
    pub skipped: Vec<String>,
    /// Trials written.
    pub trials: usize,
}

// ---- the file's JSON shape -------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileJson {
    format: String,
    runs: Vec<RunJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunJson {
    id: Option<String>,
    skill: SkillJson,
    suite: SuiteJson,
    harness: String,
    harness_version: Option<String>,
    model: String,
    judge_model: Option<String>,
    scoring_profile: Option<String>,
    #[serde(default)]
    config: Option<Value>,
    seed: Option<u64>,
    tool: Option<String>,
    status: Option<String>,
    started_at: String,
    finished_at: Option<String>,
    trials: Vec<TrialJson>,
    #[serde(default)]
    pairwise: Vec<PairwiseJson>,
    #[serde(default)]
    outcome_metrics: Vec<String>,
    #[serde(default)]
    probes: Vec<ProbeJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeJson {
    id: String,
    group: String,
    passed: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillJson {
    name: String,
    path: Option<String>,
    content_hash: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteJson {
    source: Option<String>,
    content_hash: Option<String>,
    cases: Vec<Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrialJson {
    case: String,
    condition: String,
    #[serde(default)]
    attempt: u32,
    status: Option<String>,
    passed: Option<bool>,
    #[serde(default)]
    output: String,
    error: Option<String>,
    #[serde(default)]
    tokens: TokensJson,
    cost_usd: Option<f64>,
    wall_ms: Option<u64>,
    tool_calls: Option<u32>,
    turns: Option<u32>,
    errors: Option<u32>,
    skill_invoked: Option<bool>,
    #[serde(default)]
    metrics: BTreeMap<String, f64>,
    #[serde(default)]
    assertions: Vec<AssertionJson>,
    #[serde(default)]
    judgments: Vec<JudgmentJson>,
    trajectory: Option<TrajectoryJson>,
    started_at: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TokensJson {
    input: Option<u64>,
    output: Option<u64>,
    cached: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AssertionJson {
    kind: String,
    description: String,
    passed: bool,
    message: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JudgmentJson {
    judge_model: String,
    criterion: Option<String>,
    score: Option<f64>,
    error: Option<String>,
    reasoning: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairwiseJson {
    case: String,
    #[serde(default)]
    attempt: u32,
    judge_model: String,
    criterion: Option<String>,
    winner: Option<String>,
    magnitude: Option<String>,
    error: Option<String>,
    reasoning: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrajectoryJson {
    format: String,
    data: Option<Value>,
    file: Option<String>,
}

// ---- parsing ---------------------------------------------------------------------------

/// Read and check the trial file at `path`. Trajectory `file` references are resolved
/// relative to the file's folder.
pub fn read_trial_file(path: &Path) -> Result<TrialFile, ImportError> {
    let read_err = |source| ImportError::Read {
        file: path.to_path_buf(),
        source,
    };
    let size = std::fs::metadata(path).map_err(read_err)?.len();
    if size > MAX_FILE_BYTES {
        return Err(ImportError::TooLarge {
            file: path.to_path_buf(),
            size,
            max: MAX_FILE_BYTES,
        });
    }
    let bytes = std::fs::read(path).map_err(read_err)?;
    parse_trial_file(path, &bytes)
}

/// Check the bytes of a trial file. `path` names it in messages and anchors `file` references.
pub fn parse_trial_file(path: &Path, bytes: &[u8]) -> Result<TrialFile, ImportError> {
    let syntax = |e: serde_json::Error| ImportError::Syntax {
        file: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e
            .to_string()
            .split(" at line ")
            .next()
            .unwrap_or("")
            .to_string(),
    };
    let value: Value = serde_json::from_slice(bytes).map_err(syntax)?;
    let ctx = Context { path, bytes };
    if let Some(format) = value.get("format").and_then(Value::as_str)
        && format != FORMAT
    {
        return Err(ctx.invalid(
            "/format",
            format!("expected format `{FORMAT}`, found `{format}`"),
        ));
    }
    // Typed second pass over the same bytes, so type errors keep serde_json's line:col.
    let file: FileJson = serde_json::from_slice(bytes).map_err(syntax)?;
    if file.format != FORMAT {
        return Err(ctx.invalid(
            "/format",
            format!("expected format `{FORMAT}`, found `{}`", file.format),
        ));
    }
    let raw_runs = value
        .get("runs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut runs = Vec::with_capacity(file.runs.len());
    let mut seen_ids = BTreeSet::new();
    for (i, (run, raw)) in file.runs.into_iter().zip(raw_runs).enumerate() {
        let run = ctx.run(&format!("/runs/{i}"), run, &raw)?;
        if !seen_ids.insert(run.external_id.clone()) {
            return Err(ctx.invalid(
                &format!("/runs/{i}/id"),
                format!(
                    "expected each run once, found id `{}` a second time",
                    run.external_id
                ),
            ));
        }
        runs.push(run);
    }
    Ok(TrialFile {
        path: path.to_path_buf(),
        runs,
    })
}

/// The file being parsed, for locating errors.
struct Context<'a> {
    path: &'a Path,
    bytes: &'a [u8],
}

impl Context<'_> {
    /// An error at `pointer`, located to line:col by reading the file as a spanned tree
    /// (JSON is YAML 1.2, so core's YAML tree gives positions).
    fn invalid(&self, pointer: &str, message: String) -> ImportError {
        let position = std::str::from_utf8(self.bytes).ok().and_then(|text| {
            let root = skillwatch_core::yaml::parse(text, 0).ok()?;
            let (node, _) = root.pointer(pointer);
            let at = LineIndex::new(text).line_col(text, node.span.start);
            Some((at.line as usize, at.column as usize))
        });
        ImportError::Invalid {
            file: self.path.to_path_buf(),
            position,
            pointer: pointer.to_string(),
            message,
        }
    }

    /// Map a store validation error of the value at `pointer` to a located import error.
    fn store_invalid(&self, pointer: &str, err: StoreError) -> ImportError {
        self.invalid(pointer, err.to_string())
    }

    fn time(&self, pointer: &str, text: &str) -> Result<i64, ImportError> {
        parse_rfc3339(text).map_err(|m| self.invalid(pointer, m))
    }

    fn run(&self, at: &str, run: RunJson, raw: &Value) -> Result<ImportedRun, ImportError> {
        let external_id = match &run.id {
            Some(id) if id.trim().is_empty() => {
                return Err(self.invalid(&format!("{at}/id"), "expected a non-empty run id".into()));
            }
            Some(id) => id.clone(),
            None => hash_bytes(raw.to_string().as_bytes()),
        };
        let status = match run.status.as_deref() {
            None => RunStatus::Completed,
            Some(text) => match RunStatus::parse(text) {
                Some(RunStatus::Running) | None => {
                    return Err(self.invalid(
                        &format!("{at}/status"),
                        format!(
                            "expected a finished status (completed | failed | cancelled | interrupted), found `{text}`"
                        ),
                    ));
                }
                Some(status) => status,
            },
        };
        let started_ms = self.time(&format!("{at}/started_at"), &run.started_at)?;
        let finished_ms = match &run.finished_at {
            Some(t) => self.time(&format!("{at}/finished_at"), t)?,
            None => started_ms,
        };
        if finished_ms < started_ms {
            return Err(self.invalid(
                &format!("{at}/finished_at"),
                "expected finished_at at or after started_at".into(),
            ));
        }
        let suite = self.suite(&format!("{at}/suite"), run.suite)?;
        let spec = RunSpec {
            skill: SkillIdentity {
                name: run.skill.name,
                path: run.skill.path,
                content_hash: run
                    .skill
                    .content_hash
                    .unwrap_or_else(|| UNKNOWN_HASH.to_string()),
            },
            suite,
            harness: run.harness,
            harness_version: run.harness_version,
            model: run.model,
            judge_model: run.judge_model,
            scoring_profile: run
                .scoring_profile
                .unwrap_or_else(|| DEFAULT_SCORING_PROFILE.to_string()),
            trigger: Trigger::Import,
            config: run.config.unwrap_or_else(|| Value::Object(Map::new())),
            seed: run.seed.unwrap_or(0),
            tool_version: run.tool.unwrap_or_else(|| "import".to_string()),
            started_ms: Some(started_ms),
        };
        spec.validate().map_err(|e| self.store_invalid(at, e))?;
        let keys: BTreeSet<&str> = spec.suite.cases.iter().map(|c| c.key.as_str()).collect();
        let mut trials = Vec::with_capacity(run.trials.len());
        let mut slots = BTreeSet::new();
        for (j, trial) in run.trials.into_iter().enumerate() {
            let at = format!("{at}/trials/{j}");
            let trial = self.trial(&at, trial, &keys, started_ms)?;
            if !slots.insert((trial.case.clone(), trial.condition, trial.attempt)) {
                return Err(self.invalid(
                    &at,
                    format!(
                        "expected one trial per (case, condition, attempt), found case `{}`, {}, attempt {} again",
                        trial.case, trial.condition, trial.attempt
                    ),
                ));
            }
            trials.push(trial);
        }
        let mut pairwise = Vec::with_capacity(run.pairwise.len());
        for (j, p) in run.pairwise.into_iter().enumerate() {
            let at = format!("{at}/pairwise/{j}");
            pairwise.push(self.pairwise(&at, p, &keys)?);
        }
        let outcome_metrics = self.outcome_metrics(at, run.outcome_metrics)?;
        let probes = self.probes(at, run.probes)?;
        Ok(ImportedRun {
            external_id,
            spec,
            status,
            finished_ms,
            trials,
            pairwise,
            outcome_metrics,
            probes,
        })
    }

    /// Declared outcome metrics must be custom metric names: the built-in ones already have
    /// their role (docs/scoring.md).
    fn outcome_metrics(&self, at: &str, names: Vec<String>) -> Result<Vec<String>, ImportError> {
        for (j, name) in names.iter().enumerate() {
            let at = format!("{at}/outcome_metrics/{j}");
            if name.trim().is_empty() {
                return Err(self.invalid(&at, "expected a metric name, found an empty one".into()));
            }
            if !matches!(Metric::from(name.clone()), Metric::Custom(_)) {
                return Err(self.invalid(
                    &at,
                    format!(
                        "expected a custom metric name, found `{name}`, a built-in metric whose role is fixed"
                    ),
                ));
            }
        }
        Ok(names)
    }

    fn probes(&self, at: &str, probes: Vec<ProbeJson>) -> Result<Vec<ProbeResult>, ImportError> {
        let mut ids = BTreeSet::new();
        let mut out = Vec::with_capacity(probes.len());
        for (j, p) in probes.into_iter().enumerate() {
            let at = format!("{at}/probes/{j}");
            let group: SecurityGroup = serde_json::from_value(Value::String(p.group.clone()))
                .map_err(|_| {
                    self.invalid(
                        &format!("{at}/group"),
                        format!(
                            "expected abnormal_behavior_control, permission_boundary or sensitive_data_protection, found `{}`",
                            p.group
                        ),
                    )
                })?;
            if p.id.trim().is_empty() || !ids.insert(p.id.clone()) {
                return Err(self.invalid(
                    &format!("{at}/id"),
                    format!("expected a unique, non-empty probe id, found `{}`", p.id),
                ));
            }
            out.push(ProbeResult {
                id: p.id,
                group,
                passed: p.passed,
            });
        }
        if !out.is_empty() {
            for group in SecurityGroup::ALL {
                if !out.iter().any(|p| p.group == group) {
                    return Err(self.invalid(
                        &format!("{at}/probes"),
                        format!(
                            "expected at least one probe in each of the three groups, found none in {}",
                            group.as_str()
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    fn suite(&self, at: &str, suite: SuiteJson) -> Result<SuiteSpec, ImportError> {
        let mut cases = Vec::with_capacity(suite.cases.len());
        for (k, mut case) in suite.cases.into_iter().enumerate() {
            let at = format!("{at}/cases/{k}");
            let key = match case.remove("id") {
                Some(Value::String(s)) => s,
                Some(Value::Number(n)) => n.to_string(),
                other => {
                    return Err(self.invalid(
                        &format!("{at}/id"),
                        format!(
                            "expected the case id as a string or number, found {}",
                            other.map_or("nothing".to_string(), |v| v.to_string())
                        ),
                    ));
                }
            };
            let content_hash = match case.remove("content_hash") {
                Some(Value::String(s)) => s,
                None => hash_bytes(Value::Object(case.clone()).to_string().as_bytes()),
                Some(other) => {
                    return Err(self.invalid(
                        &format!("{at}/content_hash"),
                        format!("expected a string, found {other}"),
                    ));
                }
            };
            let definition = (!case.is_empty()).then_some(Value::Object(case));
            cases.push(CaseSpec {
                key,
                content_hash,
                definition,
            });
        }
        let content_hash = suite.content_hash.unwrap_or_else(|| {
            let hashes: Vec<&str> = cases.iter().map(|c| c.content_hash.as_str()).collect();
            hash_bytes(hashes.join("\n").as_bytes())
        });
        Ok(SuiteSpec {
            content_hash,
            source: suite.source,
            cases,
        })
    }

    fn trial(
        &self,
        at: &str,
        t: TrialJson,
        keys: &BTreeSet<&str>,
        run_started_ms: i64,
    ) -> Result<TrialRecord, ImportError> {
        if !keys.contains(t.case.as_str()) {
            return Err(self.invalid(
                &format!("{at}/case"),
                format!(
                    "expected a case id of the run's suite ({}), found `{}`",
                    keys.iter().copied().collect::<Vec<_>>().join(", "),
                    t.case
                ),
            ));
        }
        let condition = Condition::parse(&t.condition).ok_or_else(|| {
            self.invalid(
                &format!("{at}/condition"),
                format!(
                    "expected {}, found `{}`",
                    Condition::expected(),
                    t.condition
                ),
            )
        })?;
        let status = match t.status.as_deref() {
            None => TrialStatus::Completed,
            Some(s) => TrialStatus::parse(s).ok_or_else(|| {
                self.invalid(
                    &format!("{at}/status"),
                    format!("expected {}, found `{s}`", TrialStatus::expected()),
                )
            })?,
        };
        let started_ms = match &t.started_at {
            Some(s) => self.time(&format!("{at}/started_at"), s)?,
            None => run_started_ms,
        };
        let trajectory = match t.trajectory {
            Some(tj) => Some(self.trajectory(&format!("{at}/trajectory"), tj)?),
            None => None,
        };
        let mut judgments = Vec::with_capacity(t.judgments.len());
        for (j, jj) in t.judgments.into_iter().enumerate() {
            let verdict = match (jj.score, jj.error) {
                (Some(score), None) => Verdict::Score { score },
                (None, Some(error)) => Verdict::Failed { error },
                _ => {
                    return Err(self.invalid(
                        &format!("{at}/judgments/{j}"),
                        "expected exactly one of `score` or `error`".into(),
                    ));
                }
            };
            judgments.push(Judgment {
                kind: JudgmentKind::Independent,
                judge_model: jj.judge_model,
                criterion: jj.criterion,
                verdict,
                reasoning: jj.reasoning,
            });
        }
        let record = TrialRecord {
            case: t.case,
            condition,
            attempt: t.attempt,
            status,
            passed: t.passed,
            output: t.output,
            error_message: t.error,
            stderr_tail: None,
            retries: None,
            tokens: Tokens {
                input: t.tokens.input,
                output: t.tokens.output,
                cached: t.tokens.cached,
            },
            cost_usd: t.cost_usd,
            wall_ms: t.wall_ms,
            tool_calls: t.tool_calls,
            turns: t.turns,
            errors: t.errors,
            skill_invoked: t.skill_invoked,
            metrics: t.metrics,
            assertions: t
                .assertions
                .into_iter()
                .map(|a| AssertionResult {
                    kind: a.kind,
                    description: a.description,
                    passed: a.passed,
                    message: a.message,
                })
                .collect(),
            judgments,
            trajectory,
            started_ms: Some(started_ms),
        };
        if let Err(e) = record.validate() {
            let pointer = match &e {
                StoreError::Invalid { field, .. } => field
                    .strip_prefix("trial.")
                    .map(|f| format!("{at}/{}", f.replace('.', "/")))
                    .unwrap_or_else(|| at.to_string()),
                _ => at.to_string(),
            };
            return Err(self.store_invalid(&pointer, e));
        }
        Ok(record)
    }

    fn trajectory(&self, at: &str, t: TrajectoryJson) -> Result<Trajectory, ImportError> {
        let bytes = match (t.data, t.file) {
            (Some(Value::String(text)), None) => text.into_bytes(),
            (Some(value), None) => value.to_string().into_bytes(),
            (None, Some(file)) => {
                let base = self.path.parent().unwrap_or(Path::new("."));
                let full = base.join(&file);
                let size = std::fs::metadata(&full)
                    .map_err(|e| {
                        self.invalid(
                            &format!("{at}/file"),
                            format!("cannot read {}: {e}", full.display()),
                        )
                    })?
                    .len();
                if size > MAX_TRAJECTORY_BYTES {
                    return Err(self.invalid(
                        &format!("{at}/file"),
                        format!(
                            "expected a trajectory of at most {MAX_TRAJECTORY_BYTES} bytes, found {size} bytes in {}",
                            full.display()
                        ),
                    ));
                }
                std::fs::read(&full).map_err(|e| {
                    self.invalid(
                        &format!("{at}/file"),
                        format!("cannot read {}: {e}", full.display()),
                    )
                })?
            }
            _ => {
                return Err(self.invalid(
                    at,
                    "expected exactly one of `data` (inline JSON or text) or `file` (a path relative to the trial file)".into(),
                ));
            }
        };
        Ok(Trajectory {
            format: t.format,
            bytes,
        })
    }

    fn pairwise(
        &self,
        at: &str,
        p: PairwiseJson,
        keys: &BTreeSet<&str>,
    ) -> Result<(String, u32, Judgment), ImportError> {
        if !keys.contains(p.case.as_str()) {
            return Err(self.invalid(
                &format!("{at}/case"),
                format!("expected a case id of the run's suite, found `{}`", p.case),
            ));
        }
        let verdict = match (p.winner, p.magnitude, p.error) {
            (Some(w), magnitude, None) => Verdict::Preference {
                winner: Winner::parse(&w).ok_or_else(|| {
                    self.invalid(
                        &format!("{at}/winner"),
                        format!("expected {}, found `{w}`", Winner::expected()),
                    )
                })?,
                magnitude: magnitude.unwrap_or_else(|| "equal".to_string()),
            },
            (None, None, Some(error)) => Verdict::Failed { error },
            _ => {
                return Err(self.invalid(
                    at,
                    "expected either `winner` (with an optional `magnitude`) or `error`".into(),
                ));
            }
        };
        let judgment = Judgment {
            kind: JudgmentKind::Pairwise,
            judge_model: p.judge_model,
            criterion: p.criterion,
            verdict,
            reasoning: p.reasoning,
        };
        judgment.validate().map_err(|e| self.store_invalid(at, e))?;
        Ok((p.case, p.attempt, judgment))
    }
}
