-- 0.8 -> 0.9 (docs/storage.md Part A §A.9), before 0.9/21_windows.sql and the 0.9
-- code: the ready entries already claimed or cancelled leave the queue ring (running
-- jobs live on in their receipts, which carry their bodies); the entries left are
-- every job still waiting, which 0.9 reads as committed before any snapshot (txid 0):
-- each lane's first window holds them, in their old lane order. No lane has a window
-- yet, so no claimed entry can be claimed again. The lane head sequences go (0.9
-- creates nothing at run time).
-- Every table the upgrade changes, and the lane head sequences it drops, are taken
-- first, all at once, in a loop that gives everything back and tries again after a
-- lock timeout or a deadlock: under load a session holds one ring child and asks for
-- another (a C probe opens children directly), so the upgrade, taking them one by one,
-- can close a cycle with it. Each try waits longer (50 ms, doubling, at most 800 ms:
-- below the default deadlock_timeout, so the upgrade gives up before a session's
-- deadlock check would pick that session as the victim); a session it holds up waits
-- at most one try.
DO $$
DECLARE
    v_saved text := current_setting('lock_timeout');
    v_give_up timestamptz := clock_timestamp() + interval '10 minutes';
    v_seq regclass;
    v_wait int := 50;
BEGIN
    LOOP
        PERFORM set_config('lock_timeout', v_wait || 'ms', true);
        BEGIN
            LOCK TABLE awa.ready_entries, awa.done_entries, awa.lease_claims,
                       awa.lease_claim_closures, awa.leases, awa.queue_lanes
                IN ACCESS EXCLUSIVE MODE;
            -- the head sequences (never extension members, so a DROP EXTENSION of an
            -- earlier install left its own behind: every one in schema awa)
            FOR v_seq IN SELECT c.oid::regclass FROM pg_class c
                          WHERE c.relnamespace = 'awa'::regnamespace AND c.relkind = 'S'
                            AND c.relname ~ '^lane_[0-9]+_head$' LOOP
                EXECUTE format('DROP SEQUENCE %s', v_seq);
            END LOOP;
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

DELETE FROM awa.ready_entries r
 WHERE r.lane_seq <= (SELECT p.lane_seq FROM awa.lane_position(r.lane_id) p)
    OR EXISTS (SELECT 1 FROM awa.done_entries d
                WHERE d.lane_id = r.lane_id AND d.lane_seq = r.lane_seq AND d.run_lease = 0);

-- 0.8's lane and position functions, which 0.9 does without
DROP FUNCTION awa.lock_enqueue_lane(text, smallint);
DROP FUNCTION awa.enqueue_lock_key(int);
DROP FUNCTION awa.lane_head_seq(int);
DROP FUNCTION awa.lane_head_generation(int);
DROP FUNCTION awa.claim_position(int, int, bigint, int);
DROP FUNCTION awa.lane_claimables(int, int, int, bigint, int, bigint, int);
DROP FUNCTION awa.lane_has_work(int, int, bigint, int, bigint, int);
DROP FUNCTION awa.lane_position(int, int, bigint);
DROP FUNCTION awa.lane_candidates(int, bigint, bigint, int, bigint);
