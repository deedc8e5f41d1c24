-- 0.10: the xid space of the database's rows (docs/storage.md §A.17): its state, the
-- adoption of a fresh database, and the rebase of rows that came from another cluster.
-- src/dataplane/xidspace.c calls awa.adopt_xid_space before an enqueue or a claim and
-- awa.xid_space_state before a reader reads a window; the worker,
-- awa_internal.xid_space_settle.

CREATE OR REPLACE FUNCTION awa_internal.cluster_system_identifier() RETURNS bigint
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_cluster_system_identifier';

-- The statement trigger of awa.xid_space: a relcache invalidation of the table at
-- commit, which makes every backend read the mark again.
CREATE OR REPLACE FUNCTION awa_internal.xid_space_changed() RETURNS trigger
LANGUAGE C
AS 'MODULE_PATHNAME', 'awa_xid_space_changed';
DROP TRIGGER IF EXISTS xid_space_changed ON awa.xid_space;
CREATE TRIGGER xid_space_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON awa.xid_space FOR EACH STATEMENT EXECUTE FUNCTION awa_internal.xid_space_changed();

-- Whether any job is recorded anywhere: an entry or a tombstone of the queue ring, a
-- receipt, closure or heartbeat, a deferred or failed job, a schedule, a unique key.
CREATE OR REPLACE FUNCTION awa_internal.has_job_data() RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT 1 FROM awa.ready_entries)
        OR EXISTS (SELECT 1 FROM awa.done_entries)
        OR EXISTS (SELECT 1 FROM awa.lease_claims)
        OR EXISTS (SELECT 1 FROM awa.lease_claim_closures)
        OR EXISTS (SELECT 1 FROM awa.leases)
        OR EXISTS (SELECT 1 FROM awa.deferred_jobs)
        OR EXISTS (SELECT 1 FROM awa.failed_jobs)
        OR EXISTS (SELECT 1 FROM awa.job_schedules)
        OR EXISTS (SELECT 1 FROM awa.unique_keys)
$$;

-- own: the mark of this cluster and no other; moved: a mark of another cluster;
-- fresh: no mark and no job; unmarked: no mark but jobs (a restore under way, or a
-- dump taken before 0.10).
CREATE OR REPLACE FUNCTION awa.xid_space_state() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
        WHEN EXISTS (SELECT 1 FROM awa.xid_space x
                      WHERE x.system_identifier <> awa_internal.cluster_system_identifier()) THEN 'moved'
        WHEN EXISTS (SELECT 1 FROM awa.xid_space) THEN 'own'
        WHEN awa_internal.has_job_data() THEN 'unmarked'
        ELSE 'fresh'
    END
$$;

-- The last value a sequence of the extension handed out (0: none yet).
CREATE OR REPLACE FUNCTION awa_internal.sequence_last(p_seq regclass) RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_last bigint;
BEGIN
    EXECUTE format('SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM %s',
                   p_seq) INTO v_last;
    RETURN v_last;
END
$$;

-- The extension's sequences, each with the largest value the rows hold of it. A restore
-- sets the sequences after loading the tables (and the mark, last of the tables): until
-- it has, a sequence stands behind its rows.
CREATE OR REPLACE FUNCTION awa_internal.sequence_highs(OUT seq regclass, OUT high bigint)
RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'awa.job_id_seq'::regclass, greatest(
        (SELECT max(job_id) FROM awa.ready_entries), (SELECT max(job_id) FROM awa.done_entries),
        (SELECT max(job_id) FROM awa.lease_claims), (SELECT max(job_id) FROM awa.deferred_jobs),
        (SELECT max(job_id) FROM awa.failed_jobs))
    UNION ALL
    SELECT 'awa.lane_seq'::regclass, greatest(
        (SELECT max(lane_seq) FROM awa.ready_entries), (SELECT max(lane_seq) FROM awa.done_entries),
        (SELECT max(lane_seq) FROM awa.lease_claims))
    UNION ALL
    SELECT 'awa.claim_seq'::regclass, (SELECT max(claim_seq) FROM awa.lease_claims)
    UNION ALL
    SELECT 'awa.queue_lane_id_seq'::regclass, (SELECT max(lane_id) FROM awa.queue_lanes)
