-- Closures with a one-byte outcome code (0.10; docs/proposals/receipt_fields.md (b1),
-- tables/closure_code.sql, docs/storage.md A.15): every writer writes the code, with
-- outcome, state and claim_generation NULL; every reader reads the pair through
-- awa_internal.closure_outcome / closure_state (SQL) or jobstate.c (C), which fall back
-- to the text columns for a closure written before (code NULL). One shape per row.
\i sql/fresh.inc
SET statement_timeout = '60s';
\pset null '∅'

-- the catalog: outcome_code "char", last, no default; outcome and claim_generation
-- nullable; the two CHECKs, on the parent and each child
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type,
       a.attnotnull AS not_null, a.atthasdef AS has_default
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
 WHERE c.relnamespace = 'awa'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
   AND c.relname IN ('lease_claim_closures', 'lease_claim_closures_0')
   AND a.attname IN ('claim_generation', 'outcome', 'state', 'outcome_code')
 ORDER BY 1, a.attnum;
SELECT conrelid::regclass AS rel, conname, pg_get_constraintdef(oid) AS def
  FROM pg_constraint
 WHERE conrelid IN ('awa.lease_claim_closures'::regclass,
                    'awa.lease_claim_closures_0'::regclass)
   AND contype = 'c'
 ORDER BY conrelid::regclass::text, conname;

-- the mapping, code by code, and the fallback to the text columns (code NULL)
SELECT c.code, awa_internal.closure_outcome(c.code, 'x') AS outcome,
       awa_internal.closure_state(c.code, 'y') AS state
  FROM (VALUES ('1'::"char"), ('2'), ('3'), ('4'), ('5'), ('6'), (NULL)) c(code);
