-- The xid space of the rows (docs/storage.md A.17): a fresh install records this
-- cluster's mark; rows brought from another cluster (simulated here: every xid of the
-- entries and windows moved 2^33 ahead, a consistent space of its own, and the source's
-- mark) are refused by the readers and rebased by the first enqueue, which claims then
-- read exactly once: no claimed or cancelled job comes back, every waiting job and the new
-- one are claimed. Without the rebase the new job (an xid of this cluster, below the
-- restored windows) would read as claimed and never be handed out. Also: a restore's
-- CREATE EXTENSION (row_security off) leaves no mark and the first enqueue adopts it;
-- rows without a mark are rebased by the first claim; the worker's call waits while a
-- sequence stands behind its rows, and the rebase sets it.
\i sql/fresh.inc
SELECT awa.xid_space_state() AS state, count(*) AS marks,
       bool_and(system_identifier = awa_internal.cluster_system_identifier()) AS this_cluster
  FROM awa.xid_space;

-- two lanes (priorities 0 and 1); job 1 completed, job 2 running, job 3 cancelled before
-- a claim, jobs 4-8 waiting
SELECT awa.enqueue('xs', 'p0-' || g, '{}', 0::smallint) FROM generate_series(1, 5) g;
SELECT awa.enqueue('xs', 'p1-' || g, '{}', 1::smallint) FROM generate_series(1, 3) g;
SELECT job_id, kind, awa.complete(job_id, run_lease) FROM awa.claim('xs', 1);
SELECT job_id, kind FROM awa.claim('xs', 1);
SELECT awa.cancel(3);
SELECT available, running, completed FROM awa.queue_counts('xs');

-- the move: a consistent image of another xid space, 2^33 ahead, with its mark
CREATE FUNCTION pg_temp.shift(s pg_snapshot) RETURNS pg_snapshot LANGUAGE sql STRICT AS $$
    SELECT format('%s:%s:%s', pg_snapshot_xmin(s)::text::bigint + 8589934592,
                  pg_snapshot_xmax(s)::text::bigint + 8589934592,
                  coalesce((SELECT string_agg((x::text::bigint + 8589934592)::text, ',')
                              FROM pg_snapshot_xip(s) x), ''))::pg_snapshot
$$;
BEGIN;
UPDATE awa.ready_entries SET txid = (txid::text::bigint + 8589934592)::text::xid8;
UPDATE awa.lease_claims SET txid = (txid::text::bigint + 8589934592)::text::xid8,
       win_lo = pg_temp.shift(win_lo), win_hi = pg_temp.shift(win_hi)
 WHERE win_hi IS NOT NULL;
DELETE FROM awa.xid_space;
INSERT INTO awa.xid_space (system_identifier) VALUES (42);
COMMIT;
SELECT awa.xid_space_state() AS state;
-- readers refuse rather than read a window of another space
SELECT sqlstate_of($$SELECT * FROM awa.queue_counts('xs')$$);
SELECT sqlstate_of($$SELECT awa.cancel(4)$$);
-- the first enqueue rebases, in its own transaction
SELECT awa.enqueue('xs', 'new') AS new_job;
SELECT awa.xid_space_state() AS state, count(*) AS marks,
       bool_and(system_identifier = awa_internal.cluster_system_identifier()) AS this_cluster
  FROM awa.xid_space;
SELECT count(*) FILTER (WHERE txid = '0') AS restored_txid_0, count(*) AS entries
  FROM awa.ready_entries;
SELECT count(*) AS receipts_with_a_window FROM awa.lease_claims WHERE win_hi IS NOT NULL;
-- the job running at the move keeps its args in the queue ring: the rebase took its
-- claimed entry, and its receipt has none (0.10, docs/storage.md A.20)
SELECT job_id, attempt, args FROM awa.held_args;
SELECT available, running, completed FROM awa.queue_counts('xs');
-- every waiting job and the new one, once; not 1 (completed), 2 (running), 3 (cancelled)
SELECT job_id, kind FROM awa.claim('xs', 20) ORDER BY job_id;
SELECT job_id, kind FROM awa.claim('xs', 20) ORDER BY job_id;
SELECT available, running, completed FROM awa.queue_counts('xs');
-- and the job running at the move completes with its token
SELECT awa.complete(2, (SELECT run_lease FROM awa.lease_claims WHERE job_id = 2));

-- rows without a mark (a dump taken before 0.10): readers refuse, the first claim rebases
SELECT awa.enqueue('xs', 'unmarked');
DELETE FROM awa.xid_space;
SELECT awa.xid_space_state() AS state;
SELECT sqlstate_of($$SELECT * FROM awa.queue_counts('xs')$$);
SELECT job_id, kind FROM awa.claim('xs', 20);
SELECT awa.xid_space_state() AS state;

-- the worker's call waits while a sequence stands behind its rows (a restore sets them
-- after its tables); the rebase of an enqueue or claim sets it
INSERT INTO awa.xid_space (system_identifier) VALUES (42);
SELECT setval('awa.job_id_seq', 1);
SELECT awa_internal.sequences_behind();
SELECT awa.adopt_xid_space(false);
SELECT awa.xid_space_state() AS state;
SELECT awa.adopt_xid_space();
SELECT awa_internal.sequences_behind(), awa_internal.sequence_last('awa.job_id_seq') AS job_id_seq;
SELECT awa.adopt_xid_space();

-- a restore's CREATE EXTENSION (row_security off, as every dump sets it) leaves no mark;
-- the first enqueue records it
SET client_min_messages = warning;
DROP EXTENSION awa_bgw;
SET row_security = off;
CREATE EXTENSION awa_bgw;
RESET row_security;
RESET client_min_messages;
SELECT awa.xid_space_state() AS state, (SELECT count(*) FROM awa.xid_space) AS marks;
SELECT awa.enqueue('xs', 'first');
SELECT awa.xid_space_state() AS state, (SELECT count(*) FROM awa.xid_space) AS marks;
-- the mark is not for callers of the API to write
SET ROLE awa_producer;
SELECT sqlstate_of($$INSERT INTO awa.xid_space (system_identifier) VALUES (1)$$);
SELECT sqlstate_of($$SELECT awa.adopt_xid_space()$$);
SELECT awa.xid_space_state() AS state;
RESET ROLE;
