-- Per-queue grants and pauses (0.9; docs/operations.md "Roles and the trust model").
-- The checks are in C (src/dataplane/queuepolicy.c): every API call asks a per-backend cache of
-- the queue's policy, which a change to awa.queue_privileges or awa.queue_pauses drops
-- in every backend when it commits (the statement trigger below sends a relcache
-- invalidation of both tables; src/rel/relcache.c's callback passes it on).

-- Whether the calling role may use the queue for the privilege ('enqueue', 'claim',
-- 'manage'). The calling role is the session's current role (its login role, or the
-- one SET ROLE chose), not the owner of a SECURITY DEFINER function in between.
CREATE OR REPLACE FUNCTION awa.queue_allowed(queue text, privilege text) RETURNS boolean
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_queue_allowed';

-- The same, as an error (42501, nothing written) when it may not.
CREATE OR REPLACE FUNCTION awa_internal.require_queue_privilege(queue text, privilege text) RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_require_queue_privilege';

-- The statement trigger of both policy tables: every backend drops its cached policies
-- when the change commits (and not before).
CREATE OR REPLACE FUNCTION awa_internal.queue_policy_changed() RETURNS trigger
LANGUAGE C
AS 'MODULE_PATHNAME', 'awa_queue_policy_changed';

CREATE OR REPLACE TRIGGER queue_privileges_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON awa.queue_privileges
    FOR EACH STATEMENT EXECUTE FUNCTION awa_internal.queue_policy_changed();
CREATE OR REPLACE TRIGGER queue_pauses_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON awa.queue_pauses
    FOR EACH STATEMENT EXECUTE FUNCTION awa_internal.queue_policy_changed();

-- The bit set of a privilege list: 1 enqueue, 2 claim, 4 manage.
CREATE OR REPLACE FUNCTION awa_internal.queue_privilege_bits(p_privileges text[]) RETURNS smallint
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bits int := 0;
    v_p text;
BEGIN
    IF p_privileges IS NULL OR cardinality(p_privileges) = 0 OR cardinality(p_privileges) > 3 THEN
        RAISE EXCEPTION 'privileges must name 1 to 3 queue privileges, not %',
                        coalesce(p_privileges::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The queue privileges are enqueue, claim and manage, e.g. ''{enqueue,claim}''.';
    END IF;
    FOREACH v_p IN ARRAY p_privileges LOOP
        v_bits := v_bits | CASE v_p WHEN 'enqueue' THEN 1 WHEN 'claim' THEN 2
                                    WHEN 'manage' THEN 4 ELSE 0 END;
        IF v_p IS NULL OR v_p NOT IN ('enqueue', 'claim', 'manage') THEN
            RAISE EXCEPTION 'unknown queue privilege %', coalesce(quote_literal(v_p), 'NULL')
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The queue privileges are enqueue, claim and manage.';
        END IF;
    END LOOP;
    RETURN v_bits;
END
$$;

-- The privilege names of a bit set.
CREATE OR REPLACE FUNCTION awa_internal.queue_privilege_names(p_bits smallint) RETURNS text[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ARRAY(SELECT n FROM (VALUES (1, 'enqueue'), (2, 'claim'), (4, 'manage')) v(b, n)
                  WHERE p_bits & v.b <> 0 ORDER BY v.b)
$$;

CREATE OR REPLACE FUNCTION awa_internal.check_queue_grantee(p_role regrole) RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_role IS NULL OR p_role = 0 THEN
        RAISE EXCEPTION 'invalid role %', coalesce(p_role::oid::text, 'NULL')
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Name an existing role, e.g. awa.grant_queue(''mail'', ''tenant_a'').';
    END IF;
END
$$;

-- Grants privileges on a queue to a role (adding to what it has). Who may call it: a
-- superuser, the extension's owner, or a role they gave EXECUTE on it (a queue
-- administrator: it can grant any queue to any role, itself included).
CREATE OR REPLACE FUNCTION awa.grant_queue(queue text, role regrole,
                                           privileges text[] DEFAULT '{enqueue,claim}')
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bits smallint;
BEGIN
    PERFORM awa_internal.check_name('queue', grant_queue.queue);
    PERFORM awa_internal.check_queue_grantee(grant_queue.role);
    v_bits := awa_internal.queue_privilege_bits(grant_queue.privileges);
    INSERT INTO awa.queue_privileges AS p (queue, grantee, privileges, granted_by)
    VALUES (grant_queue.queue, grant_queue.role, v_bits, session_user::regrole)
    ON CONFLICT ON CONSTRAINT queue_privileges_pkey DO UPDATE
        SET privileges = p.privileges | EXCLUDED.privileges,
            granted_by = EXCLUDED.granted_by, granted_at = EXCLUDED.granted_at;
END
$$;

-- Revokes privileges on a queue from a role (all of them by default); true when the
-- role had any of them. Revoking a queue's last grant opens it again to every role with
-- EXECUTE on the API (a NOTICE says so). Callers as for grant_queue.
CREATE OR REPLACE FUNCTION awa.revoke_queue(queue text, role regrole,
                                            privileges text[] DEFAULT '{enqueue,claim,manage}')
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bits smallint;
    v_had smallint;
BEGIN
    PERFORM awa_internal.check_name('queue', revoke_queue.queue);
    PERFORM awa_internal.check_queue_grantee(revoke_queue.role);
    v_bits := awa_internal.queue_privilege_bits(revoke_queue.privileges);
    SELECT p.privileges INTO v_had FROM awa.queue_privileges p
     WHERE p.queue = revoke_queue.queue AND p.grantee = revoke_queue.role FOR UPDATE;
    IF NOT FOUND OR v_had & v_bits = 0 THEN
        RETURN false;
    END IF;
    IF v_had & ~v_bits <> 0 THEN
        UPDATE awa.queue_privileges p SET privileges = v_had & ~v_bits
         WHERE p.queue = revoke_queue.queue AND p.grantee = revoke_queue.role;
        RETURN true;
    END IF;
    DELETE FROM awa.queue_privileges p
     WHERE p.queue = revoke_queue.queue AND p.grantee = revoke_queue.role;
    IF NOT EXISTS (SELECT 1 FROM awa.queue_privileges p WHERE p.queue = revoke_queue.queue) THEN
        RAISE NOTICE 'queue "%" has no grants left: it is open to every role with EXECUTE on the API',
                     revoke_queue.queue;
    END IF;
    RETURN true;
END
$$;

-- Grants of roles that were dropped (a role's OID in awa.queue_privileges does not
-- stop DROP ROLE): removed; returns how many. Callers as for grant_queue.
CREATE OR REPLACE FUNCTION awa.forget_dropped_queue_grantees() RETURNS bigint
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    WITH gone AS (
        DELETE FROM awa.queue_privileges p
         WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid = p.grantee)
        RETURNING 1)
    SELECT count(*) FROM gone
