-- Per-queue grants (docs/operations.md "Roles and the trust model"): two tenants, a
-- queue each. Once a queue has a grant, a role without the privilege is refused with
-- 42501 and nothing is written; a queue without grants stays open to every API grantee.
\i sql/fresh.inc
SET statement_timeout = '20s';   -- a refused waiting claim must not wait

CREATE ROLE awa_qa_a;
CREATE ROLE awa_qa_b;
CREATE ROLE awa_qa_a_worker IN ROLE awa_qa_a;             -- inherits awa_qa_a
CREATE ROLE awa_qa_a_noinherit NOINHERIT IN ROLE awa_qa_a; -- member, does not inherit
GRANT USAGE ON SCHEMA awa TO awa_qa_a, awa_qa_b, awa_qa_a_worker, awa_qa_a_noinherit;
GRANT EXECUTE ON FUNCTION awa.enqueue(text, text, jsonb, int, timestamptz, int, text, interval, text[]),
    awa.enqueue_batch(text, jsonb), awa.claim(text, int, interval, interval),
    awa.complete(bigint, bigint), awa.complete_batch(bigint[], bigint[]),
    awa.complete_and_claim(bigint[], bigint[], text, int, interval),
    awa.fail(bigint, bigint, text, interval), awa.heartbeat(bigint, bigint, jsonb),
    awa.fail_and_claim(bigint, bigint, text, interval, text, int, interval),
    awa.cancel(bigint), awa.queue_counts(text), awa.register_queue(text, int),
    awa.pause_queue(text), awa.resume_queue(text)
    TO awa_qa_a, awa_qa_b, awa_qa_a_worker, awa_qa_a_noinherit;
-- how many rows the hot paths have written, per queue (read as superuser)
CREATE FUNCTION pg_temp.written(p_queue text) RETURNS text LANGUAGE sql AS $$
    SELECT format('ready %s claims %s closures %s done %s deferred %s',
        (SELECT count(*) FROM awa.ready_entries r WHERE r.queue = p_queue),
        (SELECT count(*) FROM awa.lease_claims c WHERE c.queue = p_queue),
        (SELECT count(*) FROM awa.lease_claim_closures x
          WHERE x.job_id IN (SELECT c.job_id FROM awa.lease_claims c WHERE c.queue = p_queue)),
        (SELECT count(*) FROM awa.done_entries d WHERE d.queue = p_queue),
        (SELECT count(*) FROM awa.deferred_jobs d WHERE d.queue = p_queue)) $$;

-- 1. No grants yet: every API grantee may use every queue (the behaviour before grants)
SET ROLE awa_qa_b;
SELECT awa.enqueue('qa_a', 'from_b') > 0 AS b_enqueued_into_a;
SELECT kind FROM awa.claim('qa_a');
RESET ROLE;
SELECT awa.queue_allowed('qa_a', 'claim') AS open;

-- 2. Grants: each tenant its queue; only superusers, the extension's owner and the
-- grantees may use a queue that has one
SELECT awa.grant_queue('qa_a', 'awa_qa_a', '{enqueue,claim,manage}');
SELECT awa.grant_queue('qa_b', 'awa_qa_b');
SELECT queue, grantee, privileges, granted_by FROM awa.queue_grants ORDER BY queue;
SELECT awa.enqueue('qa_a', 'job_of_a') AS job_a \gset
SELECT awa.enqueue('qa_a', 'later_of_a', run_at => now() + interval '1 hour') AS later_a \gset
SELECT pg_temp.written('qa_a');
SELECT last_value AS seq_before FROM awa.job_id_seq \gset

-- 3. Tenant B and queue A: every call refused with 42501, nothing written
SET ROLE awa_qa_b;
SELECT sqlstate_of($$SELECT awa.enqueue('qa_a', 'intruder')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('qa_a', '[{"kind": "intruder"}]')$$);
SELECT sqlstate_of($$SELECT awa.register_queue('qa_a', 3::smallint)$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('qa_a')$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('qa_a', 5)$$);
-- a waiting claim is refused at once (it would fail with 57014 had it waited 20 s)
SELECT sqlstate_of($$SELECT * FROM awa.claim('qa_a', 1, wait => '1 hour')$$);
SELECT sqlstate_of($$SELECT * FROM awa.queue_counts('qa_a')$$);
SELECT sqlstate_of(format('SELECT awa.cancel(%s)', :job_a));
SELECT sqlstate_of(format('SELECT awa.cancel(%s)', :later_a));
SELECT sqlstate_of($$SELECT awa.pause_queue('qa_a')$$);
-- the message names the queue and the privilege; the hint says who can grant it
\set VERBOSITY default
SELECT awa.enqueue('qa_a', 'intruder');
SELECT * FROM awa.claim('qa_a');
\set VERBOSITY terse
RESET ROLE;
SELECT pg_temp.written('qa_a');
SELECT last_value = :seq_before AS no_job_id_drawn FROM awa.job_id_seq;
SELECT count(*) AS lanes_of_priority_3 FROM awa.queue_lanes WHERE queue = 'qa_a' AND priority = 3;
SELECT count(*) AS paused FROM awa.queue_pauses;

