-- The job API: happy paths, ordering, stale leases, retries, cancel, bad input.
\i sql/fresh.inc
-- the token (run_lease) a claim drew for a job's attempt, closed or not, while its
-- receipt is in the claim ring
CREATE FUNCTION pg_temp.lease(p_job bigint, p_attempt int DEFAULT 1) RETURNS bigint
LANGUAGE sql AS $$
    SELECT max(run_lease) FROM awa.lease_claims WHERE job_id = p_job AND attempt = p_attempt
$$;

-- priority 0 first, FIFO within a priority
SELECT awa.enqueue('mail', 'send', '{"n": 1}', 5) AS p5_first;
SELECT awa.enqueue('mail', 'send', '{"n": 2}') AS p0_first;
SELECT awa.enqueue('mail', 'send', '{"n": 3}', priority => 5) AS p5_second;
SELECT awa.enqueue('mail', 'send', '{"n": 4}') AS p0_second;
SELECT * FROM awa.queue_counts('mail');
SELECT job_id, run_lease >= 2^62 AS token, queue, kind, args, priority, attempt, max_attempts,
       deadline_at - claimed_at AS deadline
  FROM awa.claim('mail', 3);
SELECT job_id, args, deadline_at FROM awa.claim('mail', 5, NULL);   -- no deadline
SELECT count(*) AS nothing_left FROM awa.claim('mail', 5);

-- an idle claim writes nothing
BEGIN;
SELECT count(*) FROM awa.claim('mail');
SELECT count(*) FROM awa.claim('no such queue');
SELECT pg_current_xact_id_if_assigned() IS NULL AS wrote_nothing;
COMMIT;

-- every attempt has its own token, 62 random bits
SELECT count(DISTINCT run_lease) AS tokens, bool_and(run_lease >= 2^62) AS all_high
  FROM awa.lease_claims;
-- complete once; a second complete, or one with the wrong lease (another attempt's
-- token, the attempt number, a neighbour of the token), changes nothing
SELECT awa.complete(2, pg_temp.lease(2)) AS first, awa.complete(2, pg_temp.lease(2)) AS again,
       awa.complete(4, pg_temp.lease(1)) AS other_token, awa.complete(4, 1) AS attempt_number,
       awa.complete(4, pg_temp.lease(4) + 1) AS neighbour;
SELECT job_id, run_lease = pg_temp.lease(job_id) AS its_token
  FROM awa.complete_batch(ARRAY[4, 1, 3, 2, 3],
                          ARRAY[pg_temp.lease(4), pg_temp.lease(1), pg_temp.lease(3),
                                pg_temp.lease(2), 1]) ORDER BY job_id;
SELECT * FROM awa.queue_counts('mail');

-- fail: retried with backoff until max_attempts, then failed_jobs
SELECT awa.enqueue('retry', 'flaky', max_attempts => 2) AS flaky;
SELECT job_id, attempt FROM awa.claim('retry');
SELECT awa.fail(5, 1, 'wrong token') AS wrong_token;
SELECT pg_temp.lease(5) AS first_lease \gset
BEGIN;
SELECT awa.fail(5, :first_lease, 'first try failed') AS failed_once;
SELECT job_id, attempt, max_attempts, last_error, run_at - now() AS backoff
  FROM awa.deferred_jobs;
COMMIT;
SELECT * FROM awa.queue_counts('retry');
SELECT awa.fail(5, :first_lease, 'late stale call') AS stale;     -- that attempt is closed
UPDATE awa.deferred_jobs SET run_at = now();
SELECT * FROM awa.promote_deferred('awa');
SELECT job_id, attempt FROM awa.claim('retry');
SELECT awa.heartbeat(5, 2, '{"pct": 50}') AS wrong_token_hb,
       awa.heartbeat(5, :first_lease, '{"pct": 50}') AS stale_hb;
