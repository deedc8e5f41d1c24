-- The step of the 0.9 -> 0.10 upgrade that changes the ring families (tables/groups.sql,
-- tables/closure_code.sql, tables/receipt_fields.sql, tables/entry_fields.sql) before
-- they do: every table that changes, taken at once, in a loop that gives everything
-- back and tries again after a lock timeout or a deadlock (as the 0.7 -> 0.8 and
-- 0.8 -> 0.9 upgrades did, released/awa_bgw--0.8--0.9.sql). Under load a session holds
-- one ring child and asks for another table (a C path opens children directly; the
-- worker's read-only gates hold children before they take a ring singleton), so an
-- upgrade taking them one by one, waiting, can close a cycle with it. Each try waits
-- longer (50 ms, doubling, at most 800 ms: below the default deadlock_timeout, so the
-- upgrade gives up before a session's deadlock check would pick that session as the
-- victim); a session it holds up waits at most one try. After 10 minutes of tries the
-- upgrade fails with the last error and changes nothing.
DO $$
DECLARE
    v_saved text := current_setting('lock_timeout');
    v_give_up timestamptz := clock_timestamp() + interval '10 minutes';
    v_wait int := 50;
BEGIN
    LOOP
        PERFORM set_config('lock_timeout', v_wait || 'ms', true);
        BEGIN
            LOCK TABLE awa.queue_ring_state, awa.lease_ring_state, awa.claim_ring_state,
                       awa.queue_ring_slots, awa.lease_ring_slots, awa.claim_ring_slots,
                       awa.ready_entries, awa.done_entries, awa.lease_claims,
                       awa.lease_claim_closures, awa.leases, awa.queue_lanes,
                       awa.deferred_jobs, awa.failed_jobs
                IN ACCESS EXCLUSIVE MODE;
            EXIT;
        EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
            IF clock_timestamp() > v_give_up THEN
                RAISE;
            END IF;
            v_wait := least(v_wait * 2, 800);
        END;
    END LOOP;
    PERFORM set_config('lock_timeout', v_saved, true);
END
$$;
