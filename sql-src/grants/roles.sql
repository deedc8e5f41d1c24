-- Group roles (0.9): four NOLOGIN roles that hold the extension's privileges, so that a
-- DBA grants a role membership instead of a list of functions (docs/operations.md,
-- "Roles and the trust model"):
--   awa_producer  enqueue, enqueue_batch, register_queue, job;
--   awa_consumer  claim, complete, complete_batch, complete_and_claim, fail,
--                 fail_and_claim, heartbeat, job;
--   awa_monitor   what pg_monitor reads in schema awa (grants/monitor.sql and
--                 api/schedules.sql): the status views and the helpers they call;
--   awa_admin     the operators' functions: the per-queue grants, pauses and running
--                 limits, cancel,
--                 queue_counts, the job listing and replay, periodic jobs, stats_reset,
--                 wake, claim_waiters, and the views queue_grants, queue_settings,
--                 terminal_jobs and schedules.
-- Each has USAGE on schema awa and no privilege on a table that holds jobs (awa_monitor
-- reads the rotation ledgers, as pg_monitor does). The per-queue grants
-- (api/queue_policy.sql) apply on top: the functions check the session's role.
--
-- Roles belong to the cluster, not to a database: the roles are created only if they
-- do not exist (another database installed the extension first, or a DBA made them),
-- and an existing role is used as it is. They are not members of the extension, so
-- DROP EXTENSION leaves them (docs/operations.md "Roles and the trust model"). The
-- extension is superuser-only (awa_bgw.control), so the installer may create roles.
-- Safe to run again: creating and granting are both idempotent.
DO $$
DECLARE
    r text;
    created boolean;
BEGIN
    FOREACH r IN ARRAY ARRAY['awa_producer', 'awa_consumer', 'awa_monitor', 'awa_admin'] LOOP
        created := false;
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
                created := true;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                -- created meanwhile by an install in another database
                NULL;
            END;
        END IF;
        IF created THEN
            EXECUTE format('COMMENT ON ROLE %I IS %L', r, CASE r
                WHEN 'awa_producer' THEN 'awa_bgw: enqueue jobs and look them up'
                WHEN 'awa_consumer' THEN 'awa_bgw: claim jobs and complete, fail or '
                                         'heartbeat the attempts claimed'
                WHEN 'awa_monitor' THEN 'awa_bgw: read the status views'
                ELSE 'awa_bgw: operate queues: per-queue grants, pauses, cancel, replay, '
                     'periodic jobs' END);
        END IF;
    END LOOP;
END
$$;

GRANT USAGE ON SCHEMA awa TO awa_producer, awa_consumer, awa_monitor, awa_admin;

-- Functions by name, every overload of each (the API's argument lists change between
-- versions; an upgrade's old forms are dropped after this, 0.9's retire-old-forms.sql).
-- A name is looked up in schemas awa and awa_internal (the status views' helpers are
-- internal: a view holds them by OID, so EXECUTE is enough, and no group has USAGE on
-- awa_internal); sql-src/build.sh refuses a name defined in both. A name that matches
-- no function of either is an error: a renamed function must be renamed here too.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT v.grantee, v.fname, p.oid::regprocedure AS fn
          FROM (VALUES
                (1, 'awa_producer', 'enqueue'), (2, 'awa_producer', 'enqueue_batch'),
                (3, 'awa_producer', 'register_queue'), (4, 'awa_producer', 'job'),
                (10, 'awa_consumer', 'claim'), (11, 'awa_consumer', 'complete'),
                (12, 'awa_consumer', 'complete_batch'), (13, 'awa_consumer', 'fail'),
                (14, 'awa_consumer', 'heartbeat'), (15, 'awa_consumer', 'job'),
                (16, 'awa_consumer', 'complete_and_claim'),
                (17, 'awa_consumer', 'fail_and_claim'),
                (20, 'awa_monitor', 'maintenance_worker_status'),
                (21, 'awa_monitor', 'maintenance_worker_ticks'),
                (22, 'awa_monitor', 'maintenance_worker_prune_blockers'),
                (23, 'awa_monitor', 'maintenance_worker_idle'),
                (24, 'awa_monitor', 'ring_status_rows'),
                (25, 'awa_monitor', 'horizon_pins_at'),
                (26, 'awa_monitor', 'queue_stats_rows'),
                (27, 'awa_monitor', 'worker_stats_counters'),
                (28, 'awa_monitor', 'worker_ring_stats_counters'),
                (30, 'awa_admin', 'grant_queue'), (31, 'awa_admin', 'revoke_queue'),
                (32, 'awa_admin', 'forget_dropped_queue_grantees'),
                (33, 'awa_admin', 'queue_privilege_names'),   -- read by awa.queue_grants
                (34, 'awa_admin', 'pause_queue'), (35, 'awa_admin', 'resume_queue'),
                (36, 'awa_admin', 'register_queue'),
                (37, 'awa_admin', 'cancel'), (38, 'awa_admin', 'cancel_queue'),
                (39, 'awa_admin', 'queue_counts'),
                (40, 'awa_admin', 'job'), (41, 'awa_admin', 'jobs'),
                (42, 'awa_admin', 'retry_failed'), (43, 'awa_admin', 'retry_failed_queue'),
                (44, 'awa_admin', 'purge_failed'),
                (45, 'awa_admin', 'schedule'), (46, 'awa_admin', 'unschedule'),
                (47, 'awa_admin', 'stats_reset'), (48, 'awa_admin', 'wake'),
                (49, 'awa_admin', 'claim_waiters'),
                (50, 'awa_admin', 'set_queue_limits'),
                (51, 'awa_admin', 'clear_queue_limits')) v(ord, grantee, fname)
          LEFT JOIN pg_catalog.pg_proc p
            ON p.proname = v.fname
           AND p.pronamespace IN ('awa'::regnamespace, 'awa_internal'::regnamespace)
         ORDER BY v.ord, p.oid::regprocedure::text
    LOOP
        IF g.fn IS NULL THEN
            RAISE EXCEPTION 'awa_bgw: no function awa.% or awa_internal.% to grant to %',
                            g.fname, g.fname, g.grantee;
        END IF;
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', g.fn, g.grantee);
    END LOOP;
END
$$;

-- awa_monitor reads what pg_monitor reads (sql/17_roles.sql checks that the two hold
-- the same privileges in schema awa); pg_monitor keeps its grants.
GRANT SELECT ON awa.maintenance_status, awa.ring_status, awa.horizon_pins,
    awa.queue_stats, awa.worker_stats, awa.worker_ring_stats, awa.schedules,
    awa.queue_ring_rotations, awa.lease_ring_rotations, awa.claim_ring_rotations
    TO awa_monitor;
GRANT SELECT ON awa.queue_grants, awa.queue_settings, awa.terminal_jobs, awa.schedules
    TO awa_admin;
