-- Claim in 0.9 (docs/storage.md Part A §A.3): a lane's position is its newest receipt
-- carrying a window; a claim takes the rest of that window, then opens the next one at
-- its own snapshot. Each receipt's run_lease is a fresh random token (§A.6), its
-- attempt number a column of its own. The probes are C (src/dataplane/windows.c). (0.6-0.8
-- claimed by lane positions and done entries: released/awa_bgw--0.8.sql.)

-- The lane's position: the window (win_lo NULL: nothing visible) and the last entry
-- taken from it (its txid and lane_seq), and the receipt's claim_seq; all NULL when
-- the lane has none.
CREATE OR REPLACE FUNCTION awa_internal.window_position(p_lane_id int, p_claim_slot int,
                                               p_claim_gen bigint, p_claim_slots int,
                                               OUT win_lo pg_snapshot, OUT win_hi pg_snapshot,
                                               OUT txid xid8, OUT lane_seq bigint,
                                               OUT claim_seq bigint)
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_window_position';

-- What a claim of the lane takes, in claim order, up to p_limit; the last row carries
-- the window to record. The caller holds the lane's claim lock, and its statement took
-- its snapshot after the lock. The entries' columns by name: no ready_generation since
-- 0.10 (tables/entry_fields.sql; the upgrade drops the 0.9 form first,
-- upgrade/0.9--0.10-claim.sql), and enqueued_at as coalesce(enqueued_at, created_at).
CREATE OR REPLACE FUNCTION awa_internal.window_claimables(p_lane_id int, p_limit int,
                                                 p_claim_slot int, p_claim_gen bigint,
                                                 p_claim_slots int, p_queue_slots int)
RETURNS TABLE (ready_slot int, lane_id int, lane_seq bigint,
               job_id bigint, queue text, priority smallint, kind text, args jsonb,
               attempt int, max_attempts int, created_at timestamptz,
               enqueued_at timestamptz, txid xid8, win_lo pg_snapshot, win_hi pg_snapshot)
LANGUAGE C STABLE STRICT ROWS 1
AS 'MODULE_PATHNAME', 'awa_window_claimables';

-- How many entries a claim of the lane with no limit would take (its available jobs),
-- counted without keeping any.
CREATE OR REPLACE FUNCTION awa_internal.window_available(p_lane_id int, p_claim_slot int,
                                                p_claim_gen bigint, p_claim_slots int,
                                                p_queue_slots int)
RETURNS bigint
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_window_available';

-- A hint, read without the lane's claim lock: whether a claim would take anything.
CREATE OR REPLACE FUNCTION awa_internal.window_has_work(p_lane_id int, p_claim_slot int,
                                               p_claim_gen bigint, p_claim_slots int,
                                               p_queue_slots int)
RETURNS boolean
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_window_has_work';

-- The lane's position at the current claim cursor.
CREATE OR REPLACE FUNCTION awa_internal.lane_window(p_lane_id int)
RETURNS TABLE (win_lo pg_snapshot, win_hi pg_snapshot, txid xid8, lane_seq bigint,
               claim_seq bigint)
LANGUAGE sql STABLE
AS $$
    SELECT p.* FROM awa.ring_cursor('claim') c,
           awa_internal.window_position(p_lane_id, c.slot, c.generation, awa_internal.ring_slot_count('claim')) p
$$;

-- Whether an entry of a lane with position p is unclaimed: in no earlier window (not
-- visible in win_lo) and not at or before the position in the current one.
CREATE OR REPLACE FUNCTION awa_internal.window_unclaimed(p_txid xid8, p_lane_seq bigint,
                                                p_lo pg_snapshot, p_hi pg_snapshot,
                                                p_pos_txid xid8, p_pos_seq bigint)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT p_hi IS NULL
        OR (NOT coalesce(pg_visible_in_snapshot(p_txid, p_lo), false)
            AND NOT (pg_visible_in_snapshot(p_txid, p_hi)
                     AND (p_txid, p_lane_seq) <= (p_pos_txid, p_pos_seq)))
$$;

-- Which claims of this transaction may leave work for a waiting claimer, and which
-- jobs it enqueued, per lane (src/dataplane/wait.c): read by its end, which wakes the claimers
-- waiting for the queue and clears the lane's empty mark (src/dataplane/lanemarks.c). An
-- enqueue notes the ready slot it wrote into at once, before it can commit: the
-- claims' window reads skip a ready child whose entries are all older than the window
-- (docs/storage.md A.12).
CREATE OR REPLACE FUNCTION awa_internal.note_enqueued(p_queue text, p_jobs int, p_lane int,
                                             p_ready_slot int) RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_note_enqueued';
CREATE OR REPLACE FUNCTION awa_internal.note_claimed(p_queue text, p_taken int, p_lane int) RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_note_claimed';

-- Empty-lane marks (docs/storage.md A.12, src/dataplane/lanemarks.c): lane_look gives the lane's
-- epoch, read before the statement that reads the lane takes its snapshot (NULL: the
-- lane is marked empty and nothing has given it work since); a claim that held the
-- lane's claim lock and took nothing marks it with lane_seen_empty.
CREATE OR REPLACE FUNCTION awa_internal.lane_look(p_lane int) RETURNS bigint
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_lane_look';
CREATE OR REPLACE FUNCTION awa_internal.lane_seen_empty(p_lane int, p_epoch bigint) RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_lane_seen_empty';

-- The claims waiting now (src/dataplane/wait.c).
CREATE OR REPLACE FUNCTION awa.claim_waiters()
RETURNS TABLE (pid int, database oid, waiting_since timestamptz, woken boolean)
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_claim_waiters';

