-- Periodic jobs (docs/operations.md, "Periodic jobs"): a five-field cron parser, the
-- next fire time of an expression in a time zone, awa.schedule / awa.unschedule, the
-- awa.schedules view, and the step the maintenance leader runs once a second,
-- awa.fire_due_schedules, which enqueues each due run exactly once.

-- A bad cron expression: 22023, the field at fault and its allowed values in the hint.
CREATE OR REPLACE FUNCTION awa_internal.cron_error(p_cron text, p_what text, p_problem text,
                                          p_range text) RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'invalid cron expression "%"', p_cron
        USING ERRCODE = 'invalid_parameter_value',
              DETAIL = format('The %s field: %s.', p_what, p_problem),
              HINT = format('The %s field takes %s, as *, a value, a list a,b, a range '
                            'a-b, or a step */n, a-b/n or a/n.', p_what, p_range);
END
$$;

-- One value of a field: a number from p_lo to p_hi, or a name (p_names[i] is p_lo + i - 1).
CREATE OR REPLACE FUNCTION awa_internal.cron_value(p_cron text, p_what text, p_token text,
                                          p_lo int, p_hi int, p_names text[], p_range text)
RETURNS int
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v int;
BEGIN
    IF p_token ~ '^[0-9]{1,2}$' THEN
        v := p_token::int;
        IF v < p_lo OR v > p_hi THEN
            PERFORM awa_internal.cron_error(p_cron, p_what, format('%s is out of range', p_token), p_range);
        END IF;
        RETURN v;
    END IF;
    v := array_position(p_names, upper(p_token));
    IF v IS NULL THEN
        PERFORM awa_internal.cron_error(p_cron, p_what,
                               format('"%s" is not a value', left(p_token, 20)), p_range);
    END IF;
    RETURN p_lo + v - 1;
END
$$;

-- The values one field allows, sorted and distinct. p_star_hi: the top of * (6 for the
-- day of week, whose 7 is also Sunday and becomes 0).
CREATE OR REPLACE FUNCTION awa_internal.cron_field(p_cron text, p_what text, p_field text,
                                          p_lo int, p_hi int, p_star_hi int, p_names text[])
RETURNS int[]
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_range text := format('%s-%s', p_lo, p_hi)
        || CASE WHEN p_names IS NULL THEN ''
                ELSE format(' or the names %s-%s', p_names[1], p_names[cardinality(p_names)])
           END;
    v_item text;
    v_parts text[];
    v_bounds text[];
    v_from int;
    v_to int;
    v_step int;
    v_values int[] := '{}';
BEGIN
    FOREACH v_item IN ARRAY string_to_array(p_field, ',') LOOP
        v_parts := string_to_array(v_item, '/');
        IF v_item = '' OR cardinality(v_parts) > 2 THEN
            PERFORM awa_internal.cron_error(p_cron, p_what, format('"%s" is not a value, range or step',
                                                         left(v_item, 20)), v_range);
        END IF;
        v_step := 1;
        IF cardinality(v_parts) = 2 THEN
            IF v_parts[2] !~ '^[0-9]{1,2}$' OR v_parts[2]::int NOT BETWEEN 1 AND p_hi THEN
                PERFORM awa_internal.cron_error(p_cron, p_what,
                                       format('step "%s" is not a number from 1 to %s',
                                              left(v_parts[2], 20), p_hi), v_range);
            END IF;
            v_step := v_parts[2]::int;
        END IF;
        IF v_parts[1] = '*' THEN
            v_from := p_lo;
            v_to := p_star_hi;
        ELSE
            v_bounds := string_to_array(v_parts[1], '-');
            IF cardinality(v_bounds) > 2 THEN
                PERFORM awa_internal.cron_error(p_cron, p_what, format('"%s" is not a range',
                                                             left(v_parts[1], 20)), v_range);
            END IF;
            v_from := awa_internal.cron_value(p_cron, p_what, v_bounds[1], p_lo, p_hi, p_names, v_range);
            IF cardinality(v_bounds) = 2 THEN
                v_to := awa_internal.cron_value(p_cron, p_what, v_bounds[2], p_lo, p_hi, p_names, v_range);
                IF v_to < v_from THEN
                    PERFORM awa_internal.cron_error(p_cron, p_what,
                                           format('range %s runs backwards', v_parts[1]), v_range);
                END IF;
            ELSIF cardinality(v_parts) = 2 THEN
                v_to := p_star_hi;      -- a/n: from a to the top
            ELSE
                v_to := v_from;
            END IF;
        END IF;
        v_values := v_values || ARRAY(SELECT g FROM generate_series(v_from, v_to, v_step) g);
    END LOOP;
    IF p_star_hi < p_hi THEN
        v_values := ARRAY(SELECT CASE WHEN v = p_hi THEN p_lo ELSE v END FROM unnest(v_values) v);
    END IF;
    RETURN ARRAY(SELECT DISTINCT v FROM unnest(v_values) v ORDER BY v);
