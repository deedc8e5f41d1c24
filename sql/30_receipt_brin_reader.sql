-- Receipts found by their attempt through a BRIN index on job_id (0.10): the C readers
-- of a receipt by (job_id, run_lease) (src/rel/scan.c awa_child_scan_attempt: complete,
-- complete_batch, fail, heartbeat in src/dataplane/complete.c; open_receipts_at in
-- src/dataplane/probes.c, which cancel and rescue call) use a claim child's btree on
-- (job_id, run_lease) when it has one, else its BRIN index on (job_id): the pages of
-- the ranges that may hold the job and of those not summarized, read newest first,
-- each row's job_id and run_lease compared. The catalog is brought to that state
-- here whichever it was installed with: the btree dropped if there is one, a BRIN
-- index made if there is none (bloom, a range a page). The receipts fill several
-- pages of one claim child (a 200-character kind, some 20 receipts a page), enough
-- for several ranges, summarized by hand, and an unsummarized tail of at least 8
-- pages; the outputs do not depend on the range size. Last, the lookups of the
-- attempts this session claimed, which read first where the claim wrote them.
\i sql/fresh.inc
SET statement_timeout = '120s';
DO $$
DECLARE
    v_job smallint := (SELECT attnum FROM pg_attribute
                        WHERE attrelid = 'awa.lease_claims'::regclass AND attname = 'job_id');
    v_lease smallint := (SELECT attnum FROM pg_attribute
                          WHERE attrelid = 'awa.lease_claims'::regclass
                            AND attname = 'run_lease');
    v_index regclass;
BEGIN
    FOR v_index IN
        SELECT i.indexrelid::regclass FROM pg_index i
          JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
         WHERE i.indrelid = 'awa.lease_claims'::regclass AND a.amname = 'btree'
           AND i.indnatts >= 2 AND i.indkey[0] = v_job AND i.indkey[1] = v_lease
    LOOP
        EXECUTE format('DROP INDEX %s', v_index);
    END LOOP;
    IF NOT EXISTS (SELECT FROM pg_index i
                     JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
                    WHERE i.indrelid = 'awa.lease_claims'::regclass AND a.amname = 'brin'
                      AND i.indnatts = 1 AND i.indkey[0] = v_job) THEN
        CREATE INDEX ON awa.lease_claims USING brin
               (job_id int8_bloom_ops (n_distinct_per_range = 64, false_positive_rate = 0.001))
               WITH (pages_per_range = 1, autosummarize = off);
    END IF;
END $$;
SELECT coalesce((SELECT o.option_value::int FROM pg_options_to_table(c.reloptions) o
                  WHERE o.option_name = 'pages_per_range'), 128) AS ppr
  FROM pg_inherits h JOIN pg_index i ON i.indrelid = h.inhrelid
  JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
 WHERE h.inhparent = 'awa.lease_claims'::regclass AND am.amname = 'brin' LIMIT 1 \gset
-- the ranges left unsummarized at the end, the last maybe partial: at least 8 pages
SELECT ceil(8.0 / :ppr)::int + 1 AS tail_ranges \gset

-- jobs enqueued and claimed 200 at a time, each batch committed, until the receipts
-- fill the tail's ranges and 4 more; every other job has one attempt, the rest two
SELECT set_config('awa_test.pages', ((:tail_ranges + 4) * :ppr)::text, false) IS NOT NULL
       AS pages_set;
DO $$
DECLARE
    v_pages bigint := current_setting('awa_test.pages')::bigint;
    v_n int := 0;
BEGIN
    LOOP
        PERFORM awa.enqueue('rb', repeat('k', 200), jsonb_build_object('n', v_n + i),
                            max_attempts => 1 + (v_n + i) % 2)
           FROM generate_series(1, 200) i;
        v_n := v_n + 200;
        COMMIT;
        PERFORM count(*) FROM awa.claim('rb', 200);
        COMMIT;
        EXIT WHEN (SELECT pg_relation_size(tableoid) / 8192 FROM awa.lease_claims LIMIT 1)
                  >= v_pages;
    END LOOP;
