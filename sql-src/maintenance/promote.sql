-- The promotion of due deferred jobs, one transaction, callable by hand (the rescue of
-- attempts past their deadline or silent too long is in rescue.sql; the retention of
-- failed_jobs in folds.sql).

CREATE OR REPLACE FUNCTION awa.promote_deferred(p_schema text, OUT promoted bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_due awa.deferred_jobs[];
    v_queue text;
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    PERFORM awa_internal.require_read_committed();
    WITH due AS (
        DELETE FROM awa.deferred_jobs d
         WHERE d.job_id IN (SELECT x.job_id FROM awa.deferred_jobs x
                             WHERE x.run_at <= now()
                             ORDER BY x.run_at, x.job_id LIMIT 5000
                             FOR UPDATE SKIP LOCKED)
        RETURNING d.*)
    SELECT array_agg(due ORDER BY due.run_at, due.job_id) INTO v_due FROM due;
    promoted := coalesce(cardinality(v_due), 0);
    FOR v_queue IN SELECT DISTINCT d.queue FROM unnest(v_due) d ORDER BY 1 LOOP
        PERFORM awa_internal.enqueue_jobs(v_queue, ARRAY(
            SELECT ROW(0, d.job_id, d.kind, d.args, d.priority, d.run_at, d.attempt,
                       d.max_attempts, d.created_at, NULL)::awa.new_job
              FROM unnest(v_due) d WHERE d.queue = v_queue));
    END LOOP;
END
$$;

