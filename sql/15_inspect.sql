-- Looking jobs up and replaying them: awa.job through every state, awa.jobs and its
-- filters, bulk cancel, retry and purge of failed jobs, bad input, privileges, and what
-- is left of a job once the rings are pruned.
\i sql/fresh.inc
-- the token a claim drew for a job's attempt
CREATE FUNCTION pg_temp.lease(p_job bigint, p_attempt int DEFAULT 1) RETURNS bigint
LANGUAGE sql AS $$
    SELECT max(run_lease) FROM awa.lease_claims WHERE job_id = p_job AND attempt = p_attempt
$$;
-- awa.job without what changes from run to run (tokens and clock times)
CREATE FUNCTION pg_temp.show(p_job bigint)
RETURNS TABLE (job_id bigint, queue text, kind text, args jsonb, prio smallint, state text,
               attempt int, max int, lease text, last_error text, created boolean,
               run_at text, attempted boolean, finished boolean, progress jsonb)
LANGUAGE sql AS $$
    SELECT j.job_id, j.queue, j.kind, j.args, j.priority, j.state, j.attempt,
           j.max_attempts,
           CASE WHEN j.run_lease IS NULL THEN NULL
                WHEN j.run_lease = pg_temp.lease(j.job_id, j.attempt) THEN 'its token'
                ELSE 'WRONG' END,
           j.last_error, j.created_at IS NOT NULL,
           CASE WHEN j.run_at IS NULL THEN NULL WHEN j.run_at > now() THEN 'later'
                ELSE 'due' END,
           j.attempted_at IS NOT NULL, j.finished_at IS NOT NULL, j.progress
      FROM awa.job(p_job) j
$$;
-- the turns of a ring, each followed by a prune (as the worker does)
CREATE FUNCTION pg_temp.turn(p_ring text, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    i int;
    p record;
    log text := '';
BEGIN
    FOR i IN 1 .. n LOOP
        PERFORM awa.rotate('awa', p_ring);
        SELECT * INTO p FROM awa.prune('awa', p_ring);
        log := log || left(p.outcome, 1);
    END LOOP;
    RETURN log;
END $$;
\pset null '∅'
-- the fresh read of a job's state in C (src/dataplane/jobstate.c: a unique enqueue at
-- REPEATABLE READ and SERIALIZABLE reads its candidates' states so, docs/storage.md
-- A.18) against job_state, the SQL it stands for, on every job id drawn so far: the
-- states seen, and each job whose two answers differ
CREATE FUNCTION pg_temp.state_check(OUT state text, OUT jobs bigint, OUT mismatched bigint)
RETURNS SETOF record LANGUAGE sql AS $$
    SELECT coalesce(s.sql_state, 'none'), count(*),
           count(*) FILTER (WHERE s.sql_state IS DISTINCT FROM s.c_state)
      FROM (SELECT awa_internal.job_state(i) AS sql_state, awa_internal.job_state_now(i) AS c_state
              FROM generate_series(1, (SELECT last_value FROM awa.job_id_seq)) i) s
     GROUP BY 1 ORDER BY 1
$$;

-- one job through every state
SELECT awa.enqueue('mail', 'send', '{"to": 1}', max_attempts => 2) AS j1 \gset
SELECT * FROM pg_temp.show(:j1);                                        -- available
SELECT awa.enqueue('mail', 'send', '{"to": 2}', 3::smallint,
                   now() + interval '1 hour') AS j2 \gset
