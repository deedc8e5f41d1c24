-- Claim (docs/storage.md §4, §5): lane positions from receipts, candidates from the
-- ready slots between the position and the cursor, receipts appended.

-- The per-slot probes of claim, in C (src/dataplane.c): direct index scans on the
-- named children, no planning, the same children locked as the EXECUTEs they replaced.
-- Cursors and slot counts are arguments (the 0.6 data plane reads its cursor from the
-- compat columns).

-- The lane's newest receipt, claim children from p_claim_slot backwards, first hit:
-- (0, NULL) when the lane has never been claimed from.
CREATE OR REPLACE FUNCTION awa.claim_position(p_lane_id int, p_claim_slot int,
                                              p_claim_gen bigint, p_claim_slots int,
                                              OUT lane_seq bigint,
                                              OUT ready_generation bigint)
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_claim_position';

-- The queue generation of the lane's newest entry (its head sequence, see
-- ensure_lanes); NULL when nothing was ever enqueued in it. Reads no partition.
CREATE OR REPLACE FUNCTION awa.lane_head_generation(p_lane_id int) RETURNS bigint
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_lane_head_generation';

-- What a claim of the lane takes: its position (claim_position), then its unclaimed,
-- uncancelled entries above it in lane order, up to p_limit, from the ready slots of
-- the position's generation (or the oldest live one) up to the lane's head generation,
-- each slot read by name for its own generation (so a stale p_queue_gen can only
-- delay an entry, never reorder or skip one); nothing is read when the head is older
-- than every live slot. As lane_position + lane_candidates. The caller holds the
-- lane's claim lock, and the calling statement's snapshot was taken after it.
CREATE OR REPLACE FUNCTION awa.lane_claimables(p_lane_id int, p_limit int,
                                               p_claim_slot int, p_claim_gen bigint,
                                               p_claim_slots int, p_queue_gen bigint,
                                               p_queue_slots int)
RETURNS SETOF awa.ready_entries
LANGUAGE C STABLE STRICT ROWS 1
AS 'MODULE_PATHNAME', 'awa_lane_claimables';

-- A hint, read without the lane's claim lock: whether the lane's newest committed
-- entry is above its position (false when its head is older than every live slot).
-- A claimer locks only lanes that look busy with work; what it takes is decided under
-- the lock (lane_claimables).
CREATE OR REPLACE FUNCTION awa.lane_has_work(p_lane_id int, p_claim_slot int,
                                             p_claim_gen bigint, p_claim_slots int,
                                             p_queue_gen bigint, p_queue_slots int)
RETURNS boolean
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_lane_has_work';

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
BEGIN
    IF p_claim_gen IS NULL THEN
        SELECT * INTO v_cur FROM awa.ring_cursor('claim');
    ELSE
        SELECT p_claim_slot AS slot, p_claim_gen AS generation INTO v_cur;
    END IF;
    SELECT p.lane_seq, p.ready_generation
      INTO lane_position.lane_seq, lane_position.ready_generation
      FROM awa.claim_position(p_lane_id, v_cur.slot, v_cur.generation,
                              awa.ring_slot_count('claim')) p;
END
$$;

-- (Not on the hot path any more: claim uses lane_claimables.) Unclaimed, uncancelled
-- entries of a lane above p_after, in lane order, from the
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
    v_queue_gen bigint;
    v_hint record;
    v_key bigint;
    v_now timestamptz;
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_claim(claim.queue, claim.max_batch, claim.deadline);
    -- the queue generation once per claim (a hint: lane_claimables filters on the
    -- generation of each slot it reads); the claim cursor is read under each lane's
    -- lock, in the statement that looks the lane's position up and appends the
    -- receipts, whose snapshot is taken after the lock
    SELECT c.generation INTO v_queue_gen FROM awa.ring_cursor('queue') c;
    SELECT * INTO v_hint FROM awa.ring_cursor('claim');   -- for the hints only
    FOR v_lane IN
        SELECT l.lane_id FROM awa.queue_lanes l
         WHERE l.queue = claim.queue
         ORDER BY l.priority, (l.shard + awa.lane_shards()
                               - pg_backend_pid() % awa.lane_shards()) % awa.lane_shards()
    LOOP
        EXIT WHEN v_left <= 0;
        -- lock only a lane that looks as if it had work (its head is in the ring and
        -- its newest entry above its position, read without the lock: a hint)
        CONTINUE WHEN NOT awa.lane_has_work(v_lane, v_hint.slot, v_hint.generation,
                                            awa.ring_slot_count('claim'), v_queue_gen,
                                            awa.ring_slot_count('queue'));
        v_key := awa.claim_lock_key(v_lane);
        IF NOT awa.private_try_xact_lock(v_key) THEN
            -- busy with work: before anything is claimed, wait for its holder's commit
            -- a little (polling, never queued: no deadlock), rather than come back empty
            CONTINUE WHEN v_left < claim.max_batch
                       OR NOT awa.private_try_xact_lock_for(v_key, 10);
        END IF;
        v_now := clock_timestamp();
        RETURN QUERY
        INSERT INTO awa.lease_claims AS c (claim_slot, claim_generation, job_id, run_lease,
                                           lane_id, lane_seq, ready_slot, ready_generation,
                                           queue, priority, kind, args, max_attempts,
                                           created_at, claimed_at, deadline_at)
        SELECT k.slot, k.generation, r.job_id, r.attempt, r.lane_id, r.lane_seq,
               r.ready_slot, r.ready_generation, r.queue, r.priority, r.kind, r.args,
               r.max_attempts, r.created_at, v_now, v_now + claim.deadline
          FROM awa.ring_cursor('claim') k,
               awa.lane_claimables(v_lane, v_left, k.slot, k.generation,
                                   awa.ring_slot_count('claim'), v_queue_gen,
                                   awa.ring_slot_count('queue')) r
         ORDER BY r.lane_seq
        RETURNING c.job_id, c.run_lease, c.queue, c.kind, c.args, c.priority, c.run_lease,
                  c.max_attempts, c.created_at, c.claimed_at, c.deadline_at;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_left := v_left - v_rows;
    END LOOP;
