-- Monitoring: awa.queue_stats on a known set of jobs (its counts are queue_counts'
-- counts, its window figures what the rings hold), the counters' views, and who may
-- read them: members of pg_monitor may, other roles may not; only a superuser resets.
\i sql/fresh.inc

-- queue mon_a: 7 jobs due, 1 later; 4 claimed (one with a deadline that passes, to be
-- rescued), 1 completed, 1 failed for good, 1 cancelled before any claim
SELECT awa.enqueue('mon_a', 'k', '{}', 0::smallint, now(), 1) AS a1 \gset
SELECT awa.enqueue('mon_a', 'k', '{}', 0::smallint, now(), 1) AS a2 \gset
SELECT awa.enqueue('mon_a', 'k') AS a3 \gset
SELECT awa.enqueue('mon_a', 'k') AS a4 \gset
SELECT awa.enqueue('mon_a', 'k') AS a5 \gset
SELECT awa.enqueue('mon_a', 'k') AS a6 \gset
SELECT awa.enqueue('mon_a', 'k') AS a7 \gset
SELECT awa.enqueue('mon_a', 'k', '{}', 0::smallint, now() + interval '1 hour') AS a8 \gset
SELECT count(*) AS claimed FROM awa.claim('mon_a', 3);
SELECT count(*) AS claimed_short FROM awa.claim('mon_a', 1, '1 ms');
SELECT pg_sleep(0.01);   -- past the 1 ms deadline (clock_timestamp moves on)
SELECT run_lease AS l1 FROM awa.lease_claims WHERE job_id = :a1 \gset
SELECT run_lease AS l2 FROM awa.lease_claims WHERE job_id = :a2 \gset
SELECT awa.complete(:a1, :l1) AS completed, awa.fail(:a2, :l2, 'boom') AS failed,
       awa.cancel(:a6) AS cancelled;
SELECT rescued, outcome FROM awa.rescue('awa');
-- queue mon_b: one job, untouched
SELECT awa.enqueue('mon_b', 'k') AS b1 \gset

SELECT queue, available, scheduled, running, completed_total, failed_total,
       claims_in_window, completed_per_minute > 0 AS completing,
       failed_per_minute > 0 AS failing, rescued_per_minute > 0 AS rescuing,
       rate_window > interval '0' AND rate_window <= interval '1 minute' AS window_ok,
       claim_latency_avg >= interval '0' AND claim_latency_max >= claim_latency_avg
           AS latency_ok
  FROM awa.queue_stats ORDER BY queue;
-- the same numbers as queue_counts
SELECT s.queue, (s.available, s.scheduled, s.running, s.completed_total, s.failed_total)
                = (c.available, c.scheduled, c.running, c.completed, c.failed) AS same
  FROM awa.queue_stats s CROSS JOIN LATERAL awa.queue_counts(s.queue) c ORDER BY 1;
-- the oldest available job: a5 (a3 and a4 were claimed first, a6 cancelled); its entry
-- may have enqueued_at NULL, read as created_at (0.10, tables/entry_fields.sql)
SELECT s.oldest_available_at = coalesce(r.enqueued_at, r.created_at) AS oldest_is_a5,
       s.oldest_available_age >= interval '0' AS age_ok
  FROM awa.queue_stats s, awa.ready_entries r
 WHERE s.queue = 'mon_a' AND r.job_id = :a5;
-- claims leave the available count, completions and failures enter the totals; once
-- the queue ring has turned, the terminal outcomes pruned into the rollups still count
SELECT count(*) AS claimed_rest FROM awa.claim('mon_a', 10);
SELECT queue, available, running, completed_total FROM awa.queue_stats ORDER BY queue;
SELECT count(*) AS claimed_b FROM awa.claim('mon_b', 10);
SELECT bool_and(awa.complete(c.job_id, c.run_lease)) AS all_completed
  FROM awa.lease_claims c
 WHERE NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures x
        WHERE x.job_id = c.job_id AND x.run_lease = c.run_lease);
SELECT outcome FROM awa.rotate('awa', 'queue');
SELECT outcome, reason FROM awa.prune('awa', 'queue');
SELECT count(*) AS done_left FROM awa.done_entries;
SELECT queue, available, running, completed_total, failed_total FROM awa.queue_stats
 ORDER BY queue;
-- the window is bounded
SELECT sqlstate_of($$SELECT * FROM awa.queue_stats_rows('0 s')$$);
SELECT sqlstate_of($$SELECT * FROM awa.queue_stats_rows('2 days')$$);

-- no worker runs in these tests: no database has counters yet, and a reset says so
SELECT count(*) AS databases FROM awa.worker_stats;
SELECT count(*) AS ring_rows FROM awa.worker_ring_stats;
SELECT awa.stats_reset() AS reset;

-- a member of pg_monitor reads every status view
CREATE ROLE awa_test_monitor;
GRANT pg_monitor TO awa_test_monitor;
CREATE ROLE awa_test_plain;
SET ROLE awa_test_monitor;
SELECT queue, available, running, completed_total FROM awa.queue_stats ORDER BY queue;
SELECT ring, current_slot, slot_count FROM awa.ring_status;
SELECT count(*) AS workers FROM awa.maintenance_status;
SELECT count(*) AS databases FROM awa.worker_stats;
SELECT count(*) AS ring_rows FROM awa.worker_ring_stats;
-- and sees every session (pg_read_all_stats): no "cannot see" gate row
SELECT count(*) FILTER (WHERE kind = 'gate') AS gate_rows FROM awa.horizon_pins;
-- but not the jobs, nor the reset
SELECT sqlstate_of($$SELECT count(*) FROM awa.ready_entries$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.terminal_jobs$$);
SELECT sqlstate_of($$SELECT awa.stats_reset()$$);
SELECT sqlstate_of($$SELECT * FROM awa_internal.queue_stats_in_snapshot('1 minute')$$);
RESET ROLE;
-- a role that is not a member reads none of them
SET ROLE awa_test_plain;
SELECT sqlstate_of($$SELECT * FROM awa.queue_stats$$);
SELECT sqlstate_of($$SELECT * FROM awa.ring_status$$);
SELECT sqlstate_of($$SELECT * FROM awa.maintenance_status$$);
SELECT sqlstate_of($$SELECT * FROM awa.worker_stats$$);
SELECT sqlstate_of($$SELECT * FROM awa.worker_ring_stats$$);
SELECT sqlstate_of($$SELECT * FROM awa.horizon_pins$$);
SELECT sqlstate_of($$SELECT awa.stats_reset()$$);
RESET ROLE;
-- with USAGE on the schema, still none of them
GRANT USAGE ON SCHEMA awa TO awa_test_plain;
SET ROLE awa_test_plain;
SELECT sqlstate_of($$SELECT * FROM awa.queue_stats$$);
SELECT sqlstate_of($$SELECT * FROM awa_internal.ring_status_rows()$$);
SELECT sqlstate_of($$SELECT * FROM awa.worker_stats$$);
SELECT sqlstate_of($$SELECT awa.stats_reset()$$);
RESET ROLE;
REVOKE USAGE ON SCHEMA awa FROM awa_test_plain;
DROP ROLE awa_test_monitor;
DROP ROLE awa_test_plain;
