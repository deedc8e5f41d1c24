-- The authoritative ring cursor and the fence that rejects pre-ledger cursor writes
-- after the flip (0.7: both authorities).

CREATE OR REPLACE FUNCTION awa.ring_cursor(p_ring text)
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
CREATE OR REPLACE FUNCTION awa.reject_compat_ring_cursor_update_after_flip() RETURNS trigger
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

CREATE OR REPLACE TRIGGER reject_compat_ring_cursor_update_after_flip
    BEFORE UPDATE OF current_slot, generation ON awa.queue_ring_state
    FOR EACH ROW EXECUTE FUNCTION awa.reject_compat_ring_cursor_update_after_flip();
CREATE OR REPLACE TRIGGER reject_compat_ring_cursor_update_after_flip
    BEFORE UPDATE OF current_slot, generation ON awa.lease_ring_state
    FOR EACH ROW EXECUTE FUNCTION awa.reject_compat_ring_cursor_update_after_flip();
CREATE OR REPLACE TRIGGER reject_compat_ring_cursor_update_after_flip
    BEFORE UPDATE OF current_slot, generation ON awa.claim_ring_state
    FOR EACH ROW EXECUTE FUNCTION awa.reject_compat_ring_cursor_update_after_flip();
