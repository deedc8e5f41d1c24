-- The status views for monitoring (docs/monitoring.md): readable by members of
-- pg_monitor, which reads the shared-memory status, the queue figures (through
-- SECURITY DEFINER functions: never the jobs themselves), and the ring ledgers
-- (generation, slot, rotated_at: what awa.horizon_pins dates a standby's xmin by).
-- pg_monitor includes pg_read_all_stats, so the views that read pg_stat_activity
-- (horizon_pins, maintenance_status) see every session. The helpers in awa_internal
-- need EXECUTE only: a view holds them by OID, so no USAGE on that schema is granted.
GRANT USAGE ON SCHEMA awa TO pg_monitor;
GRANT SELECT ON awa.maintenance_status, awa.ring_status, awa.horizon_pins,
    awa.queue_stats, awa.worker_stats, awa.worker_ring_stats TO pg_monitor;
GRANT EXECUTE ON FUNCTION awa_internal.maintenance_worker_status(),
    awa_internal.maintenance_worker_ticks(), awa_internal.maintenance_worker_prune_blockers(),
    awa_internal.maintenance_worker_idle(),
    awa_internal.ring_status_rows(), awa.horizon_pins_at(interval),
    awa.queue_stats_rows(interval), awa_internal.worker_stats_counters(),
    awa_internal.worker_ring_stats_counters() TO pg_monitor;
GRANT SELECT ON awa.queue_ring_rotations, awa.lease_ring_rotations,
    awa.claim_ring_rotations TO pg_monitor;
