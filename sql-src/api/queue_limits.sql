-- Running and rate limits per queue (0.10, issue 34; docs/usage.md "Running limits"):
-- at most max_running attempts of a queue run at once, across every session, and at
-- most rate attempts are claimed per rate_per (a token bucket of burst tokens). The
-- counts and buckets are in shared memory (src/dataplane/limits.c): a claim reserves
-- room and tokens before it reads the lanes, a commit turns what it took into running
-- attempts (its tokens spent), a close frees its room when it commits, an abort gives
-- room and tokens back. After a start, the first claim of a queue with max_running
-- counts its open attempts (awa_internal.queue_open_attempts) before it is served; a
-- bucket starts empty.

-- A change to the limits drops every backend's cached policies when it commits.
CREATE OR REPLACE TRIGGER queue_limits_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON awa_internal.queue_limits
    FOR EACH STATEMENT EXECUTE FUNCTION awa_internal.queue_policy_changed();

-- The queue's shared entry, made before its limits are written (53400 past
-- awa_bgw.max_limited_queues); p_recount starts its running count again (a max_running
-- on a queue that had none), p_refill makes its token bucket again, full, at its next
-- claim (a rate on a queue that had none).
CREATE OR REPLACE FUNCTION awa_internal.queue_limit_entry(p_queue text, p_recount boolean,
    p_refill boolean)
RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_queue_limit_entry';

-- Drops the queue's shared entry (its limit is cleared).
CREATE OR REPLACE FUNCTION awa_internal.queue_limit_forget(p_queue text) RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_queue_limit_forget';

-- The queue's shared counts: running (claims committed, closes not), pending (claims
-- whose transaction has not ended), ready (counted since the start), tokens (the whole
-- tokens its bucket holds now; NULL before its first claim with a rate made it). No
-- row when the queue has no entry in this server's shared memory.
CREATE OR REPLACE FUNCTION awa_internal.queue_limit_state(p_queue text,
    OUT running int, OUT pending int, OUT ready boolean, OUT tokens int)
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

-- The bounds of the limits, as errors (22004, 22023) with a hint, before anything is
-- written: max_running and rate 1 .. 1000000 (0 is refused: pause the queue instead),
-- rate_per 1 ms .. 1 day, burst 1 .. 1000000 and only with a rate; at least one of
-- max_running and rate.
CREATE OR REPLACE FUNCTION awa_internal.check_queue_limits(p_max_running int, p_rate int,
    p_rate_per interval, p_burst int) RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_max_running IS NULL AND p_rate IS NULL THEN
        RAISE EXCEPTION 'a queue limit needs max_running or rate'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'To remove a queue''s limits: awa.clear_queue_limits(queue).';
    END IF;
    IF p_max_running < 1 OR p_max_running > 1000000 THEN
        RAISE EXCEPTION 'max_running % is out of range', p_max_running
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Limit a queue to 1 .. 1000000 running attempts; to stop its '
                         'claims, pause it: awa.pause_queue(queue).';
    END IF;
    IF p_rate < 1 OR p_rate > 1000000 THEN
        RAISE EXCEPTION 'rate % is out of range', p_rate
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Limit a queue to 1 .. 1000000 claims per rate_per; to stop its '
                         'claims, pause it: awa.pause_queue(queue).';
    END IF;
    IF p_rate IS NOT NULL AND p_rate_per IS NULL THEN
        RAISE EXCEPTION 'rate_per must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'rate counts claims per rate_per, between 1 millisecond and 1 day '
                         '(by default 1 second).';
    END IF;
    IF p_rate IS NOT NULL AND (p_rate_per < interval '1 millisecond'
                               OR p_rate_per > interval '1 day') THEN
        RAISE EXCEPTION 'rate_per % is out of range', p_rate_per
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'rate counts claims per rate_per, between 1 millisecond and 1 day.';
    END IF;
    IF p_burst IS NOT NULL AND p_rate IS NULL THEN
        RAISE EXCEPTION 'burst needs a rate'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'burst is the most claims a queue''s rate lets through at once; '
                         'give the rate too.';
    END IF;
    IF p_burst < 1 OR p_burst > 1000000 THEN
        RAISE EXCEPTION 'burst % is out of range', p_burst
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A burst is 1 .. 1000000 claims (by default the rate).';
    END IF;
END
$$;

-- Sets a queue's limits, replacing all of them: at most max_running attempts running at
-- once, at most rate claims per rate_per (a token bucket of burst tokens, by default
-- rate); a limit left NULL is none, and one of the two must be given. Needs EXECUTE and
-- the manage privilege on the queue. Claims see them once this commits; a max_running
-- on a queue that had none starts from a count of its open attempts, not from zero; a
-- rate on a queue that had none starts with a full bucket (a changed rate keeps the
-- whole tokens the bucket holds, at most the new burst).
CREATE OR REPLACE FUNCTION awa.set_queue_limits(queue text, max_running int DEFAULT NULL,
    rate int DEFAULT NULL, rate_per interval DEFAULT '1 second', burst int DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_old awa_internal.queue_limits;
    v_per interval := CASE WHEN set_queue_limits.rate IS NOT NULL
                           THEN set_queue_limits.rate_per END;
    v_burst int := CASE WHEN set_queue_limits.rate IS NOT NULL
                        THEN coalesce(set_queue_limits.burst, set_queue_limits.rate) END;
BEGIN
    PERFORM awa_internal.check_name('queue', set_queue_limits.queue);
    PERFORM awa_internal.check_queue_limits(set_queue_limits.max_running,
        set_queue_limits.rate, set_queue_limits.rate_per, set_queue_limits.burst);
    PERFORM awa_internal.require_queue_privilege(set_queue_limits.queue, 'manage');
    SELECT * INTO v_old FROM awa_internal.queue_limits l
     WHERE l.queue = set_queue_limits.queue FOR UPDATE;
    PERFORM awa_internal.queue_limit_entry(set_queue_limits.queue,
        set_queue_limits.max_running IS NOT NULL AND v_old.max_running IS NULL,
        set_queue_limits.rate IS NOT NULL AND v_old.rate IS NULL);
    INSERT INTO awa_internal.queue_limits AS l
           (queue, max_running, rate, rate_per, burst, set_by)
    VALUES (set_queue_limits.queue, set_queue_limits.max_running, set_queue_limits.rate,
            v_per, v_burst, session_user::regrole)
    ON CONFLICT ON CONSTRAINT queue_limits_pkey DO UPDATE
        SET max_running = EXCLUDED.max_running, rate = EXCLUDED.rate,
            rate_per = EXCLUDED.rate_per, burst = EXCLUDED.burst,
            set_by = EXCLUDED.set_by, set_at = now();
    -- claims that waited at the old limits may take now
    PERFORM awa_internal.note_resumed(set_queue_limits.queue);
END
$$;

-- Removes a queue's limits (true when it had any); its claims are unlimited once this
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
