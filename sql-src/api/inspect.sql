-- Looking jobs up (README "Inspecting and replaying jobs"): awa.job(job_id), one job's
-- state assembled from every place the data plane keeps a part of it, and awa.jobs, the
-- operators' listing. Both only read; neither touches the hot paths.
--
-- A job's records (docs/storage.md §3, Part A): its deferred row (scheduled, or waiting
-- for a retry), a ready entry per attempt that was due (and a cancel tombstone beside
-- it in its slot), a receipt per claimed attempt (and its closure, which in 0.9 carries
-- the job's terminal state, §A.15), a done entry per outcome written before 0.9 or
-- cancel of a deferred job, its failed_jobs row, heartbeats. Attempt numbers only grow,
-- and a later stage of one attempt outranks an earlier one, so the job's state is that
-- of its record with the largest (attempt, rank): claimed ready entry 0 < deferred 1 <
-- ready 2 < open receipt 3 < closed receipt 4 < receipt closed with a terminal state,
-- done entry, tombstone or failed_jobs row 5. Each ring prunes its oldest slot first, so
-- a newer record outlives an older one of the same ring (and a receipt's closure lies in
-- its slot). A claimed entry states nothing: when it is the top record, its receipt was
-- pruned before it, the attempt's outcome with it, and the job has no state (no row).

-- Which queues the caller may see (awa.job and awa.jobs filter their rows with it): a
-- queue without per-queue grants is open to every caller of these functions; a
-- restricted one shows its jobs to the roles that hold any privilege on it (a producer
-- may follow the jobs it enqueued).
CREATE OR REPLACE FUNCTION awa_internal.queue_visible(p_queue text) RETURNS boolean
LANGUAGE sql STABLE
AS $$ SELECT awa.queue_allowed(p_queue, 'manage') OR awa.queue_allowed(p_queue, 'claim')
             OR awa.queue_allowed(p_queue, 'enqueue') $$;

-- Refuses a bulk operation on a queue the caller may not manage (42501).
CREATE OR REPLACE FUNCTION awa_internal.check_queue_access(p_queue text) RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF p_queue IS NOT NULL AND NOT awa.queue_allowed(p_queue, 'manage') THEN
        RAISE EXCEPTION 'permission denied for queue %', quote_literal(p_queue)
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Ask the queue''s owner for access to it.';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa_internal.check_job_id(p_job_id bigint) RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF p_job_id IS NULL OR p_job_id < 1 THEN
        RAISE EXCEPTION 'invalid job id %', coalesce(p_job_id::text, 'NULL')
            USING ERRCODE = CASE WHEN p_job_id IS NULL THEN 'null_value_not_allowed'
                                 ELSE 'invalid_parameter_value' END,
                  HINT = 'Job ids are the positive numbers awa.enqueue returns.';
    END IF;
END
$$;

-- The states awa.job reports, in the order a job passes through them.
CREATE OR REPLACE FUNCTION awa_internal.job_states() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['scheduled', 'retryable', 'available', 'running', 'completed',
                   'failed', 'cancelled'] $$;

-- Every record the data plane holds of one job, each with its attempt, its rank (see
-- above) and the state it stands for; index probes only (job id on each family, the
-- ready entries through ready_entries_of, the tombstone by (lane_id, lane_seq) in the
-- entry's own slot). p_with_ready false leaves the ready entries out: the purge of
-- unique keys reads them for a whole batch at once (api/unique.sql). Reads under the statement's
-- snapshot: the caller holds the ring families in ACCESS SHARE, so no prune truncates a
-- slot under it.
CREATE OR REPLACE FUNCTION awa_internal.job_records_of(p_job_id bigint, p_with_ready boolean)
RETURNS TABLE (attempt int, rank int, state text, queue text, priority smallint,
               kind text, args jsonb, max_attempts int, run_lease bigint, error text,
               created_at timestamptz, run_at timestamptz, attempted_at timestamptz,
               finished_at timestamptz)
LANGUAGE sql STABLE
AS $$
    -- scheduled for later, or waiting for its retry (a retry is attempt 2 or more)
    SELECT d.attempt, 1, CASE WHEN d.attempt > 1 THEN 'retryable' ELSE 'scheduled' END,
           d.queue, d.priority, d.kind, d.args, d.max_attempts, NULL::bigint, d.last_error,
           d.created_at, d.run_at, NULL::timestamptz, NULL::timestamptz
      FROM awa.deferred_jobs d WHERE d.job_id = p_job_id
    UNION ALL
    -- due: available, unless a tombstone in its slot cancelled it; once claimed (at or
    -- below its lane's position, which the claim ring keeps while the queue ring holds
    -- the entry) it ranks 0, under every stage of its attempt, and tells no state: the
    -- receipt does, and a receipt pruned before the entry (the claim ring turning
    -- faster) has taken the attempt's history with it. Its run_at is when it entered
    -- the queue ring: created_at when enqueued_at is NULL (0.10, an entry written within
    -- 1 ms of its job's creation, tables/entry_fields.sql)
    SELECT r.attempt, CASE WHEN t.job_id IS NOT NULL THEN 5 WHEN u.unclaimed THEN 2 ELSE 0 END,
           CASE WHEN t.job_id IS NOT NULL THEN 'cancelled' WHEN u.unclaimed THEN 'available' END,
           r.queue, r.priority, r.kind, r.args, r.max_attempts, NULL, NULL,
           r.created_at, coalesce(r.enqueued_at, r.created_at), NULL, t.finished_at
      FROM awa_internal.ready_entries_of(p_job_id) r
      LEFT JOIN LATERAL (SELECT d.job_id, d.finished_at FROM awa.done_entries d
                          WHERE d.ready_slot = r.ready_slot AND d.lane_id = r.lane_id
                            AND d.lane_seq = r.lane_seq AND d.run_lease = 0
                          LIMIT 1) t ON true
     CROSS JOIN LATERAL (SELECT awa.entry_unclaimed(r) AS unclaimed) u
     WHERE p_with_ready
    UNION ALL
    -- claimed: the newest copy of each attempt's receipt (prune carries open ones
    -- forward), open or closed by the closure in its slot; a closure that carries the
    -- job's terminal state (0.9, docs/storage.md §A.15) is its outcome; a closure's
    -- outcome and state are read through its code (0.10, tables/closure_code.sql), and
    -- no closure is a NULL closed_at (a 0.10 closure's text outcome is NULL)
    SELECT c.attempt, CASE WHEN x.closed_at IS NULL THEN 3
                           WHEN x.state IS NULL THEN 4 ELSE 5 END,
           CASE WHEN x.closed_at IS NULL THEN 'running'
                WHEN x.state IS NOT NULL THEN x.state
                WHEN x.outcome IN ('retried', 'rescued') THEN 'retryable'
                ELSE x.outcome END,
           c.queue, c.priority, c.kind, c.args, c.max_attempts, c.run_lease, x.error,
           c.created_at, NULL, c.claimed_at, x.closed_at
      FROM (SELECT DISTINCT ON (l.run_lease) l.*
              FROM awa.lease_claims l WHERE l.job_id = p_job_id
             ORDER BY l.run_lease, l.claim_generation DESC) c
      LEFT JOIN LATERAL (SELECT awa_internal.closure_outcome(y.outcome_code, y.outcome)
                                    AS outcome,
                                awa_internal.closure_state(y.outcome_code, y.state) AS state,
                                y.error, y.closed_at
                           FROM awa.lease_claim_closures y
                          WHERE y.claim_slot = c.claim_slot AND y.job_id = c.job_id
                            AND y.run_lease = c.run_lease
                          LIMIT 1) x ON true
    UNION ALL
    -- the args the queue ring holds for an attempt that was still open when prune took
    -- its entry's slot (0.10, tables/held_args.sql): they state nothing, as a claimed
    -- entry, and give the body of an attempt whose receipt does not carry it
    SELECT h.attempt, 0, NULL, NULL, NULL, NULL, h.args, NULL, NULL, NULL,
           NULL, NULL, NULL, NULL
      FROM awa.held_args h WHERE h.job_id = p_job_id
    UNION ALL
    -- terminal outcomes written as done entries (before 0.9, or a cancelled deferred
    -- job; a done entry's run_lease is the attempt number; 0, a tombstone, is read
    -- with its entry above)
    SELECT d.run_lease, 5, d.state, d.queue, d.priority, d.kind, NULL, NULL, NULL, d.error,
           d.created_at, NULL, NULL, d.finished_at
      FROM awa.done_entries d WHERE d.job_id = p_job_id AND d.run_lease > 0
    UNION ALL
    SELECT f.attempts, 5, 'failed', f.queue, f.priority, f.kind, f.args, f.max_attempts,
           NULL, f.error, f.created_at, NULL, NULL, f.failed_at
      FROM awa.failed_jobs f WHERE f.job_id = p_job_id
$$;

-- Every record of one job (job_records_of with its ready entries): awa.job's and
-- job_state's.
CREATE OR REPLACE FUNCTION awa_internal.job_records(p_job_id bigint)
RETURNS TABLE (attempt int, rank int, state text, queue text, priority smallint,
               kind text, args jsonb, max_attempts int, run_lease bigint, error text,
               created_at timestamptz, run_at timestamptz, attempted_at timestamptz,
               finished_at timestamptz)
LANGUAGE sql STABLE
AS $$ SELECT * FROM awa_internal.job_records_of(p_job_id, true) $$;

-- One job from its records: state, attempt and run_lease from the top record; the body
-- and the times from the newest record that has them (a done entry carries no args, nor
-- does a 0.10 receipt: the attempt's ready entry or held args do, while the queue ring
-- keeps them, docs/storage.md A.20);
-- the newest heartbeat of the top attempt's receipt, if it has one.
-- No row: no record of the job (never enqueued, or its history pruned).
CREATE OR REPLACE FUNCTION awa_internal.job_in_snapshot(p_job_id bigint) RETURNS SETOF awa.job_info
LANGUAGE sql STABLE
AS $$
    WITH recs AS MATERIALIZED (SELECT * FROM awa_internal.job_records(p_job_id)),
    top AS (SELECT * FROM recs ORDER BY attempt DESC, rank DESC LIMIT 1),
    hb AS (SELECT l.heartbeat_at, l.progress
             FROM awa.leases l
            WHERE l.job_id = p_job_id
              AND l.run_lease = (SELECT r.run_lease FROM recs r, top t
                                  WHERE r.run_lease IS NOT NULL AND r.attempt = t.attempt
                                  LIMIT 1)
            ORDER BY l.heartbeat_at DESC LIMIT 1)
    SELECT p_job_id, t.queue, t.kind,
           (SELECT r.args FROM recs r WHERE r.args IS NOT NULL
             ORDER BY r.attempt DESC, r.rank DESC LIMIT 1),
           t.priority, t.state, t.attempt,
           (SELECT r.max_attempts FROM recs r WHERE r.max_attempts IS NOT NULL
             ORDER BY r.attempt DESC, r.rank DESC LIMIT 1),
           CASE WHEN t.state = 'running' THEN t.run_lease END,
           (SELECT r.error FROM recs r WHERE r.error IS NOT NULL
             ORDER BY r.attempt DESC, r.rank DESC LIMIT 1),
           t.created_at,
           (SELECT max(r.run_at) FROM recs r WHERE r.attempt = t.attempt),
           (SELECT max(r.attempted_at) FROM recs r),
           CASE WHEN t.rank >= 4 AND t.state IN ('completed', 'failed', 'cancelled')
                THEN (SELECT max(r.finished_at) FROM recs r WHERE r.attempt = t.attempt) END,
           (SELECT hb.heartbeat_at FROM hb), (SELECT hb.progress FROM hb)
      FROM top t
     WHERE t.rank > 0
$$;

-- The application's and operator's lookup of one job (SECURITY DEFINER): the ring
-- families are locked ACCESS SHARE first, as queue_counts does, so that no prune's
-- TRUNCATE (not MVCC-safe) falls between the lookup's snapshot and its reads.
CREATE OR REPLACE FUNCTION awa.job(job_id bigint) RETURNS SETOF awa.job_info
LANGUAGE plpgsql VOLATILE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_job_id(job.job_id);
    PERFORM awa_internal.hold_ring_families(true);
    RETURN QUERY SELECT j.* FROM awa_internal.job_in_snapshot(job.job_id) j
                  WHERE awa_internal.queue_visible(j.queue);
END
$$;

-- The highest lim accepted by awa.jobs.
CREATE OR REPLACE FUNCTION awa_internal.jobs_max_limit() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1000 $$;

-- The operators' listing: the jobs matching the filters, newest job id first, at most
-- lim of them, each as awa.job shows it. Candidates are read newest id first from the
-- families that can hold a job in the wanted state (every one without a state filter;
-- receipts for every state a closure gives too: a finished job's done entry may be
-- pruned before its receipt), each job then looked up whole; the listing stops at lim
-- rows. Its cost is that of the candidates it must pass over (records of other queues
-- or kinds, records a newer one supersedes: a claimed ready entry, a done entry of a
-- retried job), at worst a read of the rings, as queue_counts makes.
CREATE OR REPLACE FUNCTION awa.jobs(queue text DEFAULT NULL, state text DEFAULT NULL,
                                    kind text DEFAULT NULL, lim int DEFAULT 100)
RETURNS SETOF awa.job_info
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id bigint;
    v_last bigint;
    v_job awa.job_info;
    v_n int := 0;
    v_any boolean := jobs.state IS NULL;
BEGIN
    IF jobs.queue IS NOT NULL THEN
        PERFORM awa_internal.check_name('queue', jobs.queue);
        PERFORM awa_internal.check_queue_access(jobs.queue);
    END IF;
    IF jobs.kind IS NOT NULL THEN
        PERFORM awa_internal.check_name('kind', jobs.kind);
    END IF;
    IF jobs.state IS NOT NULL AND NOT jobs.state = ANY (awa_internal.job_states()) THEN
        RAISE EXCEPTION 'unknown job state %', quote_literal(jobs.state)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A state is one of ' || array_to_string(awa_internal.job_states(), ', ')
                         || ', or NULL for all.';
    END IF;
    IF lim IS NULL OR lim NOT BETWEEN 1 AND awa_internal.jobs_max_limit() THEN
        RAISE EXCEPTION 'lim % is out of range', coalesce(lim::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('List 1 to %s jobs at a time; page with a state or kind '
                                'filter.', awa_internal.jobs_max_limit());
    END IF;
    PERFORM awa_internal.hold_ring_families(true);
    FOR v_id IN
        SELECT u.job_id FROM (
            SELECT d.job_id FROM awa.deferred_jobs d
             WHERE (v_any OR jobs.state IN ('scheduled', 'retryable'))
               AND (jobs.queue IS NULL OR d.queue = jobs.queue)
               AND (jobs.kind IS NULL OR d.kind = jobs.kind)
            UNION ALL
            SELECT r.job_id FROM awa.ready_entries r
             WHERE (v_any OR jobs.state IN ('available', 'cancelled'))
               AND (jobs.queue IS NULL OR r.queue = jobs.queue)
               AND (jobs.kind IS NULL OR r.kind = jobs.kind)
            UNION ALL
            SELECT c.job_id FROM awa.lease_claims c
             WHERE (v_any OR jobs.state <> 'scheduled')
               AND (jobs.queue IS NULL OR c.queue = jobs.queue)
               AND (jobs.kind IS NULL OR c.kind = jobs.kind)
            UNION ALL
            SELECT e.job_id FROM awa.done_entries e
             WHERE (v_any OR jobs.state = e.state)
               AND (jobs.queue IS NULL OR e.queue = jobs.queue)
               AND (jobs.kind IS NULL OR e.kind = jobs.kind)
            UNION ALL
            SELECT f.job_id FROM awa.failed_jobs f
             WHERE (v_any OR jobs.state = 'failed')
               AND (jobs.queue IS NULL OR f.queue = jobs.queue)
               AND (jobs.kind IS NULL OR f.kind = jobs.kind)) u
         ORDER BY u.job_id DESC
    LOOP
        CONTINUE WHEN v_id = v_last;
        v_last := v_id;
        SELECT * INTO v_job FROM awa_internal.job_in_snapshot(v_id);
        CONTINUE WHEN v_job.job_id IS NULL
                   OR (jobs.state IS NOT NULL AND v_job.state <> jobs.state)
                   OR (jobs.queue IS NOT NULL AND v_job.queue <> jobs.queue)
                   OR (jobs.kind IS NOT NULL AND v_job.kind <> jobs.kind)
                   OR NOT awa_internal.queue_visible(v_job.queue);
        RETURN NEXT v_job;
        v_n := v_n + 1;
        EXIT WHEN v_n >= lim;
    END LOOP;
END
$$;
