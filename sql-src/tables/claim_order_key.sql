-- 0.10: the ready entries' claim-order index keys the xid by its low 32 bits, so that
-- its tuples are 24 bytes and PostgreSQL splits a page after the new tuple when a lane's
-- entries come in increasing order, instead of 50/50 (docs/proposals/claim_order_key.md,
-- docs/storage.md A.3). Run once, after tables/windows.sql's index exists and
-- tables/job_id_brin.sql (whose awa_internal.drop_btree_on it calls), by a fresh 0.10
-- install and by the 0.9 -> 0.10 upgrade alike (behind upgrade/lock-tables.sql, which
-- holds awa.ready_entries), so that both end with the same catalog.
--
-- The 0.9 index (lane_id, txid, lane_seq) has 32-byte tuples (an int4, padding, an xid8,
-- an int8), wider than the 24 bytes up to which PostgreSQL splits after the new tuple
-- (nbtsplitloc.c): each lane appends at the end of its own key range, in the middle of
-- the index, so its pages split 50/50, stay half full and log half a page per split
-- (26 bytes of WAL a job at 200 jobs/s). The readers (src/dataplane/claimkey.c) read a
-- superset, cut at the xid epochs, and test each row's full txid: every window returns
-- the same rows in the same order as on the 0.9 index, which the 0.10 library also reads.

-- The low 32 bits of the xid, the sign bit flipped: int order is their unsigned order.
CREATE OR REPLACE FUNCTION awa_internal.xid_lo(xid8) RETURNS int
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'awa_xid_lo_sql';

-- The spans a read of the xids [from, to) makes on the index, and their key ranges
-- (the tests read them).
CREATE OR REPLACE FUNCTION awa_internal.xid_spans(p_from xid8, p_to xid8)
RETURNS TABLE (span_from xid8, span_to xid8, ordered boolean, key_lo int, key_hi int)
LANGUAGE C IMMUTABLE STRICT
AS 'MODULE_PATHNAME', 'awa_xid_spans_sql';

SELECT awa_internal.drop_btree_on('awa.ready_entries', ARRAY['lane_id', 'txid', 'lane_seq']);
CREATE INDEX ON awa.ready_entries (lane_id, awa_internal.xid_lo(txid), lane_seq);
