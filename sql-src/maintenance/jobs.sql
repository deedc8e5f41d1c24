-- The worker's job maintenance, each one transaction callable by hand: promotion of
-- due deferred jobs and the retention of failed_jobs (the rescue of attempts past their
-- deadline or silent too long is in rescue.sql).

CREATE OR REPLACE FUNCTION awa.promote_deferred(p_schema text, OUT promoted bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_due awa.deferred_jobs[];
    v_queue text;
BEGIN
    PERFORM awa.check_schema(p_schema);
    PERFORM awa.require_read_committed();
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
        PERFORM awa.enqueue_jobs(v_queue, ARRAY(
            SELECT ROW(0, d.job_id, d.kind, d.args, d.priority, d.run_at, d.attempt,
                       d.max_attempts, d.created_at, NULL)::awa.new_job
              FROM unnest(v_due) d WHERE d.queue = v_queue));
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION awa.purge_failed_jobs(p_schema text, OUT purged bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_keep interval := coalesce(current_setting('awa_bgw.failed_retention', true),
                                '7d')::interval;
BEGIN
    PERFORM awa.check_schema(p_schema);
    DELETE FROM awa.failed_jobs f
     WHERE f.job_id IN (SELECT x.job_id FROM awa.failed_jobs x
                         WHERE x.failed_at < now() - v_keep
                         ORDER BY x.failed_at LIMIT 1000);
    GET DIAGNOSTICS purged = ROW_COUNT;
END
$$;
