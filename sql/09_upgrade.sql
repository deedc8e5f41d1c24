-- The staged upgrade: 0.6 (pre-ledger) -> 0.7 (expand; columns authority) -> flip
-- -> 0.8 (contract). It drops the extension and ends with a fresh 0.7 install.
\i sql/fresh.inc
-- every ring's cursor as the columns and the ledger see it, in one row per ring
CREATE FUNCTION pg_temp.cursors() RETURNS TABLE (ring text, columns text, ledger text,
                                                 cursor text, stamped_slots text)
LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['queue', 'lease', 'claim'] LOOP
        ring := r;
        EXECUTE format('SELECT format(''(%%s,%%s)'', current_slot, generation) FROM awa.%I',
                       r || '_ring_state') INTO columns;
        ledger := NULL;
        IF to_regclass('awa.' || r || '_ring_rotations') IS NOT NULL THEN
            EXECUTE format('SELECT string_agg(format(''(%%s,%%s)'', slot, generation), '' '' '
                           'ORDER BY generation) FROM awa.%I', r || '_ring_rotations')
               INTO ledger;
        END IF;
        cursor := NULL;
        IF to_regprocedure('awa.ring_cursor(text)') IS NOT NULL THEN
            SELECT format('(%s,%s)', c.slot, c.generation) INTO cursor FROM awa.ring_cursor(r) c;
        END IF;
        EXECUTE format('SELECT string_agg(format(''%%s:%%s'', slot, generation), '' '' '
                       'ORDER BY slot) FROM awa.%I WHERE generation <> -1', r || '_ring_slots')
           INTO stamped_slots;
        RETURN NEXT;
    END LOOP;
END $$;

DROP EXTENSION awa_bgw;

-- 0.6: the pre-ledger schema
CREATE EXTENSION awa_bgw VERSION '0.6';
SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw';
SELECT to_regprocedure('awa.ring_cursor(text)') AS ring_cursor,
       to_regclass('awa.queue_ring_rotations') AS ledger,
       to_regclass('awa.ring_cursor_authority') AS authority,
       to_regclass('awa.queue_terminal_rollup_deltas') AS deltas,
       (SELECT count(*) FROM pg_attribute WHERE attrelid = 'awa.runtime_instances'::regclass
           AND attname = 'binary_version') AS binary_version_columns;
SELECT * FROM pg_temp.cursors();
-- the same data plane; a rotation updates the columns and stamps the slot; prune
-- upserts the rollups
SELECT count(*) FROM (SELECT awa.enqueue('up', 'k', jsonb_build_object('n', g))
                        FROM generate_series(1, 6) g) e;
SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('up', 6);
SELECT ring, outcome, slot, generation FROM awa.rotate('awa', 'queue');
SELECT ring, outcome, slot, generation FROM awa.rotate('awa', 'claim');
SELECT * FROM pg_temp.cursors();
SELECT ring, outcome, reason, slot FROM awa.prune('awa', 'queue');
SELECT * FROM awa.queue_terminal_rollups;
SELECT count(*) FROM (SELECT awa.enqueue('up', 'k') FROM generate_series(1, 2)) e;
SELECT * FROM awa.queue_counts('up');
SELECT * FROM awa.ring_status;

-- 0.6 -> 0.7: the ledgers are seeded with each current cursor, authority columns
ALTER EXTENSION awa_bgw UPDATE TO '0.7';
SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw';
SELECT authority, flipped_at FROM awa.ring_cursor_authority;
SELECT * FROM pg_temp.cursors();
SELECT ring, authority, current_slot, generation, ledger_rows FROM awa.ring_status;
SELECT * FROM awa.queue_counts('up');
SELECT count(*) AS binary_version_columns FROM pg_attribute
 WHERE attrelid = 'awa.runtime_instances'::regclass AND attname = 'binary_version';

-- a compat rotation: the columns advance (CAS), the slot is stamped, the ledger follows
SELECT count(*) FROM (SELECT awa.enqueue('up', 'k') FROM generate_series(1, 2)) e;
SELECT ring, outcome, slot, generation FROM awa.rotate('awa', 'queue');
SELECT * FROM pg_temp.cursors() WHERE ring = 'queue';

-- a pre-ledger rotator advances the queue ring's columns twice and the lease ring's
-- once, as 0.6.2 did (singleton row lock, UPDATE of the columns, slot stamp): the
-- ledger falls behind; the cursor reads the columns
BEGIN;
SELECT 1 FROM awa.queue_ring_state WHERE singleton FOR UPDATE;
UPDATE awa.queue_ring_state SET current_slot = current_slot + 1, generation = generation + 1;
UPDATE awa.queue_ring_slots SET generation = 3 WHERE slot = 3;
UPDATE awa.queue_ring_state SET current_slot = current_slot + 1, generation = generation + 1;
UPDATE awa.queue_ring_slots SET generation = 4 WHERE slot = 4;
UPDATE awa.lease_ring_state SET current_slot = 1, generation = 1;
UPDATE awa.lease_ring_slots SET generation = 1 WHERE slot = 1;
COMMIT;
SELECT * FROM pg_temp.cursors();

-- 0.7 -> 0.8 is refused in columns authority, and changes nothing
SELECT sqlstate_of($$ALTER EXTENSION awa_bgw UPDATE TO '0.8'$$);
SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw';
SELECT count(*) AS compat_columns FROM pg_attribute
 WHERE attrelid = 'awa.queue_ring_state'::regclass AND attname IN ('current_slot', 'generation')
   AND NOT attisdropped;