-- inlined: the plan of a reader holds the CASE, not a call
CREATE FUNCTION pg_temp.plan_calls(p_sql text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    l text;
    v boolean := false;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || p_sql LOOP
        v := v OR l ~ 'closure_(outcome|state)';
    END LOOP;
    RETURN v;
END $$;
SELECT pg_temp.plan_calls($$SELECT awa_internal.closure_outcome(outcome_code, outcome),
                                   awa_internal.closure_state(outcome_code, state)
                              FROM awa.lease_claim_closures$$) AS calls_left_in_plan;

-- one job per outcome, each in a queue of its own: completed (C), failed for good (C),
-- retried (C), cancelled while running (SQL), rescued into a retry and rescued for good
-- (SQL, the worker's rescue)
SELECT awa.enqueue('cc_done', 'k') AS j1 \gset
SELECT awa.enqueue('cc_fail', 'k', max_attempts => 1) AS j2 \gset
SELECT awa.enqueue('cc_retry', 'k', max_attempts => 2) AS j3 \gset
SELECT awa.enqueue('cc_cancel', 'k') AS j4 \gset
SELECT awa.enqueue('cc_rescue', 'k', max_attempts => 2) AS j5 \gset
SELECT awa.enqueue('cc_lost', 'k', max_attempts => 1) AS j6 \gset
SELECT awa.complete(job_id, run_lease) AS completed FROM awa.claim('cc_done');
SELECT awa.fail(job_id, run_lease, 'boom') AS failed FROM awa.claim('cc_fail');
SELECT awa.fail(job_id, run_lease, 'again') AS retried FROM awa.claim('cc_retry');
SELECT count(*) AS claimed FROM awa.claim('cc_cancel');
SELECT awa.cancel(:j4) AS cancelled;
SELECT count(*) AS claimed FROM awa.claim('cc_rescue', 1, '1 ms');
SELECT count(*) AS claimed FROM awa.claim('cc_lost', 1, '1 ms');
SELECT pg_sleep(0.01);   -- past the 1 ms deadlines
SELECT rescued, outcome FROM awa.rescue('awa');
-- and complete_batch (C), the SQL-side cancel_queue (one running job)
SELECT awa.enqueue('cc_done', 'k') AS j7 \gset
SELECT job_id AS c7, run_lease AS l7 FROM awa.claim('cc_done') \gset
SELECT count(*) AS batch_completed
  FROM awa.complete_batch(ARRAY[:c7]::bigint[], ARRAY[:l7]::bigint[]);
SELECT awa.enqueue('cc_cancel', 'k') AS j8 \gset
SELECT count(*) AS claimed FROM awa.claim('cc_cancel');
SELECT awa.cancel_queue('cc_cancel') AS cancelled;

-- every closure: the code, nothing else of the pair, no generation
SELECT x.job_id - :j1 + 1 AS j, x.outcome_code, x.outcome, x.state, x.claim_generation,
       x.error
  FROM awa.lease_claim_closures x ORDER BY x.job_id;

-- the readers, as before: each job's state (SQL and C), its closure's record, the lists
SELECT j.job_id - :j1 + 1 AS j, j.queue, j.state, j.attempt, j.last_error,
       j.finished_at IS NOT NULL AS finished
  FROM generate_series(:j1, :j8) i, awa.job(i) j ORDER BY 1;
SELECT i - :j1 + 1 AS j, r.attempt, r.rank, r.state, r.error
  FROM generate_series(:j1, :j8) i, awa_internal.job_records(i) r
 WHERE r.run_lease IS NOT NULL ORDER BY 1, 2;
SELECT i - :j1 + 1 AS j, awa_internal.job_state(i) AS sql_state,
       awa_internal.job_state_now(i) AS c_state
  FROM generate_series(:j1, :j8) i ORDER BY 1;
-- with the retries' deferred jobs out of the way, the closures are the top records:
-- C reads 'retryable' from codes 3 and 5 as SQL does
BEGIN;
DELETE FROM awa.deferred_jobs WHERE job_id IN (:j3, :j5);
SELECT i - :j1 + 1 AS j, awa_internal.job_state(i) AS sql_state,
       awa_internal.job_state_now(i) AS c_state
  FROM unnest(ARRAY[:j3, :j5]) i ORDER BY 1;
ROLLBACK;
SELECT job_id - :j1 + 1 AS j, state FROM awa.jobs(lim => 100)
 WHERE queue LIKE 'cc\_%' ORDER BY job_id;
SELECT job_id - :j1 + 1 AS j, queue, state, attempt, error
  FROM awa.terminal_jobs WHERE queue LIKE 'cc\_%' ORDER BY job_id;
SELECT q, c.* FROM unnest(ARRAY['cc_done', 'cc_fail', 'cc_retry', 'cc_cancel', 'cc_rescue',
                                'cc_lost']) q, awa.queue_counts(q) c ORDER BY q;
SELECT queue, running, scheduled, completed_total, failed_total
  FROM awa.queue_stats WHERE queue LIKE 'cc\_%' ORDER BY queue;
SELECT queue, completed_in_window, failed_in_window, rescued_in_window
  FROM awa.queue_stats_rows('1 hour') WHERE queue LIKE 'cc\_%' ORDER BY queue;

-- a closure of the old shape (written before 0.10: code NULL, the text pair and the
-- generation), by hand into the receipt's child: the same readers read it
SELECT awa.enqueue('cc_old', 'k') AS o1 \gset
SELECT awa.enqueue('cc_old', 'k', max_attempts => 1) AS o2 \gset
SELECT awa.enqueue('cc_old', 'k') AS o3 \gset
SELECT count(*) AS claimed FROM awa.claim('cc_old', 3);
INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, job_id, run_lease,
                                      outcome, state, error)
SELECT c.claim_slot, c.claim_generation, c.job_id, c.run_lease, v.outcome, v.state, v.error
  FROM awa.lease_claims c
  JOIN (VALUES (:o1, 'completed', 'completed', NULL), (:o2, 'failed', 'failed', 'old boom'),
               (:o3, 'rescued', NULL, NULL)) v(job_id, outcome, state, error)
    ON v.job_id = c.job_id;
SELECT x.job_id - :o1 + 1 AS o, x.outcome_code, x.outcome, x.state,
       x.claim_generation IS NOT NULL AS has_generation
  FROM awa.lease_claim_closures x WHERE x.job_id >= :o1 ORDER BY x.job_id;
SELECT j.job_id - :o1 + 1 AS o, j.state, j.attempt, j.finished_at IS NOT NULL AS finished
  FROM generate_series(:o1, :o3) i, awa.job(i) j ORDER BY 1;
SELECT i - :o1 + 1 AS o, r.rank, r.state FROM generate_series(:o1, :o3) i,
       awa_internal.job_records(i) r WHERE r.run_lease IS NOT NULL ORDER BY 1;
SELECT i - :o1 + 1 AS o, awa_internal.job_state(i) AS sql_state,
       awa_internal.job_state_now(i) AS c_state
  FROM generate_series(:o1, :o3) i ORDER BY 1;
SELECT job_id - :o1 + 1 AS o, state FROM awa.jobs('cc_old') ORDER BY job_id;
SELECT job_id - :o1 + 1 AS o, state, error FROM awa.terminal_jobs
 WHERE queue = 'cc_old' ORDER BY job_id;
SELECT * FROM awa.queue_counts('cc_old');
SELECT running, completed_total, failed_total FROM awa.queue_stats WHERE queue = 'cc_old';
SELECT completed_in_window, failed_in_window, rescued_in_window
  FROM awa.queue_stats_rows('1 hour') WHERE queue = 'cc_old';

-- one shape per row: both, neither, or a code out of the list is refused
SELECT sqlstate_of(format(
    'INSERT INTO awa.lease_claim_closures (claim_slot, job_id, run_lease, outcome_code, '
    'outcome) VALUES (0, %s, 1, %L, %L)', :j1 + 1000, '1', 'completed')) AS both_shapes;
SELECT sqlstate_of(format(
    'INSERT INTO awa.lease_claim_closures (claim_slot, job_id, run_lease) '
    'VALUES (0, %s, 1)', :j1 + 1000)) AS neither;
SELECT sqlstate_of(format(
    'INSERT INTO awa.lease_claim_closures (claim_slot, job_id, run_lease, outcome_code) '
    'VALUES (0, %s, 1, %L::"char")', :j1 + 1000, 'completed')) AS letter_code;
SELECT sqlstate_of($$SELECT awa_internal.close_attempts(
    ARRAY(SELECT c FROM awa.lease_claims c LIMIT 1), 'completed', NULL, NULL)$$)
    AS unknown_pair;

-- claim prune carries positions with their closures: a coded one keeps no generation,
-- an old one takes the current slot's; the terminal counts do not move
SELECT outcome FROM awa.rotate('awa', 'claim');
SELECT outcome, reason FROM awa.prune('awa', 'claim');
SELECT x.claim_slot, count(*) AS closures,
       count(*) FILTER (WHERE x.outcome_code IS NOT NULL AND x.claim_generation IS NULL
                          AND x.outcome IS NULL AND x.state IS NULL) AS coded,
       count(*) FILTER (WHERE x.outcome_code IS NULL AND x.claim_generation = 1) AS old
  FROM awa.lease_claim_closures x GROUP BY 1 ORDER BY 1;
SELECT q, c.* FROM unnest(ARRAY['cc_done', 'cc_fail', 'cc_retry', 'cc_cancel', 'cc_rescue',
                                'cc_lost', 'cc_old']) q, awa.queue_counts(q) c ORDER BY q;
SELECT job_id - :j1 + 1 AS j, queue, state FROM awa.terminal_jobs
 WHERE queue LIKE 'cc\_%' ORDER BY job_id;
SELECT i - :j1 + 1 AS j, awa_internal.job_state(i) AS sql_state,
       awa_internal.job_state_now(i) AS c_state
  FROM generate_series(:j1, :o3) i ORDER BY 1;

-- who names the column: the writer in SQL and the readers (the mapping functions name
-- their arguments p_code) ...
SELECT t.kind, t.name
  FROM (SELECT 'function' AS kind, p.oid::regprocedure::text AS name, p.prosrc AS src
          FROM pg_proc p
         WHERE p.pronamespace IN ('awa'::regnamespace, 'awa_internal'::regnamespace)
        UNION ALL
        SELECT 'view', format('%I.%I', v.schemaname, v.viewname), v.definition
          FROM pg_views v WHERE v.schemaname IN ('awa', 'awa_internal')) t
 WHERE t.src ~ 'outcome_code'
 ORDER BY t.kind, t.name COLLATE "C";
-- ... and each reader only as the first argument of closure_outcome or closure_state:
-- once those are taken out, only the writer still names it (no comparison by hand)
SELECT t.name AS names_outcome_code_otherwise
  FROM (SELECT p.oid::regprocedure::text AS name, p.prosrc AS src
          FROM pg_proc p
         WHERE p.pronamespace IN ('awa'::regnamespace, 'awa_internal'::regnamespace)
        UNION ALL
        SELECT format('%I.%I', v.schemaname, v.viewname), v.definition
          FROM pg_views v WHERE v.schemaname IN ('awa', 'awa_internal')) t
 WHERE regexp_replace(t.src, 'awa_internal\.closure_(outcome|state)\(\s*([a-z]+\.)?outcome_code,',
                      '', 'g') ~ 'outcome_code'
 ORDER BY t.name COLLATE "C";

-- an older catalog (0.9's script, run by this library): the C writers find no code
-- column and write the text pair and the generation, as 0.9 did; after the update to
-- 0.10 those rows read the same, and new closures carry the code
SET client_min_messages = warning;
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.9';
RESET client_min_messages;
SELECT awa.enqueue('cc9', 'k') AS n1 \gset
SELECT awa.enqueue('cc9', 'k', max_attempts => 1) AS n2 \gset
SELECT awa.enqueue('cc9', 'k', max_attempts => 2) AS n3 \gset
SELECT job_id AS c1, run_lease AS l1 FROM awa.claim('cc9') \gset
SELECT awa.complete(:c1, :l1) AS completed;
SELECT job_id AS c2, run_lease AS l2 FROM awa.claim('cc9') \gset
SELECT awa.fail(:c2, :l2, 'boom 9') AS failed;
SELECT job_id AS c3, run_lease AS l3 FROM awa.claim('cc9') \gset
SELECT awa.fail(:c3, :l3, 'again 9') AS retried;
SELECT x.job_id - :n1 + 1 AS n, x.outcome, x.state, x.claim_generation IS NOT NULL AS has_generation,
       x.error
  FROM awa.lease_claim_closures x ORDER BY x.job_id;
SELECT count(*) AS code_columns FROM pg_attribute
 WHERE attrelid = 'awa.lease_claim_closures'::regclass AND attname = 'outcome_code';
SELECT j.job_id - :n1 + 1 AS n, j.state AS state_09 FROM generate_series(:n1, :n3) i, awa.job(i) j;
SET client_min_messages = warning;
ALTER EXTENSION awa_bgw UPDATE TO '0.10';
RESET client_min_messages;
SELECT x.job_id - :n1 + 1 AS n, x.outcome_code, x.outcome, x.state
  FROM awa.lease_claim_closures x ORDER BY x.job_id;
SELECT j.job_id - :n1 + 1 AS n, j.state, j.attempt, j.last_error
  FROM generate_series(:n1, :n3) i, awa.job(i) j ORDER BY 1;
SELECT i - :n1 + 1 AS n, r.attempt, r.rank, r.state FROM generate_series(:n1, :n3) i,
       awa_internal.job_records(i) r WHERE r.run_lease IS NOT NULL ORDER BY 1;
SELECT i - :n1 + 1 AS n, awa_internal.job_state(i) AS sql_state,
       awa_internal.job_state_now(i) AS c_state
  FROM generate_series(:n1, :n3) i ORDER BY 1;
SELECT job_id - :n1 + 1 AS n, state, error FROM awa.terminal_jobs ORDER BY job_id;
SELECT * FROM awa.queue_counts('cc9');
SELECT running, scheduled, completed_total, failed_total FROM awa.queue_stats
 WHERE queue = 'cc9';
-- the retry runs and completes under 0.10: its closure carries the code
UPDATE awa.deferred_jobs SET run_at = now() WHERE job_id = :n3;
SELECT promoted FROM awa.promote_deferred('awa');
SELECT job_id AS c4, run_lease AS l4 FROM awa.claim('cc9') \gset
SELECT awa.complete(:c4, :l4) AS completed;
SELECT x.job_id - :n1 + 1 AS n, x.outcome_code, x.outcome, x.state, x.claim_generation
  FROM awa.lease_claim_closures x ORDER BY x.job_id, x.closed_at;
SELECT state, attempt FROM awa.job(:n3);
SELECT * FROM awa.queue_counts('cc9');
