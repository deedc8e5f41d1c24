-- 0.8 -> 0.9, after the 0.9 code: 0.9 has eight shards per (queue, priority) where 0.8
-- had four (api/0.9/lane_shards.sql). Every queue's missing shards are registered here,
-- so that the first 0.9 producer of a shard finds its lane; awa.ensure_lanes would also
-- register them on demand.
DO $$
DECLARE
    l record;
BEGIN
    FOR l IN SELECT DISTINCT queue, priority FROM awa.queue_lanes ORDER BY 1, 2 LOOP
        PERFORM awa.ensure_lanes(l.queue, l.priority);
    END LOOP;
END
$$;
