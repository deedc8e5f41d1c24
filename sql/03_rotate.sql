-- awa.rotate: idle skip writes nothing, the busy check, the append, the CAS.
\i sql/fresh.inc
-- a fresh 0.7 install, as 01_objects makes and checks it
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.7';

-- an idle ring: skipped_idle, and the transaction has written nothing (no xid at all);
-- prune of a ring at generation 0 has nothing sealed: noop
BEGIN;
SELECT * FROM awa.prune('awa', 'queue');
SELECT * FROM awa.rotate('awa', 'queue');
SELECT * FROM awa.rotate('awa', 'lease');
SELECT * FROM awa.rotate('awa', 'claim');
SELECT pg_current_xact_id_if_assigned() IS NULL AS wrote_nothing;
COMMIT;
SELECT count(*) AS queue_ledger_rows FROM awa.queue_ring_rotations;

-- bad arguments
SELECT sqlstate_of($$SELECT * FROM awa.rotate('awa', 'nosuch')$$);
SELECT sqlstate_of($$SELECT * FROM awa.rotate('public', 'queue')$$);
SELECT sqlstate_of($$SELECT * FROM awa.rotate(NULL, 'queue')$$);

-- work in the current slot: the ring is busy, the next slot empty -> rotated, one
-- ledger row appended and nothing else written
INSERT INTO awa.ready_entries (ready_slot, ready_generation, lane_id, lane_seq, job_id,
                               queue, priority, kind, args, attempt, max_attempts, created_at)
    VALUES (0, 0, 1, 1, 1, 'q', 0, 'k', '{}', 1, 25, now());
BEGIN;
SELECT * FROM awa.rotate('awa', 'queue');
SELECT pg_current_xact_id_if_assigned() IS NOT NULL AS wrote;
COMMIT;
SELECT generation, slot FROM awa.queue_ring_rotations ORDER BY generation;
SELECT * FROM awa.ring_cursor('queue');
SELECT current_slot, generation FROM awa.queue_ring_state;   -- compat columns untouched

-- the next slot (2) holds a row of any family: skipped_busy, blocker = that family
INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease, lane_id,
                              lane_seq, queue, priority, kind, state, created_at)
    VALUES (2, 2, 99, 1, 1, 99, 'q', 0, 'k', 'completed', now());
SELECT * FROM awa.rotate('awa', 'queue');
INSERT INTO awa.ready_entries (ready_slot, ready_generation, lane_id, lane_seq, job_id,
                               queue, priority, kind, args, attempt, max_attempts, created_at)
    VALUES (2, 2, 1, 99, 99, 'q', 0, 'k', '{}', 1, 25, now());
SELECT * FROM awa.rotate('awa', 'queue');
SELECT * FROM awa.ring_cursor('queue');
TRUNCATE awa.ready_entries_2, awa.done_entries_2;
SELECT * FROM awa.rotate('awa', 'queue');

-- the CAS: appending one generation twice inserts one row, then none (lost_cas)
SELECT awa.ring_append('lease', 'ledger', 1, 1, 8) AS first_append,
       awa.ring_append('lease', 'ledger', 1, 1, 8) AS second_append;
SELECT generation, slot FROM awa.lease_ring_rotations ORDER BY generation;

-- a wrap of the claim ring: rotate and prune alternate; rotation never enters a slot
-- that still holds rows, and every slot is emptied before it is reused
CREATE TEMP TABLE wrap_log AS SELECT 0 AS step, NULL::text AS rotate, NULL::text AS prune,
    0 AS slot, 0::bigint AS generation WHERE false;
DO $$
DECLARE
    i int;
    c record;
    r record;
    p record;
BEGIN
    FOR i IN 1 .. 20 LOOP
        SELECT * INTO c FROM awa.ring_cursor('claim');
        INSERT INTO awa.lease_claims (claim_slot, claim_generation, job_id, run_lease,
                                      lane_id, lane_seq, ready_slot, ready_generation,
                                      queue, priority, kind, args, max_attempts, created_at)
            VALUES (c.slot, c.generation, 1000 + i, 1, 1000 + i, 1, 0, 0, 'q', 0, 'k', '{}',
                    25, now());
        INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, job_id,
                                              run_lease, outcome)
            VALUES (c.slot, c.generation, 1000 + i, 1, 'completed');
        SELECT * INTO r FROM awa.rotate('awa', 'claim');
        SELECT * INTO p FROM awa.prune('awa', 'claim');
        INSERT INTO wrap_log VALUES (i, r.outcome || coalesce('/' || r.blocker, ''),
                                     p.outcome, p.slot, p.generation);
    END LOOP;
END $$;
SELECT * FROM wrap_log ORDER BY step;
SELECT * FROM awa.ring_cursor('claim');
SELECT count(*) AS claims_left, min(claim_generation) AS oldest_generation_left
  FROM awa.lease_claims;
