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
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_complete_and_claim';