END $$;
-- a new session: the lookups below find no receipt where a claim of theirs wrote it
-- (src/dataplane/receipthints.c, at the end), and read the BRIN index and pages
\c -
SET statement_timeout = '120s';
-- the claim children's indexes that lead with job_id
CREATE VIEW pg_temp.receipt_job_indexes AS
SELECT am.amname, (SELECT string_agg(a.attname, ', ' ORDER BY k.n)
                     FROM unnest(i.indkey) WITH ORDINALITY k(att, n)
                     JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.att)
                  AS keys, count(*) AS children
  FROM pg_inherits h
  JOIN pg_index i ON i.indrelid = h.inhrelid
  JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am am ON am.oid = c.relam
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
 WHERE h.inhparent = 'awa.lease_claims'::regclass AND a.attname = 'job_id'
 GROUP BY 1, 2;
SELECT * FROM pg_temp.receipt_job_indexes;
SELECT min(tableoid::regclass::text) AS child, count(DISTINCT tableoid) AS children,
       count(*) AS receipts, max((ctid::text::point)[0])::int + 1 AS pages
  FROM awa.lease_claims \gset
SELECT :children AS claim_children, :pages >= (:tail_ranges + 4) * :ppr AS enough_pages;
SELECT c.oid::regclass AS brin
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
 WHERE i.indrelid = :'child'::regclass AND am.amname = 'brin' \gset
-- every range summarized, then the last tail_ranges made unsummarized again: the
-- tail starts at block :tail
SELECT ((:pages + :ppr - 1) / :ppr - :tail_ranges) * :ppr AS tail \gset
SELECT brin_summarize_new_values(:'brin') > 0 AS summarized,
       (SELECT count(brin_desummarize_range(:'brin', b))
          FROM generate_series(:tail, :pages - 1, :ppr) b) = :tail_ranges AS tail_open,
       :tail / :ppr >= 4 AS summarized_ranges, :pages - :tail >= 8 AS tail_pages;
-- the receipts where they are (nothing moves them: a closure is a row of its own)
DO $$
BEGIN
    CREATE TEMP TABLE r AS
    SELECT job_id, run_lease, max_attempts, (ctid::text::point)[0]::int AS block,
           row_number() OVER (ORDER BY ctid) AS pos,
           row_number() OVER (PARTITION BY (ctid::text::point)[0] ORDER BY ctid) AS on_page
      FROM awa.lease_claims;
END $$;
CREATE TEMP VIEW w AS SELECT *, block >= :tail AS in_tail FROM r;
-- the attempts: e the first claimed (page 0), e2 the next on its page, m one in the
-- middle of the summarized ranges, s one in the last summarized page, t one in the
-- tail's first page, z the last claimed (the last page)
SELECT job_id AS e, run_lease AS le FROM r WHERE pos = 1 \gset
SELECT job_id AS e2, run_lease AS le2 FROM r WHERE pos = 2 \gset
SELECT job_id AS m, run_lease AS lm FROM r WHERE block = :tail / 2 AND on_page = 3 \gset
SELECT job_id AS s, run_lease AS ls FROM r WHERE block = :tail - 1 AND on_page = 3 \gset
SELECT job_id AS t, run_lease AS lt FROM r WHERE block = :tail AND on_page = 3 \gset
SELECT job_id AS z, run_lease AS lz FROM r ORDER BY pos DESC LIMIT 1 \gset
SELECT :e2 <> :e AND (SELECT block FROM r WHERE pos = 2) = 0 AS e2_on_page_0,
       :le <> :le2 AS two_leases;

-- an attempt not claimed is refused: a lease off by one, a lease of another job (on
-- the same page, or in another range), whether the receipt is in a summarized range or
-- in the tail; nothing is written
SELECT awa.complete(:e, :le + 1) AS e_lease_plus_1, awa.complete(:e, :le2) AS e_lease_of_e2,
       awa.complete(:e2, :le) AS e2_lease_of_e, awa.complete(:e, :lz) AS e_lease_of_z,
       awa.complete(:m, :lm - 1) AS m_lease_minus_1, awa.complete(:t, :lt + 1) AS t_lease,
       awa.complete(:z, :lz + 1) AS z_lease, awa.complete(:z, :le) AS z_lease_of_e;
