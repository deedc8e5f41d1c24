-- After the claim (docs/storage.md §5): complete, fail, heartbeat, cancel. Every call
-- carries (job_id, run_lease) and first takes that attempt's lock; a call whose
-- attempt is already closed (completed, rescued, cancelled), or whose run_lease names
-- no attempt, changes nothing and returns false. run_lease is a bigint: in 0.9 the
-- random token the claim drew (§A.6), before it the attempt number; the attempt number
-- of a receipt is awa_internal.receipt_attempt (api/claim.sql).

-- The still-open receipts of a set of attempts, in C (src/dataplane/probes.c): for each
-- distinct attempt, its receipt in the newest claim child holding one (children probed
-- from p_claim_slot backwards by (job_id, run_lease), each by name, while an attempt
-- is still unfound), returned when that child holds no closure of it. The caller holds
-- the attempts' locks (prune cannot move them) and passes the claim cursor.
CREATE OR REPLACE FUNCTION awa_internal.open_receipts_at(p_job_ids bigint[], p_run_leases bigint[],
                                                p_claim_slot int, p_claim_gen bigint,
                                                p_claim_slots int)
RETURNS SETOF awa.lease_claims
LANGUAGE C STABLE STRICT ROWS 1
AS 'MODULE_PATHNAME', 'awa_open_receipts_at';

-- The attempt's receipt if it is still open (no closure), probing claim children from
-- the current slot backwards; the caller holds the attempt lock.
CREATE OR REPLACE FUNCTION awa_internal.open_receipt(p_job_id bigint, p_run_lease bigint)
RETURNS SETOF awa.lease_claims
LANGUAGE sql STABLE
AS $$
    SELECT r.* FROM awa.ring_cursor('claim') c,
           awa_internal.open_receipts_at(ARRAY[p_job_id], ARRAY[p_run_lease], c.slot, c.generation,
                                awa_internal.ring_slot_count('claim')) r
$$;


-- The still-open receipts of a set of attempts (open_receipts_at at the current claim
-- cursor). The caller holds the attempts' locks.
CREATE OR REPLACE FUNCTION awa_internal.open_receipts(p_job_ids bigint[], p_run_leases bigint[])
RETURNS awa.lease_claims[]
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(array_agg(r), '{}')
      FROM awa.ring_cursor('claim') k,
           awa_internal.open_receipts_at(p_job_ids, p_run_leases, k.slot, k.generation,
                                awa_internal.ring_slot_count('claim')) r
$$;


-- Retry backoff: 2^attempt seconds, at most an hour.
CREATE OR REPLACE FUNCTION awa_internal.retry_backoff(p_attempt int) RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT make_interval(secs => least(power(2, least(p_attempt, 12)), 3600)) $$;

