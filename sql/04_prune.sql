-- awa.prune on real traffic: noop, skipped_active while an entry is unclaimed,
-- pruned once everything in the slot is claimed or cancelled (one TRUNCATE, terminal
-- counts appended as deltas), already_pruned with no write, and the carry-forward of
-- what is still live in the claim and lease rings. Starts from a fresh install.
\i sql/fresh.inc
-- turn a ring n times, pruning after each rotation as the worker does
CREATE FUNCTION pg_temp.turn(p_ring text, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    i int;
    r record;
    p record;
    log text := '';
BEGIN
    FOR i IN 1 .. n LOOP
        SELECT * INTO r FROM awa.rotate('awa', p_ring);
        SELECT * INTO p FROM awa.prune('awa', p_ring);
        log := log || left(r.outcome, 3) || '/' || p.outcome
               || coalesce('(' || p.reason || ')', '') || ' ';
    END LOOP;
    RETURN log;
END $$;
-- the token (run_lease) a claim drew for a job's attempt, closed or not, while its
-- receipt is in the claim ring
CREATE FUNCTION pg_temp.lease(p_job bigint, p_attempt int DEFAULT 1) RETURNS bigint
LANGUAGE sql AS $$
    SELECT max(run_lease) FROM awa.lease_claims WHERE job_id = p_job AND attempt = p_attempt
$$;

-- the oldest sealed slot is derived from the cursor: none at generation 0, the slot
-- after the cursor once the ring is full
SELECT s, g, o.* FROM (VALUES (0, 0), (1, 1), (3, 3), (7, 7), (0, 8), (5, 21)) v(s, g)
  LEFT JOIN LATERAL awa_internal.ring_oldest_sealed(s, g, 8) o ON true;
SELECT * FROM awa.prune('awa', 'queue');
SELECT sqlstate_of($$SELECT * FROM awa.prune('awa', 'nosuch')$$);
SELECT sqlstate_of($$SELECT * FROM awa.prune('other', 'queue')$$);

-- three jobs in slot 0; the ring turns; slot 0 holds unclaimed work
SELECT awa.enqueue('q', 'a') AS a, awa.enqueue('q', 'b') AS b, awa.enqueue('q', 'c') AS c;
SELECT outcome FROM awa.rotate('awa', 'queue');
CREATE TEMP TABLE fn AS SELECT 'before' AS at, pg_relation_filenode('awa.ready_entries_0') AS filenode;
SELECT * FROM awa.prune('awa', 'queue');
-- claiming two is not enough; cancelling the third is
SELECT job_id, run_lease >= 2^62 AS token, attempt FROM awa.claim('q', 2);
SELECT * FROM awa.prune('awa', 'queue');
SELECT awa.cancel(3);
SELECT * FROM awa.prune('awa', 'queue');
INSERT INTO fn SELECT 'after prune', pg_relation_filenode('awa.ready_entries_0');
SELECT count(*) AS ready_rows_left FROM awa.ready_entries;

-- pruning the same empty slot again: already_pruned, no xid, no new relfilenode
BEGIN;
SELECT * FROM awa.prune('awa', 'queue');
SELECT pg_current_xact_id_if_assigned() IS NULL AS wrote_nothing;
COMMIT;
INSERT INTO fn SELECT 'after second prune', pg_relation_filenode('awa.ready_entries_0');
SELECT at, filenode = lag(filenode) OVER (ORDER BY ord) AS same_as_previous
  FROM (SELECT *, row_number() OVER () AS ord FROM fn) f;

-- the claimed jobs still run (their receipts carry them): one completes, one fails and
-- is retried later; each closure lands in its receipt's claim slot (0), and the
-- completion's closure is its outcome (0.9 writes no done entry)
SELECT pg_temp.lease(2) AS stale_lease \gset
SELECT awa.heartbeat(1, pg_temp.lease(1), '{"step": 1}') AS hb,
       awa.complete(1, pg_temp.lease(1)) AS done,
       awa.fail(2, pg_temp.lease(2), 'gave up', NULL) AS retried;
SELECT claim_slot, job_id, awa_internal.closure_outcome(outcome_code, outcome) AS outcome,
       awa_internal.closure_state(outcome_code, state) AS state
  FROM awa.lease_claim_closures ORDER BY job_id;
SELECT count(*) AS done_entries FROM awa.done_entries WHERE run_lease > 0;
SELECT * FROM awa.queue_counts('q');
-- turn the claim ring a whole wrap: slot 0 (the outcomes) is pruned, the completion
-- counted into the deltas, and the counts do not move
SELECT pg_temp.turn('claim', 8);
SELECT queue, priority, pruned_completed_delta, pruned_failed_delta
  FROM awa.queue_terminal_rollup_deltas ORDER BY queue, priority;
SELECT count(*) AS rollup_rows FROM awa.queue_terminal_rollups;   -- prune never upserts
SELECT * FROM awa.queue_counts('q');

-- claim ring: job 2 was retried (deferred by backoff); make it due and claim it; its
-- receipt is open while the claim ring turns past its slot: carried forward, never lost
UPDATE awa.deferred_jobs SET run_at = now() - interval '1 s';
SELECT * FROM awa.promote_deferred('awa');
SELECT job_id, run_lease >= 2^62 AS token, attempt FROM awa.claim('q');
SELECT * FROM awa.ring_cursor('claim');
SELECT pg_temp.lease(2, 2) AS live_lease \gset
SELECT awa.heartbeat(2, :live_lease) AS hb;
SELECT pg_temp.turn('claim', 10);
SELECT pg_temp.turn('lease', 10);
SELECT claim_slot, job_id, attempt, run_lease = :live_lease AS live FROM awa.lease_claims ORDER BY claim_generation;
SELECT lease_slot, job_id, run_lease = :live_lease AS live FROM awa.leases;
SELECT * FROM awa.ring_cursor('claim');
-- the carried attempt is still the live one: it completes, and a stale lease is refused
SELECT awa.complete(2, :stale_lease) AS stale, awa.complete(2, 2) AS attempt_number,
       awa.complete(2, :live_lease) AS done;
SELECT * FROM awa.queue_counts('q');
-- closed now: the next turns drop it and the claim and lease rings fall idle
SELECT pg_temp.turn('claim', 10);
SELECT pg_temp.turn('lease', 10);
SELECT count(*) AS receipts, (SELECT count(*) FROM awa.leases) AS heartbeats FROM awa.lease_claims;

-- the status view counts the sealed slots that still hold rows
SELECT ring, current_slot, generation, sealed_slots_awaiting_prune FROM awa.ring_status;

-- rotate and prune by hand need READ COMMITTED, as the API does: their proofs read the
-- ring in the statement's snapshot, and TRUNCATE is not MVCC-safe; an older snapshot
-- (REPEATABLE READ, SERIALIZABLE) is refused with 0A000 and nothing is done
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT sqlstate_of($$SELECT * FROM awa.prune('awa', 'queue')$$) AS prune_rr,
       sqlstate_of($$SELECT * FROM awa.rotate('awa', 'queue')$$) AS rotate_rr;
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT left(sqlstate_of($$SELECT * FROM awa.prune('awa', 'claim')$$), 5) AS prune_serializable;
ROLLBACK;
