-- 0.10: a receipt no longer carries its entry's slot and generation
-- (docs/proposals/receipt_fields.md (a1), docs/storage.md A.16). Run once, after
-- tables/closure_code.sql, by a fresh 0.10 install and by the 0.9 -> 0.10 upgrade alike
-- (behind upgrade/lock-tables.sql), so that both end with the same catalog.
--
-- Nothing in 0.9 or 0.10 reads a receipt's ready_slot or ready_generation: a receipt is
-- found by its own slot and (job_id, run_lease), a lane's position by (lane_id,
-- claim_seq). The claim copies each entry column the receipt has, by name
-- (src/dataplane/windows.c attrmap_by_name), so it stops copying these by itself; claim
-- prune carries the columns that are not dropped (ring_slot_carry_forward). Entries keep
-- theirs. Catalog-only: rows written before keep their bytes, unread, until their slot
-- is truncated; a dropped column is NULL in every new row, so a receipt pays a null
-- bitmap (22 attributes: 8 bytes) and saves the 16 bytes of the two columns. The 0.7 and
-- 0.8 scripts, which read a receipt's ready_generation (src/legacy/probes_08.c), never
-- run this piece.
ALTER TABLE awa.lease_claims
    DROP COLUMN ready_slot,
    DROP COLUMN ready_generation;
