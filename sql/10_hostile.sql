-- Hostile input and hostile roles (docs/storage.md A.2, A.7, A.8): the payload caps; a
-- forged lane memo; a role with only CONNECT holding every advisory key it can
-- compute while the API and maintenance go on; the private locks out of a tenant's
-- reach; a foreign holder of the leader key named.
\i sql/fresh.inc
CREATE EXTENSION dblink;
SET statement_timeout = '20s';   -- a wait on a held lock fails the test, never hangs it
-- a second connection to this database as another role
CREATE FUNCTION pg_temp.connect_as(p_conn text, p_role text) RETURNS text
LANGUAGE sql AS $$
    SELECT dblink_connect(p_conn,
        format('host=%s port=%s dbname=%s user=%s',
               split_part(current_setting('unix_socket_directories'), ',', 1),
               current_setting('port'), current_database(), p_role)) $$;

CREATE ROLE awa_test_tenant LOGIN;
GRANT USAGE ON SCHEMA awa TO awa_test_tenant;
GRANT EXECUTE ON FUNCTION awa.enqueue(text, text, jsonb, int, timestamptz, int, text, interval, text[]),
    awa.claim(text, int, interval, interval), awa.complete(bigint, bigint),
    awa.heartbeat(bigint, bigint, jsonb), awa.fail(bigint, bigint, text, interval)
    TO awa_test_tenant;

-- 1. Payload caps: args, heartbeat progress, error text; 54000, nothing written.
SHOW awa_bgw.max_payload_size;
SET awa_bgw.max_payload_size = '1kB';
SELECT sqlstate_of($$SELECT awa.enqueue('caps', 'big', jsonb_build_object('x', repeat('a', 2000)))$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('caps', jsonb_build_array(
    jsonb_build_object('kind', 'fits'),
    jsonb_build_object('kind', 'big', 'args', jsonb_build_object('x', repeat('a', 2000)))))$$);
SELECT * FROM awa.queue_counts('caps');
SELECT awa.enqueue('caps', 'fits', jsonb_build_object('x', repeat('a', 900))) AS job_id \gset
SELECT run_lease FROM awa.claim('caps') \gset
SELECT sqlstate_of(format('SELECT awa.heartbeat(%s, %s, %L)', :job_id, :run_lease,
                          jsonb_build_object('p', repeat('b', 2000))));
SELECT sqlstate_of(format('SELECT awa.fail(%s, %s, %L)', :job_id, :run_lease,
                          repeat('e', 2000)));
SELECT * FROM awa.queue_counts('caps');      -- still running: nothing changed
SELECT awa.heartbeat(:job_id, :run_lease, '{"p": 1}') AS beat,
       awa.fail(:job_id, :run_lease, repeat('e', 900)) AS failed;
RESET awa_bgw.max_payload_size;
SELECT sqlstate_of($$SELECT awa.enqueue('caps', 'big',
                                        jsonb_build_object('x', repeat('a', 2 * 1024 * 1024)))$$);
SELECT count(*) AS deferred_retry FROM awa.deferred_jobs WHERE queue = 'caps';
-- a tenant cannot raise the cap for itself
SET ROLE awa_test_tenant;
SELECT sqlstate_of($$SET awa_bgw.max_payload_size = '1GB'$$);
RESET ROLE;

-- 2. On 0.7, whose enqueue holds a lane lock to commit: a forged lane memo. 0.7 kept
-- the lane a transaction held in a setting named awa.enqueue_lane_<hash>; pointing it
-- at another queue's lane must change nothing (the lane held is asked of the lock
-- manager now).
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.7';
SELECT awa.register_queue('victim'), awa.register_queue('attacker');
SELECT set_config('awa.enqueue_lane_' || abs(hashtextextended('attacker:0', 0)),
                  min(lane_id)::text, false) <> '' AS forged
  FROM awa.queue_lanes WHERE queue = 'victim';
