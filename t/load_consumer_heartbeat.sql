-- a consumer that waits for work, heartbeats the attempt it took once, then completes it
-- (the lease ring's traffic), logged through bench.finish; t/016_crash.pl and
-- t/020_pinned_horizon.pl
SELECT coalesce(max(job_id), 0) AS job_id, coalesce(max(run_lease), 0) AS run_lease
  FROM awa.claim('bench', 1, wait => '1 s') \gset
SELECT awa.heartbeat(:job_id, :run_lease) WHERE :job_id <> 0;
SELECT bench.finish(:job_id, :run_lease);
