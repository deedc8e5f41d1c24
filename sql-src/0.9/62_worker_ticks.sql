-- The passes of each worker's loop, whatever the worker's state, and its failed_jobs
-- retention: the columns ticks, failed_jobs_purged and purge_batches of
-- awa.maintenance_status (added at the end: the view keeps its grants on upgrade).

CREATE OR REPLACE FUNCTION awa.maintenance_worker_ticks(OUT pid int, OUT ticks bigint,
    OUT failed_jobs_purged bigint, OUT purge_batches bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_ticks'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE VIEW awa.maintenance_status AS
SELECT w.*, h.pid AS leader_key_holder_pid, h.holder AS leader_key_holder, t.ticks,
       t.failed_jobs_purged, t.purge_batches
  FROM awa.maintenance_worker_status() w
  LEFT JOIN LATERAL (SELECT k.pid, k.holder FROM awa.leader_key_holders(w.database) k
                      LIMIT 1) h ON true
  LEFT JOIN awa.maintenance_worker_ticks() t ON t.pid = w.pid;

COMMENT ON VIEW awa.maintenance_status IS
'one row per awa_bgw maintenance worker of this cluster: state, leadership, per-ring '
'rotate and prune outcome counters, folds run and stood down (with the pin holder seen '
'at the last stand-down), rows folded and trimmed, the auto-flip check (its last verdict and '
'the start of its stable window), errors, a session that is not an awa_bgw worker '
'holding the leader key (leader_key_holder_pid, leader_key_holder), the passes of '
'the worker''s loop (ticks), and the failed_jobs rows past the retention it deleted '
'(failed_jobs_purged) in how many transactions (purge_batches); a database that has no '
'worker because no background worker slot was free is shown in state no_worker_slot '
'(no pid; errors counts the launcher''s failed attempts)';
