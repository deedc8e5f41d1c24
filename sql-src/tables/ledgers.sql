-- The append-only rotation ledgers: a ring's cursor is its row with the highest
-- generation. pg_dump keeps the rows past genesis (a restore runs CREATE EXTENSION
-- first, which writes genesis and the authority row itself).

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


SELECT pg_catalog.pg_extension_config_dump('awa.queue_ring_rotations', 'WHERE generation > 0');
SELECT pg_catalog.pg_extension_config_dump('awa.lease_ring_rotations', 'WHERE generation > 0');
SELECT pg_catalog.pg_extension_config_dump('awa.claim_ring_rotations', 'WHERE generation > 0');
