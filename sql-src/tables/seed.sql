-- A fresh install starts in ledger authority: the compat cursor columns are inserted
-- poisoned (-1), every ledger holds its genesis row (0, 0), the authority is ledger.

INSERT INTO awa.queue_ring_state (singleton, slot_count, current_slot, generation,
                                  terminal_counter_trusted_at)
    VALUES (true, 16, -1, -1, now());
INSERT INTO awa.lease_ring_state VALUES (true, 8, -1, -1);
INSERT INTO awa.claim_ring_state VALUES (true, 8, -1, -1);

INSERT INTO awa.queue_ring_rotations (generation, slot) VALUES (0, 0);
INSERT INTO awa.lease_ring_rotations (generation, slot) VALUES (0, 0);
INSERT INTO awa.claim_ring_rotations (generation, slot) VALUES (0, 0);

INSERT INTO awa.ring_cursor_authority VALUES (true, 'ledger', now());
