-- Object shapes of a fresh 0.7 install: ledger authority, poisoned compat columns,
-- genesis ledger rows, one child per slot for every ring family. 01 to 03 test the
-- control plane of 0.7, the version with the compat columns and the fence (0.8 and
-- 0.9 drop them; 09_upgrade and 11_windows test those).
\i sql/fresh.inc
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.7';
SELECT c.relname, c.relkind,
       (SELECT count(*) FROM pg_inherits i WHERE i.inhparent = c.oid) AS children
  FROM pg_class c
 WHERE c.relnamespace = 'awa'::regnamespace AND c.relkind IN ('r', 'p')
   AND NOT c.relispartition
 ORDER BY c.relname;

-- every table of the schema is a member of the extension
SELECT count(*) AS non_member_tables
  FROM pg_class c
 WHERE c.relnamespace = 'awa'::regnamespace AND c.relkind IN ('r', 'p', 'v')
   AND NOT EXISTS (SELECT 1 FROM pg_depend d
                    WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                      AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e');

-- children are named <family>_<slot> and hold exactly their slot
SELECT p.relname AS parent, min(c.relname) AS first_child, max(c.relname) AS last_child,
       bool_and(pg_get_expr(c.relpartbound, c.oid)
                = format('FOR VALUES IN (%s)', substring(c.relname from '_(\d+)$'))) AS bounds_match
  FROM pg_inherits i
  JOIN pg_class p ON p.oid = i.inhparent
  JOIN pg_class c ON c.oid = i.inhrelid
 WHERE p.relnamespace = 'awa'::regnamespace AND p.relkind = 'p'
 GROUP BY p.relname ORDER BY p.relname;

SELECT 'queue' AS ring, singleton, slot_count, current_slot, generation FROM awa.queue_ring_state
UNION ALL SELECT 'lease', singleton, slot_count, current_slot, generation FROM awa.lease_ring_state
UNION ALL SELECT 'claim', singleton, slot_count, current_slot, generation FROM awa.claim_ring_state;
-- (the trust marker is set on a fresh install)
SELECT terminal_counter_trusted_at IS NOT NULL AS trusted FROM awa.queue_ring_state;

SELECT 'queue' AS ring, count(*), min(slot), max(slot), bool_and(generation = -1) AS poisoned FROM awa.queue_ring_slots
UNION ALL SELECT 'lease', count(*), min(slot), max(slot), bool_and(generation = -1) FROM awa.lease_ring_slots
UNION ALL SELECT 'claim', count(*), min(slot), max(slot), bool_and(generation = -1) FROM awa.claim_ring_slots;

SELECT 'queue' AS ring, generation, slot FROM awa.queue_ring_rotations
UNION ALL SELECT 'lease', generation, slot FROM awa.lease_ring_rotations
UNION ALL SELECT 'claim', generation, slot FROM awa.claim_ring_rotations;

SELECT authority, flipped_at IS NOT NULL AS flipped FROM awa.ring_cursor_authority;

-- the ledger's own checks: no negative generation, the slot is derived
\set VERBOSITY terse
INSERT INTO awa.queue_ring_rotations (generation, slot) VALUES (-1, -1);
INSERT INTO awa.lease_ring_rotations (generation, slot) VALUES (9, 2);
\set VERBOSITY default

-- the fence trigger and the one-way guard exist
SELECT tgrelid::regclass, tgname FROM pg_trigger
 WHERE tgrelid::regclass::text LIKE 'awa.%' AND NOT tgisinternal ORDER BY 1, 2;

-- maintenance functions are not for PUBLIC
SELECT p.oid::regprocedure AS function, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p
 WHERE p.pronamespace = 'awa'::regnamespace
   AND p.proname IN ('rotate', 'prune', 'ring_cursor', 'ring_authority_status',
                     'runtime_heartbeat', 'semver_rank', 'ring_authority_min_flip_version')
 ORDER BY p.proname;

-- the views answer
SELECT ring, authority, current_slot, generation, slot_count, ledger_rows,
       sealed_slots_awaiting_prune
  FROM awa.ring_status;
SELECT count(*) AS workers FROM awa.maintenance_status;   -- none in this instance
