-- The API's SQL entry points of 0.9 with the per-queue checks (api/0.9/queue_policy.sql):
-- as in api/jobs.sql, internal/attempts.sql and api/counts.sql, and each asks for the caller's
-- privilege on the queue before it writes anything: register_queue enqueue; cancel and
-- queue_counts manage. terminal_jobs shows only the queues the reader may manage.

CREATE OR REPLACE FUNCTION awa.register_queue(queue text, priority smallint DEFAULT 0) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_job(register_queue.queue, 'register', '{}', register_queue.priority,
                          now(), 1);
    PERFORM awa.require_queue_privilege(register_queue.queue, 'enqueue');
    PERFORM awa.ensure_lanes(register_queue.queue, register_queue.priority);
END
$$;

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
    PERFORM awa.require_read_committed();
    -- hold off prune (its TRUNCATE is not MVCC-safe) before the lookups below take
    -- their snapshots
    PERFORM awa.hold_ring_families();
    -- scheduled or waiting for a retry
    SELECT d.queue INTO v_queue FROM awa.deferred_jobs d WHERE d.job_id = cancel.job_id;
    IF FOUND THEN
        PERFORM awa.require_queue_privilege(v_queue, 'manage');
    END IF;
    DELETE FROM awa.deferred_jobs d WHERE d.job_id = cancel.job_id RETURNING * INTO v_def;
    IF v_def.job_id IS NOT NULL THEN
        PERFORM awa.require_queue_privilege(v_def.queue, 'manage');
        SELECT * INTO v_cur FROM awa.ring_cursor('queue');
        INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease,
                                      lane_id, lane_seq, queue, priority, kind, state,
                                      created_at)
        VALUES (v_cur.slot, v_cur.generation, v_def.job_id, v_def.attempt, 0, 0,
                v_def.queue, v_def.priority, v_def.kind, 'cancelled', v_def.created_at);
        RETURN true;
    END IF;
    -- available: under its lane's claim lock, so no claimer takes it meanwhile
    FOR v_entry IN SELECT * FROM awa.find_ready_entry(cancel.job_id) ORDER BY attempt DESC LOOP
        PERFORM awa.require_queue_privilege(v_entry.queue, 'manage');
        PERFORM awa.private_xact_lock(awa.claim_lock_key(v_entry.lane_id));
        IF awa.entry_unclaimed(v_entry) THEN
            INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease,
                                          lane_id, lane_seq, queue, priority, kind, state,
                                          created_at)
            VALUES (v_entry.ready_slot, v_entry.ready_generation, v_entry.job_id, 0,
                    v_entry.lane_id, v_entry.lane_seq, v_entry.queue, v_entry.priority,
                    v_entry.kind, 'cancelled', v_entry.created_at);
            RETURN true;
        END IF;
        EXIT;
    END LOOP;
    -- running
    FOR v_receipt IN SELECT * FROM awa.find_open_receipt(cancel.job_id) LOOP
        PERFORM awa.require_queue_privilege(v_receipt.queue, 'manage');
        PERFORM awa.private_xact_lock(awa.attempt_lock_key(v_receipt.job_id, v_receipt.run_lease));
        SELECT * INTO v_receipt FROM awa.open_receipt(v_receipt.job_id, v_receipt.run_lease);
        IF v_receipt.job_id IS NOT NULL THEN
            PERFORM awa.close_attempts(ARRAY[v_receipt], 'cancelled', 'cancelled', NULL);
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

CREATE OR REPLACE FUNCTION awa.queue_counts(queue text,
    OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_name('queue', queue_counts.queue);
    PERFORM awa.require_queue_privilege(queue_counts.queue, 'manage');
    PERFORM awa.hold_ring_families();
    SELECT * INTO available, scheduled, running, completed, failed
      FROM awa.queue_counts_in_snapshot(queue_counts.queue);
END
$$;

-- Terminal outcomes the rings still hold (pruned history survives as counts only;
-- failed jobs are also kept in awa.failed_jobs for awa_bgw.failed_retention), of the
-- queues the reader may manage: the closures carrying a state, with their receipts'
-- queue, kind and attempt (docs/storage.md §A.15), and the done entries (cancelled
-- before a claim, or written before 0.9).
CREATE OR REPLACE VIEW awa.terminal_jobs AS
SELECT d.job_id, d.queue, d.priority, d.kind, d.state,
       nullif(d.run_lease, 0) AS attempt, d.error, d.created_at, d.finished_at
  FROM awa.done_entries d
 WHERE awa.queue_allowed(d.queue, 'manage')
UNION ALL
SELECT c.job_id, c.queue, c.priority, c.kind, x.state, c.attempt, x.error, c.created_at,
       x.closed_at
  FROM awa.lease_claim_closures x
  JOIN awa.lease_claims c ON c.claim_slot = x.claim_slot AND c.job_id = x.job_id
                         AND c.run_lease = x.run_lease
 WHERE x.state IS NOT NULL AND awa.queue_allowed(c.queue, 'manage');
