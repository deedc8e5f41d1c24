-- The validation of a job in 0.9, in C (src/checks.c; replaces awa.check_job of
-- api/jobs.sql, same signature, same rules, messages, SQLSTATEs and hints in the same
-- order): enqueue_batch checks each job, and the PL/pgSQL check took a quarter of its
-- time.
CREATE OR REPLACE FUNCTION awa.check_job(p_queue text, p_kind text, p_args jsonb,
                                         p_priority smallint, p_run_at timestamptz,
                                         p_max_attempts int)
RETURNS void
LANGUAGE C STABLE
AS 'MODULE_PATHNAME', 'awa_check_job';
