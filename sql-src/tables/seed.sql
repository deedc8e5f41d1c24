-- A fresh 0.8: every ledger holds its genesis row (0, 0); the authority is ledger.

INSERT INTO awa.queue_ring_state (singleton, slot_count, terminal_counter_trusted_at)
    VALUES (true, 16, now());
INSERT INTO awa.lease_ring_state VALUES (true, 8);
INSERT INTO awa.claim_ring_state VALUES (true, 8);

INSERT INTO awa.queue_ring_rotations (generation, slot) VALUES (0, 0);
INSERT INTO awa.lease_ring_rotations (generation, slot) VALUES (0, 0);
INSERT INTO awa.claim_ring_rotations (generation, slot) VALUES (0, 0);

INSERT INTO awa.ring_cursor_authority VALUES (true, 'ledger', now());
