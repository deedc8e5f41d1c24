-- The shards of 0.6-0.8: four lanes per (queue, priority), each held by an enqueuer to
-- its commit (docs/storage.md Part B §2). 0.9 has eight (api/0.9/lane_shards.sql).
CREATE OR REPLACE FUNCTION awa.lane_shards() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 4 $$;
