-- Group roles (0.9, sql-src/grants/roles.sql): awa_producer, awa_consumer, awa_monitor
-- and awa_admin. A login role made a member of one may do what its group allows and is
-- refused with 42501 for the rest; per-queue grants still apply on top
-- (docs/operations.md "Roles and the trust model").
\i sql/fresh.inc
SET statement_timeout = '20s';   -- a refused waiting claim must not wait

-- 1. The roles are cluster-wide: DROP EXTENSION leaves them, CREATE EXTENSION takes
-- them as they are
DROP EXTENSION awa_bgw;
SELECT rolname, rolcanlogin, rolsuper, rolinherit, rolcreaterole, rolcreatedb
  FROM pg_roles
 WHERE rolname IN ('awa_producer', 'awa_consumer', 'awa_monitor', 'awa_admin')
 ORDER BY rolname;
CREATE EXTENSION awa_bgw;
SELECT count(*) AS roles
  FROM pg_roles WHERE rolname IN ('awa_producer', 'awa_consumer', 'awa_monitor', 'awa_admin');
-- they are no members of the extension
SELECT count(*) AS role_members_of_extension
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
 WHERE e.extname = 'awa_bgw' AND d.classid = 'pg_authid'::regclass;
-- a role that holds the extension's grants cannot be dropped while it is installed
SELECT sqlstate_of('DROP ROLE awa_monitor');

-- 2. What each group holds in schemas awa and awa_internal (functions by name: an
-- argument list may change), and no table that holds jobs
SELECT r.rolname, string_agg(DISTINCT p.proname, ' ' ORDER BY p.proname) AS execute
  FROM pg_proc p, aclexplode(p.proacl) a, pg_roles r
 WHERE p.pronamespace IN ('awa'::regnamespace, 'awa_internal'::regnamespace)
   AND a.grantee = r.oid
   AND r.rolname IN ('awa_producer', 'awa_consumer', 'awa_monitor', 'awa_admin')
 GROUP BY r.rolname ORDER BY r.rolname;
SELECT r.rolname, string_agg(c.relname || ':' || a.privilege_type, ' ' ORDER BY c.relname)
         AS relations
  FROM pg_class c, aclexplode(c.relacl) a, pg_roles r
 WHERE c.relnamespace = 'awa'::regnamespace AND a.grantee = r.oid
   AND r.rolname IN ('awa_producer', 'awa_consumer', 'awa_monitor', 'awa_admin')
 GROUP BY r.rolname ORDER BY r.rolname;
SELECT r.rolname, has_schema_privilege(r.oid, 'awa', 'USAGE') AS usage,
       has_schema_privilege(r.oid, 'awa', 'CREATE') AS "create"
  FROM pg_roles r
 WHERE r.rolname IN ('awa_producer', 'awa_consumer', 'awa_monitor', 'awa_admin')
 ORDER BY r.rolname;
