-- Receipts without their entry's slot and generation (0.10; docs/proposals/
-- receipt_fields.md (a1), tables/receipt_fields.sql, docs/storage.md A.16): lease_claims
-- drops ready_slot and ready_generation, which nothing read; the claim copies the entry
-- columns the receipt still has, by name. Entries keep their slot (their generation goes
-- too, tables/entry_fields.sql, sql/27_entry_fields).
\i sql/fresh.inc
SET statement_timeout = '60s';
\pset null '∅'

-- the catalog: the two columns dropped from the receipts (parent and children), the
-- slot kept by the entries (one dropped column each: their generation); a fresh install
-- and an updated 0.9 catalog drop them alike (t/010)
CREATE FUNCTION pg_temp.slot_columns(p_rel regclass)
RETURNS TABLE (live text, dropped int) LANGUAGE sql AS $$
    SELECT string_agg(a.attname, ',' ORDER BY a.attnum)
               FILTER (WHERE NOT a.attisdropped
                         AND a.attname IN ('ready_slot', 'ready_generation')),
           count(*) FILTER (WHERE a.attisdropped)::int
      FROM pg_attribute a WHERE a.attrelid = p_rel AND a.attnum > 0
$$;
SELECT r AS rel, s.* FROM unnest(ARRAY['awa.lease_claims', 'awa.lease_claims_0',
                                       'awa.ready_entries', 'awa.ready_entries_0',
                                       'awa.done_entries']::regclass[]) r,
       pg_temp.slot_columns(r) s;
SELECT sqlstate_of('SELECT ready_slot FROM awa.lease_claims') AS read_slot,
       sqlstate_of('SELECT ready_generation FROM awa.lease_claims') AS read_generation;

-- a claim of 3 out of 4: the same jobs, in order, with the entries' fields
SELECT awa.enqueue('rf', 'k', jsonb_build_object('n', i), priority => 2) AS j
  FROM generate_series(1, 4) i ORDER BY 1 LIMIT 1 \gset
SELECT job_id - :j + 1 AS j, queue, kind, args, priority, attempt, max_attempts,
       run_lease > 0 AS has_lease, claimed_at IS NOT NULL AS claimed,
       deadline_at > claimed_at AS has_deadline
  FROM awa.claim('rf', 3) ORDER BY job_id;
-- each receipt holds its entry's fields (by name) but the args (tables/held_args.sql),
-- its own, and nothing of the slot
SELECT c.job_id - :j + 1 AS j,
       (c.lane_id, c.lane_seq, c.txid, c.queue, c.priority, c.kind, c.attempt,
        c.max_attempts, c.created_at, c.group_key)
       IS NOT DISTINCT FROM
       (r.lane_id, r.lane_seq, r.txid, r.queue, r.priority, r.kind, r.attempt,
        r.max_attempts, r.created_at, r.group_key) AND c.args IS NULL AS as_entry,
       (c.claim_slot, c.claim_generation) = (k.slot, k.generation) AS in_cursor,
       c.claim_seq IS NOT NULL AS has_seq, c.win_hi IS NOT NULL AS position,
       to_jsonb(c) ?| ARRAY['ready_slot', 'ready_generation'] AS slot_fields
  FROM awa.lease_claims c JOIN awa.ready_entries r USING (job_id),
       awa.ring_cursor('claim') k
 ORDER BY c.job_id;
-- the lane's position is the last receipt, and the next claim takes the 4th entry
SELECT p.lane_seq = c.lane_seq AND p.txid = c.txid AS position_is_last
  FROM awa_internal.lane_window((SELECT lane_id FROM awa.lease_claims LIMIT 1)) p,
       awa.lease_claims c WHERE c.job_id = :j + 2;
SELECT job_id - :j + 1 AS j, args FROM awa.claim('rf', 3);
SELECT count(*) AS more FROM awa.claim('rf', 3);

-- complete (one, then a batch of two); the readers read as before
SELECT awa.complete(job_id, run_lease) AS completed FROM awa.lease_claims
 WHERE job_id = :j;
SELECT count(*) AS batch_completed
  FROM (SELECT array_agg(job_id ORDER BY job_id) AS ids,
               array_agg(run_lease::bigint ORDER BY job_id) AS leases
          FROM awa.lease_claims WHERE job_id IN (:j + 1, :j + 2)) b,
       awa.complete_batch(b.ids, b.leases);