-- 4. Tenant A claims its job; tenant B cannot use the receipt
SET ROLE awa_qa_a;
SELECT job_id = :job_a AS own_job, run_lease FROM awa.claim('qa_a') \gset
SELECT :'own_job' AS own_job;
SET ROLE awa_qa_b;
SELECT sqlstate_of(format('SELECT awa.heartbeat(%s, %s)', :job_a, :run_lease));
SELECT sqlstate_of(format('SELECT awa.fail(%s, %s, %L)', :job_a, :run_lease, 'boom'));
SELECT sqlstate_of(format('SELECT awa.complete(%s, %s)', :job_a, :run_lease));
SELECT sqlstate_of(format('SELECT * FROM awa.complete_batch(ARRAY[%s], ARRAY[%s])',
                          :job_a, :run_lease));
-- nor complete it on the way to a claim of a queue it may use, nor claim from queue A
SELECT sqlstate_of(format('SELECT * FROM awa.complete_and_claim(ARRAY[%s], ARRAY[%s], %L)',
                          :job_a, :run_lease, 'qa_open'));
SELECT sqlstate_of($$SELECT * FROM awa.complete_and_claim(NULL, NULL, 'qa_a')$$);
SELECT sqlstate_of(format('SELECT * FROM awa.fail_and_claim(%s, %s, %L, NULL, %L)',
                          :job_a, :run_lease, 'boom', 'qa_open'));
SELECT sqlstate_of($$SELECT * FROM awa.fail_and_claim(NULL, NULL, NULL, NULL, 'qa_a')$$);
SELECT sqlstate_of(format('SELECT awa.cancel(%s)', :job_a));
-- a wrong receipt is no receipt: false, as before
SELECT awa.complete(:job_a, 12345) AS wrong_receipt;
RESET ROLE;
SELECT pg_temp.written('qa_a');
SELECT count(*) AS heartbeats FROM awa.leases WHERE job_id = :job_a;
SET ROLE awa_qa_a;
SELECT awa.heartbeat(:job_a, :run_lease) AS a_beat;
SELECT * FROM awa.queue_counts('qa_a');
SELECT awa.complete(:job_a, :run_lease) AS a_completed;
SELECT awa.cancel(:later_a) AS a_cancelled;
-- tenant A in its turn cannot use queue B
SELECT sqlstate_of($$SELECT awa.enqueue('qa_b', 'intruder')$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('qa_b')$$);
SELECT sqlstate_of($$SELECT * FROM awa.queue_counts('qa_b')$$);
RESET ROLE;
SELECT pg_temp.written('qa_a');

-- 5. A queue without grants stays open to both
SET ROLE awa_qa_b;
SELECT awa.enqueue('qa_open', 'shared') AS job_open \gset
SELECT job_id = :job_open AS got, run_lease AS lease_open FROM awa.claim('qa_open') \gset
SELECT :'got' AS got;
SET ROLE awa_qa_a;
SELECT sqlstate_of(format('SELECT awa.complete(%s, %s)', :job_open, :lease_open));
RESET ROLE;

-- 6. Membership: a role with the grantee's privileges (INHERIT) may; a NOINHERIT member
-- may only after SET ROLE to the grantee
SET ROLE awa_qa_a_worker;
SELECT awa.enqueue('qa_a', 'by_worker') > 0 AS worker_enqueued;
SELECT kind FROM awa.claim('qa_a');
SET ROLE awa_qa_a_noinherit;
SELECT sqlstate_of($$SELECT awa.enqueue('qa_a', 'by_noinherit')$$);
SET ROLE awa_qa_a;
SELECT awa.enqueue('qa_a', 'by_noinherit_as_a') > 0 AS enqueued_after_set_role;
RESET ROLE;

-- 7. The extension's owner and superusers are not restricted
SELECT awa.enqueue('qa_b', 'by_superuser') > 0 AS superuser_enqueued;
SELECT kind FROM awa.claim('qa_b');

