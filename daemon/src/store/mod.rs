//! The history store: every paired run and trial skillwatch has measured, in one SQLite file.
//!
//! Why SQLite: the history must survive crashes (a `kill -9` mid-write leaves the last
//! committed state), be shared by the daemon, the LSP and the CLI at once (WAL mode: readers
//! never block the writer), and answer "lift of skill S per model" in milliseconds (indexes
//! on `(skill, model, time)` plus one cached summary row per run).
//!
//! All SQL of skillwatch lives in this module. The schema is the plain SQL files in the
//! top-level `migrations/` folder, applied in order at open.
//!
//! # Using it
//!
//! ```
//! use skillwatch_daemon::store::*;
//! # let dir = tempfile::tempdir().unwrap();
//! let mut store = Store::open(&dir.path().join("history.sqlite3")).unwrap();
//! let spec = RunSpec {
//!     skill: SkillIdentity { name: "pdf".into(), path: None, content_hash: "sha256:aa".into() },
//!     suite: SuiteSpec {
//!         content_hash: "sha256:bb".into(),
//!         source: Some("evals/evals.json".into()),
//!         cases: vec![CaseSpec { key: "c1".into(), content_hash: "sha256:cc".into(), definition: None }],
//!     },
//!     harness: "claude-code".into(),
//!     harness_version: Some("2.1.0".into()),
//!     model: "claude-sonnet-4-5".into(),
//!     judge_model: None,
//!     scoring_profile: DEFAULT_SCORING_PROFILE.into(),
//!     trigger: Trigger::Manual,
//!     config: serde_json::json!({"runs": 1}),
//!     seed: 7,
//!     tool_version: "skillwatch 0.1.0".into(),
//!     started_ms: None,
//! };
//! let run = store.begin_run(&spec).unwrap();
//! for condition in [Condition::Baseline, Condition::Skill] {
//!     let mut trial = TrialRecord::new("c1", condition, 0);
//!     let score = if condition == Condition::Skill { 0.9 } else { 0.4 };
//!     trial.metrics.insert("goal_accuracy".into(), score);
//!     store.record_trial(run, &trial).unwrap();
//! }
//! store.finish_run(run, RunStatus::Completed).unwrap();
//! assert_eq!(store.run_trials(run).unwrap().len(), 2);
//! ```
//!
//! # Guarantees
//!
//! - Each public write is one transaction: it is stored completely or not at all.
//! - `record_trial` commits each trial on its own, so a crash loses at most the trial being
//!   written; `synchronous = FULL` makes a committed trial survive power loss too.
//! - A database written by a newer skillwatch is refused and not modified; an older one is
//!   upgraded in place, one migration per transaction.
//! - A damaged database is never written to: [`Store::open`], the writers' door, runs SQLite's
//!   `quick_check` first (one pass over the file, paid once per process) and refuses a file
//!   that fails it with the command that recovers what is readable
//!   ([`StoreError::Damaged`]). Readers ([`Store::open_existing`]) skip the check; a damaged
//!   page they meet is reported with the same advice.

mod comparisons;
mod error;
mod external;
mod history;
mod import;
mod jobs;
mod judging;
mod lifecycle;
mod migrate;
mod optimizations;
mod probes;
mod read;
mod record;
mod reuse;
mod roots;
mod summary;
pub mod time;
mod trajectory;
mod triggers;
mod types;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use skillwatch_core::scoring::{CompareParams, ScoringProfile};

