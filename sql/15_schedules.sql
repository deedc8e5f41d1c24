-- Periodic jobs: awa.cron_next on each kind of field, names, the day-of-month /
-- day-of-week OR rule, steps, month ends, leap years and DST transitions, with exact
-- expected instants; bad input with its SQLSTATE; awa.schedule / unschedule and
-- awa.fire_due_schedules run by hand (one job per due schedule, one catch-up run after
-- missed fire times); grants.
\i sql/fresh.inc
SET timezone = 'UTC';
\set SHOW_CONTEXT never

-- 1. next fire times in UTC (the instant after "after", strictly)
SELECT cron, after, awa.cron_next(cron, after) AS next
  FROM (VALUES
    ('* * * * *',          '2026-01-01 10:00:30+00'::timestamptz),
    ('5 * * * *',          '2026-01-01 10:05:00+00'),   -- strictly after
    ('*/15 * * * *',       '2026-01-01 10:00:00+00'),
    ('10-20/5 * * * *',    '2026-01-01 10:16:00+00'),
    ('10-20/5 * * * *',    '2026-01-01 10:20:00+00'),   -- past the range: next hour
    ('5/20 * * * *',       '2026-01-01 10:05:00+00'),   -- a/n: 5, 25, 45
    ('0,30 9,17 * * *',    '2026-01-01 09:00:00+00'),
    ('0,30 9,17 * * *',    '2026-01-01 17:30:00+00'),   -- next day
    ('0 8-10 * * *',       '2026-01-01 10:00:00+00'),
    ('0 0 1 * *',          '2026-01-15 00:00:00+00'),
    ('0 12 31 * *',        '2026-01-31 13:00:00+00'),   -- February has no 31st
    ('0 0 30 * *',         '2026-01-30 00:00:00+00'),   -- ... nor a 30th
    ('0 0 29 2 *',         '2026-01-01 00:00:00+00'),   -- the next leap year
    ('0 0 29 2 *',         '2096-03-01 00:00:00+00'),   -- 2100 is not a leap year
    ('59 23 31 12 *',      '2026-12-31 23:59:00+00'),   -- a year on
    ('0 0 * JAN,jul *',    '2026-02-01 00:00:00+00'),   -- month names, any case
    ('0 0 1 2-4/2 *',      '2026-02-01 00:00:00+00'),   -- February, April
    ('0 0 1 FEB-DEC/5 *',  '2026-02-01 00:00:00+00'),   -- February, July, December
    ('0 9 * * MON-FRI',    '2026-01-02 10:00:00+00'),   -- Friday -> Monday
    ('0 9 * * 0',          '2026-01-01 00:00:00+00'),   -- Sunday 0 ...
    ('0 9 * * 7',          '2026-01-01 00:00:00+00'),   -- ... and 7
    ('0 9 * * sun',        '2026-01-01 00:00:00+00'),
    ('0 9 * * 5-7',        '2026-01-03 10:00:00+00'),   -- Fri-Sun: Saturday done -> Sunday
    ('0 0 * * */2',        '2026-01-01 00:00:00+00'),   -- Sun, Tue, Thu, Sat
    ('0 0 13 * 1',         '2026-01-01 00:00:00+00'),   -- 13th OR Monday: Monday the 5th
    ('0 0 13 * 1',         '2026-01-12 00:00:00+00'),   -- ... then Tuesday the 13th
    ('0 0 1 * */2',        '2026-01-01 00:00:00+00'),   -- */2 restricts: OR rule
    ('0 0 29 2 MON',       '2026-01-01 00:00:00+00'),   -- any Monday of February
    (E'0  0\t1 1 *',       '2026-06-01 00:00:00+00')    -- spaces and tabs
  ) v(cron, after);

