-- 0.6: prune upserts a pruned slot's terminal counts straight into the rollups (0.7
-- appends deltas instead, so that prune never updates a row).

-- Earlier builds recorded each ring through its own function; an upgrade drops them.
DROP FUNCTION IF EXISTS awa.queue_slot_record_terminal_counts(int);
DROP FUNCTION IF EXISTS awa.claim_slot_record_terminal_counts(int);

CREATE OR REPLACE FUNCTION awa.ring_slot_record_terminal_counts(p_ring text, p_slot int)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH ups AS (
        INSERT INTO awa.queue_terminal_rollups AS r
               (queue, priority, pruned_completed_count, pruned_failed_count)
        SELECT c.queue, c.priority, c.completed, c.failed
          FROM awa.ring_slot_terminal_counts(p_ring, p_slot) c
        ON CONFLICT (queue, priority) DO UPDATE
           SET pruned_completed_count = r.pruned_completed_count
                                        + EXCLUDED.pruned_completed_count,
               pruned_failed_count = r.pruned_failed_count + EXCLUDED.pruned_failed_count
        RETURNING 1)
    SELECT count(*) FROM ups
$$;

CREATE OR REPLACE FUNCTION awa.queue_pruned_terminal_counts(p_queue text,
    OUT completed bigint, OUT failed bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(sum(r.pruned_completed_count), 0)::bigint,
           coalesce(sum(r.pruned_failed_count), 0)::bigint
      FROM awa.queue_terminal_rollups r WHERE r.queue = p_queue
$$;
