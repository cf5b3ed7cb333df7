-- 0014_optimization_jobs: the description optimiser becomes one job of the run engine
-- (issue 40), and its proposer's calls are budgeted.
--
-- description_optimizations: what the proposer spent, kept apart from the trials (`tokens` and
-- `cost_usd` stay the trials', as 0013 defined them; rows recorded before this migration did
-- not count the proposer: 0 calls), and the job's typed report (skillwatch_protocol::
-- OptimizeReport as JSON: the validation rates before and after, the change with its
-- interval, the diff), which clients read back as the result of the job.
ALTER TABLE description_optimizations
    ADD COLUMN proposer_calls INTEGER NOT NULL DEFAULT 0 CHECK (proposer_calls >= 0);
ALTER TABLE description_optimizations
    ADD COLUMN proposer_tokens INTEGER NOT NULL DEFAULT 0 CHECK (proposer_tokens >= 0);
ALTER TABLE description_optimizations
    ADD COLUMN proposer_cost_usd REAL NOT NULL DEFAULT 0 CHECK (proposer_cost_usd >= 0);
ALTER TABLE description_optimizations ADD COLUMN report TEXT;

-- jobs: the kind `optimize` (SQLite cannot widen a CHECK in place, so the table is rebuilt
-- with every row kept), the record an optimize job stored, and the job's progress in words.
CREATE TABLE jobs_0014 (
    id              INTEGER PRIMARY KEY,
    skill_dir       TEXT    NOT NULL,
    skill           TEXT,
    harness         TEXT    NOT NULL,
    model           TEXT    NOT NULL,
    trigger         TEXT    NOT NULL CHECK (trigger IN ('manual', 'save', 'model_change')),
    request         TEXT    NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelled', 'interrupted')),
    run_id          INTEGER REFERENCES runs(id),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    interruptions   INTEGER NOT NULL DEFAULT 0 CHECK (interruptions >= 0),
    done            INTEGER NOT NULL DEFAULT 0,
    total           INTEGER NOT NULL DEFAULT 0,
    reused          INTEGER NOT NULL DEFAULT 0,
    error           TEXT,
    created_ms      INTEGER NOT NULL,
    started_ms      INTEGER,
    finished_ms     INTEGER,
    probe_run_id    INTEGER REFERENCES probe_runs(id),
    kind            TEXT    NOT NULL DEFAULT 'paired'
        CHECK (kind IN ('paired', 'harbor', 'probe', 'trigger', 'optimize')),
    trigger_run_id  INTEGER REFERENCES trigger_runs(id),
    optimization_id INTEGER REFERENCES description_optimizations(id),
    note            TEXT
) STRICT;

INSERT INTO jobs_0014 (id, skill_dir, skill, harness, model, trigger, request, state, run_id,
    attempts, interruptions, done, total, reused, error, created_ms, started_ms, finished_ms,
    probe_run_id, kind, trigger_run_id)
SELECT id, skill_dir, skill, harness, model, trigger, request, state, run_id, attempts,
    interruptions, done, total, reused, error, created_ms, started_ms, finished_ms,
    probe_run_id, kind, trigger_run_id
FROM jobs;

DROP TABLE jobs;
ALTER TABLE jobs_0014 RENAME TO jobs;
CREATE INDEX jobs_live ON jobs (state, id) WHERE state IN ('queued', 'running');
CREATE INDEX jobs_by_skill ON jobs (skill_dir, harness, model, id DESC);
