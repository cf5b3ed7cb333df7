-- 0008_trigger_runs: trigger test runs (`skillwatch trigger`, issue 24). A trigger run is one
-- skill version's queries sent to one harness and model, each agent stopped at its first
-- decision; every trial is kept with its query, so the rates (core::scoring::trigger) are
-- computed from the stored trials on read and a comparison across models pairs them by query.

CREATE TABLE trigger_runs (
    id                INTEGER PRIMARY KEY,
    skill_id          INTEGER NOT NULL REFERENCES skills(id),
    skill_version_id  INTEGER NOT NULL REFERENCES skill_versions(id),
    harness           TEXT    NOT NULL,
    harness_version   TEXT,
    model             TEXT    NOT NULL,
    tool_version      TEXT    NOT NULL,
    status            TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'interrupted')),
    staged            TEXT    NOT NULL DEFAULT '[]',
    early_stop        INTEGER NOT NULL CHECK (early_stop IN (0, 1)),
    started_ms        INTEGER NOT NULL,
    finished_ms       INTEGER
) STRICT;

CREATE INDEX trigger_runs_by_skill ON trigger_runs (skill_id, model, started_ms DESC);

CREATE TABLE trigger_trials (
    trigger_run_id  INTEGER NOT NULL REFERENCES trigger_runs(id),
    query_index     INTEGER NOT NULL CHECK (query_index >= 0),
    run             INTEGER NOT NULL CHECK (run >= 0),
    query           TEXT    NOT NULL,
    kind            TEXT    NOT NULL CHECK (kind IN ('positive', 'negative', 'near_miss')),
    origin          TEXT    NOT NULL,
    decision        TEXT,
    tokens          INTEGER NOT NULL,
    turns           INTEGER NOT NULL,
    wall_ms         INTEGER NOT NULL,
    stopped_early   INTEGER NOT NULL CHECK (stopped_early IN (0, 1)),
    listed          INTEGER CHECK (listed IS NULL OR listed IN (0, 1)),
    error_message   TEXT,
    PRIMARY KEY (trigger_run_id, query_index, run)
) STRICT, WITHOUT ROWID;
