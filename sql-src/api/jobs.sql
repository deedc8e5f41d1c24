-- Jobs outside the rings, lanes, validation, and enqueue (docs/storage.md §2, §5).
--
-- search_path: the API entry points are SECURITY DEFINER with a pinned search_path;
-- the helpers they call on the hot paths (here and in internal/attempts.sql) carry no SET
-- clause of their own: they name every object with its schema, run with their
-- caller's rights (so a caller's own search_path can only affect the caller), and a
-- SET clause would cost a GUC save and restore on every call (and keep a SQL function
-- from being inlined).

-- The ring-writing functions read the ring cursor and need a snapshot that sees the
-- current one: a REPEATABLE READ snapshot could name a slot that has been reused.
CREATE OR REPLACE FUNCTION awa.require_read_committed() RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'awa_bgw queue functions need READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Enqueue, claim and complete in a READ COMMITTED transaction.';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa.check_name(p_what text, p_value text) RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF p_value IS NULL OR length(p_value) = 0 OR length(p_value) > 200 THEN
        RAISE EXCEPTION 'invalid % %', p_what,
                        CASE WHEN p_value IS NULL THEN 'NULL'
                             WHEN length(p_value) > 200
                             THEN format('(%s characters)', length(p_value))
                             ELSE quote_literal(p_value) END
            USING ERRCODE = CASE WHEN p_value IS NULL THEN 'null_value_not_allowed'
                                 ELSE 'invalid_parameter_value' END,
                  HINT = format('A %s is a text of 1 to 200 characters.', p_what);
    END IF;
END
$$;

-- awa_bgw.max_payload_size in bytes (a superuser-only GUC: a caller cannot raise it).
CREATE OR REPLACE FUNCTION awa.max_payload_size() RETURNS bigint
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_max_payload_size';

-- Refuses a payload (job args, heartbeat progress, an error text) larger than
-- awa_bgw.max_payload_size, before anything is written.
CREATE OR REPLACE FUNCTION awa.check_payload(p_what text, p_bytes bigint) RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF p_bytes > awa.max_payload_size() THEN
        RAISE EXCEPTION '% of % bytes is larger than awa_bgw.max_payload_size (% bytes)',
                        p_what, p_bytes, awa.max_payload_size()
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Keep large data in a table of your own and pass its key; '
                         'a superuser can raise awa_bgw.max_payload_size.';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa.check_job(p_queue text, p_kind text, p_args jsonb, p_priority smallint,
                              p_run_at timestamptz, p_max_attempts int)
RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    PERFORM awa.check_name('queue', p_queue);
    PERFORM awa.check_name('kind', p_kind);
    IF p_args IS NULL OR jsonb_typeof(p_args) <> 'object' THEN
        RAISE EXCEPTION 'job args must be a JSON object, not %',
                        coalesce(jsonb_typeof(p_args), 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass a jsonb object, for example ''{"id": 42}''.';
    END IF;
    PERFORM awa.check_payload('job args', pg_column_size(p_args));
    IF p_priority IS NULL OR p_priority NOT BETWEEN 0 AND 9 THEN
        RAISE EXCEPTION 'priority % is out of range', coalesce(p_priority::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Priorities run from 0 (most urgent) to 9.';
    END IF;
    IF p_run_at IS NULL OR NOT isfinite(p_run_at) THEN
        RAISE EXCEPTION 'run_at must be a finite timestamp'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_max_attempts IS NULL OR p_max_attempts NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_attempts % is out of range', coalesce(p_max_attempts::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'max_attempts runs from 1 to 1000.';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa.check_claim(p_queue text, p_max_batch int, p_deadline interval)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    PERFORM awa.check_name('queue', p_queue);
    IF p_max_batch IS NULL OR p_max_batch NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_batch % is out of range', coalesce(p_max_batch::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Claim between 1 and 1000 jobs at a time.';
    END IF;
    IF p_deadline <= interval '0' THEN
        RAISE EXCEPTION 'deadline must be positive or NULL, not %', p_deadline
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'NULL means no deadline: liveness by heartbeat only.';
    END IF;
END
$$;

-- Registers the lanes of (queue, priority) ahead of the first enqueue. Optional: the
-- first enqueue registers them itself. In 0.7 and 0.8, until that transaction commits,
-- other first enqueues of the same (queue, priority) wait for it, and registering up
-- front, in a transaction of its own, avoids that wait; 0.9 registers without waiting.
CREATE OR REPLACE FUNCTION awa.register_queue(queue text, priority smallint DEFAULT 0) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_job(register_queue.queue, 'register', '{}', register_queue.priority,
                          now(), 1);
    PERFORM awa.ensure_lanes(register_queue.queue, register_queue.priority);
END
$$;

-- Routes validated jobs of one queue: future run_at to deferred_jobs, the rest into the
-- ring, one lane lock per priority (in priority order, so two batches cannot deadlock).
CREATE OR REPLACE FUNCTION awa.enqueue_jobs(p_queue text, p_jobs awa.new_job[]) RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_prio smallint;
BEGIN
    INSERT INTO awa.deferred_jobs (job_id, queue, priority, kind, args, attempt,
                                   max_attempts, run_at, created_at, last_error)
    SELECT j.job_id, p_queue, j.priority, j.kind, j.args, j.attempt, j.max_attempts,
           j.run_at, j.created_at, j.error
      FROM unnest(p_jobs) j WHERE j.run_at > now();
    FOR v_prio IN SELECT DISTINCT j.priority FROM unnest(p_jobs) j
                   WHERE j.run_at <= now() ORDER BY 1 LOOP
        PERFORM awa.enqueue_ready(p_queue, v_prio,
            ARRAY(SELECT j FROM unnest(p_jobs) j
                   WHERE j.priority = v_prio AND j.run_at <= now()));
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION awa.enqueue(queue text, kind text, args jsonb DEFAULT '{}',
                            priority smallint DEFAULT 0, run_at timestamptz DEFAULT now(),
                            max_attempts int DEFAULT 25)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id bigint;
    v_jobs awa.new_job[];
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_job(enqueue.queue, enqueue.kind, enqueue.args, enqueue.priority,
                          enqueue.run_at, enqueue.max_attempts);
    v_id := nextval('awa.job_id_seq');
    v_jobs := ARRAY[ROW(1, v_id, enqueue.kind, enqueue.args, enqueue.priority, enqueue.run_at,
                        1, enqueue.max_attempts, now(), NULL)::awa.new_job];
    -- due now: straight into the ring (what enqueue_jobs would do with it)
    IF enqueue.run_at <= now() THEN
        PERFORM awa.enqueue_ready(enqueue.queue, enqueue.priority, v_jobs);
    ELSE
        PERFORM awa.enqueue_jobs(enqueue.queue, v_jobs);
    END IF;
    RETURN v_id;
END
$$;

-- Many jobs in one round trip: a JSON array of objects with "kind" (required), "args",
-- "priority", "run_at", "max_attempts". Returns the job ids in input order.
CREATE OR REPLACE FUNCTION awa.enqueue_batch(queue text, jobs jsonb) RETURNS SETOF bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_jobs awa.new_job[];
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_name('queue', enqueue_batch.queue);
    IF jobs IS NULL OR jsonb_typeof(jobs) <> 'array' OR jsonb_array_length(jobs) > 10000 THEN
        RAISE EXCEPTION 'jobs must be a JSON array of at most 10000 job objects'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'For example ''[{"kind": "mail", "args": {"to": 1}}, {"kind": "mail"}]''.';
    END IF;
    v_jobs := ARRAY(
        SELECT ROW(e.ord, nextval('awa.job_id_seq'), e.j->>'kind',
                   coalesce(e.j->'args', '{}'), coalesce((e.j->>'priority')::smallint, 0),
                   coalesce((e.j->>'run_at')::timestamptz, now()), 1,
                   coalesce((e.j->>'max_attempts')::int, 25), now(), NULL)::awa.new_job
          FROM jsonb_array_elements(jobs) WITH ORDINALITY AS e(j, ord)
         ORDER BY e.ord);
    PERFORM awa.check_job(enqueue_batch.queue, j.kind, j.args, j.priority, j.run_at,
                          j.max_attempts)
       FROM unnest(v_jobs) j;
    PERFORM awa.enqueue_jobs(enqueue_batch.queue, v_jobs);
    RETURN QUERY SELECT j.job_id FROM unnest(v_jobs) j ORDER BY j.ord;
END
$$;
