-- 0007_external_trials: trials imported one by one from another tool's job (a Harbor job), by
-- that tool's trial id, so re-importing a job that was still running adds only the trials that
-- finished since, never a duplicate.
CREATE TABLE external_trials (
    trial_id     INTEGER PRIMARY KEY REFERENCES trials(id) ON DELETE CASCADE,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    external_id  TEXT    NOT NULL UNIQUE
) STRICT;
CREATE INDEX external_trials_by_run ON external_trials (run_id);
