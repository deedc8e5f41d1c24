-- Benchmark and load-test harness objects (schema bench), on top of CREATE EXTENSION
-- awa_bgw. Producers log every job id they enqueue in the same transaction, consumers
-- every attempt they claim and complete, so a run can be checked for exactly-once completion.
CREATE SCHEMA IF NOT EXISTS bench;
CREATE TABLE IF NOT EXISTS bench.enqueued (job_id bigint NOT NULL);
CREATE TABLE IF NOT EXISTS bench.claimed (job_id bigint NOT NULL, run_lease bigint NOT NULL);
CREATE TABLE IF NOT EXISTS bench.completed (job_id bigint NOT NULL, run_lease bigint NOT NULL);
SELECT awa.register_queue('bench');
-- the wake cell (run.sh): when each job's enqueue committed, and when a waiting claim
-- returned it
CREATE TABLE IF NOT EXISTS bench.wake_sent (job_id bigint NOT NULL, before_commit timestamptz,
                                            after_commit timestamptz);
CREATE TABLE IF NOT EXISTS bench.wake_got (job_id bigint NOT NULL, got_at timestamptz);

-- Logging the ids costs an insert per step; it is on only where a run is checked
-- (SET bench.log = on, as the load test does), off for throughput runs.
CREATE OR REPLACE FUNCTION bench.logging() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT coalesce(current_setting('bench.log', true), 'off') = 'on' $$;

-- enqueue n jobs (n = 1: awa.enqueue; n > 1: one awa.enqueue_batch round trip)
CREATE OR REPLACE FUNCTION bench.produce(n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    id bigint;
BEGIN
    IF n = 1 THEN
        id := awa.enqueue('bench', 'noop', '{"p": 1}');
        IF bench.logging() THEN
            INSERT INTO bench.enqueued VALUES (id);
        END IF;
    ELSIF bench.logging() THEN
        INSERT INTO bench.enqueued
        SELECT * FROM awa.enqueue_batch('bench',
            (SELECT jsonb_agg(jsonb_build_object('kind', 'noop', 'args', jsonb_build_object('p', i)))
               FROM generate_series(1, n) i));
    ELSE
        PERFORM awa.enqueue_batch('bench',
            (SELECT jsonb_agg(jsonb_build_object('kind', 'noop', 'args', jsonb_build_object('p', i)))
               FROM generate_series(1, n) i));
    END IF;
END $$;

-- complete the attempts (ids[i], leases[i]) in one call, logging those it completed
CREATE OR REPLACE FUNCTION bench.complete_held(ids bigint[], leases bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF bench.logging() THEN
        INSERT INTO bench.completed SELECT * FROM awa.complete_batch(ids, leases);
    ELSE
        PERFORM count(*) FROM awa.complete_batch(ids, leases);
    END IF;
END $$;

-- claim up to n jobs and commit (the claim is durable), then complete them and commit
CREATE OR REPLACE PROCEDURE bench.consume(n int) LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
    leases bigint[];
BEGIN
    IF bench.logging() THEN
        WITH c AS (SELECT job_id, run_lease FROM awa.claim('bench', n)),
             logged AS (INSERT INTO bench.claimed SELECT * FROM c)
        SELECT array_agg(job_id), array_agg(run_lease) INTO ids, leases FROM c;
    ELSE
        SELECT array_agg(job_id), array_agg(run_lease) INTO ids, leases FROM awa.claim('bench', n);
    END IF;
    COMMIT;
    IF ids IS NULL THEN
        RETURN;
    END IF;
    IF n = 1 THEN
        IF awa.complete(ids[1], leases[1]) AND bench.logging() THEN
            INSERT INTO bench.completed VALUES (ids[1], leases[1]);
        END IF;
    ELSE
        PERFORM bench.complete_held(ids, leases);
    END IF;
    COMMIT;
END $$;

-- one step of a consumer's loop, one job per CALL and one transaction (the shape of the
-- baseline's bench.skip_consume(1): one CALL per job, its SQL in PL/pgSQL with cached
-- plans): complete the job the client holds (j, l; 0 for none) and claim the next,
-- returned in j, l (0 when the queue gave nothing). consumer_loop_call.sql keeps them in
-- pgbench variables from one CALL to the next
CREATE OR REPLACE PROCEDURE bench.consume_next(INOUT j bigint, INOUT l bigint)
LANGUAGE plpgsql AS $$
DECLARE
    nj bigint;
    nl bigint;
BEGIN
    SELECT c.job_id, c.run_lease INTO nj, nl
      FROM awa.complete_and_claim(CASE WHEN j = 0 THEN NULL ELSE ARRAY[j] END,
                                  CASE WHEN j = 0 THEN NULL ELSE ARRAY[l] END, 'bench', 1) c;
    j := coalesce(nj, 0);
    l := coalesce(nl, 0);
END $$;

-- the consumer loop of one transaction per job (awa.complete_and_claim): up to steps
-- times, complete the n jobs this call holds and claim the next n, and commit; then
-- complete what it still holds, so that a call leaves nothing claimed. A completion is
-- logged when the attempt's record says it completed (complete_and_claim skips an
-- attempt it no longer holds, as complete_batch does)
CREATE OR REPLACE PROCEDURE bench.consume_loop(n int, steps int) LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[] := '{}';
    leases bigint[] := '{}';
    next_ids bigint[];
    next_leases bigint[];
