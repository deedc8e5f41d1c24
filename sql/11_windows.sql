-- The 0.9 data plane (docs/storage.md Part A): an enqueue takes no lock and creates
-- nothing; claims follow snapshot windows; a bounded number of queues; cancel, counts
-- and prune (proofs and the carry-forward of lane positions) on windows; the upgrade
-- from 0.8 keeps every queued, deferred and running job.
\i sql/fresh.inc
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.9';

-- 0. One size per ring wherever it is kept: awa.ring_slot_count (what SQL code reads),
-- the ring's ring_state row and slot rows, the children of each of its families, and
-- the slots its ledger accepts (C's AWA_QUEUE_SLOTS and AWA_CLAIM_SLOTS are what the
-- claims and enqueues below use).
SELECT s.ring, awa.ring_slot_count(s.ring) AS slots,
       s.state_count = awa.ring_slot_count(s.ring) AS state_agrees,
       s.slot_rows = awa.ring_slot_count(s.ring) AS slot_rows_agree,
       (SELECT bool_and(c.n = awa.ring_slot_count(s.ring))
          FROM (SELECT count(i.inhrelid) AS n FROM unnest(awa.ring_families(s.ring)) f
                  LEFT JOIN pg_inherits i ON i.inhparent = ('awa.' || f)::regclass
                 GROUP BY f) c) AS children_agree,
       EXISTS (SELECT 1 FROM pg_constraint c
                WHERE c.conrelid = format('awa.%I', s.ring || '_ring_rotations')::regclass
                  AND pg_get_constraintdef(c.oid)
                      LIKE format('%%(slot < %s)%%', awa.ring_slot_count(s.ring))) AS ledger_agrees
  FROM (SELECT 'queue' AS ring, (SELECT slot_count FROM awa.queue_ring_state) AS state_count,
               (SELECT count(*) FROM awa.queue_ring_slots) AS slot_rows
        UNION ALL SELECT 'lease', (SELECT slot_count FROM awa.lease_ring_state),
               (SELECT count(*) FROM awa.lease_ring_slots)
        UNION ALL SELECT 'claim', (SELECT slot_count FROM awa.claim_ring_state),
               (SELECT count(*) FROM awa.claim_ring_slots)) s;

-- 1. An enqueue creates nothing and holds no lock but the child it wrote.
SELECT count(*) AS relations FROM pg_class WHERE relnamespace = 'awa'::regnamespace \gset
BEGIN;
SELECT awa.enqueue('w', 'a') AS job_a \gset
SELECT awa.enqueue('w', 'b') AS job_b \gset
SELECT l.locktype, l.mode, c.relname
  FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid()
   AND (l.locktype IN ('advisory', 'userlock')
        OR (c.relnamespace = 'awa'::regnamespace AND c.relkind = 'r' AND c.relname ~ '_[0-9]+$'))
 ORDER BY 1, 2, 3;
-- not claimable by this transaction itself: its own entries belong to the first
-- window opened after it commits
SELECT count(*) AS own_claimed FROM awa.claim('w', 10);
COMMIT;
SELECT count(*) - :relations AS relations_created
  FROM pg_class WHERE relnamespace = 'awa'::regnamespace;

-- 2. Claim order: the rest of a window, then the next.
SELECT kind FROM awa.claim('w', 1);
SELECT awa.enqueue('w', 'c') > 0 AS enqueued;
SELECT kind FROM awa.claim('w', 10) ORDER BY job_id;
SELECT kind FROM awa.claim('w', 10);
SELECT count(*) AS windows_recorded FROM awa.lease_claims WHERE win_hi IS NOT NULL;
-- every receipt names its entry's transaction
SELECT count(*) FILTER (WHERE txid IS NULL) AS receipts_without_txid FROM awa.lease_claims;

-- 3. Cancel of an available entry, and of a claimed one (running).
SELECT awa.enqueue('w', 'd') AS job_d \gset
SELECT awa.cancel(:job_d) AS cancelled_available;
SELECT count(*) AS claimed_after_cancel FROM awa.claim('w', 10);
SELECT awa.cancel(:job_a) AS cancelled_running;
SELECT * FROM awa.queue_counts('w');