-- the flip gate: a fresh runtime without binary_version blocks; a stale one does not;
-- 0.7.0 and 0.7.0-alpha.1 are flip-aware
INSERT INTO awa.runtime_instances (instance_id, name, version, binary_version, last_seen_at) VALUES
    ('00000000-0000-0000-0000-000000000001', 'aware', '0.7.0', '0.7.0', now()),
    ('00000000-0000-0000-0000-000000000002', 'alpha', '0.7.0-alpha.1', '0.7.0-alpha.1', now()),
    ('00000000-0000-0000-0000-000000000003', 'old', '0.6.2', NULL, now()),
    ('00000000-0000-0000-0000-000000000004', 'stale old', '0.6.2', NULL, now() - interval '1 hour'),
    ('00000000-0000-0000-0000-000000000005', 'older', '0.6.9', '0.6.9', now()),
    ('00000000-0000-0000-0000-000000000006', 'odd', 'dev', 'dev-build', now());
SELECT live_instances, flip_aware_instances, blocking_instances
  FROM awa.ring_authority_status('awa');
SELECT name, version, binary_version, reason FROM awa.ring_authority_blockers('awa') ORDER BY name;
SELECT sqlstate_of($$SELECT awa.flip_ring_authority('awa')$$);
SELECT authority FROM awa.ring_cursor_authority;
DELETE FROM awa.runtime_instances WHERE name IN ('older', 'odd');
SELECT sqlstate_of($$SELECT awa.flip_ring_authority('awa', false, 90)$$);
-- the stale row is outside a short window; the fresh old one is not
UPDATE awa.runtime_instances SET last_seen_at = now() - interval '10 minutes' WHERE name = 'old';
SELECT name FROM awa.ring_authority_blockers('awa', 3600) ORDER BY name;
SELECT count(*) AS blockers_in_90s FROM awa.ring_authority_blockers('awa', 90);
UPDATE awa.runtime_instances SET last_seen_at = now() WHERE name = 'old';
SELECT sqlstate_of($$SELECT awa.flip_ring_authority('public')$$);
SELECT sqlstate_of($$SELECT awa.flip_ring_authority('awa', NULL)$$);
SELECT sqlstate_of($$SELECT * FROM awa.ring_authority_blockers('awa', -1)$$);

-- an invalid compat cursor is refused, whatever force says
BEGIN;
UPDATE awa.claim_ring_state SET current_slot = 5;
SELECT sqlstate_of($$SELECT awa.flip_ring_authority('awa', true)$$);
ROLLBACK;
-- so is a ledger ahead of the columns
BEGIN;
INSERT INTO awa.claim_ring_rotations (generation, slot) VALUES (7, 7);
SELECT sqlstate_of($$SELECT awa.flip_ring_authority('awa', true)$$);
ROLLBACK;
SELECT authority FROM awa.ring_cursor_authority;

-- force overrides the gate: the ledgers are backfilled with every generation the
-- pre-ledger rotator advanced, the columns and slot generations poisoned
SELECT awa.flip_ring_authority('awa', true);
SELECT authority, flipped_at IS NOT NULL AS flipped FROM awa.ring_cursor_authority;
SELECT * FROM pg_temp.cursors();
SELECT * FROM awa.queue_counts('up');
-- a pre-ledger cursor update now fails loudly (55000) and changes nothing
SELECT sqlstate_of($$UPDATE awa.queue_ring_state SET current_slot = 0, generation = 0$$);
SELECT sqlstate_of($$UPDATE awa.lease_ring_state SET current_slot = 1, generation = 1$$);
-- a second flip is a no-op
SELECT flipped_at AS first_flip FROM awa.ring_cursor_authority \gset
SELECT awa.flip_ring_authority('awa');
SELECT flipped_at = :'first_flip' AS unchanged FROM awa.ring_cursor_authority;
SELECT * FROM pg_temp.cursors();
-- the ledger rotates on
SELECT ring, outcome, slot, generation FROM awa.rotate('awa', 'queue');

-- 0.7 -> 0.8: refused while a fresh runtime is pre-flip ...
SELECT sqlstate_of($$ALTER EXTENSION awa_bgw UPDATE TO '0.8'$$);
SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw';
-- ... accepted once it is gone
DELETE FROM awa.runtime_instances WHERE binary_version IS NULL;
ALTER EXTENSION awa_bgw UPDATE TO '0.8';
SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw';
SELECT attrelid::regclass, attname FROM pg_attribute
 WHERE attrelid IN ('awa.queue_ring_state'::regclass, 'awa.lease_ring_state'::regclass,
                    'awa.claim_ring_state'::regclass, 'awa.queue_ring_slots'::regclass,
                    'awa.lease_ring_slots'::regclass, 'awa.claim_ring_slots'::regclass)
   AND attnum > 0 AND NOT attisdropped
 ORDER BY attrelid::regclass::text, attnum;
SELECT * FROM awa.ring_cursor('queue');
SELECT ring, authority, current_slot, generation FROM awa.ring_status;
SELECT awa.flip_ring_authority('awa');
SELECT authority, live_instances, blocking_instances FROM awa.ring_authority_status('awa');
SELECT to_regprocedure('awa.reject_compat_ring_cursor_update_after_flip()') AS fence;
SELECT ring, outcome, slot, generation FROM awa.rotate('awa', 'queue');
SELECT count(awa.complete(job_id, run_lease)) FROM awa.claim('up', 10);
SELECT * FROM awa.queue_counts('up');
SELECT sqlstate_of($$UPDATE awa.ring_cursor_authority SET authority = 'columns'$$);

-- a fresh install of each version
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.8';
SELECT * FROM awa.ring_cursor('claim');
SELECT authority FROM awa.ring_cursor_authority;
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.7';
SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw';
SELECT * FROM pg_temp.cursors();