END
$$;

-- A five-field cron expression (minute hour day-of-month month day-of-week), parsed;
-- an expression that can never fire (0 0 30 2 *) is refused.
CREATE OR REPLACE FUNCTION awa_internal.cron_parse(p_cron text, OUT minutes int[], OUT hours int[],
                                          OUT doms int[], OUT months int[], OUT dows int[],
                                          OUT dom_star boolean, OUT dow_star boolean)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_fields text[];
    v_month_names text[] := '{JAN,FEB,MAR,APR,MAY,JUN,JUL,AUG,SEP,OCT,NOV,DEC}';
    v_days_in_month int[] := '{31,29,31,30,31,30,31,31,30,31,30,31}';
BEGIN
    IF p_cron IS NULL THEN
        RAISE EXCEPTION 'invalid cron expression NULL' USING ERRCODE = 'null_value_not_allowed',
              HINT = 'A cron expression has five fields: minute hour day-of-month month day-of-week.';
    END IF;
    IF length(p_cron) > 200 THEN
        RAISE EXCEPTION 'invalid cron expression (% characters)', length(p_cron)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A cron expression is at most 200 characters.';
    END IF;
    v_fields := regexp_split_to_array(btrim(p_cron, E' \t\n\r'), E'[ \t\n\r]+');
    IF v_fields = '{""}' THEN
        v_fields := '{}';
    END IF;
    IF cardinality(v_fields) <> 5 THEN
        RAISE EXCEPTION 'invalid cron expression "%"', p_cron
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('It has %s fields, not 5.', cardinality(v_fields)),
                  HINT = 'A cron expression has five fields: minute hour day-of-month '
                         'month day-of-week, for example ''30 2 * * MON-FRI''.';
    END IF;
    minutes := awa_internal.cron_field(p_cron, 'minute', v_fields[1], 0, 59, 59, NULL);
    hours := awa_internal.cron_field(p_cron, 'hour', v_fields[2], 0, 23, 23, NULL);
    doms := awa_internal.cron_field(p_cron, 'day-of-month', v_fields[3], 1, 31, 31, NULL);
    months := awa_internal.cron_field(p_cron, 'month', v_fields[4], 1, 12, 12, v_month_names);
    dows := awa_internal.cron_field(p_cron, 'day-of-week', v_fields[5], 0, 7, 6,
                           '{SUN,MON,TUE,WED,THU,FRI,SAT}');
    dom_star := v_fields[3] = '*';
    dow_star := v_fields[5] = '*';
    IF dow_star AND NOT EXISTS (
            SELECT 1 FROM unnest(months) m, unnest(doms) d
             WHERE d <= v_days_in_month[m]) THEN
        RAISE EXCEPTION 'invalid cron expression "%"', p_cron
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'No month it names has a day it names: it would never fire.',
                  HINT = 'February has at most 29 days; April, June, September and '
                         'November have 30.';
    END IF;
END
$$;

-- A time zone name: NULL is 23502, a name PostgreSQL does not know is 22023.
CREATE OR REPLACE FUNCTION awa_internal.check_timezone(p_timezone text) RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_timezone IS NULL THEN
        RAISE EXCEPTION 'invalid time zone NULL' USING ERRCODE = 'null_value_not_allowed',
              HINT = 'Name an IANA time zone, for example ''UTC'' or ''Europe/Berlin''.';
    END IF;
    IF length(p_timezone) BETWEEN 1 AND 64 THEN
        BEGIN
            PERFORM now() AT TIME ZONE p_timezone;
            RETURN;
        EXCEPTION WHEN invalid_parameter_value OR feature_not_supported THEN
            NULL;
        END;
    END IF;
    RAISE EXCEPTION 'invalid time zone "%"', left(p_timezone, 64)
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Name an IANA time zone (see pg_timezone_names), for example ''UTC'' '
                     'or ''Europe/Berlin''.';
END
$$;