SELECT awa.fail(:e, :le + 1, 'no') AS fail_e, awa.fail(:z, :lm, 'no') AS fail_z,
       awa.heartbeat(:m, :lm + 1) AS heartbeat_m, awa.heartbeat(:t, :ls) AS heartbeat_t;
SELECT count(*) AS batch_completed
  FROM awa.complete_batch(ARRAY[:e, :e2, :m, :s, :t, :z],
                          ARRAY[:le2, :le, :lm + 1, :lt, :ls, :le]);
SELECT count(*) AS closures FROM awa.lease_claim_closures;
SELECT coalesce(array_length(awa_internal.open_receipts(ARRAY[:e, :m, :t, :z],
                                                        ARRAY[:lz, :lm + 1, :lt - 1, :le]),
                             1), 0) AS open_found;

-- the attempts claimed: heartbeats, open receipts and job states see them, in either
-- zone
SELECT awa.heartbeat(:e, :le) AS e, awa.heartbeat(:m, :lm) AS m, awa.heartbeat(:s, :ls) AS s,
       awa.heartbeat(:t, :lt) AS t, awa.heartbeat(:z, :lz) AS z;
SELECT array_length(awa_internal.open_receipts(ARRAY[:e, :e2, :m, :s, :t, :z, :z],
                                               ARRAY[:le, :le2, :lm, :ls, :lt, :lz, :le]),
                    1) AS open_found;
SELECT state, count(*) FROM unnest(ARRAY[:e, :e2, :m, :s, :t, :z]) i, awa.job(i)
 GROUP BY 1;

-- completing the last claimed attempt reads its page and not the tail before it (the
-- pages newest first); the first claimed one, far from the tail, is found too
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched(:'child'::regclass) AS f0 \gset
SELECT awa.complete(:z, :lz) AS z_completed;
SELECT pg_stat_get_xact_blocks_fetched(:'child'::regclass) - :f0 <= 2 AS z_read_few_pages;
COMMIT;
SELECT awa.complete(:e, :le) AS e_completed, awa.complete(:e, :le) AS e_again,
       awa.complete(:z, :lz) AS z_again;

-- a batch: the first receipt of each page but the first and the last (the pages of
-- both zones), each twice, with e (already completed) and wrong leases of the rest
SELECT array_agg(job_id ORDER BY block) AS bj, array_agg(run_lease ORDER BY block) AS bl,
       count(*) AS batch, count(*) FILTER (WHERE in_tail) AS batch_in_tail
  FROM w WHERE on_page = 1 AND block BETWEEN 1 AND :pages - 2 \gset
SELECT count(*) = :batch AS all_completed,
       count(*) FILTER (WHERE w.in_tail) = :batch_in_tail AS tail_ones_too,
       :batch_in_tail > 0 AND :batch > :batch_in_tail AS both_zones,
       bool_and(b.run_lease = w.run_lease) AS their_leases
  FROM awa.complete_batch(:'bj'::bigint[] || :'bj'::bigint[] || :e || :'bj'::bigint[],
                          :'bl'::bigint[] || :'bl'::bigint[] || :le::bigint
                          || (SELECT array_agg(l + 1) FROM unnest(:'bl'::bigint[]) l)) b
  JOIN w USING (job_id);
SELECT count(*) FILTER (WHERE j.state = 'completed') = :batch AS batch_jobs_completed
  FROM unnest(:'bj'::bigint[]) i, awa.job(i) j;
SELECT count(*) AS batch_again
  FROM awa.complete_batch(:'bj'::bigint[], :'bl'::bigint[]);

-- failures: a retry (two attempts) in the summarized ranges, a final failure (one
-- attempt) in the tail; a second fail, and a complete, of either is refused
SELECT job_id AS fr, run_lease AS lfr FROM w
 WHERE NOT in_tail AND max_attempts = 2 AND on_page = 4 AND block > 0 ORDER BY block LIMIT 1 \gset
