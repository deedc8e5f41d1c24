-- Completing one attempt in 0.9, in C (src/complete.c; replaces awa.complete of
-- 72_attempts.sql, same signature, same result): the attempt's lock, its open receipt
-- (awa.open_receipt), then what awa.close_attempts(ARRAY[receipt], 'completed',
-- 'completed', NULL) writes: a closure in the receipt's claim slot and a done entry
-- (run_lease: the attempt number, A.6) in the current queue slot.
CREATE OR REPLACE FUNCTION awa.complete(job_id bigint, run_lease bigint) RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_complete';
