-- The cursor advance (0.8): one ledger row; false = another rotator appended it first.

CREATE OR REPLACE FUNCTION awa.ring_append(p_ring text, p_authority text, p_generation bigint,
                                           p_slot int, p_slot_count int)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF p_authority IS DISTINCT FROM 'ledger' THEN
        RAISE EXCEPTION 'ring authority % does not exist in awa_bgw 0.8', p_authority
            USING ERRCODE = 'data_corrupted';
    END IF;
    EXECUTE format('INSERT INTO awa.%I (generation, slot) VALUES ($1, $2) '
                   'ON CONFLICT (generation) DO NOTHING', p_ring || '_ring_rotations')
      USING p_generation, p_slot;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n = 1;
END
$$;