SELECT job_id AS ff, run_lease AS lff FROM w
 WHERE in_tail AND max_attempts = 1 AND on_page = 4 ORDER BY block LIMIT 1 \gset
SELECT awa.fail(:fr, :lfr, 'boom', interval '1 hour') AS retried,
       awa.fail(:ff, :lff, 'last') AS failed;
SELECT awa.fail(:fr, :lfr, 'boom') AS retried_again, awa.fail(:ff, :lff, 'last') AS failed_again,
       awa.complete(:fr, :lfr) AS complete_retried, awa.complete(:ff, :lff) AS complete_failed,
       awa.heartbeat(:ff, :lff) AS heartbeat_failed;
SELECT i = :fr AS retried_job, state, attempt FROM unnest(ARRAY[:fr, :ff]) i, awa.job(i)
 ORDER BY 1;

-- a cancel of a running job in a summarized range and of one in the tail: found by
-- open_receipts_at (probes.c)
SELECT job_id AS cs, run_lease AS lcs FROM w
 WHERE NOT in_tail AND on_page = 5 AND block > 0 ORDER BY block LIMIT 1 \gset
SELECT job_id AS ct, run_lease AS lct FROM w
 WHERE in_tail AND on_page = 5 ORDER BY block DESC LIMIT 1 \gset
SELECT awa.cancel(:cs) AS cancelled, awa.cancel(:ct) AS cancelled_in_tail;
SELECT awa.complete(:cs, :lcs) AS complete_cancelled, awa.complete(:ct, :lct) AS complete_cancelled_in_tail;
SELECT state, count(*) FROM unnest(ARRAY[:cs, :ct]) i, awa.job(i) GROUP BY 1;

-- at SERIALIZABLE the reads of the receipts (and of their BRIN index) take no
-- predicate lock: complete, complete_batch, heartbeat and fail, in either zone; a plain
-- read of the receipts does
SELECT job_id AS x1, run_lease AS lx1 FROM w
 WHERE NOT in_tail AND on_page = 6 AND block > 0 ORDER BY block LIMIT 1 \gset
SELECT job_id AS x2, run_lease AS lx2 FROM w
 WHERE in_tail AND on_page = 6 ORDER BY block DESC LIMIT 1 \gset
SELECT job_id AS x3, run_lease AS lx3 FROM w
 WHERE NOT in_tail AND on_page = 7 AND block > 0 ORDER BY block DESC LIMIT 1 \gset
SELECT job_id AS x4, run_lease AS lx4 FROM w
 WHERE in_tail AND on_page = 7 ORDER BY block LIMIT 1 \gset
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT awa.heartbeat(:x1, :lx1) AS heartbeat, awa.complete(:x1, :lx1) AS completed,
       awa.complete(:x2, :lx2) AS completed_in_tail, awa.complete(:x2, :lx2 + 1) AS wrong_lease;
SELECT count(*) AS batch_completed FROM awa.complete_batch(ARRAY[:x3, :x4], ARRAY[:lx3, :lx4]);
SELECT count(*) AS receipt_siread_locks FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND l.mode = 'SIReadLock' AND c.relname LIKE 'lease\_claims%';
SELECT count(*) AS plain_read FROM awa.lease_claims WHERE job_id = :x1;
SELECT count(*) > 0 AS receipt_siread_locks FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND l.mode = 'SIReadLock' AND c.relname LIKE 'lease\_claims%';
COMMIT;
SELECT state, count(*) FROM unnest(ARRAY[:x1, :x2, :x3, :x4]) i, awa.job(i) GROUP BY 1;

-- every job's state, read in C (the receipts by their BRIN index, by job id) and in SQL
SELECT awa_internal.job_state_now(job_id) AS c_state,
       bool_and(awa_internal.job_state_now(job_id)
                IS NOT DISTINCT FROM awa_internal.job_state(job_id)) AS agree
  FROM r GROUP BY 1 ORDER BY 1;

