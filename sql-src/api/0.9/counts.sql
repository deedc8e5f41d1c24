-- Exact counts in 0.9 (replaces awa.queue_counts_in_snapshot of api/counts.sql, same
-- signature): a terminal outcome is a closure carrying a state (docs/storage.md §A.15),
-- counted where it lies, next to its receipt, which names its queue; done entries still
-- count the outcomes written before the upgrade. Each claim child is read once, its
-- receipts of the queue joined with their closures: open receipts are running, closures
-- with a state completed or failed. STABLE: every read in the caller's snapshot, which
-- awa.queue_counts takes after locking the ring families.
CREATE OR REPLACE FUNCTION awa.queue_counts_in_snapshot(queue text,
    OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_lane int;
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
    FOR s IN 0 .. awa.ring_slot_count('claim') - 1 LOOP
        EXECUTE format('SELECT count(*) FILTER (WHERE x.job_id IS NULL) AS r, '
                       '       count(*) FILTER (WHERE x.state = ''completed'') AS c, '
                       '       count(*) FILTER (WHERE x.state = ''failed'') AS f '
                       '  FROM awa.%I c LEFT JOIN awa.%I x '
                       '    ON x.job_id = c.job_id AND x.run_lease = c.run_lease '
                       ' WHERE c.queue = $1',
                       'lease_claims_' || s, 'lease_claim_closures_' || s)
           INTO v_part USING queue_counts_in_snapshot.queue;
        running := running + v_part.r;
        completed := completed + v_part.c;
        failed := failed + v_part.f;
    END LOOP;
END
$$;
