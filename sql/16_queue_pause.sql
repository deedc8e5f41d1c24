-- Pause and resume per queue: a paused queue accepts enqueues, its claims take
-- nothing (a waiting claim goes on waiting), other queues go on; resume gives the jobs
-- back to claims. Needs the manage privilege on the queue (15_queue_grants).
\i sql/fresh.inc
SET statement_timeout = '20s';

SELECT awa.enqueue('pq', 'first') > 0 AS enqueued;
SELECT awa.enqueue('other', 'elsewhere') > 0 AS enqueued;
SELECT awa.pause_queue('pq') AS paused;
SELECT awa.pause_queue('pq') AS paused_again;
SELECT queue, paused, paused_at IS NOT NULL AS since, paused_by, restricted
  FROM awa.queue_settings ORDER BY queue;
-- enqueues go on; claims take nothing, with or without a wait; other queues go on
SELECT awa.enqueue('pq', 'second') > 0 AS enqueued_while_paused;
SELECT count(*) AS batch_while_paused FROM awa.enqueue_batch('pq', '[{"kind": "third"}]');
SELECT count(*) AS claimed FROM awa.claim('pq', 10);
SELECT count(*) AS claimed FROM awa.claim('pq', 10, wait => '50 ms');
SELECT kind FROM awa.claim('other');
SELECT available, running FROM awa.queue_counts('pq');
SELECT count(*) AS claims_written FROM awa.lease_claims WHERE queue = 'pq';
-- a pause rolled back never happened; one made inside a transaction holds at once
SELECT awa.resume_queue('pq') AS resumed;
SELECT awa.resume_queue('pq') AS resumed_again;
BEGIN;
SELECT awa.pause_queue('pq') AS paused_in_xact;
SELECT count(*) AS claimed_in_xact FROM awa.claim('pq', 10);
ROLLBACK;
SELECT queue, paused FROM awa.queue_settings WHERE queue = 'pq';
SELECT kind FROM awa.claim('pq', 10) ORDER BY kind;
SELECT available, running FROM awa.queue_counts('pq');

-- bad input: 22004 / 22023 with a hint, nothing written
\set VERBOSITY default
SELECT awa.pause_queue(NULL);
SELECT awa.resume_queue(repeat('q', 201));
\set VERBOSITY terse
SELECT count(*) AS pauses FROM awa.queue_pauses;

-- a role needs EXECUTE, and on a queue with grants the manage privilege
CREATE ROLE awa_pq_app;
CREATE ROLE awa_pq_other;
GRANT USAGE ON SCHEMA awa TO awa_pq_app;
SET ROLE awa_pq_app;
SELECT sqlstate_of($$SELECT awa.pause_queue('pq')$$);
RESET ROLE;
GRANT EXECUTE ON FUNCTION awa.pause_queue(text), awa.resume_queue(text) TO awa_pq_app;
SET ROLE awa_pq_app;
SELECT awa.pause_queue('pq') AS app_paused_open_queue;
RESET ROLE;
SELECT awa.grant_queue('pq', 'awa_pq_other', '{manage}');
SET ROLE awa_pq_app;
SELECT sqlstate_of($$SELECT awa.resume_queue('pq')$$);
RESET ROLE;
SELECT awa.grant_queue('pq', 'awa_pq_app', '{manage}');
SET ROLE awa_pq_app;
SELECT awa.resume_queue('pq') AS app_resumed_with_manage;
RESET ROLE;
SELECT count(*) AS pauses FROM awa.queue_pauses;
-- a pause survives pg_dump (its table is dumped); grants are not
SELECT c.relname, x.cond IS NOT NULL AS dumped
  FROM unnest(ARRAY['queue_pauses', 'queue_privileges']) c(relname)
  LEFT JOIN (SELECT unnest(e.extconfig)::regclass::text AS rel, 1 AS cond
               FROM pg_extension e WHERE e.extname = 'awa_bgw') x
    ON x.rel = 'awa.' || c.relname
 ORDER BY 1;
DROP OWNED BY awa_pq_app;
SELECT awa.revoke_queue('pq', 'awa_pq_other');
DROP ROLE awa_pq_app, awa_pq_other;
SELECT awa.forget_dropped_queue_grantees() AS forgotten;
