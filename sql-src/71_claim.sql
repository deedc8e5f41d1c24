-- Claim (docs/storage.md §4, §5): lane positions from receipts, candidates from the
-- ready slots between the position and the cursor, receipts appended.

-- The lane's position: its newest receipt, probing claim children from the current
-- slot backwards (each by name). (0, NULL) when the lane has never been claimed from.
-- Callers hold the lane's claim lock, so claim prune cannot carry it away meanwhile.
CREATE OR REPLACE FUNCTION awa.lane_position(p_lane_id int, p_claim_slot int DEFAULT NULL,
                                  p_claim_gen bigint DEFAULT NULL,
                                  OUT lane_seq bigint, OUT ready_generation bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_cur record;
    v_n int := awa.ring_slot_count('claim');
    k int;
BEGIN
    IF p_claim_gen IS NULL THEN
        SELECT * INTO v_cur FROM awa.ring_cursor('claim');
    ELSE
        SELECT p_claim_slot AS slot, p_claim_gen AS generation INTO v_cur;
    END IF;
    FOR k IN 0 .. least(v_cur.generation, v_n - 1) LOOP
        EXECUTE format('SELECT c.lane_seq, c.ready_generation FROM awa.%I c '
                       'WHERE c.lane_id = $1 ORDER BY c.lane_seq DESC LIMIT 1',
                       'lease_claims_' || ((v_cur.slot - k + v_n) % v_n))
           INTO lane_seq, ready_generation USING p_lane_id;
        IF lane_seq IS NOT NULL THEN
            RETURN;
        END IF;
    END LOOP;
    lane_seq := 0;
END
$$;

-- Unclaimed, uncancelled entries of a lane above p_after, in lane order, from the
-- ready slots of generation p_from_gen (or the oldest live one) up to the lane's head
-- generation (its newest entry's; see ensure_lanes), each slot read by name and
-- filtered on its generation (so a stale p_queue_gen can only delay an entry, never
-- reorder or skip one). Nothing is
-- read when the head is older than every live slot. Unclaimed entries are always within
-- the last slot_count generations: prune never truncates a slot holding one, so the
-- ring cannot turn past it.
CREATE OR REPLACE FUNCTION awa.lane_candidates(p_lane_id int, p_after bigint, p_from_gen bigint,
                                    p_limit int, p_queue_gen bigint DEFAULT NULL)
RETURNS SETOF awa.ready_entries
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa.ring_slot_count('queue');
    v_head bigint := pg_sequence_last_value(awa.lane_head_seq(p_lane_id));
    v_gen bigint := p_queue_gen;
    v_got bigint := 0;
    v_rows bigint;
    g bigint;
BEGIN
    IF v_head IS NULL THEN
        RETURN;                 -- nothing was ever enqueued in this lane
    END IF;
    IF v_gen IS NULL THEN
        SELECT c.generation INTO v_gen FROM awa.ring_cursor('queue') c;
    END IF;
    FOR g IN greatest(coalesce(p_from_gen, 0), v_gen - v_n + 1, 0)
             .. least(v_head, v_gen) LOOP
        EXIT WHEN v_got >= p_limit;
        RETURN QUERY EXECUTE format(
            'SELECT r.* FROM awa.%I r WHERE r.lane_id = $1 AND r.lane_seq > $2 '
            'AND r.ready_generation = $4 '
            'AND NOT EXISTS (SELECT 1 FROM awa.%I d WHERE d.lane_id = r.lane_id '
            'AND d.lane_seq = r.lane_seq AND d.run_lease = 0) '
            'ORDER BY r.lane_seq LIMIT $3',
            'ready_entries_' || (g % v_n), 'done_entries_' || (g % v_n))
          USING p_lane_id, p_after, p_limit - v_got, g;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_got := v_got + v_rows;
    END LOOP;
END
$$;

-- Whether a lane may hold unclaimed entries at all: its head generation is still in
-- the ring. Reads a sequence, no partition.
CREATE OR REPLACE FUNCTION awa.lane_may_have_work(p_lane_id int, p_queue_gen bigint) RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(pg_sequence_last_value(awa.lane_head_seq(p_lane_id))
                    > p_queue_gen - awa.ring_slot_count('queue'), false)
$$;

-- Claims from one lane whose claim lock the caller holds; returns the claimed jobs.
CREATE OR REPLACE FUNCTION awa.claim_lane(p_lane_id int, p_limit int, p_deadline interval,
                               p_claim_slot int, p_claim_gen bigint, p_queue_gen bigint)
RETURNS SETOF awa.claimed_job
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pos record;
    v_now timestamptz := clock_timestamp();
BEGIN
    SELECT * INTO v_pos FROM awa.lane_position(p_lane_id, p_claim_slot, p_claim_gen);
    RETURN QUERY
    INSERT INTO awa.lease_claims AS c (claim_slot, claim_generation, job_id, run_lease,
                                       lane_id, lane_seq, ready_slot, ready_generation,
                                       queue, priority, kind, args, max_attempts,
                                       created_at, claimed_at, deadline_at)
    SELECT p_claim_slot, p_claim_gen, r.job_id, r.attempt, r.lane_id, r.lane_seq,
           r.ready_slot, r.ready_generation, r.queue, r.priority, r.kind, r.args,
           r.max_attempts, r.created_at, v_now, v_now + p_deadline
      FROM awa.lane_candidates(p_lane_id, v_pos.lane_seq, v_pos.ready_generation, p_limit,
                               p_queue_gen) r
     ORDER BY r.lane_seq
    RETURNING c.job_id, c.run_lease, c.queue, c.kind, c.args, c.priority, c.run_lease,
              c.max_attempts, c.created_at, c.claimed_at, c.deadline_at;
END
$$;

-- claim(queue, max_batch, deadline): lanes in priority order, shards starting from
-- this backend's; a lane whose claim lock is busy is left to its holder.
CREATE OR REPLACE FUNCTION awa.claim(queue text, max_batch int DEFAULT 1,
                          deadline interval DEFAULT '5 minutes')
RETURNS SETOF awa.claimed_job
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_left int := claim.max_batch;
    v_lane int;
    v_rows int;
    v_claim record;
    v_queue_gen bigint;
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_name('queue', claim.queue);
    IF claim.max_batch IS NULL OR claim.max_batch NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_batch % is out of range', coalesce(claim.max_batch::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Claim between 1 and 1000 jobs at a time.';
    END IF;
    IF claim.deadline <= interval '0' THEN
        RAISE EXCEPTION 'deadline must be positive or NULL, not %', claim.deadline
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'NULL means no deadline: liveness by heartbeat only.';
    END IF;
    -- the queue generation once per claim (a hint: lane_candidates filters on the
    -- generation of each slot it reads); the claim cursor is read under each lane's
    -- lock, because the lane's position is looked up from it
    SELECT c.generation INTO v_queue_gen FROM awa.ring_cursor('queue') c;
    FOR v_lane IN
        SELECT l.lane_id FROM awa.queue_lanes l
         WHERE l.queue = claim.queue
         ORDER BY l.priority, (l.shard + awa.lane_shards()
                               - pg_backend_pid() % awa.lane_shards()) % awa.lane_shards()
    LOOP
        EXIT WHEN v_left <= 0;
        CONTINUE WHEN NOT awa.lane_may_have_work(v_lane, v_queue_gen);
        CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtextextended('awa.claim:' || v_lane, 0));
        SELECT * INTO v_claim FROM awa.ring_cursor('claim');
        RETURN QUERY SELECT * FROM awa.claim_lane(v_lane, v_left, claim.deadline,
                                                  v_claim.slot, v_claim.generation, v_queue_gen);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_left := v_left - v_rows;
    END LOOP;
END
$$;
