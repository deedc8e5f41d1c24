-- The cursor authority as the data plane reads it, and the guard that keeps it
-- one-way (0.7 and 0.8).

-- The authority; a missing row means columns (the pre-ledger representation).
CREATE OR REPLACE FUNCTION awa_internal.ring_authority() RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce((SELECT authority FROM awa.ring_cursor_authority WHERE singleton),
                    'columns')
$$;

-- The flip is one-way: ledger never goes back to columns, and the row stays.
CREATE OR REPLACE FUNCTION awa_internal.reject_ring_authority_revert() RETURNS trigger
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

CREATE OR REPLACE TRIGGER reject_ring_authority_revert
    BEFORE UPDATE OR DELETE ON awa.ring_cursor_authority
    FOR EACH ROW EXECUTE FUNCTION awa_internal.reject_ring_authority_revert();
