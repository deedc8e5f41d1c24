-- Status views: the rings as the tables show them, and the workers as shared memory
-- shows them.

CREATE OR REPLACE FUNCTION awa_internal.ring_ledger_stats(p_ring text,
    OUT ledger_rows bigint, OUT last_rotated_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.ring_families(p_ring);   -- validates the ring name
    EXECUTE format('SELECT count(*), max(rotated_at) FROM awa.%I', p_ring || '_ring_rotations')
       INTO ledger_rows, last_rotated_at;
END
$$;
