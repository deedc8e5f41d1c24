-- Terminal counts of pruned history: prune records a pruned slot's counts, counts
-- read them back (0.7: appended deltas plus the folded rollups).

-- Earlier builds recorded each ring through its own function; an upgrade drops them.
DROP FUNCTION IF EXISTS awa.queue_slot_record_terminal_counts(int);
DROP FUNCTION IF EXISTS awa.claim_slot_record_terminal_counts(int);

-- Prune appends the pruned slot's terminal counts (awa_internal.ring_slot_terminal_counts) to the
-- delta table (never upserts the rollups); the fold merges them later.
CREATE OR REPLACE FUNCTION awa_internal.ring_slot_record_terminal_counts(p_ring text, p_slot int)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH ins AS (
        INSERT INTO awa.queue_terminal_rollup_deltas
               (queue, priority, pruned_completed_delta, pruned_failed_delta)
        SELECT c.queue, c.priority, c.completed, c.failed
          FROM awa_internal.ring_slot_terminal_counts(p_ring, p_slot) c
        RETURNING 1)
    SELECT count(*) FROM ins
$$;

-- The terminal counts of a queue's pruned history: the folded rollups plus the deltas
-- not folded yet. STABLE: it reads in its caller's snapshot.
CREATE OR REPLACE FUNCTION awa_internal.queue_pruned_terminal_counts(p_queue text,
    OUT completed bigint, OUT failed bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(sum(t.c), 0)::bigint, coalesce(sum(t.f), 0)::bigint
      FROM (SELECT r.pruned_completed_count AS c, r.pruned_failed_count AS f
              FROM awa.queue_terminal_rollups r WHERE r.queue = p_queue
            UNION ALL
            SELECT x.pruned_completed_delta, x.pruned_failed_delta
              FROM awa.queue_terminal_rollup_deltas x WHERE x.queue = p_queue) t
$$;