SELECT count(*) AS heartbeats FROM awa.leases;
SELECT awa.heartbeat(5, pg_temp.lease(5, 2), '{"pct": 50}') AS hb;
SELECT awa.fail(5, pg_temp.lease(5, 2), 'second try failed', '0 s') AS failed_twice;
SELECT job_id, queue, kind, attempts, max_attempts, error FROM awa.failed_jobs;
SELECT * FROM awa.queue_counts('retry');
SELECT job_id, state, attempt, error FROM awa.terminal_jobs WHERE queue = 'retry';
-- retry_in = 0 makes the retry claimable at once
SELECT awa.enqueue('retry', 'again') AS again;
SELECT job_id, attempt FROM awa.claim('retry');
SELECT awa.fail(6, pg_temp.lease(6), 'once more', '0 s');
SELECT job_id, attempt FROM awa.claim('retry');
SELECT awa.complete(6, pg_temp.lease(6, 2));

-- cancel: scheduled, available, running, finished, unknown
SELECT awa.enqueue('c', 'later', run_at => now() + interval '1 hour') AS scheduled,
       awa.enqueue('c', 'ready') AS available,
       awa.enqueue('c', 'run') AS running;
SELECT job_id FROM awa.claim('c') WHERE false;   -- claims nothing: max_batch 1 below
SELECT job_id FROM awa.claim('c', 1);            -- takes job 8 (FIFO)
SELECT awa.cancel(7) AS scheduled, awa.cancel(9) AS available, awa.cancel(8) AS running,
       awa.cancel(8) AS again, awa.cancel(6) AS finished, awa.cancel(12345) AS unknown;
SELECT count(*) AS claimable FROM awa.claim('c', 10);
SELECT awa.complete(8, pg_temp.lease(8)) AS after_cancel;
SELECT * FROM awa.queue_counts('c');
SELECT job_id, state FROM awa.terminal_jobs WHERE queue = 'c' ORDER BY job_id;

-- enqueue_batch: one round trip, ids in input order, mixed priorities and schedules
SELECT * FROM awa.enqueue_batch('b', '[{"kind": "x", "args": {"i": 1}},
                                      {"kind": "x", "priority": 1},
                                      {"kind": "x", "run_at": "2999-01-01"},
                                      {"kind": "y", "max_attempts": 3}]');
SELECT job_id, kind, priority, attempt, max_attempts FROM awa.claim('b', 10);
SELECT * FROM awa.queue_counts('b');