$$;

-- Whether a sequence stands behind the values its rows hold (a restore not finished).
CREATE OR REPLACE FUNCTION awa_internal.sequences_behind() RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT 1 FROM awa_internal.sequence_highs() h
                    WHERE h.high > awa_internal.sequence_last(h.seq))
$$;

-- Logical replication of the extension's tables is not supported (docs/storage.md
-- §A.17): a subscriber applies another cluster's rows while its own worker turns the
-- rings. Refused before anything is adopted, enqueued or claimed. VOLATILE: called for
-- its error alone, from a subquery whose value nobody reads (src/dataplane/xidspace.c), where a
-- STABLE call may be planned away.
CREATE OR REPLACE FUNCTION awa_internal.refuse_subscribed_tables() RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_rel regclass;
BEGIN
    SELECT r.srrelid::regclass INTO v_rel
      FROM pg_subscription_rel r JOIN pg_class c ON c.oid = r.srrelid
     WHERE c.relnamespace = 'awa'::regnamespace
     LIMIT 1;
    IF v_rel IS NOT NULL THEN
        RAISE EXCEPTION 'table % of awa_bgw is replicated into this database by a logical subscription', v_rel
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Rows applied from another cluster carry its transaction ids, and '
                           'this database''s worker would rotate and truncate the same rings.',
                  HINT = 'Drop the extension''s tables from the subscription; move a database '
                         'with pg_dump/pg_restore or a physical replica instead.';
    END IF;
END
$$;

-- The rebase (docs/storage.md §A.17): rows of another xid space become rows of this
-- one. Under the mark's lock and the families' EXCLUSIVE locks: the marks of other
-- clusters go and this one's is recorded; the entries claimed under their lane's
-- position (read in the old space) or cancelled leave the queue ring (the args of a claimed
-- one whose attempt is still open stay, in held_args); the entries left
-- read txid 0 (visible in every snapshot: each lane's first window holds them, in their
-- lane order); no receipt keeps a window (no lane has a position); every lane with
-- entries is noted as given work at commit (its empty mark dropped, its waiters woken).
CREATE OR REPLACE FUNCTION awa_internal.rebase_xid_space() RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    v_waiting bigint := 0;
BEGIN
    LOCK TABLE awa.xid_space IN SHARE ROW EXCLUSIVE MODE;
    LOCK TABLE awa.ready_entries, awa.done_entries, awa.held_args, awa.lease_claims,
               awa.lease_claim_closures IN EXCLUSIVE MODE;
    DELETE FROM awa.xid_space WHERE system_identifier <> awa_internal.cluster_system_identifier();
    INSERT INTO awa.xid_space (system_identifier) VALUES (awa_internal.cluster_system_identifier())
        ON CONFLICT (system_identifier) DO NOTHING;
    -- a claimed entry whose attempt is still open and whose receipt does not carry the
    -- args (0.10, tables/held_args.sql) leaves them in held_args, as a prune would
    -- (invariant B, docs/storage.md A.20)
    WITH gone AS (
        DELETE FROM awa.ready_entries e
         USING (SELECT l.lane_id, p.win_lo, p.win_hi, p.txid, p.lane_seq
                  FROM (SELECT DISTINCT lane_id FROM awa.ready_entries) l,
                       awa_internal.lane_window(l.lane_id) p) p
         WHERE p.lane_id = e.lane_id
           AND NOT awa_internal.window_unclaimed(e.txid, e.lane_seq, p.win_lo, p.win_hi,
                                                 p.txid, p.lane_seq)
        RETURNING e.job_id, e.attempt, e.args)
    INSERT INTO awa.held_args (ready_slot, job_id, attempt, args)
    SELECT k.slot, g.job_id, g.attempt, g.args
      FROM gone g, awa.ring_cursor('queue') k
     WHERE EXISTS (SELECT 1 FROM awa.lease_claims c
                    WHERE c.job_id = g.job_id AND c.attempt = g.attempt AND c.args IS NULL
                      AND NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures x
                                       WHERE x.job_id = c.job_id
                                         AND x.run_lease = c.run_lease));
    DELETE FROM awa.ready_entries e
     WHERE EXISTS (SELECT 1 FROM awa.done_entries d
                    WHERE d.lane_id = e.lane_id AND d.lane_seq = e.lane_seq
                      AND d.run_lease = 0);
    -- a restore from a dump without the mark may not have set the sequences: no value is
    -- handed out twice
    PERFORM setval(h.seq, h.high) FROM awa_internal.sequence_highs() h
      WHERE h.high > awa_internal.sequence_last(h.seq);
    UPDATE awa.ready_entries SET txid = '0' WHERE txid <> '0';
    UPDATE awa.lease_claims SET win_lo = NULL, win_hi = NULL WHERE win_hi IS NOT NULL;
    FOR r IN SELECT e.queue, e.lane_id, e.ready_slot, count(*) AS n
               FROM awa.ready_entries e GROUP BY 1, 2, 3 LOOP
        PERFORM awa_internal.note_enqueued(r.queue, r.n::int, r.lane_id, r.ready_slot);
        v_waiting := v_waiting + r.n;
    END LOOP;
    RAISE LOG 'awa_bgw: rebased the jobs of database "%" into this cluster''s xid space (% waiting)',
        current_database(), v_waiting;
    RETURN v_waiting;
