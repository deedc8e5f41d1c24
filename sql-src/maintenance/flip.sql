-- The flip: columns -> ledger authority, once, for good (DESIGN §6; the lock steps are
-- those model/awa_locks.pml checks: the three singletons FOR UPDATE in the order queue,
-- lease, claim, so the flip queues behind an in-flight compat or pre-ledger rotator;
-- then, still under them, the gate, the reconciliation of every ring, the poison, and
-- the authority row).

-- Under the flip's singleton locks: checks one ring's compat cursor, backfills its
-- ledger up to it and verifies that the ledger's newest row is that cursor.
CREATE OR REPLACE FUNCTION awa.flip_reconcile_ring(p_ring text) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa.ring_slot_count(p_ring);
    v_col record;
    v_max bigint;
    v_led record;
BEGIN
    EXECUTE format('SELECT current_slot AS slot, generation FROM awa.%I WHERE singleton',
                   p_ring || '_ring_state') INTO v_col;
    IF v_col.generation IS NULL OR v_col.generation < 0 OR v_col.slot IS NULL
       OR v_col.slot <> v_col.generation % v_n THEN
        RAISE EXCEPTION 'invalid % ring compat cursor (%, %); refusing to flip',
                        p_ring, v_col.slot, v_col.generation
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'The columns must hold a cursor with slot = generation mod slot_count.';
    END IF;
    EXECUTE format('SELECT max(generation) FROM awa.%I', p_ring || '_ring_rotations')
       INTO v_max;
    IF v_max > v_col.generation THEN
        RAISE EXCEPTION '% ring ledger is ahead of the compat cursor (% > %); refusing to flip',
                        p_ring, v_max, v_col.generation
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Under columns authority only the columns advance the ring.';
    END IF;
    EXECUTE format('INSERT INTO awa.%I (generation, slot) '
                   'SELECT g, (g %% $2)::int FROM generate_series($1, $3) g '
                   'ON CONFLICT (generation) DO NOTHING', p_ring || '_ring_rotations')
      USING coalesce(v_max, -1) + 1, v_n, v_col.generation;
    EXECUTE format('SELECT slot, generation FROM awa.%I ORDER BY generation DESC LIMIT 1',
                   p_ring || '_ring_rotations') INTO v_led;
    IF (v_led.slot, v_led.generation) IS DISTINCT FROM (v_col.slot, v_col.generation) THEN
        RAISE EXCEPTION '% ring ledger cursor (%, %) does not match the compat cursor (%, %)',
                        p_ring, v_led.slot, v_led.generation, v_col.slot, v_col.generation
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa.flip_ring_authority(p_schema text, p_force boolean DEFAULT false,
                                                   p_fresh_seconds float8 DEFAULT 90)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_blocking bigint;
    r text;
BEGIN
    PERFORM awa.check_schema(p_schema);
    IF p_force IS NULL THEN
        RAISE EXCEPTION 'force must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'Pass true or false.';
    END IF;
    PERFORM 1 FROM awa.queue_ring_state WHERE singleton FOR UPDATE;
    PERFORM 1 FROM awa.lease_ring_state WHERE singleton FOR UPDATE;
    PERFORM 1 FROM awa.claim_ring_state WHERE singleton FOR UPDATE;
    IF awa.ring_authority() = 'ledger' THEN
        RETURN 'ledger';
    END IF;
    SELECT s.blocking_instances INTO v_blocking
      FROM awa.ring_authority_status(p_schema, p_fresh_seconds) s;
    IF v_blocking > 0 AND NOT p_force THEN
        RAISE EXCEPTION '% fresh runtime(s) are not known to be flip-aware (>= %); refusing to flip',
                        v_blocking, awa.ring_authority_min_flip_version()
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Fresh: a heartbeat within the last %s s.', p_fresh_seconds),
                  HINT = 'SELECT * FROM awa.ring_authority_blockers(''awa'') lists them; stop or '
                         'upgrade them, or pass force => true if they are gone for good.';
    END IF;
    FOREACH r IN ARRAY ARRAY['queue', 'lease', 'claim'] LOOP
        PERFORM awa.flip_reconcile_ring(r);
    END LOOP;
    -- poison while the authority is still columns (the fence lets this through)
    UPDATE awa.queue_ring_state SET current_slot = -1, generation = -1 WHERE singleton;
    UPDATE awa.lease_ring_state SET current_slot = -1, generation = -1 WHERE singleton;
    UPDATE awa.claim_ring_state SET current_slot = -1, generation = -1 WHERE singleton;
    UPDATE awa.queue_ring_slots SET generation = -1 WHERE generation <> -1;
    UPDATE awa.lease_ring_slots SET generation = -1 WHERE generation <> -1;
    UPDATE awa.claim_ring_slots SET generation = -1 WHERE generation <> -1;
    UPDATE awa.ring_cursor_authority SET authority = 'ledger', flipped_at = now()
     WHERE singleton;
    RAISE LOG 'awa_bgw: ring cursor authority flipped from columns to ledger%',
              CASE WHEN p_force AND v_blocking > 0
                   THEN format(' (forced past %s blocking runtime(s))', v_blocking) ELSE '' END;
    RETURN 'ledger';
END
$$;
