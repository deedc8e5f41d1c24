-- 0.8 -> 0.9 (docs/storage.md Part A §A.9), before tables/0.9/windows.sql and the 0.9
-- code: the ready entries already claimed or cancelled leave the queue ring (running
-- jobs live on in their receipts, which carry their bodies); the entries left are
-- every job still waiting, which 0.9 reads as committed before any snapshot (txid 0):
-- each lane's first window holds them, in their old lane order. No lane has a window
-- yet, so no claimed entry can be claimed again.
--
-- The tables are held already (upgrade/lock-tables.sql). The lane head sequences go
-- (0.9 creates nothing at run time), each one that can be taken at once: a 0.8 claim in flight may hold one while it waits
-- for a ring child this upgrade holds, and waiting for it would close a cycle; one
-- left behind is never read by 0.9 (it is not an extension member: DROP it later).
-- Every one in schema awa: a DROP EXTENSION of an earlier install left its own behind.
DO $$
DECLARE
    v_saved text := current_setting('lock_timeout');
    v_seq regclass;
BEGIN
    PERFORM set_config('lock_timeout', '10ms', true);
    FOR v_seq IN SELECT c.oid::regclass FROM pg_class c
                  WHERE c.relnamespace = 'awa'::regnamespace AND c.relkind = 'S'
                    AND c.relname ~ '^lane_[0-9]+_head$' LOOP
        BEGIN
            EXECUTE format('DROP SEQUENCE %s', v_seq);
        EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
            RAISE NOTICE 'awa_bgw: % is in use and was left; 0.9 does not read it', v_seq;
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
