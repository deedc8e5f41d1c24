-- Running limits per queue (api/queue_limits.sql, src/dataplane/limits.c): set, show
-- and clear; bad input; the manage privilege; a claim takes at most the room the limit
-- leaves, a close (complete, complete_batch, fail, cancel, complete_and_claim) frees
-- its room at commit, a claim rolled back frees its room, a claim at the limit takes
-- nothing; a prepared transaction's claims and closes count from COMMIT PREPARED (its
-- claims hold their room until then, ROLLBACK PREPARED frees it).
\i sql/fresh.inc
SET statement_timeout = '20s';

-- set, show, replace, clear
SELECT awa.set_queue_limits('ql', 3);
SELECT queue, paused, restricted, max_running FROM awa.queue_settings WHERE queue = 'ql';
SELECT queue, max_running, set_by = (SELECT oid FROM pg_roles WHERE rolname = session_user)
       AS set_by_me, set_at IS NOT NULL AS since
  FROM awa_internal.queue_limits;
SELECT awa.set_queue_limits('ql', 5);
SELECT max_running FROM awa.queue_settings WHERE queue = 'ql';
SELECT awa.clear_queue_limits('ql') AS cleared, awa.clear_queue_limits('ql') AS cleared_again;
SELECT count(*) AS limits, (SELECT count(*) FROM awa.queue_settings WHERE queue = 'ql')
       AS settings_rows
  FROM awa_internal.queue_limits;
-- a limit set in a transaction rolled back never was
BEGIN;
SELECT awa.set_queue_limits('ql', 2);
ROLLBACK;
SELECT count(*) AS limits FROM awa_internal.queue_limits;

-- bad input: 22023 / 22004 with a hint, nothing written
\set VERBOSITY default
SELECT awa.set_queue_limits('ql', 0);
SELECT awa.set_queue_limits('ql', 1000001);
SELECT awa.set_queue_limits('ql', NULL);
SELECT awa.set_queue_limits(NULL, 3);
\set VERBOSITY terse
SELECT sqlstate_of($$SELECT awa.set_queue_limits('ql', -1)$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits(repeat('q', 201), 3)$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits('', 3)$$);
SELECT sqlstate_of($$SELECT awa.clear_queue_limits(NULL)$$);
SELECT sqlstate_of($$SELECT awa.clear_queue_limits(repeat('q', 201))$$);
SELECT awa.set_queue_limits('ql', 1000000) AS at_the_bound;
SELECT awa.set_queue_limits('ql', 1) AS at_the_low_bound;
SELECT awa.clear_queue_limits('ql') AS cleared;
SELECT count(*) AS limits FROM awa_internal.queue_limits;

-- a role needs EXECUTE (awa_admin has it), and on a queue with grants the manage
-- privilege: 42501 without, nothing written
CREATE ROLE awa_ql_app;
CREATE ROLE awa_ql_other;
GRANT USAGE ON SCHEMA awa TO awa_ql_app;
SET ROLE awa_ql_app;
SELECT sqlstate_of($$SELECT awa.set_queue_limits('ql', 3)$$);
RESET ROLE;
GRANT awa_admin TO awa_ql_app;
SELECT awa.grant_queue('ql', 'awa_ql_other', '{manage}');
SET ROLE awa_ql_app;
SELECT sqlstate_of($$SELECT awa.set_queue_limits('ql', 3)$$);
SELECT sqlstate_of($$SELECT awa.clear_queue_limits('ql')$$);
RESET ROLE;
SELECT count(*) AS limits FROM awa_internal.queue_limits;
SELECT awa.grant_queue('ql', 'awa_ql_app', '{manage}');
SET ROLE awa_ql_app;
SELECT awa.set_queue_limits('ql', 3) AS manager_set;
SELECT queue, max_running FROM awa.queue_settings WHERE queue = 'ql';
RESET ROLE;
REVOKE awa_admin FROM awa_ql_app;
SELECT awa.revoke_queue('ql', 'awa_ql_app');
SELECT awa.revoke_queue('ql', 'awa_ql_other');
DROP OWNED BY awa_ql_app;
DROP ROLE awa_ql_app, awa_ql_other;

-- claims: max_running 3 (set above); 20 jobs
SELECT count(awa.enqueue('ql', 'job', jsonb_build_object('n', g))) AS enqueued
  FROM generate_series(1, 20) g;
CREATE TABLE held AS SELECT job_id, run_lease FROM awa.claim('ql', 10);
SELECT count(*) AS claimed_of_10_under_3 FROM held;
SELECT count(*) AS claimed_at_limit FROM awa.claim('ql', 10);
SELECT count(*) AS waited_at_limit FROM awa.claim('ql', 10, wait => '100 ms');
SELECT running, pending, ready FROM awa_internal.queue_limit_state('ql');
SELECT available, running FROM awa.queue_counts('ql');

-- a complete frees one place
WITH c AS (DELETE FROM held WHERE job_id = (SELECT min(job_id) FROM held)
           RETURNING job_id, run_lease)
SELECT awa.complete(job_id, run_lease) AS completed FROM c;
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('ql', 10);
SELECT count(*) AS running_held FROM held;
SELECT count(*) AS claimed_at_limit FROM awa.claim('ql', 10);

-- a complete rolled back frees nothing; a claim rolled back takes nothing for good
BEGIN;
SELECT awa.complete(job_id, run_lease) AS completed_in_xact FROM held
 WHERE job_id = (SELECT min(job_id) FROM held);
ROLLBACK;
SELECT count(*) AS claimed_after_rollback FROM awa.claim('ql', 10);
SELECT running, pending FROM awa_internal.queue_limit_state('ql');

