-- wake cell: a claimer waiting up to 5 s; the time its claim returned is recorded
SELECT coalesce(max(job_id), 0) AS job_id, coalesce(max(run_lease), 0) AS run_lease,
       extract(epoch FROM clock_timestamp()) AS got_at
  FROM awa.claim('wake', 1, wait => '5 s') \gset
\if :job_id > 0
INSERT INTO bench.wake_got VALUES (:job_id, to_timestamp(:got_at));
SELECT awa.complete(:job_id, :run_lease);
\endif
