-- 0016_judge_spending: a run pays for its judge too. Never edit once landed; add 0017_...
-- instead.
--
-- `spending` had one row per agent execution (a trial). A paired run's judge calls (each
-- trial's independent scores, each pair's pairwise verdict, a re-judge's calls) cost tokens
-- at the judge model's price, and neither `--max-tokens`/`--max-cost`, a run's `Spent` line
-- nor the daemon's daily cap counted them. Each judge call now has a row of its own, marked
-- `judge`; every row written before is a trial's. `count(*)` of a run's rows is no longer its
-- trial count: readers count the `trial` rows (store::lifecycle::sum).
ALTER TABLE spending ADD COLUMN item TEXT NOT NULL DEFAULT 'trial'
    CHECK (item IN ('trial', 'judge'));
