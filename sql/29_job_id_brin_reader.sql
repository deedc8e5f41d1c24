-- Ready children whose job_id index is BRIN (0.10, tables/job_id_brin.sql,
-- docs/proposals/job_id_lookup.md): the C readers by job id (src/rel/scan.c
-- awa_child_scan_job) find a child's rows of a job through the index's bitmap when the
-- child has no btree on (job_id, ...), reading the pages of each range that may hold
-- the job and of each range not summarized; the worker summarizes the ranges that
-- filled (awa_internal.summarize_job_id_ranges, src/dataplane/summarize.c). The index is
-- built again, or swapped, in transactions that are rolled back, so that the catalog
-- stays as installed; the jobs they claim are enqueued before (a claim takes only
-- committed entries).
\i sql/fresh.inc
SET statement_timeout = '60s';
CREATE VIEW pg_temp.job_id_indexes AS
SELECT am.amname, count(*) AS children
  FROM pg_inherits h
  JOIN pg_index i ON i.indrelid = h.inhrelid
  JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am am ON am.oid = c.relam
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
 WHERE h.inhparent = 'awa.ready_entries'::regclass AND i.indnatts = 1
   AND a.attname = 'job_id'
 GROUP BY 1;
-- the blocks of the child's ranges (16 pages) that its BRIN index summarizes
CREATE FUNCTION pg_temp.desummarize_from(p_child regclass, p_first bigint) RETURNS bigint
LANGUAGE sql AS $$
    SELECT count(brin_desummarize_range(i.indexrelid, r))
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           JOIN pg_am am ON am.oid = c.relam,
           generate_series(p_first, pg_relation_size(p_child) / 8192, 16) r
     WHERE i.indrelid = p_child AND am.amname = 'brin'
$$;

-- 3000 jobs with padded args, committed: some 20 entries a page, 11 ranges of 16 pages
SELECT min(j) AS j FROM (SELECT awa.enqueue('brin', 'k',
                                            jsonb_build_object('n', i, 'pad', repeat('x', 300)),
                                            max_attempts => 2) AS j
                           FROM generate_series(1, 3000) i) e \gset
SELECT tableoid::regclass::text AS child, count(*) AS entries,
       max((ctid::text::point)[0])::int / 16 + 1 AS ranges
  FROM awa.ready_entries GROUP BY 1 \gset
SELECT :'child' AS child, :entries AS entries, :ranges AS ranges;
SELECT * FROM pg_temp.job_id_indexes;

