-- Unique jobs (api/unique.sql): a second enqueue of a (queue, unique_key) while a
-- job of it is in one of unique_states (and was enqueued within unique_for) returns
-- that job's id and writes nothing; every state, the window, bad input, the batch, and
-- the purge of the keys of jobs the rings no longer hold. The races are in
-- specs/unique_jobs.spec.
\i sql/fresh.inc
-- the token of a job's newest attempt
CREATE FUNCTION pg_temp.lease(p_job bigint) RETURNS bigint LANGUAGE sql AS $$
    SELECT run_lease FROM awa.lease_claims WHERE job_id = p_job
     ORDER BY attempt DESC LIMIT 1 $$;
CREATE FUNCTION pg_temp.turn(p_ring text, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    i int;
    p record;
    log text := '';
BEGIN
    FOR i IN 1 .. n LOOP
        PERFORM awa.rotate('awa', p_ring);
        SELECT * INTO p FROM awa.prune('awa', p_ring);
        log := log || left(p.outcome, 1);
    END LOOP;
    RETURN log;
END $$;
-- what a duplicate must not write: entries, deferred rows, keys
CREATE FUNCTION pg_temp.written() RETURNS text LANGUAGE sql AS $$
    SELECT format('ready %s, deferred %s, keys %s',
                  (SELECT count(*) FROM awa.ready_entries),
                  (SELECT count(*) FROM awa.deferred_jobs),
                  (SELECT count(*) FROM awa.unique_keys)) $$;

-- available: the second enqueue returns the first job's id and writes nothing
SELECT awa.enqueue('uq', 'mail', '{"to": 1}', unique_key => 'user-1') AS a \gset
SELECT pg_temp.written() AS before \gset
SELECT awa.enqueue('uq', 'mail', '{"to": 1}', unique_key => 'user-1') = :a AS same_job;
SELECT pg_temp.written() = :'before' AS nothing_written;
-- another key, another queue, no key at all: new jobs
SELECT awa.enqueue('uq', 'mail', unique_key => 'user-2') <> :a AS new_key;
SELECT awa.enqueue('uq-other', 'mail', unique_key => 'user-1') <> :a AS new_queue;
SELECT awa.enqueue('uq', 'mail') <> :a AS no_key;
-- the states the caller names: the job is available, not running
SELECT awa.enqueue('uq', 'mail', unique_key => 'user-1',
                   unique_states => '{running}') <> :a AS not_running_yet;
SELECT awa.enqueue('uq', 'mail', unique_key => 'user-1',
                   unique_states => '{available}') AS newest \gset
-- the newest job of the key in the states named is the one returned
SELECT :newest > :a AS newer,
       awa.enqueue('uq', 'mail', unique_key => 'user-1') = :newest AS newest_returned;
SELECT job_id, state FROM awa.jobs('uq') ORDER BY job_id;

-- scheduled and retryable count by default
SELECT awa.enqueue('sched', 'later', run_at => now() + interval '1 hour',
                   unique_key => 'k') AS s \gset
SELECT awa.enqueue('sched', 'later', unique_key => 'k') = :s AS scheduled_dup;
SELECT awa.enqueue('sched', 'later', unique_key => 'k',
                   unique_states => '{available}') <> :s AS not_available;

-- running, completed (default: a duplicate), failed and cancelled (not by default)
SELECT awa.enqueue('life', 'w', unique_key => 'r', max_attempts => 2) AS r \gset
SELECT count(*) AS claimed FROM awa.claim('life');
SELECT awa.enqueue('life', 'w', unique_key => 'r') = :r AS running_dup;
SELECT awa.fail(:r, pg_temp.lease(:r), 'once', '1 hour') AS failed_once;
SELECT state FROM awa.job(:r);
SELECT awa.enqueue('life', 'w', unique_key => 'r') = :r AS retryable_dup;
UPDATE awa.deferred_jobs SET run_at = now() WHERE job_id = :r;
SELECT promoted FROM awa.promote_deferred('awa');
SELECT count(*) AS claimed FROM awa.claim('life');
SELECT awa.complete(:r, pg_temp.lease(:r)) AS completed;
SELECT state FROM awa.job(:r);
SELECT awa.enqueue('life', 'w', unique_key => 'r') = :r AS completed_dup;
SELECT awa.enqueue('life', 'w', unique_key => 'r',
                   unique_states => '{scheduled,available,running}') AS r2 \gset
SELECT :r2 <> :r AS completed_not_named;
SELECT awa.cancel(:r2) AS cancelled;
SELECT awa.enqueue('life', 'w', unique_key => 'r',
                   unique_states => '{scheduled,available,running}') <> :r2
       AS cancelled_not_a_dup;
SELECT awa.enqueue('fails', 'w', unique_key => 'f', max_attempts => 1) AS f \gset
SELECT count(*) FROM (SELECT awa.fail(job_id, run_lease, 'no') FROM awa.claim('fails')) x;
SELECT state FROM awa.job(:f);
SELECT awa.enqueue('fails', 'w', unique_key => 'f') <> :f AS failed_not_a_dup;
SELECT awa.enqueue('fails', 'w', unique_key => 'f', unique_states => '{failed}') = :f
       AS failed_when_named;

-- unique_for: only a job enqueued within it counts
SELECT awa.enqueue('win', 'w', unique_key => 'w') AS w \gset
UPDATE awa.unique_keys SET created_at = now() - interval '2 hours' WHERE job_id = :w;
SELECT awa.enqueue('win', 'w', unique_key => 'w', unique_for => '3 hours') = :w
       AS within_window;
SELECT awa.enqueue('win', 'w', unique_key => 'w', unique_for => '1 hour') <> :w
       AS outside_window;

-- twice in one transaction: one job
BEGIN;
SELECT awa.enqueue('tx', 'w', unique_key => 't') AS t \gset
SELECT awa.enqueue('tx', 'w', unique_key => 't') = :t AS same_transaction;
COMMIT;
SELECT count(*) AS tx_jobs FROM awa.jobs('tx');

-- bad input: a clear error, nothing written
SELECT pg_temp.written() AS before \gset
SELECT sqlstate_of($$SELECT awa.enqueue('uq', 'mail', unique_for => '1 hour')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('uq', 'mail', unique_states => '{running}')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('uq', 'mail', unique_key => '')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('uq', 'mail', unique_key => repeat('k', 1001))$$);
SELECT sqlstate_of($$SELECT awa.enqueue('uq', 'mail', unique_key => 'k',
                                        unique_for => '0 s')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('uq', 'mail', unique_key => 'k',
                                        unique_for => '-1 day')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('uq', 'mail', unique_key => 'k',
                                        unique_states => '{}')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('uq', 'mail', unique_key => 'k',
                                        unique_states => '{done}')$$);
SELECT sqlstate_of($$SELECT awa.enqueue('uq', 'mail', unique_key => 'k',
                                        unique_states => ARRAY['running', NULL])$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('uq',
                     '[{"kind": "a"}, {"kind": "b", "unique_key": "k"}]')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('uq',
                     '[{"kind": "b", "unique_states": ["running"]}]')$$);
SELECT pg_temp.written() = :'before' AS nothing_written;
-- the longest key is accepted
SELECT awa.enqueue('uq', 'mail', unique_key => repeat('k', 1000)) > 0 AS longest_key;
\set VERBOSITY default
SELECT awa.enqueue('uq', 'mail', unique_key => 'k', unique_states => '{done}');
\set VERBOSITY terse

-- the purge: keys of jobs the rings still hold stay; once every record of a completed
-- job is pruned, its key goes (a failed job's stays with its failed_jobs row)
SELECT outcome, purged, last_job_id FROM awa.purge_unique_keys(0);
SELECT count(*) AS keys FROM awa.unique_keys \gset
-- every due job claimed and completed, so that the rings can be pruned
SELECT count(*) FILTER (WHERE awa.complete(c.job_id, c.run_lease)) AS completed
  FROM (SELECT DISTINCT queue FROM awa.jobs(lim => 1000)) q, awa.claim(q.queue, 100) c;
SELECT state, count(*) FROM awa.jobs(lim => 1000) GROUP BY 1 ORDER BY 1;
SELECT pg_temp.turn('queue', 16), pg_temp.turn('claim', 8);
-- a pinned horizon: the purge stands down, nothing deleted
BEGIN;
INSERT INTO awa.queue_terminal_rollup_deltas (queue, priority, pruned_completed_delta)
    VALUES ('never', 0, 1);
PREPARE TRANSACTION 'awa_unique_pin';
SET awa_bgw.horizon_pin_min_age = 0;
SELECT outcome, purged, last_job_id, pin IS NOT NULL AS pinned
  FROM awa.purge_unique_keys(0);
SELECT count(*) = :keys AS all_kept FROM awa.unique_keys;
ROLLBACK PREPARED 'awa_unique_pin';
RESET awa_bgw.horizon_pin_min_age;
SELECT outcome, purged, last_job_id FROM awa.purge_unique_keys(0);
-- what is left: the keys of jobs still held (scheduled, failed), each with a record
SELECT k.queue, left(k.unique_key, 8) AS unique_key, awa_internal.job_state(k.job_id) AS state
  FROM awa.unique_keys k ORDER BY k.job_id;
-- a key whose job is gone no longer holds off a new one
SELECT awa.enqueue('life', 'w', unique_key => 'r') NOT IN (:r, :r2) AS new_after_purge;
-- batches (fold_batch_size keys unless named), each from where the last one stopped;
-- 0 when it reached the end
SELECT count(*) FROM (SELECT awa.enqueue('many', 'w', unique_key => 'm' || i)
                        FROM generate_series(1, 15) i) x;
SELECT (SELECT job_id FROM awa.unique_keys ORDER BY job_id OFFSET 9 LIMIT 1) AS tenth \gset
SELECT outcome, purged, last_job_id = :tenth AS tenth_key
  FROM awa.purge_unique_keys(0, 10);
SELECT outcome, purged, last_job_id FROM awa.purge_unique_keys(:tenth, 10);
SELECT sqlstate_of($$SELECT awa.purge_unique_keys(0, 0)$$);
