-- ring_cursor, the fence, the one-way authority, semver ranks and the flip-gate counts.
\i sql/fresh.inc
-- a fresh 0.7 install, as 01_objects makes and checks it
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.7';

SELECT * FROM awa.ring_cursor('queue');
SELECT * FROM awa.ring_cursor('lease');
SELECT * FROM awa.ring_cursor('claim');
SELECT sqlstate_of($$SELECT * FROM awa.ring_cursor('nosuch')$$);
SELECT sqlstate_of($$SELECT * FROM awa.ring_cursor(NULL)$$);

-- the cursor is the ledger's max row, whatever the order rows arrived in
INSERT INTO awa.claim_ring_rotations (generation, slot) VALUES (3, 3), (1, 1), (2, 2);
SELECT * FROM awa.ring_cursor('claim');
DELETE FROM awa.claim_ring_rotations WHERE generation > 0;
SELECT * FROM awa.ring_cursor('claim');

-- fence: under ledger authority the compat cursor columns cannot move (55000) ...
SELECT sqlstate_of($$UPDATE awa.queue_ring_state SET current_slot = 0, generation = 0$$);
SELECT sqlstate_of($$UPDATE awa.lease_ring_state SET generation = 5$$);
SELECT sqlstate_of($$UPDATE awa.claim_ring_state SET current_slot = 1, generation = 1$$);
-- ... the message says why, with a hint
UPDATE awa.queue_ring_state SET current_slot = 0, generation = 0;
-- ... while other cold columns may still be written, and a no-change update passes
SELECT sqlstate_of($$UPDATE awa.queue_ring_state SET terminal_counter_trusted_at = now()$$);
SELECT sqlstate_of($$UPDATE awa.queue_ring_state SET generation = -1$$);
SELECT current_slot, generation FROM awa.queue_ring_state;

-- the authority is one-way
SELECT sqlstate_of($$UPDATE awa.ring_cursor_authority SET authority = 'columns'$$);
SELECT sqlstate_of($$DELETE FROM awa.ring_cursor_authority$$);
SELECT authority FROM awa.ring_cursor_authority;

-- semver ranks: pre-release and build suffixes ignored, NULL when unparseable
SELECT v, awa.semver_rank(v) FROM unnest(ARRAY['0.7.0', '0.7.0-alpha.1', '0.7.0+build.5',
    '0.6.2', '1', '1.2', 'v0.8.1', '12.345.678', 'garbage', '', '0.7.x', NULL]) v;
SELECT awa.ring_authority_min_flip_version();

-- flip-gate counts: fresh rows only; NULL or < 0.7.0 blocks
INSERT INTO awa.runtime_instances (instance_id, name, version, binary_version, last_seen_at) VALUES
    ('00000000-0000-0000-0000-000000000001', 'new', '0.7.0', '0.7.0', now()),
    ('00000000-0000-0000-0000-000000000002', 'alpha', '0.7.0-alpha.1', '0.7.0-alpha.1', now()),
    ('00000000-0000-0000-0000-000000000003', 'old', '0.6.2', NULL, now()),
    ('00000000-0000-0000-0000-000000000004', 'stale old', '0.6.2', NULL, now() - interval '1 hour');
SELECT authority, flipped_at IS NOT NULL AS flipped, live_instances, flip_aware_instances,
       blocking_instances FROM awa.ring_authority_status('awa');
SELECT live_instances, blocking_instances FROM awa.ring_authority_status('awa', 7200);
SELECT sqlstate_of($$SELECT * FROM awa.ring_authority_status('public')$$);
SELECT sqlstate_of($$SELECT * FROM awa.ring_authority_status('awa', 0)$$);

-- the worker's heartbeat: upsert with binary_version; the leader drops day-old rows
SELECT awa.runtime_heartbeat('00000000-0000-0000-0000-00000000000a', 'w', '0.7.0', 42, false);
SELECT awa.runtime_heartbeat('00000000-0000-0000-0000-00000000000a', 'w', '0.7.0', 43, false);
UPDATE awa.runtime_instances SET last_seen_at = now() - interval '2 days' WHERE name = 'stale old';
SELECT awa.runtime_heartbeat('00000000-0000-0000-0000-00000000000a', 'w', '0.7.0', 43, true);
SELECT name, version, binary_version, pid FROM awa.runtime_instances ORDER BY name;
DELETE FROM awa.runtime_instances;