-- the worker's runs of the summaries, by hand: in the current slot's child a run
-- summarizes each range done filling, one after which a whole range has been started
-- (every page holds a row) and none of whose pages was written since the previous run
-- (a backend's first run only marks where the WAL stands): all but the last full
-- range and the partial one, into which enqueues still go (and would then write a
-- summary each); a run after nothing filled summarizes nothing
SELECT awa_internal.summarize_job_id_ranges() AS first_run;
SELECT awa_internal.summarize_job_id_ranges() = pg_relation_size(:'child') / 8192 / 16 - 1
       AS all_but_the_last_ranges;
SELECT awa_internal.summarize_job_id_ranges() AS third_run;

BEGIN;
DROP INDEX awa.ready_entries_job_id_idx;
CREATE INDEX ON awa.ready_entries USING brin
       (job_id int8_bloom_ops (n_distinct_per_range = 1024, false_positive_rate = 0.001))
       WITH (pages_per_range = 16, autosummarize = off);
SELECT * FROM pg_temp.job_id_indexes;
-- the build summarized every range: the tail, from block 48, is left unsummarized
SELECT pg_temp.desummarize_from(:'child', 48) > 0 AS desummarized;
SELECT awa_internal.hold_ring_families();
-- 200 more jobs, in this transaction, into the tail
SELECT min(j) AS k FROM (SELECT awa.enqueue('brin', 'k', jsonb_build_object('m', i))
                            AS j FROM generate_series(1, 200) i) e \gset
SELECT count(*) FILTER (WHERE (ctid::text::point)[0] < 48) AS in_summarized,
       count(*) FILTER (WHERE (ctid::text::point)[0] >= 48) AS in_tail
  FROM awa.ready_entries;

-- every job's state, read in C by BRIN and in SQL by the planner; ids on either side
-- have none
SELECT awa_internal.job_state_now(i) AS c_state, count(*) AS jobs,
       count(*) FILTER (WHERE awa_internal.job_state_now(i)
                              IS NOT DISTINCT FROM awa_internal.job_state(i)) AS agree
  FROM generate_series(:j - 1, :k + 200) i GROUP BY 1 ORDER BY 1;
-- jobs in summarized ranges and in the tail, one by one
SELECT coalesce(e.args ->> 'n', 'm' || (e.args ->> 'm')) AS job,
       (e.ctid::text::point)[0] >= 48 AS in_tail, awa_internal.job_state_now(i) AS state
  FROM unnest(ARRAY[:j, :j + 1, :j + 100, :j + 2998, :j + 2999, :k, :k + 199]) i
  JOIN awa.ready_entries e ON e.job_id = i ORDER BY i;

-- a claimed job, a cancelled one (in a summarized range), and one cancelled in the tail
SELECT job_id - :j + 1 AS n, args ->> 'n' AS arg, length(args ->> 'pad') AS pad
  FROM awa.claim('brin');
SELECT awa.cancel(:j + 500) AS cancelled, awa.cancel(:k + 100) AS cancelled_in_tail;
SELECT CASE WHEN i < :k THEN 'n' || (i - :j + 1) ELSE 'm' || (i - :k + 1) END AS job,
       awa_internal.job_state_now(i) AS c_state, awa_internal.job_state(i) AS sql_state
  FROM unnest(ARRAY[:j, :j + 1, :j + 500, :k + 100]) i ORDER BY i;
-- a failing attempt takes its args from the ready entry (the receipt keeps none), and
-- the retry keeps them
SELECT count(args) AS receipt_args FROM awa.lease_claims WHERE job_id = :j;
SELECT awa.fail(job_id, run_lease, 'boom', interval '1 hour') AS failed
  FROM awa.lease_claims WHERE job_id = :j;
SELECT attempt, args ->> 'n' AS arg, length(args ->> 'pad') AS pad
  FROM awa.deferred_jobs WHERE job_id = :j;
SELECT awa_internal.job_state_now(:j) AS c_state, awa_internal.job_state(:j) AS sql_state;

-- minmax too (its equality is strategy 3, bloom's 1)
DROP INDEX awa.ready_entries_job_id_idx;
CREATE INDEX ON awa.ready_entries USING brin (job_id) WITH (pages_per_range = 16);
SELECT pg_temp.desummarize_from(:'child', 48) > 0 AS desummarized;
SELECT awa_internal.job_state_now(i) AS c_state, count(*) AS jobs,
       count(*) FILTER (WHERE awa_internal.job_state_now(i)
                              IS NOT DISTINCT FROM awa_internal.job_state(i)) AS agree
  FROM generate_series(:j - 1, :k + 200) i GROUP BY 1 ORDER BY 1;

-- without either index, the lookup is refused
DROP INDEX awa.ready_entries_job_id_idx;
SELECT sqlstate_of(format('SELECT awa_internal.job_state_now(%s)', :j + 1)) AS no_index;
ROLLBACK;

-- at SERIALIZABLE the read scans with SnapshotAny and keeps the rows the snapshot of
-- now sees: not an entry this transaction deleted, nor one of a subtransaction rolled
-- back, though the range scans return both
BEGIN ISOLATION LEVEL SERIALIZABLE;
DROP INDEX awa.ready_entries_job_id_idx;
CREATE INDEX ON awa.ready_entries USING brin
       (job_id int8_bloom_ops (n_distinct_per_range = 1024, false_positive_rate = 0.001))
       WITH (pages_per_range = 16, autosummarize = off);
SELECT pg_temp.desummarize_from(:'child', 48) > 0 AS desummarized;
SELECT awa_internal.hold_ring_families();
DELETE FROM awa.ready_entries WHERE job_id IN (:j + 2, :j + 2900);
SAVEPOINT s;
SELECT awa.enqueue('brin', 'k', '{"gone": true}') AS g \gset
ROLLBACK TO s;
SELECT i - :j + 1 AS n, awa_internal.job_state_now(i) AS c_state,
       awa_internal.job_state(i) AS sql_state
  FROM unnest(ARRAY[:j + 1, :j + 2, :j + 2900, :g]) i ORDER BY i;
SELECT awa_internal.job_state_now(i) AS c_state, count(*) AS jobs,
       count(*) FILTER (WHERE awa_internal.job_state_now(i)
                              IS NOT DISTINCT FROM awa_internal.job_state(i)) AS agree
  FROM generate_series(:j - 1, :g) i GROUP BY 1 ORDER BY 1;
ROLLBACK;

-- the catalog as installed: a BRIN index on (job_id) in each child, read again
SELECT * FROM pg_temp.job_id_indexes;
SELECT awa_internal.job_state_now(:j + 1) AS by_brin;
-- a catalog that keeps the btree (0.9's, under this library) is read by it
BEGIN;
DROP INDEX awa.ready_entries_job_id_idx;
CREATE INDEX ON awa.ready_entries (job_id);
SELECT * FROM pg_temp.job_id_indexes;
SELECT awa_internal.job_state_now(:j + 1) AS by_btree;
ROLLBACK;

-- once the ring turns, the sealed child is summarized whole (its partial last range,
-- which its late enqueues may still reach), and the new current child waits for its
-- ranges to fill
SELECT outcome FROM awa.rotate('awa', 'queue');
SELECT awa_internal.summarize_job_id_ranges() AS sealed_rest;
SELECT awa.enqueue('brin', 'k', '{"late": true}') IS NOT NULL AS enqueued;
SELECT awa_internal.summarize_job_id_ranges() AS nothing_full;

-- building a BRIN index summarizes its last range, on an empty child its first; a
-- prune's TRUNCATE builds the child's index again. Install and prune leave that range
-- unsummarized (awa_internal.brin_open_tail), so that enqueues into it write no
-- summary until the worker summarizes it full (read here with pageinspect: the
-- revmap's first entry, a summary's TID, or invalid: offset 0)
DROP VIEW pg_temp.job_id_indexes;
\i sql/fresh.inc
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE FUNCTION pg_temp.first_range_summarized(p_child regclass) RETURNS boolean
LANGUAGE sql AS $$
    SELECT (r.pages::text::point)[1] <> 0
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           JOIN pg_am am ON am.oid = c.relam,
           LATERAL brin_revmap_data(get_raw_page(i.indexrelid::regclass::text, 1)) r
     WHERE i.indrelid = p_child AND am.amname = 'brin'
     LIMIT 1
$$;
SELECT count(*) AS children,
       count(*) FILTER (WHERE pg_temp.first_range_summarized(inhrelid)) AS summarized
  FROM pg_inherits WHERE inhparent = 'awa.ready_entries'::regclass;
SELECT awa.enqueue('brin2', 'k', '{}') AS w \gset
SELECT e.tableoid::regclass::text AS child2, c.relfilenode AS node2
  FROM awa.ready_entries e JOIN pg_class c ON c.oid = e.tableoid
 WHERE e.job_id = :w \gset
SELECT count(awa.complete(job_id, run_lease)) AS completed FROM awa.claim('brin2');
-- a TRUNCATE alone leaves the first range summarized
BEGIN;
TRUNCATE awa.ready_entries_15;
SELECT pg_temp.first_range_summarized('awa.ready_entries_15') AS after_truncate;
ROLLBACK;
CREATE FUNCTION pg_temp.wrap() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    i int;
    p record;
    log text := '';
BEGIN
    FOR i IN 1 .. 16 LOOP
        PERFORM awa.rotate('awa', 'queue');
        SELECT * INTO p FROM awa.prune('awa', 'queue');
        log := log || left(p.outcome, 1);
    END LOOP;
    RETURN log;
END $$;
-- the prune of the job's slot truncates its children: the first range stays open
SELECT pg_temp.wrap() ~ 'p' AS pruned;
SELECT relfilenode <> :node2 AS truncated,
       pg_temp.first_range_summarized(:'child2') AS summarized
  FROM pg_class WHERE oid = :'child2'::regclass;
-- no insert-driven autovacuum on the children of the families with a BRIN index on
-- job_id: a VACUUM summarizes the ranges still being filled (tables/job_id_brin.sql)
SELECT p.relname AS family, count(*) AS children,
       count(*) FILTER (WHERE c.reloptions @> '{autovacuum_vacuum_insert_threshold=-1}') AS no_insert_vacuum
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
 WHERE i.inhparent IN ('awa.ready_entries'::regclass, 'awa.lease_claims'::regclass)
 GROUP BY p.relname ORDER BY 1;
