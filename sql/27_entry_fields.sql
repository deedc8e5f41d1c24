-- Ready entries without their slot's generation, and without enqueued_at when it is
-- their job's created_at (0.10; docs/proposals/receipt_fields.md (b2),
-- tables/entry_fields.sql, docs/storage.md A.16): ready_entries and done_entries drop
-- ready_generation, which nothing read; enqueued_at is NULL for an entry written less
-- than 1 ms after its job's created_at, and every reader takes coalesce(enqueued_at,
-- created_at). A promotion or a retry (an older created_at) still writes it.
\i sql/fresh.inc
SET statement_timeout = '60s';
\pset null '∅'

-- the catalog: ready_generation dropped from the entries and the done entries (parents
-- and children), enqueued_at nullable with its default kept; a fresh install and an
-- updated 0.9 catalog alike (t/010 compares them)
CREATE FUNCTION pg_temp.entry_columns(p_rel regclass)
RETURNS TABLE (generation text, dropped int, enqueued_not_null boolean,
               enqueued_default text) LANGUAGE sql AS $$
    SELECT string_agg(a.attname, ',') FILTER (WHERE NOT a.attisdropped
                                                AND a.attname = 'ready_generation'),
           count(*) FILTER (WHERE a.attisdropped)::int,
           bool_or(a.attnotnull) FILTER (WHERE a.attname = 'enqueued_at'),
           string_agg(pg_get_expr(d.adbin, d.adrelid), ',')
               FILTER (WHERE a.attname = 'enqueued_at')
      FROM pg_attribute a
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = p_rel AND a.attnum > 0
$$;
CREATE FUNCTION pg_temp.entry_catalog()
RETURNS TABLE (rel text, generation text, dropped int, enqueued_not_null boolean,
               enqueued_default text) LANGUAGE sql AS $$
    SELECT r, s.* FROM unnest(ARRAY['awa.ready_entries', 'awa.ready_entries_0',
                                    'awa.ready_entries_3', 'awa.done_entries',
                                    'awa.done_entries_0']) r,
           pg_temp.entry_columns(r::regclass) s
$$;
SELECT * FROM pg_temp.entry_catalog();
SELECT sqlstate_of('SELECT ready_generation FROM awa.ready_entries') AS read_entry,
       sqlstate_of('SELECT ready_generation FROM awa.done_entries') AS read_done;
-- window_claimables returns the entries' columns, without the generation
SELECT pg_get_function_result('awa_internal.window_claimables'::regproc) AS claimables;

