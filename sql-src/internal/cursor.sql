-- The authoritative ring cursor and the fence that rejects pre-ledger cursor writes
-- after the flip (0.7: both authorities).

-- A C function (src/dataplane.c): the authority, then the ledger's newest row by its
-- primary key or the singleton's columns, under the calling statement's snapshot, as
-- the SQL it replaced (awa.ring_authority(), then ORDER BY generation DESC LIMIT 1 or
-- WHERE singleton); the hot paths read it several times per job.
CREATE OR REPLACE FUNCTION awa.ring_cursor(p_ring text)
RETURNS TABLE (slot int, generation bigint)
LANGUAGE C STABLE ROWS 1
AS 'MODULE_PATHNAME', 'awa_ring_cursor';

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
