-- Running limits per queue (0.10, issue 34; docs/usage.md "Running limits"): at most
-- max_running attempts of a queue run at once, across every session. The counts are in
-- shared memory (src/dataplane/limits.c): a claim reserves room before it reads the
-- lanes, a commit turns what it took into running attempts, a close frees its room when
-- it commits. After a start, the first claim of a limited queue counts its open
-- attempts (awa_internal.queue_open_attempts) before it is served.

-- A change to the limits drops every backend's cached policies when it commits.
CREATE OR REPLACE TRIGGER queue_limits_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON awa_internal.queue_limits
    FOR EACH STATEMENT EXECUTE FUNCTION awa_internal.queue_policy_changed();

-- The queue's shared entry, made before its limit is written (53400 past
-- awa_bgw.max_limited_queues); p_fresh replaces one an earlier limit left.
CREATE OR REPLACE FUNCTION awa_internal.queue_limit_entry(p_queue text, p_fresh boolean)
RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_queue_limit_entry';

-- Drops the queue's shared entry (its limit is cleared).
CREATE OR REPLACE FUNCTION awa_internal.queue_limit_forget(p_queue text) RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_queue_limit_forget';

-- The queue's shared counts: running (claims committed, closes not), pending (claims
-- whose transaction has not ended), ready (counted since the start). No row when the
-- queue has no entry in this server's shared memory.
CREATE OR REPLACE FUNCTION awa_internal.queue_limit_state(p_queue text,
    OUT running int, OUT pending int, OUT ready boolean)
RETURNS SETOF record
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_queue_limit_state';

-- Closes written in SQL (awa_internal.close_attempts: rescue, cancel) count against the
-- queue's limit when the transaction commits.
CREATE OR REPLACE FUNCTION awa_internal.note_closed(p_queue text, p_n int) RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_note_closed';

-- The queue's open attempts (receipts without a closure, each attempt once: a receipt
-- carried to a newer claim slot is in both), counted for the shared entry after a start
-- or a new limit. The SHARE locks wait until no transaction that claimed or closed
-- (of any queue) is in flight, and hold new ones off while it counts, so the count and
-- the deltas of those transactions never overlap; the caller runs it in a
-- subtransaction that it rolls back at once, which releases them.
-- A lock request waits in line and makes the requests after it wait too: every claim
-- and close of the database would queue behind this one while it waits. So it asks only
-- when every transaction holding a lock on the claim ring began less than a second ago
-- (and waits a second at most): one that is older, or prepared, may hold its locks for
-- long, and the count then fails at once (55P03) instead of stalling everyone behind it;
-- the next claim of the queue tries again.
CREATE OR REPLACE FUNCTION awa_internal.queue_open_attempts(p_queue text) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '1s'
AS $$
DECLARE
    v_holder text;
BEGIN
    SELECT coalesce('process ' || l.pid, 'prepared transaction ' || l.virtualtransaction)
      INTO v_holder
      FROM pg_locks l
      LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'relation' AND l.granted
       AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
       AND l.relation IN (SELECT 'awa.lease_claims'::regclass
                          UNION ALL SELECT 'awa.lease_claim_closures'::regclass
                          UNION ALL SELECT i.inhrelid FROM pg_inherits i
                           WHERE i.inhparent IN ('awa.lease_claims'::regclass,
                                                 'awa.lease_claim_closures'::regclass))
       AND l.pid IS DISTINCT FROM pg_backend_pid()
       AND (l.pid IS NULL OR a.xact_start IS NULL
            OR a.xact_start < clock_timestamp() - interval '1 second')
     LIMIT 1;
    IF v_holder IS NOT NULL THEN
        RAISE EXCEPTION 'cannot count the running attempts of queue "%" now', p_queue
            USING ERRCODE = 'lock_not_available',
                  DETAIL = format('A transaction of %s that claimed or closed attempts has '
                                  'held the claim ring for more than a second.', v_holder),
                  HINT = 'The first claim of a limited queue after a start, or after its '
                         'limit is set, counts its running attempts; end long or prepared '
                         'transactions (pg_prepared_xacts) that claimed or completed, then '
                         'claim again.';
    END IF;
    BEGIN
        LOCK TABLE awa.lease_claims, awa.lease_claim_closures IN SHARE MODE;
    EXCEPTION WHEN lock_not_available THEN
        RAISE EXCEPTION 'cannot count the running attempts of queue "%" now', p_queue
            USING ERRCODE = 'lock_not_available',
                  DETAIL = 'A transaction that claimed or closed attempts held the claim '
                           'ring for a second.',
                  HINT = 'The first claim of a limited queue after a start, or after its '
                         'limit is set, counts its running attempts; end long or prepared '
                         'transactions (pg_prepared_xacts) that claimed or completed, then '
                         'claim again.';
    END;
    RETURN (SELECT count(*)
              FROM (SELECT DISTINCT c.job_id, c.run_lease
                      FROM awa.lease_claims c
                     WHERE c.queue = p_queue
                       AND NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures x
                                        WHERE x.job_id = c.job_id
                                          AND x.run_lease = c.run_lease)) t);
END
$$;

-- The bounds of max_running, as errors (22004, 22023), before anything is written.
CREATE OR REPLACE FUNCTION awa_internal.check_max_running(p_max_running int) RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_max_running IS NULL THEN
        RAISE EXCEPTION 'max_running must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'To remove a queue''s limit: awa.clear_queue_limits(queue).';
    END IF;
    IF p_max_running < 1 OR p_max_running > 1000000 THEN
        RAISE EXCEPTION 'max_running % is out of range', p_max_running
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Limit a queue to 1 .. 1000000 running attempts; to stop its '
                         'claims, pause it: awa.pause_queue(queue).';
    END IF;
END
$$;

-- Limits a queue to max_running attempts running at once (replacing its limit). Needs
-- EXECUTE and the manage privilege on the queue. Claims see it once this commits; a
-- queue that had no limit starts from a count of its open attempts, not from zero.
CREATE OR REPLACE FUNCTION awa.set_queue_limits(queue text, max_running int) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_had boolean;
BEGIN
    PERFORM awa_internal.check_name('queue', set_queue_limits.queue);
    PERFORM awa_internal.check_max_running(set_queue_limits.max_running);
    PERFORM awa_internal.require_queue_privilege(set_queue_limits.queue, 'manage');
    SELECT true INTO v_had FROM awa_internal.queue_limits l
     WHERE l.queue = set_queue_limits.queue FOR UPDATE;
    PERFORM awa_internal.queue_limit_entry(set_queue_limits.queue, v_had IS NULL);
    INSERT INTO awa_internal.queue_limits AS l (queue, max_running, set_by)
    VALUES (set_queue_limits.queue, set_queue_limits.max_running, session_user::regrole)
    ON CONFLICT ON CONSTRAINT queue_limits_pkey DO UPDATE
        SET max_running = EXCLUDED.max_running, set_by = EXCLUDED.set_by, set_at = now();
END
$$;

-- Removes a queue's limit (true when it had one); its claims are unlimited once this
-- commits. Callers as for set_queue_limits.
CREATE OR REPLACE FUNCTION awa.clear_queue_limits(queue text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_name('queue', clear_queue_limits.queue);
    PERFORM awa_internal.require_queue_privilege(clear_queue_limits.queue, 'manage');
    DELETE FROM awa_internal.queue_limits l WHERE l.queue = clear_queue_limits.queue;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM awa_internal.queue_limit_forget(clear_queue_limits.queue);
    -- claims that waited at the limit may take now
    PERFORM awa_internal.note_resumed(clear_queue_limits.queue);
    RETURN true;
END
$$;
