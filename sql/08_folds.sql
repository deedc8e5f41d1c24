-- The horizon gate and the folds, with nothing pinning the horizon (the pin cases are in
-- specs/fold_pins.spec).
\i sql/fresh.inc

-- this session never pins for itself; nothing else runs here
SELECT awa.horizon_pinned('0 s') AS pinned;
SELECT count(*) AS holders FROM awa.horizon_pins;
SELECT sqlstate_of($$SELECT awa.horizon_pinned('-1 s')$$);

-- a prepared transaction holds the horizon: listed, and pins once older than min_age
BEGIN;
INSERT INTO awa.queue_terminal_rollup_deltas (queue, priority, pruned_completed_delta)
    VALUES ('never', 0, 1);
PREPARE TRANSACTION 'awa_fold_test';
SELECT kind, name, state, pins, reason FROM awa.horizon_pins_at('1 hour');
SELECT kind, name, pins, reason FROM awa.horizon_pins_at('0 s');
SELECT outcome, folded_rows, pin FROM awa.fold_terminal_rollup_deltas('awa');   -- 5 s default: young
SET awa_bgw.horizon_pin_min_age = 0;
SELECT outcome, folded_rows, pin FROM awa.fold_terminal_rollup_deltas('awa');
SELECT outcome, trimmed_rows, pin FROM awa.fold_ring_rotation_ledgers('awa');
ROLLBACK PREPARED 'awa_fold_test';
SELECT awa.horizon_pinned('0 s') AS pinned_after;

-- fold of the rollup deltas: summed per (queue, priority) in key order, clamped at 0,
-- merged into the rollups; the delta table is left empty
INSERT INTO awa.queue_terminal_rollup_deltas
       (queue, priority, pruned_completed_delta, pruned_failed_delta) VALUES
    ('a', 0, 3, 1), ('a', 0, 2, 0), ('a', 1, 1, 1), ('b', 0, 5, 0);
SELECT * FROM awa.fold_terminal_rollup_deltas('awa');
SELECT queue, priority, pruned_completed_count, pruned_failed_count
  FROM awa.queue_terminal_rollups ORDER BY 1, 2;
INSERT INTO awa.queue_terminal_rollup_deltas
       (queue, priority, pruned_completed_delta, pruned_failed_delta) VALUES
    ('a', 0, 4, -10), ('c', 0, 0, 2);
SELECT * FROM awa.fold_terminal_rollup_deltas('awa');
SELECT queue, priority, pruned_completed_count, pruned_failed_count
  FROM awa.queue_terminal_rollups ORDER BY 1, 2;
SELECT count(*) AS deltas_left FROM awa.queue_terminal_rollup_deltas;
SELECT * FROM awa.fold_terminal_rollup_deltas('awa');   -- nothing to fold

-- counts stay exact across a fold: rollups + deltas before, rollups after
INSERT INTO awa.queue_terminal_rollup_deltas (queue, priority, pruned_completed_delta)
    VALUES ('b', 0, 7);
SELECT completed FROM awa.queue_counts('b');
SELECT outcome FROM awa.fold_terminal_rollup_deltas('awa');
SELECT completed FROM awa.queue_counts('b');

-- ledger trim: each ledger keeps its newest slot_count rows (one wrap)
INSERT INTO awa.claim_ring_rotations (generation, slot) SELECT g, g % 8 FROM generate_series(1, 30) g;
INSERT INTO awa.queue_ring_rotations (generation, slot) SELECT g, g % 16 FROM generate_series(1, 20) g;
SELECT * FROM awa.fold_ring_rotation_ledgers('awa');
SELECT 'queue' AS ring, count(*), min(generation), max(generation) FROM awa.queue_ring_rotations
UNION ALL SELECT 'lease', count(*), min(generation), max(generation) FROM awa.lease_ring_rotations
UNION ALL SELECT 'claim', count(*), min(generation), max(generation) FROM awa.claim_ring_rotations;
SELECT * FROM awa.ring_cursor('claim');
SELECT * FROM awa.fold_ring_rotation_ledgers('awa');    -- already one wrap: nothing

SELECT sqlstate_of($$SELECT * FROM awa.fold_ring_rotation_ledgers('public')$$);

-- a role that cannot see other roles' sessions cannot run the gate blind: it counts as
-- a pin (and says what to grant); with pg_read_all_stats the row goes
CREATE ROLE fold_blind;
GRANT USAGE ON SCHEMA awa TO fold_blind;
GRANT EXECUTE ON FUNCTION awa.horizon_pins_at(interval), awa_internal.horizon_pin_holder(interval)
    TO fold_blind;
-- (an internal is named in awa_internal, which needs USAGE; the gate's function runs as
-- its invoker)
GRANT USAGE ON SCHEMA awa_internal TO fold_blind;
GRANT SELECT ON awa.queue_ring_rotations, awa.lease_ring_rotations, awa.claim_ring_rotations
    TO fold_blind;
SET ROLE fold_blind;
SELECT kind, name, pins, reason FROM awa.horizon_pins_at('0') WHERE kind = 'gate';
SELECT awa_internal.horizon_pin_holder('0');
RESET ROLE;
GRANT pg_read_all_stats TO fold_blind;
SET ROLE fold_blind;
SELECT count(*) AS gate_rows FROM awa.horizon_pins_at('0') WHERE kind = 'gate';
RESET ROLE;
SELECT count(*) AS gate_rows_as_superuser FROM awa.horizon_pins_at('0') WHERE kind = 'gate';
REVOKE ALL ON SCHEMA awa, awa_internal FROM fold_blind;
DROP OWNED BY fold_blind;
DROP ROLE fold_blind;
