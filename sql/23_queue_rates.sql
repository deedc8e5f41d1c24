-- Rate limits per queue (api/queue_limits.sql, src/dataplane/limits.c and bucket.c):
-- set, show, replace and clear; bad input (22023, 22004 with a hint, nothing written);
-- the manage privilege (42501); the token bucket: a claim takes at most its whole
-- tokens, a commit spends them, a rollback (of the transaction or of a savepoint) gives
-- them back, a prepared transaction's stay spent; a rate alone or beside max_running;
-- complete_and_claim obeys it; a changed rate keeps the whole tokens, at most the new
-- burst; a waiting claim sleeps until the next token is due. Most queues have a rate of
-- 1 per hour: no whole token accrues while the file runs, so every count is exact
-- whatever the machine's speed; a refill is checked with a rate of 1 per millisecond,
-- polled with a deadline.
\i sql/fresh.inc
SET statement_timeout = '60s';

-- set, show, replace, clear
SELECT awa.set_queue_limits('qr', rate => 1, rate_per => '1 hour', burst => 3);
SELECT queue, paused, max_running, rate, rate_per, burst
  FROM awa.queue_settings WHERE queue = 'qr';
SELECT queue, max_running, rate, rate_per, burst FROM awa_internal.queue_limits;
-- positionally: max_running 4, 10 per second, the burst by default the rate
SELECT awa.set_queue_limits('qr', 4, 10);
SELECT max_running, rate, rate_per, burst FROM awa.queue_settings WHERE queue = 'qr';
-- a call replaces every limit: the rate is gone
SELECT awa.set_queue_limits('qr', 4);
SELECT max_running, rate, rate_per, burst FROM awa.queue_settings WHERE queue = 'qr';
-- a rate alone
SELECT awa.set_queue_limits('qr', max_running => NULL, rate => 7, rate_per => '1 minute');
SELECT max_running, rate, rate_per, burst FROM awa.queue_settings WHERE queue = 'qr';
SELECT awa.clear_queue_limits('qr') AS cleared, awa.clear_queue_limits('qr') AS cleared_again;
SELECT count(*) AS limits FROM awa_internal.queue_limits;

-- bad input: 22023 / 22004 with a hint, nothing written
\set VERBOSITY default
SELECT awa.set_queue_limits('qr', rate => 0);
SELECT awa.set_queue_limits('qr', rate => 5, rate_per => '0.5 ms');
SELECT awa.set_queue_limits('qr', rate => 5, burst => 0);
SELECT awa.set_queue_limits('qr', max_running => 2, burst => 5);
SELECT awa.set_queue_limits('qr', rate => 5, rate_per => NULL);
SELECT awa.set_queue_limits('qr');
\set VERBOSITY terse
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => -1)$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => 1000001)$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => 5, burst => 1000001)$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => 5, burst => -3)$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => 5, rate_per => '0')$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => 5, rate_per => '-1 s')$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => 5, rate_per => '1 day 1 microsecond')$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => 5, rate_per => '1 mon')$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', 0, rate => 5)$$);
SELECT sqlstate_of($$SELECT awa.set_queue_limits(NULL, rate => 5)$$);
SELECT count(*) AS limits FROM awa_internal.queue_limits;
-- at the bounds
SELECT awa.set_queue_limits('qr', rate => 1000000, rate_per => '1 ms', burst => 1000000)
       AS fastest;
SELECT awa.set_queue_limits('qr', rate => 1, rate_per => '1 day', burst => 1) AS slowest;
SELECT rate, rate_per, burst FROM awa.queue_settings WHERE queue = 'qr';
SELECT awa.clear_queue_limits('qr') AS cleared;

-- a role needs EXECUTE (awa_admin has it), and on a queue with grants the manage
-- privilege: 42501 without, nothing written
CREATE ROLE awa_qr_app;
CREATE ROLE awa_qr_other;
GRANT USAGE ON SCHEMA awa TO awa_qr_app;
SET ROLE awa_qr_app;
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => 5)$$);
RESET ROLE;
GRANT awa_admin TO awa_qr_app;
SELECT awa.grant_queue('qr', 'awa_qr_other', '{manage}');
SET ROLE awa_qr_app;
SELECT sqlstate_of($$SELECT awa.set_queue_limits('qr', rate => 5)$$);
RESET ROLE;
SELECT count(*) AS limits FROM awa_internal.queue_limits;
SELECT awa.grant_queue('qr', 'awa_qr_app', '{manage}');
SET ROLE awa_qr_app;
SELECT awa.set_queue_limits('qr', rate => 5) AS manager_set;
SELECT queue, rate, rate_per, burst FROM awa.queue_settings WHERE queue = 'qr';
SELECT awa.clear_queue_limits('qr') AS manager_cleared;
RESET ROLE;
REVOKE awa_admin FROM awa_qr_app;
SELECT awa.revoke_queue('qr', 'awa_qr_app');
SELECT awa.revoke_queue('qr', 'awa_qr_other');
DROP OWNED BY awa_qr_app;
DROP ROLE awa_qr_app, awa_qr_other;

