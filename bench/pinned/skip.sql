-- pinned.sh, system "skip": a well-tuned SKIP LOCKED table queue. Claim = UPDATE to
-- running with a lease over FOR UPDATE SKIP LOCKED (committed: the lease is durable),
-- ack = DELETE; a partial index on the available rows; aggressive per-table autovacuum.
CREATE SCHEMA q_skip;
CREATE TABLE q_skip.jobs (
    id bigserial PRIMARY KEY,
    queue text NOT NULL,
    priority int NOT NULL DEFAULT 0,
    state text NOT NULL DEFAULT 'available',
    attempts int NOT NULL DEFAULT 0,
    run_at timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz,
    payload text NOT NULL
) WITH (fillfactor = 90,
        autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 50,
        autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_vacuum_insert_threshold = 50,
        autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 50,
        autovacuum_vacuum_cost_delay = 0);
CREATE INDEX jobs_available ON q_skip.jobs (queue, priority, id) WHERE state = 'available';

CREATE SCHEMA pinned;
-- one consumer call: claim one job and commit, then ack it and commit; one NOTICE per
-- job taken ("pinned <epoch after the ack> <jobs> <claim µs>"); got = jobs taken
CREATE PROCEDURE pinned.consume(INOUT got int DEFAULT 0) LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    t1 timestamptz;
    jid bigint;
BEGIN
    UPDATE q_skip.jobs SET state = 'running', attempts = attempts + 1,
           lease_until = now() + interval '30 s'
     WHERE id = (SELECT id FROM q_skip.jobs
                  WHERE queue = 'default' AND state = 'available' AND run_at <= now()
                  ORDER BY priority, id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id INTO jid;
    COMMIT;
    t1 := clock_timestamp();
    got := 0;
    IF jid IS NOT NULL THEN
        DELETE FROM q_skip.jobs WHERE id = jid;
        COMMIT;
        got := 1;
        RAISE NOTICE 'pinned % 1 %', extract(epoch FROM clock_timestamp()),
            (extract(epoch FROM t1 - t0) * 1e6)::bigint;
    END IF;
END $$;