-- 4. awa_bgw.max_queues: a new queue beyond it is refused (54000), nothing written;
-- the queues already there go on. Only a superuser may set it.
SELECT count(DISTINCT queue) AS queues FROM awa.queue_lanes \gset
SELECT set_config('awa_bgw.max_queues', (:queues + 1)::text, false) AS max_queues;
SELECT awa.enqueue('w_second', 'x') > 0 AS second_queue;
SELECT sqlstate_of($$SELECT awa.enqueue('w_third', 'x')$$);
SELECT count(*) AS third_lanes FROM awa.queue_lanes WHERE queue = 'w_third';
SELECT awa.enqueue('w', 'e') > 0 AS known_queue, awa.enqueue('w_second', 'y') > 0 AS known_too;
RESET awa_bgw.max_queues;
SELECT awa.enqueue('w_third', 'x') > 0 AS third_after_reset;
-- one transaction registering several new queues counts each once (its own lanes, not
-- also its own reservations): three new queues fit under a limit three above the count
SELECT count(DISTINCT queue) AS queues FROM awa.queue_lanes \gset
BEGIN;
SELECT set_config('awa_bgw.max_queues', (:queues + 3)::text, true) AS max_queues;
SELECT awa.register_queue('w_many_' || i) FROM generate_series(1, 3) i;
SELECT sqlstate_of($$SELECT awa.register_queue('w_many_4')$$);
SELECT count(DISTINCT queue) - :queues AS new_queues FROM awa.queue_lanes;
COMMIT;
CREATE ROLE awa_test_gucs;
SET ROLE awa_test_gucs;
SELECT sqlstate_of($$SET awa_bgw.max_queues = 1000000$$);
RESET ROLE;
DROP ROLE awa_test_gucs;

-- 5. Prune on windows: a job runs while both rings wrap; the claim ring carries its
-- receipt and the lane's position forward; the waiting jobs are claimed once, the
-- running one never again; the queue slot holding unclaimed entries is not pruned.
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.9';
SELECT awa.enqueue('p', 'x' || i) FROM generate_series(1, 3) i;
SELECT job_id AS running, run_lease FROM awa.claim('p', 1, NULL) \gset
CREATE FUNCTION pg_temp.turn() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v text := '';
BEGIN
    v := v || (SELECT left(outcome, 1) FROM awa.rotate('awa', 'queue'))
           || (SELECT left(outcome, 1) FROM awa.rotate('awa', 'claim'))
           || (SELECT left(outcome, 1) FROM awa.rotate('awa', 'lease'));
    v := v || '/' || (SELECT left(outcome, 2) FROM awa.prune('awa', 'claim'))
           || (SELECT left(outcome, 2) FROM awa.prune('awa', 'lease'))
           || (SELECT left(outcome, 2) FROM awa.prune('awa', 'queue'));
    RETURN v;
END $$;
SELECT awa.heartbeat(:running, :run_lease) AS beat;
SELECT i, pg_temp.turn() FROM generate_series(1, 10) i;
SELECT (SELECT generation FROM awa.ring_cursor('claim')) >= 8 AS claim_ring_wrapped;
SELECT count(*) AS positions FROM awa.lease_claims WHERE win_hi IS NOT NULL;
SELECT kind FROM awa.claim('p', 10) ORDER BY job_id;
SELECT kind FROM awa.claim('p', 10);
SELECT awa.heartbeat(:running, :run_lease) AS beat, awa.complete(:running, :run_lease) AS done;
SELECT count(awa.complete(job_id, run_lease)) AS completed
  FROM awa.lease_claims WHERE kind IN ('x2', 'x3');
SELECT * FROM awa.queue_counts('p');
-- everything done: the rings prune empty, positions included, and a new job is
-- claimed from the lane's first window again
SELECT i, pg_temp.turn() FROM generate_series(1, 18) i;
SELECT count(*) AS ready, (SELECT count(*) FROM awa.lease_claims) AS receipts
  FROM awa.ready_entries;
SELECT awa.enqueue('p', 'later') > 0 AS enqueued;
SELECT kind FROM awa.claim('p', 10);
SELECT * FROM awa.queue_counts('p');

-- 6. 0.8 -> 0.9 with jobs in every state: available, running, completed, cancelled,
-- deferred, failed; nothing lost, nothing claimed twice, order kept.
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.8';
SELECT awa.enqueue('u', 'k' || i) FROM generate_series(1, 6) i;
SELECT awa.enqueue('u', 'scheduled', run_at => now() + interval '1 hour') > 0 AS deferred;
SELECT job_id, kind FROM awa.claim('u', 3) ORDER BY job_id;
SELECT awa.complete(1, 1) AS completed, awa.fail(3, 1, 'gave up') AS failed,
       awa.cancel(5) AS cancelled;
SELECT * FROM awa.queue_counts('u');
-- a database installed by a release whose API took run_lease int (here made by hand):
-- the upgrade gives the old forms' grants to the bigint forms and drops them
CREATE ROLE awa_test_old_app;
CREATE FUNCTION awa.complete(job_id bigint, run_lease int) RETURNS boolean
LANGUAGE sql AS 'SELECT false';
CREATE FUNCTION awa.heartbeat(job_id bigint, run_lease int, progress jsonb) RETURNS boolean
LANGUAGE sql AS 'SELECT false';
GRANT EXECUTE ON FUNCTION awa.complete(bigint, int), awa.heartbeat(bigint, int, jsonb)
    TO awa_test_old_app;
