-- 0.9: the data plane of snapshot windows (docs/storage.md Part A §A.3, §A.5), on top
-- of the families of tables/data_plane.sql. Run once, by a fresh 0.9 install and by the
-- 0.8 -> 0.9 upgrade alike, so that both end with the same catalog.
--
-- A ready entry records the top-level xid of the transaction that enqueued it; the
-- claim order reads it through (lane_id, txid, lane_seq). Entries that predate 0.9
-- (an upgrade) read txid 0: visible in every snapshot, so they fall in each lane's
-- first window, in their old lane order.
ALTER TABLE awa.ready_entries ADD COLUMN txid xid8 NOT NULL DEFAULT '0';
ALTER TABLE awa.ready_entries ALTER COLUMN txid DROP DEFAULT;
DROP INDEX awa.ready_entries_lane_id_ready_generation_lane_seq_idx;
CREATE INDEX ON awa.ready_entries (lane_id, txid, lane_seq);

-- A done entry is found on (lane_id, lane_seq) only as a cancel tombstone (run_lease
-- 0): the index holds those alone, so a completion writes no entry into it (one index
-- entry, ~70 bytes of WAL, less per job).
DROP INDEX awa.done_entries_lane_id_lane_seq_idx;
CREATE INDEX ON awa.done_entries (lane_id, lane_seq) WHERE run_lease = 0;

-- A receipt carries the claimed entry's txid and a claim sequence number; the last
-- receipt of each claim also carries the lane's window (win_lo, win_hi): it is the
-- lane's position. Receipts that predate 0.9 have none.
ALTER TABLE awa.lease_claims ADD COLUMN claim_seq bigint, ADD COLUMN txid xid8,
    ADD COLUMN win_lo pg_snapshot, ADD COLUMN win_hi pg_snapshot;
-- Only the receipts that carry a window are ever looked up on it (the lane's position),
-- so the index holds those alone: a claim of 32 jobs writes one entry into it, not 32.
CREATE INDEX ON awa.lease_claims (lane_id, claim_seq) WHERE win_hi IS NOT NULL;
-- 0.7/0.8 found a lane's position on (lane_id, lane_seq); 0.9 finds it on claim_seq:
-- one index less to write per receipt (~70 bytes of WAL per job)
DROP INDEX awa.lease_claims_lane_id_lane_seq_idx;

-- Taken under a lane's claim lock: per lane, claim order.
CREATE SEQUENCE awa.claim_seq;
SELECT pg_catalog.pg_extension_config_dump('awa.claim_seq', '');

-- The lane registry without a unique key: a first producer inserts its lanes without
-- waiting for another's uncommitted registration (two may both insert: readers take
-- the lowest lane of a shard, claimers every lane).
ALTER TABLE awa.queue_lanes DROP CONSTRAINT queue_lanes_queue_priority_shard_key;
CREATE INDEX ON awa.queue_lanes (queue, priority, shard);

-- Attempts named by a token (docs/storage.md §A.6): a receipt's run_lease, and the
-- run_lease of its closures and heartbeats, is the random bigint its claim drew; the
-- attempt number moves to its own column. Receipts that predate 0.9 keep their
-- attempt number as their token, so the attempts running across an upgrade are still
-- completed with the run_lease their worker holds. A done entry's run_lease stays the
-- attempt number (0: cancelled before any claim).
ALTER TABLE awa.lease_claims ALTER COLUMN run_lease TYPE bigint;
ALTER TABLE awa.lease_claim_closures ALTER COLUMN run_lease TYPE bigint;
ALTER TABLE awa.leases ALTER COLUMN run_lease TYPE bigint;
ALTER TABLE awa.lease_claims ADD COLUMN attempt int NOT NULL DEFAULT 0;
ALTER TABLE awa.lease_claims ALTER COLUMN attempt TYPE int USING run_lease::int,
    ALTER COLUMN attempt DROP DEFAULT;
ALTER TYPE awa.claimed_job ALTER ATTRIBUTE run_lease TYPE bigint;
