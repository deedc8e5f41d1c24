-- After the claim (docs/storage.md §5): complete, fail, heartbeat, cancel. Every call
-- carries (job_id, run_lease) and first takes that attempt's lock; a call whose
-- attempt is already closed (completed, rescued, cancelled), or whose run_lease names
-- no attempt, changes nothing and returns false. run_lease is a bigint: in 0.9 the
-- random token the claim drew (§A.6), before it the attempt number; the attempt number
-- of a receipt is awa.receipt_attempt (api/claim.sql).

-- The still-open receipts of a set of attempts, in C (src/dataplane.c): for each
-- distinct attempt, its receipt in the newest claim child holding one (children probed
-- from p_claim_slot backwards by (job_id, run_lease), each by name, while an attempt
-- is still unfound), returned when that child holds no closure of it. The caller holds
-- the attempts' locks (prune cannot move them) and passes the claim cursor.
CREATE OR REPLACE FUNCTION awa.open_receipts_at(p_job_ids bigint[], p_run_leases bigint[],
                                                p_claim_slot int, p_claim_gen bigint,
                                                p_claim_slots int)
RETURNS SETOF awa.lease_claims
LANGUAGE C STABLE STRICT ROWS 1
AS 'MODULE_PATHNAME', 'awa_open_receipts_at';

-- The attempt's receipt if it is still open (no closure), probing claim children from
-- the current slot backwards; the caller holds the attempt lock.
CREATE OR REPLACE FUNCTION awa.open_receipt(p_job_id bigint, p_run_lease bigint)
RETURNS SETOF awa.lease_claims
LANGUAGE sql STABLE
AS $$
    SELECT r.* FROM awa.ring_cursor('claim') c,
           awa.open_receipts_at(ARRAY[p_job_id], ARRAY[p_run_lease], c.slot, c.generation,
                                awa.ring_slot_count('claim')) r
$$;