-- The instant a local wall-clock time fires in a zone. A time that occurs twice (the
-- hour repeated when clocks go back) fires once, at its first occurrence; a time that
-- does not occur (the hour skipped when clocks go forward) fires at the first minute
-- that does, the end of the gap.
CREATE OR REPLACE FUNCTION awa_internal.cron_local_instant(p_local timestamp, p_timezone text)
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_plain timestamptz := p_local AT TIME ZONE p_timezone;
    v_best timestamptz;
    v_try timestamptz;
    v_at timestamptz;
    v_local timestamp;
    i int;
BEGIN
    -- each offset in force from a day before to a day after (no zone changes twice a day)
    FOREACH v_at IN ARRAY ARRAY[v_plain - interval '1 day', v_plain, v_plain + interval '1 day'] LOOP
        v_try := (p_local - ((v_at AT TIME ZONE p_timezone) - (v_at AT TIME ZONE 'UTC')))
                 AT TIME ZONE 'UTC';
        IF (v_try AT TIME ZONE p_timezone) = p_local AND (v_best IS NULL OR v_try < v_best) THEN
            v_best := v_try;
        END IF;
    END LOOP;
    IF v_best IS NOT NULL THEN
        RETURN v_best;
    END IF;
    FOR i IN 1 .. 1440 LOOP
        v_local := p_local + make_interval(mins => i);
        v_try := v_local AT TIME ZONE p_timezone;
        IF (v_try AT TIME ZONE p_timezone) = v_local THEN
            RETURN v_try;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'awa_bgw: no local time in % within a day after %', p_timezone, p_local;
END
$$;

-- The first fire time of p_cron after p_after (strictly), in the zone p_timezone.
-- Searches at most ten years ahead (an expression that is valid fires within eight).
CREATE OR REPLACE FUNCTION awa.cron_next(p_cron text, p_after timestamptz,
                                         p_timezone text DEFAULT 'UTC')
RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c record;
    v_local timestamp;
    v_limit timestamp;
    v_at timestamptz;
    v_next int;
    v_dom_ok boolean;
    v_dow_ok boolean;
BEGIN
    c := awa_internal.cron_parse(p_cron);
    PERFORM awa_internal.check_timezone(p_timezone);
    IF p_after IS NULL OR NOT isfinite(p_after) THEN
        RAISE EXCEPTION 'cron_next needs a finite time to start from, not %',
                        coalesce(p_after::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_local := date_trunc('minute', p_after AT TIME ZONE p_timezone) + interval '1 minute';
    v_limit := v_local + interval '10 years';
    WHILE v_local <= v_limit LOOP
        IF NOT extract(month FROM v_local)::int = ANY (c.months) THEN
            v_local := date_trunc('month', v_local) + interval '1 month';
            CONTINUE;
        END IF;
        v_dom_ok := extract(day FROM v_local)::int = ANY (c.doms);
        v_dow_ok := extract(dow FROM v_local)::int = ANY (c.dows);
        -- both restricted: either matches (a * day-of-month leaves the day of week alone)
        v_dom_ok := CASE WHEN c.dom_star THEN v_dow_ok
                         WHEN c.dow_star THEN v_dom_ok
                         ELSE v_dom_ok OR v_dow_ok END;
        IF NOT v_dom_ok THEN
            v_local := date_trunc('day', v_local) + interval '1 day';
            CONTINUE;
        END IF;
        SELECT min(h) INTO v_next FROM unnest(c.hours) h WHERE h >= extract(hour FROM v_local);
        IF v_next IS NULL THEN
            v_local := date_trunc('day', v_local) + interval '1 day';
            CONTINUE;
        ELSIF v_next > extract(hour FROM v_local) THEN
            v_local := date_trunc('day', v_local) + make_interval(hours => v_next);
        END IF;
        SELECT min(m) INTO v_next FROM unnest(c.minutes) m WHERE m >= extract(minute FROM v_local);
        IF v_next IS NULL THEN
            v_local := date_trunc('hour', v_local) + interval '1 hour';
            CONTINUE;
        END IF;
        v_local := date_trunc('hour', v_local) + make_interval(mins => v_next);
        v_at := awa_internal.cron_local_instant(v_local, p_timezone);
        IF v_at > p_after THEN
            RETURN v_at;
        END IF;
        v_local := v_local + interval '1 minute';
    END LOOP;
    RAISE EXCEPTION 'cron expression "%" has no fire time within ten years after %',
                    p_cron, p_after
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Check the day-of-month and month fields.';
END
$$;

-- Create or replace the schedule p_name: run kind on queue at each fire time of p_cron
-- in p_timezone. Returns the next fire time. A schedule replaced keeps its created_at
-- and last run; its next run is computed afresh from now.
CREATE OR REPLACE FUNCTION awa.schedule(name text, cron text, queue text, kind text,
                                        args jsonb DEFAULT '{}', timezone text DEFAULT 'UTC',
                                        priority int DEFAULT 0, max_attempts int DEFAULT 25)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_next timestamptz;
BEGIN
    PERFORM awa_internal.check_name('schedule name', schedule.name);
    PERFORM awa_internal.check_job(schedule.queue, schedule.kind, schedule.args, schedule.priority,
                          now(), schedule.max_attempts);
    PERFORM awa_internal.cron_parse(schedule.cron);
    PERFORM awa_internal.check_timezone(schedule.timezone);
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_timezone_names z WHERE z.name = schedule.timezone) THEN
        RAISE EXCEPTION 'invalid time zone "%"', schedule.timezone
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A schedule takes a time zone name of pg_timezone_names, not an '
                           'abbreviation or a POSIX offset.',
                  HINT = 'Name an IANA time zone, for example ''UTC'' or ''Europe/Berlin''.';
    END IF;
    v_next := awa.cron_next(schedule.cron, now(), schedule.timezone);
    INSERT INTO awa.job_schedules AS s (name, cron, timezone, queue, kind, args, priority,
                                        max_attempts, next_run_at)
    VALUES (schedule.name, schedule.cron, schedule.timezone, schedule.queue, schedule.kind,
            schedule.args, schedule.priority, schedule.max_attempts, v_next)
    ON CONFLICT ON CONSTRAINT job_schedules_pkey DO UPDATE
       SET cron = excluded.cron, timezone = excluded.timezone, queue = excluded.queue,
           kind = excluded.kind, args = excluded.args, priority = excluded.priority,
           max_attempts = excluded.max_attempts, next_run_at = excluded.next_run_at,
           last_error = NULL;
    RETURN v_next;
