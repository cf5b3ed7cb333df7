-- 0005_trial_stderr: what a trial's agent said on stderr, and how often the trial was retried.
-- Never edit once landed; add 0006_... instead.
--
-- The trial's scratch folder (with the agent's stderr file) is deleted after the trial, so an
-- error message that pointed at the file pointed at nothing: the end of stderr is kept in the
-- row instead (`skillwatch show`). `retries` counts retries of the trial into a fresh
-- workspace, so a report read back from the history says what the run itself saw.

ALTER TABLE trials ADD COLUMN stderr_tail TEXT;
ALTER TABLE trials ADD COLUMN retries INTEGER CHECK (retries >= 0);
