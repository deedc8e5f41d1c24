-- Each ledger starts at the ring's current column cursor (the forward seed; older
-- generations are not needed), and the authority stays with the columns until the
-- flip. A compat rotation then advances the columns and backfills its ledger.

INSERT INTO awa.queue_ring_rotations (generation, slot)
    SELECT generation, current_slot FROM awa.queue_ring_state WHERE singleton;
INSERT INTO awa.lease_ring_rotations (generation, slot)
    SELECT generation, current_slot FROM awa.lease_ring_state WHERE singleton;
INSERT INTO awa.claim_ring_rotations (generation, slot)
    SELECT generation, current_slot FROM awa.claim_ring_state WHERE singleton;

INSERT INTO awa.ring_cursor_authority VALUES (true, 'columns', NULL);
