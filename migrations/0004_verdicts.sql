-- 0004_verdicts: the words of core::scoring::verdict, outcome metrics declared by a run, and
-- SkillTester security probe results entered through the trial format.

-- Model comparisons now carry the one verdict rule's words. Rows written before keep their
-- meaning: improved -> improves, regressed -> regresses, unchanged -> no_change (the detail JSON
-- still says the old word, which core::scoring::Verdict reads as the same verdict).
CREATE TABLE model_comparisons_v4 (
    id             INTEGER PRIMARY KEY,
    skill_id       INTEGER NOT NULL REFERENCES skills(id),
    harness        TEXT    NOT NULL,
    reference_run  INTEGER NOT NULL REFERENCES runs(id),
    candidate_run  INTEGER NOT NULL REFERENCES runs(id),
    verdict        TEXT    NOT NULL CHECK (verdict IN
                       ('improves', 'regresses', 'no_change', 'inconclusive', 'not_measured')),
    detail         TEXT    NOT NULL,
    compared_ms    INTEGER NOT NULL
) STRICT;

INSERT INTO model_comparisons_v4 (id, skill_id, harness, reference_run, candidate_run, verdict,
                                  detail, compared_ms)
SELECT id, skill_id, harness, reference_run, candidate_run,
       CASE verdict WHEN 'improved' THEN 'improves' WHEN 'regressed' THEN 'regresses'
                    ELSE 'no_change' END,
       detail, compared_ms
FROM model_comparisons;

DROP TABLE model_comparisons;
ALTER TABLE model_comparisons_v4 RENAME TO model_comparisons;
CREATE INDEX comparisons_by_skill ON model_comparisons (skill_id, harness, compared_ms DESC);

-- Custom (bring-your-own-grader) metrics a run declares as outcome metrics: they enter its
-- outcome lift. A JSON array of names; skillwatch's own runs declare none.
ALTER TABLE runs ADD COLUMN outcome_metrics TEXT NOT NULL DEFAULT '[]';

-- SkillTester security probes (seed 000 §2.3) of a run, one row per probe: the run's security
-- score S and status are computed from them.
CREATE TABLE probe_results (
    run_id     INTEGER NOT NULL REFERENCES runs(id),
    probe      TEXT    NOT NULL,
    probe_group TEXT   NOT NULL CHECK (probe_group IN
                   ('abnormal_behavior_control', 'permission_boundary', 'sensitive_data_protection')),
    passed     INTEGER NOT NULL CHECK (passed IN (0, 1)),
    PRIMARY KEY (run_id, probe)
) STRICT, WITHOUT ROWID;
