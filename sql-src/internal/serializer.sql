-- The ring serializer (DESIGN 3.1): the singleton, then, under ledger authority, the
-- ring's private lock (internal/private_locks.sql).

-- Takes the ring's serializer without waiting. Returns the authority it was taken
-- under, or NULL when it is busy. The singleton is locked before the authority is
-- read, and the authority is read in a statement of its own.
CREATE OR REPLACE FUNCTION awa_internal.ring_try_serializer(p_ring text) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_locked boolean;
    v_authority text;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I WHERE singleton '
                   'FOR UPDATE SKIP LOCKED)', p_ring || '_ring_state')
       INTO v_locked;
    IF NOT v_locked THEN
        RETURN NULL;
    END IF;
    v_authority := awa_internal.ring_authority();
    IF v_authority = 'ledger' AND NOT awa_internal.private_try_xact_lock(
            awa_internal.ring_serializer_key(p_ring)) THEN
        RETURN NULL;
    END IF;
    RETURN v_authority;
END
$$;