-- The args of an attempt whose receipt does not carry them (0.10, tables/held_args.sql,
-- docs/storage.md A.20): its ready entry's, or, once prune took the entry's slot, the
-- copy the queue ring holds while the attempt is open. In C (src/dataplane/heldargs.c),
-- as the fail path in C reads them: the queue families are locked first and read as a
-- fresh read, a snapshot taken after the locks (a prune's TRUNCATE is not MVCC-safe, and
-- a snapshot from before its commit would see the slot empty and not the copy it made),
-- at every isolation level and with no predicate lock. The entry is found by the
-- claim-order key its receipt carries (p_lane_id, p_txid, p_lane_seq), on the btree
-- every entry has; without a key, by job id. The callers hold the attempt
-- open, so the args are there; missing ones are a broken invariant, refused (XX001)
-- rather than retried without args.
CREATE OR REPLACE FUNCTION awa_internal.attempt_args(p_job_id bigint, p_attempt int,
                                                      p_lane_id int DEFAULT NULL,
                                                      p_txid xid8 DEFAULT NULL,
                                                      p_lane_seq bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_attempt_args_sql';

-- Ends an open attempt as failed: retried (deferred by retry_in or the backoff) while
-- attempts remain, else moved to failed_jobs. Shared by fail() and rescue. The args come
-- from the receipt when it carries them, else from the queue ring (attempt_args), read
-- after the closure as the C path (src/dataplane/attempts.c) does.
CREATE OR REPLACE FUNCTION awa_internal.fail_attempt(p_receipt awa.lease_claims, p_outcome text, p_error text,
                                 p_retry_in interval)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_attempt int := awa_internal.receipt_attempt(p_receipt);
    v_retried boolean := v_attempt < p_receipt.max_attempts;
    v_args jsonb;
BEGIN
    IF v_retried THEN
        PERFORM awa_internal.close_attempts(ARRAY[p_receipt], CASE WHEN p_outcome = 'failed'
                                                          THEN 'retried' ELSE p_outcome END,
                                   NULL, NULL);
    ELSE
        PERFORM awa_internal.close_attempts(ARRAY[p_receipt], p_outcome, 'failed', p_error);
    END IF;
    v_args := coalesce(p_receipt.args, awa_internal.attempt_args(p_receipt.job_id, v_attempt,
        p_receipt.lane_id, p_receipt.txid, p_receipt.lane_seq));
    IF v_retried THEN
        PERFORM awa_internal.enqueue_jobs(p_receipt.queue, ARRAY[ROW(1, p_receipt.job_id,
            p_receipt.kind, v_args, p_receipt.priority,
            now() + coalesce(p_retry_in, awa_internal.retry_backoff(v_attempt)),
            v_attempt + 1, p_receipt.max_attempts,
            p_receipt.created_at, p_error)::awa.new_job]);
    ELSE
        INSERT INTO awa.failed_jobs (job_id, queue, priority, kind, args, attempts,
                                     max_attempts, error, created_at)
        VALUES (p_receipt.job_id, p_receipt.queue, p_receipt.priority, p_receipt.kind,
                v_args, v_attempt, p_receipt.max_attempts, p_error,
                p_receipt.created_at)
        ON CONFLICT (job_id) DO NOTHING;
    END IF;
END
$$;


-- A job's ready entries that the statement's snapshot sees, every queue slot read by the
-- job-id lookup the C readers share (src/dataplane/readyof.c), so that awa.job and
-- awa.cancel cost the same whatever the planner would choose and whatever index finds
-- an entry by job id; at SERIALIZABLE with no predicate lock (docs/storage.md A.18).
-- The caller holds the ring families (hold_ring_families).
CREATE OR REPLACE FUNCTION awa_internal.ready_entries_of(p_job_id bigint)
RETURNS SETOF awa.ready_entries
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_ready_entries_of';

-- The still-claimable ready entries of a job, if any (every queue slot: cancel is rare;
-- the hot paths never do this).
CREATE OR REPLACE FUNCTION awa_internal.find_ready_entry(p_job_id bigint) RETURNS SETOF awa.ready_entries
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r.* FROM awa_internal.ready_entries_of(p_job_id) r
     WHERE NOT EXISTS (SELECT 1 FROM awa.done_entries d
                        WHERE d.ready_slot = r.ready_slot AND d.lane_id = r.lane_id
                          AND d.lane_seq = r.lane_seq AND d.run_lease = 0)
$$;

-- The job's open receipt, whatever its run_lease.
CREATE OR REPLACE FUNCTION awa_internal.find_open_receipt(p_job_id bigint) RETURNS SETOF awa.lease_claims
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa_internal.ring_slot_count('claim');
    s int;
BEGIN
    FOR s IN 0 .. v_n - 1 LOOP
        RETURN QUERY EXECUTE format(
            'SELECT c.* FROM awa.%I c WHERE c.job_id = $1 AND NOT EXISTS '
            '(SELECT 1 FROM awa.%I x WHERE x.job_id = c.job_id AND x.run_lease = c.run_lease)',
            'lease_claims_' || s, 'lease_claim_closures_' || s)
          USING p_job_id;
    END LOOP;
END
$$;

