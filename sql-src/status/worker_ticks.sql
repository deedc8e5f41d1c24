-- What 0.9 adds to awa.maintenance_status (at the end of the view: it keeps its grants
-- on upgrade): the passes of each worker's loop (ticks), its failed_jobs retention
-- (failed_jobs_purged, purge_batches), and the sessions that hold off a blocked prune
-- (prune_blocked_by). And awa.wake(), which asks the worker of the current database to
-- run every step now. 0.10 adds since when the worker sleeps on its idle cadences
-- (idle_since; docs/operations.md, "When idle").

CREATE OR REPLACE FUNCTION awa_internal.maintenance_worker_ticks(OUT pid int, OUT ticks bigint,
    OUT failed_jobs_purged bigint, OUT purge_batches bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_ticks'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE FUNCTION awa_internal.maintenance_worker_idle(OUT pid int,
    OUT idle_since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_idle'
LANGUAGE C STRICT VOLATILE;

-- The sessions (pids; 0 for a prepared transaction) other than the caller that hold or
-- await a lock on a child of the ring's slot: what keeps prune's ACCESS EXCLUSIVE off.
-- The worker asks it in the transaction of a prune that came back blocked.
CREATE OR REPLACE FUNCTION awa.ring_slot_lock_holders(p_ring text, p_slot int)
RETURNS int[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa_internal.ring_slot_count(p_ring);   -- validates the ring name
    v_pids int[];
BEGIN
    IF p_slot IS NULL OR p_slot < 0 OR p_slot >= v_n THEN
        RAISE EXCEPTION 'slot % is not a slot of the % ring', p_slot, p_ring
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('The %s ring has slots 0 to %s.', p_ring, v_n - 1);
    END IF;
    SELECT coalesce(array_agg(DISTINCT coalesce(l.pid, 0) ORDER BY coalesce(l.pid, 0)), '{}')
      INTO v_pids
      FROM pg_locks l
     WHERE l.locktype = 'relation'
       AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
       AND l.relation IN (SELECT awa_internal.ring_child(f, p_slot)
                            FROM unnest(awa_internal.ring_families(p_ring)) f)
       AND l.pid IS DISTINCT FROM pg_backend_pid();
    RETURN v_pids;
END
$$;

COMMENT ON FUNCTION awa.ring_slot_lock_holders(text, int) IS
'the pids (0: a prepared transaction) other than the caller that hold or await a lock on '
'a child of the ring slot: the sessions that hold off its prune';

CREATE OR REPLACE FUNCTION awa_internal.maintenance_worker_prune_blockers(OUT pid int,
                                                                 OUT prune_blocked_by jsonb)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_prune_blockers'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE FUNCTION awa.wake() RETURNS boolean
AS 'MODULE_PATHNAME', 'awa_wake'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION awa.wake() IS
'asks the awa_bgw worker of the current database to run every maintenance step now '
'(rotate and prune of each ring, promotion, rescue, folds), whatever their cadences; '
'true when a worker was signalled';

-- The leader key holder (h): a session other than awa_bgw's own workers that holds the
-- maintenance leader key of the worker's database (the public advisory lock
-- 4708303813012965710, DESIGN 1), the lowest pid first; a prepared transaction (NULL
-- pid) last. A worker that stays follower while no other worker leads is held off by
-- it. The query is the view's own (0.9 called awa.leader_key_holders, which 0.10
-- drops): the view reads pg_locks and pg_stat_activity as its reader, as that function
-- did, and its body names no internal function a reader would need USAGE to resolve
-- (docs/proposals/internal_schema.md).
CREATE OR REPLACE VIEW awa.maintenance_status AS
SELECT w.*, h.pid AS leader_key_holder_pid, h.holder AS leader_key_holder, t.ticks,
       t.failed_jobs_purged, t.purge_batches, b.prune_blocked_by, i.idle_since
  FROM awa_internal.maintenance_worker_status() w
  LEFT JOIN LATERAL (
        SELECT l.pid,
               -- the collation the function's text column had (usename is a name,
               -- whose collation is C)
               (CASE WHEN l.pid IS NULL THEN 'a prepared transaction'
                     ELSE format('pid %s (role %s, application %s, %s)', l.pid,
                                 coalesce(a.usename::text, '?'),
                                 coalesce(nullif(a.application_name, ''), '?'),
                                 coalesce(a.backend_type, '?')) END)
                   COLLATE pg_catalog."default" AS holder
          FROM pg_catalog.pg_locks l
          LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
           AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d
                              WHERE d.datname = w.database)
           AND l.classid::bigint = 4708303813012965710 >> 32
           AND l.objid::bigint = 4708303813012965710 & 4294967295
           AND NOT EXISTS (SELECT 1 FROM awa_internal.maintenance_worker_status() o
                            WHERE o.pid = l.pid)
         ORDER BY l.pid
         LIMIT 1) h ON true
  LEFT JOIN awa_internal.maintenance_worker_ticks() t ON t.pid = w.pid
  LEFT JOIN awa_internal.maintenance_worker_prune_blockers() b ON b.pid = w.pid
  LEFT JOIN awa_internal.maintenance_worker_idle() i ON i.pid = w.pid;

COMMENT ON VIEW awa.maintenance_status IS
'one row per awa_bgw maintenance worker of this cluster: state, leadership, per-ring '
'rotate and prune outcome counters, folds run and stood down (with the pin holder seen '
'at the last stand-down), rows folded and trimmed, the auto-flip check (its last verdict and '
'the start of its stable window), errors, a session that is not an awa_bgw worker '
'holding the leader key (leader_key_holder_pid, leader_key_holder), the passes of '
'the worker''s loop (ticks), the failed_jobs rows past the retention it deleted '
'(failed_jobs_purged) in how many transactions (purge_batches), and per ring whose last '
'prune was blocked the pids that held or awaited a lock on the children it wanted '
'(prune_blocked_by), since when the worker sleeps on its idle cadences (idle_since, NULL '
'while it runs its steps on their cadences); a database that has no worker because no background worker slot was '
'free is shown in state no_worker_slot (no pid; errors counts the launcher''s failed '
'attempts)';