BEGIN;
SELECT awa.enqueue('attacker', 'forged') > 0 AS enqueued;
SELECT l.queue AS lane_of FROM awa.ready_entries r JOIN awa.queue_lanes l USING (lane_id)
 WHERE r.kind = 'forged';
COMMIT;
SELECT job_id IS NOT NULL AS claimed_from_attacker FROM awa.claim('attacker');
SELECT count(*) AS victim_claims FROM awa.claim('victim');
-- an open transaction that enqueued holds its lane: the next enqueue of the same
-- transaction reuses it, a subtransaction that took another lane and rolled back does
-- not leave it "held"
BEGIN;
SELECT awa.enqueue('attacker', 'one') > 0 AS one;
SAVEPOINT s;
SELECT awa.enqueue('victim', 'two') > 0 AS two;
ROLLBACK TO SAVEPOINT s;
SELECT awa.enqueue('attacker', 'three') > 0 AS three;
SELECT count(DISTINCT lane_id) AS lanes_used FROM awa.ready_entries
 WHERE kind IN ('one', 'three');
SELECT count(*) AS held_lane_locks FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'userlock' AND granted;
COMMIT;
-- the stall of the issue: a role with only CONNECT holds every enqueue key of the first
-- 64 lanes (and the registry key) while a deferred job is due; promotion and enqueue
-- (into a known and a new queue) go on, none waits
SELECT awa.enqueue('attacker', 'due', run_at => now() + interval '1 day') AS j_due \gset
UPDATE awa.deferred_jobs SET run_at = now() - interval '1 second' WHERE job_id = :j_due;
CREATE ROLE awa_outsider07 LOGIN;
SELECT pg_temp.connect_as('outsider07', 'awa_outsider07');
SELECT * FROM dblink('outsider07', $q$
    SELECT count(pg_advisory_lock(hashtextextended(n, 0)))
      FROM (SELECT 'awa.enqueue:' || i FROM generate_series(1, 64) i
            UNION ALL SELECT 'awa.lane_registry') k(n) $q$) AS t(held bigint);
SELECT promoted FROM awa.promote_deferred('awa');
SELECT awa.enqueue('attacker', 'more') > 0 AS known_queue,
       awa.enqueue('brand_new', 'first') > 0 AS new_queue;
SELECT dblink_disconnect('outsider07');
DROP ROLE awa_outsider07;
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw;

-- 3. A role with only CONNECT holds every advisory key it can compute: the rings'
-- serializers, the lane registry, the enqueue and claim keys of the first 64 lanes, the
-- attempt keys of the first 64 jobs' first 3 attempts, and the leader key; as int8
-- keys and as (int4, int4) pairs.
SELECT awa.enqueue('hq', 'rescue_me') AS j_rescue,
       awa.enqueue('hq', 'complete_me') AS j_complete,
       awa.enqueue('hq', 'fail_me') AS j_fail,
       awa.enqueue('hq', 'batch_me') AS j_batch,
       awa.enqueue('hq', 'cancel_me') AS j_cancel,
       awa.enqueue('hq', 'later', run_at => now() + interval '1 day') AS j_later \gset
UPDATE awa.deferred_jobs SET run_at = now() - interval '1 second' WHERE job_id = :j_later;
CREATE ROLE awa_outsider LOGIN;
SELECT pg_temp.connect_as('outsider', 'awa_outsider');
SELECT * FROM dblink('outsider', $q$
    WITH names(n) AS (
        SELECT 'awa.queue_storage.ring_rotation:awa:' || r FROM unnest(ARRAY['queue', 'lease', 'claim']) r
        UNION ALL SELECT 'awa.lane_registry'
        UNION ALL SELECT 'awa.enqueue:' || i FROM generate_series(1, 64) i
        UNION ALL SELECT 'awa.claim:' || i FROM generate_series(1, 64) i
        UNION ALL SELECT 'awa.attempt:' || j || ':' || l
                    FROM generate_series(1, 64) j, generate_series(1, 3) l),
    keys(k) AS (SELECT hashtextextended(n, 0) FROM names UNION ALL SELECT 4708303813012965710)
    SELECT count(pg_advisory_lock(k)),
           count(pg_advisory_lock((k >> 32)::int,
                                  ((k & 4294967295) - ((k & 2147483648) << 1))::int))
      FROM keys $q$) AS t(int8_keys bigint, int4_pairs bigint);
