-- Lanes of 0.6 to 0.8 (docs/storage.md Part B §2): registration with a head sequence
-- per lane, and the enqueue lock of a lane held to commit, under which lane_seq order
-- is commit order. 0.9 replaces this piece (internal/0.9/lanes.sql): no lock, no sequence.

-- Registers the shards of (queue, priority) once; SECURITY DEFINER so that an
-- application role needs no INSERT on the registry. Each lane also gets a head
-- sequence, awa.lane_<id>_head, which every enqueue sets (under the lane lock) to the
-- queue-ring generation of the lane's newest entry: a claimer reads it without
-- touching any partition, and skips a lane whose newest entry is in a slot that has
-- already been pruned (so nothing in it can be unclaimed). The sequences are created
-- at run time, so they are not extension members: pg_dump keeps them with their values,
-- and DROP EXTENSION leaves them in schema awa (a later install reuses them).
CREATE OR REPLACE FUNCTION awa.ensure_lanes(p_queue text, p_priority smallint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET client_min_messages = warning
AS $$
DECLARE
    v_id int;
    s int;
BEGIN
    IF EXISTS (SELECT 1 FROM awa.queue_lanes WHERE queue = p_queue AND priority = p_priority) THEN
        RETURN;
    END IF;
    PERFORM awa.private_xact_lock(hashtextextended('awa.lane_registry', 0));
    IF EXISTS (SELECT 1 FROM awa.queue_lanes WHERE queue = p_queue AND priority = p_priority) THEN
        RETURN;
    END IF;
    FOR s IN 0 .. awa.lane_shards() - 1 LOOP
        v_id := nextval('awa.queue_lane_id_seq');
        EXECUTE format('CREATE SEQUENCE IF NOT EXISTS awa.%I AS bigint MINVALUE 0 START 0',
                       'lane_' || v_id || '_head');
        -- one left behind by an earlier install starts over as "never enqueued"
        PERFORM setval(awa.lane_head_seq(v_id), 0, false);
        INSERT INTO awa.queue_lanes (lane_id, queue, priority, shard)
        VALUES (v_id, p_queue, p_priority, s);
    END LOOP;
END
$$;

-- The lane's head sequence.
CREATE OR REPLACE FUNCTION awa.lane_head_seq(p_lane_id int) RETURNS regclass
LANGUAGE sql STABLE
AS $$ SELECT format('awa.%I', 'lane_' || p_lane_id || '_head')::regclass $$;

-- The key of a lane's enqueue lock (a private lock, internal/private_locks.sql).
CREATE OR REPLACE FUNCTION awa.enqueue_lock_key(p_lane_id int) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.enqueue:' || p_lane_id::text, 0) $$;

-- Takes the enqueue lock of one shard of (queue, priority) and returns its lane; held
-- to commit, so lane_seq order is commit order in the lane. A transaction keeps using
-- the lane it already holds (asked of the lock manager: nothing a caller can set says
-- which), so it never holds two shards of one pair (no lock cycle between two such
-- transactions). Others start from their backend's own shard (so one session's jobs
-- stay in one lane, in order) and take the first free one; concurrent producers spread
-- over the shards, so several claimers can drain them at once. Only when every shard
-- is busy does it wait, for its own.
CREATE OR REPLACE FUNCTION awa.lock_enqueue_lane(p_queue text, p_priority smallint) RETURNS int
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_lanes int[];
    v_n int;
    v_start int;
    v_lane int;
    i int;
BEGIN
    SELECT array_agg(lane_id ORDER BY shard) INTO v_lanes
      FROM awa.queue_lanes WHERE queue = p_queue AND priority = p_priority;
    IF v_lanes IS NULL THEN
        PERFORM awa.ensure_lanes(p_queue, p_priority);
        SELECT array_agg(lane_id ORDER BY shard) INTO v_lanes
          FROM awa.queue_lanes WHERE queue = p_queue AND priority = p_priority;
    END IF;
    FOREACH v_lane IN ARRAY v_lanes LOOP
        IF awa.private_xact_lock_held(awa.enqueue_lock_key(v_lane)) THEN
            RETURN v_lane;
        END IF;
    END LOOP;
    v_n := cardinality(v_lanes);
    v_start := pg_backend_pid() % v_n;
    FOR i IN 0 .. v_n - 1 LOOP
        v_lane := v_lanes[(v_start + i) % v_n + 1];
        IF awa.private_try_xact_lock(awa.enqueue_lock_key(v_lane)) THEN
            RETURN v_lane;
        END IF;
    END LOOP;
    v_lane := v_lanes[v_start + 1];
    PERFORM awa.private_xact_lock(awa.enqueue_lock_key(v_lane));
    RETURN v_lane;
END
$$;

-- A job on its way into the ring (enqueue, batch, promotion, retry).
-- Appends ready entries for jobs of one (queue, priority), due now, into the current
-- queue slot, under one lane lock. The cursor is read after the lock, in its own
-- statement; lane_seq is taken in job_id order.
CREATE OR REPLACE FUNCTION awa.enqueue_ready(p_queue text, p_priority smallint, p_jobs awa.new_job[])
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_lane int := awa.lock_enqueue_lane(p_queue, p_priority);
    v_cur record;
BEGIN
    SELECT * INTO v_cur FROM awa.ring_cursor('queue');
    INSERT INTO awa.ready_entries (ready_slot, ready_generation, lane_id, lane_seq, job_id,
                                   queue, priority, kind, args, attempt, max_attempts,
                                   created_at)
    SELECT v_cur.slot, v_cur.generation, v_lane, nextval('awa.lane_seq'), j.job_id,
           p_queue, p_priority, j.kind, j.args, j.attempt, j.max_attempts, j.created_at
      FROM (SELECT * FROM unnest(p_jobs) ORDER BY job_id) j;
    -- setval writes WAL each time: only when the head moves (only holders of the
    -- lane lock move it, so it cannot change between the read and the write)
    IF awa.lane_head_generation(v_lane) IS DISTINCT FROM v_cur.generation THEN
        PERFORM setval(awa.lane_head_seq(v_lane), v_cur.generation);
    END IF;
END
$$;
