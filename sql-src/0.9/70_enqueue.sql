-- Enqueue in 0.9, in C (src/enqueue.c, src/enqueue_batch.c; replace awa.enqueue and
-- awa.enqueue_batch of 70_jobs.sql, same signatures, same checks in the same order,
-- same messages, SQLSTATEs and hints, same results): the isolation level, check_job,
-- the job id, then what awa.enqueue_jobs does, the due jobs straight into the ring
-- (awa.enqueue_ready's work) and the later ones through awa.enqueue_jobs into
-- awa.deferred_jobs.
CREATE OR REPLACE FUNCTION awa.enqueue(queue text, kind text, args jsonb DEFAULT '{}',
                            priority smallint DEFAULT 0, run_at timestamptz DEFAULT now(),
                            max_attempts int DEFAULT 25)
RETURNS bigint
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_enqueue';

-- Many jobs in one round trip: a JSON array of objects with "kind" (required), "args",
-- "priority", "run_at", "max_attempts". Returns the job ids in input order.
CREATE OR REPLACE FUNCTION awa.enqueue_batch(queue text, jobs jsonb) RETURNS SETOF bigint
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_enqueue_batch';