SELECT * FROM pg_temp.show(:j2);                                        -- scheduled
SELECT job_id FROM awa.claim('mail');
SELECT * FROM pg_temp.show(:j1);                                        -- running
SELECT awa.heartbeat(:j1, pg_temp.lease(:j1), '{"pct": 40}');
SELECT awa.heartbeat(:j1, pg_temp.lease(:j1), '{"pct": 60}');
SELECT * FROM pg_temp.show(:j1);                                        -- newest progress
SELECT awa.fail(:j1, pg_temp.lease(:j1), 'smtp down', '1 hour');
SELECT * FROM pg_temp.show(:j1);                                        -- retryable
SELECT * FROM pg_temp.state_check();                                    -- and scheduled
UPDATE awa.deferred_jobs SET run_at = now() WHERE job_id = :j1;
SELECT * FROM awa.promote_deferred('awa');
SELECT * FROM pg_temp.show(:j1);                                        -- available, attempt 2
SELECT job_id, attempt FROM awa.claim('mail');
SELECT * FROM pg_temp.show(:j1);                                        -- running, attempt 2
SELECT awa.fail(:j1, pg_temp.lease(:j1, 2), 'smtp still down');
SELECT * FROM pg_temp.show(:j1);                                        -- failed
SELECT awa.retry_failed(:j1) = :j1 AS same_id;
SELECT count(*) AS failed_rows FROM awa.failed_jobs WHERE job_id = :j1;
SELECT * FROM pg_temp.show(:j1);                                        -- available, attempt 3
SELECT awa.retry_failed(:j1) AS again;                                  -- not failed: NULL
SELECT job_id, attempt, max_attempts FROM awa.claim('mail');            -- claimable
SELECT awa.complete(:j1, pg_temp.lease(:j1, 3));
SELECT * FROM pg_temp.show(:j1);                                        -- completed
SELECT awa.cancel(:j2) AS cancelled_scheduled;
SELECT * FROM pg_temp.show(:j2);                                        -- cancelled
SELECT awa.enqueue('mail', 'send') AS j3 \gset
SELECT awa.cancel(:j3) AS cancelled_available;
SELECT * FROM pg_temp.show(:j3);
SELECT job_id FROM awa.claim('mail');                                   -- nothing left
SELECT awa.enqueue('mail', 'send') AS j4 \gset
SELECT job_id FROM awa.claim('mail');
SELECT awa.cancel(:j4) AS cancelled_running;
SELECT * FROM pg_temp.show(:j4);
SELECT awa.complete(:j4, pg_temp.lease(:j4)) AS late_complete;
-- retry_in 0: the retry goes straight back into the ring
SELECT awa.enqueue('mail', 'send') AS j5 \gset
SELECT job_id FROM awa.claim('mail');
SELECT awa.fail(:j5, pg_temp.lease(:j5), 'at once', '0 s');
SELECT job_id, state, attempt FROM awa.job(:j5);
-- no such job: no row
SELECT count(*) AS no_row FROM awa.job(1000000);
SELECT * FROM pg_temp.state_check();

-- the listing: newest first, filtered, limited
SELECT job_id, queue, kind, state, attempt FROM awa.jobs();
SELECT job_id, state FROM awa.jobs('mail', 'cancelled');
SELECT job_id, state FROM awa.jobs(state => 'available');
SELECT job_id, state FROM awa.jobs(state => 'completed', kind => 'send');
SELECT job_id FROM awa.jobs('mail', lim => 2);
SELECT count(*) AS other_kind FROM awa.jobs(kind => 'other');
SELECT count(*) AS other_queue FROM awa.jobs('nosuch');

-- bulk cancel: scheduled, available and running jobs of a queue, of a kind
SELECT awa.enqueue('bulk', 'a') AS a1, awa.enqueue('bulk', 'a') AS a2,
       awa.enqueue('bulk', 'b') AS b1,
       awa.enqueue('bulk', 'a', run_at => now() + interval '1 day') AS a3,
       awa.enqueue('bulk', 'b', run_at => now() + interval '1 day') AS b2 \gset
SELECT awa.enqueue('other', 'a') AS o1 \gset
SELECT job_id FROM awa.claim('bulk');                                   -- a1 runs
SELECT awa.cancel_queue('bulk', 'a') AS cancelled_a;
SELECT job_id, kind, state FROM awa.jobs('bulk');
SELECT awa.complete(:a1, pg_temp.lease(:a1)) AS a1_late_complete;
SELECT * FROM awa.queue_counts('bulk');
SELECT awa.cancel_queue('bulk') AS cancelled_rest, awa.cancel_queue('bulk') AS nothing_left;
SELECT job_id, state FROM awa.jobs('bulk');
SELECT count(*) AS claimable FROM awa.claim('bulk', 10);
SELECT state FROM awa.job(:o1);                                         -- other queue untouched

-- bulk retry and purge of failed jobs
SELECT awa.enqueue('replay', 'x', max_attempts => 1) AS x1,
       awa.enqueue('replay', 'x', max_attempts => 1) AS x2,
       awa.enqueue('replay', 'y', max_attempts => 1) AS y1 \gset
SELECT count(*) FROM (SELECT awa.fail(job_id, run_lease, 'no') FROM awa.claim('replay', 3)) f;
SELECT job_id, state, attempt FROM awa.jobs('replay', 'failed');
SELECT awa.retry_failed_queue('replay', since => now() + interval '1 hour') AS none_since;
SELECT awa.retry_failed_queue('replay', 'x') AS retried_x, awa.retry_failed_queue('replay', 'x') AS again;
SELECT job_id, kind, state, attempt, max_attempts FROM awa.jobs('replay');
SELECT job_id, attempt FROM awa.claim('replay', 10);
SELECT awa.purge_failed('replay', before => now() - interval '1 hour') AS none_before,
       awa.purge_failed('other') AS none_other;
