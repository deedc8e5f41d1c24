-- The fleet: versions, the flip gate's counts, the heartbeat.


-- major*10^6 + minor*10^3 + patch; a pre-release or build suffix is ignored;
-- NULL when the text does not start with a version number.
CREATE OR REPLACE FUNCTION awa_internal.semver_rank(p_version text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m[1]::bigint * 1000000 + coalesce(m[2], '0')::bigint * 1000
           + coalesce(m[3], '0')::bigint
    FROM (SELECT regexp_match(p_version, '^v?(\d{1,6})(?:\.(\d{1,3}))?(?:\.(\d{1,3}))?(?:[-+].*)?$')) AS r(m)
    WHERE m IS NOT NULL
$$;

-- 0.10: the rows of the workers that run now and maintain this database, from shared
-- memory. Such a row counts as live whatever its last_seen_at: a worker refreshes its
-- row only every awa_bgw.runtime_heartbeat_interval (an hour by default), so that an
-- idle database is not written to for its heartbeat (issue 33).
CREATE OR REPLACE FUNCTION awa_internal.live_worker_instances() RETURNS SETOF uuid
LANGUAGE C STRICT VOLATILE
AS 'MODULE_PATHNAME', 'awa_live_worker_instances';

-- Whether a runtime's row counts as live: a heartbeat within p_fresh_seconds, or a
-- worker of this database that runs now.
CREATE OR REPLACE FUNCTION awa_internal.runtime_live(p_instance_id uuid, p_last_seen_at timestamptz,
                                                     p_fresh_seconds float8)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p_last_seen_at >= now() - make_interval(secs => p_fresh_seconds)
        OR p_instance_id IN (SELECT awa_internal.live_worker_instances())
$$;

CREATE OR REPLACE FUNCTION awa_internal.ring_authority_min_flip_version() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT '0.7.0'::text $$;

CREATE OR REPLACE FUNCTION awa.ring_authority_status(p_schema text, p_fresh_seconds float8 DEFAULT 90,
    OUT authority text, OUT flipped_at timestamptz, OUT live_instances bigint,
    OUT flip_aware_instances bigint, OUT blocking_instances bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa_internal.check_schema(p_schema);
    IF p_fresh_seconds IS NULL OR p_fresh_seconds <= 0 THEN
        RAISE EXCEPTION 'fresh_seconds must be positive, not %', p_fresh_seconds
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'It is the window in which a runtime''s last heartbeat counts as live.';
    END IF;
    SELECT coalesce(a.authority, 'columns'), a.flipped_at INTO authority, flipped_at
    FROM (SELECT 1) one LEFT JOIN awa.ring_cursor_authority a ON a.singleton;
    SELECT count(*),
           count(*) FILTER (WHERE awa_internal.semver_rank(i.binary_version)
                                  >= awa_internal.semver_rank(awa_internal.ring_authority_min_flip_version())),
           count(*) FILTER (WHERE awa_internal.semver_rank(i.binary_version) IS NULL
                               OR awa_internal.semver_rank(i.binary_version)
                                  < awa_internal.semver_rank(awa_internal.ring_authority_min_flip_version()))
      INTO live_instances, flip_aware_instances, blocking_instances
      FROM awa.runtime_instances i
     WHERE awa_internal.runtime_live(i.instance_id, i.last_seen_at, p_fresh_seconds);
END
$$;

-- Called by every awa_bgw worker on awa_bgw.runtime_heartbeat_interval: upsert its own
-- row; the leader also removes rows that have been stale for a day, but those of the
-- workers that run now. 0.10: an UPDATE
-- first, since an upsert that finds the row locks it in a WAL record of its own before
-- it updates it (issue 33: what an idle worker writes).
CREATE OR REPLACE FUNCTION awa_internal.runtime_heartbeat(p_instance_id uuid, p_name text, p_version text,
                                      p_pid int, p_is_leader boolean)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE awa.runtime_instances
       SET last_seen_at = now(), name = p_name, version = p_version,
           binary_version = p_version, pid = p_pid
     WHERE instance_id = p_instance_id;
    IF NOT FOUND THEN
        INSERT INTO awa.runtime_instances AS ri
               (instance_id, name, version, binary_version, pid, started_at, last_seen_at)
        VALUES (p_instance_id, p_name, p_version, p_version, p_pid, now(), now())
        ON CONFLICT (instance_id) DO UPDATE
           SET last_seen_at = now(), name = EXCLUDED.name, version = EXCLUDED.version,
               binary_version = EXCLUDED.binary_version, pid = EXCLUDED.pid;
    END IF;
    IF p_is_leader THEN
        DELETE FROM awa.runtime_instances
         WHERE last_seen_at < now() - interval '1 day'
           AND instance_id NOT IN (SELECT awa_internal.live_worker_instances());
    END IF;
END
$$;

-- The runtimes that keep the flip from running: fresh (a heartbeat within
-- p_fresh_seconds) and not known to be flip-aware. For a DBA, before flipping.
CREATE OR REPLACE FUNCTION awa.ring_authority_blockers(p_schema text,
    p_fresh_seconds float8 DEFAULT 90)
RETURNS TABLE (instance_id uuid, name text, version text, binary_version text, pid int,
               last_seen_at timestamptz, reason text)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.ring_authority_status(p_schema, p_fresh_seconds);   -- validates arguments
    RETURN QUERY
    SELECT i.instance_id, i.name, i.version, i.binary_version, i.pid, i.last_seen_at,
           CASE WHEN i.binary_version IS NULL
                THEN 'no binary_version: a pre-0.7 runtime'
                WHEN awa_internal.semver_rank(i.binary_version) IS NULL
                THEN format('binary_version %L is not a version', i.binary_version)
                ELSE format('binary_version %s is older than %s', i.binary_version,
                            awa_internal.ring_authority_min_flip_version()) END
      FROM awa.runtime_instances i
     WHERE awa_internal.runtime_live(i.instance_id, i.last_seen_at, p_fresh_seconds)
       AND (awa_internal.semver_rank(i.binary_version) IS NULL
            OR awa_internal.semver_rank(i.binary_version)
               < awa_internal.semver_rank(awa_internal.ring_authority_min_flip_version()))
     ORDER BY i.last_seen_at DESC, i.instance_id;
END
$$;
