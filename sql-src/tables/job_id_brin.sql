-- 0.10: ready entries are found by job id through a BRIN index, not a btree
-- (docs/proposals/job_id_lookup.md, docs/storage.md A.21). Run once, after
-- tables/held_args.sql, by a fresh 0.10 install and by the 0.9 -> 0.10 upgrade alike
-- (behind upgrade/lock-tables.sql, which holds awa.ready_entries), so that both end with
-- the same catalog.
--
-- The btree on job_id cost every enqueue a leaf insert on an increasing key (64 bytes
-- of WAL and its share of the rightmost splits, about 72 bytes a job). Its readers are
-- rare: awa.job, awa.cancel, the candidates of a unique key and their purge (the one
-- hot reader, the fail path, finds the entry by its receipt's claim-order key). A BRIN
-- index writes nothing for a row that goes into a block range not yet summarized; the
-- worker summarizes a range once it is full (awa_internal.summarize_job_id_ranges,
-- src/dataplane/summarize.c), so a lookup reads the ranges its id may be in and a short
-- tail. Bloom rather than minmax: a retry or a promoted job enters the ring with an old
-- id, which would stretch a minmax range over every id since. autosummarize is off: it
-- would summarize only at autovacuum's next visit, and the partial last range too.
-- The 0.10 library reads either catalog (a 0.9 one keeps its btree, rel/scan.c).

-- Drops the btree indexes of a partitioned parent (and so of its children) that a 0.10
-- index supersedes: those whose columns are exactly p_columns, in that order, each a
-- plain column (no expression, no INCLUDE column). Called here and by
-- tables/receipt_brin.sql and tables/claim_order_key.sql, in a fresh install and in the
-- 0.9 -> 0.10 upgrade alike, so that both drop the same indexes.
CREATE OR REPLACE FUNCTION awa_internal.drop_btree_on(p_parent regclass, p_columns text[])
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_index regclass;
BEGIN
    FOR v_index IN
        SELECT i.indexrelid::regclass FROM pg_index i
          JOIN pg_class c ON c.oid = i.indexrelid
          JOIN pg_am a ON a.oid = c.relam
         WHERE i.indrelid = p_parent AND a.amname = 'btree'
           AND i.indnatts = cardinality(p_columns) AND i.indexprs IS NULL
           AND NOT EXISTS (
               SELECT 1 FROM unnest(p_columns) WITH ORDINALITY AS col(name, n)
                WHERE i.indkey[col.n::int - 1] IS DISTINCT FROM
                      (SELECT attnum FROM pg_attribute
                        WHERE attrelid = p_parent AND attname = col.name))
    LOOP
        EXECUTE format('DROP INDEX %s', v_index);
    END LOOP;
END
$$;
SELECT awa_internal.drop_btree_on('awa.ready_entries', ARRAY['job_id']);
CREATE INDEX ON awa.ready_entries
    USING brin (job_id int8_bloom_ops (n_distinct_per_range = 1024, false_positive_rate = 0.001))
    WITH (pages_per_range = 16, autosummarize = off);

-- Building a BRIN index summarizes every range, the last, partial one too, and on an
-- empty child its first: every insert into that range would then write an update of
-- its summary (about 2 KB for bloom) until the range fills. So the range holding the
-- child's last block is made unsummarized again after each build: here (and for the
-- receipts, tables/receipt_brin.sql), and after each TRUNCATE of a ring child (its
-- indexes are built again, empty; prune, maintenance/rotate_prune.sql). A range not
-- summarized costs a lookup its pages and an insert nothing; the worker summarizes it
-- once it is done filling. Nothing for a child without a BRIN index.
CREATE OR REPLACE FUNCTION awa_internal.brin_open_tail(p_child regclass)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_index regclass;
BEGIN
    FOR v_index IN
        SELECT i.indexrelid::regclass FROM pg_index i
          JOIN pg_class c ON c.oid = i.indexrelid
          JOIN pg_am a ON a.oid = c.relam
         WHERE i.indrelid = p_child AND a.amname = 'brin'
    LOOP
        PERFORM brin_desummarize_range(v_index,
            greatest(pg_relation_size(p_child) / current_setting('block_size')::bigint - 1, 0));
    END LOOP;
END
$$;
SELECT awa_internal.brin_open_tail(i.inhrelid::regclass)
  FROM pg_catalog.pg_inherits i WHERE i.inhparent = 'awa.ready_entries'::regclass;

-- A VACUUM summarizes every full-length range of a BRIN index, ranges still being filled
-- too (a bulk extension puts empty pages ahead of the inserters), and every insert into
-- them then writes a summary update: autovacuum's insert-driven runs on a busy child did
-- so at every visit (433 updates in a minute at 200 jobs/s, autovacuum_naptime 5 s,
-- against 20 with them off). A ring child is insert-only and emptied by TRUNCATE, so
-- those runs freeze and mark visible rows that go anyway: they are turned off for the
-- children of each family with a BRIN index. Autovacuum still runs for dead rows
-- (aborted inserts) and against wraparound.
CREATE OR REPLACE FUNCTION awa_internal.no_insert_vacuum(p_family regclass)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_child regclass;
BEGIN
    FOR v_child IN SELECT i.inhrelid::regclass FROM pg_inherits i WHERE i.inhparent = p_family
    LOOP
        EXECUTE format('ALTER TABLE %s SET (autovacuum_vacuum_insert_threshold = -1)', v_child);
    END LOOP;
END
$$;
SELECT awa_internal.no_insert_vacuum('awa.ready_entries');

-- One run of the summaries, a step of the worker every second (src/worker/worker.c,
-- src/dataplane/summarize.c): in each child of the families whose job_id index is BRIN
-- (ready entries; receipts, tables/receipt_brin.sql), the ranges that are done filling
-- and not yet summarized by this backend (the current slot's child: a range once every
-- page of it and of the next holds a row and none of its pages was written for a run;
-- a sealed slot's, the rest of it); each child skipped while its lock or its index's is
-- held by another. The number of ranges summarized.
CREATE OR REPLACE FUNCTION awa_internal.summarize_job_id_ranges() RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_summarize_job_id_ranges';
