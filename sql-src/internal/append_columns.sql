-- The pre-ledger cursor advance (0.6, and 0.7 in columns authority): compare-and-swap
-- on the singleton's generation, then the incoming slot row stamped with it. False =
-- another rotator advanced the columns first.

CREATE OR REPLACE FUNCTION awa.ring_append_columns(p_ring text, p_generation bigint, p_slot int)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('UPDATE awa.%I SET current_slot = $1, generation = $2 '
                   'WHERE singleton AND generation = $2 - 1', p_ring || '_ring_state')
      USING p_slot, p_generation;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 0 THEN
        RETURN false;
    END IF;
    EXECUTE format('UPDATE awa.%I SET generation = $1 WHERE slot = $2', p_ring || '_ring_slots')
      USING p_generation, p_slot;
    RETURN true;
END
$$;
