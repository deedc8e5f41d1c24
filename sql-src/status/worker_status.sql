-- The workers as shared memory shows them.

CREATE OR REPLACE FUNCTION awa.maintenance_worker_status(
    OUT database name, OUT pid int, OUT state text, OUT state_since timestamptz,
    OUT started_at timestamptz, OUT leader_since timestamptz,
    OUT rotations jsonb, OUT prunes jsonb,
    OUT folds_run bigint, OUT folds_stood_down bigint, OUT rows_folded bigint,
    OUT rows_trimmed bigint, OUT last_fold_at timestamptz, OUT pin_holder text,
    OUT auto_flip text, OUT auto_flip_window_since timestamptz,
    OUT errors bigint, OUT last_error text, OUT last_error_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_status'
LANGUAGE C STRICT VOLATILE;

-- A session other than awa_bgw's own workers that holds the maintenance leader key
-- of a database (the public advisory lock 4708303813012965710, DESIGN 1): a worker
-- that stays follower while no other worker leads is held off by it. NULL pid: a
-- prepared transaction.
CREATE OR REPLACE FUNCTION awa.leader_key_holders(p_database name)
RETURNS TABLE (pid int, holder text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT l.pid,
           CASE WHEN l.pid IS NULL THEN 'a prepared transaction'
                ELSE format('pid %s (role %s, application %s, %s)', l.pid,
                            coalesce(a.usename::text, '?'),
                            coalesce(nullif(a.application_name, ''), '?'),
                            coalesce(a.backend_type, '?')) END
      FROM pg_locks l
      LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
       AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = p_database)
       AND l.classid::bigint = 4708303813012965710 >> 32
       AND l.objid::bigint = 4708303813012965710 & 4294967295
       AND NOT EXISTS (SELECT 1 FROM awa.maintenance_worker_status() w WHERE w.pid = l.pid)
     ORDER BY l.pid
$$;