-- 8. Revoke takes effect at once; revoking the last grant opens the queue again
SELECT awa.revoke_queue('qa_a', 'awa_qa_a', '{enqueue}') AS revoked;
SELECT awa.revoke_queue('qa_a', 'awa_qa_a', '{enqueue}') AS revoked_again;
SET ROLE awa_qa_a;
SELECT sqlstate_of($$SELECT awa.enqueue('qa_a', 'no_longer')$$);
SELECT kind FROM awa.claim('qa_a');
RESET ROLE;
SELECT queue, grantee, privileges FROM awa.queue_grants ORDER BY queue;
SELECT awa.revoke_queue('qa_a', 'awa_qa_a');
SET ROLE awa_qa_b;
SELECT awa.enqueue('qa_a', 'open_again') > 0 AS b_enqueued_into_a_again;
RESET ROLE;
SELECT queue, paused, restricted FROM awa.queue_settings ORDER BY queue;

-- 9. Bad input: a clear error (SQLSTATE, hint), nothing written
\set VERBOSITY default
SELECT awa.grant_queue('qa_a', 'awa_qa_a', '{enqueue,bogus}');
SELECT awa.grant_queue('qa_a', 'awa_qa_a', '{}');
SELECT awa.grant_queue('qa_a', 'awa_qa_a', NULL);
SELECT awa.grant_queue(NULL, 'awa_qa_a');
SELECT awa.grant_queue(repeat('q', 201), 'awa_qa_a');
SELECT awa.grant_queue('qa_a', NULL);
SELECT awa.grant_queue('qa_a', 'no_such_role_anywhere');
SELECT awa.revoke_queue('qa_a', 'awa_qa_a', '{manage,nope}');
SELECT awa.queue_allowed('qa_a', 'everything');
SELECT awa.queue_allowed(repeat('q', 1000), 'claim');
\set VERBOSITY terse
SELECT count(*) AS grants FROM awa.queue_privileges;

-- 10. Who may grant: not an API grantee (EXECUTE stays with the extension's owner)
SET ROLE awa_qa_b;
SELECT sqlstate_of($$SELECT awa.grant_queue('qa_a', 'awa_qa_b', '{claim}')$$);
SELECT sqlstate_of($$SELECT awa.revoke_queue('qa_b', 'awa_qa_b')$$);
SELECT sqlstate_of($$SELECT * FROM awa.queue_grants$$);
SELECT sqlstate_of($$INSERT INTO awa.queue_privileges VALUES ('qa_a', 1, 7, 1)$$);
RESET ROLE;

-- 11. terminal_jobs shows a reader only the queues it may manage
SELECT awa.grant_queue('qa_a', 'awa_qa_a', '{manage}');
GRANT SELECT ON awa.terminal_jobs TO awa_qa_b;
SELECT DISTINCT queue FROM awa.terminal_jobs ORDER BY 1;
SET ROLE awa_qa_b;
SELECT DISTINCT queue FROM awa.terminal_jobs ORDER BY 1;
RESET ROLE;

-- 12. A grant in one transaction is seen by this backend's cached check once it commits
-- (and at once inside it); a rolled back one never
BEGIN;
SELECT awa.grant_queue('qa_open', 'awa_qa_a', '{claim}');
SET LOCAL ROLE awa_qa_b;
SELECT sqlstate_of($$SELECT awa.enqueue('qa_open', 'x')$$);
ROLLBACK;
SET ROLE awa_qa_b;
SELECT awa.enqueue('qa_open', 'after_rollback') > 0 AS still_open;
RESET ROLE;

-- a grant to a role that is then dropped: listed by OID, removed on request
CREATE ROLE awa_qa_gone;
SELECT awa.grant_queue('qa_gone', 'awa_qa_gone');
DROP ROLE awa_qa_gone;
SELECT count(*) AS dangling FROM awa.queue_grants WHERE queue = 'qa_gone';
SELECT awa.forget_dropped_queue_grantees() AS forgotten;

-- 13. Job lookup follows the grants: a restricted queue's jobs are seen by the roles that
-- hold a privilege on it (a producer follows what it enqueued), not by another tenant;
-- an open queue's by every caller
GRANT EXECUTE ON FUNCTION awa.job(bigint) TO awa_qa_a, awa_qa_b;
SELECT awa.grant_queue('qa_look', 'awa_qa_a', '{enqueue}');
SET ROLE awa_qa_a;
SELECT awa.enqueue('qa_look', 'k') AS look_id \gset
SELECT state FROM awa.job(:look_id);
SET ROLE awa_qa_b;
SELECT count(*) AS other_tenant_sees FROM awa.job(:look_id);
SELECT awa.enqueue('qa_look_open', 'k') AS open_id \gset
SET ROLE awa_qa_a;
SELECT state AS open_queue_seen FROM awa.job(:open_id);
RESET ROLE;

DROP OWNED BY awa_qa_a, awa_qa_b, awa_qa_a_worker, awa_qa_a_noinherit;
DROP ROLE awa_qa_a_worker, awa_qa_a_noinherit, awa_qa_a, awa_qa_b;
