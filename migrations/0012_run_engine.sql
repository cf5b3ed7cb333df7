-- 0012_run_engine: one run engine under paired runs, probes, trigger tests and Harbor (issue
-- 37). Never edit once landed; add 0011_... instead.
--
-- The three run tables (runs, probe_runs, trigger_runs) keep their rows and ids; what the
-- engine adds is written once for every kind, with the kind as data:
--
-- * spending: one row per agent execution the engine paid for (a trial, a probe, a trigger
--   query), with the harness's token counts and the cost from the price table. A run's spending
--   is the sum of its rows; the daemon's daily cap sums the rows of the day. Reused baseline
--   trials are copies and cost nothing, so they have no row.
-- * run_stops: a run that ended before its plan because its budget would have been crossed
--   (its status stays `completed`: it ran to its own end, and what it recorded is scored; the
--   verdict rules say when that is too little).
--
-- The job queue learns the kinds: `jobs.kind` and `jobs.trigger_run_id`; each job's request
-- is rewritten from protocol 4's untyped `runner` to protocol 5's typed `spec`.

CREATE TABLE spending (
    id             INTEGER PRIMARY KEY,
    run_kind       TEXT    NOT NULL CHECK (run_kind IN ('paired', 'probe', 'trigger')),
    run_id         INTEGER NOT NULL,
    model          TEXT    NOT NULL,
    tokens_in      INTEGER NOT NULL CHECK (tokens_in >= 0),
    tokens_out     INTEGER NOT NULL CHECK (tokens_out >= 0),
    tokens_cached  INTEGER NOT NULL CHECK (tokens_cached >= 0),
    cost_usd       REAL    CHECK (cost_usd IS NULL OR cost_usd >= 0),
    at_ms          INTEGER NOT NULL
) STRICT;

-- The daily cap: what was spent since the start of the day.
CREATE INDEX spending_by_time ON spending (at_ms);
-- What one run spent.
CREATE INDEX spending_by_run ON spending (run_kind, run_id);

-- What the daily cap counted before: every paired trial recorded (by when it started), with
-- the cost its harness reported; and, as trigger trials were not counted, none of those.
INSERT INTO spending (run_kind, run_id, model, tokens_in, tokens_out, tokens_cached, cost_usd,
                      at_ms)
SELECT 'paired', t.run_id, r.model, max(coalesce(t.tokens_in, 0), 0),
       max(coalesce(t.tokens_out, 0), 0), max(coalesce(t.tokens_cached, 0), 0),
       CASE WHEN t.cost_usd >= 0 THEN t.cost_usd END, t.started_ms
FROM trials t JOIN runs r ON r.id = t.run_id;

CREATE TABLE run_stops (
    run_kind  TEXT    NOT NULL CHECK (run_kind IN ('paired', 'probe', 'trigger')),
    run_id    INTEGER NOT NULL,
    reason    TEXT    NOT NULL CHECK (reason IN ('budget')),
    -- which limit, in words: `--max-tokens 5000: 4 980 spent, the next trial takes ~250`
    detail    TEXT    NOT NULL,
    -- the run's limits (protocol::Budget as JSON)
    limits    TEXT    NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_kind, run_id)
) STRICT, WITHOUT ROWID;

-- A trigger run of `--description-file` (either arm of the A/B) is a run like any other,
-- budgeted and in the ledger, but not a measure of the skill as it is: it stays out of the
-- skill's history, lenses and comparisons.
ALTER TABLE trigger_runs ADD COLUMN in_history INTEGER NOT NULL DEFAULT 1
    CHECK (in_history IN (0, 1));

ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'paired'
    CHECK (kind IN ('paired', 'harbor', 'probe', 'trigger'));
ALTER TABLE jobs ADD COLUMN trigger_run_id INTEGER REFERENCES trigger_runs(id);

-- Protocol 4 requests: {..., "kind": "probe"?, "runner": <the kind's request>?}. Protocol 5:
-- {..., "kind": K, "spec": {"kind": K, ...the kind's request}}; a paired request with a
-- `harbor` target is a Harbor run; one without a runner stays a configured paired run.
UPDATE jobs SET kind = 'probe',
       request = json_set(json_remove(request, '$.runner'), '$.kind', 'probe',
                          '$.spec', json_set(json_extract(request, '$.runner'), '$.kind', 'probe'))
WHERE json_extract(request, '$.kind') = 'probe' AND json_type(request, '$.runner') = 'object';

UPDATE jobs SET kind = 'harbor',
       request = json_set(json_remove(request, '$.runner'), '$.kind', 'harbor',
                          '$.spec', json_set(json_extract(request, '$.runner'), '$.kind', 'harbor'))
WHERE coalesce(json_extract(request, '$.kind'), 'paired') = 'paired'
  AND json_type(request, '$.runner.harbor') = 'object';

UPDATE jobs SET
       request = json_set(json_remove(request, '$.runner'), '$.kind', 'paired',
                          '$.spec', json_set(json_remove(json_extract(request, '$.runner'), '$.harbor'),
                                             '$.kind', 'paired'))
WHERE coalesce(json_extract(request, '$.kind'), 'paired') = 'paired'
  AND json_type(request, '$.runner') = 'object';

UPDATE jobs SET request = json_remove(request, '$.runner')
WHERE json_type(request, '$.runner') IS NOT NULL;
