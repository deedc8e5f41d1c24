-- The passes of each worker's loop, whatever the worker's state: the column ticks of
-- awa.maintenance_status (added at the end: the view keeps its grants on upgrade).

CREATE OR REPLACE FUNCTION awa.maintenance_worker_ticks(OUT pid int, OUT ticks bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_ticks'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE VIEW awa.maintenance_status AS
SELECT w.*, h.pid AS leader_key_holder_pid, h.holder AS leader_key_holder, t.ticks
  FROM awa.maintenance_worker_status() w
  LEFT JOIN LATERAL (SELECT k.pid, k.holder FROM awa.leader_key_holders(w.database) k
                      LIMIT 1) h ON true
  LEFT JOIN awa.maintenance_worker_ticks() t ON t.pid = w.pid;

COMMENT ON VIEW awa.maintenance_status IS
'one row per awa_bgw maintenance worker of this cluster: state, leadership, per-ring '
'rotate and prune outcome counters, folds run and stood down (with the pin holder seen '
'at the last stand-down), rows folded and trimmed, the auto-flip check (its last verdict and '
'the start of its stable window), errors, a session that is not an awa_bgw worker '
'holding the leader key (leader_key_holder_pid, leader_key_holder), and the passes of '
'the worker''s loop (ticks)';
