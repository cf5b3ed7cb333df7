-- 0016_judge_spending: a run pays for its judge, and an optimisation for its proposer. Never
-- edit once landed; add 0017_... instead.
--
-- `spending` had one row per agent execution (a trial). A paired run's judge calls (each
-- trial's independent scores, each pair's pairwise verdict in both orders, every retry, a
-- re-judge's calls) and a description optimisation's proposer calls cost tokens too, and
-- neither `--max-tokens`/`--max-cost`, a run's `Spent` line nor the daemon's daily cap counted
-- them in the ledger. Each such call now has a row of its own: `item` says what it paid for
-- (`trial`, `judge`, `proposer`), and a proposer's rows belong to their optimisation
-- (`run_kind` `optimization`, `run_id` a description_optimizations id). `count(*)` of a run's
-- rows is no longer its trial count: readers count the `trial` rows (store::lifecycle::sum).
--
-- SQLite cannot widen a CHECK constraint in place, so the table is rebuilt by the documented
-- procedure (sqlite.org/lang_altertable.html#otheralter), as 0015 rebuilt `trials`: nothing
-- refers to `spending`, its ids are kept, and every row written before is a trial's.

CREATE TABLE spending_v16 (
    id             INTEGER PRIMARY KEY,
    run_kind       TEXT    NOT NULL
                   CHECK (run_kind IN ('paired', 'probe', 'trigger', 'optimization')),
    run_id         INTEGER NOT NULL,
    item           TEXT    NOT NULL DEFAULT 'trial'
                   CHECK (item IN ('trial', 'judge', 'proposer')),
    model          TEXT    NOT NULL,
    tokens_in      INTEGER NOT NULL CHECK (tokens_in >= 0),
    tokens_out     INTEGER NOT NULL CHECK (tokens_out >= 0),
    tokens_cached  INTEGER NOT NULL CHECK (tokens_cached >= 0),
    cost_usd       REAL    CHECK (cost_usd IS NULL OR cost_usd >= 0),
    at_ms          INTEGER NOT NULL,
    -- a proposer's call is an optimisation's; a trial or a judge call is a run's
    CHECK ((item = 'proposer') = (run_kind = 'optimization'))
) STRICT;

INSERT INTO spending_v16 (id, run_kind, run_id, item, model, tokens_in, tokens_out,
                          tokens_cached, cost_usd, at_ms)
SELECT id, run_kind, run_id, 'trial', model, tokens_in, tokens_out, tokens_cached, cost_usd,
       at_ms
FROM spending;

DROP TABLE spending;
ALTER TABLE spending_v16 RENAME TO spending;

-- The daily cap: what was spent since the start of the day.
CREATE INDEX spending_by_time ON spending (at_ms);
-- What one run spent.
CREATE INDEX spending_by_run ON spending (run_kind, run_id);
