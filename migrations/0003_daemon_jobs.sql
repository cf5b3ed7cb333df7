-- 0003_daemon_jobs: the daemon's persistent job queue, the workspace roots it watches, and the
-- model comparisons of its model-change reruns. Never edit once landed; add 0004_... instead.
--
-- A job is one paired run asked of the daemon. It survives restarts: queued jobs wait in this
-- table, and a job found `running` when the daemon starts was cut off by a crash; it is
-- re-queued once (interruptions = 1) and given up as `interrupted` the second time.

CREATE TABLE jobs (
    id             INTEGER PRIMARY KEY,
    skill_dir      TEXT    NOT NULL,
    skill          TEXT,
    harness        TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    trigger        TEXT    NOT NULL CHECK (trigger IN ('manual', 'save', 'model_change')),
    request        TEXT    NOT NULL,
    state          TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelled', 'interrupted')),
    run_id         INTEGER REFERENCES runs(id),
    attempts       INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    interruptions  INTEGER NOT NULL DEFAULT 0 CHECK (interruptions >= 0),
    done           INTEGER NOT NULL DEFAULT 0,
    total          INTEGER NOT NULL DEFAULT 0,
    reused         INTEGER NOT NULL DEFAULT 0,
    error          TEXT,
    created_ms     INTEGER NOT NULL,
    started_ms     INTEGER,
    finished_ms    INTEGER
) STRICT;

-- The scheduler's question: which jobs are live, oldest first.
CREATE INDEX jobs_live ON jobs (state, id) WHERE state IN ('queued', 'running');
-- "jobs of this skill" (lenses, dedup of save and model-change jobs).
CREATE INDEX jobs_by_skill ON jobs (skill_dir, harness, model, id DESC);

-- The daily budget counts trials recorded today.
CREATE INDEX trials_by_start ON trials (started_ms);

CREATE TABLE watched_roots (
    path      TEXT    PRIMARY KEY,
    added_ms  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- A model-change rerun compared with the skill's previous model. `detail` is the JSON of
-- core::protocol::ModelComparison (numbers, interval, verdict, reason).
CREATE TABLE model_comparisons (
    id             INTEGER PRIMARY KEY,
    skill_id       INTEGER NOT NULL REFERENCES skills(id),
    harness        TEXT    NOT NULL,
    reference_run  INTEGER NOT NULL REFERENCES runs(id),
    candidate_run  INTEGER NOT NULL REFERENCES runs(id),
    verdict        TEXT    NOT NULL CHECK (verdict IN ('improved', 'unchanged', 'regressed')),
    detail         TEXT    NOT NULL,
    compared_ms    INTEGER NOT NULL
) STRICT;

CREATE INDEX comparisons_by_skill ON model_comparisons (skill_id, harness, compared_ms DESC);
