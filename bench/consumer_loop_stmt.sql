-- a consumer's loop as one statement and one commit per job (awa.complete_and_claim):
-- complete the job this client holds (:j, :l, kept by pgbench from its last call; 0 at
-- first, pgbench -D j=0 -D l=0) and claim the next. A client left holding a job at the
-- end of the run leaves it running (the cell counts completions)
SELECT coalesce(max(job_id), 0) AS j, coalesce(max(run_lease), 0) AS l
  FROM awa.complete_and_claim(CASE WHEN :j = 0 THEN NULL ELSE ARRAY[:j]::bigint[] END,
                              CASE WHEN :j = 0 THEN NULL ELSE ARRAY[:l]::bigint[] END,
                              'bench', 1) \gset