ALTER EXTENSION awa_bgw UPDATE TO '0.9';
SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw';
SELECT to_regprocedure('awa.complete(bigint, int)') AS old_complete,
       to_regprocedure('awa.heartbeat(bigint, int, jsonb)') AS old_heartbeat,
       has_function_privilege('awa_test_old_app', 'awa.complete(bigint, bigint)', 'EXECUTE')
           AS complete_granted,
       has_function_privilege('awa_test_old_app', 'awa.heartbeat(bigint, bigint, jsonb)',
                              'EXECUTE') AS heartbeat_granted,
       has_function_privilege('awa_test_old_app', 'awa.fail(bigint, bigint, text, interval)',
                              'EXECUTE') AS fail_not_granted;
DROP OWNED BY awa_test_old_app;
DROP ROLE awa_test_old_app;
-- receipts of attempts running across the upgrade keep their attempt number as token
SELECT job_id, run_lease, attempt FROM awa.lease_claims ORDER BY job_id;
SELECT * FROM awa.queue_counts('u');
SELECT count(*) AS head_sequences FROM pg_class
 WHERE relnamespace = 'awa'::regnamespace AND relname ~ '^lane_[0-9]+_head$';
-- 0.8 registered four shards per (queue, priority), 0.9 has eight: the upgrade adds
-- shards 4-7 and keeps the lanes of shards 0-3 (their entries stay where they were)
SELECT priority, count(*) AS lanes, count(DISTINCT shard) AS shards,
       count(*) FILTER (WHERE shard < 4 AND lane_id <= 4) AS old_lanes_kept
  FROM awa.queue_lanes WHERE queue = 'u' GROUP BY priority;
-- ensure_lanes registers the shards it does not see, not only a new (queue, priority)
-- (here three removed by hand from a queue with no jobs), and none twice
SELECT awa.ensure_lanes('u_shards', 0::smallint);
DELETE FROM awa.queue_lanes WHERE queue = 'u_shards' AND shard IN (2, 5, 7);
SELECT awa.ensure_lanes('u_shards', 0::smallint);
SELECT awa.ensure_lanes('u_shards', 0::smallint);
SELECT count(*) AS lanes, count(DISTINCT shard) AS shards
  FROM awa.queue_lanes WHERE queue = 'u_shards';
-- the retry of job 3 was enqueued under 0.8 with a backoff: due now
UPDATE awa.deferred_jobs SET run_at = now() WHERE job_id = 3;
SELECT promoted FROM awa.promote_deferred('awa');
SELECT job_id, kind, attempt, run_lease >= 2^62 AS token FROM awa.claim('u', 10) ORDER BY job_id;
SELECT count(*) AS claimed_again FROM awa.claim('u', 10);
SELECT awa.complete(2, 1) AS running_completes;
SELECT * FROM awa.queue_counts('u');
-- an outcome of either release is counted once: job 1's done entry (0.8, its closure
-- carries no state) and job 2's closure (0.9, no done entry); in the rings, and after
-- every slot holding them is pruned (docs/storage.md §A.15)
SELECT job_id, state, attempt FROM awa.terminal_jobs WHERE queue = 'u' ORDER BY job_id;
SELECT job_id, state FROM awa.lease_claim_closures WHERE job_id IN (1, 2) ORDER BY job_id;
SELECT count(awa.complete(c.job_id, c.run_lease)) AS completed_rest
  FROM awa.lease_claims c WHERE c.queue = 'u' AND c.attempt > 0
   AND NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures x
                    WHERE x.job_id = c.job_id AND x.run_lease = c.run_lease);
SELECT * FROM awa.queue_counts('u');
SELECT string_agg(t, ' ') AS turns FROM (SELECT pg_temp.turn() AS t
                                           FROM generate_series(1, 18)) x;
SELECT count(*) AS closures_left, (SELECT count(*) FROM awa.done_entries) AS done_left
  FROM awa.lease_claim_closures;
SELECT sum(pruned_completed_delta) AS completed_pruned, sum(pruned_failed_delta) AS failed_pruned
  FROM awa.queue_terminal_rollup_deltas WHERE queue = 'u';
SELECT * FROM awa.queue_counts('u');

