-- 0009_probe_jobs: the daemon's job queue runs probe suites too (`skillwatch probe` through the
-- daemon, issue 22). A probe job records into a probe run, not a paired run, so it gets its own
-- reference; `jobs.run_id` stays the paired run's. Which kind a job is lives in its request
-- (`RunRequest.kind`, JSON), so no other column changes. Never edit once landed.

ALTER TABLE jobs ADD COLUMN probe_run_id INTEGER REFERENCES probe_runs(id);