pub use comparisons::model_comparison;
pub use error::{Result, StoreError};
pub use external::{ExternalReport, ExternalRun};
pub use history::{CASE_SCAN_RUNS, CaseResult, FailedRun, HistoryEntry, ModelLift, RunComparison};
pub use import::{
    FORMAT as TRIAL_FILE_FORMAT, ImportError, ImportReport, ImportedRun, TrialFile, UNKNOWN_HASH,
    parse_trial_file, read_trial_file,
};
pub use jobs::Recovered;
pub use judging::{StoredJudgment, TrialRejudged};
pub use lifecycle::{Row, RunBegin, RunEnd, RunRef, Spend, Spent, Stop};
pub use migrate::{APPLICATION_ID, MIGRATIONS, Migration, latest_version};
pub use optimizations::{OptimizationRecord, StoredOptimization};
pub use probes::{
    ProbeOutcome, ProbeOutcomeRecord, ProbeRunId, ProbeRunInfo, ProbeRunSpec, SecurityComparison,
    security_of,
};
pub use read::{RunFilter, RunInfo, SkillInfo, StoredTrial};
pub use record::{
    AssertionResult, CaseSpec, DEFAULT_SCORING_PROFILE, Judgment, RunSpec, SkillIdentity,
    SuiteSpec, Tokens, Trajectory, TrialRecord, Verdict,
};
pub use reuse::{BaselineQuery, ReusableTrial};
pub use roots::RememberedRoot;
pub use summary::{
    ProfileHeadline, RunHeadline, RunSummary, SUMMARY_MAPPING_VERSION, StatusCounts, TrialCounts,
    inference_params, scoring_trial, summary_version,
};
pub use triggers::{
    TriggerComparison, TriggerRunId, TriggerRunInfo, TriggerRunSpec, TriggerTrialRow,
    summary_of as trigger_summary,
};
pub use types::{
    Condition, JudgmentKind, RunId, RunKind, RunStatus, StopReason, TrialId, TrialStatus, Trigger,
    UnexpectedValue, Winner,
};

/// How long a write waits for another process's write to finish before failing (the daemon,
/// the CLI and the LSP may all hold the file).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The file name of the history database inside skillwatch's data folder.
pub const DEFAULT_FILE_NAME: &str = "history.sqlite3";

/// `<user data dir>/skillwatch/history.sqlite3` (e.g. `~/.local/share/skillwatch/...` on
/// Linux), or `None` when the platform has no data dir (no HOME).
pub fn default_path() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("skillwatch").join(DEFAULT_FILE_NAME))
}

