-- The cursor advance (since 0.8): the ledger is the only cursor. Called by rotate; a
-- caller's bad ring or authority is refused as bad input (22023), not as corruption.

CREATE OR REPLACE FUNCTION awa_internal.ring_append(p_ring text, p_authority text, p_generation bigint,
                                           p_slot int, p_slot_count int)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.ring_families(p_ring);   -- validates the ring name
    IF p_authority IS DISTINCT FROM 'ledger' THEN
        RAISE EXCEPTION 'ring authority "%" does not exist', p_authority
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Since awa_bgw 0.8 the ledger is the only ring authority: pass ''ledger''.';
    END IF;
    RETURN awa_internal.ring_append_ledger(p_ring, p_generation, p_slot);
END
$$;
