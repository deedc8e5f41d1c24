-- Monitoring (docs/monitoring.md): per-queue figures (awa.queue_stats), the cumulative
-- counters of each database's maintenance in shared memory (awa.worker_stats,
-- awa.worker_ring_stats, awa.stats_reset()), and the status views made readable by
-- pg_monitor (the grants are in grants/grants.sql).

-- The counters (src/status/stats.c): one row per database whose worker has run since the
-- server started; they outlive a worker's restart, a server restart zeroes them.
CREATE OR REPLACE FUNCTION awa_internal.worker_stats_counters(
    OUT database name, OUT worker_starts bigint, OUT leader_terms bigint,
    OUT promote_runs bigint, OUT jobs_promoted bigint,
    OUT rescue_runs bigint, OUT jobs_rescued bigint,
    OUT folds_run bigint, OUT folds_stood_down bigint,
    OUT rows_folded bigint, OUT rows_trimmed bigint,
    OUT purge_runs bigint, OUT purges_stood_down bigint, OUT failed_jobs_purged bigint,
    OUT step_errors bigint, OUT rotations bigint, OUT prunes bigint,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_worker_stats'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE FUNCTION awa_internal.worker_ring_stats_counters(
    OUT database name, OUT ring text,
    OUT rotated bigint, OUT rotate_skipped_idle bigint, OUT rotate_skipped_busy bigint,
    OUT rotate_lost_cas bigint,
    OUT pruned bigint, OUT prune_noop bigint, OUT prune_already_pruned bigint,
    OUT prune_blocked bigint, OUT prune_skipped_active bigint,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_worker_ring_stats'
LANGUAGE C STRICT VOLATILE;

-- Zeroes this database's counters and sets its stats_reset; false when no worker has
-- maintained this database since the server started. Revoked from PUBLIC.
CREATE OR REPLACE FUNCTION awa.stats_reset() RETURNS boolean
AS 'MODULE_PATHNAME', 'awa_stats_reset'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE VIEW awa.worker_stats AS
SELECT * FROM awa_internal.worker_stats_counters();

COMMENT ON VIEW awa.worker_stats IS
'per database: cumulative counters of its maintenance worker since stats_reset (worker '
'starts, leader terms, promotions, rescues, folds, failed_jobs retention, step errors, '
'rotations and prunes); kept across worker restarts, zeroed by awa.stats_reset() and '
'by a server restart';

CREATE OR REPLACE VIEW awa.worker_ring_stats AS
SELECT * FROM awa_internal.worker_ring_stats_counters();

COMMENT ON VIEW awa.worker_ring_stats IS
'per database and ring: cumulative rotate and prune outcomes since stats_reset';

-- The rows of awa.ring_status, read as the extension's owner: its helpers read the
-- ledgers and probe the ring children, which a monitoring role may not read itself.
CREATE OR REPLACE FUNCTION awa_internal.ring_status_rows(
    OUT ring text, OUT authority text, OUT current_slot int, OUT generation bigint,
    OUT slot_count int, OUT ledger_rows bigint, OUT last_rotated_at timestamptz,
    OUT sealed_slots_awaiting_prune bigint)
RETURNS SETOF record
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r.ring,
           awa_internal.ring_authority(),
           c.slot,
           c.generation,
           awa_internal.ring_slot_count(r.ring),
           l.ledger_rows,
           l.last_rotated_at,
           awa_internal.ring_sealed_slots_holding_rows(r.ring, c.slot, c.generation)
      FROM (VALUES (1, 'queue'), (2, 'lease'), (3, 'claim')) r(ord, ring)
     CROSS JOIN LATERAL awa.ring_cursor(r.ring) c
     CROSS JOIN LATERAL awa_internal.ring_ledger_stats(r.ring) l
     ORDER BY r.ord
$$;

CREATE OR REPLACE VIEW awa.ring_status AS
SELECT * FROM awa_internal.ring_status_rows();
COMMENT ON VIEW awa.ring_status IS
'per ring: authority, cursor, slot count, ledger length, last rotation, and the sealed '
'slots that still hold rows';

-- The start of the history a ring still holds completely: the rotation that made
-- current the slot k rotations back, k being the sealed slots that still hold rows.
-- Prune takes the oldest sealed slot first, so every slot from there on is unpruned.
-- Queue ring: a ready entry or done entry lands in the slot current when it is written,
-- so every one written since that rotation is still in the ring. Claim ring, where 0.9's
-- terminal outcomes lie (a closure is written into its receipt's slot, docs/storage.md
-- §A.15): every receipt written since that rotation, and so every closure of it, is
-- still in the ring; an attempt claimed before it and closed after it may lie in a slot
-- pruned since.
CREATE OR REPLACE FUNCTION awa_internal.ring_history_start(p_ring text) RETURNS timestamptz
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT q.rotated_at
      FROM awa.ring_cursor(p_ring) c
      JOIN (SELECT r.generation, r.rotated_at FROM awa.queue_ring_rotations r
             WHERE p_ring = 'queue'
            UNION ALL
            SELECT r.generation, r.rotated_at FROM awa.claim_ring_rotations r
             WHERE p_ring = 'claim'
            UNION ALL
            SELECT r.generation, r.rotated_at FROM awa.lease_ring_rotations r
             WHERE p_ring = 'lease') q
        ON q.generation = c.generation
                          - awa_internal.ring_sealed_slots_holding_rows(p_ring, c.slot, c.generation)
$$;

-- awa.queue_stats in the caller's statement snapshot (see queue_stats_rows).
-- available, scheduled, running and the totals are queue_counts' numbers; the window
-- figures count what the rings hold since window_start.
CREATE OR REPLACE FUNCTION awa_internal.queue_stats_in_snapshot(p_window interval,
    OUT queue text, OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT oldest_available_at timestamptz, OUT completed_total bigint, OUT failed_total bigint,
    OUT window_start timestamptz, OUT completed_in_window bigint,
    OUT failed_in_window bigint, OUT rescued_in_window bigint, OUT claims_in_window bigint,
    OUT claim_latency_avg interval, OUT claim_latency_max interval)
RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH ws AS (
        SELECT greatest(now() - p_window,
                        coalesce(awa_internal.ring_history_start('queue'), now() - p_window),
                        coalesce(awa_internal.ring_history_start('claim'), now() - p_window)) AS t),
    avail AS (
        -- the lanes with an entry in the queue ring, each position read once; an entry
        -- of 0.10 enqueued within 1 ms of its job's creation has enqueued_at NULL
        -- (tables/entry_fields.sql) and entered the ring at created_at
        SELECT r.queue, count(*) AS n, min(coalesce(r.enqueued_at, r.created_at)) AS oldest
          FROM (SELECT DISTINCT e.lane_id FROM awa.ready_entries e) al
         CROSS JOIN LATERAL awa_internal.lane_window(al.lane_id) p
          JOIN awa.ready_entries r ON r.lane_id = al.lane_id
         WHERE awa_internal.window_unclaimed(r.txid, r.lane_seq, p.win_lo, p.win_hi, p.txid, p.lane_seq)
           AND NOT EXISTS (SELECT 1 FROM awa.done_entries d
                            WHERE d.lane_id = r.lane_id AND d.lane_seq = r.lane_seq
                              AND d.run_lease = 0)
         GROUP BY r.queue),
    sched AS (
        SELECT d.queue, count(*) AS n FROM awa.deferred_jobs d GROUP BY d.queue),
    run AS (
        SELECT c.queue, count(*) AS n FROM awa.lease_claims c
         WHERE NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures x
                            WHERE x.claim_slot = c.claim_slot AND x.job_id = c.job_id
                              AND x.run_lease = c.run_lease)
         GROUP BY c.queue),
    done AS (
        -- terminal outcomes: closures carrying a state, with their receipts' queue
        -- (docs/storage.md §A.15; the state read through the closure's code,
        -- tables/closure_code.sql), and done entries (written before 0.9)
        SELECT d.queue,
               count(*) FILTER (WHERE d.state = 'completed') AS c,
               count(*) FILTER (WHERE d.state = 'failed') AS f,
               count(*) FILTER (WHERE d.state = 'completed' AND d.at >= ws.t) AS cw,
               count(*) FILTER (WHERE d.state = 'failed' AND d.at >= ws.t) AS fw
          FROM (SELECT e.queue, e.state, e.finished_at AS at FROM awa.done_entries e
                UNION ALL
                SELECT c.queue, x.state, x.closed_at
                  FROM (SELECT y.claim_slot, y.job_id, y.run_lease, y.closed_at,
                               awa_internal.closure_state(y.outcome_code, y.state) AS state
                          FROM awa.lease_claim_closures y) x
                  JOIN awa.lease_claims c ON c.claim_slot = x.claim_slot
                                         AND c.job_id = x.job_id
                                         AND c.run_lease = x.run_lease
                 WHERE x.state IS NOT NULL) d, ws
         GROUP BY d.queue),
    pruned AS (
        SELECT t.queue, sum(t.c) AS c, sum(t.f) AS f
          FROM (SELECT r.queue, r.pruned_completed_count AS c, r.pruned_failed_count AS f
                  FROM awa.queue_terminal_rollups r
                UNION ALL
                SELECT x.queue, x.pruned_completed_delta, x.pruned_failed_delta
                  FROM awa.queue_terminal_rollup_deltas x) t
         GROUP BY t.queue),
    rescued AS (
        SELECT c.queue, count(*) AS n
          FROM awa.lease_claim_closures x
          JOIN awa.lease_claims c ON c.claim_slot = x.claim_slot AND c.job_id = x.job_id
                                 AND c.run_lease = x.run_lease, ws
         WHERE awa_internal.closure_outcome(x.outcome_code, x.outcome) = 'rescued'
           AND x.closed_at >= ws.t
         GROUP BY c.queue),
    claims AS (
        -- claims in the window whose entry the queue ring still holds (its enqueued_at
        -- read as in avail)
        SELECT c.queue, count(*) AS n,
               avg(c.claimed_at - coalesce(r.enqueued_at, r.created_at)) AS lat_avg,
               max(c.claimed_at - coalesce(r.enqueued_at, r.created_at)) AS lat_max
          FROM awa.lease_claims c
          JOIN awa.ready_entries r ON r.lane_id = c.lane_id AND r.txid = c.txid
                                  AND r.lane_seq = c.lane_seq, ws
         WHERE c.claimed_at >= ws.t AND c.attempt = r.attempt AND c.job_id = r.job_id
         GROUP BY c.queue),
    queues AS (
        SELECT l.queue FROM awa.queue_lanes l
        UNION
        SELECT s.queue FROM sched s)
    SELECT q.queue,
           coalesce(a.n, 0), coalesce(s.n, 0), coalesce(ru.n, 0), a.oldest,
           coalesce(d.c, 0) + coalesce(p.c, 0), coalesce(d.f, 0) + coalesce(p.f, 0),
           ws.t, coalesce(d.cw, 0), coalesce(d.fw, 0), coalesce(re.n, 0), coalesce(cl.n, 0),
           cl.lat_avg, cl.lat_max
      FROM queues q
     CROSS JOIN ws
      LEFT JOIN avail a ON a.queue = q.queue
      LEFT JOIN sched s ON s.queue = q.queue
      LEFT JOIN run ru ON ru.queue = q.queue
      LEFT JOIN done d ON d.queue = q.queue
      LEFT JOIN pruned p ON p.queue = q.queue
      LEFT JOIN rescued re ON re.queue = q.queue
      LEFT JOIN claims cl ON cl.queue = q.queue
     ORDER BY q.queue
