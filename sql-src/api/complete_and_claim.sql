-- A consumer's loop in one transaction per job, in C (src/dataplane/complete.c): the
-- attempts it holds completed as by awa.complete_batch (NULL or empty arrays complete
-- nothing), then a claim as by awa.claim without wait, in one call and one commit. The
-- queue and the caller's claim privilege are checked before anything is written;
-- READ COMMITTED only, as the claim.
CREATE OR REPLACE FUNCTION awa.complete_and_claim(job_ids bigint[], run_leases bigint[],
                          queue text, max_batch int DEFAULT 1,
                          deadline interval DEFAULT '5 minutes')
RETURNS SETOF awa.claimed_job
LANGUAGE C VOLATILE SECURITY DEFINER
AS 'MODULE_PATHNAME', 'awa_complete_and_claim';

-- The same loop when the job failed (0.10), in C (src/dataplane/attempts.c): the attempt
-- it holds failed as by awa.fail (retried after retry_in, or the backoff when NULL, or
-- failed for good on its last attempt; NULL ids fail nothing), then a claim as by
-- awa.claim without wait, in one call and one commit. The queue and the caller's claim
-- privilege are checked before anything is written; READ COMMITTED only, as the claim.
CREATE OR REPLACE FUNCTION awa.fail_and_claim(job_id bigint, run_lease bigint, error text,
                          retry_in interval, queue text, max_batch int DEFAULT 1,
                          deadline interval DEFAULT '5 minutes')
RETURNS SETOF awa.claimed_job
LANGUAGE C VOLATILE SECURITY DEFINER
AS 'MODULE_PATHNAME', 'awa_fail_and_claim';