-- Closes open attempts: a closure in each receipt's claim slot and, for a terminal
-- outcome (p_state not NULL), its done entry in the current queue slot (a done entry's
-- run_lease is the attempt number: 0 for a job cancelled before any claim). The one place
-- that writes closures and outcomes (complete, complete_batch, fail, rescue, cancel).
-- The caller holds the attempts' locks.
CREATE OR REPLACE FUNCTION awa.close_attempts(p_receipts awa.lease_claims[], p_outcome text,
                                              p_state text, p_error text)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, job_id, run_lease,
                                          outcome)
    SELECT c.claim_slot, c.claim_generation, c.job_id, c.run_lease, p_outcome
      FROM unnest(p_receipts) c;
    IF p_state IS NOT NULL THEN
        INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease,
                                      lane_id, lane_seq, queue, priority, kind, state,
                                      error, created_at)
        SELECT k.slot, k.generation, c.job_id, awa.receipt_attempt(c), c.lane_id, c.lane_seq,
               c.queue, c.priority, c.kind, p_state, p_error, c.created_at
          FROM awa.ring_cursor('queue') k, unnest(p_receipts) c;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa.complete(job_id bigint, run_lease bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_receipt awa.lease_claims;
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.private_xact_lock(awa.attempt_lock_key(complete.job_id, complete.run_lease));
    SELECT * INTO v_receipt FROM awa.open_receipt(complete.job_id, complete.run_lease);
    IF v_receipt.job_id IS NULL THEN
        RETURN false;
    END IF;
    PERFORM awa.close_attempts(ARRAY[v_receipt], 'completed', 'completed', NULL);
    RETURN true;
END
$$;

-- The still-open receipts of a set of attempts (open_receipts_at at the current claim
-- cursor). The caller holds the attempts' locks.
CREATE OR REPLACE FUNCTION awa.open_receipts(p_job_ids bigint[], p_run_leases bigint[])
RETURNS awa.lease_claims[]
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(array_agg(r), '{}')
      FROM awa.ring_cursor('claim') k,
           awa.open_receipts_at(p_job_ids, p_run_leases, k.slot, k.generation,
                                awa.ring_slot_count('claim')) r
$$;

-- Completes many attempts in one round trip (locks taken in key order); returns the
-- attempts it completed.
CREATE OR REPLACE FUNCTION awa.complete_batch(job_ids bigint[], run_leases bigint[])
RETURNS TABLE (job_id bigint, run_lease bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_open awa.lease_claims[];
BEGIN
    PERFORM awa.require_read_committed();
    IF cardinality(job_ids) IS DISTINCT FROM cardinality(run_leases)
       OR cardinality(job_ids) > 1000 THEN
        RAISE EXCEPTION 'job_ids and run_leases must be arrays of the same length (at most 1000)'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the job_id and run_lease of each claimed attempt, pairwise; '
                         'each attempt takes a lock until commit, so batches stay small.';
    END IF;
    -- one statement: the keys sorted (a materialized sort under a plain scan), then
    -- locked in that order
    PERFORM awa.private_xact_lock(s.k)
       FROM (SELECT DISTINCT awa.attempt_lock_key(j, l) AS k
               FROM unnest(job_ids, run_leases) AS u(j, l)
              WHERE j IS NOT NULL AND l IS NOT NULL
              ORDER BY 1 OFFSET 0) s;
    -- the open receipts of all these attempts, one probe per claim slot (each attempt's
    -- receipt is in exactly one slot; the attempt locks keep prune from moving it)
    v_open := awa.open_receipts(job_ids, run_leases);
    PERFORM awa.close_attempts(v_open, 'completed', 'completed', NULL);
    RETURN QUERY SELECT c.job_id, c.run_lease::bigint FROM unnest(v_open) c ORDER BY 1, 2;
END
$$;

-- Retry backoff: 2^attempt seconds, at most an hour.
CREATE OR REPLACE FUNCTION awa.retry_backoff(p_attempt int) RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT make_interval(secs => least(power(2, least(p_attempt, 12)), 3600)) $$;

-- Ends an open attempt as failed: retried (deferred by retry_in or the backoff) while
-- attempts remain, else moved to failed_jobs. Shared by fail() and rescue.
CREATE OR REPLACE FUNCTION awa.fail_attempt(p_receipt awa.lease_claims, p_outcome text, p_error text,
                                 p_retry_in interval)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_attempt int := awa.receipt_attempt(p_receipt);
BEGIN
    IF v_attempt < p_receipt.max_attempts THEN
        PERFORM awa.close_attempts(ARRAY[p_receipt], CASE WHEN p_outcome = 'failed'
                                                          THEN 'retried' ELSE p_outcome END,
                                   NULL, NULL);
        PERFORM awa.enqueue_jobs(p_receipt.queue, ARRAY[ROW(1, p_receipt.job_id,
            p_receipt.kind, p_receipt.args, p_receipt.priority,
            now() + coalesce(p_retry_in, awa.retry_backoff(v_attempt)),
            v_attempt + 1, p_receipt.max_attempts,
            p_receipt.created_at, p_error)::awa.new_job]);
    ELSE
        PERFORM awa.close_attempts(ARRAY[p_receipt], p_outcome, 'failed', p_error);
        INSERT INTO awa.failed_jobs (job_id, queue, priority, kind, args, attempts,
                                     max_attempts, error, created_at)
        VALUES (p_receipt.job_id, p_receipt.queue, p_receipt.priority, p_receipt.kind,
                p_receipt.args, v_attempt, p_receipt.max_attempts, p_error,
                p_receipt.created_at)
        ON CONFLICT (job_id) DO NOTHING;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa.fail(job_id bigint, run_lease bigint, error text,
                         retry_in interval DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_receipt awa.lease_claims;
BEGIN
    PERFORM awa.require_read_committed();
    IF fail.retry_in < interval '0' THEN
        RAISE EXCEPTION 'retry_in must not be negative, not %', fail.retry_in
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'NULL means the default exponential backoff.';
    END IF;
    PERFORM awa.check_payload('error text', octet_length(fail.error));
    PERFORM awa.private_xact_lock(awa.attempt_lock_key(fail.job_id, fail.run_lease));
    SELECT * INTO v_receipt FROM awa.open_receipt(fail.job_id, fail.run_lease);
    IF v_receipt.job_id IS NULL THEN
        RETURN false;
    END IF;
    PERFORM awa.fail_attempt(v_receipt, 'failed', fail.error, fail.retry_in);
    RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION awa.heartbeat(job_id bigint, run_lease bigint, progress jsonb DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_receipt awa.lease_claims;
    v_cur record;
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_payload('heartbeat progress', pg_column_size(heartbeat.progress));
    PERFORM awa.private_xact_lock(awa.attempt_lock_key(heartbeat.job_id, heartbeat.run_lease));
    SELECT * INTO v_receipt FROM awa.open_receipt(heartbeat.job_id, heartbeat.run_lease);
    IF v_receipt.job_id IS NULL THEN
        RETURN false;
    END IF;
    SELECT * INTO v_cur FROM awa.ring_cursor('lease');
    INSERT INTO awa.leases (lease_slot, lease_generation, job_id, run_lease, progress)
    VALUES (v_cur.slot, v_cur.generation, heartbeat.job_id, heartbeat.run_lease,
            heartbeat.progress);
    RETURN true;
END
$$;

-- The newest still-claimable ready entry of a job, if any (probing every queue slot:
-- cancel is rare; the hot paths never do this).
CREATE OR REPLACE FUNCTION awa.find_ready_entry(p_job_id bigint) RETURNS SETOF awa.ready_entries
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa.ring_slot_count('queue');
    s int;
BEGIN
    FOR s IN 0 .. v_n - 1 LOOP
        RETURN QUERY EXECUTE format(
            'SELECT r.* FROM awa.%I r WHERE r.job_id = $1 AND NOT EXISTS '
            '(SELECT 1 FROM awa.%I d WHERE d.lane_id = r.lane_id AND d.lane_seq = r.lane_seq '
            'AND d.run_lease = 0)', 'ready_entries_' || s, 'done_entries_' || s)
          USING p_job_id;
    END LOOP;
END
$$;

-- The job's open receipt, whatever its run_lease.
CREATE OR REPLACE FUNCTION awa.find_open_receipt(p_job_id bigint) RETURNS SETOF awa.lease_claims
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa.ring_slot_count('claim');
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

CREATE OR REPLACE FUNCTION awa.cancel(job_id bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_def awa.deferred_jobs;
    v_entry awa.ready_entries;
    v_receipt awa.lease_claims;
    v_cur record;
BEGIN
    PERFORM awa.require_read_committed();
    -- hold off prune (its TRUNCATE is not MVCC-safe) before the lookups below take
    -- their snapshots
    LOCK TABLE awa.ready_entries, awa.done_entries, awa.lease_claims,
               awa.lease_claim_closures IN ACCESS SHARE MODE;
    -- scheduled or waiting for a retry
    DELETE FROM awa.deferred_jobs d WHERE d.job_id = cancel.job_id RETURNING * INTO v_def;
    IF v_def.job_id IS NOT NULL THEN
        SELECT * INTO v_cur FROM awa.ring_cursor('queue');
        INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease,
                                      lane_id, lane_seq, queue, priority, kind, state,
                                      created_at)
        VALUES (v_cur.slot, v_cur.generation, v_def.job_id, v_def.attempt, 0, 0,
                v_def.queue, v_def.priority, v_def.kind, 'cancelled', v_def.created_at);
        RETURN true;
    END IF;
    -- available: under its lane's claim lock, so no claimer takes it meanwhile
    FOR v_entry IN SELECT * FROM awa.find_ready_entry(cancel.job_id) ORDER BY attempt DESC LOOP
        PERFORM awa.private_xact_lock(awa.claim_lock_key(v_entry.lane_id));
        IF awa.entry_unclaimed(v_entry) THEN
            INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease,
                                          lane_id, lane_seq, queue, priority, kind, state,
                                          created_at)
            VALUES (v_entry.ready_slot, v_entry.ready_generation, v_entry.job_id, 0,
                    v_entry.lane_id, v_entry.lane_seq, v_entry.queue, v_entry.priority,
                    v_entry.kind, 'cancelled', v_entry.created_at);
            RETURN true;
        END IF;
        EXIT;
    END LOOP;
    -- running
    FOR v_receipt IN SELECT * FROM awa.find_open_receipt(cancel.job_id) LOOP
        PERFORM awa.private_xact_lock(awa.attempt_lock_key(v_receipt.job_id, v_receipt.run_lease));
        SELECT * INTO v_receipt FROM awa.open_receipt(v_receipt.job_id, v_receipt.run_lease);
        IF v_receipt.job_id IS NOT NULL THEN
            PERFORM awa.close_attempts(ARRAY[v_receipt], 'cancelled', 'cancelled', NULL);
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;
