-- Rotation and prune: one transaction each, callable by hand and by the worker.
--
-- Both first run read-only gates that take no row lock and no xid (an idle or
-- already-pruned ring costs a read, never a write), using awa.try_relation_empty(),
-- which never waits for a lock: a child held ACCESS EXCLUSIVE by a prune reads as
-- "locked". Only then do they take the serializer, in the order of DESIGN 3.1:
--   {ring}_ring_state singleton FOR UPDATE SKIP LOCKED
--   -> authority (read in a later statement)
--   -> ledger: awa_internal.private_try_xact_lock(ring key)
--   -> {ring}_ring_slots row FOR UPDATE SKIP LOCKED             (prune only)
--   -> children ACCESS EXCLUSIVE under awa_bgw.prune_lock_timeout (prune only)
-- and repeat every gate under them. Nothing here ever waits for a lock it could skip.

CREATE OR REPLACE FUNCTION awa.try_relation_empty(regclass) RETURNS boolean
AS 'MODULE_PATHNAME', 'awa_try_relation_empty'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION awa.try_relation_empty(regclass) IS
'true when the table holds no row, committed or written by a transaction still in '
'progress (a dirty snapshot), false when it holds one, NULL when its ACCESS SHARE lock '
'cannot be had at once (never waits)';

CREATE OR REPLACE FUNCTION awa_internal.ring_child(p_family text, p_slot int) RETURNS regclass
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT format('awa.%I', p_family || '_' || p_slot)::regclass $$;

-- The first family whose child in this slot holds a row, 'locked' when a child cannot
-- be read without waiting, NULL when every child of the slot is empty.
CREATE OR REPLACE FUNCTION awa.ring_slot_blocker(p_ring text, p_slot int) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    f text;
    v_empty boolean;
BEGIN
    FOREACH f IN ARRAY awa_internal.ring_families(p_ring) LOOP
        v_empty := awa.try_relation_empty(awa_internal.ring_child(f, p_slot));
        IF v_empty IS NULL THEN
            RETURN 'locked';
        ELSIF NOT v_empty THEN
            RETURN f;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- true when every family of the ring is empty, NULL when a child is locked.
CREATE OR REPLACE FUNCTION awa_internal.ring_is_idle(p_ring text) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s int;
    v_blocker text;
BEGIN
    FOR s IN 0 .. awa_internal.ring_slot_count(p_ring) - 1 LOOP
        v_blocker := awa.ring_slot_blocker(p_ring, s);
        IF v_blocker = 'locked' THEN
            RETURN NULL;
        ELSIF v_blocker IS NOT NULL THEN
            RETURN false;
        END IF;
    END LOOP;
    RETURN true;
END
$$;

-- The oldest sealed slot and its last-open generation, derived from the cursor:
-- none while generation 0 is current; on a full ring it is the slot after the cursor.
CREATE OR REPLACE FUNCTION awa_internal.ring_oldest_sealed(p_slot int, p_generation bigint, p_slot_count int,
                                       OUT slot int, OUT generation bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT ((p_slot - (k - 1)) % p_slot_count + p_slot_count) % p_slot_count,
           p_generation - (k - 1)
    FROM (SELECT least(p_generation + 1, p_slot_count::bigint)::int AS k) v
    WHERE k > 1
$$;

-- How many sealed slots (behind the cursor (p_slot, p_generation), at most one wrap)
-- still hold rows: the status views' "awaiting prune".
CREATE OR REPLACE FUNCTION awa_internal.ring_sealed_slots_holding_rows(p_ring text, p_slot int,
                                                              p_generation bigint)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*)
      FROM (SELECT awa_internal.ring_slot_count(p_ring) AS n) v,
           generate_series(1, least(p_generation, v.n - 1)) o
     WHERE awa.ring_slot_blocker(p_ring, (((p_slot - o) % v.n + v.n) % v.n)::int) IS NOT NULL
$$;

-- The terminal outcomes in a queue slot, per (queue, priority) with any, in key order:
-- what queue prune records before it truncates the slot.
CREATE OR REPLACE FUNCTION awa_internal.queue_slot_terminal_counts(p_slot int)
RETURNS TABLE (queue text, priority smallint, completed bigint, failed bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT queue, priority, count(*) FILTER (WHERE state = ''completed''), '
        '       count(*) FILTER (WHERE state = ''failed'') '
        '  FROM awa.%I GROUP BY queue, priority '
        'HAVING count(*) FILTER (WHERE state IN (''completed'', ''failed'')) > 0 '
        ' ORDER BY queue, priority', 'done_entries_' || p_slot);
END
$$;


