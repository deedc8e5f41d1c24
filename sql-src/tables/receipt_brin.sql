-- 0.10: receipts are found by their attempt's job id through a BRIN index, not a btree
-- on (job_id, run_lease) (docs/storage.md A.22). Run once, after tables/job_id_brin.sql
-- (whose awa_internal.drop_btree_on and brin_open_tail it calls), by a fresh 0.10
-- install and by the 0.9 -> 0.10 upgrade alike (behind upgrade/lock-tables.sql, which
-- holds awa.lease_claims), so that both end with the same catalog.
--
-- The btree cost every claimed job a leaf insert (72 bytes of WAL and its share of the
-- splits). Its readers are the calls that name an attempt (complete, complete_batch,
-- fail, heartbeat, open_receipts_at) and awa.job; each reads the receipt's claim
-- children by BRIN instead (rel/scan.c: the ranges the job id may be in and the
-- unsummarized tail, newest pages first, so that an attempt closed soon after its
-- claim is found in the last pages written). Receipts go only into the current claim
-- slot's child, so the worker summarizes that child's ranges once they are done
-- filling and a sealed child whole, as it does for ready entries
-- (awa_internal.summarize_job_id_ranges, src/dataplane/summarize.c). Bloom: a retry
-- is claimed with an old job id. 8 pages a range (about 300 receipts; a receipt has
-- no args since 0.10, so its size hardly varies), so that a lookup of an attempt whose
-- range is summarized reads 8 pages. Closures keep their btree on (job_id, run_lease):
-- a completion asks that there is none, which BRIN would answer by reading every page
-- of the tail.
-- The 0.10 library reads either catalog (a 0.9 one keeps its btree).
SELECT awa_internal.drop_btree_on('awa.lease_claims', ARRAY['job_id', 'run_lease']);
CREATE INDEX ON awa.lease_claims
    USING brin (job_id int8_bloom_ops (n_distinct_per_range = 512, false_positive_rate = 0.001))
    WITH (pages_per_range = 8, autosummarize = off);
SELECT awa_internal.brin_open_tail(i.inhrelid::regclass)
  FROM pg_catalog.pg_inherits i WHERE i.inhparent = 'awa.lease_claims'::regclass;
-- as for ready children (tables/job_id_brin.sql): no insert-driven autovacuum, which
-- would summarize the ranges still being filled
SELECT awa_internal.no_insert_vacuum('awa.lease_claims');
