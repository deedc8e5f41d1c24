-- The ring cursor (0.8): the ledger's newest row.

CREATE OR REPLACE FUNCTION awa.ring_cursor(p_ring text)
RETURNS TABLE (slot int, generation bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    CASE p_ring
        WHEN 'queue' THEN
            RETURN QUERY SELECT r.slot, r.generation FROM awa.queue_ring_rotations r
                         ORDER BY r.generation DESC LIMIT 1;
        WHEN 'lease' THEN
            RETURN QUERY SELECT r.slot, r.generation FROM awa.lease_ring_rotations r
                         ORDER BY r.generation DESC LIMIT 1;
        WHEN 'claim' THEN
            RETURN QUERY SELECT r.slot, r.generation FROM awa.claim_ring_rotations r
                         ORDER BY r.generation DESC LIMIT 1;
        ELSE
            RAISE EXCEPTION 'ring_cursor: unknown ring "%"', p_ring
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The rings are queue, lease and claim.';
    END CASE;
END
$$;
