-- Groups (issue 34; docs/proposals/flow_control.md §5, §6): what is built so far, the
-- key's columns (tables/groups.sql). A ready entry and a receipt carry group_key as
-- NOT NULL text, '' for a job of no group; a scheduled or failed job keeps it in a
-- nullable column, NULL for none. Every writer names the key: the column has no
-- default, so one that forgot it would fail here with 23502.
\i sql/fresh.inc
SET statement_timeout = '60s';

-- the columns, last in each table, as the upgrade from 0.9 adds them (t/010 compares)
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type,
       a.attnotnull AS not_null, a.atthasdef AS has_default,
       a.attnum = (SELECT max(b.attnum) FROM pg_attribute b
                    WHERE b.attrelid = c.oid AND NOT b.attisdropped) AS last
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
 WHERE c.relnamespace = 'awa'::regnamespace AND a.attname = 'group_key'
   AND c.relname IN ('ready_entries', 'lease_claims', 'deferred_jobs', 'failed_jobs',
                     'ready_entries_0', 'lease_claims_0')
 ORDER BY 1;

-- an enqueue, one job and a batch: each entry carries '' (one byte of the row)
SELECT awa.enqueue('qg', 'k', '{"n": 1}') > 0 AS enqueued;
SELECT count(*) AS enqueued FROM awa.enqueue_batch('qg', '[{"kind": "k"}, {"kind": "k"}]');
SELECT count(*) AS entries, count(*) FILTER (WHERE group_key = '') AS no_group,
       max(pg_column_size(group_key)) AS key_bytes
  FROM awa.ready_entries WHERE queue = 'qg';

-- a claim copies it into each receipt, as every other column of the entry
SELECT count(*) AS claimed FROM awa.claim('qg', 3);
SELECT count(*) AS receipts, count(*) FILTER (WHERE group_key = '') AS no_group
  FROM awa.lease_claims WHERE queue = 'qg';

-- a job of no group that is scheduled, and one that fails for good: NULL
SELECT awa.enqueue('qg_later', 'k', run_at => now() + interval '1 day') > 0 AS scheduled;
SELECT count(*) AS deferred, count(group_key) AS with_key
  FROM awa.deferred_jobs WHERE queue = 'qg_later';
SELECT awa.enqueue('qg_fail', 'k', max_attempts => 1) > 0 AS enqueued;
SELECT awa.fail(c.job_id, c.run_lease, 'boom') AS failed FROM awa.claim('qg_fail') c;
SELECT count(*) AS failed, count(group_key) AS with_key
  FROM awa.failed_jobs WHERE queue = 'qg_fail';

-- a writer that does not name the key is refused, nothing written
SELECT sqlstate_of($$INSERT INTO awa.ready_entries
    (ready_slot, lane_id, lane_seq, job_id, queue, priority, kind, args, attempt,
     max_attempts, created_at, txid)
    SELECT ready_slot, lane_id, lane_seq, job_id + 1000, queue, priority, kind, args,
           attempt, max_attempts, created_at, txid
      FROM awa.ready_entries WHERE queue = 'qg' LIMIT 1$$) ~ '^23502: null value in column "group_key"' AS refused;
SELECT sqlstate_of($$INSERT INTO awa.lease_claims
    (claim_slot, claim_generation, job_id, run_lease, lane_id, lane_seq, queue, priority,
     kind, args, max_attempts, created_at, attempt)
    SELECT claim_slot, claim_generation, job_id + 1000, run_lease, lane_id, lane_seq,
           queue, priority, kind, args, max_attempts, created_at, attempt
      FROM awa.lease_claims WHERE queue = 'qg' LIMIT 1$$) ~ '^23502: null value in column "group_key"' AS refused;
SELECT count(*) AS entries FROM awa.ready_entries WHERE queue = 'qg';
SELECT count(*) AS receipts FROM awa.lease_claims WHERE queue = 'qg';
