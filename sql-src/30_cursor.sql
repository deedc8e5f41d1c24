-- The authoritative ring cursor, the fence that rejects pre-ledger cursor writes after
-- the flip, and the guard that keeps the authority one-way.

CREATE FUNCTION awa.check_schema(p_schema text) RETURNS void
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

-- Slot counts are fixed in this version (16/8/8; the ring_state CHECKs hold the tables
-- to it), so the hot paths need not read them.
CREATE FUNCTION awa.ring_slot_count(p_ring text) RETURNS int
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

-- The authority; a missing row means columns (the pre-ledger representation).
CREATE FUNCTION awa.ring_authority() RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce((SELECT authority FROM awa.ring_cursor_authority WHERE singleton),
                    'columns')
$$;

CREATE FUNCTION awa.ring_cursor(p_ring text)
RETURNS TABLE (slot int, generation bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_ledger boolean := awa.ring_authority() = 'ledger';
BEGIN
    CASE p_ring
        WHEN 'queue' THEN
            IF v_ledger THEN
                RETURN QUERY SELECT r.slot, r.generation FROM awa.queue_ring_rotations r
                             ORDER BY r.generation DESC LIMIT 1;
            ELSE
                RETURN QUERY SELECT s.current_slot, s.generation FROM awa.queue_ring_state s
                             WHERE s.singleton;
            END IF;
        WHEN 'lease' THEN
            IF v_ledger THEN
                RETURN QUERY SELECT r.slot, r.generation FROM awa.lease_ring_rotations r
                             ORDER BY r.generation DESC LIMIT 1;
            ELSE
                RETURN QUERY SELECT s.current_slot, s.generation FROM awa.lease_ring_state s
                             WHERE s.singleton;
            END IF;
        WHEN 'claim' THEN
            IF v_ledger THEN
                RETURN QUERY SELECT r.slot, r.generation FROM awa.claim_ring_rotations r
                             ORDER BY r.generation DESC LIMIT 1;
            ELSE
                RETURN QUERY SELECT s.current_slot, s.generation FROM awa.claim_ring_state s
                             WHERE s.singleton;
            END IF;
        ELSE
            RAISE EXCEPTION 'ring_cursor: unknown ring "%"', p_ring
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The rings are queue, lease and claim.';
    END CASE;
END
$$;

-- Fence: under ledger authority no one may move the compat cursor columns.
CREATE FUNCTION awa.reject_compat_ring_cursor_update_after_flip() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF (NEW.current_slot, NEW.generation) IS DISTINCT FROM (OLD.current_slot, OLD.generation)
       AND awa.ring_authority() = 'ledger' THEN
        RAISE EXCEPTION 'pre-ledger ring cursor update rejected after the ledger-authority flip'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('%s.%s: (current_slot, generation) (%s, %s) -> (%s, %s).',
                                  TG_TABLE_SCHEMA, TG_TABLE_NAME, OLD.current_slot,
                                  OLD.generation, NEW.current_slot, NEW.generation),
                  HINT = 'The ring cursor lives in the rotation ledger now; stop the '
                         'pre-0.7 maintenance process that attempted this write.';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER reject_compat_ring_cursor_update_after_flip
    BEFORE UPDATE OF current_slot, generation ON awa.queue_ring_state
    FOR EACH ROW EXECUTE FUNCTION awa.reject_compat_ring_cursor_update_after_flip();
CREATE TRIGGER reject_compat_ring_cursor_update_after_flip
    BEFORE UPDATE OF current_slot, generation ON awa.lease_ring_state
    FOR EACH ROW EXECUTE FUNCTION awa.reject_compat_ring_cursor_update_after_flip();
CREATE TRIGGER reject_compat_ring_cursor_update_after_flip
    BEFORE UPDATE OF current_slot, generation ON awa.claim_ring_state
    FOR EACH ROW EXECUTE FUNCTION awa.reject_compat_ring_cursor_update_after_flip();

-- The flip is one-way: ledger never goes back to columns, and the row stays.
CREATE FUNCTION awa.reject_ring_authority_revert() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'DELETE' OR NEW.authority IS DISTINCT FROM 'ledger' THEN
        IF OLD.authority = 'ledger' THEN
            RAISE EXCEPTION 'the ring cursor authority cannot leave ledger'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'The columns -> ledger flip is one-way; rolling back across '
                             'it is unsupported.';
        END IF;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER reject_ring_authority_revert
    BEFORE UPDATE OR DELETE ON awa.ring_cursor_authority
    FOR EACH ROW EXECUTE FUNCTION awa.reject_ring_authority_revert();
