-- t/020_pinned_horizon.pl: a waiting consumer that heartbeats the attempt it took
-- before completing it, so that the lease ring has traffic and turns too
SELECT coalesce(max(job_id), 0) AS job_id, coalesce(max(run_lease), 0) AS run_lease
  FROM awa.claim('bench', 1, wait => '1 s') \gset
SELECT awa.heartbeat(:job_id, :run_lease, '{"step": 1}');
SELECT bench.finish(:job_id, :run_lease);
