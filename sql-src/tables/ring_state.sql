-- Ring state singletons (cold config) and slot rows (the row-lock targets of prune).
-- 0.8: the compat cursor columns and the slots' generation are gone; the ledger is the
-- cursor.

CREATE TABLE awa.queue_ring_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    slot_count int NOT NULL CHECK (slot_count = 16),
    terminal_counter_trusted_at timestamptz
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

CREATE TABLE awa.lease_ring_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    slot_count int NOT NULL CHECK (slot_count = 8)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

CREATE TABLE awa.claim_ring_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    slot_count int NOT NULL CHECK (slot_count = 8)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

CREATE TABLE awa.queue_ring_slots (
    slot int PRIMARY KEY CHECK (slot >= 0 AND slot < 16)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);
CREATE TABLE awa.lease_ring_slots (
    slot int PRIMARY KEY CHECK (slot >= 0 AND slot < 8)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);
CREATE TABLE awa.claim_ring_slots (
    slot int PRIMARY KEY CHECK (slot >= 0 AND slot < 8)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

INSERT INTO awa.queue_ring_slots (slot) SELECT g FROM generate_series(0, 15) g;
INSERT INTO awa.lease_ring_slots (slot) SELECT g FROM generate_series(0, 7) g;
INSERT INTO awa.claim_ring_slots (slot) SELECT g FROM generate_series(0, 7) g;
