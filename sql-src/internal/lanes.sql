-- Lanes of 0.9 (docs/storage.md Part A §A.3, §A.5): enqueue takes no lock and creates
-- nothing. (0.6-0.8 locked a lane to enqueue: released/awa_bgw--0.8.sql.)

-- awa_bgw.max_queues (a superuser-only setting: a caller cannot raise it).
CREATE OR REPLACE FUNCTION awa_internal.max_queues() RETURNS int
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_max_queues';

-- Reserves a place for a new queue until this transaction ends, and returns how many
-- other registrations are in flight (src/dataplane/registry.c; -1: not counted).
CREATE OR REPLACE FUNCTION awa_internal.reserve_queue_registration() RETURNS int
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_reserve_queue_registration';

-- Registers the shards of (queue, priority) that are not registered yet (all of them for
-- a new queue or priority; shards 4-7 for a queue registered under 0.8, which had four);
-- SECURITY DEFINER so that an application role needs no INSERT on the registry. No lock
-- and no unique key: a concurrent first producer never waits for this one (both may
-- register; claimers read every lane, producers the lowest of their shard). A new queue
-- beyond awa_bgw.max_queues is refused (54000): the registration reserves its place
-- first, then counts the queues with a snapshot taken after it, plus the registrations
-- of other transactions in flight, so the limit is never overshot (docs/storage.md
-- A.5). In C since 0.10 (src/dataplane/lanes.c), with fresh reads, so that it holds at
-- every isolation level (A.18); the first enqueue of a (queue, priority) does the same.
CREATE OR REPLACE FUNCTION awa_internal.ensure_lanes(p_queue text, p_priority smallint) RETURNS void
LANGUAGE C SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_ensure_lanes';

-- The lane a producer writes into: its backend's shard of (queue, priority), the lowest
-- lane registered for it. Takes no lock.
CREATE OR REPLACE FUNCTION awa_internal.enqueue_lane(p_queue text, p_priority smallint) RETURNS int
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_lane int;
BEGIN
    SELECT min(l.lane_id) INTO v_lane FROM awa.queue_lanes l
     WHERE l.queue = p_queue AND l.priority = p_priority
       AND l.shard = pg_backend_pid() % awa_internal.lane_shards();
    IF v_lane IS NULL THEN
        PERFORM awa_internal.ensure_lanes(p_queue, p_priority);
        SELECT min(l.lane_id) INTO v_lane FROM awa.queue_lanes l
         WHERE l.queue = p_queue AND l.priority = p_priority
           AND l.shard = pg_backend_pid() % awa_internal.lane_shards();
    END IF;
    RETURN v_lane;
END
$$;

-- Appends ready entries for jobs of one (queue, priority), due now, into the current
-- queue slot (src/dataplane/enqueue.c): no lock; each entry records this transaction's xid (the
-- claim order, windows of snapshots, comes from it); lane_seq is taken in p_jobs' order.
-- The lane is awa_internal.enqueue_lane's (awa_internal.ensure_lanes registers it first when needed), the
-- slot awa.ring_cursor('queue')'s; then awa_internal.note_enqueued: the slot's txid bound rises
-- at once, and the commit wakes that many claimers waiting for the queue and clears the
-- lane's empty mark (src/dataplane/wait.c, src/dataplane/lanemarks.c).
CREATE OR REPLACE FUNCTION awa_internal.enqueue_ready(p_queue text, p_priority smallint, p_jobs awa.new_job[])
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_enqueue_ready';
