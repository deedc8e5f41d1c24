-- Control plane: ring state singletons (cold config), slot rows (row-lock targets),
-- append-only rotation ledgers, the cursor authority and the terminal rollups.
-- A fresh 0.7 install starts in ledger authority: the compat cursor columns are
-- inserted poisoned (-1) directly, and each ledger holds its genesis row (0, 0).

CREATE TABLE awa.queue_ring_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    slot_count int NOT NULL CHECK (slot_count = 16),
    current_slot int,
    generation bigint,
    terminal_counter_trusted_at timestamptz
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

CREATE TABLE awa.lease_ring_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    slot_count int NOT NULL CHECK (slot_count = 8),
    current_slot int,
    generation bigint
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

CREATE TABLE awa.claim_ring_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    slot_count int NOT NULL CHECK (slot_count = 8),
    current_slot int,
    generation bigint
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

INSERT INTO awa.queue_ring_state (singleton, slot_count, current_slot, generation,
                                  terminal_counter_trusted_at)
    VALUES (true, 16, -1, -1, now());
INSERT INTO awa.lease_ring_state VALUES (true, 8, -1, -1);
INSERT INTO awa.claim_ring_state VALUES (true, 8, -1, -1);

CREATE TABLE awa.queue_ring_slots (
    slot int PRIMARY KEY CHECK (slot >= 0 AND slot < 16),
    generation bigint NOT NULL DEFAULT -1
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);
CREATE TABLE awa.lease_ring_slots (
    slot int PRIMARY KEY CHECK (slot >= 0 AND slot < 8),
    generation bigint NOT NULL DEFAULT -1
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);
CREATE TABLE awa.claim_ring_slots (
    slot int PRIMARY KEY CHECK (slot >= 0 AND slot < 8),
    generation bigint NOT NULL DEFAULT -1
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

INSERT INTO awa.queue_ring_slots (slot) SELECT g FROM generate_series(0, 15) g;
INSERT INTO awa.lease_ring_slots (slot) SELECT g FROM generate_series(0, 7) g;
INSERT INTO awa.claim_ring_slots (slot) SELECT g FROM generate_series(0, 7) g;

-- The ledgers: the cursor is the row with the highest generation.
CREATE TABLE awa.queue_ring_rotations (
    generation bigint PRIMARY KEY CHECK (generation >= 0),
    slot int NOT NULL CHECK (slot >= 0 AND slot < 16),
    rotated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK (slot = generation % 16)
);
CREATE TABLE awa.lease_ring_rotations (
    generation bigint PRIMARY KEY CHECK (generation >= 0),
    slot int NOT NULL CHECK (slot >= 0 AND slot < 8),
    rotated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK (slot = generation % 8)
);
CREATE TABLE awa.claim_ring_rotations (
    generation bigint PRIMARY KEY CHECK (generation >= 0),
    slot int NOT NULL CHECK (slot >= 0 AND slot < 8),
    rotated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK (slot = generation % 8)
);

INSERT INTO awa.queue_ring_rotations (generation, slot) VALUES (0, 0);
INSERT INTO awa.lease_ring_rotations (generation, slot) VALUES (0, 0);
INSERT INTO awa.claim_ring_rotations (generation, slot) VALUES (0, 0);

CREATE TABLE awa.ring_cursor_authority (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    authority text NOT NULL CHECK (authority IN ('columns', 'ledger')),
    flipped_at timestamptz
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

INSERT INTO awa.ring_cursor_authority VALUES (true, 'ledger', now());

-- Terminal history counts folded out of pruned queue slots.
CREATE TABLE awa.queue_terminal_rollups (
    queue text NOT NULL,
    priority smallint NOT NULL,
    pruned_completed_count bigint NOT NULL DEFAULT 0,
    pruned_failed_count bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, priority)
);

-- Prune appends here (never upserts the rollups); the folds drain it.
CREATE TABLE awa.queue_terminal_rollup_deltas (
    queue text NOT NULL,
    priority smallint NOT NULL,
    pruned_completed_delta bigint NOT NULL DEFAULT 0,
    pruned_failed_delta bigint NOT NULL DEFAULT 0,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- pg_dump keeps the rows that matter. The singletons, slot rows and the authority row
-- are written by this script itself (a restore runs CREATE EXTENSION first), so they
-- are not dumped; a restored database starts in ledger authority at the dumped ledger
-- cursor. The genesis ledger row is likewise the script's own.
SELECT pg_catalog.pg_extension_config_dump('awa.queue_ring_rotations', 'WHERE generation > 0');
SELECT pg_catalog.pg_extension_config_dump('awa.lease_ring_rotations', 'WHERE generation > 0');
SELECT pg_catalog.pg_extension_config_dump('awa.claim_ring_rotations', 'WHERE generation > 0');
SELECT pg_catalog.pg_extension_config_dump('awa.queue_terminal_rollups', '');
SELECT pg_catalog.pg_extension_config_dump('awa.queue_terminal_rollup_deltas', '');