-- enqueue_batch reads each element as e->>'key' does: a missing key or a JSON null takes
-- the default, a number or a boolean is read from its text, a number may come as a
-- string; the ids come back in input order, one after another
WITH ids AS (
    SELECT id, row_number() OVER () AS n
      FROM awa.enqueue_batch('b2', '[{"kind": "x", "priority": null, "args": {"a": [1, {"b": 2}]}},
                                     {"kind": "y", "priority": "2", "max_attempts": "7"},
                                     {"kind": 5, "max_attempts": null},
                                     {"kind": true, "run_at": null}]') AS id)
SELECT count(*) AS jobs, max(id) - min(id) = count(*) - 1 AS consecutive,
       bool_and(id - n = (SELECT min(id) FROM ids) - 1) AS in_input_order
  FROM ids;
SELECT kind, priority, max_attempts, args FROM awa.claim('b2', 10) ORDER BY job_id;
-- an empty array enqueues nothing; in a select list it is a set of ids as well
SELECT count(*) AS none FROM awa.enqueue_batch('b2', '[]');
SELECT awa.enqueue_batch('b3', '[{"kind": "x"}, {"kind": "y"}]') > 0 AS listed;
SELECT count(*) AS b3_claimed FROM awa.claim('b3', 10);
-- each bad element is refused with the error the cast or the check gives, nothing written
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('b4', '5')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('b4', NULL)$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('b4', '[1, {"kind": "x"}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('b4', '[{"kind": "x", "args": null}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('b4', '[{"kind": "x", "priority": "high"}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('b4', '[{"kind": "x", "priority": 1.5}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('b4', '[{"kind": "x", "run_at": "soon"}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('b4', '[{"kind": "x"}, {"kind": "x", "max_attempts": 0}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('b4',
    (SELECT jsonb_agg(jsonb_build_object('kind', 'k')) FROM generate_series(1, 10001)))$$);
SELECT * FROM awa.enqueue_batch('b4', '[{"kind": "x"}, {"kind": "x", "args": []}]');
SELECT count(*) AS b4_nothing_written FROM awa.claim('b4', 10);

-- transactional: a rolled-back enqueue leaves no job
BEGIN;
SELECT awa.enqueue('tx', 'gone') IS NOT NULL AS enqueued;
ROLLBACK;
SELECT * FROM awa.queue_counts('tx');
SELECT count(*) FROM awa.claim('tx');

-- bad input: a clear error, nothing written
SELECT sqlstate_of($$SELECT awa.enqueue('', 'k')$$);
SELECT sqlstate_of($$SELECT awa.enqueue(NULL, 'k')$$);
SELECT sqlstate_of($$SELECT awa.enqueue(repeat('q', 201), 'k')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('q', '')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('q', 'k', '[1, 2]')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('q', 'k', NULL)$$);
SELECT sqlstate_of($$SELECT awa.enqueue('q', 'k', '{}', 10)$$);
SELECT sqlstate_of($$SELECT awa.enqueue('q', 'k', '{}', -1)$$);
SELECT sqlstate_of($$SELECT awa.enqueue('q', 'k', '{}', priority => 70000)$$);
SELECT sqlstate_of($$SELECT awa.enqueue('q', 'k', '{}', 0, 'infinity')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('q', 'k', max_attempts => 0)$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('q', '{"kind": "x"}')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('q', '[{"kind": "x"}, {"args": {}}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('q', '[{"kind": "x", "priority": 99}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('q', '[{"kind": "x", "priority": 70000}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('q', 0)$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('q', 1000000)$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('q', 1, '-1 s')$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('')$$);
SELECT sqlstate_of($$SELECT awa.fail(1, 1, 'x', '-5 s')$$);
SELECT sqlstate_of($$SELECT * FROM awa.complete_batch(ARRAY[1, 2], ARRAY[1])$$);
SELECT sqlstate_of($$SELECT * FROM awa.queue_counts('')$$);
SELECT count(*) AS jobs_in_q FROM awa.ready_entries WHERE queue = 'q';
SELECT count(*) AS lanes_of_q FROM awa.queue_lanes WHERE queue = 'q';
-- the error text names the problem and the hint says what is allowed
SELECT awa.enqueue('q', 'k', '{}', 10);
SELECT awa.enqueue('q', 'k', '{}', priority => 70000);
SELECT * FROM awa.enqueue_batch('q', '[{"kind": "x", "priority": 70000}]');

-- arguments as a caller writes them: an integer priority by position or by name (or a
-- smallint, as before 0.10), and an untyped literal for every parameter
SELECT awa.enqueue('natural', 'a', '{}', 3) > 0 AS by_position,
       awa.enqueue('natural', 'b', priority => 4) > 0 AS by_name,
       awa.enqueue('natural', 'c', priority => 2::smallint) > 0 AS smallint,
       awa.enqueue('natural', 'd', '{"x": 1}', '1', '2000-01-01 00:00+00', '3', 'key-d',
                   '1 hour', '{available,running}') > 0 AS literals;
SELECT awa.register_queue('natural-registered', 7);
SELECT priority, count(*) FROM awa.queue_lanes WHERE queue = 'natural-registered'
 GROUP BY priority;
SELECT sqlstate_of($$SELECT awa.register_queue('natural-registered', 12)$$);
SELECT kind, priority, max_attempts FROM awa.claim('natural', 10) ORDER BY priority, kind;
SELECT count(*) AS smallint_forms FROM pg_proc
 WHERE pronamespace = 'awa'::regnamespace AND proname IN ('enqueue', 'register_queue', 'schedule')
   AND 'int2'::regtype = ANY (proargtypes::regtype[]);
-- an enqueue works at every isolation level (docs/storage.md A.18): the entries go to the
-- ring's current slot, whatever the transaction's snapshot says (specs/enqueue_isolation
-- turns the ring under it), and are claimed after the commit (the entries' slot: they
-- carry no generation since 0.10, tables/entry_fields.sql; the ring does not turn here)
SELECT awa.register_queue('iso');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) AS snapshot_taken FROM awa.queue_lanes WHERE queue = 'iso';
SELECT awa.enqueue('iso', 'rr') > 0 AS rr_enqueued,
       (SELECT count(*) FROM awa.enqueue_batch('iso', '[{"kind": "rr-batch"}, {"kind": "rr-later",
                                                   "run_at": "2100-01-01"}]')) AS rr_batch;
COMMIT;
SELECT e.kind, e.ready_slot = c.slot AS in_current_slot
  FROM awa.ready_entries e, awa.ring_cursor('queue') c WHERE e.queue = 'iso' ORDER BY e.kind;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT awa.enqueue('iso', 'ser') > 0 AS ser_enqueued;
-- no predicate lock on the queue's tables: a serializable application's enqueue adds no
-- edge that its own INSERT would not
SELECT count(*) AS sireads_in_awa FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND l.mode = 'SIReadLock'
   AND c.relnamespace = 'awa'::regnamespace;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT awa.enqueue('iso', 'rolled back') > 0 AS enqueued;
ROLLBACK;
SELECT kind, attempt FROM awa.claim('iso', 10) ORDER BY kind;
SELECT * FROM awa.queue_counts('iso');
-- the first enqueue of a queue, or of a new priority, registers its lanes at every level
-- too, with no predicate lock; and awa.register_queue
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT awa.enqueue('iso-new', 'k') > 0 AS new_queue, awa.enqueue('iso', 'k', priority => 3) > 0 AS new_priority;
SELECT count(*) AS sireads_in_awa FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND l.mode = 'SIReadLock'
   AND c.relnamespace = 'awa'::regnamespace;
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT awa.register_queue('iso-registered', 2);
COMMIT;
SELECT queue, priority, count(*) AS lanes FROM awa.queue_lanes
 WHERE queue IN ('iso', 'iso-new', 'iso-registered') GROUP BY queue, priority ORDER BY 1, 2;
SELECT kind, priority FROM awa.claim('iso-new') UNION ALL
SELECT kind, priority FROM awa.claim('iso', 10);
-- a unique enqueue works at REPEATABLE READ and SERIALIZABLE (specs/unique_jobs); at
-- SERIALIZABLE its reads of the key's rows and of its jobs' states take no predicate
-- lock (docs/storage.md A.18); a claim needs READ COMMITTED: the refusal names the
-- level and says what to do, and writes nothing
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT awa.enqueue('iso', 'u', unique_key => 'k') = awa.enqueue('iso', 'u', unique_key => 'k')
       AS same_job;
COMMIT;
SELECT max(job_id) AS k_job FROM awa.unique_keys WHERE unique_key = 'k' \gset
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT awa.enqueue('iso', 'u', unique_key => 'k') = :k_job AS same_job,
       awa.enqueue('iso', 'u', unique_key => 'k', unique_states => ARRAY['failed']) > :k_job
       AS new_job_when_not_in_states,
       awa.enqueue('iso', 'u', unique_key => 'k2') > :k_job AS new_key;
SELECT count(*) AS sireads_in_awa FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND l.mode = 'SIReadLock'
   AND c.relnamespace IN ('awa'::regnamespace, 'awa_internal'::regnamespace);
ROLLBACK;
SELECT count(*) AS keys_after_rollback FROM awa.unique_keys WHERE unique_key IN ('k', 'k2');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sqlstate_of($$SELECT * FROM awa.claim('iso')$$);
SELECT pg_current_xact_id_if_assigned() IS NULL AS wrote_nothing;
ROLLBACK;

-- complete_batch finds receipts in any claim slot, ignores duplicates and unknown pairs
SELECT awa.enqueue('batch', 'a') AS a, awa.enqueue('batch', 'b') AS b;
SELECT job_id FROM awa.claim('batch', 1);
SELECT outcome, slot FROM awa.rotate('awa', 'claim');
SELECT job_id FROM awa.claim('batch', 1);
SELECT claim_slot, job_id FROM awa.lease_claims WHERE queue = 'batch' ORDER BY job_id;
SELECT job_id, run_lease = pg_temp.lease(job_id) AS its_token FROM awa.complete_batch(
    (SELECT array_agg(job_id ORDER BY job_id) || ARRAY[424242::bigint, min(job_id)]
       FROM awa.lease_claims WHERE queue = 'batch'),
    (SELECT array_agg(run_lease ORDER BY job_id) || ARRAY[1::bigint, min(run_lease)]
       FROM awa.lease_claims WHERE queue = 'batch'));
SELECT * FROM awa.queue_counts('batch');

-- fail with retry_in: the retry is deferred by exactly that
SELECT awa.enqueue('paced', 'paced') AS paced \gset
SELECT count(*) AS claimed FROM awa.claim('paced');
BEGIN;
SELECT awa.fail(:paced, pg_temp.lease(:paced), 'slow down', '90 s') AS paced_retry;
SELECT job_id = :paced AS paced, attempt, last_error, run_at - now() AS retry_in
  FROM awa.deferred_jobs WHERE queue = 'paced';
COMMIT;

-- the hot paths cache the OIDs of schema awa, its tables and their indexes per backend:
-- after DROP and CREATE EXTENSION in this same session, none of them is stale
SELECT awa.heartbeat(:paced, pg_temp.lease(:paced)) AS closed_hb;
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw;
SELECT awa.enqueue('fresh', 'k') AS fresh \gset
SELECT count(*) AS fresh_claimed FROM awa.claim('fresh');
SELECT awa.heartbeat(:fresh, pg_temp.lease(:fresh)) AS hb,
       awa.complete(:fresh, pg_temp.lease(:fresh)) AS completed;
SELECT * FROM awa.queue_counts('fresh');

-- the done children's (lane_id, lane_seq) index holds cancel tombstones only (partial,
-- run_lease = 0): the completion above wrote nothing into it (each child's index is its
-- metapage alone), a cancel of an available job writes one entry
CREATE TEMP VIEW tombstone_index_pages AS
SELECT count(*) AS children, sum(pg_relation_size(i.indexrelid) / 8192) AS pages,
       bool_and(pg_get_expr(i.indpred, i.indrelid) = '(run_lease = 0)') AS partial
  FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
 WHERE c.relnamespace = 'awa'::regnamespace AND c.relname LIKE 'done\_entries\_%'
   AND i.indkey::text = (SELECT string_agg(attnum::text, ' ' ORDER BY k.n)
                           FROM unnest(ARRAY['lane_id', 'lane_seq']) WITH ORDINALITY k(a, n)
                           JOIN pg_attribute ON attrelid = c.oid AND attname = k.a);
SELECT * FROM tombstone_index_pages;
SELECT awa.cancel(awa.enqueue('fresh', 'gone')) AS cancelled;
SELECT * FROM tombstone_index_pages;

-- Internal functions called by hand with bad input: a caller's mistake gets the SQLSTATE
-- of bad input and a hint, never an internal one (XX000-XX002). A bad ring or
-- authority is 22023, not corruption (XX001)
SELECT sqlstate_of($$SELECT awa_internal.ring_append('nosuch', 'ledger', 2, 2, 8)$$) AS unknown_ring,
       sqlstate_of($$SELECT awa_internal.ring_append('lease', 'columns', 2, 2, 8)$$) AS old_authority,
       sqlstate_of($$SELECT awa_internal.ring_append('lease', NULL, 2, 2, 8)$$) AS no_authority;
-- and an internal entry point called by hand with NULLs: 22004 with a hint, not XX000
SELECT sqlstate_of($$SELECT awa_internal.enqueue_ready('q', 0::smallint, NULL)$$) AS no_jobs,
       sqlstate_of($$SELECT awa_internal.enqueue_ready('q', 0::smallint, ARRAY[NULL]::awa.new_job[])$$)
         AS null_job;

-- The C hot paths write the ring children as an INSERT into them would: a CHECK that a
-- DBA adds to a family holds for an enqueue (23514, the constraint named, nothing
-- written), and a job that meets it goes in
ALTER TABLE awa.ready_entries ADD CONSTRAINT dba_no_forbidden CHECK (kind <> 'forbidden');
SELECT left(s, 5) AS sqlstate, s LIKE '%violates check constraint "dba_no_forbidden"%' AS names_it
  FROM (SELECT sqlstate_of($$SELECT awa.enqueue('dba_check', 'forbidden')$$) AS s) x;
SELECT left(s, 5) AS batch_sqlstate
  FROM (SELECT sqlstate_of($$SELECT awa.enqueue_batch('dba_check',
          '[{"kind": "fine"}, {"kind": "forbidden"}]')$$) AS s) x;
SELECT count(*) AS written FROM awa.ready_entries WHERE queue = 'dba_check';
SELECT awa.enqueue('dba_check', 'allowed') > 0 AS allowed;
SELECT count(*) AS written FROM awa.ready_entries WHERE queue = 'dba_check';
ALTER TABLE awa.ready_entries DROP CONSTRAINT dba_no_forbidden;
-- A backend keeps the plans of a child's checks (src/rel/inserter.c), but never one
-- made before the CHECKs changed: the enqueues above planned them, and a CHECK added
-- or changed since holds at the next enqueue. One that calls a user's function is
-- planned at each call, as for an INSERT, so a new body of the function holds at once
ALTER TABLE awa.ready_entries ADD CONSTRAINT dba_short_kind CHECK (length(kind) < 10);
SELECT left(sqlstate_of($$SELECT awa.enqueue('dba_check', 'a_long_kind_name')$$), 5) AS long_kind;
ALTER TABLE awa.ready_entries DROP CONSTRAINT dba_short_kind;
ALTER TABLE awa.ready_entries ADD CONSTRAINT dba_short_kind CHECK (length(kind) < 20);
SELECT awa.enqueue('dba_check', 'a_long_kind_name') > 0 AS long_kind_allowed;
ALTER TABLE awa.ready_entries DROP CONSTRAINT dba_short_kind;
CREATE FUNCTION public.dba_kind_ok(k text) RETURNS boolean
  LANGUAGE sql IMMUTABLE AS $$ SELECT k <> 'banned' $$;
ALTER TABLE awa.ready_entries ADD CONSTRAINT dba_kind_fn CHECK (public.dba_kind_ok(kind));
SELECT left(sqlstate_of($$SELECT awa.enqueue('dba_check', 'banned')$$), 5) AS banned;
CREATE OR REPLACE FUNCTION public.dba_kind_ok(k text) RETURNS boolean
  LANGUAGE sql IMMUTABLE AS $$ SELECT true $$;
SELECT awa.enqueue('dba_check', 'banned') > 0 AS banned_allowed_by_the_new_body;
ALTER TABLE awa.ready_entries DROP CONSTRAINT dba_kind_fn;
DROP FUNCTION public.dba_kind_ok(text);
SELECT count(*) AS written FROM awa.ready_entries WHERE queue = 'dba_check';

-- awa.complete_and_claim: a consumer's loop in one transaction per job. The first call
-- completes nothing and claims; each next one completes what it holds and claims the
-- next, in one call
SELECT count(awa.enqueue('loop', 'j' || i)) AS enqueued FROM generate_series(1, 4) i;
SELECT job_id AS j1, run_lease AS l1, kind FROM awa.complete_and_claim(NULL, NULL, 'loop') \gset
SELECT :'kind' AS first;
BEGIN;
SELECT kind, attempt, deadline_at - claimed_at AS deadline
  FROM awa.complete_and_claim(ARRAY[:j1], ARRAY[:l1], 'loop', 2, '1 minute');
SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS one_transaction;
COMMIT;
SELECT (SELECT state FROM awa.job(:j1)) AS j1_state, * FROM awa.queue_counts('loop');
-- a stale receipt completes nothing (no error), and the claim goes on
SELECT kind FROM awa.complete_and_claim(ARRAY[:j1], ARRAY[:l1], 'loop', 5);
SELECT * FROM awa.queue_counts('loop');
-- bad input: the pairs (22023), the queue (22023, 22004), max_batch and the deadline
-- (22023: the claim's own checks), each refused with nothing written; empty arrays
-- complete nothing
SELECT awa.enqueue('loop2', 'only') AS j4 \gset
SELECT job_id AS j4, run_lease AS l4 FROM awa.claim('loop2') \gset
SELECT sqlstate_of(format('SELECT * FROM awa.complete_and_claim(ARRAY[%s], ARRAY[]::bigint[], %L)',
                          :j4, 'loop2')) AS pairs,
       sqlstate_of(format('SELECT * FROM awa.complete_and_claim(ARRAY[%s], ARRAY[%s], %L)',
                          :j4, :l4, '')) AS empty_queue,
       sqlstate_of(format('SELECT * FROM awa.complete_and_claim(ARRAY[%s], ARRAY[%s], NULL)',
                          :j4, :l4)) AS null_queue,
       sqlstate_of(format('SELECT * FROM awa.complete_and_claim(ARRAY[%s], ARRAY[%s], %L, 0)',
                          :j4, :l4, 'loop2')) AS max_batch,
       sqlstate_of(format('SELECT * FROM awa.complete_and_claim(ARRAY[%s], ARRAY[%s], %L, 1, %L)',
                          :j4, :l4, 'loop2', '-1 s')) AS deadline;
SELECT state AS still_running FROM awa.job(:j4);
SELECT count(*) AS nothing_to_claim
  FROM awa.complete_and_claim(ARRAY[]::bigint[], ARRAY[]::bigint[], 'loop2');
-- not at REPEATABLE READ or SERIALIZABLE (the claim needs READ COMMITTED): refused by
-- name, nothing completed
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sqlstate_of(format('SELECT * FROM awa.complete_and_claim(ARRAY[%s], ARRAY[%s], %L)',
                          :j4, :l4, 'loop2')) AS repeatable_read;
COMMIT;
SELECT state AS still_running FROM awa.job(:j4);
SELECT count(*) AS claimed FROM awa.complete_and_claim(ARRAY[:j4], ARRAY[:l4], 'loop2');
-- awa.fail_and_claim: the same loop when the job failed. Job a (two attempts) fails and
-- is retried in an hour; the call claims job b of another queue in the same
-- transaction; b (one attempt) then fails for good, and there is nothing left to claim
SELECT awa.enqueue('floop', 'a', max_attempts => 2) AS fa \gset
SELECT awa.enqueue('floop2', 'b', max_attempts => 1) AS fb \gset
SELECT job_id AS fj, run_lease AS fl FROM awa.claim('floop') \gset
BEGIN;
SELECT job_id = :fb AS claimed_b, run_lease AS bl, attempt AS b_attempt
  FROM awa.fail_and_claim(:fj, :fl, 'boom', '1 hour', 'floop2') \gset
SELECT :'claimed_b' AS claimed_b, :'b_attempt' AS b_attempt;
SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS one_transaction;
COMMIT;
SELECT state, attempt, last_error, run_at > now() + interval '59 minutes' AS in_an_hour
  FROM awa.job(:fa);
SELECT count(*) AS claimed_after_b
  FROM awa.fail_and_claim(:fb, :bl, 'boom again', NULL, 'floop2');
SELECT state, attempt, last_error FROM awa.job(:fb);
-- a stale attempt fails nothing (no error), and the claim goes on; bad input refused
-- with nothing written: a negative retry_in (22023), the queue (22023), and at
-- REPEATABLE READ (the claim needs READ COMMITTED)
SELECT count(*) AS stale FROM awa.fail_and_claim(:fj, :fl, 'late', NULL, 'floop');
SELECT awa.enqueue('floop3', 'c') AS fc \gset
SELECT job_id AS cj, run_lease AS cl FROM awa.claim('floop3') \gset
SELECT sqlstate_of(format('SELECT * FROM awa.fail_and_claim(%s, %s, %L, %L, %L)',
                          :cj, :cl, 'x', '-1 s', 'floop3')) AS negative_retry,
       sqlstate_of(format('SELECT * FROM awa.fail_and_claim(%s, %s, %L, NULL, %L)',
                          :cj, :cl, 'x', '')) AS empty_queue;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sqlstate_of(format('SELECT * FROM awa.fail_and_claim(%s, %s, %L, NULL, %L)',
                          :cj, :cl, 'x', 'floop3')) AS repeatable_read;
COMMIT;
SELECT state AS still_running FROM awa.job(:cj);
SELECT count(*) AS claimed FROM awa.complete_and_claim(ARRAY[:cj], ARRAY[:cl], 'floop3');
SELECT state AS c_state FROM awa.job(:cj);
SELECT state AS completed FROM awa.job(:j4);

-- a rescue with no receipt due takes no lock and writes nothing (0.10: an idle ring
-- costs it no WAL); with one due, it takes the claim ring's serializer and rescues it
BEGIN;
SELECT rescued, outcome FROM awa.rescue('awa');
SELECT pg_current_xact_id_if_assigned() IS NULL AS wrote_nothing;
COMMIT;
SELECT awa.enqueue('rescued', 'late') AS late \gset
SELECT count(*) AS claimed FROM awa.claim('rescued', 1, '1 ms');
SELECT pg_sleep(0.01);   -- past the 1 ms deadline
BEGIN;
SELECT rescued, outcome FROM awa.rescue('awa');
SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS wrote;
COMMIT;
SELECT state, attempt FROM awa.job(:late);