-- complete_batch frees two; a claim in a transaction rolled back gives them back
WITH c AS (DELETE FROM held WHERE job_id IN (SELECT job_id FROM held ORDER BY job_id LIMIT 2)
           RETURNING job_id, run_lease)
SELECT count(*) AS batch_completed
  FROM awa.complete_batch((SELECT array_agg(job_id) FROM c), (SELECT array_agg(run_lease) FROM c));
BEGIN;
SELECT count(*) AS claimed_in_xact FROM awa.claim('ql', 10);
SELECT running, pending FROM awa_internal.queue_limit_state('ql');
ROLLBACK;
SELECT running, pending FROM awa_internal.queue_limit_state('ql');
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('ql', 10);
SELECT count(*) AS running_held FROM held;

-- a fail (retried) frees one; a cancel of a running attempt frees one
WITH c AS (DELETE FROM held WHERE job_id = (SELECT min(job_id) FROM held)
           RETURNING job_id, run_lease)
SELECT awa.fail(job_id, run_lease, 'boom') AS failed FROM c;
SELECT running, pending FROM awa_internal.queue_limit_state('ql');
WITH c AS (DELETE FROM held WHERE job_id = (SELECT min(job_id) FROM held)
           RETURNING job_id, run_lease)
SELECT awa.cancel(job_id) AS cancelled FROM c;
SELECT running, pending FROM awa_internal.queue_limit_state('ql');
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('ql', 10);
SELECT count(*) AS running_held FROM held;

-- complete_and_claim at the limit: its own complete gives its claim the room
CREATE TABLE next AS
WITH c AS (DELETE FROM held WHERE job_id = (SELECT min(job_id) FROM held)
           RETURNING job_id, run_lease)
SELECT n.job_id, n.run_lease
  FROM awa.complete_and_claim((SELECT array_agg(job_id) FROM c),
                              (SELECT array_agg(run_lease) FROM c), 'ql', 5) n;
SELECT count(*) AS claimed_by_complete_and_claim FROM next;
INSERT INTO held SELECT * FROM next;
SELECT running, pending FROM awa_internal.queue_limit_state('ql');
SELECT available, running FROM awa.queue_counts('ql');

-- a higher limit gives room at once; a lower one takes nothing back, and claims wait
-- until the running attempts are below it
SELECT awa.set_queue_limits('ql', 4);
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('ql', 10);
SELECT count(*) AS running_held FROM held;
SELECT awa.set_queue_limits('ql', 2);
WITH c AS (DELETE FROM held WHERE job_id = (SELECT min(job_id) FROM held)
           RETURNING job_id, run_lease)
SELECT awa.complete(job_id, run_lease) AS completed FROM c;
SELECT count(*) AS claimed_above_new_limit FROM awa.claim('ql', 10);

-- cleared: claims are unlimited again; set anew on running attempts: counted, not zero
SELECT awa.clear_queue_limits('ql') AS cleared;
SELECT count(*) AS limit_entries FROM awa_internal.queue_limit_state('ql');
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('ql', 2);
SELECT count(*) AS running_held FROM held;
SELECT awa.set_queue_limits('ql', 6);
SELECT running, pending, ready FROM awa_internal.queue_limit_state('ql');
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('ql', 10);
SELECT running, pending, ready FROM awa_internal.queue_limit_state('ql');
SELECT count(*) AS running_held FROM held;
SELECT available, running FROM awa.queue_counts('ql');

-- a prepared transaction keeps what it claimed reserved until COMMIT PREPARED (then it
-- runs) or ROLLBACK PREPARED (then it never ran); a prepared close frees its place only
-- at COMMIT PREPARED
WITH c AS (DELETE FROM held WHERE job_id = (SELECT min(job_id) FROM held)
           RETURNING job_id, run_lease)
SELECT awa.complete(job_id, run_lease) AS completed FROM c;
BEGIN;
SELECT count(*) AS claimed_to_prepare FROM awa.claim('ql', 1);
PREPARE TRANSACTION 'ql_claim';
SELECT running, pending FROM awa_internal.queue_limit_state('ql');
SELECT count(*) AS claimed_beside_prepared FROM awa.claim('ql', 10);
ROLLBACK PREPARED 'ql_claim';
SELECT running, pending FROM awa_internal.queue_limit_state('ql');
BEGIN;
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('ql', 1);
PREPARE TRANSACTION 'ql_claim';
COMMIT PREPARED 'ql_claim';
SELECT running, pending FROM awa_internal.queue_limit_state('ql');
SELECT count(*) AS running_held FROM held;
BEGIN;
SELECT awa.complete(job_id, run_lease) AS completed_to_prepare FROM held
 WHERE job_id = (SELECT min(job_id) FROM held);
PREPARE TRANSACTION 'ql_close';
SELECT count(*) AS claimed_before_commit_prepared FROM awa.claim('ql', 10);
COMMIT PREPARED 'ql_close';
DELETE FROM held WHERE job_id = (SELECT min(job_id) FROM held);
SELECT running, pending FROM awa_internal.queue_limit_state('ql');
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('ql', 10);
SELECT count(*) AS running_held FROM held;
SELECT available, running FROM awa.queue_counts('ql');

-- other queues pay nothing: no entry
SELECT awa.enqueue('free', 'job') > 0 AS enqueued;
SELECT count(*) AS claimed_free FROM awa.claim('free', 10);
SELECT count(*) AS free_entries FROM awa_internal.queue_limit_state('free');
-- limits survive pg_dump (their table is dumped)
SELECT 'awa_internal.queue_limits'::regclass = ANY (e.extconfig) AS dumped
  FROM pg_extension e WHERE e.extname = 'awa_bgw';
DROP TABLE held, next;
