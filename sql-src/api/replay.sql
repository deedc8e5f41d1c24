-- Replaying and clearing jobs (README "Inspecting and replaying jobs"): retry of failed
-- jobs, purge of failed jobs, bulk cancel of a queue. Operator functions (not granted
-- with the application API, see grants/grants.sql). None of them updates or deletes a row
-- of a ring family: a retry deletes the job's failed_jobs row and enqueues a new ready
-- entry, a purge deletes failed_jobs rows, a cancel writes what awa.cancel(job_id)
-- writes (a done entry, a tombstone, a closure) and deletes deferred_jobs rows; those two
-- tables are plain backlog tables. Every bulk form does at most a batch per call and
-- returns how many it did: call it again until it returns 0.

-- How many jobs a bulk retry or purge handles per call (enqueue_batch's bound).
CREATE OR REPLACE FUNCTION awa_internal.replay_batch() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 10000 $$;

-- How many jobs a bulk cancel handles per call: each running job it cancels holds its
-- attempt lock, a lock table entry, until the transaction ends (complete_batch's bound).
CREATE OR REPLACE FUNCTION awa_internal.cancel_batch() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1000 $$;

-- Re-enqueues failed jobs (rows of failed_jobs, deleted here) under their own job ids,
-- due now, with one more attempt: attempt = attempts + 1, max_attempts raised to that
-- if it was reached. The caller is READ COMMITTED.
CREATE OR REPLACE FUNCTION awa_internal.requeue_failed(p_jobs awa.failed_jobs[]) RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_queue text;
BEGIN
    FOR v_queue IN SELECT DISTINCT f.queue FROM unnest(p_jobs) f ORDER BY 1 LOOP
        PERFORM awa_internal.enqueue_jobs(v_queue, ARRAY(
            SELECT ROW(0, f.job_id, f.kind, f.args, f.priority, now(), f.attempts + 1,
                       greatest(f.max_attempts, f.attempts + 1), f.created_at,
                       NULL)::awa.new_job
              FROM unnest(p_jobs) f WHERE f.queue = v_queue ORDER BY f.job_id));
    END LOOP;
END
$$;

-- One failed job again: returns its job id (the same one), or NULL when failed_jobs
-- holds no such job (never failed, already retried or purged).
CREATE OR REPLACE FUNCTION awa.retry_failed(job_id bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_job awa.failed_jobs;
BEGIN
    PERFORM awa_internal.require_read_committed();
    PERFORM awa_internal.check_job_id(retry_failed.job_id);
    SELECT * INTO v_job FROM awa.failed_jobs f WHERE f.job_id = retry_failed.job_id
       FOR UPDATE;
    IF v_job.job_id IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM awa_internal.check_queue_access(v_job.queue);
    DELETE FROM awa.failed_jobs f WHERE f.job_id = v_job.job_id;
    PERFORM awa_internal.requeue_failed(ARRAY[v_job]);
    RETURN v_job.job_id;
END
$$;

-- The failed jobs of a queue (of one kind, failed at or after since; named apart from
-- retry_failed(job_id) for the reason cancel_queue is), oldest failure
-- first, at most awa_internal.replay_batch() per call; returns how many it re-enqueued. Rows
-- another transaction is retrying or purging are skipped.
CREATE OR REPLACE FUNCTION awa.retry_failed_queue(queue text, kind text DEFAULT NULL,
                                            since timestamptz DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_jobs awa.failed_jobs[];
BEGIN
    PERFORM awa_internal.require_read_committed();
    PERFORM awa_internal.check_name('queue', retry_failed_queue.queue);
    IF retry_failed_queue.kind IS NOT NULL THEN
        PERFORM awa_internal.check_name('kind', retry_failed_queue.kind);
    END IF;
    IF NOT isfinite(retry_failed_queue.since) THEN
        RAISE EXCEPTION 'since must be a finite timestamp or NULL'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'NULL retries every failed job of the queue.';
    END IF;
    PERFORM awa_internal.check_queue_access(retry_failed_queue.queue);
    WITH gone AS (
        DELETE FROM awa.failed_jobs f
         WHERE f.job_id IN (SELECT x.job_id FROM awa.failed_jobs x
                             WHERE x.queue = retry_failed_queue.queue
                               AND (retry_failed_queue.kind IS NULL OR x.kind = retry_failed_queue.kind)
                               AND (retry_failed_queue.since IS NULL OR x.failed_at >= retry_failed_queue.since)
                             ORDER BY x.failed_at, x.job_id LIMIT awa_internal.replay_batch()
                             FOR UPDATE SKIP LOCKED)
        RETURNING f.*)
    SELECT coalesce(array_agg(gone), '{}') INTO v_jobs FROM gone;
    PERFORM awa_internal.requeue_failed(v_jobs);
    RETURN cardinality(v_jobs);
END
$$;

-- Deletes failed jobs (of a queue, of a kind) that failed before `before`, at most
-- awa_internal.replay_batch() per call; returns how many. Their done entries stay in the queue
-- ring until it is pruned (awa.job shows them failed until then).
CREATE OR REPLACE FUNCTION awa.purge_failed(queue text DEFAULT NULL, kind text DEFAULT NULL,
                                            before timestamptz DEFAULT now())
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n bigint;
BEGIN
    IF purge_failed.queue IS NOT NULL THEN
        PERFORM awa_internal.check_name('queue', purge_failed.queue);
        PERFORM awa_internal.check_queue_access(purge_failed.queue);
    END IF;
    IF purge_failed.kind IS NOT NULL THEN
        PERFORM awa_internal.check_name('kind', purge_failed.kind);
    END IF;
    IF purge_failed.before IS NULL THEN
        RAISE EXCEPTION 'before must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass now() (the default) to purge every failed job so far.';
    END IF;
    DELETE FROM awa.failed_jobs f
     WHERE f.job_id IN (SELECT x.job_id FROM awa.failed_jobs x
                         WHERE (purge_failed.queue IS NULL OR x.queue = purge_failed.queue)
                           AND (purge_failed.kind IS NULL OR x.kind = purge_failed.kind)
                           AND x.failed_at < purge_failed.before
                           AND awa.queue_allowed(x.queue, 'manage')
                         ORDER BY x.failed_at, x.job_id LIMIT awa_internal.replay_batch()
                         FOR UPDATE SKIP LOCKED);
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END
$$;

-- Cancels the jobs of a queue (of one kind) the way awa.cancel(job_id) cancels one (a
-- name of its own: an overload awa.cancel(text, text) would take a call
-- awa.cancel($1) whose parameter a driver sends untyped away from awa.cancel(bigint)):
-- scheduled and retryable jobs (their deferred rows deleted, a cancelled done entry
-- each), available ones (under each lane's claim lock, which it waits for and holds to
-- commit where it cancelled something, gives back at once where it cancelled nothing:
-- a tombstone in the entry's slot each), running ones (under each attempt's
-- lock: a closure carrying the cancelled state, A.15; the worker's next complete, fail or
-- heartbeat of that attempt returns false). At most awa_internal.cancel_batch() jobs per call,
-- in that order; returns how many it cancelled.
CREATE OR REPLACE FUNCTION awa.cancel_queue(queue text, kind text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_left int := awa_internal.cancel_batch();
    v_n bigint;
    v_lane int;
    v_receipt awa.lease_claims;
BEGIN
    PERFORM awa_internal.require_read_committed();
    PERFORM awa_internal.note_activity();
    PERFORM awa_internal.check_name('queue', cancel_queue.queue);
    IF cancel_queue.kind IS NOT NULL THEN
        PERFORM awa_internal.check_name('kind', cancel_queue.kind);
    END IF;
    PERFORM awa_internal.check_queue_access(cancel_queue.queue);
    -- hold off prune (its TRUNCATE is not MVCC-safe) before the reads below
    PERFORM awa_internal.hold_ring_families();
    -- scheduled, or waiting for a retry
    WITH gone AS (
        DELETE FROM awa.deferred_jobs d
         WHERE d.job_id IN (SELECT x.job_id FROM awa.deferred_jobs x
                             WHERE x.queue = cancel_queue.queue
                               AND (cancel_queue.kind IS NULL OR x.kind = cancel_queue.kind)
                             ORDER BY x.job_id LIMIT v_left
                             FOR UPDATE SKIP LOCKED)
        RETURNING d.*)
    INSERT INTO awa.done_entries (ready_slot, job_id, run_lease, lane_id, lane_seq, queue,
                                  priority, kind, state, created_at)
    SELECT k.slot, g.job_id, g.attempt, 0, 0, g.queue, g.priority, g.kind, 'cancelled',
           g.created_at
      FROM awa.ring_cursor('queue') k, gone g;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_left := v_left - v_n;
    -- available: lane by lane, under the lane's claim lock, each unclaimed entry not yet
    -- tombstoned (the statement's snapshot is taken after the lock)
    FOR v_lane IN SELECT DISTINCT l.lane_id FROM awa.queue_lanes l
                   WHERE l.queue = cancel_queue.queue ORDER BY 1 LOOP
        EXIT WHEN v_left <= 0;
        PERFORM awa_internal.private_xact_lock(awa_internal.claim_lock_key(v_lane));
        INSERT INTO awa.done_entries (ready_slot, job_id, run_lease, lane_id, lane_seq,
                                      queue, priority, kind, state, created_at)
        SELECT r.ready_slot, r.job_id, 0, r.lane_id, r.lane_seq,
               r.queue, r.priority, r.kind, 'cancelled', r.created_at
          FROM awa_internal.lane_window(v_lane) p, awa.ready_entries r
         WHERE r.lane_id = v_lane
           AND (cancel_queue.kind IS NULL OR r.kind = cancel_queue.kind)
           AND awa_internal.window_unclaimed(r.txid, r.lane_seq, p.win_lo, p.win_hi, p.txid,
                                    p.lane_seq)
           AND NOT EXISTS (SELECT 1 FROM awa.done_entries t
                            WHERE t.ready_slot = r.ready_slot AND t.lane_id = r.lane_id
                              AND t.lane_seq = r.lane_seq AND t.run_lease = 0)
         ORDER BY r.txid, r.lane_seq LIMIT v_left;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_left := v_left - v_n;
        IF v_n = 0 THEN
            -- nothing cancelled here: the lane's lock goes back at once, as a claim that
            -- took nothing gives it back (one hold: a lock this transaction held before
            -- stays), so that a queue of many lanes does not fill the lock table
            PERFORM awa_internal.private_xact_unlock(awa_internal.claim_lock_key(v_lane));
        END IF;
    END LOOP;
    -- running: each open receipt under its attempt's lock, checked again under it
    FOR v_receipt IN SELECT c.* FROM awa.lease_claims c
                      WHERE c.queue = cancel_queue.queue
                        AND (cancel_queue.kind IS NULL OR c.kind = cancel_queue.kind)
                        AND NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures x
                                         WHERE x.job_id = c.job_id
                                           AND x.run_lease = c.run_lease)
                      ORDER BY c.job_id, c.run_lease LOOP
        EXIT WHEN v_left <= 0;
        PERFORM awa_internal.private_xact_lock(awa_internal.attempt_lock_key(v_receipt.job_id,
                                                           v_receipt.run_lease));
        SELECT * INTO v_receipt FROM awa_internal.open_receipt(v_receipt.job_id, v_receipt.run_lease);
        IF v_receipt.job_id IS NOT NULL THEN
            PERFORM awa_internal.close_attempts(ARRAY[v_receipt], 'cancelled', 'cancelled', NULL);
            v_left := v_left - 1;
        END IF;
    END LOOP;
    RETURN awa_internal.cancel_batch() - v_left;
END
$$;
