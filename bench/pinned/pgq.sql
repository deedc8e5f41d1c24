-- pinned.sh, system "pgq": PgQ 3 (the extension is created by pinned.sh; the ticker and
-- maintenance are the real pgqd). One queue, one consumer; :rotation is the queue's
-- rotation period (psql -v).
SELECT pgq.create_queue('pinned');
SELECT pgq.set_queue_config('pinned', 'rotation_period', :'rotation');
SELECT pgq.register_consumer('pinned', 'c1');

CREATE SCHEMA pinned;
-- one consumer call: the next batch (one per tick), its events read, the batch
-- finished, one transaction; one NOTICE per non-empty batch ("pinned <epoch after the
-- commit> <events> <µs of next_batch + get_batch_events>"); got = events taken
CREATE PROCEDURE pinned.consume(INOUT got int DEFAULT 0) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    t1 timestamptz;
    b bigint;
    n int;
BEGIN
    b := pgq.next_batch('pinned', 'c1');
    got := 0;
    IF b IS NULL THEN
        RETURN;
    END IF;
    SELECT count(*) INTO n FROM pgq.get_batch_events(b);
    t1 := clock_timestamp();
    PERFORM pgq.finish_batch(b);
    COMMIT;
    got := n;
    IF n > 0 THEN
        RAISE NOTICE 'pinned % % %', extract(epoch FROM clock_timestamp()), n,
            (extract(epoch FROM t1 - t0) * 1e6)::bigint;
    END IF;
END $$;