SELECT count(*) AS outsider_locks
  FROM pg_locks l JOIN pg_stat_activity a USING (pid)
 WHERE a.usename = 'awa_outsider' AND l.locktype = 'advisory' AND l.granted;
-- ... and none of the private ones: it has no rights on awa_internal
SELECT sqlstate_of($$SELECT * FROM dblink('outsider',
    'SELECT awa_internal.private_try_xact_lock(1)') AS t(b boolean)$$);
-- (awa.maintenance_status names the foreign holder of the leader key; no worker runs
-- here, so t/012_hostile_roles.pl checks that, with one)

-- Meanwhile every path goes on, and none waits (statement_timeout above).
SELECT awa.enqueue('hq_new_queue', 'first') > 0 AS new_queue_enqueued;
SELECT kind FROM awa.claim('hq', 1, interval '1 microsecond');
SELECT kind FROM awa.claim('hq', 3) ORDER BY job_id;
SELECT kind FROM awa.claim('hq_new_queue');
SELECT max(run_lease) FILTER (WHERE job_id = :j_complete) AS l_complete,
       max(run_lease) FILTER (WHERE job_id = :j_fail) AS l_fail,
       max(run_lease) FILTER (WHERE job_id = :j_batch) AS l_batch
  FROM awa.lease_claims \gset
SELECT awa.heartbeat(:j_complete, :l_complete) AS beat,
       awa.complete(:j_complete, :l_complete) AS completed,
       awa.fail(:j_fail, :l_fail, 'boom', '0 s') AS failed;
SELECT job_id FROM awa.complete_batch(ARRAY[:j_batch]::bigint[], ARRAY[:l_batch]::bigint[]);
SELECT awa.cancel(:j_cancel) AS cancelled_available,
       awa.cancel(job_id) AS cancelled_running
  FROM awa.lease_claims WHERE kind = 'first';
