-- What a pre-ledger (0.6.2) maintenance process does for one ring per rotation, for
-- the mixed-fleet tests only: heartbeat without binary_version, then, in one
-- transaction, the singleton FOR UPDATE (waiting, as 0.6.2 did), the columns advanced
-- by one unless the incoming slot still holds rows, and the incoming slot stamped.
-- It knows nothing of ledgers or authority. psql variables: ring, instance.
INSERT INTO awa.runtime_instances (instance_id, name, version, pid, last_seen_at)
VALUES (:'instance', 'pre-ledger rotator', '0.6.2', pg_backend_pid(), now())
ON CONFLICT (instance_id) DO UPDATE SET last_seen_at = now(), pid = EXCLUDED.pid;

\set state_table 'awa.' :ring '_ring_state'
\set slots_table 'awa.' :ring '_ring_slots'
BEGIN;
SELECT current_slot AS cur_slot, generation AS cur_gen, slot_count AS n
  FROM :state_table WHERE singleton FOR UPDATE \gset
SELECT (:cur_slot + 1) % :n AS next_slot, :cur_gen + 1 AS next_gen,
       awa.ring_slot_blocker(:'ring', ((:cur_slot + 1) % :n)::int) IS NULL AS may_rotate \gset
\if :may_rotate
UPDATE :state_table SET current_slot = :next_slot, generation = :next_gen
 WHERE singleton;
UPDATE :slots_table SET generation = :next_gen WHERE slot = :next_slot;
\endif
COMMIT;
