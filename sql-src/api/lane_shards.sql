-- The shards of 0.9 (docs/storage.md §A.3, §A.13): eight lanes per (queue, priority),
-- where 0.6-0.8 have four. A 0.9 producer takes no lane lock, so
-- the shards no longer bound concurrent producers; they bound concurrent claimers, each
-- of which holds the lane it takes from until it commits. With 8 clients claiming one job
-- per call, four lanes left a third of the claims finding their first lane busy.
-- src/dataplane/probes.h spells the same number for C (AWA_LANE_SHARDS). A queue registered
-- under 0.8 gets its missing shards from awa_internal.ensure_lanes (internal/lanes.sql).
CREATE OR REPLACE FUNCTION awa_internal.lane_shards() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 8 $$;
