-- Benchmark and load-test harness objects (schema bench), on top of CREATE EXTENSION
-- awa_bgw. Producers log every job id they enqueue in the same transaction, consumers
-- every attempt they claim and complete, so a run can be checked for exactly-once completion.
CREATE SCHEMA IF NOT EXISTS bench;
CREATE TABLE IF NOT EXISTS bench.enqueued (job_id bigint NOT NULL);
CREATE TABLE IF NOT EXISTS bench.claimed (job_id bigint NOT NULL, run_lease int NOT NULL);
CREATE TABLE IF NOT EXISTS bench.completed (job_id bigint NOT NULL, run_lease int NOT NULL);
SELECT awa.register_queue('bench');

-- enqueue n jobs (n = 1: awa.enqueue; n > 1: one awa.enqueue_batch round trip)
CREATE OR REPLACE FUNCTION bench.produce(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF n = 1 THEN
        INSERT INTO bench.enqueued VALUES (awa.enqueue('bench', 'noop', '{"p": 1}'));
    ELSE
        INSERT INTO bench.enqueued
        SELECT * FROM awa.enqueue_batch('bench',
            (SELECT jsonb_agg(jsonb_build_object('kind', 'noop', 'args', jsonb_build_object('p', i)))
               FROM generate_series(1, n) i));
    END IF;
END $$;

-- claim up to n jobs and commit (the claim is durable), then complete them and commit
CREATE OR REPLACE PROCEDURE bench.consume(n int) LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
    leases int[];
BEGIN
    WITH c AS (SELECT job_id, run_lease FROM awa.claim('bench', n)),
         logged AS (INSERT INTO bench.claimed SELECT * FROM c)
    SELECT array_agg(job_id), array_agg(run_lease) INTO ids, leases FROM c;
    COMMIT;
    IF ids IS NULL THEN
        RETURN;
    END IF;
    IF n = 1 THEN
        IF awa.complete(ids[1], leases[1]) THEN
            INSERT INTO bench.completed VALUES (ids[1], leases[1]);
        END IF;
    ELSE
        INSERT INTO bench.completed SELECT * FROM awa.complete_batch(ids, leases);
    END IF;
    COMMIT;
END $$;
