-- 0.10: a ready entry without its slot's generation, and without enqueued_at when that
-- is its job's created_at (docs/proposals/receipt_fields.md (b2), docs/storage.md
-- A.16). Run once, after tables/receipt_fields.sql, by a fresh 0.10 install and by the
-- 0.9 -> 0.10 upgrade alike (behind upgrade/lock-tables.sql, which takes both queue
-- families), so that both end with the same catalog.
--
-- Nothing in 0.9 or 0.10 reads an entry's ready_generation: the claim order is (lane_id,
-- txid, lane_seq), a tombstone is found by (ready_slot, lane_id, lane_seq), a slot's
-- entries by its own child. Only copies read it: the cancels into their tombstone's
-- done_entries.ready_generation (itself unread, dropped with it) and
-- window_claimables' result (upgrade/0.9--0.10-claim.sql). The 0.7 and 0.8 scripts,
-- which read it (src/legacy/probes_08.c), never run this piece.
--
-- enqueued_at becomes nullable: the enqueue (src/dataplane/enqueue.c) leaves it NULL
-- when the entry is written less than 1 ms after its job's created_at (a first attempt
-- enqueued early in its transaction), and every reader takes coalesce(enqueued_at,
-- created_at), at most 1 ms early. A promotion or a retry, whose created_at is older,
-- still writes it. The default stays: the C writers set every column themselves and
-- never use it, but an INSERT written by hand that leaves the column out still records
-- when the entry entered the ring, where a NULL would be read as the job's creation,
-- possibly long before (a retry, a promotion).
--
-- Catalog-only: rows written before keep their bytes until their slot is truncated.
-- With ready_generation dropped, every new entry has a NULL and pays a null bitmap (15
-- attributes: 8 bytes); ready_generation's 8 bytes and the 8 of padding around it go
-- (ready_slot and lane_id now share 8 bytes), and a NULL enqueued_at saves its 8: a
-- one-job entry is 16 bytes smaller, 8 when enqueued_at is written.
ALTER TABLE awa.ready_entries
    DROP COLUMN ready_generation,
    ALTER COLUMN enqueued_at DROP NOT NULL;
ALTER TABLE awa.done_entries DROP COLUMN ready_generation;
