-- Exact counts in 0.9 (replaces awa.claim_slot_queue_counts of api/counts.sql, same
-- signature): a terminal outcome is a closure carrying a state (docs/storage.md §A.15),
-- counted where it lies, next to its receipt, which names its queue. The claim child is
-- read once: its receipts of the queue joined with their closures, open ones running,
-- closures with the state completed or failed the outcomes. STABLE: it reads in the
-- snapshot of awa.queue_counts' statement, taken after the ring families were locked.
CREATE OR REPLACE FUNCTION awa.claim_slot_queue_counts(p_queue text, p_slot int,
    OUT running bigint, OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('SELECT count(*) FILTER (WHERE x.job_id IS NULL), '
                   '       count(*) FILTER (WHERE x.state = ''completed''), '
                   '       count(*) FILTER (WHERE x.state = ''failed'') '
                   '  FROM awa.%I c LEFT JOIN awa.%I x '
                   '    ON x.job_id = c.job_id AND x.run_lease = c.run_lease '
                   ' WHERE c.queue = $1',
                   'lease_claims_' || p_slot, 'lease_claim_closures_' || p_slot)
       INTO running, completed, failed USING p_queue;
END
$$;
