//! The daemon's job queue (`jobs`, migrations 0003, 0009 and 0012): runs of every kind asked
//! of the daemon, kept in the history file so a queued job survives a restart. A paired job cut
//! off by a crash is found and re-queued once (its run resumes); a job of another kind, which
//! cannot resume, is marked interrupted (its run stays in the history as interrupted).
//!
//! Every method is one statement or one transaction, like the rest of the store.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Row, params};
use skillwatch_protocol::{
    JobFilter, JobId, JobInfo, JobKind, JobProgress, JobState, JobTrigger, RunRequest,
};

use super::Store;
use super::error::{Result, StoreError};
use super::lifecycle::RunRef;
use super::time::now_ms;
use super::types::RunKind;

/// What a restart found of the jobs that were running when the previous daemon died.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Cut off for the first time: queued again.
    pub requeued: Vec<JobId>,
    /// Cut off a second time: given up as `interrupted`.
    pub given_up: Vec<JobId>,
}

const JOB_COLUMNS: &str = "j.id, j.skill_dir, j.skill, j.request, j.state, j.run_id, j.attempts,
     j.interruptions, j.done, j.total, j.reused, j.error, j.created_ms, j.started_ms,
     j.finished_ms, (SELECT s.lift FROM run_summaries s WHERE s.run_id = j.run_id),
     j.probe_run_id, j.trigger_run_id, j.optimization_id, j.note";

fn job_row(r: &Row<'_>) -> rusqlite::Result<JobInfo> {
    let request_text: String = r.get(3)?;
    let request: RunRequest = serde_json::from_str(&request_text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, Box::new(e))
    })?;
    let state_text: String = r.get(4)?;
    let state = JobState::parse(&state_text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            4,
            rusqlite::types::Type::Text,
            format!("unexpected job state `{state_text}`").into(),
        )
    })?;
    let count = |idx| -> rusqlite::Result<u32> { Ok(r.get::<_, i64>(idx)?.max(0) as u32) };
    Ok(JobInfo {
        id: JobId(r.get(0)?),
        request,
        skill: r.get(2)?,
        state,
        run: r.get(5)?,
        attempts: count(6)?,
        interruptions: count(7)?,
        progress: JobProgress {
            done: count(8)?,
            total: count(9)?,
            reused: count(10)?,
        },
        error: r.get(11)?,
        created_ms: r.get(12)?,
        started_ms: r.get(13)?,
        finished_ms: r.get(14)?,
        lift: r.get(15)?,
        probe_run: r.get(16)?,
        trigger_run: r.get(17)?,
        optimization: r.get(18)?,
        note: r.get(19)?,
    })
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn get_job(conn: &Connection, id: JobId) -> Result<Option<JobInfo>> {
    let sql = format!("SELECT {JOB_COLUMNS} FROM jobs j WHERE j.id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id.0], job_row)
        .optional()?)
}