SELECT promoted FROM awa.promote_deferred('awa');
SELECT rescued, outcome FROM awa.rescue('awa');
SELECT kind, attempt FROM awa.claim('hq', 10) ORDER BY job_id;
SELECT ring, outcome, blocker FROM awa.rotate('awa', 'queue');
SELECT ring, outcome, blocker FROM awa.rotate('awa', 'lease');
SELECT ring, outcome, blocker FROM awa.rotate('awa', 'claim');
-- claim prune carries the open receipts forward (their attempt keys are held outside)
SELECT ring, outcome, reason FROM awa.prune('awa', 'claim');
SELECT * FROM awa.queue_counts('hq');
-- a second rescue in this session, of a receipt in another claim child (the first
-- one's plan was cached for the row type of child 0)
SELECT awa.enqueue('hq', 'rescue_me_too') > 0 AS enqueued;
SELECT job_id AS j_too FROM awa.claim('hq', 1, interval '1 microsecond') \gset
SELECT claim_slot FROM awa.lease_claims WHERE job_id = :j_too;
SELECT rescued, outcome FROM awa.rescue('awa');

-- 4. A tenant granted the API cannot take a private lock either.
SET ROLE awa_test_tenant;
SELECT sqlstate_of($$SELECT awa_internal.private_xact_lock(1)$$);
SELECT sqlstate_of($$SELECT awa_internal.private_try_xact_lock_for(1, 10)$$);
RESET ROLE;

-- 5. A tenant granted the API who knows another worker's job id cannot end, fail or
-- heartbeat its attempt: it cannot guess the token (the attempt numbers, 0, -1 and the
-- largest bigint name nothing): its guesses change nothing.
SELECT awa.enqueue('victim', 'theirs') AS j_victim \gset
SELECT run_lease AS l_victim FROM awa.claim('victim') \gset
GRANT EXECUTE ON FUNCTION awa.complete(bigint, bigint), awa.heartbeat(bigint, bigint, jsonb),
    awa.fail(bigint, bigint, text, interval) TO awa_test_tenant;
SET ROLE awa_test_tenant;
SELECT g AS guess, awa.complete(:j_victim, g) AS completed,
       awa.fail(:j_victim, g, 'stolen', '0 s') AS failed,
       awa.heartbeat(:j_victim, g) AS beat
  FROM unnest(ARRAY[1, 2, 3, 0, -1, 9223372036854775807]::bigint[]) g;
RESET ROLE;
SELECT count(*) AS heartbeats, (SELECT count(*) FROM awa.lease_claim_closures
                                 WHERE job_id = :j_victim) AS closures
  FROM awa.leases WHERE job_id = :j_victim;
SELECT * FROM awa.queue_counts('victim');
SELECT awa.complete(:j_victim, :l_victim) AS owner_completes;

SELECT dblink_disconnect('outsider');
DROP ROLE awa_outsider;
DROP OWNED BY awa_test_tenant;
DROP ROLE awa_test_tenant;
DROP EXTENSION dblink;
RESET statement_timeout;

-- 6. A look-alike schema awa_internal (docs/proposals/internal_schema.md, "Hijack"). In
-- a 0.9 database the internals are in awa; a role with CREATE on the database could
-- make a schema awa_internal holding functions of the names and signatures the library
-- calls. It is no member of the extension, so the library never calls them (a claim,
-- the enqueue of a later job, a unique enqueue at READ COMMITTED and at REPEATABLE
-- READ: each look-alike would raise), and the extension's scripts refuse to create or
-- update next to it.
SET client_min_messages = warning;
DROP EXTENSION awa_bgw;
CREATE EXTENSION awa_bgw VERSION '0.9';
RESET client_min_messages;
CREATE ROLE awa_squatter;
CREATE SCHEMA awa_internal AUTHORIZATION awa_squatter;
CREATE FUNCTION pg_temp.look_alike(p_signature text, p_returns text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE FUNCTION awa_internal.%s RETURNS %s LANGUAGE plpgsql AS %L',
                   p_signature, p_returns,
                   format('BEGIN RAISE EXCEPTION %L; END', 'look-alike called: ' || p_signature));
    EXECUTE format('ALTER FUNCTION awa_internal.%s OWNER TO awa_squatter', p_signature);
END $$;
SELECT count(pg_temp.look_alike(s, r)) AS look_alikes
  FROM (VALUES ('claim_now(text, int, interval)', 'void'),
               ('enqueue_jobs(text, awa.new_job[])', 'void'),
               ('unique_job(text, text, interval, text[], bigint)', 'bigint'),
               ('check_unique(text, interval, text[])', 'void'),
               ('private_xact_lock(bigint)', 'void'),
               ('unique_lock_key(text, text)', 'bigint'),
               ('hold_ring_families(boolean)', 'void'),
               ('job_state(bigint)', 'text'),
               ('unique_states_default()', 'text[]')) f(s, r);
SELECT awa.enqueue('hj', 'now') > 0 AS enqueued,
       awa.enqueue('hj', 'later', run_at => now() + interval '1 hour') > 0 AS deferred;
SELECT awa.enqueue('hj', 'unique', unique_key => 'k') AS j_unique \gset
SELECT count(*) AS deferred_jobs FROM awa.deferred_jobs WHERE queue = 'hj';
SELECT count(*) AS claimed FROM awa.claim('hj', 10);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT awa.enqueue('hj', 'unique', unique_key => 'k') = :j_unique AS unique_rr_blocked,
       awa.enqueue('hj', 'unique', unique_key => 'k2') <> :j_unique AS unique_rr_new;
COMMIT;
SELECT awa.enqueue('hj', 'unique', unique_key => 'k') = :j_unique AS unique_rc_blocked;
-- the guard: no CREATE EXTENSION, no update to 0.10, next to it
SELECT sqlstate_of($$ALTER EXTENSION awa_bgw UPDATE TO '0.10'$$) AS update_refused;
SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw';
DROP FUNCTION awa_internal.enqueue_jobs(text, awa.new_job[]);  -- it uses the extension's type
DROP EXTENSION awa_bgw;
SELECT sqlstate_of($$CREATE EXTENSION awa_bgw$$) AS create_refused;
SET client_min_messages = warning;
DROP SCHEMA awa_internal CASCADE;
RESET client_min_messages;
DROP ROLE awa_squatter;
CREATE EXTENSION awa_bgw;

-- 7. A caller's search_path (docs/storage.md §5, "Privileges and search_path"). The C
-- entry points of the API run as the extension's owner without a SET clause; the SQL
-- they reach (a later job's insert, a retry's, a job failed for good, the xid space's
-- adoption, a unique key at REPEATABLE READ and SERIALIZABLE) runs under a pinned path.
-- A tenant puts a schema of its own first in its path, with functions and operators
-- named as pg_catalog's: none of them may run inside the API (each warns, naming the
-- user it runs as), and every call does what it does under a plain path.
SELECT awa.register_queue('path') IS NOT NULL AS registered;
CREATE ROLE awa_path_tenant IN ROLE awa_producer, awa_consumer;
CREATE SCHEMA evil AUTHORIZATION awa_path_tenant;
SET ROLE awa_path_tenant;
-- evil.<signature> returning <type>: warns, then returns what <call> returns
CREATE FUNCTION pg_temp.evil(p_sig text, p_returns text, p_call text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE FUNCTION evil.%s RETURNS %s LANGUAGE plpgsql AS %L', p_sig,
                   p_returns, format('BEGIN RAISE WARNING %L, current_user; %s; END',
                                     'evil.' || p_sig || ' ran as %', p_call));
    RETURN p_sig;
