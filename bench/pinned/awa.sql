-- pinned.sh, system "awa": awa_bgw (the extension is created by pinned.sh). Claim =
-- awa.claim of one job (committed), ack = awa.complete (committed).
SELECT awa.register_queue('pinned');

CREATE SCHEMA pinned;
-- one consumer call: claim one job and commit, then complete it and commit; one NOTICE
-- per job taken ("pinned <epoch after the ack> <jobs> <claim µs>"); got = jobs taken
CREATE PROCEDURE pinned.consume(INOUT got int DEFAULT 0) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    t1 timestamptz;
    jid bigint;
    lease bigint;
BEGIN
    SELECT job_id, run_lease INTO jid, lease FROM awa.claim('pinned', 1);
    COMMIT;
    t1 := clock_timestamp();
    got := 0;
    IF jid IS NOT NULL THEN
        PERFORM awa.complete(jid, lease);
        COMMIT;
        got := 1;
        RAISE NOTICE 'pinned % 1 %', extract(epoch FROM clock_timestamp()),
            (extract(epoch FROM t1 - t0) * 1e6)::bigint;
    END IF;
END $$;
