-- The producer's lane cache (src/dataplane/lanes.c): a backend remembers a (queue,
-- priority, shard)'s lane once its registry row is committed, and never one this
-- transaction registered: a registration rolled back leaves no lane to write into.
\i sql/fresh.inc

-- a first enqueue registers the lanes; rolled back, they are gone, and the next
-- enqueue in this backend registers them again instead of writing into a lane that
-- no longer has a row (whose entries no claim would read)
BEGIN;
SELECT awa.enqueue('lanes_a', 'k', '{"n": 1}') IS NOT NULL AS enqueued;
SELECT awa.enqueue('lanes_a', 'k', '{"n": 2}') IS NOT NULL AS enqueued_again;
ROLLBACK;
SELECT count(*) AS lanes_after_rollback FROM awa.queue_lanes WHERE queue = 'lanes_a';
SELECT awa.enqueue('lanes_a', 'k', '{"n": 3}') IS NOT NULL AS enqueued;
SELECT count(*) AS lanes FROM awa.queue_lanes WHERE queue = 'lanes_a';
SELECT count(DISTINCT lane_id) AS entries_lanes_registered
  FROM awa.ready_entries e
 WHERE e.queue = 'lanes_a'
   AND e.lane_id IN (SELECT lane_id FROM awa.queue_lanes WHERE queue = 'lanes_a');

-- the lane remembered (committed by this backend's last transaction) takes the next
-- enqueues, in other transactions and at every isolation level, and every job is claimed
SELECT awa.enqueue('lanes_a', 'k', '{"n": 4}') IS NOT NULL AS enqueued;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT awa.enqueue('lanes_a', 'k', '{"n": 5}') IS NOT NULL AS enqueued;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT awa.enqueue('lanes_a', 'k', '{"n": 6}') IS NOT NULL AS enqueued;
COMMIT;
SELECT count(DISTINCT lane_id) AS one_lane FROM awa.ready_entries WHERE queue = 'lanes_a';
SELECT array_agg((args->>'n')::int ORDER BY (args->>'n')::int) AS claimed
  FROM awa.claim('lanes_a', 10);

-- a priority and a queue of their own get lanes of their own
SELECT awa.enqueue('lanes_a', 'k', '{"n": 7}', priority => 5) IS NOT NULL AS enqueued;
SELECT awa.enqueue('lanes_b', 'k', '{"n": 8}') IS NOT NULL AS enqueued;
SELECT queue, priority, count(*) AS lanes FROM awa.queue_lanes
 WHERE queue IN ('lanes_a', 'lanes_b') GROUP BY 1, 2 ORDER BY 1, 2;
SELECT e.queue, e.priority, count(*) AS entries FROM awa.ready_entries e
  JOIN (SELECT DISTINCT lane_id, queue, priority FROM awa.queue_lanes) l USING (lane_id)
 WHERE e.queue IN ('lanes_a', 'lanes_b') AND (e.args->>'n')::int >= 7
   AND l.queue = e.queue AND l.priority = e.priority
 GROUP BY 1, 2 ORDER BY 1, 2;

-- the extension made again in this backend: the lanes remembered go with the old
-- registry, and the new one's lanes are registered and read
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw;
SELECT awa.enqueue('lanes_a', 'k', '{"n": 9}') IS NOT NULL AS enqueued;
SELECT count(*) AS lanes FROM awa.queue_lanes WHERE queue = 'lanes_a';
SELECT array_agg((args->>'n')::int) AS claimed FROM awa.claim('lanes_a', 10);