END
$$;

CREATE OR REPLACE FUNCTION awa.unschedule(name text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_name('schedule name', unschedule.name);
    DELETE FROM awa.job_schedules s WHERE s.name = unschedule.name;
    RETURN FOUND;
END
$$;

-- The leader's step, once a second, callable by hand: each schedule due at p_now (at
-- most 1000 a call, oldest first) is locked, its job enqueued and its next run set, in
-- this one transaction, so a run is enqueued exactly once whatever crashes or changes
-- leader. Missed fire times (the server was down) give one catch-up run, then the next
-- fire time after p_now. A run that cannot be enqueued (a queue over its limit) leaves
-- its schedule due, with last_error set and a WARNING: it is tried again next time.
CREATE OR REPLACE FUNCTION awa.fire_due_schedules(p_schema text DEFAULT 'awa',
                                                  p_now timestamptz DEFAULT now(),
                                                  OUT fired bigint, OUT failed bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r awa.job_schedules;
    v_job bigint;
    v_next timestamptz;
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    PERFORM awa_internal.require_read_committed();
    fired := 0;
    failed := 0;
    FOR r IN SELECT * FROM awa.job_schedules s WHERE s.next_run_at <= p_now
              ORDER BY s.next_run_at, s.name LIMIT 1000 FOR UPDATE SKIP LOCKED LOOP
        BEGIN
            v_job := awa.enqueue(r.queue, r.kind, r.args, r.priority, now(), r.max_attempts);
            v_next := awa.cron_next(r.cron, greatest(r.next_run_at, p_now), r.timezone);
            UPDATE awa.job_schedules s
               SET next_run_at = v_next, last_run_at = p_now, last_job_id = v_job,
                   last_error = NULL
             WHERE s.name = r.name;
            fired := fired + 1;
        EXCEPTION WHEN OTHERS THEN
            UPDATE awa.job_schedules s SET last_error = left(SQLERRM, 500)
             WHERE s.name = r.name AND s.last_error IS DISTINCT FROM left(SQLERRM, 500);
            RAISE WARNING 'awa_bgw: schedule "%" could not enqueue its run: %', r.name, SQLERRM
                USING HINT = 'It stays due and is tried again on the next check.';
            failed := failed + 1;
        END;
    END LOOP;
END
$$;

CREATE OR REPLACE VIEW awa.schedules AS
SELECT s.name, s.cron, s.timezone, s.queue, s.kind, s.args, s.next_run_at, s.last_run_at,
       s.last_job_id, s.created_at, s.priority, s.max_attempts, s.last_error
  FROM awa.job_schedules s;

-- Monitoring roles read the schedules (grants/grants.sql revokes the rest from PUBLIC).
GRANT USAGE ON SCHEMA awa TO pg_monitor;
GRANT SELECT ON awa.schedules TO pg_monitor;
