-- awa.prune: noop, already_pruned (no write, no truncate), skipped_active, pruned
-- (one TRUNCATE of the slot's children, terminal counts appended as deltas).
CREATE FUNCTION pg_temp.sqlstate_of(p_sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE p_sql;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- the oldest sealed slot is derived from the cursor: none at generation 0, the slot
-- after the cursor once the ring is full
SELECT s, g, o.* FROM (VALUES (0, 0), (1, 1), (3, 3), (7, 7), (0, 8), (5, 21)) v(s, g)
  LEFT JOIN LATERAL awa.ring_oldest_sealed(s, g, 8) o ON true;
SELECT pg_temp.sqlstate_of($$SELECT * FROM awa.prune('awa', 'nosuch')$$);
SELECT pg_temp.sqlstate_of($$SELECT * FROM awa.prune('other', 'queue')$$);

-- queue ring: slot 0 is sealed (the cursor moved on in 03_rotate) and holds an open
-- job (a ready entry with no terminal outcome): skipped_active, nothing truncated
SELECT * FROM awa.ring_cursor('queue');
CREATE TEMP TABLE fn AS SELECT 'before' AS at, pg_relation_filenode('awa.ready_entries_0') AS filenode;
SELECT * FROM awa.prune('awa', 'queue');
SELECT count(*) AS ready_rows_in_slot_0 FROM awa.ready_entries_0;

-- close it (and add more terminal history): pruned, one TRUNCATE, deltas appended
INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease, queue,
                              priority, state) VALUES
    (0, 0, 1, 1, 'q', 0, 'completed'),
    (0, 0, 2, 1, 'q', 0, 'failed'),
    (0, 0, 3, 1, 'q', 3, 'completed'),
    (0, 0, 4, 1, 'other', 0, 'cancelled');
INSERT INTO awa.ready_entries (ready_slot, ready_generation, job_id, queue, priority, kind,
                               args, attempt, max_attempts, run_at) VALUES
    (0, 0, 2, 'q', 0, 'k', '{}', 1, 25, now()),
    (0, 0, 3, 'q', 3, 'k', '{}', 1, 25, now()),
    (0, 0, 4, 'other', 0, 'k', '{}', 1, 25, now());
SELECT * FROM awa.prune('awa', 'queue');
INSERT INTO fn SELECT 'after prune', pg_relation_filenode('awa.ready_entries_0');
SELECT count(*) AS ready_rows, (SELECT count(*) FROM awa.done_entries_0) AS done_rows
  FROM awa.ready_entries_0;
SELECT queue, priority, pruned_completed_delta, pruned_failed_delta
  FROM awa.queue_terminal_rollup_deltas ORDER BY queue, priority;
SELECT count(*) AS rollup_rows FROM awa.queue_terminal_rollups;   -- prune never upserts

-- pruning the same empty slot again: already_pruned, no xid, no new relfilenode
BEGIN;
SELECT * FROM awa.prune('awa', 'queue');
SELECT pg_current_xact_id_if_assigned() IS NULL AS wrote_nothing;
COMMIT;
INSERT INTO fn SELECT 'after second prune', pg_relation_filenode('awa.ready_entries_0');
SELECT at, filenode = lag(filenode) OVER (ORDER BY ord) AS same_as_previous
  FROM (SELECT *, row_number() OVER () AS ord FROM fn) f;
SELECT count(*) AS delta_rows FROM awa.queue_terminal_rollup_deltas;

-- lease ring: a heartbeat of an attempt with no closure is live; once the claim ring
-- holds its closure the slot can go
INSERT INTO awa.leases (lease_slot, lease_generation, job_id, run_lease) VALUES (0, 0, 7, 1);
SELECT outcome, blocker FROM awa.rotate('awa', 'lease');
SELECT * FROM awa.prune('awa', 'lease');
INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, job_id, run_lease, outcome)
    SELECT slot, generation, 7, 1, 'completed' FROM awa.ring_cursor('claim');
SELECT * FROM awa.prune('awa', 'lease');
SELECT count(*) AS lease_rows FROM awa.leases;

-- the status view counts the sealed slots that still hold rows
SELECT ring, current_slot, generation, ledger_rows, sealed_slots_awaiting_prune
  FROM awa.ring_status;
