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
-- worker summarizes a range once it is full (awa_internal.summarize_ready_ranges,
-- src/dataplane/summarize.c), so a lookup reads the ranges its id may be in and a short
-- tail. Bloom rather than minmax: a retry or a promoted job enters the ring with an old
-- id, which would stretch a minmax range over every id since. autosummarize is off: it
-- would summarize only at autovacuum's next visit, and the partial last range too.
-- The 0.10 library reads either catalog (a 0.9 one keeps its btree, rel/scan.c).
DO $$
DECLARE
    v_index regclass;
BEGIN
    FOR v_index IN
        SELECT i.indexrelid::regclass FROM pg_catalog.pg_index i
          JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
          JOIN pg_catalog.pg_am a ON a.oid = c.relam
         WHERE i.indrelid = 'awa.ready_entries'::regclass AND a.amname = 'btree'
           AND i.indnatts = 1
           AND i.indkey[0] = (SELECT attnum FROM pg_catalog.pg_attribute
                               WHERE attrelid = 'awa.ready_entries'::regclass
                                 AND attname = 'job_id')
    LOOP
        EXECUTE format('DROP INDEX %s', v_index);
    END LOOP;
END $$;
CREATE INDEX ON awa.ready_entries
    USING brin (job_id int8_bloom_ops (n_distinct_per_range = 1024, false_positive_rate = 0.001))
    WITH (pages_per_range = 16, autosummarize = off);

-- Building a BRIN index summarizes every range, the last, partial one too, and on an
-- empty child its first: every enqueue into that range would then write an update of
-- its summary (about 2 KB for bloom) until the range fills. So the range holding the
-- child's last block is made unsummarized again after each build: here, and after
-- each TRUNCATE of a ready child (its index is built again, empty; prune,
-- maintenance/rotate_prune.sql). A range not summarized costs a lookup its pages
-- (16) and an insert nothing; the worker summarizes it once full.
CREATE OR REPLACE FUNCTION awa_internal.ready_child_open_tail(p_child regclass)
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
SELECT awa_internal.ready_child_open_tail(i.inhrelid::regclass)
  FROM pg_catalog.pg_inherits i WHERE i.inhparent = 'awa.ready_entries'::regclass;

-- One run of the summaries, a step of the worker every second (src/worker/worker.c):
-- in each ready child, the ranges that filled since this backend's previous run (the
-- current slot's child: those wholly below its size at that run; a sealed slot's, the
-- rest of it); each child skipped while its lock or its index's is held by another.
-- The number of ranges summarized.
CREATE OR REPLACE FUNCTION awa_internal.summarize_ready_ranges() RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_summarize_ready_ranges';
