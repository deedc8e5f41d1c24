-- The horizon gate of the folds (DESIGN §3.8–3.9, §5; the folds: maintenance/folds.sql). A fold deletes rows, so it runs
-- only when nothing genuinely pins the MVCC horizon: then what it deletes is reclaimable
-- at once. The gate is checked at the start of the fold's own transaction.

-- Every holder of the xmin horizon this database can see, with whether it counts as a
-- genuine pin and why. Clears the statistics snapshot first (pg_stat_activity is
-- otherwise cached for the rest of the transaction).
--
-- A standby's feedback xmin and a replication slot's xmin carry no start time, and a
-- standby with hot_standby_feedback always feeds one back (its oldest running xid,
-- refreshed every wal_receiver_status_interval), so "set" alone would pin for good. They
-- are dated against the ring ledgers instead: v_dated is the xid of the newest rotation
-- made at least min_age ago (a rotation's xid is assigned before its rotated_at), and an
-- xmin that does not precede it is younger than min_age (plus the gap to that rotation)
-- and does not pin. With no rotation that old to compare with (or only a frozen one,
-- whose xid says nothing), an xmin pins.
CREATE OR REPLACE FUNCTION awa.horizon_pins_at(p_min_age interval,
    OUT kind text, OUT pid int, OUT name text, OUT state text, OUT xid xid, OUT xmin xid,
    OUT xact_age interval, OUT pins boolean, OUT reason text)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_dated xid;
BEGIN
    IF p_min_age IS NULL OR p_min_age < interval '0' THEN
        RAISE EXCEPTION 'min_age must be a non-negative interval, not %', p_min_age
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'awa_bgw.horizon_pin_min_age is the usual value.';
    END IF;
    SELECT r.xmin INTO v_dated
      FROM ((SELECT q.xmin, q.rotated_at FROM awa.queue_ring_rotations q
              WHERE q.rotated_at <= now() - p_min_age AND age(q.xmin) < 2147483647
              ORDER BY q.generation DESC LIMIT 1)
            UNION ALL
            (SELECT l.xmin, l.rotated_at FROM awa.lease_ring_rotations l
              WHERE l.rotated_at <= now() - p_min_age AND age(l.xmin) < 2147483647
              ORDER BY l.generation DESC LIMIT 1)
            UNION ALL
            (SELECT c.xmin, c.rotated_at FROM awa.claim_ring_rotations c
              WHERE c.rotated_at <= now() - p_min_age AND age(c.xmin) < 2147483647
              ORDER BY c.generation DESC LIMIT 1)) r
     ORDER BY r.rotated_at DESC LIMIT 1;
    PERFORM pg_stat_clear_snapshot();
    RETURN QUERY
    -- sessions and background workers of this database
    SELECT CASE WHEN a.backend_type = 'client backend' THEN 'backend' ELSE 'worker' END,
           a.pid, coalesce(nullif(a.application_name, ''), a.backend_type)::text,
           a.state, a.backend_xid, a.backend_xmin, now() - a.xact_start,
           p.pins, p.why
      FROM pg_stat_activity a
     CROSS JOIN LATERAL (
           SELECT (a.xact_start <= now() - p_min_age
                   AND ((a.backend_xid IS NOT NULL AND a.state LIKE 'idle in transaction%')
                        OR a.backend_xmin IS NOT NULL)) AS pins,
                  CASE WHEN a.xact_start > now() - p_min_age THEN 'younger than min_age'
                       WHEN a.backend_xid IS NOT NULL AND a.state LIKE 'idle in transaction%'
                       THEN 'idle in transaction holding a write xid'
                       WHEN a.backend_xmin IS NOT NULL THEN 'holds a snapshot'
                       ELSE 'holds no snapshot' END AS why) p
     WHERE a.datname = current_database()
       AND a.pid <> pg_backend_pid()
       AND a.backend_type NOT IN ('autovacuum worker', 'autovacuum launcher',
                                  'awa_bgw worker', 'awa_bgw launcher', 'walsender')
       AND (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
    UNION ALL
    -- standbys feeding back an xmin (hot_standby_feedback): cluster-wide
    SELECT 'walsender', r.pid, r.application_name::text, r.state, NULL::xid,
           r.backend_xmin, NULL::interval, o.old,
           CASE WHEN o.old THEN 'standby feedback holds xmin' ELSE 'younger than min_age' END
      FROM pg_stat_replication r
     CROSS JOIN LATERAL (SELECT v_dated IS NULL OR age(r.backend_xmin) >= age(v_dated)) o(old)
     WHERE r.backend_xmin IS NOT NULL
    UNION ALL
    -- prepared transactions of this database
    SELECT 'prepared', NULL::int, x.gid, 'prepared', x.transaction, NULL::xid,
           now() - x.prepared, x.prepared <= now() - p_min_age,
           CASE WHEN x.prepared <= now() - p_min_age THEN 'prepared transaction'
                ELSE 'younger than min_age' END
      FROM pg_prepared_xacts x
     WHERE x.database = current_database()
    UNION ALL
    -- replication slots: an xmin pins; a logical slot's catalog_xmin alone does not
    SELECT 'slot', NULL::int, s.slot_name::text, s.slot_type, NULL::xid,
           coalesce(s.xmin, s.catalog_xmin), NULL::interval, o.old,
           CASE WHEN s.xmin IS NULL THEN 'catalog_xmin only (does not hold back user tables)'
                WHEN o.old THEN 'replication slot holds xmin'
                ELSE 'younger than min_age' END
      FROM pg_replication_slots s
     CROSS JOIN LATERAL (SELECT s.xmin IS NOT NULL
                                AND (v_dated IS NULL OR age(s.xmin) >= age(v_dated))) o(old)
     WHERE s.xmin IS NOT NULL OR s.catalog_xmin IS NOT NULL
    UNION ALL
    -- a caller who cannot see other roles' sessions (their state, xact_start and
    -- backend_type read NULL) cannot tell whether they pin: that counts as a pin
    SELECT 'gate', NULL::int, current_user::text, NULL::text, NULL::xid, NULL::xid,
           NULL::interval, true,
           'this role cannot see other roles'' sessions: grant it pg_read_all_stats'
     WHERE NOT pg_has_role(current_user, 'pg_read_all_stats', 'USAGE');
END
$$;

CREATE OR REPLACE VIEW awa.horizon_pins AS
SELECT * FROM awa.horizon_pins_at(coalesce(current_setting('awa_bgw.horizon_pin_min_age', true),
                                           '5s')::interval);

COMMENT ON VIEW awa.horizon_pins IS
'every holder of the MVCC horizon visible from this database, whether it genuinely pins '
'it (older than awa_bgw.horizon_pin_min_age) and why';

-- The first genuine pin's description, or NULL when nothing pins the horizon.
CREATE OR REPLACE FUNCTION awa_internal.horizon_pin_holder(p_min_age interval) RETURNS text
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.kind || ' ' || coalesce(p.pid::text, p.name) || ': ' || p.reason
      FROM awa.horizon_pins_at(p_min_age) p WHERE p.pins
     ORDER BY p.xact_age DESC NULLS LAST LIMIT 1
$$;

CREATE OR REPLACE FUNCTION awa.horizon_pinned(min_age interval) RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT awa_internal.horizon_pin_holder(min_age) IS NOT NULL $$;

CREATE OR REPLACE FUNCTION awa_internal.fold_min_age() RETURNS interval
LANGUAGE sql STABLE
AS $$ SELECT coalesce(current_setting('awa_bgw.horizon_pin_min_age', true), '5s')::interval $$;


-- The failed_jobs retention, in small batches, under the same gate.
CREATE OR REPLACE FUNCTION awa.purge_failed_jobs_gated(p_schema text, OUT outcome text,
                                            OUT purged bigint, OUT pin text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    pin := awa_internal.horizon_pin_holder(awa_internal.fold_min_age());
    IF pin IS NOT NULL THEN
        outcome := 'stood_down';
        purged := 0;
        RETURN;
    END IF;
    SELECT p.purged INTO purged FROM awa_internal.purge_failed_jobs(p_schema) p;
    outcome := 'folded';
END
$$;
