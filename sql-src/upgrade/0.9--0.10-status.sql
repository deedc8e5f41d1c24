-- 0.9 -> 0.10: awa.maintenance_status reads the leader key's holder itself
-- (status/worker_ticks.sql, run just before this), so the function it called goes, with
-- its grants to pg_monitor and awa_monitor. It ran as its invoker and named an internal
-- function, which a reader could not resolve once the internals leave schema awa
-- (docs/proposals/internal_schema.md).
DROP FUNCTION awa.leader_key_holders(name);
