-- Registering a queue ahead of its first job (its lanes and its registration), with
-- the enqueue privilege on it (api/queue_policy.sql).

CREATE OR REPLACE FUNCTION awa.register_queue(queue text, priority int DEFAULT 0) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_job(register_queue.queue, 'register', '{}', register_queue.priority,
                          now(), 1);
    PERFORM awa_internal.require_queue_privilege(register_queue.queue, 'enqueue');
    PERFORM awa_internal.ensure_lanes(register_queue.queue, register_queue.priority::smallint);
END
$$;