-- awa.enqueue: an entry written within 1 ms of its job's creation has enqueued_at NULL.
-- That is a matter of time, so this tries until one is (each try its own transaction,
-- whose start is its jobs' created_at; a try that took longer is cancelled).
CREATE PROCEDURE pg_temp.enqueue_implied(p_queue text, INOUT job bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. 200 LOOP
        job := awa.enqueue(p_queue, 'implied');
        IF (SELECT r.enqueued_at IS NULL FROM awa.ready_entries r WHERE r.job_id = job) THEN
            RETURN;
        END IF;
        PERFORM awa.cancel(job);
        COMMIT;
    END LOOP;
    job := NULL;
END
$$;
CALL pg_temp.enqueue_implied('ef') \gset
-- one written later in its transaction writes it
BEGIN;
SELECT pg_sleep(0.01) AS slept;
SELECT awa.enqueue('ef', 'late') AS late \gset
COMMIT;
-- the rule, for every first attempt of the queue: NULL, or at least 1 ms after creation
SELECT bool_or(enqueued_at IS NULL) AS one_implied,
       bool_and(enqueued_at IS NULL OR enqueued_at >= created_at + interval '1 ms') AS rule,
       bool_and(attempt = 1) AS first_attempts
  FROM awa.ready_entries WHERE queue = 'ef';
SELECT job_id - :job AS n, kind, enqueued_at IS NULL AS implied,
       enqueued_at - created_at >= interval '10 ms' AS written_late
  FROM awa.ready_entries WHERE job_id IN (:job, :late) ORDER BY 1;

-- the readers take created_at for it: awa.job, awa.jobs, awa.queue_stats,
-- window_claimables
SELECT j.job_id - :job AS n, j.state, j.run_at IS NOT NULL AS has_run_at,
       j.run_at = j.created_at AS run_at_created,
       j.run_at - j.created_at >= interval '10 ms' AS run_at_later
  FROM unnest(ARRAY[:job, :late]) i, awa.job(i) j ORDER BY 1;
SELECT job_id - :job AS n, state, run_at = created_at AS run_at_created
  FROM awa.jobs('ef', 'available') ORDER BY job_id;
SELECT available, oldest_available_at = r.created_at AS oldest_created,
       oldest_available_age >= interval '0' AS age_ok
  FROM awa.queue_stats s, awa.ready_entries r
 WHERE s.queue = 'ef' AND r.job_id = :job;
SELECT w.job_id - :job AS n, w.enqueued_at = coalesce(r.enqueued_at, r.created_at) AS entered,
       r.enqueued_at IS NULL AS stored_null, w.win_hi IS NOT NULL AS last
  FROM awa.ring_cursor('claim') c,
       awa_internal.window_claimables((SELECT lane_id FROM awa.ready_entries
                                        WHERE job_id = :job), 10, c.slot, c.generation,
                                      awa_internal.ring_slot_count('claim'),
                                      awa_internal.ring_slot_count('queue')) w
  JOIN awa.ready_entries r USING (job_id)
 ORDER BY 1;
-- claimed: the latency counts from created_at, and the running job's run_at too
SELECT job_id - :job AS n FROM awa.claim('ef', 1);
SELECT claims_in_window, claim_latency_avg IS NOT NULL AS has_latency,
       claim_latency_max = (SELECT c.claimed_at - r.created_at
                              FROM awa.lease_claims c JOIN awa.ready_entries r USING (job_id)
                             WHERE c.job_id = :job) AS latency_from_created
  FROM awa.queue_stats WHERE queue = 'ef';
SELECT state, run_at = created_at AS run_at_created FROM awa.job(:job);
SELECT awa.complete(job_id, run_lease) AS completed FROM awa.lease_claims
 WHERE job_id = :job;

-- a promotion (created an hour's wait ago, here 10 ms) writes enqueued_at
SELECT awa.enqueue('ef2', 'sched', run_at => now() + interval '1 hour') AS s \gset
UPDATE awa.deferred_jobs SET run_at = now() WHERE job_id = :s;
SELECT pg_sleep(0.01) AS slept;
SELECT promoted FROM awa.promote_deferred('awa');
-- a retry (its job created before) writes it
SELECT job_id - :s AS n, run_lease AS l FROM awa.claim('ef2') \gset
SELECT awa.fail(:s, :l, 'boom', retry_in => '0') AS failed;
SELECT attempt, enqueued_at IS NOT NULL AS written,
       enqueued_at - created_at >= interval '10 ms' AS after_created
  FROM awa.ready_entries WHERE job_id = :s ORDER BY attempt;
SELECT state, attempt, run_at = (SELECT enqueued_at FROM awa.ready_entries
                                  WHERE job_id = :s AND attempt = 2) AS run_at_enqueued
  FROM awa.job(:s);
SELECT oldest_available_at = (SELECT enqueued_at FROM awa.ready_entries
                               WHERE job_id = :s AND attempt = 2) AS oldest_enqueued
  FROM awa.queue_stats WHERE queue = 'ef2';

-- cancels: an available job with enqueued_at NULL, one with it written, a scheduled
-- one; their tombstones carry no generation and read as before
CALL pg_temp.enqueue_implied('ef3') \gset
SELECT awa.enqueue('ef3', 'late') AS late3 \gset
SELECT awa.enqueue('ef3', 'sched', run_at => now() + interval '1 hour') AS sched3 \gset
SELECT awa.cancel(:job) AS implied, awa.cancel(:late3) AS written,
       awa.cancel(:sched3) AS scheduled;
SELECT d.job_id - :job AS n, d.kind, d.state, d.run_lease, d.lane_id = r.lane_id
       AND d.lane_seq = r.lane_seq AND d.ready_slot = r.ready_slot AS in_entry_slot,
       d.ready_slot = k.slot AS in_current_slot,
       to_jsonb(d) ? 'ready_generation' AS generation
  FROM awa.done_entries d LEFT JOIN awa.ready_entries r USING (job_id),
       awa.ring_cursor('queue') k
 WHERE d.job_id IN (:job, :late3, :sched3) ORDER BY 1;
SELECT j.job_id - :job AS n, j.state, j.run_at IS NOT NULL AS has_run_at,
       j.finished_at IS NOT NULL AS finished
  FROM unnest(ARRAY[:job, :late3, :sched3]) i, awa.job(i) j ORDER BY 1;
SELECT * FROM awa.queue_counts('ef3');
-- awa.cancel_queue: the same three kinds at once
CALL pg_temp.enqueue_implied('ef4') \gset
SELECT awa.enqueue('ef4', 'late') AS late4 \gset
SELECT awa.enqueue('ef4', 'sched', run_at => now() + interval '1 hour') AS sched4 \gset
SELECT awa.cancel_queue('ef4') AS cancelled;
SELECT d.job_id - :job AS n, d.kind, d.state, d.run_lease, d.lane_id = r.lane_id
       AND d.lane_seq = r.lane_seq AND d.ready_slot = r.ready_slot AS in_entry_slot,
       to_jsonb(d) ? 'ready_generation' AS generation
  FROM awa.done_entries d LEFT JOIN awa.ready_entries r USING (job_id)
 WHERE d.job_id IN (:job, :late4, :sched4) ORDER BY 1;
SELECT job_id - :job AS n, kind, state, run_at IS NOT NULL AS has_run_at
  FROM awa.jobs('ef4') WHERE job_id IN (:job, :late4, :sched4) ORDER BY job_id;
SELECT * FROM awa.queue_counts('ef4');

-- a 0.9 catalog updated in place: before, the library writes its entries as 0.9 did
-- (ready_generation, enqueued_at NOT NULL); after, they read the same, new entries
-- leave both out, and the cancels go on
SET client_min_messages = warning;
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.9';
RESET client_min_messages;
SELECT awa.enqueue('ef9', 'old', jsonb_build_object('n', i)) AS o
  FROM generate_series(1, 3) i ORDER BY 1 LIMIT 1 \gset
SELECT awa.enqueue('ef9', 'old-sched', run_at => now() + interval '1 hour') AS os \gset
SELECT rel, generation, enqueued_not_null FROM pg_temp.entry_catalog();
SELECT r.job_id - :o AS n, r.ready_generation = k.generation AS generation_09,
       r.enqueued_at IS NOT NULL AS enqueued_09
  FROM awa.ready_entries r, awa.ring_cursor('queue') k ORDER BY 1;
SET client_min_messages = warning;
ALTER EXTENSION awa_bgw UPDATE TO '0.10';
RESET client_min_messages;
SELECT * FROM pg_temp.entry_catalog();
SELECT pg_get_function_result('awa_internal.window_claimables'::regproc) AS claimables;
SELECT j.job_id - :o AS n, j.state, j.run_at = r.enqueued_at AS run_at_enqueued
  FROM awa.ready_entries r, awa.job(r.job_id) j ORDER BY 1;
CALL pg_temp.enqueue_implied('ef9') \gset
SELECT CASE WHEN r.job_id = :job THEN 'implied' ELSE (r.job_id - :o)::text END AS n,
       r.kind, r.enqueued_at IS NULL AS implied, w.enqueued_at = coalesce(r.enqueued_at, r.created_at) AS entered
  FROM awa.ready_entries r
  JOIN awa.ring_cursor('claim') c ON true
  JOIN awa_internal.window_claimables((SELECT lane_id FROM awa.ready_entries
                                        WHERE job_id = :o), 10, c.slot, c.generation,
                                      awa_internal.ring_slot_count('claim'),
                                      awa_internal.ring_slot_count('queue')) w
       USING (job_id)
 WHERE r.job_id IN (:o, :o + 1, :o + 2, :job) ORDER BY 1;
SELECT available, scheduled,
       oldest_available_at = (SELECT enqueued_at FROM awa.ready_entries
                               WHERE job_id = :o) AS oldest_09
  FROM awa.queue_stats WHERE queue = 'ef9';
SELECT awa.cancel(:o) AS old_available, awa.cancel(:os) AS old_scheduled;
SELECT awa.cancel_queue('ef9') AS cancelled;
SELECT CASE WHEN d.job_id = :job THEN 'implied' ELSE (d.job_id - :o)::text END AS n,
       d.kind, d.state, d.run_lease,
       to_jsonb(d) ? 'ready_generation' AS generation
  FROM awa.done_entries d
 WHERE d.job_id IN (:o, :o + 1, :o + 2, :os, :job) ORDER BY 1;
SELECT CASE WHEN job_id = :job THEN 'implied' ELSE (job_id - :o)::text END AS n, state
  FROM awa.jobs('ef9')
 WHERE job_id IN (:o, :o + 1, :o + 2, :os, :job) ORDER BY job_id;
SELECT * FROM awa.queue_counts('ef9');