-- awa_internal: nobody but its owner (the extension's) may use it: no ACL at all, and
-- neither PUBLIC, pg_monitor nor a group has USAGE or CREATE
SELECT pg_get_userbyid(n.nspowner) = pg_get_userbyid(e.extowner) AS extension_owner_owns,
       n.nspacl IS NULL AS no_acl
  FROM pg_namespace n, pg_extension e
 WHERE n.nspname = 'awa_internal' AND e.extname = 'awa_bgw';
SELECT r.rolname, has_schema_privilege(r.oid, 'awa_internal', 'USAGE') AS usage,
       has_schema_privilege(r.oid, 'awa_internal', 'CREATE') AS "create"
  FROM pg_roles r
 WHERE r.rolname IN ('awa_producer', 'awa_consumer', 'awa_monitor', 'awa_admin', 'pg_monitor')
 ORDER BY r.rolname;
-- (PUBLIC executes five: semver_rank and ring_authority_min_flip_version, which the
-- fleet's views call, refuse_subscribed_tables, which the library calls by OID in
-- the caller's identity, and closure_outcome and closure_state, the closures' code
-- mapping, which awa.terminal_jobs calls)
SELECT count(*) AS public_execute_in_awa_internal,
       string_agg(p.proname, ', ' ORDER BY p.proname) AS names
  FROM pg_proc p
 WHERE p.pronamespace = 'awa_internal'::regnamespace
   AND has_function_privilege('public', p.oid, 'EXECUTE');
-- awa_monitor reads exactly what pg_monitor reads (no row: no difference)
WITH privs AS (
    SELECT a.grantee, 'function ' || p.oid::regprocedure AS object, a.privilege_type
      FROM pg_proc p, aclexplode(p.proacl) a
     WHERE p.pronamespace IN ('awa'::regnamespace, 'awa_internal'::regnamespace)
    UNION ALL
    SELECT a.grantee, 'relation ' || c.oid::regclass, a.privilege_type
      FROM pg_class c, aclexplode(c.relacl) a WHERE c.relnamespace = 'awa'::regnamespace
    UNION ALL
    SELECT a.grantee, 'schema ' || n.nspname, a.privilege_type
      FROM pg_namespace n, aclexplode(n.nspacl) a
     WHERE n.nspname IN ('awa', 'awa_internal'))
(SELECT 'pg_monitor only' AS diff, object, privilege_type FROM privs
  WHERE grantee = 'pg_monitor'::regrole
 EXCEPT
 SELECT 'pg_monitor only', object, privilege_type FROM privs
  WHERE grantee = 'awa_monitor'::regrole)
UNION ALL
(SELECT 'awa_monitor only', object, privilege_type FROM privs
  WHERE grantee = 'awa_monitor'::regrole
 EXCEPT
 SELECT 'awa_monitor only', object, privilege_type FROM privs
  WHERE grantee = 'pg_monitor'::regrole);

-- a login role in each group
CREATE ROLE awa_r17_producer LOGIN IN ROLE awa_producer;
CREATE ROLE awa_r17_consumer LOGIN IN ROLE awa_consumer;
CREATE ROLE awa_r17_monitor LOGIN IN ROLE awa_monitor;
CREATE ROLE awa_r17_admin LOGIN IN ROLE awa_admin;
CREATE ROLE awa_r17_tenant;

-- 3. The producer enqueues and follows its jobs; nothing else
SET ROLE awa_r17_producer;
SELECT awa.enqueue('r17', 'first') AS first_id \gset
SELECT awa.enqueue('r17', 'second', max_attempts => 1) AS second_id \gset
SELECT awa.enqueue('r17', 'third') AS third_id \gset
SELECT count(*) AS batch, max(j) AS b2_id
  FROM awa.enqueue_batch('r17', '[{"kind": "b1"}, {"kind": "b2"}]') AS j \gset
SELECT :batch AS batch;
SELECT awa.register_queue('r17', 5::smallint);
SELECT kind, state FROM awa.job(:first_id);
SELECT sqlstate_of($$SELECT * FROM awa.claim('r17')$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('r17', 1, wait => '1 hour')$$);
SELECT sqlstate_of(format('SELECT awa.complete(%s, 1)', :first_id));
SELECT sqlstate_of(format('SELECT awa.heartbeat(%s, 1)', :first_id));
SELECT sqlstate_of(format('SELECT awa.cancel(%s)', :first_id));
SELECT sqlstate_of($$SELECT * FROM awa.queue_counts('r17')$$);
SELECT sqlstate_of($$SELECT awa.pause_queue('r17')$$);
SELECT sqlstate_of($$SELECT * FROM awa.jobs('r17')$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.queue_stats$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.ready_entries$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.terminal_jobs$$);
RESET ROLE;

-- 4. The consumer claims and closes attempts and follows its jobs; nothing else
SET ROLE awa_r17_consumer;
SELECT job_id AS c1, run_lease AS l1 FROM awa.claim('r17') \gset
SELECT :c1 = :first_id AS claimed_first;
SELECT awa.heartbeat(:c1, :l1, '{"done": 1}') AS heartbeat;
SELECT awa.complete(:c1, :l1) AS completed;
SELECT job_id AS c2, run_lease AS l2 FROM awa.claim('r17') \gset
SELECT awa.fail(:c2, :l2, 'boom') AS failed;
SELECT job_id AS c3, run_lease AS l3 FROM awa.claim('r17') \gset
SELECT count(*) AS batch_completed
  FROM awa.complete_batch(ARRAY[:c3]::bigint[], ARRAY[:l3]::bigint[]);
SELECT state FROM awa.job(:c2);
SELECT sqlstate_of($$SELECT awa.enqueue('r17', 'x')$$);
SELECT sqlstate_of($$SELECT * FROM awa.enqueue_batch('r17', '[{"kind": "x"}]')$$);
SELECT sqlstate_of($$SELECT awa.register_queue('r17', 1::smallint)$$);
SELECT sqlstate_of($$SELECT awa.pause_queue('r17')$$);
SELECT sqlstate_of(format('SELECT awa.cancel(%s)', :third_id));
SELECT sqlstate_of(format('SELECT awa.retry_failed(%s)', :c2));
SELECT sqlstate_of($$SELECT count(*) FROM awa.maintenance_status$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.lease_claims$$);
RESET ROLE;

-- 5. The monitor reads the status views; nothing else
SET ROLE awa_r17_monitor;
SELECT sqlstate_of($$SELECT count(*) FROM awa.maintenance_status$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.ring_status$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.horizon_pins$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.worker_stats$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.worker_ring_stats$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.schedules$$);
SELECT queue, available, running FROM awa.queue_stats WHERE queue = 'r17';
SELECT sqlstate_of($$SELECT awa.enqueue('r17', 'x')$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('r17')$$);
SELECT sqlstate_of(format('SELECT * FROM awa.job(%s)', :first_id));
SELECT sqlstate_of($$SELECT * FROM awa.queue_counts('r17')$$);
SELECT sqlstate_of($$SELECT awa.stats_reset()$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.terminal_jobs$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.queue_grants$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.failed_jobs$$);
RESET ROLE;

-- 6. The admin operates queues: pauses, counts, listing, replay, cancel, periodic jobs,
-- per-queue grants; it neither enqueues nor claims, nor reads the monitor's views
SET ROLE awa_r17_admin;
SELECT awa.pause_queue('r17') AS paused, awa.resume_queue('r17') AS resumed;
SELECT available, running, completed, failed FROM awa.queue_counts('r17');
SELECT kind, state FROM awa.jobs('r17') ORDER BY job_id;
SELECT awa.retry_failed(:c2) = :c2 AS retried;
SELECT awa.purge_failed('r17', before => now()) AS purged;
SELECT awa.cancel(:b2_id) AS cancelled;
SELECT awa.cancel_queue('r17') AS cancelled_in_queue;
SELECT count(*) AS terminal FROM awa.terminal_jobs WHERE queue = 'r17';
SELECT queue, paused, restricted FROM awa.queue_settings WHERE queue = 'r17';
SELECT awa.schedule('r17_cleanup', '*/15 * * * *', 'r17', 'purge') IS NOT NULL AS scheduled;
SELECT name, queue, kind FROM awa.schedules;
SELECT awa.unschedule('r17_cleanup') AS unscheduled;
SELECT awa.wake() IS NOT NULL AS woke, awa.stats_reset() IS NOT NULL AS reset;
SELECT count(*) AS waiting_claims FROM awa.claim_waiters();
SELECT sqlstate_of($$SELECT awa.enqueue('r17', 'x')$$);
SELECT sqlstate_of($$SELECT * FROM awa.claim('r17')$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.queue_stats$$);
SELECT sqlstate_of($$SELECT awa.rotate('queue', 'awa')$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.failed_jobs$$);
RESET ROLE;

-- 7. Per-queue grants apply on top of the groups: once the admin grants queue r17_t to a
-- tenant, the producer and the consumer are refused on it, and so is the admin for what
-- needs manage
SET ROLE awa_r17_admin;
SELECT awa.grant_queue('r17_t', 'awa_r17_tenant', '{enqueue,claim,manage}');
SELECT queue, grantee, privileges FROM awa.queue_grants WHERE queue = 'r17_t';
SELECT sqlstate_of($$SELECT awa.pause_queue('r17_t')$$);
SELECT sqlstate_of($$SELECT * FROM awa.queue_counts('r17_t')$$);
RESET ROLE;
SET ROLE awa_r17_producer;
SELECT sqlstate_of($$SELECT awa.enqueue('r17_t', 'x')$$);
SET ROLE awa_r17_consumer;
SELECT sqlstate_of($$SELECT * FROM awa.claim('r17_t')$$);
RESET ROLE;
-- a queue granted to a group role is granted to its members; the admin may grant itself
SET ROLE awa_r17_admin;
SELECT awa.grant_queue('r17_t', 'awa_producer', '{enqueue}');
SELECT awa.grant_queue('r17_t', 'awa_admin', '{manage}');
SELECT awa.pause_queue('r17_t') AS paused_after_grant;
RESET ROLE;
SET ROLE awa_r17_producer;
SELECT awa.enqueue('r17_t', 'granted') > 0 AS producer_enqueued;
SET ROLE awa_r17_consumer;
SELECT sqlstate_of($$SELECT * FROM awa.claim('r17_t')$$);
SET ROLE awa_r17_admin;
SELECT available FROM awa.queue_counts('r17_t');
SELECT awa.resume_queue('r17_t') AS resumed;
SELECT awa.revoke_queue('r17_t', 'awa_producer') AS revoked_producer,
       awa.revoke_queue('r17_t', 'awa_admin') AS revoked_admin,
       awa.revoke_queue('r17_t', 'awa_r17_tenant') AS revoked_tenant;
RESET ROLE;

-- 8. A role outside the groups can do none of it
CREATE ROLE awa_r17_nobody LOGIN;
SET ROLE awa_r17_nobody;
SELECT sqlstate_of($$SELECT awa.enqueue('r17', 'x')$$);
SELECT sqlstate_of($$SELECT count(*) FROM awa.queue_stats$$);
RESET ROLE;

-- 9. A role granted USAGE on awa and EXECUTE on enqueue, claim and job alone uses them
-- (their internals run as the owner), and cannot name an internal, whatever it holds on
-- the function
CREATE ROLE awa_r17_direct LOGIN;
GRANT USAGE ON SCHEMA awa TO awa_r17_direct;
GRANT EXECUTE ON FUNCTION
    awa.enqueue(text, text, jsonb, int, timestamptz, int, text, interval, text[]),
    awa.claim(text, int, interval, interval), awa.job(bigint),
    awa_internal.ring_slot_count(text) TO awa_r17_direct;
SET ROLE awa_r17_direct;
SELECT awa.enqueue('r17_direct', 'd') AS direct_id \gset
SELECT kind, state FROM awa.job(:direct_id);
SELECT kind FROM awa.claim('r17_direct');
SELECT sqlstate_of($$SELECT awa_internal.ring_slot_count('queue')$$);
SELECT sqlstate_of($$SELECT * FROM awa.ring_cursor('queue')$$);
RESET ROLE;
DROP OWNED BY awa_r17_direct;
DROP ROLE awa_r17_direct;

DROP ROLE awa_r17_producer, awa_r17_consumer, awa_r17_monitor, awa_r17_admin,
    awa_r17_tenant, awa_r17_nobody;
