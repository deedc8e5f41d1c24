-- Enqueue, in C (src/dataplane/enqueue.c, src/dataplane/enqueue_batch.c; until 0.9
-- PL/pgSQL, with the same signatures, checks in the same order, messages, SQLSTATEs,
-- hints and results): the isolation level, check_job, the job id, then what
-- awa_internal.enqueue_jobs does, the due jobs straight into the ring
-- (awa_internal.enqueue_ready's work) and the later ones through
-- awa_internal.enqueue_jobs into awa.deferred_jobs.
-- 0.9 adds unique_key, unique_for and unique_states (api/unique.sql): a unique enqueue
-- returns the id of the job of the same queue and key that stands in its way, and
-- writes nothing.
-- 0.10 takes the priority as an int, so that priority => 5 resolves as a caller writes
-- it (0 to 9 are allowed, as before); 0.8's six-argument form and 0.9's smallint form
-- go in the upgrades that replace them (upgrade/0.9--0.10-forms.sql).
CREATE OR REPLACE FUNCTION awa.enqueue(queue text, kind text, args jsonb DEFAULT '{}',
                            priority int DEFAULT 0, run_at timestamptz DEFAULT now(),
                            max_attempts int DEFAULT 25, unique_key text DEFAULT NULL,
                            unique_for interval DEFAULT NULL,
                            unique_states text[] DEFAULT NULL)
RETURNS bigint
LANGUAGE C VOLATILE SECURITY DEFINER
AS 'MODULE_PATHNAME', 'awa_enqueue';

-- Many jobs in one round trip: a JSON array of objects with "kind" (required), "args",
-- "priority", "run_at", "max_attempts". Returns the job ids in input order.
CREATE OR REPLACE FUNCTION awa.enqueue_batch(queue text, jobs jsonb) RETURNS SETOF bigint
LANGUAGE C VOLATILE SECURITY DEFINER
AS 'MODULE_PATHNAME', 'awa_enqueue_batch';
