-- The cursor advance (0.8): the ledger is the only cursor.

CREATE OR REPLACE FUNCTION awa.ring_append(p_ring text, p_authority text, p_generation bigint,
                                           p_slot int, p_slot_count int)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_authority IS DISTINCT FROM 'ledger' THEN
        RAISE EXCEPTION 'ring authority % does not exist in awa_bgw 0.8', p_authority
            USING ERRCODE = 'data_corrupted';
    END IF;
    RETURN awa.ring_append_ledger(p_ring, p_generation, p_slot);
END
$$;
