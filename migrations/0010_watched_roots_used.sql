-- 0010_watched_roots_used: a watched root is forgotten once no one has used it for a while
-- (issue 36: every skill an editor opened stayed watched for good). `used_ms` is when a
-- client last asked for it, a file under it was saved, or an editor showed a skill under it;
-- existing roots count as used when they were added. Never edit once landed.

ALTER TABLE watched_roots ADD COLUMN used_ms INTEGER;
UPDATE watched_roots SET used_ms = added_ms;
