-- 0.6: the ring cursor is the singleton's (current_slot, generation): the same function
-- as 0.7's (internal/cursor.sql), read from the columns only, so that the pieces 0.6
-- shares with 0.7 call awa.ring_cursor in both. The 0.7 piece replaces it on upgrade.
-- (Releases before the layout by role named it awa.ring_cursor_columns and rewrote the
-- shared pieces' calls; upgrade/0.6--0.7.sql drops that name if it is there.)

CREATE OR REPLACE FUNCTION awa.ring_cursor(p_ring text)
RETURNS TABLE (slot int, generation bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.ring_slot_count(p_ring);   -- validates the ring name
    RETURN QUERY EXECUTE format('SELECT s.current_slot, s.generation FROM awa.%I s '
                                'WHERE s.singleton', p_ring || '_ring_state');
END
$$;
