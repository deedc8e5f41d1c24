-- The checks of the API (isolation level, names, payloads, claims, jobs) and the
-- insert path of due and deferred jobs (docs/storage.md §2, §5).
--
-- search_path: the API entry points are SECURITY DEFINER with a pinned search_path
-- (a SET clause, or, for those in C, the library's pin around the SQL they reach:
-- enqueue_jobs below runs under it; docs/storage.md §5);
-- the helpers they call on the hot paths (here and in internal/attempts.sql) carry no SET
-- clause of their own: they name every object with its schema, run with their
-- caller's rights (so a caller's own search_path can only affect the caller), and a
-- SET clause would cost a GUC save and restore on every call (and keep a SQL function
-- from being inlined).

-- The functions that decide on the queue's shared state with a snapshot taken after
-- their locks (cancel, replay, the maintenance steps) need READ COMMITTED: at REPEATABLE
-- READ and SERIALIZABLE that snapshot would be the transaction's first. Enqueue,
-- complete, fail and heartbeat run at every level (docs/storage.md A.18).
CREATE OR REPLACE FUNCTION awa_internal.require_read_committed() RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'awa_bgw: this function needs READ COMMITTED, not %',
                        upper(current_setting('transaction_isolation'))
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'It decides with a snapshot taken after its locks; this '
                           'transaction keeps the snapshot it took first.',
                  HINT = 'Run it in a READ COMMITTED transaction of its own; enqueue, '
                         'complete, fail and heartbeat also run inside REPEATABLE READ and '
                         'SERIALIZABLE transactions.';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa_internal.check_name(p_what text, p_value text) RETURNS void
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
CREATE OR REPLACE FUNCTION awa_internal.max_payload_size() RETURNS bigint
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_max_payload_size';

-- Refuses a payload (job args, heartbeat progress, an error text) larger than
-- awa_bgw.max_payload_size, before anything is written.
CREATE OR REPLACE FUNCTION awa_internal.check_payload(p_what text, p_bytes bigint) RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF p_bytes > awa_internal.max_payload_size() THEN
        RAISE EXCEPTION '% of % bytes is larger than awa_bgw.max_payload_size (% bytes)',
                        p_what, p_bytes, awa_internal.max_payload_size()
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Keep large data in a table of your own and pass its key; '
                         'a superuser can raise awa_bgw.max_payload_size.';
    END IF;
END
$$;


CREATE OR REPLACE FUNCTION awa_internal.check_claim(p_queue text, p_max_batch int, p_deadline interval)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    PERFORM awa_internal.check_name('queue', p_queue);
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


-- Routes validated jobs of one queue: future run_at to deferred_jobs, the rest into the
-- ring, one lane lock per priority (in priority order, so two batches cannot deadlock).
CREATE OR REPLACE FUNCTION awa_internal.enqueue_jobs(p_queue text, p_jobs awa.new_job[]) RETURNS void
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
        PERFORM awa_internal.enqueue_ready(p_queue, v_prio,
            ARRAY(SELECT j FROM unnest(p_jobs) j
                   WHERE j.priority = v_prio AND j.run_at <= now()));
    END LOOP;
END
$$;

-- The validation of a job, in C (src/dataplane/checks.c; until 0.9 it was PL/pgSQL, with the same
-- rules, messages, SQLSTATEs and hints in the same order): enqueue_batch checks each
-- job, and the PL/pgSQL check took a quarter of its time. The priority is an int since
-- 0.10 (a caller's priority => 5 resolves; 0 to 9 are allowed), smallint before.
CREATE OR REPLACE FUNCTION awa_internal.check_job(p_queue text, p_kind text, p_args jsonb,
                                         p_priority int, p_run_at timestamptz,
                                         p_max_attempts int)
RETURNS void
LANGUAGE C STABLE
AS 'MODULE_PATHNAME', 'awa_check_job';