SELECT awa.purge_failed('replay') AS purged, awa.purge_failed('replay') AS again;
SELECT count(*) AS failed_rows FROM awa.failed_jobs;
-- purged from failed_jobs, the job is still failed while its done entry is in the ring
SELECT job_id, state, attempt FROM awa.job(:y1);
SELECT * FROM pg_temp.state_check();

-- bad input: an error with a SQLSTATE (and a hint), nothing written
SELECT sqlstate_of($$SELECT * FROM awa.job(NULL)$$);
SELECT sqlstate_of($$SELECT * FROM awa.job(0)$$);
SELECT sqlstate_of($$SELECT * FROM awa.jobs(state => 'done')$$);
SELECT sqlstate_of($$SELECT * FROM awa.jobs(lim => 0)$$);
SELECT sqlstate_of($$SELECT * FROM awa.jobs(lim => 1001)$$);
SELECT sqlstate_of($$SELECT * FROM awa.jobs(lim => NULL)$$);
SELECT sqlstate_of($$SELECT * FROM awa.jobs('')$$);
SELECT sqlstate_of($$SELECT * FROM awa.jobs(kind => repeat('k', 201))$$);
SELECT sqlstate_of($$SELECT awa.retry_failed(-1)$$);
SELECT sqlstate_of($$SELECT awa.retry_failed(NULL)$$);
SELECT sqlstate_of($$SELECT awa.retry_failed_queue(NULL)$$);
SELECT sqlstate_of($$SELECT awa.retry_failed_queue('replay', '')$$);
SELECT sqlstate_of($$SELECT awa.retry_failed_queue('replay', since => 'infinity')$$);
SELECT sqlstate_of($$SELECT awa.purge_failed('')$$);
SELECT sqlstate_of($$SELECT awa.purge_failed(before => NULL)$$);
SELECT sqlstate_of($$SELECT awa.cancel_queue(NULL)$$);
SELECT sqlstate_of($$SELECT awa.cancel_queue('bulk', '')$$);
SELECT * FROM awa.jobs(state => 'done');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM awa.jobs(lim => 5000);
\echo :LAST_ERROR_SQLSTATE
-- a driver's untyped parameter still names a job: awa.cancel($1) is awa.cancel(bigint)
PREPARE one_cancel AS SELECT awa.cancel($1);
PREPARE one_retry AS SELECT awa.retry_failed($1);
SELECT name, parameter_types FROM pg_prepared_statements ORDER BY 1;
DEALLOCATE ALL;
-- the ring-writing ones need READ COMMITTED, as enqueue does
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sqlstate_of($$SELECT awa.retry_failed_queue('replay')$$);
SELECT sqlstate_of($$SELECT awa.cancel_queue('bulk')$$);
COMMIT;
BEGIN;
SELECT sqlstate_of($$SELECT awa.cancel_queue('bulk', '')$$);
SELECT sqlstate_of($$SELECT awa.retry_failed_queue('replay', since => 'infinity')$$);
SELECT pg_current_xact_id_if_assigned() IS NULL AS wrote_nothing;
COMMIT;

-- privileges: awa.job is application API, the rest is for operators; none is PUBLIC's
SELECT p.oid::regprocedure AS function, has_function_privilege('public', p.oid, 'EXECUTE')
       AS public_may_run
  FROM pg_proc p
 WHERE p.pronamespace IN ('awa'::regnamespace, 'awa_internal'::regnamespace)
   AND p.proname IN ('job', 'jobs', 'retry_failed', 'retry_failed_queue', 'purge_failed',
                     'cancel', 'cancel_queue', 'job_records', 'job_in_snapshot',
                     'requeue_failed')
 ORDER BY p.oid::regprocedure::text COLLATE "C";
CREATE ROLE awa_inspect_app LOGIN;
GRANT USAGE ON SCHEMA awa TO awa_inspect_app;
GRANT EXECUTE ON FUNCTION awa.job(bigint) TO awa_inspect_app;
SET ROLE awa_inspect_app;
SELECT job_id, state FROM awa.job(:j1);
SELECT sqlstate_of($$SELECT * FROM awa.jobs()$$);
SELECT sqlstate_of($$SELECT awa.cancel_queue('bulk')$$);
SELECT sqlstate_of($$SELECT awa.retry_failed_queue('replay')$$);
SELECT sqlstate_of($$SELECT awa.purge_failed()$$);
RESET ROLE;
DROP OWNED BY awa_inspect_app;
DROP ROLE awa_inspect_app;

