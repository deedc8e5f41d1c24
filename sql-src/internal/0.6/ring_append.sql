-- 0.6: the serializer is the singleton's row lock; a rotation advances the columns and
-- stamps the incoming slot row (awa.ring_append_columns).

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
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT awa.ring_append_columns(p_ring, p_generation, p_slot) $$;