-- The API's claim (src/dataplane/wait.c): without wait, awa_internal.claim_now; with
-- wait, a claim that finds nothing sleeps, holding no snapshot and no lock, until a
-- commit gives the queue work or wait has passed (docs/storage.md A.11).
CREATE OR REPLACE FUNCTION awa.claim(queue text, max_batch int DEFAULT 1,
                          deadline interval DEFAULT '5 minutes', wait interval DEFAULT NULL)
RETURNS SETOF awa.claimed_job
LANGUAGE C VOLATILE SECURITY DEFINER
AS 'MODULE_PATHNAME', 'awa_claim';

-- One claim of the queue's lanes, taking what is there now (src/dataplane/claim.c; called by
-- awa.claim, which runs as the extension's owner with its search_path). Per lane, in
-- claim order (priority, then the shards from this backend's own): the empty-lane mark
-- (awa_internal.lane_look), the lane's claim lock (tried; a busy lane is waited for up to 10 ms
-- only while nothing is taken and awa_internal.window_has_work says it has work), a snapshot
-- taken after the lock, awa_internal.window_claimables' entries, one receipt each (a fresh
-- awa_internal.lease_token(), claim_seq from awa.claim_seq in (txid, lane_seq) order, the window
-- on the receipt that ends the read), inserted into the current claim child; a lane that
-- gave nothing is unlocked (awa_internal.private_xact_unlock) and marked (awa_internal.lane_seen_empty),
-- one that gave jobs noted (awa_internal.note_claimed). Each of those steps can be run by hand.
CREATE OR REPLACE FUNCTION awa_internal.claim_now(queue text, max_batch int, deadline interval)
RETURNS SETOF awa.claimed_job
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_claim_now';

-- What prune, cancel and the counts ask of a lane's position (as in api/claim.sql):

-- Whether a ready entry is still unclaimed. The caller holds the lane's claim lock.
CREATE OR REPLACE FUNCTION awa.entry_unclaimed(p_entry awa.ready_entries) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT awa_internal.window_unclaimed(p_entry.txid, p_entry.lane_seq, p.win_lo, p.win_hi,
                                p.txid, p.lane_seq)
      FROM awa_internal.lane_window(p_entry.lane_id) p
$$;

-- The lane's unclaimed, uncancelled committed entries (queue_counts' available).
CREATE OR REPLACE FUNCTION awa_internal.lane_available(p_lane_id int) RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT awa_internal.window_available(p_lane_id, c.slot, c.generation, awa_internal.ring_slot_count('claim'),
                                awa_internal.ring_slot_count('queue'))
      FROM awa.ring_cursor('claim') c
$$;

-- Whether the queue slot holds an unclaimed, uncancelled entry of the lane (the queue
-- prune proof; p_top is not needed here).
CREATE OR REPLACE FUNCTION awa_internal.lane_unclaimed_in_slot(p_lane_id int, p_slot int, p_top bigint)
RETURNS boolean
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    p record;
    v_live boolean;
BEGIN
    SELECT * INTO p FROM awa_internal.lane_window(p_lane_id);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I r WHERE r.lane_id = $1 '
                   'AND awa_internal.window_unclaimed(r.txid, r.lane_seq, $2, $3, $4, $5) '
                   'AND NOT EXISTS (SELECT 1 FROM awa.%I d WHERE d.lane_id = r.lane_id '
                   'AND d.lane_seq = r.lane_seq AND d.run_lease = 0))',
                   'ready_entries_' || p_slot, 'done_entries_' || p_slot)
       INTO v_live USING p_lane_id, p.win_lo, p.win_hi, p.txid, p.lane_seq;
    RETURN v_live;
END
$$;

-- The receipts of a claim slot that are the position of one of the given lanes: the
-- lane's newest receipt with a window, when it is in this slot.
CREATE OR REPLACE FUNCTION awa_internal.claim_slot_positions(p_slot int, p_lanes int[])
RETURNS SETOF awa.lease_claims
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT t.* FROM (SELECT DISTINCT ON (c.lane_id) c.* FROM awa.%I c '
        '                  WHERE c.lane_id = ANY ($1) AND c.win_hi IS NOT NULL '
        '                  ORDER BY c.lane_id, c.claim_seq DESC) t '
        ' WHERE t.claim_seq = (SELECT p.claim_seq FROM awa_internal.lane_window(t.lane_id) p)',
        'lease_claims_' || p_slot)
      USING p_lanes;
END
$$;

-- Whether the lane's position is still needed: the queue ring holds an entry of the
-- lane (without a position, a lane's next window is its first, which holds every
-- entry still in the ring).
CREATE OR REPLACE FUNCTION awa_internal.lane_position_needed(p_lane_id int, p_top bigint) RETURNS boolean
LANGUAGE sql STABLE
AS $$ SELECT EXISTS (SELECT 1 FROM awa.ready_entries r WHERE r.lane_id = p_lane_id) $$;

-- The attempt number of a receipt (its run_lease is the attempt's token, §A.6).
CREATE OR REPLACE FUNCTION awa_internal.receipt_attempt(p_receipt awa.lease_claims) RETURNS int
LANGUAGE sql IMMUTABLE
AS $$ SELECT p_receipt.attempt $$;

-- A fresh attempt token: random, at least 2^62 (src/dataplane/tokens.c).
CREATE OR REPLACE FUNCTION awa_internal.lease_token() RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_lease_token';