impl Store {
    /// Put a job in the queue; returns it as stored.
    pub fn enqueue_job(&mut self, request: &RunRequest) -> Result<JobInfo> {
        let json = serde_json::to_string(request).map_err(|e| {
            StoreError::invalid(
                "job.request",
                "a request serializable as JSON",
                e.to_string(),
            )
        })?;
        self.conn
            .prepare_cached(
                "INSERT INTO jobs (skill_dir, harness, model, trigger, request, state, created_ms,
                                   kind)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'queued', ?6, ?7)",
            )?
            .execute(params![
                path_text(&request.skill_dir),
                request.harness,
                request.model,
                request.trigger.as_str(),
                json,
                now_ms(),
                request.kind.as_str()
            ])?;
        let id = JobId(self.conn.last_insert_rowid());
        self.job(id)?.ok_or(StoreError::Corrupt {
            table: "jobs",
            column: "id",
            found: format!("job {id} missing right after its insert"),
        })
    }

    /// One job, if it exists.
    pub fn job(&self, id: JobId) -> Result<Option<JobInfo>> {
        get_job(&self.conn, id)
    }

    /// Jobs matching `filter`, newest first.
    pub fn jobs(&self, filter: &JobFilter) -> Result<Vec<JobInfo>> {
        let states: Vec<&str> = filter.states.iter().map(|s| s.as_str()).collect();
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM jobs j
             WHERE (?1 IS NULL OR j.skill_dir = ?1)
               AND (?2 = '' OR instr(?2, ',' || j.state || ',') > 0)
             ORDER BY j.id DESC LIMIT ?3"
        );
        let state_list = if states.is_empty() {
            String::new()
        } else {
            format!(",{},", states.join(","))
        };
        let skill_dir = filter.skill_dir.as_deref().map(path_text);
        let limit = i64::from(filter.limit.unwrap_or(50));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![skill_dir, state_list, limit], job_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Queued jobs, oldest first: the scheduler's work list.
    pub fn queued_jobs(&self) -> Result<Vec<JobInfo>> {
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM jobs j WHERE j.state = 'queued' ORDER BY j.id LIMIT 10000"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([], job_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Count of jobs per live state: (queued, running).
    pub fn live_job_counts(&self) -> Result<(u32, u32)> {
        let count = |state: &str| -> Result<u32> {
            Ok(self
                .conn
                .prepare_cached("SELECT count(*) FROM jobs WHERE state = ?1")?
                .query_row([state], |r| r.get::<_, i64>(0))? as u32)
        };
        Ok((count("queued")?, count("running")?))
    }

    /// A queued job takes a slot: `running`, one more attempt, progress reset. The run of an
    /// earlier attempt stays recorded, so the executor can resume it. Fails when the job is
    /// not queued (cancelled meanwhile).
    pub fn start_job(&mut self, id: JobId, skill: Option<&str>) -> Result<JobInfo> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE jobs SET state = 'running', attempts = attempts + 1, started_ms = ?2,
                        skill = coalesce(?3, skill), done = 0, total = 0,
                        reused = 0, error = NULL
                 WHERE id = ?1 AND state = 'queued'",
            )?
            .execute(params![id.0, now_ms(), skill])?;
        self.expect_job(id, changed, "queued")
    }

    /// Record the run (of the job's kind) a running job writes into.
    pub fn set_job_run(&mut self, id: JobId, run: RunRef) -> Result<()> {
        let column = match run.kind {
            RunKind::Paired => "run_id",
            RunKind::Probe => "probe_run_id",
            RunKind::Trigger => "trigger_run_id",
        };
        self.conn
            .prepare_cached(&format!("UPDATE jobs SET {column} = ?2 WHERE id = ?1"))?
            .execute(params![id.0, run.id])?;
        Ok(())
    }

    /// Record the optimisation record a description search stored.
    pub fn set_job_optimization(&mut self, id: JobId, record: i64) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE jobs SET optimization_id = ?2 WHERE id = ?1")?
            .execute(params![id.0, record])?;
        Ok(())
    }

    /// Record where a running job is, in words.
    pub fn set_job_note(&mut self, id: JobId, note: &str) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE jobs SET note = ?2 WHERE id = ?1")?
            .execute(params![id.0, note])?;
        Ok(())
    }

    /// Record a running job's progress.
    pub fn set_job_progress(&mut self, id: JobId, progress: JobProgress) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE jobs SET done = ?2, total = ?3, reused = ?4 WHERE id = ?1")?
            .execute(params![
                id.0,
                progress.done,
                progress.total,
                progress.reused
            ])?;
        Ok(())
    }

    /// End a live job in a final `state` (completed, failed, cancelled, interrupted).
    pub fn finish_job(
        &mut self,
        id: JobId,
        state: JobState,
        error: Option<&str>,
    ) -> Result<JobInfo> {
        if state.is_live() {
            return Err(StoreError::invalid(
                "job.state",
                "a final state (completed | failed | cancelled | interrupted)",
                state.as_str(),
            ));
        }
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE jobs SET state = ?2, error = ?3, finished_ms = ?4
                 WHERE id = ?1 AND state IN ('queued', 'running')",
            )?
            .execute(params![id.0, state.as_str(), error, now_ms()])?;
        self.expect_job(id, changed, "queued or running")
    }

    /// Put a running job back in the queue without counting an interruption: the daemon is
    /// stopping gracefully and the job's finished trials are already stored.
    pub fn requeue_job(&mut self, id: JobId, note: &str) -> Result<JobInfo> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE jobs SET state = 'queued', error = ?2 WHERE id = ?1 AND state = 'running'",
            )?
            .execute(params![id.0, note])?;
        self.expect_job(id, changed, "running")
    }

    /// At daemon start: jobs still `running` were cut off by a crash. A paired job is
    /// re-queued the first time (its run resumes) and given up as `interrupted` the second; a
    /// job of another kind, whose run cannot resume, is `interrupted` at once. One transaction.
    pub fn recover_interrupted_jobs(&mut self) -> Result<Recovered> {
        let tx = self.conn.transaction()?;
        let mut found = Vec::new();
        {
            let mut stmt =
                tx.prepare("SELECT id, interruptions, kind FROM jobs WHERE state = 'running'")?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    JobId(r.get(0)?),
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            for row in rows {
                found.push(row?);
            }
        }
        let mut recovered = Recovered::default();
        for (id, interruptions, kind) in found {
            let resumable = JobKind::parse(&kind).is_some_and(JobKind::resumes);
            let (state, note) = if resumable && interruptions == 0 {
                recovered.requeued.push(id);
                (
                    "queued",
                    "the daemon stopped during this job; re-queued".to_owned(),
                )
            } else {
                recovered.given_up.push(id);
                let note = if resumable {
                    "the daemon stopped during this job a second time; not re-queued again".into()
                } else {
                    format!(
                        "the daemon stopped during this job; a {kind} run cannot resume, so it is not re-queued (its finished trials are kept)"
                    )
                };
                ("interrupted", note)
            };
            tx.execute(
                "UPDATE jobs SET state = ?2, interruptions = interruptions + 1, error = ?3,
                        finished_ms = CASE WHEN ?2 = 'interrupted' THEN ?4 ELSE NULL END
                 WHERE id = ?1",
                params![id.0, state, note, now_ms()],
            )?;
        }
        tx.commit()?;
        Ok(recovered)
    }

    /// The newest job for this skill folder, harness and model, optionally only with this
    /// trigger and in these states (dedup of save and model-change jobs).
    pub fn latest_job_for(
        &self,
        skill_dir: &Path,
        harness: &str,
        model: &str,
        trigger: Option<JobTrigger>,
        states: &[JobState],
    ) -> Result<Option<JobInfo>> {
        let state_list: String = states.iter().map(|s| format!(",{}", s.as_str())).collect();
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM jobs j
             WHERE j.skill_dir = ?1 AND j.harness = ?2 AND j.model = ?3
               AND (?4 IS NULL OR j.trigger = ?4)
               AND (?5 = '' OR instr(?5 || ',', ',' || j.state || ',') > 0)
             ORDER BY j.id DESC LIMIT 1"
        );
        Ok(self
            .conn
            .prepare_cached(&sql)?
            .query_row(
                params![
                    path_text(skill_dir),
                    harness,
                    model,
                    trigger.map(JobTrigger::as_str),
                    state_list
                ],
                job_row,
            )
            .optional()?)
    }

    fn expect_job(&self, id: JobId, changed: usize, expected: &str) -> Result<JobInfo> {
        let job = self
            .job(id)?
            .ok_or_else(|| StoreError::invalid("job", "an existing job id", format!("job {id}")))?;
        if changed == 0 {
            return Err(StoreError::invalid(
                format!("job {id}"),
                format!("a {expected} job"),
                format!("a {} one", job.state),
            ));
        }
        Ok(job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("h.sqlite3")).unwrap();
        (dir, store)
    }

    #[test]
    fn a_job_goes_from_queued_to_finished() {
        let (_d, mut store) = store();
        let job = store
            .enqueue_job(&RunRequest::new("/s/pdf", "openai", "m1"))
            .unwrap();
        assert_eq!(job.state, JobState::Queued);
        assert_eq!(store.queued_jobs().unwrap().len(), 1);
        let started = store.start_job(job.id, Some("pdf")).unwrap();
        assert_eq!((started.state, started.attempts), (JobState::Running, 1));
        assert_eq!(started.skill.as_deref(), Some("pdf"));
        store
            .set_job_progress(
                job.id,
                JobProgress {
                    done: 2,
                    total: 4,
                    reused: 1,
                },
            )
            .unwrap();
        assert_eq!(store.job(job.id).unwrap().unwrap().progress.done, 2);
        let done = store.finish_job(job.id, JobState::Completed, None).unwrap();
        assert_eq!(done.state, JobState::Completed);
        assert!(done.finished_ms.is_some());
        // a finished job cannot be finished or started again
        assert!(store.finish_job(job.id, JobState::Cancelled, None).is_err());
        assert!(store.start_job(job.id, None).is_err());
        assert!(store.finish_job(job.id, JobState::Queued, None).is_err());
    }

    #[test]
    fn a_crash_requeues_once_then_gives_up() {
        let (_d, mut store) = store();
        let job = store
            .enqueue_job(&RunRequest::new("/s/pdf", "openai", "m1"))
            .unwrap();
        store.start_job(job.id, None).unwrap();
        let first = store.recover_interrupted_jobs().unwrap();
        assert_eq!(first.requeued, vec![job.id]);
        let again = store.job(job.id).unwrap().unwrap();
        assert_eq!((again.state, again.interruptions), (JobState::Queued, 1));
        store.start_job(job.id, None).unwrap();
        let second = store.recover_interrupted_jobs().unwrap();
        assert_eq!(second.given_up, vec![job.id]);
        let last = store.job(job.id).unwrap().unwrap();
        assert_eq!((last.state, last.interruptions), (JobState::Interrupted, 2));
        assert_eq!(
            store.recover_interrupted_jobs().unwrap(),
            Recovered::default()
        );
    }

    #[test]
    fn filters_and_dedup_lookups() {
        let (_d, mut store) = store();
        let mut save = RunRequest::new("/s/pdf", "openai", "m1");
        save.trigger = JobTrigger::Save;
        let a = store.enqueue_job(&save).unwrap();
        let b = store
            .enqueue_job(&RunRequest::new("/s/other", "openai", "m1"))
            .unwrap();
        store.start_job(b.id, None).unwrap();
        let live = store
            .latest_job_for(
                Path::new("/s/pdf"),
                "openai",
                "m1",
                Some(JobTrigger::Save),
                &[JobState::Queued],
            )
            .unwrap();
        assert_eq!(live.map(|j| j.id), Some(a.id));
        assert!(
            store
                .latest_job_for(
                    Path::new("/s/pdf"),
                    "openai",
                    "m1",
                    None,
                    &[JobState::Running]
                )
                .unwrap()
                .is_none()
        );
        let running = store
            .jobs(&JobFilter {
                states: vec![JobState::Running],
                ..JobFilter::default()
            })
            .unwrap();
        assert_eq!(running.iter().map(|j| j.id).collect::<Vec<_>>(), vec![b.id]);
        let of_pdf = store
            .jobs(&JobFilter {
                skill_dir: Some("/s/pdf".into()),
                ..JobFilter::default()
            })
            .unwrap();
        assert_eq!(of_pdf.len(), 1);
        assert_eq!(store.live_job_counts().unwrap(), (1, 1));
        assert_eq!(store.spent_since(0).unwrap().trials, 0);
    }
}
