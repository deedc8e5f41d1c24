-- The folds, in bounded batches (since 0.9), each run only past the horizon gate
-- (maintenance/horizon_gate.sql): after a long pin the delta backlog and the ledgers
-- can hold far more rows than one transaction should delete under
-- awa_bgw.step_timeout. Each call now deletes at most awa_bgw.fold_batch_size rows;
-- the worker calls again at once while a call returns a full batch, so a backlog is
-- caught up over several short transactions (until 0.9 each fold was one statement,
-- with the same signature and outputs).

CREATE OR REPLACE FUNCTION awa_internal.fold_batch_size() RETURNS bigint
LANGUAGE sql STABLE
AS $$ SELECT coalesce(current_setting('awa_bgw.fold_batch_size', true), '10000')::bigint $$;

-- Drains up to fold_batch_size delta rows into the rollups (GREATEST(0, …) clamp, keys
-- in order), unless the horizon is genuinely pinned. The rows are picked by a bounded
-- scan and deleted by ctid; only what the DELETE returned is added, so a concurrent
-- fold never adds a row twice.
CREATE OR REPLACE FUNCTION awa.fold_terminal_rollup_deltas(p_schema text,
    OUT outcome text, OUT folded_rows bigint, OUT folded_keys bigint, OUT pin text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_deltas awa.rollup_delta[];
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    pin := awa_internal.horizon_pin_holder(awa_internal.fold_min_age());
    IF pin IS NOT NULL THEN
        outcome := 'stood_down';
        RETURN;
    END IF;
    WITH d AS (
        DELETE FROM awa.queue_terminal_rollup_deltas
         WHERE ctid = ANY (ARRAY(SELECT ctid FROM awa.queue_terminal_rollup_deltas
                                  LIMIT awa_internal.fold_batch_size()))
        RETURNING queue, priority, pruned_completed_delta, pruned_failed_delta)
    SELECT coalesce(array_agg(ROW(a.queue, a.priority, a.c, a.f)::awa.rollup_delta
                              ORDER BY a.queue, a.priority), '{}'),
           coalesce(sum(a.n), 0)
      INTO v_deltas, folded_rows
      FROM (SELECT queue, priority, count(*) AS n, sum(pruned_completed_delta) AS c,
                   sum(pruned_failed_delta) AS f
              FROM d GROUP BY queue, priority) a;
    folded_keys := cardinality(v_deltas);
    -- the clamp applies to the new total: GREATEST(0, rollup + delta)
    INSERT INTO awa.queue_terminal_rollups AS r
           (queue, priority, pruned_completed_count, pruned_failed_count)
    SELECT x.queue, x.priority, greatest(0, x.completed), greatest(0, x.failed)
      FROM unnest(v_deltas) x ORDER BY x.queue, x.priority
    ON CONFLICT (queue, priority) DO UPDATE
       SET pruned_completed_count = greatest(0, r.pruned_completed_count
           + (SELECT y.completed FROM unnest(v_deltas) y
               WHERE y.queue = EXCLUDED.queue AND y.priority = EXCLUDED.priority)),
           pruned_failed_count = greatest(0, r.pruned_failed_count
           + (SELECT y.failed FROM unnest(v_deltas) y
               WHERE y.queue = EXCLUDED.queue AND y.priority = EXCLUDED.priority));
    outcome := 'folded';
END
$$;

-- Trims the ledgers towards their newest slot_count rows (one wrap), oldest rows first
-- through the primary key, at most fold_batch_size rows in all per call (queue ring
-- first), unless the horizon is genuinely pinned.
CREATE OR REPLACE FUNCTION awa.fold_ring_rotation_ledgers(p_schema text,
    OUT outcome text, OUT trimmed_rows bigint, OUT pin text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r text;
    n bigint;
    v_budget bigint := awa_internal.fold_batch_size();
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    pin := awa_internal.horizon_pin_holder(awa_internal.fold_min_age());
    IF pin IS NOT NULL THEN
        outcome := 'stood_down';
        RETURN;
    END IF;
    trimmed_rows := 0;
    FOREACH r IN ARRAY ARRAY['queue', 'lease', 'claim'] LOOP
        EXIT WHEN v_budget <= 0;
        EXECUTE format('DELETE FROM awa.%1$I WHERE generation < least('
                       '(SELECT max(generation) FROM awa.%1$I) - ($1 - 1), '
                       '(SELECT min(generation) FROM awa.%1$I) + $2)',
                       r || '_ring_rotations')
          USING awa_internal.ring_slot_count(r), v_budget;
        GET DIAGNOSTICS n = ROW_COUNT;
        trimmed_rows := trimmed_rows + n;
        v_budget := v_budget - n;
    END LOOP;
    outcome := 'folded';
END
$$;

-- Deletes up to fold_batch_size rows of failed_jobs older than awa_bgw.failed_retention,
-- oldest first through the failed_at index (the scan stops after the batch, however many
-- younger rows the table holds); the rows are deleted by ctid. The worker calls it again
-- at once while a call returns a full batch, so thousands of failures a minute are purged
-- over several short transactions. Ungated: awa.purge_failed_jobs_gated adds the gate.
CREATE OR REPLACE FUNCTION awa_internal.purge_failed_jobs(p_schema text, OUT purged bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_keep interval := coalesce(current_setting('awa_bgw.failed_retention', true),
                                '7d')::interval;
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    DELETE FROM awa.failed_jobs
     WHERE ctid = ANY (ARRAY(SELECT x.ctid FROM awa.failed_jobs x
                              WHERE x.failed_at < now() - v_keep
                              ORDER BY x.failed_at
                              LIMIT awa_internal.fold_batch_size()));
    GET DIAGNOSTICS purged = ROW_COUNT;
END
$$;
