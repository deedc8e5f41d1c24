-- An application role with USAGE on awa and EXECUTE on the API uses the queue and can
-- do nothing else; hot paths lock only the ring children they touch.
\i sql/fresh.inc

CREATE ROLE awa_test_app LOGIN;
GRANT USAGE ON SCHEMA awa TO awa_test_app;
GRANT EXECUTE ON FUNCTION awa.enqueue(text, text, jsonb, int, timestamptz, int, text, interval, text[]),
    awa.enqueue_batch(text, jsonb), awa.claim(text, int, interval, interval),
    awa.complete(bigint, bigint), awa.complete_batch(bigint[], bigint[]),
    awa.fail(bigint, bigint, text, interval), awa.heartbeat(bigint, bigint, jsonb),
    awa.cancel(bigint), awa.queue_counts(text), awa.register_queue(text, int) TO awa_test_app;

SET ROLE awa_test_app;
SELECT awa.enqueue('app', 'work') AS id;
SELECT * FROM awa.enqueue_batch('app', '[{"kind": "w2"}, {"kind": "w3"}]');
SELECT max(run_lease) FILTER (WHERE job_id = 1) AS lease1,
       max(run_lease) FILTER (WHERE job_id = 2) AS lease2, count(*) AS claimed
  FROM awa.claim('app', 2) \gset
SELECT :claimed AS claimed;
SELECT awa.heartbeat(1, :lease1) AS hb, awa.complete(1, :lease1) AS done,
       awa.fail(2, :lease2, 'no', '0 s') AS failed, awa.cancel(3) AS cancelled;
SELECT * FROM awa.queue_counts('app');
-- ... and nothing else
SELECT sqlstate_of($$SELECT * FROM awa.rotate('awa', 'queue')$$);
SELECT sqlstate_of($$SELECT * FROM awa.prune('awa', 'queue')$$);
SELECT sqlstate_of($$SELECT * FROM awa.rescue('awa')$$);
SELECT sqlstate_of($$SELECT * FROM awa.promote_deferred('awa')$$);
SELECT sqlstate_of($$SELECT * FROM awa.ring_cursor('queue')$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.ready_entries$$);
SELECT sqlstate_of($$INSERT INTO awa.queue_ring_rotations VALUES (1, 1)$$);
SELECT sqlstate_of($$SELECT awa_internal.enqueue_ready('app', 0::smallint, '{}')$$);
SELECT sqlstate_of($$SELECT * FROM awa.maintenance_status$$);
RESET ROLE;

-- the locks a claim holds in an open transaction: the children it read or wrote, never
-- all children of a parent (so prune of any other slot is not blocked by it)
SELECT awa.enqueue('locks', 'k') AS id;
BEGIN;
SELECT job_id FROM awa.claim('locks', 10);
SELECT c.relname, l.mode
  FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND c.relnamespace = 'awa'::regnamespace
   AND c.relkind = 'r' AND c.relname ~ '_[0-9]+$'
 ORDER BY 1, 2;
-- and of the queue's eight lanes (each tried: it asked for 10), only the claim lock of
-- the one it took from
SELECT count(*) AS lanes, (SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid()
                             AND locktype = 'userlock') AS lane_locks_held
  FROM awa.queue_lanes WHERE queue = 'locks';
-- ... under the key SQL builds for that lane (the C claim builds its own: they agree)
SELECT count(*) AS lanes_held_by_sql_key
  FROM awa.queue_lanes l
 WHERE l.queue = 'locks' AND awa_internal.private_xact_lock_held(awa_internal.claim_lock_key(l.lane_id));
COMMIT;
-- and a complete, under the attempt's key as SQL builds it
SELECT run_lease AS lease4 FROM awa.lease_claims WHERE job_id = 4 \gset
BEGIN;
SELECT awa.complete(4, :lease4);
SELECT awa_internal.private_xact_lock_held(awa_internal.attempt_lock_key(4, :lease4)) AS attempt_key_held;
SELECT c.relname, l.mode
  FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND c.relnamespace = 'awa'::regnamespace
   AND c.relkind = 'r' AND c.relname ~ '_[0-9]+$'
 ORDER BY 1, 2;
COMMIT;
-- and an enqueue
BEGIN;
SELECT awa.enqueue('locks', 'k2') AS id;
SELECT c.relname, l.mode
  FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND c.relnamespace = 'awa'::regnamespace
   AND c.relkind = 'r' AND c.relname ~ '_[0-9]+$'
 ORDER BY 1, 2;
COMMIT;

-- the SQL keys hash the names the locks had as advisory keys
SELECT awa_internal.claim_lock_key(7) = hashtextextended('awa.claim:7', 0) AS claim_key,
       awa_internal.attempt_lock_key(4, 4611686018427387904)
         = hashtextextended('awa.attempt:4:4611686018427387904', 0) AS attempt_key,
       awa_internal.ring_serializer_key('queue')
         = hashtextextended('awa.queue_storage.ring_rotation:awa:queue', 0) AS serializer_key;

DROP OWNED BY awa_test_app;
DROP ROLE awa_test_app;