-- 2. time zones. Europe/Berlin springs forward on 2026-03-29 at 02:00 CET (01:00 UTC)
-- and falls back on 2026-10-25 at 03:00 CEST (01:00 UTC); America/New_York on
-- 2026-03-08 at 02:00 EST (07:00 UTC) and 2026-11-01 at 02:00 EDT (06:00 UTC). A
-- skipped wall-clock time fires once at the end of the gap; a repeated one fires once,
-- at its first occurrence.
SELECT cron, tz, after, awa.cron_next(cron, after, tz) AS next
  FROM (VALUES
    ('0 9 * * *',      'Europe/Berlin',    '2026-01-01 00:00:00+00'::timestamptz),
    ('0 9 * * *',      'Europe/Berlin',    '2026-07-01 00:00:00+00'),   -- summer: +2
    ('0 9 * * *',      'Asia/Kolkata',     '2026-01-01 00:00:00+00'),   -- +05:30
    ('30 2 * * *',     'Europe/Berlin',    '2026-03-28 12:00:00+00'),   -- skipped: 03:00 CEST
    ('30 2 * * *',     'Europe/Berlin',    '2026-03-29 01:00:00+00'),   -- then the next day
    ('*/15 2 * * *',   'Europe/Berlin',    '2026-03-28 12:00:00+00'),   -- the gap fires once
    ('*/15 2 * * *',   'Europe/Berlin',    '2026-03-29 01:00:00+00'),
    ('30 2,3 * * *',   'Europe/Berlin',    '2026-03-29 01:00:00+00'),   -- 03:30 CEST still fires
    ('59 1 * * *',     'Europe/Berlin',    '2026-03-28 12:00:00+00'),   -- just before the gap
    ('30 2 * * *',     'Europe/Berlin',    '2026-10-24 12:00:00+00'),   -- repeated: first, CEST
    ('30 2 * * *',     'Europe/Berlin',    '2026-10-25 00:30:00+00'),   -- not again in CET
    ('30 2 * * *',     'Europe/Berlin',    '2026-10-25 01:10:00+00'),   -- from inside the repeat
    ('*/30 * * * *',   'Europe/Berlin',    '2026-10-25 00:30:00+00'),   -- pauses for the repeat
    ('30 2 * * *',     'America/New_York', '2026-03-07 12:00:00+00'),   -- 03:00 EDT
    ('30 1 * * *',     'America/New_York', '2026-10-31 12:00:00+00'),   -- 01:30 EDT
    ('30 1 * * *',     'America/New_York', '2026-11-01 05:30:00+00'),   -- next: 01:30 EST
    ('0 0 1 * *',      'America/New_York', '2026-01-01 04:59:00+00')
  ) v(cron, tz, after);