END $$;
SELECT count(pg_temp.evil(s, r, c)) AS evil_functions
  FROM (VALUES ('now()', 'timestamptz', 'RETURN pg_catalog.now()'),
               ('unnest(a anyarray)', 'SETOF anyelement',
                'RETURN QUERY SELECT pg_catalog.unnest(a)'),
               ('length(t text)', 'int', 'RETURN pg_catalog.length(t)'),
               ('octet_length(t text)', 'int', 'RETURN pg_catalog.octet_length(t)'),
               ('cardinality(a anyarray)', 'int', 'RETURN pg_catalog.cardinality(a)'),
               ('array_position(a anyarray, e anyelement)', 'int',
                'RETURN pg_catalog.array_position(a, e)'),
               ('array_to_string(a anyarray, d text)', 'text',
                'RETURN pg_catalog.array_to_string(a, d)'),
               ('hashtextextended(t text, s bigint)', 'bigint',
                'RETURN pg_catalog.hashtextextended(t, s)'),
               ('format(f text, a text)', 'text', 'RETURN pg_catalog.format(f, a)'),
               ('format(f text, a text, b text)', 'text', 'RETURN pg_catalog.format(f, a, b)'),
               ('gt(a timestamptz, b timestamptz)', 'boolean',
                'RETURN a OPERATOR(pg_catalog.>) b'),
               ('le(a timestamptz, b timestamptz)', 'boolean',
                'RETURN a OPERATOR(pg_catalog.<=) b'),
               ('eq(a smallint, b smallint)', 'boolean', 'RETURN a OPERATOR(pg_catalog.=) b'),
               ('cat(a text, b text)', 'text', 'RETURN a OPERATOR(pg_catalog.||) b'),
               ('contained(a anyarray, b anyarray)', 'boolean',
                'RETURN a OPERATOR(pg_catalog.<@) b')) f(s, r, c);