SELECT j.job_id - :j + 1 AS j, j.queue, j.state, j.attempt, j.args,
       j.attempted_at IS NOT NULL AS attempted, j.finished_at IS NOT NULL AS finished
  FROM generate_series(:j, :j + 3) i, awa.job(i) j ORDER BY 1;
SELECT job_id - :j + 1 AS j, state, attempt FROM awa.jobs('rf') ORDER BY job_id;
SELECT * FROM awa.queue_counts('rf');
SELECT queue, available, running, completed_total, failed_total
  FROM awa.queue_stats WHERE queue = 'rf';
SELECT queue, claims_in_window, completed_in_window
  FROM awa.queue_stats_rows('1 hour') WHERE queue = 'rf';

-- claim prune carries the open receipt (its live columns) and the position: the job
-- still reads running, and completes in the slot it was carried to
SELECT outcome FROM awa.rotate('awa', 'claim');
SELECT outcome FROM awa.prune('awa', 'claim');
SELECT c.job_id - :j + 1 AS j, c.claim_slot, c.win_hi IS NOT NULL AS position,
       to_jsonb(c) ?| ARRAY['ready_slot', 'ready_generation'] AS slot_fields
  FROM awa.lease_claims c ORDER BY c.claim_slot, c.job_id;
SELECT state FROM awa.job(:j + 3);
SELECT awa.complete(job_id, run_lease) AS completed FROM awa.lease_claims
 WHERE job_id = :j + 3 AND claim_slot = 1;
SELECT * FROM awa.queue_counts('rf');

-- a 0.9 catalog updated in place: its receipts (slot fields written) read the same
-- after the update, an open one completes, an entry enqueued under 0.9 is claimed into
-- a 0.10 receipt
SET client_min_messages = warning;
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.9';
RESET client_min_messages;
SELECT awa.enqueue('rf9', 'k', jsonb_build_object('n', i)) AS n
  FROM generate_series(1, 4) i ORDER BY 1 LIMIT 1 \gset
SELECT count(*) AS claimed FROM awa.claim('rf9', 2);
SELECT awa.complete(job_id, run_lease) AS completed FROM awa.lease_claims
 WHERE job_id = :n;
SELECT c.job_id - :n + 1 AS n, c.ready_slot = r.ready_slot
       AND c.ready_generation = r.ready_generation AS slot_fields_09
  FROM awa.lease_claims c JOIN awa.ready_entries r USING (job_id) ORDER BY 1;
SELECT j.job_id - :n + 1 AS n, j.state AS state_09, j.attempt
  FROM generate_series(:n, :n + 3) i, awa.job(i) j ORDER BY 1;
SET client_min_messages = warning;
ALTER EXTENSION awa_bgw UPDATE TO '0.10';
RESET client_min_messages;
SELECT r AS rel, s.* FROM unnest(ARRAY['awa.lease_claims', 'awa.lease_claims_0',
                                       'awa.ready_entries']::regclass[]) r,
       pg_temp.slot_columns(r) s;
SELECT c.job_id - :n + 1 AS n, c.queue, c.args, c.attempt,
       to_jsonb(c) ?| ARRAY['ready_slot', 'ready_generation'] AS slot_fields
  FROM awa.lease_claims c ORDER BY c.job_id;
SELECT j.job_id - :n + 1 AS n, j.state, j.attempt, j.args
  FROM generate_series(:n, :n + 3) i, awa.job(i) j ORDER BY 1;
SELECT awa.complete(job_id, run_lease) AS completed FROM awa.lease_claims
 WHERE job_id = :n + 1;
SELECT job_id - :n + 1 AS n, args FROM awa.claim('rf9', 3) ORDER BY job_id;
SELECT c.job_id - :n + 1 AS n,
       (c.lane_id, c.lane_seq, c.txid) = (r.lane_id, r.lane_seq, r.txid) AND c.args IS NULL
       AS as_entry
  FROM awa.lease_claims c JOIN awa.ready_entries r USING (job_id)
 WHERE c.job_id >= :n + 2 ORDER BY 1;
SELECT count(*) AS completed
  FROM awa.lease_claims c, awa.complete(c.job_id, c.run_lease) x
 WHERE c.job_id >= :n + 2 AND x;
SELECT job_id - :n + 1 AS n, state, attempt FROM awa.jobs('rf9') ORDER BY job_id;
SELECT * FROM awa.queue_counts('rf9');
SELECT queue, running, completed_total FROM awa.queue_stats WHERE queue = 'rf9';