-- What prune records of a slot it is about to truncate, after carry-forward, per ring:
-- the queue ring's terminal outcomes (its done entries), the claim ring's (0.9); the
-- lease ring holds none. awa_internal.ring_slot_record_terminal_counts (internal/
-- terminal_counts.sql) records them as the version does.
CREATE OR REPLACE FUNCTION awa_internal.ring_slot_terminal_counts(p_ring text, p_slot int)
RETURNS TABLE (queue text, priority smallint, completed bigint, failed bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    CASE p_ring
        WHEN 'queue' THEN RETURN QUERY SELECT * FROM awa_internal.queue_slot_terminal_counts(p_slot);
        WHEN 'claim' THEN RETURN QUERY SELECT * FROM awa_internal.claim_slot_terminal_counts(p_slot);
        ELSE RETURN;
    END CASE;
END
$$;

-- Why a sealed slot still holds live work that carrying forward cannot move (NULL:
-- nothing; it may be truncated once carry-forward has run). The queue ring's proof:
-- every ready entry has been claimed (its lane_seq is at or below its lane's position)
-- or cancelled (tombstone). Claims and heartbeats are carried forward instead.
CREATE OR REPLACE FUNCTION awa_internal.ring_slot_live_reason(p_ring text, p_slot int) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_lane record;
BEGIN
    PERFORM awa_internal.ring_families(p_ring);   -- validates the ring name
    IF p_ring <> 'queue' THEN
        RETURN NULL;
    END IF;
    FOR v_lane IN EXECUTE format('SELECT lane_id, max(lane_seq) AS top FROM awa.%I '
                                 'GROUP BY lane_id ORDER BY lane_id', 'ready_entries_' || p_slot)
    LOOP
        IF awa_internal.lane_unclaimed_in_slot(v_lane.lane_id, p_slot, v_lane.top) THEN
            RETURN 'queue.unclaimed';
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- The finished-job window (0.10, docs/storage.md A.19): awa_bgw.finished_job_window,
-- 10 s when the library is not loaded (as its default). A setting shown with a unit
-- ('10s', '500ms', '1min') reads as an interval.
CREATE OR REPLACE FUNCTION awa_internal.finished_job_window() RETURNS interval
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(nullif(current_setting('awa_bgw.finished_job_window', true), '')::interval,
                    interval '10 seconds')
$$;

-- Why a sealed slot must stay a while longer for what it shows of finished jobs (NULL:
-- it need not): a terminal closure of the claim slot, or a done entry of the queue
-- slot, written less than the finished-job window ago. A closure is written into its
-- receipt's slot and a cancel's tombstone into its entry's, either of which may be
-- sealed already, so the slot's own age bounds nothing; the rows' times do. Read again
-- under prune's locks, where no such row is in flight.
CREATE OR REPLACE FUNCTION awa_internal.ring_slot_window_reason(p_ring text, p_slot int) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_window interval := awa_internal.finished_job_window();
    v_since timestamptz := clock_timestamp() - v_window;
    v_recent boolean;
BEGIN
    IF v_window <= interval '0' THEN
        RETURN NULL;
    END IF;
    CASE p_ring
        WHEN 'claim' THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I '
                           ' WHERE awa_internal.closure_state(outcome_code, state) IS NOT NULL '
                           '   AND closed_at > $1)', 'lease_claim_closures_' || p_slot)
               INTO v_recent USING v_since;
        WHEN 'queue' THEN
            EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I WHERE finished_at > $1)',
                           'done_entries_' || p_slot)
               INTO v_recent USING v_since;
        ELSE
            RETURN NULL;
    END CASE;
    RETURN CASE WHEN v_recent THEN p_ring || '.finished_window' END;
END
$$;

