-- Receipts without their job's args (0.10; tables/held_args.sql, docs/storage.md A.20,
-- docs/proposals/receipt_without_body.md): the claim writes a receipt's args NULL and
-- hands the job its args from the ready entry; while the attempt is open the queue ring
-- holds them, in the entry until prune takes its slot, then in held_args, copied again
-- at each prune of the slot that holds them; a failure (retry or final) and awa.job read
-- them from there.
\i sql/fresh.inc
SET statement_timeout = '60s';
\pset null '∅'
CREATE FUNCTION pg_temp.turn(p_ring text, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    i int;
    r record;
    p record;
    log text := '';
BEGIN
    FOR i IN 1 .. n LOOP
        SELECT * INTO r FROM awa.rotate('awa', p_ring);
        SELECT * INTO p FROM awa.prune('awa', p_ring);
        log := log || left(r.outcome, 3) || '/' || p.outcome
               || coalesce('(' || p.reason || ')', '') || ' ';
    END LOOP;
    RETURN log;
END $$;
-- turn a ring n times, and say only whether every prune pruned (or found nothing)
CREATE FUNCTION pg_temp.wrap(p_ring text, n int) RETURNS boolean LANGUAGE sql AS $$
    SELECT pg_temp.turn(p_ring, n) !~ '(blocked|skipped)'
$$;

-- the catalog: held_args is the queue ring's third family, a child per queue slot,
-- kept by pg_dump; a receipt's args may be NULL, an entry's may not
SELECT awa_internal.ring_families('queue') AS queue_families;
SELECT count(*) = (SELECT slot_count FROM awa.queue_ring_state) AS a_child_per_slot,
       bool_and(c.oid = ANY (e.extconfig)) AS dumped
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid,
       pg_extension e
 WHERE i.inhparent = 'awa.held_args'::regclass AND e.extname = 'awa_bgw';
SELECT attrelid::regclass AS rel, attnotnull FROM pg_attribute
 WHERE attname = 'args' AND attrelid IN ('awa.lease_claims'::regclass,
                                         'awa.ready_entries'::regclass)
 ORDER BY 1::text;

-- four jobs claimed: the claim hands out their args, the receipts keep none
SELECT awa.enqueue('ha', 'k', jsonb_build_object('n', i, 'pad', repeat('x', 40)),
                   max_attempts => CASE i WHEN 2 THEN 1 ELSE 2 END) AS j
  FROM generate_series(1, 4) i ORDER BY 1 LIMIT 1 \gset
SELECT job_id - :j + 1 AS j, args ->> 'n' AS n, length(args ->> 'pad') AS pad
  FROM awa.claim('ha', 4) ORDER BY job_id;
SELECT count(*) AS receipts, count(args) AS with_args FROM awa.lease_claims;
CREATE TEMP TABLE l AS SELECT job_id - :j + 1 AS j, run_lease FROM awa.lease_claims;
SELECT job_id - :j + 1 AS j, state, args ->> 'n' AS n FROM awa.job(:j + 0);

-- the queue ring turns a whole wrap: the entries' slot is pruned, the four open
-- attempts' args are held, one row each, wherever the ring now holds them
SELECT pg_temp.wrap('queue', 16) AS pruned;
SELECT count(*) AS entries_left FROM awa.ready_entries;
SELECT job_id - :j + 1 AS j, attempt, args ->> 'n' AS n FROM awa.held_args ORDER BY 1;
SELECT job_id - :j + 1 AS j, state, args ->> 'n' AS n FROM awa.job(:j + 1);
-- and again: carried at each prune of the slot that holds them, never doubled
SELECT pg_temp.wrap('queue', 16) AS pruned;
SELECT count(*) AS held, count(DISTINCT (job_id, attempt)) AS attempts FROM awa.held_args;

-- a completion closes job 4: its args are not carried past the next prune of their slot
SELECT awa.complete(:j + 3, run_lease) AS completed FROM l WHERE j = 4;
SELECT pg_temp.wrap('queue', 16) AS pruned;
SELECT job_id - :j + 1 AS j FROM awa.held_args ORDER BY 1;

-- a failure with attempts left: retried, the next attempt deferred with the args
SELECT awa.fail(:j + 0, run_lease, 'boom', interval '1 hour') AS failed FROM l WHERE j = 1;
SELECT job_id - :j + 1 AS j, attempt, args ->> 'n' AS n, length(args ->> 'pad') AS pad
  FROM awa.deferred_jobs;
-- a failure on the last attempt: into failed_jobs with the args
SELECT awa.fail(:j + 1, run_lease, 'last') AS failed FROM l WHERE j = 2;
SELECT job_id - :j + 1 AS j, attempts, error, args ->> 'n' AS n FROM awa.failed_jobs;
SELECT job_id - :j + 1 AS j, state, args ->> 'n' AS n FROM awa.job(:j + 1);
-- the SQL path (rescue's): the same, from the held copy
SELECT awa_internal.fail_attempt(c, 'rescued', 'rescued: test', NULL)
  FROM l, awa_internal.open_receipt(:j + 2, l.run_lease) c WHERE l.j = 3;
SELECT job_id - :j + 1 AS j, attempt, args ->> 'n' AS n FROM awa.deferred_jobs ORDER BY 1;
SELECT job_id - :j + 1 AS j, state, attempt, args ->> 'n' AS n FROM awa.job(:j + 2);

-- every attempt closed: the held rows go with the next wrap, and the queue ring is idle
SELECT pg_temp.wrap('queue', 16) AS pruned;
SELECT count(*) AS held FROM awa.held_args;
SELECT awa_internal.ring_is_idle('queue') AS queue_idle;

-- an attempt the ring holds no args of: refused, not retried without them
SELECT sqlstate_of('SELECT awa_internal.attempt_args(-1, 1)') AS missing;

-- a receipt written before 0.10 (its args carried) is failed from its own args, and
-- prune holds nothing for it
SELECT awa.enqueue('old', 'k', '{"v": 9}', max_attempts => 1) AS o \gset
SELECT count(*) FROM awa.claim('old');
UPDATE awa.lease_claims SET args = '{"v": 9, "from": "receipt"}' WHERE job_id = :o;
SELECT pg_temp.wrap('queue', 16) AS pruned;
SELECT count(*) AS held FROM awa.held_args WHERE job_id = :o;
SELECT awa.fail(:o, run_lease, 'x') FROM awa.lease_claims WHERE job_id = :o;
SELECT args FROM awa.failed_jobs WHERE job_id = :o;

-- a finished attempt whose receipt the claim ring pruned before the queue ring pruned
-- its entry (the claim ring turning faster; the lane's later claim is its position,
-- which the claim ring keeps): nothing held for it
SELECT awa.enqueue('fast', 'k', '{"f": 1}') AS f \gset
SELECT count(*) FROM (SELECT awa.complete(job_id, run_lease) FROM awa.claim('fast')) c;
SELECT pg_temp.wrap('claim', 1) AS claim_turned;
SELECT awa.enqueue('fast', 'k', '{"f": 2}') AS f2 \gset
SELECT count(*) FROM (SELECT awa.complete(job_id, run_lease) FROM awa.claim('fast')) c;
SELECT pg_temp.wrap('claim', 8) AS claim_pruned;
SELECT job_id - :f + 1 AS f, count(*) AS receipts FROM awa.lease_claims
 WHERE job_id IN (:f, :f2) GROUP BY 1 ORDER BY 1;
SELECT count(*) AS entries FROM awa.ready_entries WHERE job_id IN (:f, :f2);
SELECT pg_temp.wrap('queue', 16) AS pruned;
SELECT count(*) AS held FROM awa.held_args WHERE job_id IN (:f, :f2);

-- the fail path finds an open attempt's entry by the claim-order key its receipt
-- carries (lane_id, txid, lane_seq), not by job id: with the job-id index gone (in a
-- transaction rolled back), a retry (C) and a rescue (SQL) take their args from the
-- entry all the same
SELECT awa.enqueue('hk', 'k', jsonb_build_object('n', i), max_attempts => 2) AS k
  FROM generate_series(1, 3) i ORDER BY 1 LIMIT 1 \gset
SELECT count(*) AS claimed FROM awa.claim('hk', 3);
BEGIN;
DROP INDEX awa.ready_entries_job_id_idx;
SELECT awa.fail(job_id, run_lease, 'boom', interval '1 hour') AS failed
  FROM awa.lease_claims WHERE job_id = :k;
SELECT awa_internal.fail_attempt(c, 'rescued', 'rescued: test', NULL)
  FROM awa.lease_claims l, awa_internal.open_receipt(l.job_id, l.run_lease) c
 WHERE l.job_id = :k + 1;
SELECT awa_internal.attempt_args(job_id, attempt, lane_id, txid, lane_seq) AS by_key
  FROM awa.lease_claims WHERE job_id = :k + 2;
SELECT job_id - :k AS j, attempt, args ->> 'n' AS n FROM awa.deferred_jobs
 WHERE queue = 'hk' ORDER BY 1;
ROLLBACK;
SELECT count(*) AS completed
  FROM (SELECT awa.complete(job_id, run_lease) FROM awa.lease_claims
         WHERE job_id BETWEEN :k AND :k + 2) c;
