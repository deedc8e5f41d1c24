-- a consumer that waits for work instead of polling: the claim sleeps up to 1 s (its
-- own statement, holding no snapshot), commits, then the job is completed
SELECT coalesce(max(job_id), 0) AS job_id, coalesce(max(run_lease), 0) AS run_lease
  FROM awa.claim('bench', 1, wait => '1 s') \gset
SELECT bench.finish(:job_id, :run_lease);