-- a catalog that keeps the btree on (job_id, run_lease) (0.9's, under this library)
-- is read by it
SELECT job_id AS y, run_lease AS ly FROM w
 WHERE in_tail AND on_page = 8 ORDER BY block LIMIT 1 \gset
BEGIN;
CREATE INDEX ON awa.lease_claims (job_id, run_lease);
SELECT amname, keys FROM pg_temp.receipt_job_indexes ORDER BY 1, 2;
SELECT awa.complete(:y, :ly + 1) AS wrong_lease, awa.complete(:y, :ly) AS by_btree;
ROLLBACK;
-- without either index, the lookup is refused
BEGIN;
DO $$
DECLARE
    v_index regclass;
BEGIN
    FOR v_index IN
        SELECT i.indexrelid::regclass FROM pg_index i
          JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
         WHERE i.indrelid = 'awa.lease_claims'::regclass AND a.amname = 'brin'
    LOOP
        EXECUTE format('DROP INDEX %s', v_index);
    END LOOP;
END $$;
SELECT sqlstate_of(format('SELECT awa.complete(%s, %s)', :y, :ly)) AS no_index;
ROLLBACK;
SELECT awa.complete(:y, :ly) AS by_brin;

-- Where this session's claims wrote their receipts (src/dataplane/receipthints.c): the
-- heartbeat, completion and batch completion of those attempts read that tuple and not
-- the child's BRIN index. A claim rolled back (its tuple not seen) and a lease that was
-- not claimed are looked up through the index, and refused. Each attempt is looked up
-- before the next claim: the memory is direct-mapped, and two attempts whose entries
-- met would leave only the later one remembered.
SELECT count(awa.enqueue('rh', 'hinted')) AS enqueued FROM generate_series(1, 3);
BEGIN;
SELECT job_id AS hr, run_lease AS lhr FROM awa.claim('rh') \gset
ROLLBACK;
SELECT job_id AS h1, run_lease AS lh1 FROM awa.claim('rh') \gset
SELECT :h1 = :hr AS claimed_again, :lh1 <> :lhr AS new_lease;
SELECT c.oid::regclass AS hbrin
  FROM awa.lease_claims l JOIN pg_index i ON i.indrelid = l.tableoid
  JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
 WHERE l.job_id = :h1 AND l.run_lease = :lh1 AND am.amname = 'brin' \gset
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched(:'hbrin'::regclass) AS b0 \gset
SELECT awa.complete(:hr, :lhr) AS rolled_back_claim;
SELECT pg_stat_get_xact_blocks_fetched(:'hbrin'::regclass) > :b0 AS index_read;
COMMIT;
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched(:'hbrin'::regclass) AS b0 \gset
SELECT awa.heartbeat(:h1, :lh1) AS beat, awa.complete(:h1, :lh1) AS completed;
SELECT pg_stat_get_xact_blocks_fetched(:'hbrin'::regclass) = :b0 AS index_not_read;
COMMIT;
SELECT job_id AS h2, run_lease AS lh2 FROM awa.claim('rh') \gset
SELECT c.oid::regclass AS hbrin
  FROM awa.lease_claims l JOIN pg_index i ON i.indrelid = l.tableoid
  JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
 WHERE l.job_id = :h2 AND l.run_lease = :lh2 AND am.amname = 'brin' \gset
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched(:'hbrin'::regclass) AS b0 \gset
SELECT count(*) AS batch_completed FROM awa.complete_batch(ARRAY[:h2], ARRAY[:lh2]);
SELECT pg_stat_get_xact_blocks_fetched(:'hbrin'::regclass) = :b0 AS index_not_read;
COMMIT;
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched(:'hbrin'::regclass) AS b0 \gset
SELECT job_id AS h3, run_lease AS lh3 FROM awa.claim('rh') \gset
SELECT awa.complete(:h3, :lh3 + 1) AS wrong_lease;
SELECT pg_stat_get_xact_blocks_fetched(:'hbrin'::regclass) > :b0 AS index_read;
SELECT awa.fail(:h3, :lh3, 'boom', interval '1 hour') AS failed;
COMMIT;
SELECT state, count(*) FROM unnest(ARRAY[:h1, :h2, :h3]) i, awa.job(i) GROUP BY 1 ORDER BY 1;
