-- Closing attempts (docs/storage.md §A.15): one row per attempt, its closure in the
-- receipt's claim slot, carrying the outcome, the job's terminal state (p_state: NULL
-- while the job goes on) and the error of a final failure. No done entry: the closure
-- is the outcome, counted where it lies and folded into the rollups by the claim prune
-- that truncates it. src/dataplane/complete.c writes the same row for the C paths. The one place
-- in SQL that writes closures (fail_attempt for rescue, cancel, cancel_queue). The
-- caller holds the attempts' locks. Each close of an attempt of a queue with a running
-- limit is counted (awa_internal.note_closed, src/dataplane/limits.c). 0.10 writes the
-- pair (outcome, state) as its one-byte code (tables/closure_code.sql), outcome, state
-- and claim_generation NULL; a pair with no code writes neither shape, which the
-- closures' CHECK refuses.
CREATE OR REPLACE FUNCTION awa_internal.close_attempts(p_receipts awa.lease_claims[], p_outcome text,
                                              p_state text, p_error text)
RETURNS void
LANGUAGE sql VOLATILE
AS $$
    INSERT INTO awa.lease_claim_closures (claim_slot, job_id, run_lease, outcome_code, error)
    SELECT c.claim_slot, c.job_id, c.run_lease,
           CASE p_outcome || '/' || coalesce(p_state, '')
               WHEN 'completed/completed' THEN '1' WHEN 'failed/failed' THEN '2'
               WHEN 'retried/' THEN '3' WHEN 'cancelled/cancelled' THEN '4'
               WHEN 'rescued/' THEN '5' WHEN 'rescued/failed' THEN '6' END::"char",
           p_error
      FROM unnest(p_receipts) c;
    -- a queue with a running limit gets the room back when this commits
    SELECT awa_internal.note_closed(c.queue, count(*)::int)
      FROM unnest(p_receipts) c
     GROUP BY c.queue;
$$;
