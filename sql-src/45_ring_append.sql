-- The cursor advance, in both authorities (0.7).

-- Advances the cursor by one under the given authority; false = lost compare-and-swap.
CREATE OR REPLACE FUNCTION awa.ring_append(p_ring text, p_authority text, p_generation bigint,
                                p_slot int, p_slot_count int)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    IF p_authority = 'ledger' THEN
        EXECUTE format('INSERT INTO awa.%I (generation, slot) VALUES ($1, $2) '
                       'ON CONFLICT (generation) DO NOTHING', p_ring || '_ring_rotations')
          USING p_generation, p_slot;
        GET DIAGNOSTICS n = ROW_COUNT;
        RETURN n = 1;
    END IF;
    -- columns (compat): CAS the singleton, stamp the incoming slot, backfill the ledger
    -- with every generation up to the new one (a pre-ledger rotator may have advanced
    -- the columns without it).
    EXECUTE format('UPDATE awa.%I SET current_slot = $1, generation = $2 '
                   'WHERE singleton AND generation = $2 - 1', p_ring || '_ring_state')
      USING p_slot, p_generation;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 0 THEN
        RETURN false;
    END IF;
    EXECUTE format('UPDATE awa.%I SET generation = $1 WHERE slot = $2', p_ring || '_ring_slots')
      USING p_generation, p_slot;
    EXECUTE format('INSERT INTO awa.%1$I (generation, slot) '
                   'SELECT g, (g %% $2)::int FROM generate_series('
                   '(SELECT coalesce(max(generation), -1) + 1 FROM awa.%1$I), $1) g '
                   'ON CONFLICT (generation) DO NOTHING', p_ring || '_ring_rotations')
      USING p_generation, p_slot_count;
    RETURN true;
END
$$;
