-- Which representation of the ring cursor is authoritative: 'columns' (the pre-ledger
-- singleton columns, during a staged upgrade) or 'ledger'. One row; one-way.

CREATE TABLE awa.ring_cursor_authority (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    authority text NOT NULL CHECK (authority IN ('columns', 'ledger')),
    flipped_at timestamptz
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);
