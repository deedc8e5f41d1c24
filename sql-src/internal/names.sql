-- Names: the schema argument and the rings' slot counts.

CREATE OR REPLACE FUNCTION awa_internal.check_schema(p_schema text) RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_schema IS DISTINCT FROM 'awa' THEN
        RAISE EXCEPTION 'unsupported queue-storage schema "%"', p_schema
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'awa_bgw keeps its queue storage in schema awa; pass ''awa''.';
    END IF;
END
$$;

-- Slot counts are fixed in this version, so the hot paths need not read them: this is
-- where SQL code reads them. The ring tables' DDL holds the same numbers (the CHECKs of
-- the ring_state and slot tables and of the ledgers, tables/ring_state.sql, tables/ledgers.sql;
-- the data plane creates its children from slot_count), C has them as AWA_QUEUE_SLOTS
-- and AWA_CLAIM_SLOTS (src/dataplane/probes.h); regress 11_windows checks that they agree.
CREATE OR REPLACE FUNCTION awa_internal.ring_slot_count(p_ring text) RETURNS int
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    CASE p_ring
        WHEN 'queue' THEN RETURN 16;
        WHEN 'lease' THEN RETURN 8;
        WHEN 'claim' THEN RETURN 8;
        ELSE
            RAISE EXCEPTION 'unknown ring "%"', p_ring
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The rings are queue, lease and claim.';
    END CASE;
END
$$;
