-- Unique jobs (docs/storage.md §A.14; README "Unique jobs"): awa.enqueue(...,
-- unique_key, unique_for, unique_states) calls awa_internal.unique_job before it writes
-- anything. Under a private lock on (queue, unique_key), held to commit, it looks for
-- a job of that queue and key enqueued within unique_for whose state (as awa.job
-- reports it) is one of unique_states; it returns that job's id, or records the new
-- job's key and returns the new id. awa.purge_unique_keys, run by the maintenance
-- leader, forgets the keys of jobs the data plane no longer holds.

-- The states a unique key holds off a second job in, when the enqueue names none:
-- every state but failed and cancelled (a completed job counts while its record is
-- kept, awa_bgw's queue ring retention).
CREATE OR REPLACE FUNCTION awa_internal.unique_states_default() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['scheduled', 'retryable', 'available', 'running', 'completed'] $$;

-- The longest unique key, in bytes.
CREATE OR REPLACE FUNCTION awa_internal.unique_key_max_bytes() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1000 $$;

-- The private lock of one (queue, key): the queue's length first, so that no two
-- (queue, key) pairs spell the same text.
CREATE OR REPLACE FUNCTION awa_internal.unique_lock_key(p_queue text, p_key text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.unique:' || length(p_queue)::text || ':' || p_queue
                             || ':' || p_key, 0) $$;

-- Refuses a bad unique_key, unique_for or unique_states (nothing is written before).
CREATE OR REPLACE FUNCTION awa_internal.check_unique(p_key text, p_for interval, p_states text[])
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF p_key IS NULL THEN
        RAISE EXCEPTION 'unique_for and unique_states need a unique_key'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass unique_key => ''...'' to make the job unique, or leave out '
                         'unique_for and unique_states.';
    END IF;
    IF length(p_key) = 0 OR octet_length(p_key) > awa_internal.unique_key_max_bytes() THEN
        RAISE EXCEPTION 'invalid unique_key (% bytes)', octet_length(p_key)
            USING ERRCODE = CASE WHEN length(p_key) = 0 THEN 'invalid_parameter_value'
                                 ELSE 'program_limit_exceeded' END,
                  HINT = format('A unique key is a text of 1 to %s bytes; hash a longer one, '
                                'for example with md5().', awa_internal.unique_key_max_bytes());
    END IF;
    IF p_for IS NOT NULL AND p_for <= interval '0' THEN
        RAISE EXCEPTION 'unique_for % is not positive', p_for
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass an interval such as ''1 hour'', or NULL: unique for as long '
                         'as the earlier job is kept.';
    END IF;
    IF p_states IS NOT NULL
       AND (cardinality(p_states) NOT BETWEEN 1 AND cardinality(awa_internal.job_states())
            OR array_position(p_states, NULL) IS NOT NULL
            OR NOT p_states <@ awa_internal.job_states()) THEN
        RAISE EXCEPTION 'invalid unique_states %', p_states::text
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'unique_states lists some of: '
                         || array_to_string(awa_internal.job_states(), ', ') || '.';
    END IF;
END
$$;

-- The state of a job as awa.job reports it (its top record), or NULL when the data
-- plane holds no record of it. The caller holds the ring families in ACCESS SHARE.
CREATE OR REPLACE FUNCTION awa_internal.job_state_of(p_job_id bigint, p_with_ready boolean)
RETURNS text
LANGUAGE sql STABLE
AS $$ SELECT r.state FROM awa_internal.job_records_of(p_job_id, p_with_ready) r
       ORDER BY r.attempt DESC, r.rank DESC LIMIT 1 $$;
CREATE OR REPLACE FUNCTION awa_internal.job_state(p_job_id bigint) RETURNS text
LANGUAGE sql STABLE
AS $$ SELECT awa_internal.job_state_of(p_job_id, true) $$;

-- job_state as one fresh read (src/dataplane/jobstate.c): what the data plane holds
-- now, read with direct index scans that take no predicate lock at SERIALIZABLE. A
-- unique enqueue at REPEATABLE READ or SERIALIZABLE reads its candidates' states so
-- (docs/storage.md A.18); this runs the same read by hand. The caller holds the ring
-- families in ACCESS SHARE.
CREATE OR REPLACE FUNCTION awa_internal.job_state_now(p_job_id bigint) RETURNS text
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_job_state_now';

-- Called by awa.enqueue with the id it drew for the new job: the id of the job that
-- stands in its way (nothing written), or p_job_id once the new job's key is recorded.
-- Under the (queue, key) lock, each statement's snapshot (READ COMMITTED; at REPEATABLE
-- READ and SERIALIZABLE src/dataplane/unique.c runs these steps as fresh reads) sees every enqueue of the key that committed before the lock
-- was granted, and the key's own enqueues in this transaction. The ring families are
-- locked ACCESS SHARE (to commit) only when an earlier job of the key is a candidate,
-- so that no prune's TRUNCATE falls between the lookup's snapshot and its reads.
CREATE OR REPLACE FUNCTION awa_internal.unique_job(p_queue text, p_key text, p_for interval,
                                          p_states text[], p_job_id bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_states text[] := coalesce(p_states, awa_internal.unique_states_default());
    v_candidates bigint[];
    v_job bigint;
BEGIN
    PERFORM awa_internal.check_unique(p_key, p_for, p_states);
    PERFORM awa_internal.private_xact_lock(awa_internal.unique_lock_key(p_queue, p_key));
    v_candidates := ARRAY(SELECT k.job_id FROM awa.unique_keys k
                           WHERE k.queue = p_queue AND k.unique_key = p_key
                             AND (p_for IS NULL OR k.created_at > now() - p_for)
                           ORDER BY k.job_id DESC);
    IF cardinality(v_candidates) > 0 THEN
        PERFORM awa_internal.hold_ring_families();
        SELECT c INTO v_job FROM unnest(v_candidates) c
         WHERE awa_internal.job_state(c) = ANY (v_states)
         ORDER BY c DESC LIMIT 1;
        IF v_job IS NOT NULL THEN
            RETURN v_job;
        END IF;
    END IF;
    INSERT INTO awa.unique_keys (queue, unique_key, job_id, created_at)
    VALUES (p_queue, p_key, p_job_id, now());
    RETURN p_job_id;
END
$$;

-- The maintenance leader's batch: of the next p_batch (awa_bgw.fold_batch_size) keys after
-- p_after (by job id), delete those whose job the data plane no longer holds (its
-- history pruned, or its failed_jobs row purged: such a job never comes back). Stands
-- down while the MVCC horizon is pinned, as the folds do. last_job_id is where the next
-- batch starts; 0 when this one reached the end.
CREATE OR REPLACE FUNCTION awa.purge_unique_keys(p_after bigint, p_batch bigint DEFAULT NULL,
                                                 OUT outcome text, OUT purged bigint,
                                                 OUT last_job_id bigint, OUT pin text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_batch bigint := coalesce(p_batch, awa_internal.fold_batch_size());
    v_ids bigint[];
    v_ready bigint[];
BEGIN
    IF v_batch NOT BETWEEN 1 AND 1000000 THEN
        RAISE EXCEPTION 'batch size % is out of range', v_batch
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A batch is 1 to 1000000 keys; NULL takes awa_bgw.fold_batch_size.';
    END IF;
    purged := 0;
    last_job_id := coalesce(p_after, 0);
    pin := awa_internal.horizon_pin_holder(awa_internal.fold_min_age());
    IF pin IS NOT NULL THEN
        outcome := 'stood_down';
        RETURN;
    END IF;
    PERFORM awa_internal.hold_ring_families();
    v_ids := ARRAY(SELECT k.job_id FROM awa.unique_keys k
                    WHERE k.job_id > coalesce(p_after, 0)
                    ORDER BY k.job_id LIMIT v_batch);
    -- the batch's jobs that have a ready entry, in one read of the ready children (their
    -- BRIN index on job_id would be read whole for each id of an array): their keys stay
    -- while the entry does (a key whose job states nothing blocks no enqueue, so only
    -- the row's lifetime depends on it); the others' states are read without the ready
    -- children (job_id_lookup.md §11)
    v_ready := ARRAY(SELECT DISTINCT r.job_id FROM awa.ready_entries r
                      WHERE r.job_id = ANY (v_ids));
    DELETE FROM awa.unique_keys k
     WHERE k.job_id = ANY (v_ids) AND k.job_id <> ALL (v_ready)
       AND awa_internal.job_state_of(k.job_id, false) IS NULL;
    GET DIAGNOSTICS purged = ROW_COUNT;
    last_job_id := CASE WHEN cardinality(v_ids) < v_batch THEN 0
                        ELSE v_ids[cardinality(v_ids)] END;
    outcome := 'folded';
END
$$;