-- 3. bad input: 22023 with the field and its range in the hint, 23502 for NULL; an
-- expression that can never fire is refused at once
SELECT awa.cron_next('0 25 * * *', now());
SELECT awa.cron_next('0 0 * * MOO', now());
SELECT awa.cron_next('0 0 31 2 *', now());
CREATE FUNCTION pg_temp.cron_error_of(p_cron text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_detail text;
BEGIN
    PERFORM awa.cron_next(p_cron, now());
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_detail = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || coalesce(nullif(v_detail, ''), SQLERRM);
END $$;
SELECT left(cron, 20) AS cron, pg_temp.cron_error_of(cron) AS result
  FROM (VALUES ('60 * * * *'), ('* 24 * * *'), ('* * 0 * *'), ('* * 32 * *'),
               ('* * * 0 *'), ('* * * 13 *'), ('* * * * 8'), ('* * * FOO *'),
               ('*/0 * * * *'), ('*/61 * * * *'), ('5-1 * * * *'), ('1-2-3 * * * *'),
               ('1/2/3 * * * *'), ('1,,2 * * * *'), ('x * * * *'), ('-1 * * * *'),
               ('* * * *'), ('* * * * * *'), (''), ('0 0 30 2 *'),
               ('0 0 31 4,6,9,11 *'), (repeat('1,', 100) || '1 * * * *')) v(cron);
SELECT sqlstate_of($$SELECT awa.cron_next(NULL, now())$$) AS null_cron,
       sqlstate_of($$SELECT awa.cron_next('* * * * *', NULL)$$) AS null_after,
       sqlstate_of($$SELECT awa.cron_next('* * * * *', 'infinity')$$) AS infinite_after,
       sqlstate_of($$SELECT awa.cron_next('* * * * *', now(), NULL)$$) AS null_zone;
SELECT awa.cron_next('* * * * *', now(), 'Mars/Olympus_Mons');

-- 4. awa.schedule: create, returns the next fire time; the same name replaces
SELECT awa.schedule('every5', '*/5 * * * *', 'sched', 'tick', '{"n": 1}')
       = awa.cron_next('*/5 * * * *', now()) AS returns_next;
SELECT created_at AS created FROM awa.job_schedules WHERE name = 'every5' \gset
SELECT awa.schedule('every5', '*/5 * * * *', 'sched', 'tock', '{"n": 2}', 'Europe/Berlin',
                    priority => 2::smallint, max_attempts => 3)
       = awa.cron_next('*/5 * * * *', now(), 'Europe/Berlin') AS replaced;
SELECT name, cron, timezone, queue, kind, args, priority, max_attempts, last_run_at,
       last_job_id, last_error, created_at = :'created' AS created_kept
  FROM awa.schedules;

-- bad input to awa.schedule: each refused, nothing written
SELECT call, sqlstate_of('SELECT awa.schedule(' || call || ')') AS result
  FROM (VALUES ($$NULL, '* * * * *', 'q', 'k'$$), ($$'', '* * * * *', 'q', 'k'$$),
               ($$repeat('n', 201), '* * * * *', 'q', 'k'$$),
               ($$'b', '* * * * *', NULL, 'k'$$), ($$'b', '* * * * *', 'q', NULL$$),
               ($$'b', NULL, 'q', 'k'$$), ($$'b', '61 * * * *', 'q', 'k'$$),
               ($$'b', '* * * * *', 'q', 'k', '[1]'$$),
               ($$'b', '* * * * *', 'q', 'k', NULL$$),
               ($$'b', '* * * * *', 'q', 'k', timezone => 'Mars/Base'$$),
               ($$'b', '* * * * *', 'q', 'k', timezone => '+03'$$),
               ($$'b', '* * * * *', 'q', 'k', timezone => NULL$$),
               ($$'b', '* * * * *', 'q', 'k', priority => 10::smallint$$),
               ($$'b', '* * * * *', 'q', 'k', max_attempts => 0$$)) v(call);
SELECT count(*) AS schedules FROM awa.job_schedules;

-- 5. awa.fire_due_schedules by hand, with the schedule forced due: one job, next run
-- advanced; fire times missed (10:00 to 10:15) give one catch-up run, then 10:20
UPDATE awa.job_schedules SET next_run_at = '2026-01-01 10:00:00+00';
SELECT * FROM awa.fire_due_schedules('awa', '2026-01-01 10:17:00+00');
SELECT next_run_at, last_run_at, last_job_id = (SELECT max(job_id) FROM awa.ready_entries)
       AS last_job FROM awa.schedules;
SELECT kind, args, priority, max_attempts FROM awa.ready_entries WHERE queue = 'sched';
SELECT * FROM awa.fire_due_schedules('awa', '2026-01-01 10:19:59+00');   -- not due
SELECT * FROM awa.fire_due_schedules('awa', '2026-01-01 10:20:00+00');   -- due again
SELECT next_run_at, last_run_at FROM awa.schedules;
SELECT count(*) AS jobs FROM awa.ready_entries WHERE queue = 'sched';
-- at the real now it is due (2026-01-01 10:25 is past): one catch-up run, then the
-- next fire time after now
SELECT * FROM awa.fire_due_schedules('awa');
SELECT next_run_at = awa.cron_next('*/5 * * * *', now(), 'Europe/Berlin') AS next_from_now
  FROM awa.schedules;
SELECT * FROM awa.fire_due_schedules('awa');
SELECT count(*) AS jobs FROM awa.ready_entries WHERE queue = 'sched';

-- a run that cannot be enqueued (a row written past awa.schedule's checks) is reported,
-- stays due, and does not keep the others from firing
SELECT awa.schedule('good', '0 * * * *', 'sched', 'good') IS NOT NULL AS scheduled;
INSERT INTO awa.job_schedules (name, cron, timezone, queue, kind, args, priority,
                               max_attempts, next_run_at)
VALUES ('broken', '0 * * * *', 'UTC', 'sched', 'k', '{}', 42, 25, '2026-01-01 09:00+00');
UPDATE awa.job_schedules SET next_run_at = '2026-01-01 10:00:00+00' WHERE name = 'good';
SELECT * FROM awa.fire_due_schedules('awa', '2026-01-01 10:30:00+00');
SELECT name, next_run_at, last_error FROM awa.schedules WHERE name IN ('good', 'broken')
 ORDER BY name;
SELECT awa.unschedule('broken') AS removed, awa.unschedule('broken') AS again,
       awa.unschedule('nope') AS unknown;
SELECT sqlstate_of($$SELECT awa.unschedule(NULL)$$) AS null_name;
SELECT sqlstate_of($$SELECT * FROM awa.fire_due_schedules('elsewhere')$$) AS other_schema;

-- 6. grants: operator functions are not for PUBLIC; pg_monitor reads the view
CREATE ROLE awa_test_nobody;
CREATE ROLE awa_test_monitor IN ROLE pg_monitor;
SET ROLE awa_test_nobody;
SELECT sqlstate_of($$SELECT awa.schedule('x', '* * * * *', 'q', 'k')$$) AS schedule,
       sqlstate_of($$SELECT awa.unschedule('good')$$) AS unschedule,
       sqlstate_of($$SELECT * FROM awa.fire_due_schedules()$$) AS fire,
       sqlstate_of($$SELECT awa.cron_next('* * * * *', now())$$) AS cron_next,
       sqlstate_of($$SELECT count(*) FROM awa.schedules$$) AS view;
SET ROLE awa_test_monitor;
SELECT name, kind FROM awa.schedules ORDER BY name;
SELECT sqlstate_of($$SELECT count(*) FROM awa.job_schedules$$) AS table_read,
       sqlstate_of($$SELECT awa.unschedule('good')$$) AS unschedule;
RESET ROLE;
DROP ROLE awa_test_nobody;
DROP ROLE awa_test_monitor;
SELECT awa.unschedule('good'), awa.unschedule('every5');

-- a promotion enters its batch of due jobs oldest run_at first, so a job due earlier is
-- claimed earlier, whatever its job id (0.9 sorted the batch by job id): the second
-- enqueue is due first
SELECT awa.enqueue('promo_order', 'first_enqueued', run_at => now() + interval '1 hour') AS a,
       awa.enqueue('promo_order', 'second_enqueued', run_at => now() + interval '2 hours') AS b \gset
UPDATE awa.deferred_jobs
   SET run_at = now() - CASE WHEN job_id = :a THEN interval '1 minute' ELSE interval '2 minutes' END
 WHERE job_id IN (:a, :b);
SELECT promoted FROM awa.promote_deferred('awa');
SELECT kind FROM awa.claim('promo_order', 2);
