-- Claim prune records terminal outcomes (0.9, docs/storage.md §A.15): a closure that
-- carries the job's terminal state is the outcome, and lies in its receipt's claim slot.
-- Before 0.9 a claim slot held none. Prune records them through
-- awa_internal.ring_slot_terminal_counts (maintenance/rotate_prune.sql), as the queue ring's.

-- The terminal closures of a sealed claim slot that prune did not carry into the
-- current slot, per (queue, priority) of their receipts, in key order: exactly those
-- the TRUNCATE removes for good (a carried closure is counted where it now lies, and
-- by the prune that removes its copy). Called under the slot's ACCESS EXCLUSIVE locks,
-- after carry-forward, with the ring's serializer held (the cursor cannot move). A
-- closure's state is read through its code (0.10, tables/closure_code.sql).
CREATE OR REPLACE FUNCTION awa_internal.claim_slot_terminal_counts(p_slot int)
RETURNS TABLE (queue text, priority smallint, completed bigint, failed bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_cur int := (SELECT c.slot FROM awa.ring_cursor('claim') c);
BEGIN
    IF v_cur = p_slot THEN
        RAISE EXCEPTION 'claim slot % is the current one', p_slot
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Only a sealed slot is pruned.';
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT c.queue, c.priority, count(*) FILTER (WHERE x.state = ''completed''), '
        '       count(*) FILTER (WHERE x.state = ''failed'') '
        '  FROM (SELECT y.job_id, y.run_lease, '
        '               awa_internal.closure_state(y.outcome_code, y.state) AS state '
        '          FROM awa.%1$I y) x '
        '  JOIN awa.%2$I c ON c.job_id = x.job_id AND c.run_lease = x.run_lease '
        ' WHERE x.state IN (''completed'', ''failed'') '
        '   AND NOT EXISTS (SELECT 1 FROM awa.%3$I y '
        '                    WHERE y.job_id = x.job_id AND y.run_lease = x.run_lease) '
        ' GROUP BY c.queue, c.priority ORDER BY c.queue, c.priority',
        'lease_claim_closures_' || p_slot, 'lease_claims_' || p_slot,
        'lease_claim_closures_' || v_cur);
END
$$;
