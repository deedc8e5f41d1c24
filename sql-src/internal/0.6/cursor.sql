-- 0.6: the ring cursor is the singleton's (current_slot, generation).

CREATE OR REPLACE FUNCTION awa.ring_cursor_columns(p_ring text)
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
