-- The ends of an attempt, and cancel.
--
-- Completing one attempt, in C (src/dataplane/complete.c): the attempt's lock, its open receipt
-- (awa_internal.open_receipt), then what awa_internal.close_attempts(ARRAY[receipt], 'completed',
-- 'completed', NULL) writes: a closure in the receipt's claim slot, which carries the
-- job's terminal state (docs/storage.md A.15; 0.8 wrote a done entry as well).
CREATE OR REPLACE FUNCTION awa.complete(job_id bigint, run_lease bigint) RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
AS 'MODULE_PATHNAME', 'awa_complete';

-- Completing many attempts in one round trip, in C (src/dataplane/complete.c): the locks taken in key order, then for each distinct attempt what awa.complete does; returns
-- the attempts it completed, ordered by (job_id, run_lease).
CREATE OR REPLACE FUNCTION awa.complete_batch(job_ids bigint[], run_leases bigint[])
RETURNS TABLE (job_id bigint, run_lease bigint)
LANGUAGE C VOLATILE SECURITY DEFINER
AS 'MODULE_PATHNAME', 'awa_complete_batch';

-- Failing an attempt, in C (src/dataplane/attempts.c): the attempt's lock, its open receipt, then what
-- awa_internal.fail_attempt(receipt, 'failed', error, retry_in) writes.
CREATE OR REPLACE FUNCTION awa.fail(job_id bigint, run_lease bigint, error text,
                         retry_in interval DEFAULT NULL)
RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
AS 'MODULE_PATHNAME', 'awa_fail';

-- A heartbeat, in C (src/dataplane/attempts.c): the attempt's lock, its open receipt, then a row in the
-- current lease slot.
CREATE OR REPLACE FUNCTION awa.heartbeat(job_id bigint, run_lease bigint, progress jsonb DEFAULT NULL)
RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
AS 'MODULE_PATHNAME', 'awa_heartbeat';

-- 0.10: this transaction writes the data plane through SQL (a cancel): when it commits,
-- an idle worker is woken (src/dataplane/activity.c; the C paths note it themselves).
CREATE OR REPLACE FUNCTION awa_internal.note_activity() RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_note_activity';

-- Cancelling a job in any open state, with the manage privilege on its queue: a
-- scheduled or retryable one leaves deferred_jobs, a waiting one is done as cancelled
-- under its lane's claim lock, a running one has its attempt closed.
CREATE OR REPLACE FUNCTION awa.cancel(job_id bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_def awa.deferred_jobs;
    v_entry awa.ready_entries;
    v_receipt awa.lease_claims;
    v_cur record;
    v_queue text;
BEGIN
    PERFORM awa_internal.require_read_committed();
    PERFORM awa_internal.note_activity();
    -- hold off prune (its TRUNCATE is not MVCC-safe) before the lookups below take
    -- their snapshots
    PERFORM awa_internal.hold_ring_families();
    -- scheduled or waiting for a retry
    SELECT d.queue INTO v_queue FROM awa.deferred_jobs d WHERE d.job_id = cancel.job_id;
    IF FOUND THEN
        PERFORM awa_internal.require_queue_privilege(v_queue, 'manage');
    END IF;
    DELETE FROM awa.deferred_jobs d WHERE d.job_id = cancel.job_id RETURNING * INTO v_def;
    IF v_def.job_id IS NOT NULL THEN
        PERFORM awa_internal.require_queue_privilege(v_def.queue, 'manage');
        SELECT * INTO v_cur FROM awa.ring_cursor('queue');
        INSERT INTO awa.done_entries (ready_slot, job_id, run_lease, lane_id, lane_seq,
                                      queue, priority, kind, state, created_at)
        VALUES (v_cur.slot, v_def.job_id, v_def.attempt, 0, 0,
                v_def.queue, v_def.priority, v_def.kind, 'cancelled', v_def.created_at);
        RETURN true;
    END IF;
    -- available: under its lane's claim lock, so no claimer takes it meanwhile
    FOR v_entry IN SELECT * FROM awa_internal.find_ready_entry(cancel.job_id) ORDER BY attempt DESC LOOP
        PERFORM awa_internal.require_queue_privilege(v_entry.queue, 'manage');
        PERFORM awa_internal.private_xact_lock(awa_internal.claim_lock_key(v_entry.lane_id));
        IF awa.entry_unclaimed(v_entry) THEN
            INSERT INTO awa.done_entries (ready_slot, job_id, run_lease, lane_id,
                                          lane_seq, queue, priority, kind, state,
                                          created_at)
            VALUES (v_entry.ready_slot, v_entry.job_id, 0,
                    v_entry.lane_id, v_entry.lane_seq, v_entry.queue, v_entry.priority,
                    v_entry.kind, 'cancelled', v_entry.created_at);
            RETURN true;
        END IF;
        EXIT;
    END LOOP;
    -- running
    FOR v_receipt IN SELECT * FROM awa_internal.find_open_receipt(cancel.job_id) LOOP
        PERFORM awa_internal.require_queue_privilege(v_receipt.queue, 'manage');
        PERFORM awa_internal.private_xact_lock(awa_internal.attempt_lock_key(v_receipt.job_id, v_receipt.run_lease));
        SELECT * INTO v_receipt FROM awa_internal.open_receipt(v_receipt.job_id, v_receipt.run_lease);
        IF v_receipt.job_id IS NOT NULL THEN
            PERFORM awa_internal.close_attempts(ARRAY[v_receipt], 'cancelled', 'cancelled', NULL);
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;
