-- Exact counts and terminal history. queue_counts first locks the ring families (ACCESS
-- SHARE, which waits for a prune in progress and keeps the next from truncating
-- anything until it commits), then computes all five numbers in one later statement:
-- queue_counts_in_snapshot is STABLE, so every read it makes uses that statement's
-- snapshot, taken after the lock. TRUNCATE is not MVCC-safe: a snapshot taken before a
-- prune committed would see the truncated slot empty and miss what it carried forward.
-- (A REPEATABLE READ transaction's snapshot may predate a prune; its counts of pruned
-- history are not exact.)

-- One claim child's part of a queue's counts, in the caller's snapshot: its receipts of
-- the queue with no closure (running), and the terminal outcomes it holds. Before 0.9 a
-- closure carries no outcome (done entries do): none. api/0.9/counts.sql replaces it.
CREATE OR REPLACE FUNCTION awa.claim_slot_queue_counts(p_queue text, p_slot int,
    OUT running bigint, OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('SELECT count(*), 0, 0 FROM awa.%I c WHERE c.queue = $1 AND NOT EXISTS '
                   '(SELECT 1 FROM awa.%I x WHERE x.job_id = c.job_id '
                   'AND x.run_lease = c.run_lease)',
                   'lease_claims_' || p_slot, 'lease_claim_closures_' || p_slot)
       INTO running, completed, failed USING p_queue;
END
$$;

CREATE OR REPLACE FUNCTION awa.queue_counts_in_snapshot(queue text,
    OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_lane int;
    v_n int := awa.ring_slot_count('claim');
    v_part record;
    s int;
BEGIN
    available := 0;
    FOR v_lane IN SELECT DISTINCT l.lane_id FROM awa.queue_lanes l
                   WHERE l.queue = queue_counts_in_snapshot.queue LOOP
        available := available + awa.lane_available(v_lane);
    END LOOP;

    SELECT count(*) INTO scheduled FROM awa.deferred_jobs d WHERE d.queue = queue_counts_in_snapshot.queue;

    SELECT coalesce(sum(t.c), 0), coalesce(sum(t.f), 0) INTO completed, failed
      FROM (SELECT count(*) FILTER (WHERE d.state = 'completed') AS c,
                   count(*) FILTER (WHERE d.state = 'failed') AS f
              FROM awa.done_entries d WHERE d.queue = queue_counts_in_snapshot.queue
            UNION ALL
            SELECT p.completed, p.failed
              FROM awa.queue_pruned_terminal_counts(queue_counts_in_snapshot.queue) p) t;

    running := 0;
    FOR s IN 0 .. v_n - 1 LOOP
        SELECT * INTO v_part FROM awa.claim_slot_queue_counts(queue_counts_in_snapshot.queue, s);
        running := running + v_part.running;
        completed := completed + v_part.completed;
        failed := failed + v_part.failed;
    END LOOP;
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
    LOCK TABLE awa.ready_entries, awa.done_entries, awa.lease_claims,
               awa.lease_claim_closures IN ACCESS SHARE MODE;
    SELECT * INTO available, scheduled, running, completed, failed
      FROM awa.queue_counts_in_snapshot(queue_counts.queue);
END
$$;

-- Terminal outcomes still in the queue ring (pruned history survives as counts only;
-- failed jobs are also kept in awa.failed_jobs for awa_bgw.failed_retention).
CREATE OR REPLACE VIEW awa.terminal_jobs AS
SELECT d.job_id, d.queue, d.priority, d.kind, d.state,
       nullif(d.run_lease, 0) AS attempt, d.error, d.created_at, d.finished_at
  FROM awa.done_entries d;