/// An open history database. Writes take `&mut self` (each is a transaction); reads take
/// `&self`. One `Store` per thread: wrap it in a mutex, or open one per thread (WAL lets them
/// share the file).
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Open the history at `path`, creating the file (and its folder) if needed and upgrading
    /// an older schema. A newer schema or a foreign SQLite file is refused untouched.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        Store::open_with(path, MIGRATIONS)
    }

    /// Open an existing history; a missing file is an error ([`StoreError::Missing`]) rather
    /// than a new empty database. What read-only commands use, so a typo in `--db` does not
    /// silently create a file. A command that goes on to write calls [`Store::check_intact`].
    pub fn open_existing(path: &Path) -> Result<Store> {
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        Store::open_checked(path, MIGRATIONS, false)
    }

    /// Open with a given migration list: `MIGRATIONS` in production; a prefix of it in tests
    /// that need a database as an older skillwatch left it.
    #[doc(hidden)]
    pub fn open_with(path: &Path, migrations: &[Migration]) -> Result<Store> {
        Store::open_checked(path, migrations, true)
    }

    /// Refuse to write to a damaged file: SQLite's `quick_check` over the whole database.
    pub fn check_intact(&self) -> Result<()> {
        quick_check(&self.conn, &self.path)
    }

    fn open_checked(path: &Path, migrations: &[Migration], writing: bool) -> Result<Store> {
        let known = migrations.len() as u32;
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        if path.exists() {
            // Check first through a read-only handle: a file we must refuse is never opened
            // for writing, so not even a WAL checkpoint can touch it.
            let ro = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(open_err)?;
            migrate::check_version(&ro, path, known)?;
            if writing {
                quick_check(&ro, path)?;
            }
        }
        let mut conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        let version = migrate::check_version(&conn, path, known)?;
        enter_wal(&conn).map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(open_err)?;
        migrate::apply(&mut conn, path, version, migrations)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open file (equal to [`latest_version`] after `open`).
    pub fn schema_version(&self) -> Result<u32> {
        let v: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?;
        Ok(v as u32)
    }

    /// Start a run: records the skill version, suite and cases (reusing rows already known)
    /// and a `running` run. Trials are then added with [`Store::record_trial`].
    pub fn begin_run(&mut self, spec: &RunSpec) -> Result<RunId> {
        let tx = self.conn.transaction()?;
        let run = write::begin_run(&tx, spec, None)?;
        tx.commit()?;
        Ok(run)
    }

    /// Record one trial of a running run, with its assertions, metrics, independent
    /// judgments and trajectory, in one transaction.
    pub fn record_trial(&mut self, run: RunId, trial: &TrialRecord) -> Result<TrialId> {
        let tx = self.conn.transaction()?;
        let id = write::record_trial(&tx, run, trial)?;
        tx.commit()?;
        Ok(id)
    }

    /// Record several trials in one transaction (all or none): cheaper than one call per trial
    /// when results arrive in batches.
    pub fn record_trials(&mut self, run: RunId, trials: &[TrialRecord]) -> Result<Vec<TrialId>> {
        let tx = self.conn.transaction()?;
        let ids = trials
            .iter()
            .map(|t| write::record_trial(&tx, run, t))
            .collect::<Result<Vec<_>>>()?;
        tx.commit()?;
        Ok(ids)
    }

    /// Record pairwise judge verdicts for one (case, attempt) of a run. Works on finished runs
    /// too, so a judge can be re-run without re-running agents.
    pub fn record_pairwise_judgments(
        &mut self,
        run: RunId,
        case: &str,
        attempt: u32,
        judgments: &[Judgment],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        write::record_pairwise(&tx, run, case, attempt, judgments)?;
        tx.commit()?;
        Ok(())
    }

    /// End a running run with `status` (not `running`) and score it: the summary (ACES lift
    /// with intervals, utility, rates) is stored with the status change, in one transaction.
    /// Should scoring fail ([`StoreError::Scoring`]), the status is still stored and the error
    /// returned; reading the run's history later retries the summary. A run that measured
    /// nothing (its trials errored, no case attempt scored on both sides) is stored `failed`
    /// however it was asked to end.
    pub fn finish_run(&mut self, run: RunId, status: RunStatus) -> Result<RunSummary> {
        let tx = self.conn.transaction()?;
        write::finish_run(&tx, run, status, None)?;
        match history::ensure_summary(&tx, &read::run(&tx, run)?) {
            Ok(summary) => {
                tx.commit()?;
                Ok(summary)
            }
            Err(err @ StoreError::Scoring { .. }) => {
                tx.commit()?;
                Err(err)
            }
            Err(err) => Err(err),
        }
    }

    /// Mark every run still `running`, of every kind, as `interrupted`; returns how many. For
    /// the process that owns the history (the daemon) at start-up: no run can be in progress
    /// before it starts.
    pub fn interrupt_running_runs(&mut self) -> Result<usize> {
        lifecycle::interrupt_running(&self.conn)
    }

    /// Start a run of any kind (`running`).
    pub fn begin(&mut self, spec: RunBegin<'_>) -> Result<RunRef> {
        let tx = self.conn.transaction()?;
        let run = lifecycle::begin(&tx, spec)?;
        tx.commit()?;
        Ok(run)
    }

    /// Record one finished trial of a running run of any kind, and what it spent, in one
    /// transaction (a crash loses at most the trial in flight).
    pub fn record(&mut self, run: RunRef, row: &Row, spend: Option<&Spend>) -> Result<()> {
        let tx = self.conn.transaction()?;
        lifecycle::record(&tx, run, row, spend)?;
        tx.commit()?;
        Ok(())
    }

    /// Record what calls to `run`'s judge spent, one `spending` row each, in one transaction.
    pub fn record_judge_calls(&mut self, run: RunRef, calls: &[Spend]) -> Result<()> {
        if calls.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction()?;
        lifecycle::record_judge_calls(&tx, run, calls)?;
        tx.commit()?;
        Ok(())
    }

    /// End a running run of any kind: its status, its score (a paired run's summary, a probe
    /// run's S) and why it stopped short, in one transaction. A paired run whose scoring fails
    /// keeps its status (its history retries the summary on read).
    pub fn finish(&mut self, run: RunRef, end: &RunEnd) -> Result<()> {
        let tx = self.conn.transaction()?;
        lifecycle::finish(&tx, run, end)?;
        tx.commit()?;
        Ok(())
    }

    /// Record why a run that ended by other means (a Harbor run, ended by its importer)
    /// stopped short.
    pub fn set_stop(&mut self, run: RunRef, stop: &Stop) -> Result<()> {
        lifecycle::set_stop(&self.conn, run, stop)
    }

    /// What `run` spent (its `spending` rows).
    pub fn spent(&self, run: RunRef) -> Result<Spent> {
        lifecycle::spent(&self.conn, run)
    }

    /// What every run spent since `since_ms`: the daemon's daily cap.
    pub fn spent_since(&self, since_ms: i64) -> Result<Spent> {
        lifecycle::spent_since(&self.conn, since_ms)
    }

    /// What a trial of `skill`'s runs of `kind` on `model` took, on average over the newest
    /// ones: the prediction a budget starts from, and what `plan` expects a design to spend.
    pub fn typical_usage(
        &self,
        kind: RunKind,
        skill: &str,
        model: &str,
    ) -> Result<Option<crate::runs::Usage>> {
        Ok(
            lifecycle::typical_usage(&self.conn, kind, skill, model)?.map(
                |(input, cached, output)| crate::runs::Usage {
                    input,
                    cached,
                    output,
                },
            ),
        )
    }

    /// Why `run` stopped short, if a budget stopped it.
    pub fn stop_of(&self, run: RunRef) -> Result<Option<Stop>> {
        lifecycle::stop(&self.conn, run)
    }

    /// The status of `run`, if it exists.
    pub fn run_status(&self, run: RunRef) -> Result<Option<RunStatus>> {
        lifecycle::status(&self.conn, run)
    }

    /// One probe run with its outcomes.
    pub fn probe_run(&self, run: ProbeRunId) -> Result<Option<ProbeRunInfo>> {
        probes::get(&self.conn, run)
    }

    /// S and status of `skill` on two models, from the newest completed probe run on each;
    /// `None` when either has none.
    pub fn compare_security(
        &self,
        skill: &str,
        reference: &str,
        candidate: &str,
        harness: Option<&str>,
    ) -> Result<Option<SecurityComparison>> {
        probes::compare(&self.conn, skill, reference, candidate, harness)
    }

    /// The newest completed probe run of `skill` on `model` (and `harness`, when given).
    pub fn latest_probe_run(
        &self,
        skill: &str,
        model: &str,
        harness: Option<&str>,
    ) -> Result<Option<ProbeRunInfo>> {
        probes::latest_completed(&self.conn, skill, model, harness)
    }

    /// The newest probe runs of a skill, newest first.
    pub fn probe_runs(
        &self,
        skill: &str,
        model: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ProbeRunInfo>> {
        probes::list(&self.conn, skill, model, limit)
    }

    /// One trigger run with its rates.
    pub fn trigger_run(&self, run: TriggerRunId) -> Result<Option<TriggerRunInfo>> {
        triggers::get(&self.conn, run)
    }

    /// The trials of a trigger run.
    pub fn trigger_trials(&self, run: TriggerRunId) -> Result<Vec<TriggerTrialRow>> {
        triggers::trials(&self.conn, run)
    }

    /// The newest trigger runs of a skill, newest first.
    pub fn trigger_runs(
        &self,
        skill: &str,
        model: Option<&str>,
        harness: Option<&str>,
        limit: usize,
    ) -> Result<Vec<TriggerRunInfo>> {
        triggers::list(&self.conn, skill, model, harness, limit)
    }

    /// The newest completed trigger run of `skill` on `model` (and `harness`, when given).
    pub fn latest_trigger_run(
        &self,
        skill: &str,
        model: &str,
        harness: Option<&str>,
    ) -> Result<Option<TriggerRunInfo>> {
        triggers::latest_completed(&self.conn, skill, model, harness)
    }

    /// Trigger rates of `skill` on two models, from the newest completed trigger run on each,
    /// paired by query; `None` when either has none.
    pub fn compare_triggers(
        &self,
        skill: &str,
        reference: &str,
        candidate: &str,
        harness: Option<&str>,
        params: &CompareParams,
    ) -> Result<Option<TriggerComparison>> {
        let newest = |model| triggers::latest_completed(&self.conn, skill, model, harness);
        Ok(match (newest(reference)?, newest(candidate)?) {
            (Some(r), Some(c)) => Some(TriggerComparison::of(r, c, &params.verdict())),
            _ => None,
        })
    }

    /// Write a parsed trial file in one transaction: all its runs or nothing. Runs whose
    /// external id is already in the history are skipped, so importing a file twice is
    /// harmless. `progress` is called with (trials written, trials in the file).
    pub fn import(
        &mut self,
        file: &TrialFile,
        progress: &mut dyn FnMut(usize, usize),
    ) -> std::result::Result<ImportReport, ImportError> {
        let fail = |source| ImportError::Store {
            file: file.path.clone(),
            source: Box::new(source),
        };
        let total = file.trial_count();
        let tx = self.conn.transaction().map_err(|e| fail(e.into()))?;
        let mut report = ImportReport::default();
        for run in &file.runs {
            if read::external_id_exists(&tx, &run.external_id).map_err(fail)? {
                report.skipped.push(run.external_id.clone());
                continue;
            }
            let id = import_run(&tx, run, &mut report, total, progress).map_err(fail)?;
            report.imported.push(id);
        }
        tx.commit().map_err(|e| fail(e.into()))?;
        Ok(report)
    }

    /// Write the runs of an external job (a Harbor job) as it stands, in one transaction:
    /// trials already stored (by their external id) are left alone, the new ones added with
    /// the next free attempts; a run whose job is not complete stays `interrupted`.
    pub fn import_external(&mut self, runs: &[ExternalRun]) -> Result<Vec<ExternalReport>> {
        let tx = self.conn.transaction()?;
        let reports = runs
            .iter()
            .map(|r| external::import(&tx, r))
            .collect::<Result<Vec<_>>>()?;
        tx.commit()?;
        Ok(reports)
    }

    /// Whether a trial imported from an external job (by that job's trial id) is stored.
    pub fn has_external_trial(&self, external_id: &str) -> Result<bool> {
        external::has_trial(&self.conn, external_id)
    }

    /// Original baseline trials an earlier run recorded under the same `baseline_key` for the
    /// same case version, newest first: what a new run may copy instead of re-running
    /// (see the `reuse` module docs).
    pub fn find_baselines(&self, query: &BaselineQuery<'_>) -> Result<Vec<ReusableTrial>> {
        reuse::find_baselines(&self.conn, query)
    }

    /// Copy a trial (checks, metrics, independent judgments, trajectory) into a running run
    /// as `attempt`, in one transaction.
    pub fn copy_trial(&mut self, from: TrialId, to: RunId, attempt: u32) -> Result<TrialId> {
        let tx = self.conn.transaction()?;
        let id = reuse::copy_trial(&tx, from, to, attempt)?;
        tx.commit()?;
        Ok(id)
    }

    /// Set an interrupted, cancelled or failed run back to running, so a runner can add the
    /// trials it is missing and finish it (resume after a crash).
    pub fn reopen_run(&mut self, run: RunId) -> Result<()> {
        let tx = self.conn.transaction()?;
        reuse::reopen_run(&tx, run)?;
        tx.commit()?;
        Ok(())
    }

    /// The cases of a run's suite with their stored definitions, in suite order.
    pub fn run_cases(&self, run: RunId) -> Result<Vec<CaseSpec>> {
        judging::run_cases(&self.conn, run)
    }

    /// A trial's stored checks (assertions, constraints, judged expectations), in order.
    pub fn trial_checks(&self, trial: TrialId) -> Result<Vec<AssertionResult>> {
        judging::trial_checks(&self.conn, trial)
    }

    /// Every judgment of a run (independent and pairwise, errors included), oldest first.
    pub fn run_judgments(&self, run: RunId) -> Result<Vec<StoredJudgment>> {
        judging::run_judgments(&self.conn, run)
    }

    /// Replace a trial's judging results (re-judging without re-running the agent), in one
    /// transaction. Works on finished runs; the run's summary is recomputed on next read.
    pub fn replace_trial_judging(&mut self, run: RunId, update: &TrialRejudged) -> Result<()> {
        let tx = self.conn.transaction()?;
        judging::replace_trial_judging(&tx, run, update)?;
        tx.commit()?;
        Ok(())
    }

    /// Replace the pairwise verdicts of one (case, attempt), in one transaction.
    pub fn replace_pairwise_judgments(
        &mut self,
        run: RunId,
        case: &str,
        attempt: u32,
        judgments: &[Judgment],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        judging::replace_pairwise(&tx, run, case, attempt, judgments)?;
        tx.commit()?;
        Ok(())
    }

    /// Record the scoring profile `run` is read under by default: `skillwatch run
    /// --scoring-profile aces` records it, so history, the lens and reports give that run the
    /// verdict `run` printed.
    pub fn set_scoring_profile(&mut self, run: RunId, profile: ScoringProfile) -> Result<()> {
        write::set_scoring_profile(&self.conn, run, profile.as_str())
    }

    /// One run's identity.
    pub fn run(&self, run: RunId) -> Result<RunInfo> {
        read::run(&self.conn, run)
    }

    /// Runs of the skill named `skill`, newest first, filtered.
    pub fn runs(&self, skill: &str, filter: &RunFilter<'_>) -> Result<Vec<RunInfo>> {
        read::runs_of_skill(&self.conn, skill, filter)
    }

    /// Every trial of a run with its metrics (outputs excluded: see [`Store::trial_output`]).
    pub fn run_trials(&self, run: RunId) -> Result<Vec<StoredTrial>> {
        read::run_trials(&self.conn, run)
    }

    /// A trial's output text.
    pub fn trial_output(&self, trial: TrialId) -> Result<Option<String>> {
        read::trial_output(&self.conn, trial)
    }

    /// A stored trajectory by hash, verified against it.
    pub fn trajectory(&self, sha256: &str) -> Result<Option<Trajectory>> {
        trajectory::get(&self.conn, sha256)
    }

    /// A skill's runs, newest first, with their scored headlines. Summaries missing from the
    /// store (a database upgraded from schema 1, or a new scoring version) are computed and
    /// stored on the way.
    pub fn history(&self, skill: &str, filter: &RunFilter<'_>) -> Result<Vec<HistoryEntry>> {
        history::history(&self.conn, skill, filter)
    }

    /// The full scored summary of a finished run (computed and stored if missing); `None`
    /// while the run is still running.
    pub fn summary(&self, run: RunId) -> Result<Option<RunSummary>> {
        let info = read::run(&self.conn, run)?;
        if info.status == RunStatus::Running {
            return Ok(None);
        }
        history::ensure_summary(&self.conn, &info).map(Some)
    }

    /// For the SKILL.md code lens: the newest completed run per (harness, model) with its lift,
    /// interval, n and time, plus how many completed runs that model has. Sorted by model.
    pub fn latest_lift_per_model(&self, skill: &str) -> Result<Vec<ModelLift>> {
        history::latest_lift_per_model(&self.conn, skill)
    }

    /// For the SKILL.md code lens: per (harness, model), the newest finished run when it
    /// failed (a newer completed run hides it). Sorted by model.
    pub fn latest_failed_per_model(&self, skill: &str) -> Result<Vec<FailedRun>> {
        history::latest_failed_per_model(&self.conn, skill)
    }

    /// The variance of the skill's outcome lift from its newest completed run with two cases or
    /// more (on `model` first): what planning uses. `None` without such a run.
    pub fn outcome_variance(
        &self,
        skill: &str,
        model: Option<&str>,
    ) -> Result<Option<(RunInfo, skillwatch_core::scoring::plan::VarianceModel)>> {
        history::outcome_variance(&self.conn, skill, model)
    }

    /// For the per-case code lens: each case of the skill's current suite with its last lift
    /// per (harness, model).
    pub fn case_results(&self, skill: &str) -> Result<Vec<CaseResult>> {
        history::case_results(&self.conn, skill)
    }

    /// Does the skill still help on `candidate` compared with `reference`? Compares the newest
    /// completed run on each model (on `harness`, when given) case by case.
    pub fn compare_models(
        &self,
        skill: &str,
        reference: &str,
        candidate: &str,
        harness: Option<&str>,
        params: &CompareParams,
    ) -> Result<RunComparison> {
        let pick = |model: &str| -> Result<RunInfo> {
            history::latest_completed_run(&self.conn, skill, model, harness)?.ok_or_else(|| {
                let known = history::models_of_skill(&self.conn, skill).unwrap_or_default();
                StoreError::NoCompletedRun {
                    skill: skill.to_string(),
                    model: model.to_string(),
                    known: if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    },
                }
            })
        };
        let (r, c) = (pick(reference)?, pick(candidate)?);
        history::compare_runs(&self.conn, r.id, c.id, params)
    }

    /// Compare two given runs case by case (e.g. two skill versions on one model).
    pub fn compare_runs(
        &self,
        reference: RunId,
        candidate: RunId,
        params: &CompareParams,
    ) -> Result<RunComparison> {
        history::compare_runs(&self.conn, reference, candidate, params)
    }

    /// Every skill the history knows.
    pub fn skills(&self) -> Result<Vec<SkillInfo>> {
        read::skills(&self.conn)
    }

    /// Whether the history has a skill of this name.
    pub fn has_skill(&self, skill: &str) -> Result<bool> {
        read::skill_exists(&self.conn, skill)
    }

    /// SQLite's own consistency check: `ok`, or the problems it found. Also reports foreign
    /// keys that point nowhere.
    pub fn integrity_check(&self) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        for row in stmt.query_map([], |r| r.get::<_, String>(0))? {
            let row = row?;
            if row != "ok" {
                problems.push(row);
            }
        }
        let mut stmt = self.conn.prepare("PRAGMA foreign_key_check")?;
        for row in stmt.query_map([], |r| {
            Ok(format!(
                "{} row {} references missing {}",
                r.get::<_, String>(0)?,
                r.get::<_, Option<i64>>(1)?.unwrap_or(-1),
                r.get::<_, String>(2)?
            ))
        })? {
            problems.push(row?);
        }
        Ok(problems)
    }
}

