-- Completing one attempt in 0.9, in C (src/complete.c; replaces awa.complete of
-- internal/attempts.sql, same signature, same result): the attempt's lock, its open receipt
-- (awa.open_receipt), then what awa.close_attempts(ARRAY[receipt], 'completed',
-- 'completed', NULL) writes: a closure in the receipt's claim slot and a done entry
-- (run_lease: the attempt number, A.6) in the current queue slot.
CREATE OR REPLACE FUNCTION awa.complete(job_id bigint, run_lease bigint) RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_complete';

-- Completing many attempts in one round trip, in C (src/complete.c; replaces
-- awa.complete_batch of internal/attempts.sql, same signature, checks and result): the locks
-- taken in key order, then for each distinct attempt what awa.complete does; returns
-- the attempts it completed, ordered by (job_id, run_lease).
CREATE OR REPLACE FUNCTION awa.complete_batch(job_ids bigint[], run_leases bigint[])
RETURNS TABLE (job_id bigint, run_lease bigint)
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_complete_batch';

-- Failing an attempt, in C (src/attempts.c; replaces awa.fail of internal/attempts.sql, same
-- signature, checks and result): the attempt's lock, its open receipt, then what
-- awa.fail_attempt(receipt, 'failed', error, retry_in) writes.
CREATE OR REPLACE FUNCTION awa.fail(job_id bigint, run_lease bigint, error text,
                         retry_in interval DEFAULT NULL)
RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_fail';

-- A heartbeat, in C (src/attempts.c; replaces awa.heartbeat of internal/attempts.sql, same
-- signature, checks and result): the attempt's lock, its open receipt, then a row in the
-- current lease slot.
CREATE OR REPLACE FUNCTION awa.heartbeat(job_id bigint, run_lease bigint, progress jsonb DEFAULT NULL)
RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_heartbeat';
