-- a consumer that heartbeats its attempt once before completing it (the lease ring's
-- traffic), logged through bench.finish
SELECT coalesce(max(job_id), 0) AS job_id, coalesce(max(run_lease), 0) AS run_lease
  FROM awa.claim('bench', 1) \gset
SELECT awa.heartbeat(:job_id, :run_lease) WHERE :job_id <> 0;
SELECT bench.finish(:job_id, :run_lease);