BEGIN
    FOR step IN 1 .. steps LOOP
        SELECT coalesce(array_agg(job_id), '{}'), coalesce(array_agg(run_lease), '{}')
          INTO next_ids, next_leases
          FROM awa.complete_and_claim(ids, leases, 'bench', n);
        IF bench.logging() THEN
            INSERT INTO bench.completed
            SELECT u.i, u.l FROM unnest(ids, leases) u(i, l)
             WHERE EXISTS (SELECT 1 FROM awa_internal.job_records(u.i) r
                            WHERE r.run_lease = u.l AND r.state = 'completed');
            INSERT INTO bench.claimed SELECT * FROM unnest(next_ids, next_leases);
        END IF;
        COMMIT;
        ids := next_ids;
        leases := next_leases;
        EXIT WHEN cardinality(ids) = 0;
    END LOOP;
    IF cardinality(ids) > 0 THEN
        PERFORM bench.complete_held(ids, leases);
        COMMIT;
    END IF;
END $$;

-- the second half of a waiting consumer (bench/consumer_wait.sql): the job its waiting
-- claim took (job 0: none), logged and completed
CREATE OR REPLACE FUNCTION bench.finish(p_job bigint, p_lease bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_job = 0 THEN
        RETURN;
    END IF;
    IF bench.logging() THEN
        INSERT INTO bench.claimed VALUES (p_job, p_lease);
    END IF;
    IF awa.complete(p_job, p_lease) AND bench.logging() THEN
        INSERT INTO bench.completed VALUES (p_job, p_lease);
    END IF;
END $$;

-- The SKIP LOCKED baseline, with the same contract shape (a durable claim with a
-- lease, then an ack): the usual jobs table that UPDATEs and DELETEs rows.
CREATE TABLE IF NOT EXISTS bench.skip_jobs (
    id bigserial PRIMARY KEY, queue text NOT NULL, priority int NOT NULL DEFAULT 0,
    state text NOT NULL DEFAULT 'available', attempts int NOT NULL DEFAULT 0,
    run_at timestamptz NOT NULL DEFAULT now(), lease_until timestamptz, args jsonb NOT NULL);
CREATE INDEX IF NOT EXISTS skip_jobs_available ON bench.skip_jobs (queue, priority, id)
    WHERE state = 'available';

CREATE OR REPLACE FUNCTION bench.skip_produce(n int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO bench.skip_jobs (queue, args)
    SELECT 'bench', jsonb_build_object('p', i) FROM generate_series(1, n) i $$;

CREATE OR REPLACE PROCEDURE bench.skip_consume(n int) LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    WITH c AS (
        UPDATE bench.skip_jobs SET state = 'running', attempts = attempts + 1,
               lease_until = now() + interval '5 minutes'
         WHERE id IN (SELECT id FROM bench.skip_jobs
                       WHERE queue = 'bench' AND state = 'available' AND run_at <= now()
                       ORDER BY priority, id LIMIT n FOR UPDATE SKIP LOCKED)
        RETURNING id)
    SELECT array_agg(id) INTO ids FROM c;
    COMMIT;
    IF ids IS NOT NULL THEN
        DELETE FROM bench.skip_jobs WHERE id = ANY (ids);
    END IF;
    COMMIT;
END $$;
