-- 0013_description_optimizations: `skillwatch trigger --optimize` (issue 40). One row per
-- optimisation: the skill version it started from, the agent model it measured on and the
-- proposer model, the split (seed and both sides' queries), every candidate with its rates or
-- why it was refused, the chosen description (NULL when none beat the original on
-- validation), why the loop ended and what it spent. With the split and the chosen text kept,
-- a later model can re-measure the chosen description on the same validation queries.

CREATE TABLE description_optimizations (
    id                INTEGER PRIMARY KEY,
    skill_id          INTEGER NOT NULL REFERENCES skills(id),
    skill_version_id  INTEGER NOT NULL REFERENCES skill_versions(id),
    harness           TEXT    NOT NULL,
    model             TEXT    NOT NULL,
    proposer_model    TEXT    NOT NULL,
    seed              INTEGER NOT NULL,
    split             TEXT    NOT NULL,
    candidates        TEXT    NOT NULL DEFAULT '[]',
    original          TEXT    NOT NULL,
    chosen            TEXT,
    stopped           TEXT    NOT NULL,
    tokens            INTEGER NOT NULL CHECK (tokens >= 0),
    cost_usd          REAL    NOT NULL CHECK (cost_usd >= 0),
    created_ms        INTEGER NOT NULL
) STRICT;

CREATE INDEX description_optimizations_by_skill
    ON description_optimizations (skill_id, model, created_ms DESC);
