-- 0.6: the cursor columns are authoritative from the start at (0, 0), and slot 0 is
-- stamped with generation 0. No ledger, no authority row.

INSERT INTO awa.queue_ring_state (singleton, slot_count, current_slot, generation,
                                  terminal_counter_trusted_at)
    VALUES (true, 16, 0, 0, now());
INSERT INTO awa.lease_ring_state VALUES (true, 8, 0, 0);
INSERT INTO awa.claim_ring_state VALUES (true, 8, 0, 0);

UPDATE awa.queue_ring_slots SET generation = 0 WHERE slot = 0;
UPDATE awa.lease_ring_slots SET generation = 0 WHERE slot = 0;
UPDATE awa.claim_ring_slots SET generation = 0 WHERE slot = 0;