-- claims: 1 per hour, burst 3, a rate set on a queue that had none starts full; 30 jobs
SELECT count(awa.enqueue('qr', 'job', jsonb_build_object('n', g))) AS enqueued
  FROM generate_series(1, 30) g;
SELECT awa.set_queue_limits('qr', rate => 1, rate_per => '1 hour', burst => 3);
SELECT running, pending, ready, tokens FROM awa_internal.queue_limit_state('qr');
CREATE TABLE held AS SELECT job_id, run_lease FROM awa.claim('qr', 10);
SELECT count(*) AS claimed_of_10_burst_3 FROM held;
SELECT count(*) AS claimed_without_tokens FROM awa.claim('qr', 10);
-- the next token is due in an hour: the wait ends first, with nothing
SELECT count(*) AS waited_without_tokens FROM awa.claim('qr', 10, wait => '200 ms');
SELECT running, pending, ready, tokens FROM awa_internal.queue_limit_state('qr');
SELECT available, running FROM awa.queue_counts('qr');

-- a rollback gives the tokens back; a savepoint rolled back gives its own back; a
-- savepoint released passes them to its transaction, whose commit spends them
SELECT awa.clear_queue_limits('qr') AS cleared;
SELECT awa.set_queue_limits('qr', rate => 1, rate_per => '1 hour', burst => 3);
BEGIN;
SELECT count(*) AS claimed_in_xact FROM awa.claim('qr', 2);
SELECT tokens FROM awa_internal.queue_limit_state('qr');
ROLLBACK;
SELECT tokens AS after_rollback FROM awa_internal.queue_limit_state('qr');
BEGIN;
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('qr', 1);
SAVEPOINT s;
SELECT count(*) AS claimed_in_savepoint FROM awa.claim('qr', 5);
ROLLBACK TO SAVEPOINT s;
SELECT tokens AS after_savepoint_rollback FROM awa_internal.queue_limit_state('qr');
SAVEPOINT s2;
INSERT INTO held SELECT job_id, run_lease FROM awa.claim('qr', 1);
RELEASE SAVEPOINT s2;
COMMIT;
SELECT tokens AS after_commit FROM awa_internal.queue_limit_state('qr');
-- an error after the claim rolls it back: its token comes back
BEGIN;
SELECT count(*) AS claimed_before_error FROM awa.claim('qr', 1);
SELECT 1 / 0;
ROLLBACK;
SELECT tokens AS after_error FROM awa_internal.queue_limit_state('qr');
-- a prepared transaction's tokens stay spent, even when it is rolled back
BEGIN;
SELECT count(*) AS claimed_to_prepare FROM awa.claim('qr', 1);
PREPARE TRANSACTION 'qr_claim';
ROLLBACK PREPARED 'qr_claim';
SELECT tokens AS after_rollback_prepared FROM awa_internal.queue_limit_state('qr');
SELECT count(*) AS claimed_without_tokens FROM awa.claim('qr', 10);
SELECT count(*) AS running_held FROM held;
SELECT available, running FROM awa.queue_counts('qr');

-- a changed rate keeps the whole tokens, at most its new burst; it does not refill
SELECT count(awa.enqueue('qc', 'job')) AS enqueued FROM generate_series(1, 10) g;
SELECT awa.set_queue_limits('qc', rate => 1, rate_per => '1 hour', burst => 5);
SELECT count(*) AS claimed_of_1 FROM awa.claim('qc', 1);
SELECT awa.set_queue_limits('qc', rate => 2, rate_per => '1 hour', burst => 2);
SELECT count(*) AS claimed_under_burst_2 FROM awa.claim('qc', 10);
SELECT awa.set_queue_limits('qc', rate => 1, rate_per => '1 hour', burst => 10);
SELECT count(*) AS claimed_after_raise FROM awa.claim('qc', 10);
SELECT tokens FROM awa_internal.queue_limit_state('qc');

