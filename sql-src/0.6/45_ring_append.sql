-- 0.6: the serializer is the singleton's row lock; a rotation updates the columns
-- (compare-and-swap on the generation) and stamps the incoming slot row.

CREATE OR REPLACE FUNCTION awa.ring_try_serializer(p_ring text) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_locked boolean;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I WHERE singleton '
                   'FOR UPDATE SKIP LOCKED)', p_ring || '_ring_state')
       INTO v_locked;
    RETURN CASE WHEN v_locked THEN 'columns' END;
END
$$;

CREATE OR REPLACE FUNCTION awa.ring_append(p_ring text, p_authority text, p_generation bigint,
                                           p_slot int, p_slot_count int)
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
