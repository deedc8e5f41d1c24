-- The ledger cursor advance (0.7 in ledger authority, 0.8): one row; false = another
-- rotator appended that generation first.

CREATE OR REPLACE FUNCTION awa_internal.ring_append_ledger(p_ring text, p_generation bigint, p_slot int)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('INSERT INTO awa.%I (generation, slot) VALUES ($1, $2) '
                   'ON CONFLICT (generation) DO NOTHING', p_ring || '_ring_rotations')
      USING p_generation, p_slot;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n = 1;
END
$$;