-- a rate beside max_running: a claim takes at most the room and at most the tokens,
-- and spends tokens only for what it took; complete_and_claim and fail_and_claim obey
-- both
SELECT count(awa.enqueue('qm', 'job')) AS enqueued FROM generate_series(1, 10) g;
SELECT awa.set_queue_limits('qm', 2, rate => 1, rate_per => '1 hour', burst => 5);
CREATE TABLE held_m AS SELECT job_id, run_lease FROM awa.claim('qm', 10);
SELECT count(*) AS claimed_under_2_running FROM held_m;
SELECT running, pending, ready, tokens FROM awa_internal.queue_limit_state('qm');
SELECT count(*) AS claimed_at_running_limit FROM awa.claim('qm', 10);
SELECT tokens AS tokens_kept FROM awa_internal.queue_limit_state('qm');
-- complete_and_claim: its own complete gives its claim the room, each claim takes a
-- token: the bucket's 3 tokens last three rounds, the fourth takes nothing
CREATE FUNCTION cc_round() RETURNS bigint LANGUAGE sql AS $$
    WITH c AS (DELETE FROM held_m WHERE job_id = (SELECT min(job_id) FROM held_m)
               RETURNING job_id, run_lease),
         n AS (SELECT n.job_id, n.run_lease
                 FROM awa.complete_and_claim((SELECT array_agg(job_id) FROM c),
                                             (SELECT array_agg(run_lease) FROM c), 'qm', 5) n),
         i AS (INSERT INTO held_m SELECT * FROM n RETURNING 1)
    SELECT count(*) FROM i
$$;
SELECT cc_round() AS round_1;
SELECT cc_round() AS round_2;
SELECT cc_round() AS round_3;
SELECT tokens FROM awa_internal.queue_limit_state('qm');
SELECT cc_round() AS round_4_without_tokens;
-- fail_and_claim too: its fail gives the room, the bucket gives no token
SELECT count(*) AS fail_and_claim_without_tokens
  FROM held_m h, awa.fail_and_claim(h.job_id, h.run_lease, 'boom', NULL, 'qm', 5) n;
DELETE FROM held_m;
SELECT running, pending, tokens FROM awa_internal.queue_limit_state('qm');
SELECT available, scheduled, running FROM awa.queue_counts('qm');
SELECT awa.clear_queue_limits('qm') AS cleared;
SELECT count(*) AS limit_entries FROM awa_internal.queue_limit_state('qm');
SELECT count(*) > 0 AS claimed_unlimited FROM awa.claim('qm', 10);

-- a refill: 1 per millisecond, burst 1. One claim of 10 takes at most the burst; then
-- claims polled every 10 ms take 5 more within the deadline
SELECT count(awa.enqueue('qf', 'job')) AS enqueued FROM generate_series(1, 20) g;
SELECT awa.set_queue_limits('qf', rate => 1, rate_per => '1 ms', burst => 1);
SELECT count(*) <= 1 AS at_most_the_burst FROM awa.claim('qf', 10);
DO $$
DECLARE
    v_n int := 0;
    v_deadline timestamptz := clock_timestamp() + interval '30 s';
BEGIN
    WHILE v_n < 5 AND clock_timestamp() < v_deadline LOOP
        PERFORM pg_sleep(0.01);
        v_n := v_n + (SELECT count(*) FROM awa.claim('qf', 1));
    END LOOP;
    RAISE NOTICE 'refilled: %', v_n >= 5;
END
$$;

-- a waiting claim that found no token sleeps until the next is due (1 per 500 ms):
-- nothing else wakes it (no worker runs, nothing is enqueued), so it takes the job only
-- if its timer did, long before its 20 s end
SELECT count(awa.enqueue('qw', 'job')) AS enqueued FROM generate_series(1, 5) g;
SELECT awa.set_queue_limits('qw', rate => 1, rate_per => '500 ms', burst => 1);
SELECT count(*) AS claimed_the_burst FROM awa.claim('qw', 1);
SELECT count(*) AS woken_by_the_next_token FROM awa.claim('qw', 1, wait => '20 s');

-- other queues pay nothing: no entry
SELECT awa.enqueue('free', 'job') > 0 AS enqueued;
SELECT count(*) AS claimed_free FROM awa.claim('free', 10);
SELECT count(*) AS free_entries FROM awa_internal.queue_limit_state('free');
DROP TABLE held, held_m;
DROP FUNCTION cc_round();