END
$$;

-- Makes the xid space own: fresh, by recording this cluster's mark; moved or unmarked,
-- by the rebase. Returns own (nothing to do), adopted or rebased; with p_restore_done
-- false (the worker), restoring instead while the mark is in but a pg_restore is still
-- connected (a parallel restore loads tables in no fixed order: the mark may come before
-- a ring child) or a sequence still stands behind its rows (the restore sets them after
-- the tables). One at a time (the mark's lock); a
-- caller that waited reads the state again and finds own.
CREATE OR REPLACE FUNCTION awa.adopt_xid_space(p_restore_done boolean DEFAULT true)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_state text;
BEGIN
    PERFORM awa_internal.refuse_subscribed_tables();
    IF awa.xid_space_state() = 'own' THEN
        RETURN 'own';
    END IF;
    LOCK TABLE awa.xid_space IN SHARE ROW EXCLUSIVE MODE;
    v_state := awa.xid_space_state();
    IF v_state = 'own' THEN
        RETURN 'own';
    ELSIF v_state = 'moved' AND NOT p_restore_done
          AND (awa_internal.client_connected('pg_restore') OR awa_internal.sequences_behind()) THEN
        RETURN 'restoring';
    ELSIF v_state = 'fresh' THEN
        INSERT INTO awa.xid_space (system_identifier) VALUES (awa_internal.cluster_system_identifier());
        RETURN 'adopted';
    END IF;
    PERFORM awa_internal.rebase_xid_space();
    RETURN 'rebased';
END
$$;

-- The worker's check at the start of each pass (src/dataplane/xidspace.c): own, or rebased and
-- own, or the state it waits in (fresh, unmarked).
CREATE OR REPLACE FUNCTION awa_internal.xid_space_settle() RETURNS text
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_xid_space_settle';

COMMENT ON FUNCTION awa.adopt_xid_space(boolean) IS
'makes the jobs of this database this cluster''s (docs/storage.md A.17): records the '
'cluster''s mark in a database with no job yet, or rebases jobs restored from another '
'cluster; own when there is nothing to do. Enqueues, claims and the worker call it by '
'themselves; run it by hand after a data-only restore with --disable-triggers';
