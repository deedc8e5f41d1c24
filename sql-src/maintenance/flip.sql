-- 0.8: the flip happened before the contract; the function stays for callers and
-- answers ledger.

CREATE OR REPLACE FUNCTION awa.flip_ring_authority(p_schema text, p_force boolean DEFAULT false,
                                                   p_fresh_seconds float8 DEFAULT 90)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    RETURN awa_internal.ring_authority();
END
$$;
