-- The cursor advance, in both authorities (0.7).

-- Advances the cursor by one under the given authority; false = lost compare-and-swap.
-- Under columns the ledger is backfilled with every generation up to the new one (a
-- pre-ledger rotator may have advanced the columns without it).
CREATE OR REPLACE FUNCTION awa.ring_append(p_ring text, p_authority text, p_generation bigint,
                                           p_slot int, p_slot_count int)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_authority = 'ledger' THEN
        RETURN awa.ring_append_ledger(p_ring, p_generation, p_slot);
    END IF;
    IF NOT awa.ring_append_columns(p_ring, p_generation, p_slot) THEN
        RETURN false;
    END IF;
    EXECUTE format('INSERT INTO awa.%1$I (generation, slot) '
                   'SELECT g, (g %% $2)::int FROM generate_series('
                   '(SELECT coalesce(max(generation), -1) + 1 FROM awa.%1$I), $1) g '
                   'ON CONFLICT (generation) DO NOTHING', p_ring || '_ring_rotations')
      USING p_generation, p_slot_count;
    RETURN true;
END
$$;
