-- 0015_plugin_arm: a third condition, `plugin` (a Vally experiment's plugin arm: every skill of
-- the plugin installed together), beside `baseline` and `skill` (issue 38). Never edit once
-- landed; add 0016_... instead.
--
-- SQLite cannot widen a CHECK constraint in place, so `trials` is rebuilt by the documented
-- procedure (sqlite.org/lang_altertable.html#otheralter): a new table, every row copied with
-- its id (the assertions, judgments, spending and external_trials rows that point at a trial
-- keep pointing at it), the old table dropped, the new one renamed, its indexes made again.
-- The migration runs with foreign keys off (store::migrate turns them off around every
-- migration and checks them before each commit), so dropping the old table deletes nothing
-- that refers to it. Rows are copied unchanged: every old row reads as it did.

CREATE TABLE trials_v15 (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    case_id        INTEGER NOT NULL REFERENCES cases(id),
    condition      TEXT    NOT NULL CHECK (condition IN ('baseline', 'skill', 'plugin')),
    attempt        INTEGER NOT NULL CHECK (attempt >= 0),
    status         TEXT    NOT NULL CHECK (status IN ('completed', 'error', 'timeout')),
    passed         INTEGER CHECK (passed IN (0, 1)),
    output         TEXT    NOT NULL DEFAULT '',
    error_message  TEXT,
    tokens_in      INTEGER,
    tokens_out     INTEGER,
    tokens_cached  INTEGER,
    cost_usd       REAL,
    wall_ms        INTEGER,
    tool_calls     INTEGER,
    turns          INTEGER,
    errors         INTEGER,
    skill_invoked  INTEGER CHECK (skill_invoked IN (0, 1)),
    trajectory_id  INTEGER REFERENCES trajectories(id),
    started_ms     INTEGER NOT NULL,
    stderr_tail    TEXT,
    retries        INTEGER CHECK (retries >= 0),
    UNIQUE (run_id, case_id, condition, attempt)
) STRICT;

INSERT INTO trials_v15 (id, run_id, case_id, condition, attempt, status, passed, output,
                        error_message, tokens_in, tokens_out, tokens_cached, cost_usd, wall_ms,
                        tool_calls, turns, errors, skill_invoked, trajectory_id, started_ms,
                        stderr_tail, retries)
SELECT id, run_id, case_id, condition, attempt, status, passed, output, error_message,
       tokens_in, tokens_out, tokens_cached, cost_usd, wall_ms, tool_calls, turns, errors,
       skill_invoked, trajectory_id, started_ms, stderr_tail, retries
FROM trials;

DROP TABLE trials;
ALTER TABLE trials_v15 RENAME TO trials;

-- "last result of case C": newest run first (0001).
CREATE INDEX trials_by_case ON trials (case_id, run_id DESC);
-- The daily budget counts trials recorded today (0003).
CREATE INDEX trials_by_start ON trials (started_ms);
