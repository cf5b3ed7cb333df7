-- 0011_failed_runs: a run whose trials errored with no case attempt scored on both sides
-- measured nothing; it is `failed`, not `completed` (issue 36: such runs read "completed" in
-- `history` and counted among completed runs). Runs finished from now on are stored so
-- (store::write::finish_run, the same rule); this applies it to those stored before.
-- Never edit once landed.

UPDATE runs SET status = 'failed'
WHERE status = 'completed'
  AND EXISTS (SELECT 1 FROM trials t WHERE t.run_id = runs.id AND t.status = 'error')
  AND NOT EXISTS (
      SELECT 1 FROM trials b JOIN trials s
        ON s.run_id = b.run_id AND s.case_id = b.case_id
       AND s.attempt = b.attempt AND s.condition = 'skill'
      WHERE b.run_id = runs.id AND b.condition = 'baseline'
        AND b.status != 'error' AND s.status != 'error');