END
$$;

-- What prune, cancel and the counts ask of a lane's position (api/0.9/claim.sql answers
-- the same questions from snapshot windows):

-- Whether a ready entry is still unclaimed: above its lane's position. The caller
-- holds the lane's claim lock.
CREATE OR REPLACE FUNCTION awa.entry_unclaimed(p_entry awa.ready_entries) RETURNS boolean
LANGUAGE sql STABLE
AS $$ SELECT p_entry.lane_seq > p.lane_seq FROM awa.lane_position(p_entry.lane_id) p $$;

-- The lane's unclaimed, uncancelled entries (queue_counts' available).
CREATE OR REPLACE FUNCTION awa.lane_available(p_lane_id int) RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT count(*)
      FROM awa.lane_position(p_lane_id) p,
           LATERAL awa.lane_candidates(p_lane_id, p.lane_seq, p.ready_generation, 2147483647) c
$$;

-- Whether the queue slot holds an unclaimed, uncancelled entry of the lane (the queue
-- prune proof); p_top is the lane's highest lane_seq in the slot.
CREATE OR REPLACE FUNCTION awa.lane_unclaimed_in_slot(p_lane_id int, p_slot int, p_top bigint)
RETURNS boolean
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_pos bigint := (SELECT p.lane_seq FROM awa.lane_position(p_lane_id) p);
    v_live boolean;
BEGIN
    IF p_top <= v_pos THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I r WHERE r.lane_id = $1 '
                   'AND r.lane_seq > $2 AND NOT EXISTS (SELECT 1 FROM awa.%I d '
                   'WHERE d.lane_id = r.lane_id AND d.lane_seq = r.lane_seq '
                   'AND d.run_lease = 0))',
                   'ready_entries_' || p_slot, 'done_entries_' || p_slot)
       INTO v_live USING p_lane_id, v_pos;
    RETURN v_live;
END
$$;

-- The receipts of a claim slot that are the position of one of the given lanes (claim
-- prune carries them forward): a lane's position is its newest receipt, so in a slot
-- it can only be the lane's highest lane_seq.
CREATE OR REPLACE FUNCTION awa.claim_slot_positions(p_slot int, p_lanes int[])
RETURNS SETOF awa.lease_claims
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT t.* FROM (SELECT DISTINCT ON (c.lane_id) c.* FROM awa.%I c '
        '                  WHERE c.lane_id = ANY ($1) ORDER BY c.lane_id, c.lane_seq DESC) t '
        ' WHERE t.lane_seq = (SELECT p.lane_seq FROM awa.lane_position(t.lane_id) p)',
        'lease_claims_' || p_slot)
      USING p_lanes;
END
$$;

-- Whether the lane's position (p_top, the lane_seq of its receipt) is still needed:
-- the queue ring holds an entry of the lane at or below it.
CREATE OR REPLACE FUNCTION awa.lane_position_needed(p_lane_id int, p_top bigint) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT EXISTS (SELECT 1 FROM awa.ready_entries r
                    WHERE r.lane_id = p_lane_id AND r.lane_seq <= p_top)
$$;

-- The attempt number of a receipt: its run_lease before 0.9 (api/0.9/claim.sql: the
-- attempt column, run_lease being the attempt's token).
CREATE OR REPLACE FUNCTION awa.receipt_attempt(p_receipt awa.lease_claims) RETURNS int
LANGUAGE sql IMMUTABLE
AS $$ SELECT p_receipt.run_lease $$;