/// `PRAGMA quick_check`: `Ok` when SQLite finds the file sound, else [`StoreError::Damaged`].
fn quick_check(conn: &Connection, path: &Path) -> Result<()> {
    let damaged = |problems: Vec<String>| StoreError::Damaged {
        path: path.to_path_buf(),
        problems: problems.join("; "),
    };
    let mut stmt = match conn.prepare("PRAGMA quick_check(5)") {
        Ok(s) => s,
        Err(e) if error::is_damage(&e) => return Err(damaged(vec![e.to_string()])),
        Err(e) => return Err(e.into()),
    };
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>());
    match rows {
        Ok(rows) if rows.iter().all(|r| r == "ok") => Ok(()),
        Ok(rows) => Err(damaged(rows)),
        Err(e) if error::is_damage(&e) => Err(damaged(vec![e.to_string()])),
        Err(e) => Err(e.into()),
    }
}

/// Write one imported run inside the import's transaction.
fn import_run(
    tx: &Connection,
    run: &ImportedRun,
    report: &mut ImportReport,
    total: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<RunId> {
    let id = write::begin_run(tx, &run.spec, Some(&run.external_id))?;
    if !run.outcome_metrics.is_empty() {
        write::set_outcome_metrics(tx, id, &run.outcome_metrics)?;
    }
    write::record_probes(tx, id, &run.probes)?;
    for trial in &run.trials {
        write::record_trial(tx, id, trial)?;
        report.trials += 1;
        if report.trials.is_multiple_of(1000) {
            progress(report.trials, total);
        }
    }
    for (case, attempt, judgment) in &run.pairwise {
        write::record_pairwise(tx, id, case, *attempt, std::slice::from_ref(judgment))?;
    }
    write::finish_run(tx, id, run.status, Some(run.finished_ms))?;
    history::ensure_summary(tx, &read::run(tx, id)?)?;
    progress(report.trials, total);
    Ok(id)
}

#[cfg(test)]
mod tests;

/// Switch the file to WAL (a no-op once it is: the mode is stored in the file). SQLite answers
/// a switch that races another connection with `SQLITE_BUSY` at once, without the busy
/// handler, so a new file opened by several processes together (the editor's server, the
/// daemon it starts) is retried here for as long as the busy timeout.
fn enter_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}
