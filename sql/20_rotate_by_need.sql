-- Rings that turn by need (0.10; docs/operations.md, "Rings that turn by need"):
-- awa_internal.ring_rotation_due, and awa_internal.rotate_when_due, which the worker
-- runs instead of awa.rotate while awa_bgw.rotate_fill is above 0.
\i sql/fresh.inc

-- an idle ring: 'idle' whatever the settings, and rotate_when_due skips it as idle
SELECT awa_internal.ring_rotation_due('queue', '1 hour', 1, '0') AS idle,
       awa_internal.ring_rotation_due('queue', '0', 1, '0') AS idle_too;
SELECT outcome, due FROM awa_internal.rotate_when_due('queue', '1 hour', 1, '0');

-- one job in the current slot (one block): due by fill when the fill is 1 block and the
-- slot is old enough, by age once the slot is as old as the interval; not due otherwise
SELECT awa.enqueue('need', 'k') > 0 AS enqueued;
SELECT awa_internal.ring_rotation_due('queue', '1 hour', 1, '0') AS fill,
       awa_internal.ring_rotation_due('queue', '1 hour', 2, '0') AS below_fill,
       awa_internal.ring_rotation_due('queue', '1 hour', 1, '1 hour') AS too_young,
       awa_internal.ring_rotation_due('queue', '0', 1000, '1 hour') AS age,
       awa_internal.ring_rotation_due('queue', '1 hour', NULL, '0') AS by_age_alone;
-- not due: nothing rotates, and the outcome says why (the ring holds rows: not idle)
SELECT outcome, slot, due FROM awa_internal.rotate_when_due('queue', '1 hour', 1000, '0');
SELECT slot, generation FROM awa.ring_cursor('queue');
-- due: awa.rotate runs, under its own gates
SELECT outcome, slot, generation, due FROM awa_internal.rotate_when_due('queue', '1 hour', 1, '0');
-- the new current slot is empty and an older one holds the job: due to drain, once the
-- slot is as old as the floor
SELECT awa_internal.ring_rotation_due('queue', '1 hour', 1000, '0') AS drain,
       awa_internal.ring_rotation_due('queue', '1 hour', 1000, '1 hour') AS drain_too_young;
SELECT outcome, slot, due FROM awa_internal.rotate_when_due('queue', '1 hour', 1000, '0');
-- by age alone (fill NULL, as the worker passes a rotate_fill of 0): awa.rotate at once
SELECT outcome, slot, due FROM awa_internal.rotate_when_due('queue', '1 hour', NULL, '0');

-- draining: the job claimed and completed, the ring turns through its empty slots and,
-- pruned as it goes, comes back to idle; no slot with rows turns before the floor
SELECT count(*) FROM (SELECT awa.complete(job_id, run_lease) FROM awa.claim('need')) c;
CREATE TEMP TABLE drain_log AS SELECT 0 AS step, ''::text AS rotate, ''::text AS due,
    ''::text AS prune WHERE false;
DO $$
DECLARE
    i int;
    r record;
    p record;
BEGIN
    FOR i IN 1 .. 20 LOOP
        SELECT * INTO r FROM awa_internal.rotate_when_due('queue', '1 hour', 1000, '0');
        SELECT * INTO p FROM awa.prune('awa', 'queue');
        INSERT INTO drain_log VALUES (i, r.outcome, r.due, p.outcome);
        EXIT WHEN r.outcome = 'skipped_idle';
    END LOOP;
END $$;
SELECT rotate, due, prune, count(*) FROM drain_log GROUP BY 1, 2, 3 ORDER BY min(step);
SELECT awa_internal.ring_is_idle('queue') AS idle_again;

-- bad arguments: 22023 with a hint, nothing written
SELECT sqlstate_of($$SELECT awa_internal.ring_rotation_due('queue', '-1 s', 1, '0')$$);
SELECT sqlstate_of($$SELECT awa_internal.ring_rotation_due('queue', NULL, 1, '0')$$);
SELECT sqlstate_of($$SELECT awa_internal.ring_rotation_due('queue', '1 s', -1, '0')$$);
SELECT sqlstate_of($$SELECT awa_internal.ring_rotation_due('queue', '1 s', 1, '-1 s')$$);
SELECT sqlstate_of($$SELECT awa_internal.ring_rotation_due('nosuch', '1 s', 1, '0')$$);
