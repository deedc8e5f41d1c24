-- Exact counts and terminal history, with the manage privilege on the queue
-- (api/queue_policy.sql). awa.queue_counts first locks the ring families (ACCESS SHARE,
-- which waits for a prune in progress and keeps the next from truncating anything
-- until it commits), then computes all five numbers in one later statement:
-- queue_counts_in_snapshot is STABLE, so every read it makes uses that statement's
-- snapshot, taken after the lock. TRUNCATE is not MVCC-safe: a snapshot taken before a
-- prune committed would see the truncated slot empty and miss what it carried forward.
-- (A REPEATABLE READ transaction's snapshot may predate a prune; its counts of pruned
-- history are not exact.)

CREATE OR REPLACE FUNCTION awa_internal.queue_counts_in_snapshot(queue text,
    OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_lane int;
    v_n int := awa_internal.ring_slot_count('claim');
    v_part record;
    s int;
BEGIN
    available := 0;
    FOR v_lane IN SELECT DISTINCT l.lane_id FROM awa.queue_lanes l
                   WHERE l.queue = queue_counts_in_snapshot.queue LOOP
        available := available + awa_internal.lane_available(v_lane);
    END LOOP;

    SELECT count(*) INTO scheduled FROM awa.deferred_jobs d WHERE d.queue = queue_counts_in_snapshot.queue;

    SELECT coalesce(sum(t.c), 0), coalesce(sum(t.f), 0) INTO completed, failed
      FROM (SELECT count(*) FILTER (WHERE d.state = 'completed') AS c,
                   count(*) FILTER (WHERE d.state = 'failed') AS f
              FROM awa.done_entries d WHERE d.queue = queue_counts_in_snapshot.queue
            UNION ALL
            SELECT p.completed, p.failed
              FROM awa_internal.queue_pruned_terminal_counts(queue_counts_in_snapshot.queue) p) t;

    running := 0;
    FOR s IN 0 .. v_n - 1 LOOP
        SELECT * INTO v_part FROM awa_internal.claim_slot_queue_counts(queue_counts_in_snapshot.queue, s);
        running := running + v_part.running;
        completed := completed + v_part.completed;
        failed := failed + v_part.failed;
    END LOOP;
END
$$;

-- One claim child's part of a queue's counts: a terminal outcome is a closure carrying
-- a state (docs/storage.md §A.15), counted where it lies, next to its receipt, which
-- names its queue (its state read through its code, tables/closure_code.sql). The claim
-- child is read once: its receipts of the queue joined with their closures, open ones
-- running, closures with the state completed or failed the outcomes. STABLE: it reads
-- in the snapshot of awa.queue_counts' statement, taken after the ring families were
-- locked.
CREATE OR REPLACE FUNCTION awa_internal.claim_slot_queue_counts(p_queue text, p_slot int,
    OUT running bigint, OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('SELECT count(*) FILTER (WHERE x.job_id IS NULL), '
                   '       count(*) FILTER (WHERE awa_internal.closure_state(x.outcome_code, '
                   '                                  x.state) = ''completed''), '
                   '       count(*) FILTER (WHERE awa_internal.closure_state(x.outcome_code, '
                   '                                  x.state) = ''failed'') '
                   '  FROM awa.%I c LEFT JOIN awa.%I x '
                   '    ON x.job_id = c.job_id AND x.run_lease = c.run_lease '
                   ' WHERE c.queue = $1',
                   'lease_claims_' || p_slot, 'lease_claim_closures_' || p_slot)
       INTO running, completed, failed USING p_queue;
END
$$;


CREATE OR REPLACE FUNCTION awa.queue_counts(queue text,
    OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_name('queue', queue_counts.queue);
    PERFORM awa_internal.require_queue_privilege(queue_counts.queue, 'manage');
    PERFORM awa_internal.hold_ring_families();
    SELECT * INTO available, scheduled, running, completed, failed
      FROM awa_internal.queue_counts_in_snapshot(queue_counts.queue);
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
SELECT c.job_id, c.queue, c.priority, c.kind,
       awa_internal.closure_state(x.outcome_code, x.state), c.attempt, x.error,
       c.created_at, x.closed_at
  FROM awa.lease_claim_closures x
  JOIN awa.lease_claims c ON c.claim_slot = x.claim_slot AND c.job_id = x.job_id
                         AND c.run_lease = x.run_lease
 WHERE awa_internal.closure_state(x.outcome_code, x.state) IS NOT NULL
   AND awa.queue_allowed(c.queue, 'manage');
