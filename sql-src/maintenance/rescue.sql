-- The worker's rescue of stuck attempts (0.9; 0.6-0.8: ../rescue.sql).

-- Open receipts past their deadline, or whose newest heartbeat (or, without one, the
-- claim) is older than awa_bgw.job_heartbeat_timeout: closed as rescued and retried, or
-- failed when out of attempts. Takes the claim ring's serializer first, as prune does,
-- so it never races a carry-forward; an attempt whose lock is busy is left for the next
-- round.
--
-- 0.9 (docs/operations.md, "What the worker costs"): a receipt can be due only if its
-- deadline has passed or its claim is older than the timeout (the later of its claim
-- and its newest heartbeat is never earlier than its claim), so each receipt is tested
-- on its own columns first and only those old enough reach the closure and heartbeat
-- probes. 0.8 probed the
-- heartbeats of every receipt of the ring, eight lease children each, every 5 s: with
-- 25,000 jobs/s a rescue took 1.4 s, a quarter of a core.
-- The receipts of claim slot p_slot that are due for rescue (up to p_limit), each read
-- as the parent's row type (each child has a row type of its own, and a plan cached for
-- one child's type fails on another's), with why it is due.
CREATE OR REPLACE FUNCTION awa_internal.rescue_due(p_slot int, p_timeout interval, p_limit int)
RETURNS TABLE (receipt awa.lease_claims, why text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT ROW(c.*)::awa.lease_claims, CASE WHEN c.deadline_at < clock_timestamp() THEN ''deadline passed'' '
        '               ELSE ''no heartbeat for '' || $1::text END '
        '  FROM awa.%I c '
        ' WHERE (c.deadline_at < clock_timestamp() OR c.claimed_at < clock_timestamp() - $1) '
        '   AND NOT EXISTS (SELECT 1 FROM awa.%I x WHERE x.job_id = c.job_id '
        '                   AND x.run_lease = c.run_lease) '
        '   AND (c.deadline_at < clock_timestamp() '
        '        OR greatest(c.claimed_at, (SELECT max(l.heartbeat_at) FROM awa.leases l '
        '                     WHERE l.job_id = c.job_id AND l.run_lease = c.run_lease)) '
        '           < clock_timestamp() - $1) '
        ' LIMIT $2', 'lease_claims_' || p_slot, 'lease_claim_closures_' || p_slot)
      USING p_timeout, p_limit;
END
$$;

-- 0.10 (issue 33, "quiet when idle"): the receipts are first looked for without a lock
-- and without an xid; only when one is due is the serializer taken (a row lock on the
-- claim ring's singleton, which writes WAL) and the receipts read again under it. An
-- idle claim ring costs a rescue no write.
CREATE OR REPLACE FUNCTION awa.rescue(p_schema text, OUT rescued bigint, OUT outcome text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_timeout interval := coalesce(current_setting('awa_bgw.job_heartbeat_timeout', true),
                                   '90s')::interval;
    v_n int := awa_internal.ring_slot_count('claim');
    r record;
    s int;
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    PERFORM awa_internal.require_read_committed();
    rescued := 0;
    IF NOT EXISTS (SELECT 1 FROM generate_series(0, v_n - 1) g,
                                 LATERAL awa_internal.rescue_due(g, v_timeout, 1) d) THEN
        outcome := 'none';
        RETURN;
    END IF;
    IF awa_internal.ring_try_serializer('claim') IS NULL THEN
        outcome := 'blocked';
        RETURN;
    END IF;
    FOR s IN 0 .. v_n - 1 LOOP
        FOR r IN SELECT * FROM awa_internal.rescue_due(s, v_timeout, 500) LOOP
            CONTINUE WHEN NOT awa_internal.private_try_xact_lock(
                awa_internal.attempt_lock_key((r.receipt).job_id, (r.receipt).run_lease));
            PERFORM awa_internal.fail_attempt(r.receipt, 'rescued', 'rescued: ' || r.why, NULL);
            rescued := rescued + 1;
        END LOOP;
    END LOOP;
    outcome := CASE WHEN rescued > 0 THEN 'rescued' ELSE 'none' END;
END
$$;