CREATE OPERATOR evil.> (FUNCTION = evil.gt, LEFTARG = timestamptz, RIGHTARG = timestamptz);
CREATE OPERATOR evil.<= (FUNCTION = evil.le, LEFTARG = timestamptz, RIGHTARG = timestamptz);
CREATE OPERATOR evil.= (FUNCTION = evil.eq, LEFTARG = smallint, RIGHTARG = smallint);
CREATE OPERATOR evil.|| (FUNCTION = evil.cat, LEFTARG = text, RIGHTARG = text);
CREATE OPERATOR evil.<@ (FUNCTION = evil.contained, LEFTARG = anyarray, RIGHTARG = anyarray);
-- (this file's own statements below name pg_catalog's functions in full)
SET search_path = evil, pg_catalog;
-- the evil functions do run where the path reaches them: here, in the caller's own SQL
SELECT now() IS NOT NULL AS caller_sees_evil;
SELECT awa.enqueue('path', 'later', run_at => pg_catalog.now() + interval '1 hour') > 0
           AS deferred,
       (SELECT count(*) FROM awa.enqueue_batch('path',
            '[{"kind": "later", "run_at": "2999-01-01"}, {"kind": "due"}]')) AS batch,
       awa.enqueue('path', 'retried') > 0 AS retried,
       awa.enqueue('path', 'dies', max_attempts => 1) > 0 AS dies,
       awa.enqueue('path', 'done') > 0 AS done;
-- claim all four due jobs; fail two (a retry in an hour, which no promotion makes due
-- before the end; one failed for good), heartbeat and complete the others, then the
-- loop's calls
CREATE TEMP TABLE held AS SELECT * FROM awa.claim('path', 10);
SELECT pg_catalog.count(*) AS claimed FROM held;
SELECT awa.fail(job_id, run_lease, 'boom', interval '1 hour') AS failed
  FROM held WHERE kind = 'retried';
SELECT awa.fail(job_id, run_lease, 'boom') AS failed_for_good
  FROM held WHERE kind = 'dies';
SELECT awa.heartbeat(job_id, run_lease, '{"p": 1}') AS beat FROM held WHERE kind = 'done';
SELECT pg_catalog.count(*) AS completed
  FROM held h, awa.complete_batch(ARRAY[h.job_id], ARRAY[h.run_lease]) c
 WHERE h.kind IN ('done', 'due');
SELECT awa.enqueue('path', 'loop') > 0 AS loop_one, awa.enqueue('path', 'loop') > 0 AS loop_two;
SELECT job_id AS j_loop, run_lease AS l_loop FROM awa.complete_and_claim(NULL, NULL, 'path') \gset
SELECT kind FROM awa.fail_and_claim(:j_loop, :l_loop, 'boom', interval '1 hour', 'path') \gset
SELECT :'kind' AS next_claimed;
-- unique keys at REPEATABLE READ and SERIALIZABLE (the key's own SQL), the default
-- states and given ones
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT awa.enqueue('path', 'unique', unique_key => 'k') AS j_unique \gset
SELECT awa.enqueue('path', 'unique', unique_key => 'k') = :j_unique AS rr_blocked,
       awa.enqueue('path', 'unique', unique_key => 'k2', unique_states => '{available}')
           <> :j_unique AS rr_new;
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT awa.enqueue('path', 'unique', unique_key => 'k') = :j_unique AS serializable_blocked;
COMMIT;
RESET search_path;
RESET ROLE;
-- what was written: two later jobs and a retry deferred, one job failed for good, the
-- unique jobs waiting
SELECT kind, attempt, last_error FROM awa.deferred_jobs WHERE queue = 'path'
 ORDER BY kind COLLATE "C", attempt;
SELECT kind, attempts, error FROM awa.failed_jobs WHERE queue = 'path';
SELECT * FROM awa.queue_counts('path');
DROP OWNED BY awa_path_tenant;
DROP ROLE awa_path_tenant;
