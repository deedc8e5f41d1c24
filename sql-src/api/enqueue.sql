-- Enqueue, in C (src/dataplane/enqueue.c, src/dataplane/enqueue_batch.c; until 0.9
-- PL/pgSQL, with the same signatures, checks in the same order, messages, SQLSTATEs,
-- hints and results): the isolation level, check_job,
-- the job id, then what awa.enqueue_jobs does, the due jobs straight into the ring
-- (awa.enqueue_ready's work) and the later ones through awa.enqueue_jobs into
-- awa.deferred_jobs.
-- 0.9 adds unique_key, unique_for and unique_states (api/unique.sql): a unique enqueue
-- returns the id of the job of the same queue and key that stands in its way, and
-- writes nothing.
CREATE OR REPLACE FUNCTION awa.enqueue(queue text, kind text, args jsonb DEFAULT '{}',
                            priority smallint DEFAULT 0, run_at timestamptz DEFAULT now(),
                            max_attempts int DEFAULT 25, unique_key text DEFAULT NULL,
                            unique_for interval DEFAULT NULL,
                            unique_states text[] DEFAULT NULL)
RETURNS bigint
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_enqueue';

-- The six-argument form of 0.8 (in a database upgraded from it) gives its EXECUTE grants to the new form and goes: beside it, every call with up to six
-- arguments would be ambiguous.
DO $$
DECLARE
    v_old regprocedure := to_regprocedure(
        'awa.enqueue(text, text, jsonb, smallint, timestamptz, int)');
    g record;
BEGIN
    IF v_old IS NULL THEN
        RETURN;
    END IF;
    FOR g IN
        SELECT a.grantee, a.is_grantable
          FROM pg_proc p, aclexplode(p.proacl) a
         WHERE p.oid = v_old AND a.privilege_type = 'EXECUTE' AND a.grantee <> 0
           AND a.grantee <> p.proowner
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION awa.enqueue(text, text, jsonb, smallint, '
                       'timestamptz, int, text, interval, text[]) TO %I%s',
                       pg_get_userbyid(g.grantee),
                       CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
    EXECUTE format('DROP FUNCTION %s', v_old);
END
$$;

-- Many jobs in one round trip: a JSON array of objects with "kind" (required), "args",
-- "priority", "run_at", "max_attempts". Returns the job ids in input order.
CREATE OR REPLACE FUNCTION awa.enqueue_batch(queue text, jobs jsonb) RETURNS SETOF bigint
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_enqueue_batch';