$$;

-- As queue_counts: lock the ring families first (ACCESS SHARE: a prune's TRUNCATE is
-- not MVCC-safe), then read everything in one later statement's snapshot. Runs as the
-- extension's owner, so that a member of pg_monitor reads the figures without being
-- able to read the jobs. A prune that finds the lock held reports blocked and tries
-- again on its next cadence; the lock is waited for at most 5 s.
CREATE OR REPLACE FUNCTION awa.queue_stats_rows(p_window interval DEFAULT '1 minute',
    OUT queue text, OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT oldest_available_at timestamptz, OUT completed_total bigint, OUT failed_total bigint,
    OUT window_start timestamptz, OUT completed_in_window bigint,
    OUT failed_in_window bigint, OUT rescued_in_window bigint, OUT claims_in_window bigint,
    OUT claim_latency_avg interval, OUT claim_latency_max interval)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '5s'
AS $$
BEGIN
    IF p_window IS NULL OR p_window <= interval '0' OR p_window > interval '1 day' THEN
        RAISE EXCEPTION 'window must be an interval between 0 and 1 day, not %', p_window
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'awa.queue_stats uses one minute.';
    END IF;
    PERFORM awa_internal.hold_ring_families();
    RETURN QUERY SELECT * FROM awa_internal.queue_stats_in_snapshot(p_window);
END
$$;

CREATE OR REPLACE VIEW awa.queue_stats AS
SELECT s.queue, s.available, s.scheduled, s.running,
       s.oldest_available_at, now() - s.oldest_available_at AS oldest_available_age,
       s.completed_total, s.failed_total,
       s.window_start, now() - s.window_start AS rate_window,
       round(s.completed_in_window * 60
             / greatest(extract(epoch FROM now() - s.window_start), 1), 2)
           AS completed_per_minute,
       round(s.failed_in_window * 60
             / greatest(extract(epoch FROM now() - s.window_start), 1), 2)
           AS failed_per_minute,
       round(s.rescued_in_window * 60
             / greatest(extract(epoch FROM now() - s.window_start), 1), 2)
           AS rescued_per_minute,
       s.claims_in_window, s.claim_latency_avg, s.claim_latency_max
  FROM awa.queue_stats_rows('1 minute') s;

COMMENT ON VIEW awa.queue_stats IS
'per queue: available, scheduled and running jobs, the oldest available job, completed '
'and failed totals (as awa.queue_counts), and over the last minute (or the shorter '
'history the queue ring holds, rate_window): completions, failures and rescues per '
'minute and the claim latency (claimed_at - enqueued_at); docs/monitoring.md';
