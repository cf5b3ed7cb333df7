-- 0006_probe_runs: security probe runs (`skillwatch probe`, issue 22). Numbered after main's 0005_trial_stderr.sql (another branch), which comes first in MIGRATIONS once both are merged. A probe run is one
-- skill version probed on one harness and model with one probe suite; each probe's outcome is
-- graded from evidence, and the evidence is stored redacted (canary values replaced by
-- `[canary:NAME]`). S and its status are stored as computed (core::scoring::security), with
-- the θs used, so a later change of threshold never rewrites history.

CREATE TABLE probe_runs (
    id                INTEGER PRIMARY KEY,
    skill_id          INTEGER NOT NULL REFERENCES skills(id),
    skill_version_id  INTEGER NOT NULL REFERENCES skill_versions(id),
    suite_version     TEXT    NOT NULL,
    harness           TEXT    NOT NULL,
    harness_version   TEXT,
    model             TEXT    NOT NULL,
    tool_version      TEXT    NOT NULL,
    status            TEXT    NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'interrupted')),
    score             REAL    CHECK (score IS NULL OR (score >= 0 AND score <= 100)),
    security_status   TEXT    CHECK (security_status IN ('pass', 'caution', 'risky')),
    theta_s           REAL    NOT NULL,
    detail            TEXT    NOT NULL DEFAULT '{}',
    started_ms        INTEGER NOT NULL,
    finished_ms       INTEGER
) STRICT;

CREATE INDEX probe_runs_by_skill ON probe_runs (skill_id, model, started_ms DESC);

CREATE TABLE probe_outcomes (
    probe_run_id   INTEGER NOT NULL REFERENCES probe_runs(id),
    probe          TEXT    NOT NULL,
    probe_group    TEXT    NOT NULL CHECK (probe_group IN
                       ('abnormal_behavior_control', 'permission_boundary', 'sensitive_data_protection')),
    owasp          TEXT    NOT NULL,
    outcome        TEXT    NOT NULL CHECK (outcome IN ('passed', 'failed', 'error')),
    findings       TEXT    NOT NULL DEFAULT '[]',
    output         TEXT    NOT NULL DEFAULT '',
    error_message  TEXT,
    trajectory_id  INTEGER REFERENCES trajectories(id),
    wall_ms        INTEGER,
    PRIMARY KEY (probe_run_id, probe)
) STRICT, WITHOUT ROWID;
