-- 0.10: a closure names its outcome and the job's terminal state by a one-byte code
-- (docs/proposals/receipt_fields.md (b1), docs/storage.md A.15, A.16). Run once, after
-- tables/groups.sql, by a fresh 0.10 install and by the 0.9 -> 0.10 upgrade alike
-- (behind upgrade/lock-tables.sql), so that both end with the same catalog.
--
-- A closure written by 0.10 carries outcome_code and leaves outcome, state and
-- claim_generation NULL (nothing reads a closure's generation: it is found by its
-- receipt's slot and key). The code names the pair (outcome, state) that close_attempts
-- writes: '1' completed/completed, '2' failed/failed, '3' retried/NULL,
-- '4' cancelled/cancelled, '5' rescued/NULL, '6' rescued/failed. A closure written
-- before (an upgrade, or a restore of an older dump) keeps its text columns and code
-- NULL: the column is added without a default. One shape per row: the code or the text
-- outcome, never both, never neither. Digits, not letters: a text literal compared with
-- a "char" is cut to its first byte ('rescued'::"char" is 'r'), so a reader that
-- compared the code with an outcome by mistake would match nothing rather than another
-- outcome. Readers go through closure_outcome and closure_state below; sql/
-- 25_closure_code.sql lists every function and view that names the column.
ALTER TABLE awa.lease_claim_closures
    ALTER COLUMN claim_generation DROP NOT NULL,
    ALTER COLUMN outcome DROP NOT NULL,
    ADD COLUMN outcome_code "char"
        CHECK (outcome_code IN ('1', '2', '3', '4', '5', '6')),
    ADD CONSTRAINT lease_claim_closures_one_shape
        CHECK ((outcome_code IS NULL) <> (outcome IS NULL));

-- A closure's outcome (completed, failed, retried, cancelled, rescued) from its code,
-- or from its text column when it has no code (written before 0.10). A SQL CASE the
-- planner inlines into the query that calls it (no SET, not STRICT).
CREATE OR REPLACE FUNCTION awa_internal.closure_outcome(p_code "char", p_outcome text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE p_code WHEN '1' THEN 'completed' WHEN '2' THEN 'failed'
                       WHEN '3' THEN 'retried' WHEN '4' THEN 'cancelled'
                       WHEN '5' THEN 'rescued' WHEN '6' THEN 'rescued'
                       ELSE p_outcome END
$$;

-- A closure's terminal state of the job (completed, failed, cancelled; NULL: the job
-- goes on) from its code, or from its text column when it has no code. Inlined as
-- closure_outcome.
CREATE OR REPLACE FUNCTION awa_internal.closure_state(p_code "char", p_state text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE p_code WHEN '1' THEN 'completed' WHEN '2' THEN 'failed'
                       WHEN '3' THEN NULL WHEN '4' THEN 'cancelled'
                       WHEN '5' THEN NULL WHEN '6' THEN 'failed'
                       ELSE p_state END
$$;