-- Carries what is still live in a sealed claim or lease slot into the ring's current
-- slot, under the locks prune holds on the slot's children. Claim ring: every open
-- receipt (under its attempt's try-lock; one that is its lane's position also under
-- the lane's claim try-lock), and the position of each lane in p_keep_lanes
-- (awa_internal.claim_slot_positions) with its closure: the lanes whose position the queue ring
-- still needs (awa_internal.claim_slot_position_lanes, computed before the exclusive locks), so
-- that no claimed entry can be claimed again; once those entries are pruned the
-- position is not needed and the claim ring can fall idle. Under the locks it reads
-- claim children only, so it never waits. Lease ring: the newest heartbeat of every
-- attempt still open. All locks are tried before anything is written: a busy one
-- returns its reason and nothing is carried. Row by row: what moves is found by key
-- (no job body is gathered), then one INSERT ... SELECT per family copies it.
CREATE OR REPLACE FUNCTION awa_internal.ring_slot_carry_forward(p_ring text, p_slot int, p_keep_lanes int[])
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_cur record;
    v_jobs bigint[] := '{}';
    v_leases bigint[] := '{}';
    v_pos_jobs bigint[] := '{}';
    v_pos_leases bigint[] := '{}';
    v_cols text;
    v_exprs text;
    r record;
BEGIN
    IF p_ring = 'queue' THEN
        RETURN NULL;
    END IF;
    SELECT * INTO v_cur FROM awa.ring_cursor(p_ring);
    IF p_ring = 'claim' THEN
        FOR r IN EXECUTE format(
            'SELECT k.job_id, k.run_lease, k.lane_id, bool_or(k.pos) AS pos, '
            '       NOT EXISTS (SELECT 1 FROM awa.%1$I x WHERE x.job_id = k.job_id '
            '                      AND x.run_lease = k.run_lease) AS open '
            '  FROM (SELECT c.job_id, c.run_lease, c.lane_id, false AS pos FROM awa.%2$I c '
            '         WHERE NOT EXISTS (SELECT 1 FROM awa.%1$I x '
            '                            WHERE x.job_id = c.job_id AND x.run_lease = c.run_lease) '
            '        UNION ALL '
            '        SELECT p.job_id, p.run_lease, p.lane_id, true '
            '          FROM awa_internal.claim_slot_positions($1, $2) p) k '
            ' GROUP BY k.job_id, k.run_lease, k.lane_id',
            'lease_claim_closures_' || p_slot, 'lease_claims_' || p_slot)
          USING p_slot, coalesce(p_keep_lanes, '{}')
        LOOP
            IF r.open AND NOT awa_internal.private_try_xact_lock(
                    awa_internal.attempt_lock_key(r.job_id, r.run_lease)) THEN
                RETURN 'claim.attempt_locked';
            END IF;
            -- a receipt that is its lane's position moves only under the lane's claim
            -- lock, under which claimers and cancels read the position (an active
            -- lane's position is in a newer slot: its old receipts need no lane lock)
            IF r.pos AND NOT awa_internal.private_try_xact_lock(
                    awa_internal.claim_lock_key(r.lane_id)) THEN
                RETURN 'claim.lane_locked';
            END IF;
            v_jobs := v_jobs || r.job_id;
            v_leases := v_leases || r.run_lease;
            IF r.pos THEN
                v_pos_jobs := v_pos_jobs || r.job_id;
                v_pos_leases := v_pos_leases || r.run_lease;
            END IF;
        END LOOP;
        -- every column but the slot and generation, whatever this version's receipts
        -- carry; a 0.9 window (win_lo, win_hi) only on the lane's position: an open
        -- receipt that once was a position, carried into the current slot with its
        -- window, would read as the lane's position there (newer than the real one in
        -- a slot between), and what was claimed after it would be claimed again
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
               string_agg(CASE WHEN a.attname IN ('win_lo', 'win_hi')
                               THEN format('CASE WHEN (job_id, run_lease) IN '
                                           '(SELECT * FROM unnest($5, $6)) THEN %I END',
                                           a.attname)
                               ELSE quote_ident(a.attname) END, ', ' ORDER BY a.attnum)
          INTO v_cols, v_exprs
          FROM pg_attribute a
         WHERE a.attrelid = 'awa.lease_claims'::regclass AND a.attnum > 0
           AND NOT a.attisdropped AND a.attname NOT IN ('claim_slot', 'claim_generation');
        EXECUTE format(
            'INSERT INTO awa.lease_claims (claim_slot, claim_generation, %1$s) '
            'SELECT $1, $2, %2$s FROM awa.%3$I '
            ' WHERE (job_id, run_lease) IN (SELECT * FROM unnest($3, $4))',
            v_cols, v_exprs, 'lease_claims_' || p_slot)
          USING v_cur.slot, v_cur.generation, v_jobs, v_leases, v_pos_jobs, v_pos_leases;
        -- the closures alike: every column but the slot and generation (0.9's carry
        -- the job's terminal state, which must move with them); a closure with no text
        -- outcome (0.10's, its code instead: tables/closure_code.sql) keeps no
        -- generation
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO v_cols
          FROM pg_attribute a
         WHERE a.attrelid = 'awa.lease_claim_closures'::regclass AND a.attnum > 0
           AND NOT a.attisdropped AND a.attname NOT IN ('claim_slot', 'claim_generation');
        EXECUTE format(
            'INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, %1$s) '
            'SELECT $1, CASE WHEN outcome IS NOT NULL THEN $2 END, %1$s FROM awa.%2$I '
            ' WHERE (job_id, run_lease) IN (SELECT * FROM unnest($3, $4))',
            v_cols, 'lease_claim_closures_' || p_slot)
          USING v_cur.slot, v_cur.generation, v_jobs, v_leases;
        RETURN NULL;
    END IF;
    -- lease ring: the newest heartbeat of each attempt whose receipt is still open and
    -- which has no newer heartbeat in another slot
    FOR r IN EXECUTE format(
        'SELECT DISTINCT ON (l.job_id, l.run_lease) l.* FROM awa.%I l '
        ' ORDER BY l.job_id, l.run_lease, l.heartbeat_at DESC', 'leases_' || p_slot)
    LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM awa.leases n WHERE n.job_id = r.job_id
                                 AND n.run_lease = r.run_lease AND n.lease_slot <> p_slot
                                 AND n.heartbeat_at >= r.heartbeat_at);
        IF NOT awa_internal.private_try_xact_lock(awa_internal.attempt_lock_key(r.job_id, r.run_lease)) THEN
            RETURN 'lease.attempt_locked';
        END IF;
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM awa_internal.open_receipt(r.job_id, r.run_lease));
        INSERT INTO awa.leases (lease_slot, lease_generation, job_id, run_lease,
                                heartbeat_at, progress)
        VALUES (v_cur.slot, v_cur.generation, r.job_id, r.run_lease, r.heartbeat_at,
                r.progress);
    END LOOP;
    RETURN NULL;
END
$$;

-- Every lock wait of a rotation or a prune is bounded (0.10): lock_timeout is this,
-- awa_bgw.prune_lock_timeout, from its first statement, and a lock not granted within
-- it makes the call skip or report blocked, never wait on. An outsider's lock on a
-- ring's tables (a LOCK TABLE, an ALTER, a DROP EXTENSION taking them one by one) would
-- otherwise hold the worker, and a DROP EXTENSION that took the slot table first and
-- waited for the state table the rotation held deadlocked with it. The caller sets it
-- itself (set_config(..., true)) and restores nothing: a function with a SET clause, as
-- every function here has, undoes at its exit what it set locally.
CREATE OR REPLACE FUNCTION awa_internal.maintenance_lock_timeout() RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT coalesce(current_setting('awa_bgw.prune_lock_timeout', true), '10ms') $$;

CREATE OR REPLACE FUNCTION awa.rotate(p_schema text, p_ring text,
    OUT ring text, OUT outcome text, OUT blocker text, OUT slot int, OUT generation bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    -- its gates read the ring in the statement's snapshot: an older one (REPEATABLE
    -- READ, SERIALIZABLE) could miss rows committed since it was taken
    PERFORM awa_internal.require_read_committed();
    ring := p_ring;
    PERFORM set_config('lock_timeout', awa_internal.maintenance_lock_timeout(), true);
    BEGIN
        SELECT r.outcome, r.blocker, r.slot, r.generation
          INTO outcome, blocker, slot, generation
          FROM awa_internal.rotate_bounded(p_ring) r;
    EXCEPTION
        -- whatever it locked or wrote is rolled back with the block
        WHEN lock_not_available THEN
            outcome := 'skipped_busy';
            blocker := 'lock_timeout';
            slot := NULL;
            generation := NULL;
    END;
END
$$;

-- awa.rotate's body, run under awa_internal.maintenance_lock_timeout.
CREATE OR REPLACE FUNCTION awa_internal.rotate_bounded(p_ring text,
    OUT outcome text, OUT blocker text, OUT slot int, OUT generation bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int;
    v_authority text;
    v_idle boolean;
BEGIN
    v_n := awa_internal.ring_slot_count(p_ring);

    -- read-only gates: no lock beyond ACCESS SHARE, no xid
    SELECT c.slot, c.generation INTO slot, generation FROM awa.ring_cursor(p_ring) c;
    v_idle := awa_internal.ring_is_idle(p_ring);
    IF v_idle THEN
        outcome := 'skipped_idle';
        RETURN;
    END IF;
    blocker := coalesce(awa.ring_slot_blocker(p_ring, (slot + 1) % v_n),
                        CASE WHEN v_idle IS NULL THEN 'locked' END);
    IF blocker IS NOT NULL THEN
        outcome := 'skipped_busy';
        RETURN;
    END IF;

    -- the serializer, then every gate again under it
    v_authority := awa_internal.ring_try_serializer(p_ring);
    IF v_authority IS NULL THEN
        outcome := 'skipped_busy';
        blocker := 'locked';
        RETURN;
    END IF;
    SELECT c.slot, c.generation INTO slot, generation FROM awa.ring_cursor(p_ring) c;
    IF slot IS NULL OR slot < 0 OR generation < 0 OR slot <> generation % v_n THEN
        RAISE EXCEPTION 'invalid % ring cursor (%, %) under % authority',
                        p_ring, slot, generation, v_authority
            USING ERRCODE = 'data_corrupted';
    END IF;
    v_idle := awa_internal.ring_is_idle(p_ring);
    IF v_idle THEN
        outcome := 'skipped_idle';
        RETURN;
    END IF;
    blocker := coalesce(awa.ring_slot_blocker(p_ring, (slot + 1) % v_n),
                        CASE WHEN v_idle IS NULL THEN 'locked' END);
    IF blocker IS NOT NULL THEN
        outcome := 'skipped_busy';
        RETURN;
    END IF;

    IF NOT awa_internal.ring_append(p_ring, v_authority, generation + 1, ((slot + 1) % v_n)::int, v_n) THEN
        outcome := 'skipped_busy';
        blocker := 'lost_cas';
        RETURN;
    END IF;
    outcome := 'rotated';
    slot := (slot + 1) % v_n;
    generation := generation + 1;
END
$$;

-- Rings that turn by need (0.10; docs/operations.md, "Rings that turn by need"): whether
-- the ring is due to turn now, and why. 'idle' when no slot holds a row (rotate skips
-- it); 'age' when its current slot is p_interval old or older; 'fill' when the main forks
-- of the current slot's children hold p_fill blocks or more, or 'drain' when they hold no
-- block (the rows are in older slots: an empty slot costs a rotation a ledger row and no
-- TRUNCATE, and brings the oldest slot up for prune), the slot being p_floor old or older
-- in both cases (awa_bgw.rotate_min_age: no ring turns by need more often than that);
-- NULL when none holds. Reads the cursor, its ledger row and the children's
-- sizes: no lock beyond ACCESS SHARE, no xid. p_fill NULL: by age alone.
CREATE OR REPLACE FUNCTION awa_internal.ring_rotation_due(p_ring text, p_interval interval,
                                                          p_fill bigint, p_floor interval)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_slot int;
    v_generation bigint;
    v_at timestamptz;
    v_age interval;
    v_blocks bigint;
BEGIN
    IF p_interval IS NULL OR p_interval < interval '0' OR p_fill < 0 OR p_floor < interval '0' THEN
        RAISE EXCEPTION 'invalid ring_rotation_due arguments (%, %, %)', p_interval, p_fill, p_floor
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The interval and the floor are intervals of 0 or more, the fill a number of blocks of 0 or more.';
    END IF;
    IF coalesce(awa_internal.ring_is_idle(p_ring), false) THEN
        RETURN 'idle';
    END IF;
    SELECT c.slot, c.generation INTO v_slot, v_generation FROM awa.ring_cursor(p_ring) c;
    EXECUTE format('SELECT r.rotated_at FROM awa.%I r WHERE r.generation = $1',
                   p_ring || '_ring_rotations')
       INTO v_at USING v_generation;
    v_age := clock_timestamp() - v_at;
    IF v_at IS NULL OR v_age >= p_interval THEN
        RETURN 'age';
    END IF;
    IF p_fill IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT sum(pg_relation_size(format('awa.%I', f || '_' || v_slot)::regclass))
           / current_setting('block_size')::bigint
      INTO v_blocks FROM unnest(awa_internal.ring_families(p_ring)) f;
    IF v_blocks >= p_fill AND v_age >= coalesce(p_floor, interval '0') THEN
        RETURN 'fill';
    END IF;
    IF v_blocks = 0 AND v_age >= coalesce(p_floor, interval '0') THEN
        RETURN 'drain';
    END IF;
    RETURN NULL;
END
$$;

-- The worker's rotation of a ring that turns by need: awa.rotate when
-- awa_internal.ring_rotation_due says so, else outcome 'skipped_idle' (no row in the
-- ring) or 'skipped_not_due'; due says why. With p_fill NULL, awa.rotate at once.
CREATE OR REPLACE FUNCTION awa_internal.rotate_when_due(p_ring text, p_interval interval,
    p_fill bigint, p_floor interval,
    OUT ring text, OUT outcome text, OUT blocker text, OUT slot int, OUT generation bigint,
    OUT due text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    ring := p_ring;
    IF p_fill IS NOT NULL THEN
        -- its reads wait no longer than awa.rotate's (awa_internal.maintenance_lock_timeout)
        PERFORM set_config('lock_timeout', awa_internal.maintenance_lock_timeout(), true);
        BEGIN
            due := awa_internal.ring_rotation_due(p_ring, p_interval, p_fill, p_floor);
        EXCEPTION
            WHEN lock_not_available THEN
                outcome := 'skipped_busy';
                blocker := 'lock_timeout';
        END;
        IF outcome IS NOT NULL THEN
            RETURN;
        ELSIF due IS NULL OR due = 'idle' THEN
            outcome := CASE WHEN due IS NULL THEN 'skipped_not_due' ELSE 'skipped_idle' END;
            RETURN;
        END IF;
    END IF;
    SELECT r.outcome, r.blocker, r.slot, r.generation INTO outcome, blocker, slot, generation
      FROM awa.rotate('awa', p_ring) r;
END
$$;

-- The lanes whose newest receipt in this claim slot is still needed as the lane's
-- position: the queue ring still holds an entry of the lane at or below it. Read before
-- prune's exclusive locks (it reads every ready child); entries only ever leave the
-- queue ring, so for the receipts it saw the answer can only become too large, never
-- too small. But a sealed slot may still gain receipts from claims in flight when the
-- ring turned: "receipts" is the count it saw (in the same snapshot), and prune_locked
-- refuses the slot when the count under the locks differs (receipts are only ever
-- appended, so an equal count means the same receipts).
CREATE OR REPLACE FUNCTION awa_internal.claim_slot_position_lanes(p_slot int,
    OUT lanes int[], OUT receipts bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('SELECT coalesce(array_agg(c.lane_id) FILTER (WHERE '
                   '         awa_internal.lane_position_needed(c.lane_id, c.top)), ''{}''), '
                   '       coalesce(sum(c.n), 0) '
                   '  FROM (SELECT lane_id, max(lane_seq) AS top, count(*) AS n '
                   '          FROM awa.%I GROUP BY lane_id) c',
                   'lease_claims_' || p_slot)
       INTO lanes, receipts;
END
$$;

-- Whether a session of the given client (pg_dump, pg_restore: they, pg_dumpall's
-- pg_dump and every worker of a parallel dump or restore name their sessions so) other
-- than the caller is connected to this database, read afresh (the activity snapshot a
-- transaction keeps is dropped first).
CREATE OR REPLACE FUNCTION awa_internal.client_connected(p_application text) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_stat_clear_snapshot();
    RETURN EXISTS (SELECT 1 FROM pg_stat_get_activity(NULL) a
                    WHERE a.datid = (SELECT d.oid FROM pg_database d
                                      WHERE d.datname = current_database())
                      AND a.application_name = p_application
                      AND a.pid <> pg_backend_pid());
END
$$;

-- The attempts of queue slot p_slot whose args the queue ring may still have to hold
-- (0.10, tables/held_args.sql, docs/storage.md A.20), and "rows", how many rows the slot
-- holds, all in one snapshot. An attempt is in the set unless a receipt of it has a
-- closure (closed attempts stay closed) or carries its own args (written before 0.10);
-- and then only if a receipt of it exists, or it is an entry not yet claimed in this
-- snapshot (its lane's window, as awa.entry_unclaimed reads it) and not cancelled: such
-- an entry may be claimed before the locks. A held row or a claimed entry with no
-- receipt at all had its attempt closed and its receipt pruned with the claim ring.
-- Read before prune's exclusive locks, after the liveness gate: it reads the claim ring,
-- too long to do while the slot's children are locked. By the time of the locks the set
-- can only hold too many attempts, never too few, except for rows that became visible
-- since; prune_locked refuses the slot when the count under the locks differs (the
-- families are append-only: an equal count is the same rows).
CREATE OR REPLACE FUNCTION awa_internal.queue_slot_open_attempts(p_slot int,
    OUT jobs bigint[], OUT attempts int[], OUT rows bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format(
        'WITH b AS MATERIALIZED ( '
        '       SELECT job_id, attempt, lane_id, txid, lane_seq FROM awa.%1$I '
        '       UNION ALL SELECT job_id, attempt, NULL, NULL, NULL FROM awa.%2$I), '
        '     w AS (SELECT l.lane_id, p.* FROM (SELECT DISTINCT lane_id FROM b '
        '                                        WHERE lane_id IS NOT NULL) l, '
        '                 LATERAL awa_internal.lane_window(l.lane_id) p), '
        '     o AS (SELECT b.job_id, b.attempt FROM b LEFT JOIN w ON w.lane_id = b.lane_id '
        '            WHERE NOT EXISTS ( '
        '                    SELECT 1 FROM awa.lease_claims c '
        '                     WHERE c.job_id = b.job_id AND c.attempt = b.attempt '
        '                       AND (c.args IS NOT NULL OR EXISTS ( '
        '                            SELECT 1 FROM awa.lease_claim_closures x '
        '                             WHERE x.job_id = c.job_id AND x.run_lease = c.run_lease))) '
        '              AND (EXISTS (SELECT 1 FROM awa.lease_claims c '
        '                            WHERE c.job_id = b.job_id AND c.attempt = b.attempt) '
        '                   OR (b.lane_id IS NOT NULL '
        '                       AND awa_internal.window_unclaimed(b.txid, b.lane_seq, w.win_lo, '
        '                                                         w.win_hi, w.txid, w.lane_seq) '
        '                       AND NOT EXISTS (SELECT 1 FROM awa.%3$I d '
        '                                        WHERE d.lane_id = b.lane_id '
        '                                          AND d.lane_seq = b.lane_seq '
        '                                          AND d.run_lease = 0)))) '
        'SELECT (SELECT coalesce(array_agg(job_id ORDER BY job_id, attempt), ''{}'') FROM o), '
        '       (SELECT coalesce(array_agg(attempt ORDER BY job_id, attempt), ''{}'') FROM o), '
        '       (SELECT count(*) FROM b)',
        'ready_entries_' || p_slot, 'held_args_' || p_slot, 'done_entries_' || p_slot)
       INTO jobs, attempts, rows;
END
$$;

-- Under prune's exclusive locks on queue slot p_slot: the args of the attempts given
-- (queue_slot_open_attempts), from the slot's ready entries and held args, copied into
-- held_args of the queue ring's current slot, where the attempt's readers find them
-- (awa_internal.attempt_args). An attempt that closed meanwhile leaves a copy nobody
-- reads, gone with its slot one turn later.
CREATE OR REPLACE FUNCTION awa_internal.queue_slot_hold_args(p_slot int, p_jobs bigint[],
                                                            p_attempts int[])
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF cardinality(p_jobs) = 0 THEN
        RETURN;
    END IF;
    EXECUTE format(
        'INSERT INTO awa.held_args (ready_slot, job_id, attempt, args) '
        'SELECT k.slot, b.job_id, b.attempt, b.args '
        '  FROM awa.ring_cursor(''queue'') k, '
        '       (SELECT job_id, attempt, args FROM awa.%I '
        '        UNION ALL SELECT job_id, attempt, args FROM awa.%I) b '
        ' WHERE (b.job_id, b.attempt) IN (SELECT * FROM unnest($1, $2))',
        'ready_entries_' || p_slot, 'held_args_' || p_slot)
      USING p_jobs, p_attempts;
END
$$;

-- The part of prune that runs under the slot's exclusive locks: the locks, every gate
-- again, carry-forward, the rollup deltas, the TRUNCATE of the children that have any
-- storage (an empty one keeps its relfilenode). Returns {outcome, reason}.
-- The caller runs it with lock_timeout = awa_bgw.prune_lock_timeout, so that no wait
-- under the exclusive locks outlasts it. Claim ring: p_keep_lanes and p_receipts come
-- from awa_internal.claim_slot_position_lanes, read before the locks. Queue ring
-- (0.10): p_held_jobs, p_held_attempts and p_receipts (the slot's rows) from
-- awa_internal.queue_slot_open_attempts, read before the locks.
DROP FUNCTION IF EXISTS awa_internal.prune_locked(text, int, int[], bigint);
CREATE OR REPLACE FUNCTION awa_internal.prune_locked(p_ring text, p_slot int, p_keep_lanes int[],
                                            p_receipts bigint, p_held_jobs bigint[],
                                            p_held_attempts int[])
RETURNS text[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_reason text;
    v_receipts bigint;
    v_truncate text;
BEGIN
    EXECUTE (SELECT 'LOCK TABLE ' || string_agg(awa_internal.ring_child(f, p_slot)::text, ', ')
                    || ' IN ACCESS EXCLUSIVE MODE'
               FROM unnest(awa_internal.ring_families(p_ring)) f);
    IF awa.ring_slot_blocker(p_ring, p_slot) IS NULL THEN
        RETURN ARRAY['already_pruned', NULL];
    END IF;
    IF p_ring = 'claim' THEN
        -- receipts committed since the kept lanes were read: they were not considered
        EXECUTE format('SELECT count(*) FROM awa.%I', 'lease_claims_' || p_slot)
           INTO v_receipts;
        IF v_receipts IS DISTINCT FROM p_receipts THEN
            RETURN ARRAY['blocked', 'claim.receipts_changed'];
        END IF;
    ELSIF p_ring = 'queue' THEN
        -- entries committed since the open attempts were read: they were not considered
        EXECUTE format('SELECT (SELECT count(*) FROM awa.%I) + (SELECT count(*) FROM awa.%I)',
                       'ready_entries_' || p_slot, 'held_args_' || p_slot)
           INTO v_receipts;
        IF v_receipts IS DISTINCT FROM p_receipts THEN
            RETURN ARRAY['blocked', 'queue.entries_changed'];
        END IF;
    END IF;
    v_reason := coalesce(awa_internal.ring_slot_live_reason(p_ring, p_slot),
                         awa_internal.ring_slot_window_reason(p_ring, p_slot));
    IF v_reason IS NOT NULL THEN
        RETURN ARRAY['skipped_active', v_reason];
    END IF;
    IF p_ring = 'queue' THEN
        PERFORM awa_internal.queue_slot_hold_args(p_slot, p_held_jobs, p_held_attempts);
    END IF;
    v_reason := awa_internal.ring_slot_carry_forward(p_ring, p_slot, p_keep_lanes);
    IF v_reason IS NOT NULL THEN
        RETURN ARRAY['blocked', v_reason];
    END IF;
    PERFORM awa_internal.ring_slot_record_terminal_counts(p_ring, p_slot);
    -- only the children that have storage: TRUNCATE of a child with no block gives it
    -- a new relfilenode (new pg_class rows, dead ones under a pinned horizon) and
    -- empties nothing. Under the ACCESS EXCLUSIVE locks no one else can extend a child
    -- or hold a row of it in flight, so a size of 0 means no row at all, committed,
    -- in progress or dead (docs/storage.md, prune).
    SELECT string_agg(c::text, ', ') INTO v_truncate
      FROM unnest(awa_internal.ring_families(p_ring)) f, awa_internal.ring_child(f, p_slot) c
     WHERE pg_relation_size(c) > 0;
    IF v_truncate IS NOT NULL THEN
        EXECUTE 'TRUNCATE ' || v_truncate;
    END IF;
    -- a BRIN index on job_id (the ready child's, the receipts'), built again empty by
    -- the TRUNCATE, leaves its first range unsummarized, so that inserts into it write
    -- no summary (0.10, tables/job_id_brin.sql, tables/receipt_brin.sql); nothing for a
    -- child without one
    IF v_truncate IS NOT NULL THEN
        PERFORM awa_internal.brin_open_tail(c)
          FROM unnest(awa_internal.ring_families(p_ring)) f, awa_internal.ring_child(f, p_slot) c;
    END IF;
    -- TRUNCATE is not MVCC-safe: a pg_dump whose snapshot predates this commit would
    -- read the child empty and miss the rows carried forward or folded (docs/storage.md
    -- A.17). It locks every table, which holds prune off, but only after taking its
    -- snapshot; so no slot is truncated while one is connected to the database. Asked
    -- last, under the locks and after the TRUNCATE, so that only the commit lies between
    -- the answer and the truncation becoming visible: everything above is rolled back
    -- with the error.
    IF awa_internal.client_connected('pg_dump') THEN
        RAISE EXCEPTION 'a pg_dump is connected' USING ERRCODE = 'object_in_use';
    END IF;
    RETURN ARRAY['pruned', NULL];
END
$$;

CREATE OR REPLACE FUNCTION awa.prune(p_schema text, p_ring text,
    OUT ring text, OUT outcome text, OUT reason text, OUT slot int, OUT generation bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    -- TRUNCATE is not MVCC-safe, and the liveness proofs read the slot in the
    -- statement's snapshot: one older than the last commits (REPEATABLE READ,
    -- SERIALIZABLE) could call live rows dead
    PERFORM awa_internal.require_read_committed();
    ring := p_ring;
    PERFORM set_config('lock_timeout', awa_internal.maintenance_lock_timeout(), true);
    BEGIN
        SELECT r.outcome, r.reason, r.slot, r.generation
          INTO outcome, reason, slot, generation
          FROM awa_internal.prune_bounded(p_ring) r;
    EXCEPTION
        -- whatever it locked or wrote is rolled back with the block
        WHEN lock_not_available THEN
            outcome := 'blocked';
            reason := 'lock_timeout';
            slot := NULL;
            generation := NULL;
    END;
END
$$;

-- awa.prune's body, run under awa_internal.maintenance_lock_timeout.
CREATE OR REPLACE FUNCTION awa_internal.prune_bounded(p_ring text,
    OUT outcome text, OUT reason text, OUT slot int, OUT generation bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int;
    v_authority text;
    v_cur record;
    v_locked boolean;
    v_keep int[];
    v_receipts bigint;
    v_held_jobs bigint[];
    v_held_attempts int[];
    v_res text[];
BEGIN
    v_n := awa_internal.ring_slot_count(p_ring);

    -- read-only gates: no lock beyond ACCESS SHARE, no xid
    SELECT c.slot, c.generation INTO v_cur FROM awa.ring_cursor(p_ring) c;
    SELECT o.slot, o.generation INTO slot, generation
      FROM awa_internal.ring_oldest_sealed(v_cur.slot, v_cur.generation, v_n) o;
    IF slot IS NULL THEN
        outcome := 'noop';
        RETURN;
    END IF;
    reason := awa.ring_slot_blocker(p_ring, slot);
    IF reason IS NULL THEN
        outcome := 'already_pruned';
        RETURN;
    ELSIF reason = 'locked' THEN
        outcome := 'blocked';
        RETURN;
    END IF;
    reason := coalesce(awa_internal.ring_slot_live_reason(p_ring, slot),
                       awa_internal.ring_slot_window_reason(p_ring, slot));
    IF reason IS NOT NULL THEN
        outcome := 'skipped_active';
        RETURN;
    END IF;

    -- serializer -> slot row -> children, every gate again under them
    v_authority := awa_internal.ring_try_serializer(p_ring);
    IF v_authority IS NULL THEN
        outcome := 'blocked';
        reason := 'locked';
        RETURN;
    END IF;
    SELECT c.slot, c.generation INTO v_cur FROM awa.ring_cursor(p_ring) c;
    SELECT o.slot, o.generation INTO slot, generation
      FROM awa_internal.ring_oldest_sealed(v_cur.slot, v_cur.generation, v_n) o;
    IF slot IS NULL THEN
        outcome := 'noop';
        reason := NULL;
        RETURN;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I WHERE slot = $1 '
                   'FOR UPDATE SKIP LOCKED)', p_ring || '_ring_slots')
       INTO v_locked USING slot;
    IF NOT v_locked THEN
        outcome := 'blocked';
        reason := 'locked';
        RETURN;
    END IF;
    reason := awa_internal.ring_slot_live_reason(p_ring, slot);
    IF reason IS NOT NULL THEN
        outcome := 'skipped_active';
        RETURN;
    END IF;
    IF p_ring = 'claim' THEN
        SELECT k.lanes, k.receipts INTO v_keep, v_receipts
          FROM awa_internal.claim_slot_position_lanes(slot) k;
    ELSIF p_ring = 'queue' THEN
        SELECT o.jobs, o.attempts, o.rows INTO v_held_jobs, v_held_attempts, v_receipts
          FROM awa_internal.queue_slot_open_attempts(slot) o;
    END IF;
    BEGIN
        v_res := awa_internal.prune_locked(p_ring, slot, v_keep, v_receipts, v_held_jobs,
                                           v_held_attempts);
        outcome := v_res[1];
        reason := v_res[2];
    EXCEPTION
        -- everything this block wrote or locked is rolled back with it
        WHEN lock_not_available THEN
            outcome := 'blocked';
            reason := 'lock_timeout';
        WHEN object_in_use THEN
            outcome := 'blocked';
            reason := 'pg_dump';
    END;
END
$$;