-- 9. Only the receipt that carries its claim's window has an entry in the receipts'
-- (lane_id, claim_seq) index, the one lane positions are read on: a claim of five jobs
-- writes five receipts and one entry there. (Here after the upgrade from 0.8; a fresh
-- 0.9 builds the index from the same piece.) The sum runs over every claim child in one
-- transaction, whose ACCESS SHARE locks keep prune from truncating any in between.
CREATE EXTENSION IF NOT EXISTS pgstattuple;
CREATE FUNCTION pg_temp.position_entries() RETURNS bigint LANGUAGE sql AS $$
    SELECT sum((public.pgstattuple(i.inhrelid::regclass)).tuple_count)::bigint
      FROM pg_inherits i
      JOIN pg_index x ON x.indexrelid = i.inhparent
     WHERE x.indrelid = 'awa.lease_claims'::regclass
       AND pg_get_indexdef(x.indexrelid) LIKE '%(lane_id, claim_seq)%' $$;
SELECT count(*) AS enqueued
  FROM awa.enqueue_batch('posidx', '[{"kind": "a"}, {"kind": "b"}, {"kind": "c"},
                                     {"kind": "d"}, {"kind": "e"}]');
BEGIN;
SELECT pg_temp.position_entries() AS entries_before \gset
SELECT count(*) AS receipts_before FROM awa.lease_claims \gset
SELECT count(*) AS claimed FROM awa.claim('posidx', 5);
SELECT (SELECT count(*) FROM awa.lease_claims) - :receipts_before AS receipts_written,
       pg_temp.position_entries() - :entries_before AS position_entries_written;
COMMIT;
-- and the lane's position is found on it: the next claim takes the next jobs in order
SELECT count(*) AS enqueued
  FROM awa.enqueue_batch('posidx', '[{"kind": "f"}, {"kind": "g"}]');
SELECT kind FROM awa.claim('posidx', 5) ORDER BY job_id;
DROP EXTENSION pgstattuple;

-- 10. The hot paths write the rows of a call together (heap_multi_insert, 64 rows at a
-- time): 150 jobs enqueued, claimed and completed each in one call are all written, each
-- found by its indexes (job lookup reads ready and done entries by job id), and counted.
CREATE TEMP TABLE multi AS
SELECT job_id FROM awa.enqueue_batch('multi',
    (SELECT jsonb_agg(jsonb_build_object('kind', 'k', 'args', jsonb_build_object('i', i)))
       FROM generate_series(1, 150) i)) AS job_id;
SELECT count(*) AS available_found FROM multi m, awa.job(m.job_id) j WHERE j.state = 'available';
CREATE TEMP TABLE multi_claimed AS SELECT job_id, run_lease FROM awa.claim('multi', 1000);
SELECT count(*) AS claimed, count(DISTINCT job_id) AS distinct_jobs,
       count(*) FILTER (WHERE job_id IN (SELECT job_id FROM multi)) AS ours
  FROM multi_claimed;
SELECT count(*) AS running_found FROM multi m, awa.job(m.job_id) j WHERE j.state = 'running';
SELECT count(*) AS completed_now
  FROM awa.complete_batch((SELECT array_agg(job_id) FROM multi_claimed),
                          (SELECT array_agg(run_lease) FROM multi_claimed)) c;
SELECT count(*) AS completed_found FROM multi m, awa.job(m.job_id) j WHERE j.state = 'completed';
SELECT available, running, completed FROM awa.queue_counts('multi');

-- 11. Large payloads go through the same path, written a megabyte of rows at a time and
-- toasted: six jobs of ~480 kB each are enqueued, claimed and completed intact.
CREATE TEMP TABLE big_in AS
SELECT i, jsonb_build_object('blob', (SELECT string_agg(md5(i || '-' || j), '')
                                        FROM generate_series(1, 15000) j)) AS args
  FROM generate_series(1, 6) i;
CREATE TEMP TABLE big AS
SELECT e.job_id, b.args
  FROM awa.enqueue_batch('big', (SELECT jsonb_agg(jsonb_build_object('kind', 'big', 'args', args)
                                                  ORDER BY i) FROM big_in))
       WITH ORDINALITY AS e(job_id, ord)
  JOIN big_in b ON b.i = e.ord;
CREATE TEMP TABLE big_claimed AS SELECT job_id, run_lease, args FROM awa.claim('big', 10);
SELECT count(*) AS claimed, count(*) FILTER (WHERE c.args = b.args) AS intact,
       min(octet_length(c.args::text)) > 400000 AS large
  FROM big_claimed c JOIN big b USING (job_id);
SELECT count(*) AS completed
  FROM awa.complete_batch((SELECT array_agg(job_id) FROM big_claimed),
                          (SELECT array_agg(run_lease) FROM big_claimed));
SELECT available, running, completed FROM awa.queue_counts('big');