$$;

-- Pauses a queue's claims (true when it was not paused): claims take nothing, waiting
-- claims go on waiting; enqueues go on, and the worker keeps rotating and pruning.
-- Needs EXECUTE and the manage privilege on the queue.
CREATE OR REPLACE FUNCTION awa.pause_queue(queue text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_name('queue', pause_queue.queue);
    PERFORM awa_internal.require_queue_privilege(pause_queue.queue, 'manage');
    INSERT INTO awa.queue_pauses (queue, paused_by)
    VALUES (pause_queue.queue, session_user::regrole)
    ON CONFLICT ON CONSTRAINT queue_pauses_pkey DO NOTHING;
    RETURN FOUND;
END
$$;

-- Resumes a paused queue (true when it was paused); the claims waiting for it wake
-- when this commits.
CREATE OR REPLACE FUNCTION awa.resume_queue(queue text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_name('queue', resume_queue.queue);
    PERFORM awa_internal.require_queue_privilege(resume_queue.queue, 'manage');
    DELETE FROM awa.queue_pauses p WHERE p.queue = resume_queue.queue;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM awa_internal.note_resumed(resume_queue.queue);
    RETURN true;
END
$$;

-- Wakes the claims waiting for the queue when this transaction commits (src/dataplane/wait.c).
CREATE OR REPLACE FUNCTION awa_internal.note_resumed(queue text) RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_note_resumed';

CREATE OR REPLACE VIEW awa.queue_grants AS
SELECT p.queue, p.grantee::regrole AS grantee,
       awa_internal.queue_privilege_names(p.privileges) AS privileges,
       p.granted_by::regrole AS granted_by, p.granted_at
  FROM awa.queue_privileges p;

-- Every queue known (registered lanes, a grant, a pause or a limit) and its policy;
-- max_running NULL: no running limit, rate NULL: no rate limit (with rate_per and burst
-- NULL too; api/queue_limits.sql).
CREATE OR REPLACE VIEW awa.queue_settings AS
SELECT q.queue, s.queue IS NOT NULL AS paused, s.paused_at, s.paused_by::regrole AS paused_by,
       EXISTS (SELECT 1 FROM awa.queue_privileges p WHERE p.queue = q.queue) AS restricted,
       m.max_running, m.rate, m.rate_per, m.burst
  FROM (SELECT l.queue FROM awa.queue_lanes l
        UNION SELECT p.queue FROM awa.queue_pauses p
        UNION SELECT g.queue FROM awa.queue_privileges g
        UNION SELECT m.queue FROM awa_internal.queue_limits m) q
  LEFT JOIN awa.queue_pauses s ON s.queue = q.queue
  LEFT JOIN awa_internal.queue_limits m ON m.queue = q.queue;