-- pruned history: a completed job is known from its receipt's closure while the claim
-- ring holds it, after its done entry is pruned with the queue ring; then not at all
SELECT q.queue, (SELECT count(*) FROM awa.claim(q.queue, 10) c
                   WHERE awa.complete(c.job_id, c.run_lease)) AS completed
  FROM (VALUES ('mail'), ('other')) q(queue);
SELECT count(*) FROM (SELECT awa.complete(job_id, pg_temp.lease(job_id, 2))
                        FROM awa.jobs('replay', 'running')) c;
SELECT state, count(*) FROM awa.jobs() GROUP BY 1 ORDER BY 1;          -- nothing unfinished
SELECT job_id, state, attempt FROM awa.job(:j1);
SELECT pg_temp.turn('queue', 16);
SELECT count(*) AS ready_left FROM awa.ready_entries;
-- from the closure; the args went with the queue ring (a receipt has none since 0.10,
-- docs/storage.md A.20)
SELECT job_id, state, attempt, args FROM awa.job(:j1);
SELECT job_id, state FROM awa.jobs(state => 'completed');              -- from receipts
SELECT pg_temp.turn('claim', 8), pg_temp.turn('lease', 8);
SELECT count(*) AS no_row FROM awa.job(:j1);
-- a failed job outlives the rings in failed_jobs
SELECT awa.enqueue('late', 'z', max_attempts => 1) AS z1 \gset
SELECT count(*) FROM (SELECT awa.fail(job_id, run_lease, 'kept') FROM awa.claim('late')) f;
SELECT pg_temp.turn('queue', 16), pg_temp.turn('claim', 8);
SELECT job_id, state, attempt, last_error, args FROM awa.job(:z1);
-- a completed job's receipt pruned before its ready entry (the claim ring turning
-- faster than the queue ring): the entry is claimed, and tells no state; the job has
-- no row, and is not shown as available (docs/storage.md A.15)
SELECT awa.enqueue('early', 'a') AS ea \gset
SELECT count(*) FROM (SELECT awa.complete(job_id, run_lease) FROM awa.claim('early')) c;
SELECT pg_temp.turn('claim', 1);
SELECT awa.enqueue('early', 'b') AS eb \gset
SELECT count(*) FROM (SELECT awa.complete(job_id, run_lease) FROM awa.claim('early')) c;
SELECT pg_temp.turn('claim', 8);
SELECT count(*) AS a_entry_kept, (SELECT count(*) FROM awa.lease_claims WHERE job_id = :ea)
       AS a_receipts FROM awa.ready_entries WHERE job_id = :ea;
SELECT count(*) AS a_no_row FROM awa.job(:ea);
SELECT awa_internal.job_state(:ea) IS NULL AS a_no_state;
SELECT job_id = :eb AS is_b, state FROM awa.job(:eb);
SELECT available, completed FROM awa.queue_counts('early');
SELECT * FROM pg_temp.state_check();

-- bulk cancel gives back at once each lane it cancelled nothing in: of a queue's 8
-- lanes, only the one it cancelled in stays locked to commit (locktype userlock:
-- src/dataplane/privlock.c)
SELECT awa.enqueue('bulk2', 'a') IS NOT NULL AS enqueued;
BEGIN;
SELECT awa.cancel_queue('bulk2') AS cancelled;
SELECT count(DISTINCT lane_id) AS lanes FROM awa.queue_lanes WHERE queue = 'bulk2';
SELECT count(*) AS lane_locks_held FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'userlock' AND granted;
COMMIT;

-- awa.job and awa.cancel read a job's ready entries through ready_entries_of
-- (src/dataplane/readyof.c): at SERIALIZABLE with no predicate lock on a ready child or
-- its indexes, so that a job looked up never conflicts with the enqueues into its slot
SELECT awa.enqueue('siread', 'a', '{"n": 1}') AS sr \gset
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT state, args FROM awa.job(:sr);
SELECT count(*) AS ready_siread_locks FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND l.mode = 'SIReadLock'
   AND c.relname LIKE 'ready\_entries%';
SELECT count(*) > 0 AS other_siread_locks FROM pg_locks l
 WHERE l.pid = pg_backend_pid() AND l.mode = 'SIReadLock';
COMMIT;
SELECT awa.cancel(:sr) AS cancelled;
SELECT state FROM awa.job(:sr);
