-- 0.7 -> 0.8, contract. Refuses, changing nothing, unless the schema is in ledger
-- authority and no fresh runtime (a heartbeat within awa_bgw.runtime_fresh_window) is
-- pre-flip; then drops the fence, the flip's reconciliation and the compat columns.
-- The shared 0.8 pieces follow (ring_cursor and ring_append read and write the ledger
-- only; the flip answers ledger).

DO $$
DECLARE
    v_window float8 := extract(epoch FROM coalesce(
        nullif(current_setting('awa_bgw.runtime_fresh_window', true), ''), '90s')::interval);
    v_status record;
BEGIN
    SELECT * INTO v_status FROM awa.ring_authority_status('awa', v_window);
    IF v_status.authority IS DISTINCT FROM 'ledger' THEN
        RAISE EXCEPTION 'awa_bgw 0.8 needs ledger authority; this database is still in % authority',
                        v_status.authority
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Flip first: SELECT awa.flip_ring_authority(''awa''); or wait for the '
                         'auto-flip (awa_bgw.auto_flip). Then ALTER EXTENSION awa_bgw UPDATE TO ''0.8''.';
    END IF;
    IF v_status.blocking_instances > 0 THEN
        RAISE EXCEPTION 'awa_bgw 0.8 drops the compat cursor columns, but % fresh runtime(s) are pre-flip',
                        v_status.blocking_instances
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'SELECT * FROM awa.ring_authority_blockers(''awa'') lists them; stop or '
                         'upgrade them first.';
    END IF;
END
$$;

DROP TRIGGER reject_compat_ring_cursor_update_after_flip ON awa.queue_ring_state;
DROP TRIGGER reject_compat_ring_cursor_update_after_flip ON awa.lease_ring_state;
DROP TRIGGER reject_compat_ring_cursor_update_after_flip ON awa.claim_ring_state;
DROP FUNCTION awa.reject_compat_ring_cursor_update_after_flip();
DROP FUNCTION awa.flip_reconcile_ring(text);
DROP FUNCTION awa.ring_append_columns(text, bigint, int);

ALTER TABLE awa.queue_ring_state DROP COLUMN current_slot, DROP COLUMN generation;
ALTER TABLE awa.lease_ring_state DROP COLUMN current_slot, DROP COLUMN generation;
ALTER TABLE awa.claim_ring_state DROP COLUMN current_slot, DROP COLUMN generation;
ALTER TABLE awa.queue_ring_slots DROP COLUMN generation;
ALTER TABLE awa.lease_ring_slots DROP COLUMN generation;
ALTER TABLE awa.claim_ring_slots DROP COLUMN generation;
