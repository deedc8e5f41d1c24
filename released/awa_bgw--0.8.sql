-- awa_bgw 0.8: full install script, as released. Frozen: never edit this file
-- (released/README.md); later changes go in the next version's upgrade script.
\echo Use "CREATE EXTENSION awa_bgw VERSION '0.8'" to load this file. \quit

-- ---- tables/schema_guard.sql ----
-- A fresh install refuses a schema awa that already exists and is not the installing
-- superuser's alone: CREATE EXTENSION takes an existing schema of the control file's
-- name as it finds it, and the owner of a schema (or a role that may create in it) can
-- drop, rename or shadow what the extension puts there.
DO $guard$
DECLARE
    v_owner name;
    v_creators text;
BEGIN
    SELECT pg_catalog.pg_get_userbyid(n.nspowner),
           (SELECT pg_catalog.string_agg(DISTINCT CASE a.grantee WHEN 0 THEN 'PUBLIC'
                       ELSE pg_catalog.pg_get_userbyid(a.grantee)::text END, ', ')
              FROM pg_catalog.aclexplode(n.nspacl) a
             WHERE a.privilege_type = 'CREATE' AND a.grantee <> n.nspowner)
      INTO v_owner, v_creators
      FROM pg_catalog.pg_namespace n
     WHERE n.nspname = 'awa';
    IF v_owner IS NOT NULL AND v_owner <> current_user THEN
        RAISE EXCEPTION 'schema "awa" already exists and is owned by role "%"', v_owner
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'awa_bgw installs into schema awa, which must belong to the '
                           'superuser who creates the extension.',
                  HINT = 'Drop or rename that schema (after checking what is in it), or '
                         'make the installing superuser its owner, then run CREATE '
                         'EXTENSION awa_bgw again.';
    END IF;
    IF v_creators IS NOT NULL THEN
        RAISE EXCEPTION 'schema "awa" already exists and lets other roles create objects in it: %',
                        v_creators
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Revoke CREATE ON SCHEMA awa from them (after checking what '
                         'they created there), then run CREATE EXTENSION awa_bgw again.';
    END IF;
END
$guard$;

-- ---- tables/0.8/ring_state.sql ----
-- Ring state singletons (cold config) and slot rows (the row-lock targets of prune).
-- 0.8: the compat cursor columns and the slots' generation are gone; the ledger is the
-- cursor.

CREATE TABLE awa.queue_ring_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    slot_count int NOT NULL CHECK (slot_count = 16),
    terminal_counter_trusted_at timestamptz
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

CREATE TABLE awa.lease_ring_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    slot_count int NOT NULL CHECK (slot_count = 8)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

CREATE TABLE awa.claim_ring_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    slot_count int NOT NULL CHECK (slot_count = 8)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

CREATE TABLE awa.queue_ring_slots (
    slot int PRIMARY KEY CHECK (slot >= 0 AND slot < 16)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);
CREATE TABLE awa.lease_ring_slots (
    slot int PRIMARY KEY CHECK (slot >= 0 AND slot < 8)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);
CREATE TABLE awa.claim_ring_slots (
    slot int PRIMARY KEY CHECK (slot >= 0 AND slot < 8)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

INSERT INTO awa.queue_ring_slots (slot) SELECT g FROM generate_series(0, 15) g;
INSERT INTO awa.lease_ring_slots (slot) SELECT g FROM generate_series(0, 7) g;
INSERT INTO awa.claim_ring_slots (slot) SELECT g FROM generate_series(0, 7) g;

-- ---- tables/ledgers.sql ----
-- The append-only rotation ledgers: a ring's cursor is its row with the highest
-- generation. pg_dump keeps the rows past genesis (a restore runs CREATE EXTENSION
-- first, which writes genesis and the authority row itself).

-- The ledgers: the cursor is the row with the highest generation.
CREATE TABLE awa.queue_ring_rotations (
    generation bigint PRIMARY KEY CHECK (generation >= 0),
    slot int NOT NULL CHECK (slot >= 0 AND slot < 16),
    rotated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK (slot = generation % 16)
);
CREATE TABLE awa.lease_ring_rotations (
    generation bigint PRIMARY KEY CHECK (generation >= 0),
    slot int NOT NULL CHECK (slot >= 0 AND slot < 8),
    rotated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK (slot = generation % 8)
);
CREATE TABLE awa.claim_ring_rotations (
    generation bigint PRIMARY KEY CHECK (generation >= 0),
    slot int NOT NULL CHECK (slot >= 0 AND slot < 8),
    rotated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK (slot = generation % 8)
);


SELECT pg_catalog.pg_extension_config_dump('awa.queue_ring_rotations', 'WHERE generation > 0');
SELECT pg_catalog.pg_extension_config_dump('awa.lease_ring_rotations', 'WHERE generation > 0');
SELECT pg_catalog.pg_extension_config_dump('awa.claim_ring_rotations', 'WHERE generation > 0');

-- ---- tables/authority.sql ----
-- Which representation of the ring cursor is authoritative: 'columns' (the pre-ledger
-- singleton columns, during a staged upgrade) or 'ledger'. One row; one-way.

CREATE TABLE awa.ring_cursor_authority (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    authority text NOT NULL CHECK (authority IN ('columns', 'ledger')),
    flipped_at timestamptz
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 50);

-- ---- tables/rollups.sql ----
-- Terminal history counts folded out of pruned queue slots.
CREATE TABLE awa.queue_terminal_rollups (
    queue text NOT NULL,
    priority smallint NOT NULL,
    pruned_completed_count bigint NOT NULL DEFAULT 0,
    pruned_failed_count bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, priority)
);

SELECT pg_catalog.pg_extension_config_dump('awa.queue_terminal_rollups', '');

-- ---- tables/deltas.sql ----
-- Prune appends here (never upserts the rollups); the folds drain it.
CREATE TABLE awa.queue_terminal_rollup_deltas (
    queue text NOT NULL,
    priority smallint NOT NULL,
    pruned_completed_delta bigint NOT NULL DEFAULT 0,
    pruned_failed_delta bigint NOT NULL DEFAULT 0,
    recorded_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

SELECT pg_catalog.pg_extension_config_dump('awa.queue_terminal_rollup_deltas', '');

CREATE TYPE awa.rollup_delta AS (queue text, priority smallint, completed bigint,
                                 failed bigint);

-- ---- tables/fleet.sql ----
-- The fleet: every process that runs maintenance registers here with a heartbeat and
-- its binary_version (NULL = a pre-0.7 process that does not know the ledger; the
-- column comes last because 0.6 -> 0.7 adds it).

CREATE TABLE awa.runtime_instances (
    instance_id uuid PRIMARY KEY,
    name text NOT NULL,
    version text,
    pid int,
    started_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    binary_version text
);

-- ---- tables/0.8/seed.sql ----
-- A fresh 0.8: every ledger holds its genesis row (0, 0); the authority is ledger.

INSERT INTO awa.queue_ring_state (singleton, slot_count, terminal_counter_trusted_at)
    VALUES (true, 16, now());
INSERT INTO awa.lease_ring_state VALUES (true, 8);
INSERT INTO awa.claim_ring_state VALUES (true, 8);

INSERT INTO awa.queue_ring_rotations (generation, slot) VALUES (0, 0);
INSERT INTO awa.lease_ring_rotations (generation, slot) VALUES (0, 0);
INSERT INTO awa.claim_ring_rotations (generation, slot) VALUES (0, 0);

INSERT INTO awa.ring_cursor_authority VALUES (true, 'ledger', now());

-- ---- tables/data_plane.sql ----
-- Data plane: the ring families, LIST-partitioned by the ring's slot column, one child
-- per slot named <family>_<slot>. All of them are append-only: no UPDATE or DELETE
-- ever touches a ring family; space comes back by TRUNCATE of a whole slot.
-- Every child is registered with pg_extension_config_dump, so pg_dump keeps the jobs
-- (a restore recreates the empty children with CREATE EXTENSION, then loads them).

-- queue ring (ready_slot): claimable entries (one per attempt) and terminal outcomes.
CREATE TABLE awa.ready_entries (
    ready_slot int NOT NULL,
    ready_generation bigint NOT NULL,
    lane_id int NOT NULL,
    lane_seq bigint NOT NULL,
    job_id bigint NOT NULL,
    queue text NOT NULL,
    priority smallint NOT NULL,
    kind text NOT NULL,
    args jsonb NOT NULL,
    attempt int NOT NULL,
    max_attempts int NOT NULL,
    created_at timestamptz NOT NULL,
    enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp()
) PARTITION BY LIST (ready_slot);
CREATE INDEX ON awa.ready_entries (lane_id, ready_generation, lane_seq);

-- completed/failed/cancelled outcomes land in the current slot; the tombstone of a
-- never-claimed entry that was cancelled ('cancelled', run_lease 0) lands in the
-- entry's own slot.
CREATE TABLE awa.done_entries (
    ready_slot int NOT NULL,
    ready_generation bigint NOT NULL,
    job_id bigint NOT NULL,
    run_lease int NOT NULL,
    lane_id int NOT NULL,
    lane_seq bigint NOT NULL,
    queue text NOT NULL,
    priority smallint NOT NULL,
    kind text NOT NULL,
    state text NOT NULL CHECK (state IN ('completed', 'failed', 'cancelled')),
    error text,
    created_at timestamptz NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT clock_timestamp()
) PARTITION BY LIST (ready_slot);
CREATE INDEX ON awa.done_entries (lane_id, lane_seq);
CREATE INDEX ON awa.done_entries (job_id);

-- claim ring (claim_slot): the receipt of one attempt, carrying the job's body, and
-- the evidence that closes it (always in the receipt's slot).
CREATE TABLE awa.lease_claims (
    claim_slot int NOT NULL,
    claim_generation bigint NOT NULL,
    job_id bigint NOT NULL,
    run_lease int NOT NULL,
    lane_id int NOT NULL,
    lane_seq bigint NOT NULL,
    ready_slot int NOT NULL,
    ready_generation bigint NOT NULL,
    queue text NOT NULL,
    priority smallint NOT NULL,
    kind text NOT NULL,
    args jsonb NOT NULL,
    max_attempts int NOT NULL,
    created_at timestamptz NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    deadline_at timestamptz
) PARTITION BY LIST (claim_slot);
CREATE INDEX ON awa.lease_claims (lane_id, lane_seq);
CREATE INDEX ON awa.lease_claims (job_id, run_lease);

CREATE TABLE awa.lease_claim_closures (
    claim_slot int NOT NULL,
    claim_generation bigint NOT NULL,
    job_id bigint NOT NULL,
    run_lease int NOT NULL,
    outcome text NOT NULL
        CHECK (outcome IN ('completed', 'failed', 'retried', 'cancelled', 'rescued')),
    closed_at timestamptz NOT NULL DEFAULT clock_timestamp()
) PARTITION BY LIST (claim_slot);
CREATE INDEX ON awa.lease_claim_closures (job_id, run_lease);

-- lease ring (lease_slot): heartbeats of running attempts; the newest one counts.
CREATE TABLE awa.leases (
    lease_slot int NOT NULL,
    lease_generation bigint NOT NULL,
    job_id bigint NOT NULL,
    run_lease int NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    progress jsonb
) PARTITION BY LIST (lease_slot);
CREATE INDEX ON awa.leases (job_id, run_lease, heartbeat_at);

-- Which families make up each ring, in a fixed order (busy checks report the first
-- non-empty one).
CREATE FUNCTION awa.ring_families(p_ring text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    CASE p_ring
        WHEN 'queue' THEN RETURN ARRAY['ready_entries', 'done_entries'];
        WHEN 'lease' THEN RETURN ARRAY['leases'];
        WHEN 'claim' THEN RETURN ARRAY['lease_claims', 'lease_claim_closures'];
        ELSE
            RAISE EXCEPTION 'unknown ring "%"', p_ring
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The rings are queue, lease and claim.';
    END CASE;
END
$$;

-- One child per slot of each ring family, as many as the ring's slot_count (its
-- ring_state row, tables/seed.sql).
DO $$
DECLARE
    r record;
    s int;
BEGIN
    FOR r IN SELECT 'queue' AS ring, q.slot_count AS n FROM awa.queue_ring_state q
             UNION ALL SELECT 'lease', l.slot_count FROM awa.lease_ring_state l
             UNION ALL SELECT 'claim', c.slot_count FROM awa.claim_ring_state c LOOP
        FOR s IN 0 .. r.n - 1 LOOP
            EXECUTE (SELECT string_agg(format(
                'CREATE TABLE awa.%I PARTITION OF awa.%I FOR VALUES IN (%s); '
                'SELECT pg_catalog.pg_extension_config_dump(%L, %L)',
                f || '_' || s, f, s, format('awa.%I', f || '_' || s), ''), '; ')
                FROM unnest(awa.ring_families(r.ring)) f);
        END LOOP;
    END LOOP;
END
$$;

-- ---- tables/jobs.sql ----
-- Jobs outside the rings: ids, lanes, deferred and failed jobs; the API's row types.

CREATE SEQUENCE awa.job_id_seq;
CREATE SEQUENCE awa.lane_seq;          -- lane order: taken under the lane's enqueue lock
CREATE SEQUENCE awa.queue_lane_id_seq AS int;

-- One row per (queue, priority, shard), all shards of a (queue, priority) registered
-- together; insert-only.
CREATE TABLE awa.queue_lanes (
    lane_id int PRIMARY KEY,
    queue text NOT NULL,
    priority smallint NOT NULL,
    shard smallint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (queue, priority, shard)
);

-- Future run_at and retries; promotion deletes and enqueues (a backlog table, not a ring).
CREATE TABLE awa.deferred_jobs (
    job_id bigint PRIMARY KEY,
    queue text NOT NULL,
    priority smallint NOT NULL,
    kind text NOT NULL,
    args jsonb NOT NULL,
    attempt int NOT NULL,
    max_attempts int NOT NULL,
    run_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    last_error text
);
CREATE INDEX ON awa.deferred_jobs (run_at, job_id);
CREATE INDEX ON awa.deferred_jobs (queue);

-- Jobs whose attempts are exhausted; kept awa_bgw.failed_retention.
CREATE TABLE awa.failed_jobs (
    job_id bigint PRIMARY KEY,
    queue text NOT NULL,
    priority smallint NOT NULL,
    kind text NOT NULL,
    args jsonb NOT NULL,
    attempts int NOT NULL,
    max_attempts int NOT NULL,
    error text,
    created_at timestamptz NOT NULL,
    failed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX ON awa.failed_jobs (failed_at);

SELECT pg_catalog.pg_extension_config_dump('awa.queue_lanes', '');
SELECT pg_catalog.pg_extension_config_dump('awa.deferred_jobs', '');
SELECT pg_catalog.pg_extension_config_dump('awa.failed_jobs', '');
SELECT pg_catalog.pg_extension_config_dump('awa.job_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('awa.lane_seq', '');
SELECT pg_catalog.pg_extension_config_dump('awa.queue_lane_id_seq', '');

CREATE TYPE awa.new_job AS (
    ord int,
    job_id bigint,
    kind text,
    args jsonb,
    priority smallint,
    run_at timestamptz,
    attempt int,
    max_attempts int,
    created_at timestamptz,
    error text
);

CREATE TYPE awa.claimed_job AS (
    job_id bigint,
    run_lease int,
    queue text,
    kind text,
    args jsonb,
    priority smallint,
    attempt int,
    max_attempts int,
    created_at timestamptz,
    claimed_at timestamptz,
    deadline_at timestamptz
);

-- ---- internal/names.sql ----
-- Names: the schema argument and the rings' slot counts.

CREATE OR REPLACE FUNCTION awa.check_schema(p_schema text) RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_schema IS DISTINCT FROM 'awa' THEN
        RAISE EXCEPTION 'unsupported queue-storage schema "%"', p_schema
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'awa_bgw keeps its queue storage in schema awa; pass ''awa''.';
    END IF;
END
$$;

-- Slot counts are fixed in this version, so the hot paths need not read them: this is
-- where SQL code reads them. The ring tables' DDL holds the same numbers (the CHECKs of
-- the ring_state and slot tables and of the ledgers, tables/ring_state.sql, tables/ledgers.sql;
-- the data plane creates its children from slot_count), C has them as AWA_QUEUE_SLOTS
-- and AWA_CLAIM_SLOTS (src/dataplane.h); regress 11_windows checks that they agree.
CREATE OR REPLACE FUNCTION awa.ring_slot_count(p_ring text) RETURNS int
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    CASE p_ring
        WHEN 'queue' THEN RETURN 16;
        WHEN 'lease' THEN RETURN 8;
        WHEN 'claim' THEN RETURN 8;
        ELSE
            RAISE EXCEPTION 'unknown ring "%"', p_ring
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The rings are queue, lease and claim.';
    END CASE;
END
$$;

-- ---- internal/private_locks.sql ----
-- Private locks (src/privlock.c, docs/storage.md §A.2): transaction-scoped locks on
-- 64-bit keys that no SQL function of PostgreSQL can take, so that a role that can
-- only connect cannot hold a lane, an attempt or a ring. Every lock of the data plane
-- and of maintenance is one, except the maintenance leader's (a public advisory key,
-- shared with AWA by design). Revoked from PUBLIC with everything else in 90_grants.

CREATE OR REPLACE FUNCTION awa.private_xact_lock(p_key bigint) RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_xact_lock';

CREATE OR REPLACE FUNCTION awa.private_try_xact_lock(p_key bigint) RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_try_xact_lock';

-- private_try_xact_lock(p_key), retried every 200 us for up to p_timeout_ms: a bounded
-- wait that never queues in the lock manager (so no deadlock, whatever the caller
-- holds).
CREATE OR REPLACE FUNCTION awa.private_try_xact_lock_for(p_key bigint, p_timeout_ms int)
RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_try_xact_lock_for';

-- Whether this transaction holds the lock (a subtransaction that took it and rolled
-- back released it).
CREATE OR REPLACE FUNCTION awa.private_xact_lock_held(p_key bigint) RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_xact_lock_held';

-- Gives back one hold of the lock before the transaction ends (a claim that took
-- nothing from a lane it locked); false when not held.
CREATE OR REPLACE FUNCTION awa.private_xact_unlock(p_key bigint) RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_xact_unlock';

-- The keys (hashtextextended of a name, seed 0), each built by one function, here (the
-- lane registry and enqueue keys of 0.6 to 0.8 by internal/lanes.sql); src/privlock.c builds
-- the claim and attempt keys from the same names, so that a claim or a complete in C
-- and a cancel or a prune in SQL take the very same lock. Every part immutable
-- (explicit casts, text || text), so that the planner inlines them: text || int is only
-- stable, and an immutable SQL function whose body is not cannot be inlined, which made
-- every call plan the body afresh (~80 us a call).

-- A lane's claim lock: claims of the lane, and whatever reads or moves its position.
CREATE OR REPLACE FUNCTION awa.claim_lock_key(p_lane_id int) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.claim:' || p_lane_id::text, 0) $$;

-- An attempt's lock: whatever closes, extends or carries the attempt.
CREATE OR REPLACE FUNCTION awa.attempt_lock_key(p_job_id bigint, p_run_lease bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.attempt:' || p_job_id::text || ':' || p_run_lease::text, 0) $$;

-- A ring's serializer under ledger authority (internal/serializer.sql).
CREATE OR REPLACE FUNCTION awa.ring_serializer_key(p_ring text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.queue_storage.ring_rotation:awa:' || p_ring, 0) $$;

-- ---- internal/0.8/cursor.sql ----
-- The ring cursor (0.8): the ledger's newest row.

-- A C function (src/dataplane.c): the ledger table's newest row by its primary key,
-- under the calling statement's snapshot (ORDER BY generation DESC LIMIT 1).
CREATE OR REPLACE FUNCTION awa.ring_cursor(p_ring text)
RETURNS TABLE (slot int, generation bigint)
LANGUAGE C STABLE ROWS 1
AS 'MODULE_PATHNAME', 'awa_ring_cursor_ledger';

-- ---- internal/authority.sql ----
-- The cursor authority as the data plane reads it, and the guard that keeps it
-- one-way (0.7 and 0.8).

-- The authority; a missing row means columns (the pre-ledger representation).
CREATE OR REPLACE FUNCTION awa.ring_authority() RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce((SELECT authority FROM awa.ring_cursor_authority WHERE singleton),
                    'columns')
$$;

-- The flip is one-way: ledger never goes back to columns, and the row stays.
CREATE OR REPLACE FUNCTION awa.reject_ring_authority_revert() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'DELETE' OR NEW.authority IS DISTINCT FROM 'ledger' THEN
        IF OLD.authority = 'ledger' THEN
            RAISE EXCEPTION 'the ring cursor authority cannot leave ledger'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'The columns -> ledger flip is one-way; rolling back across '
                             'it is unsupported.';
        END IF;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER reject_ring_authority_revert
    BEFORE UPDATE OR DELETE ON awa.ring_cursor_authority
    FOR EACH ROW EXECUTE FUNCTION awa.reject_ring_authority_revert();

-- ---- internal/fleet.sql ----
-- The fleet: versions, the flip gate's counts, the heartbeat.


-- major*10^6 + minor*10^3 + patch; a pre-release or build suffix is ignored;
-- NULL when the text does not start with a version number.
CREATE OR REPLACE FUNCTION awa.semver_rank(p_version text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m[1]::bigint * 1000000 + coalesce(m[2], '0')::bigint * 1000
           + coalesce(m[3], '0')::bigint
    FROM (SELECT regexp_match(p_version, '^v?(\d{1,6})(?:\.(\d{1,3}))?(?:\.(\d{1,3}))?(?:[-+].*)?$')) AS r(m)
    WHERE m IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION awa.ring_authority_min_flip_version() RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT '0.7.0'::text $$;

CREATE OR REPLACE FUNCTION awa.ring_authority_status(p_schema text, p_fresh_seconds float8 DEFAULT 90,
    OUT authority text, OUT flipped_at timestamptz, OUT live_instances bigint,
    OUT flip_aware_instances bigint, OUT blocking_instances bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_schema(p_schema);
    IF p_fresh_seconds IS NULL OR p_fresh_seconds <= 0 THEN
        RAISE EXCEPTION 'fresh_seconds must be positive, not %', p_fresh_seconds
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'It is the window in which a runtime''s last heartbeat counts as live.';
    END IF;
    SELECT coalesce(a.authority, 'columns'), a.flipped_at INTO authority, flipped_at
    FROM (SELECT 1) one LEFT JOIN awa.ring_cursor_authority a ON a.singleton;
    SELECT count(*),
           count(*) FILTER (WHERE awa.semver_rank(i.binary_version)
                                  >= awa.semver_rank(awa.ring_authority_min_flip_version())),
           count(*) FILTER (WHERE awa.semver_rank(i.binary_version) IS NULL
                               OR awa.semver_rank(i.binary_version)
                                  < awa.semver_rank(awa.ring_authority_min_flip_version()))
      INTO live_instances, flip_aware_instances, blocking_instances
      FROM awa.runtime_instances i
     WHERE i.last_seen_at >= now() - make_interval(secs => p_fresh_seconds);
END
$$;

-- Called by every awa_bgw worker on awa_bgw.runtime_heartbeat_interval: upsert its own
-- row; the leader also removes rows that have been stale for a day.
CREATE OR REPLACE FUNCTION awa.runtime_heartbeat(p_instance_id uuid, p_name text, p_version text,
                                      p_pid int, p_is_leader boolean)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO awa.runtime_instances AS ri
           (instance_id, name, version, binary_version, pid, started_at, last_seen_at)
    VALUES (p_instance_id, p_name, p_version, p_version, p_pid, now(), now())
    ON CONFLICT (instance_id) DO UPDATE
       SET last_seen_at = now(), name = EXCLUDED.name, version = EXCLUDED.version,
           binary_version = EXCLUDED.binary_version, pid = EXCLUDED.pid;
    IF p_is_leader THEN
        DELETE FROM awa.runtime_instances WHERE last_seen_at < now() - interval '1 day';
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
                WHEN awa.semver_rank(i.binary_version) IS NULL
                THEN format('binary_version %L is not a version', i.binary_version)
                ELSE format('binary_version %s is older than %s', i.binary_version,
                            awa.ring_authority_min_flip_version()) END
      FROM awa.runtime_instances i
     WHERE i.last_seen_at >= now() - make_interval(secs => p_fresh_seconds)
       AND (awa.semver_rank(i.binary_version) IS NULL
            OR awa.semver_rank(i.binary_version)
               < awa.semver_rank(awa.ring_authority_min_flip_version()))
     ORDER BY i.last_seen_at DESC, i.instance_id;
END
$$;

-- ---- internal/serializer.sql ----
-- The ring serializer (DESIGN 3.1): the singleton, then, under ledger authority, the
-- ring's private lock (internal/private_locks.sql).

-- Takes the ring's serializer without waiting. Returns the authority it was taken
-- under, or NULL when it is busy. The singleton is locked before the authority is
-- read, and the authority is read in a statement of its own.
CREATE OR REPLACE FUNCTION awa.ring_try_serializer(p_ring text) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_locked boolean;
    v_authority text;
BEGIN
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I WHERE singleton '
                   'FOR UPDATE SKIP LOCKED)', p_ring || '_ring_state')
       INTO v_locked;
    IF NOT v_locked THEN
        RETURN NULL;
    END IF;
    v_authority := awa.ring_authority();
    IF v_authority = 'ledger' AND NOT awa.private_try_xact_lock(
            awa.ring_serializer_key(p_ring)) THEN
        RETURN NULL;
    END IF;
    RETURN v_authority;
END
$$;

-- ---- internal/0.8/ring_append.sql ----
-- The cursor advance (0.8): the ledger is the only cursor.

CREATE OR REPLACE FUNCTION awa.ring_append(p_ring text, p_authority text, p_generation bigint,
                                           p_slot int, p_slot_count int)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_authority IS DISTINCT FROM 'ledger' THEN
        RAISE EXCEPTION 'ring authority % does not exist in awa_bgw 0.8', p_authority
            USING ERRCODE = 'data_corrupted';
    END IF;
    RETURN awa.ring_append_ledger(p_ring, p_generation, p_slot);
END
$$;

-- ---- internal/append_ledger.sql ----
-- The ledger cursor advance (0.7 in ledger authority, 0.8): one row; false = another
-- rotator appended that generation first.

CREATE OR REPLACE FUNCTION awa.ring_append_ledger(p_ring text, p_generation bigint, p_slot int)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('INSERT INTO awa.%I (generation, slot) VALUES ($1, $2) '
                   'ON CONFLICT (generation) DO NOTHING', p_ring || '_ring_rotations')
      USING p_generation, p_slot;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n = 1;
END
$$;

-- ---- maintenance/rotate_prune.sql ----
-- Rotation and prune: one transaction each, callable by hand and by the worker.
--
-- Both first run read-only gates that take no row lock and no xid (an idle or
-- already-pruned ring costs a read, never a write), using awa.try_relation_empty(),
-- which never waits for a lock: a child held ACCESS EXCLUSIVE by a prune reads as
-- "locked". Only then do they take the serializer, in the order of DESIGN 3.1:
--   {ring}_ring_state singleton FOR UPDATE SKIP LOCKED
--   -> authority (read in a later statement)
--   -> ledger: awa.private_try_xact_lock(ring key)
--   -> {ring}_ring_slots row FOR UPDATE SKIP LOCKED             (prune only)
--   -> children ACCESS EXCLUSIVE under awa_bgw.prune_lock_timeout (prune only)
-- and repeat every gate under them. Nothing here ever waits for a lock it could skip.

CREATE OR REPLACE FUNCTION awa.try_relation_empty(regclass) RETURNS boolean
AS 'MODULE_PATHNAME', 'awa_try_relation_empty'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION awa.try_relation_empty(regclass) IS
'true when the table holds no row, committed or written by a transaction still in '
'progress (a dirty snapshot), false when it holds one, NULL when its ACCESS SHARE lock '
'cannot be had at once (never waits)';

CREATE OR REPLACE FUNCTION awa.ring_child(p_family text, p_slot int) RETURNS regclass
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT format('awa.%I', p_family || '_' || p_slot)::regclass $$;

-- The first family whose child in this slot holds a row, 'locked' when a child cannot
-- be read without waiting, NULL when every child of the slot is empty.
CREATE OR REPLACE FUNCTION awa.ring_slot_blocker(p_ring text, p_slot int) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    f text;
    v_empty boolean;
BEGIN
    FOREACH f IN ARRAY awa.ring_families(p_ring) LOOP
        v_empty := awa.try_relation_empty(awa.ring_child(f, p_slot));
        IF v_empty IS NULL THEN
            RETURN 'locked';
        ELSIF NOT v_empty THEN
            RETURN f;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- true when every family of the ring is empty, NULL when a child is locked.
CREATE OR REPLACE FUNCTION awa.ring_is_idle(p_ring text) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s int;
    v_blocker text;
BEGIN
    FOR s IN 0 .. awa.ring_slot_count(p_ring) - 1 LOOP
        v_blocker := awa.ring_slot_blocker(p_ring, s);
        IF v_blocker = 'locked' THEN
            RETURN NULL;
        ELSIF v_blocker IS NOT NULL THEN
            RETURN false;
        END IF;
    END LOOP;
    RETURN true;
END
$$;

-- The oldest sealed slot and its last-open generation, derived from the cursor:
-- none while generation 0 is current; on a full ring it is the slot after the cursor.
CREATE OR REPLACE FUNCTION awa.ring_oldest_sealed(p_slot int, p_generation bigint, p_slot_count int,
                                       OUT slot int, OUT generation bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT ((p_slot - (k - 1)) % p_slot_count + p_slot_count) % p_slot_count,
           p_generation - (k - 1)
    FROM (SELECT least(p_generation + 1, p_slot_count::bigint)::int AS k) v
    WHERE k > 1
$$;

-- How many sealed slots (behind the cursor (p_slot, p_generation), at most one wrap)
-- still hold rows: the status views' "awaiting prune".
CREATE OR REPLACE FUNCTION awa.ring_sealed_slots_holding_rows(p_ring text, p_slot int,
                                                              p_generation bigint)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*)
      FROM (SELECT awa.ring_slot_count(p_ring) AS n) v,
           generate_series(1, least(p_generation, v.n - 1)) o
     WHERE awa.ring_slot_blocker(p_ring, (((p_slot - o) % v.n + v.n) % v.n)::int) IS NOT NULL
$$;

-- The terminal outcomes in a queue slot, per (queue, priority) with any, in key order:
-- what queue prune records before it truncates the slot.
CREATE OR REPLACE FUNCTION awa.queue_slot_terminal_counts(p_slot int)
RETURNS TABLE (queue text, priority smallint, completed bigint, failed bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT queue, priority, count(*) FILTER (WHERE state = ''completed''), '
        '       count(*) FILTER (WHERE state = ''failed'') '
        '  FROM awa.%I GROUP BY queue, priority '
        'HAVING count(*) FILTER (WHERE state IN (''completed'', ''failed'')) > 0 '
        ' ORDER BY queue, priority', 'done_entries_' || p_slot);
END
$$;

-- The terminal outcomes in a claim slot, as above: none before 0.9, whose closures
-- carry no outcome (done entries do). 0.9 replaces it: its terminal closures are the
-- outcomes (maintenance/0.9/claim_terminal_counts.sql).
CREATE OR REPLACE FUNCTION awa.claim_slot_terminal_counts(p_slot int)
RETURNS TABLE (queue text, priority smallint, completed bigint, failed bigint)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT NULL::text, NULL::smallint, NULL::bigint, NULL::bigint WHERE false $$;

-- What prune records of a slot it is about to truncate, after carry-forward, per ring:
-- the queue ring's terminal outcomes (its done entries), the claim ring's (0.9); the
-- lease ring holds none. awa.ring_slot_record_terminal_counts (internal/
-- terminal_counts.sql) records them as the version does.
CREATE OR REPLACE FUNCTION awa.ring_slot_terminal_counts(p_ring text, p_slot int)
RETURNS TABLE (queue text, priority smallint, completed bigint, failed bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    CASE p_ring
        WHEN 'queue' THEN RETURN QUERY SELECT * FROM awa.queue_slot_terminal_counts(p_slot);
        WHEN 'claim' THEN RETURN QUERY SELECT * FROM awa.claim_slot_terminal_counts(p_slot);
        ELSE RETURN;
    END CASE;
END
$$;

-- Why a sealed slot still holds live work that carrying forward cannot move (NULL:
-- nothing; it may be truncated once carry-forward has run). The queue ring's proof:
-- every ready entry has been claimed (its lane_seq is at or below its lane's position)
-- or cancelled (tombstone). Claims and heartbeats are carried forward instead.
CREATE OR REPLACE FUNCTION awa.ring_slot_live_reason(p_ring text, p_slot int) RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_lane record;
BEGIN
    PERFORM awa.ring_families(p_ring);   -- validates the ring name
    IF p_ring <> 'queue' THEN
        RETURN NULL;
    END IF;
    FOR v_lane IN EXECUTE format('SELECT lane_id, max(lane_seq) AS top FROM awa.%I '
                                 'GROUP BY lane_id ORDER BY lane_id', 'ready_entries_' || p_slot)
    LOOP
        IF awa.lane_unclaimed_in_slot(v_lane.lane_id, p_slot, v_lane.top) THEN
            RETURN 'queue.unclaimed';
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

-- Carries what is still live in a sealed claim or lease slot into the ring's current
-- slot, under the locks prune holds on the slot's children. Claim ring: every open
-- receipt (under its attempt's try-lock; one that is its lane's position also under
-- the lane's claim try-lock), and the position of each lane in p_keep_lanes
-- (awa.claim_slot_positions) with its closure: the lanes whose position the queue ring
-- still needs (awa.claim_slot_position_lanes, computed before the exclusive locks), so
-- that no claimed entry can be claimed again; once those entries are pruned the
-- position is not needed and the claim ring can fall idle. Under the locks it reads
-- claim children only, so it never waits. Lease ring: the newest heartbeat of every
-- attempt still open. All locks are tried before anything is written: a busy one
-- returns its reason and nothing is carried. Row by row: what moves is found by key
-- (no job body is gathered), then one INSERT ... SELECT per family copies it.
CREATE OR REPLACE FUNCTION awa.ring_slot_carry_forward(p_ring text, p_slot int, p_keep_lanes int[])
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_cur record;
    v_jobs bigint[] := '{}';
    v_leases bigint[] := '{}';
    v_pos_jobs bigint[] := '{}';
    v_pos_leases bigint[] := '{}';
    v_cols text;
    v_exprs text;
    r record;
BEGIN
    IF p_ring = 'queue' THEN
        RETURN NULL;
    END IF;
    SELECT * INTO v_cur FROM awa.ring_cursor(p_ring);
    IF p_ring = 'claim' THEN
        FOR r IN EXECUTE format(
            'SELECT k.job_id, k.run_lease, k.lane_id, bool_or(k.pos) AS pos, '
            '       NOT EXISTS (SELECT 1 FROM awa.%1$I x WHERE x.job_id = k.job_id '
            '                      AND x.run_lease = k.run_lease) AS open '
            '  FROM (SELECT c.job_id, c.run_lease, c.lane_id, false AS pos FROM awa.%2$I c '
            '         WHERE NOT EXISTS (SELECT 1 FROM awa.%1$I x '
            '                            WHERE x.job_id = c.job_id AND x.run_lease = c.run_lease) '
            '        UNION ALL '
            '        SELECT p.job_id, p.run_lease, p.lane_id, true '
            '          FROM awa.claim_slot_positions($1, $2) p) k '
            ' GROUP BY k.job_id, k.run_lease, k.lane_id',
            'lease_claim_closures_' || p_slot, 'lease_claims_' || p_slot)
          USING p_slot, coalesce(p_keep_lanes, '{}')
        LOOP
            IF r.open AND NOT awa.private_try_xact_lock(
                    awa.attempt_lock_key(r.job_id, r.run_lease)) THEN
                RETURN 'claim.attempt_locked';
            END IF;
            -- a receipt that is its lane's position moves only under the lane's claim
            -- lock, under which claimers and cancels read the position (an active
            -- lane's position is in a newer slot: its old receipts need no lane lock)
            IF r.pos AND NOT awa.private_try_xact_lock(
                    awa.claim_lock_key(r.lane_id)) THEN
                RETURN 'claim.lane_locked';
            END IF;
            v_jobs := v_jobs || r.job_id;
            v_leases := v_leases || r.run_lease;
            IF r.pos THEN
                v_pos_jobs := v_pos_jobs || r.job_id;
                v_pos_leases := v_pos_leases || r.run_lease;
            END IF;
        END LOOP;
        -- every column but the slot and generation, whatever this version's receipts
        -- carry; a 0.9 window (win_lo, win_hi) only on the lane's position: an open
        -- receipt that once was a position, carried into the current slot with its
        -- window, would read as the lane's position there (newer than the real one in
        -- a slot between), and what was claimed after it would be claimed again
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
               string_agg(CASE WHEN a.attname IN ('win_lo', 'win_hi')
                               THEN format('CASE WHEN (job_id, run_lease) IN '
                                           '(SELECT * FROM unnest($5, $6)) THEN %I END',
                                           a.attname)
                               ELSE quote_ident(a.attname) END, ', ' ORDER BY a.attnum)
          INTO v_cols, v_exprs
          FROM pg_attribute a
         WHERE a.attrelid = 'awa.lease_claims'::regclass AND a.attnum > 0
           AND NOT a.attisdropped AND a.attname NOT IN ('claim_slot', 'claim_generation');
        EXECUTE format(
            'INSERT INTO awa.lease_claims (claim_slot, claim_generation, %1$s) '
            'SELECT $1, $2, %2$s FROM awa.%3$I '
            ' WHERE (job_id, run_lease) IN (SELECT * FROM unnest($3, $4))',
            v_cols, v_exprs, 'lease_claims_' || p_slot)
          USING v_cur.slot, v_cur.generation, v_jobs, v_leases, v_pos_jobs, v_pos_leases;
        -- the closures alike: every column but the slot and generation (0.9's carry
        -- the job's terminal state, which must move with them)
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO v_cols
          FROM pg_attribute a
         WHERE a.attrelid = 'awa.lease_claim_closures'::regclass AND a.attnum > 0
           AND NOT a.attisdropped AND a.attname NOT IN ('claim_slot', 'claim_generation');
        EXECUTE format(
            'INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, %1$s) '
            'SELECT $1, $2, %1$s FROM awa.%2$I '
            ' WHERE (job_id, run_lease) IN (SELECT * FROM unnest($3, $4))',
            v_cols, 'lease_claim_closures_' || p_slot)
          USING v_cur.slot, v_cur.generation, v_jobs, v_leases;
        RETURN NULL;
    END IF;
    -- lease ring: the newest heartbeat of each attempt whose receipt is still open and
    -- which has no newer heartbeat in another slot
    FOR r IN EXECUTE format(
        'SELECT DISTINCT ON (l.job_id, l.run_lease) l.* FROM awa.%I l '
        ' ORDER BY l.job_id, l.run_lease, l.heartbeat_at DESC', 'leases_' || p_slot)
    LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM awa.leases n WHERE n.job_id = r.job_id
                                 AND n.run_lease = r.run_lease AND n.lease_slot <> p_slot
                                 AND n.heartbeat_at >= r.heartbeat_at);
        IF NOT awa.private_try_xact_lock(awa.attempt_lock_key(r.job_id, r.run_lease)) THEN
            RETURN 'lease.attempt_locked';
        END IF;
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM awa.open_receipt(r.job_id, r.run_lease));
        INSERT INTO awa.leases (lease_slot, lease_generation, job_id, run_lease,
                                heartbeat_at, progress)
        VALUES (v_cur.slot, v_cur.generation, r.job_id, r.run_lease, r.heartbeat_at,
                r.progress);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION awa.rotate(p_schema text, p_ring text,
    OUT ring text, OUT outcome text, OUT blocker text, OUT slot int, OUT generation bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int;
    v_authority text;
    v_idle boolean;
BEGIN
    PERFORM awa.check_schema(p_schema);
    v_n := awa.ring_slot_count(p_ring);
    ring := p_ring;

    -- read-only gates: no lock beyond ACCESS SHARE, no xid
    SELECT c.slot, c.generation INTO slot, generation FROM awa.ring_cursor(p_ring) c;
    v_idle := awa.ring_is_idle(p_ring);
    IF v_idle THEN
        outcome := 'skipped_idle';
        RETURN;
    END IF;
    blocker := coalesce(awa.ring_slot_blocker(p_ring, (slot + 1) % v_n),
                        CASE WHEN v_idle IS NULL THEN 'locked' END);
    IF blocker IS NOT NULL THEN
        outcome := 'skipped_busy';
        RETURN;
    END IF;

    -- the serializer, then every gate again under it
    v_authority := awa.ring_try_serializer(p_ring);
    IF v_authority IS NULL THEN
        outcome := 'skipped_busy';
        blocker := 'locked';
        RETURN;
    END IF;
    SELECT c.slot, c.generation INTO slot, generation FROM awa.ring_cursor(p_ring) c;
    IF slot IS NULL OR slot < 0 OR generation < 0 OR slot <> generation % v_n THEN
        RAISE EXCEPTION 'invalid % ring cursor (%, %) under % authority',
                        p_ring, slot, generation, v_authority
            USING ERRCODE = 'data_corrupted';
    END IF;
    v_idle := awa.ring_is_idle(p_ring);
    IF v_idle THEN
        outcome := 'skipped_idle';
        RETURN;
    END IF;
    blocker := coalesce(awa.ring_slot_blocker(p_ring, (slot + 1) % v_n),
                        CASE WHEN v_idle IS NULL THEN 'locked' END);
    IF blocker IS NOT NULL THEN
        outcome := 'skipped_busy';
        RETURN;
    END IF;

    IF NOT awa.ring_append(p_ring, v_authority, generation + 1, ((slot + 1) % v_n)::int, v_n) THEN
        outcome := 'skipped_busy';
        blocker := 'lost_cas';
        RETURN;
    END IF;
    outcome := 'rotated';
    slot := (slot + 1) % v_n;
    generation := generation + 1;
END
$$;

-- The lanes whose newest receipt in this claim slot is still needed as the lane's
-- position: the queue ring still holds an entry of the lane at or below it. Read before
-- prune's exclusive locks (it reads every ready child); entries only ever leave the
-- queue ring, so for the receipts it saw the answer can only become too large, never
-- too small. But a sealed slot may still gain receipts from claims in flight when the
-- ring turned: "receipts" is the count it saw (in the same snapshot), and prune_locked
-- refuses the slot when the count under the locks differs (receipts are only ever
-- appended, so an equal count means the same receipts).
CREATE OR REPLACE FUNCTION awa.claim_slot_position_lanes(p_slot int,
    OUT lanes int[], OUT receipts bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('SELECT coalesce(array_agg(c.lane_id) FILTER (WHERE '
                   '         awa.lane_position_needed(c.lane_id, c.top)), ''{}''), '
                   '       coalesce(sum(c.n), 0) '
                   '  FROM (SELECT lane_id, max(lane_seq) AS top, count(*) AS n '
                   '          FROM awa.%I GROUP BY lane_id) c',
                   'lease_claims_' || p_slot)
       INTO lanes, receipts;
END
$$;

-- The part of prune that runs under the slot's exclusive locks: the locks, every gate
-- again, carry-forward, the rollup deltas, the TRUNCATE of the children that have any
-- storage (an empty one keeps its relfilenode). Returns {outcome, reason}.
-- The caller runs it with lock_timeout = awa_bgw.prune_lock_timeout, so that no wait
-- under the exclusive locks outlasts it. Claim ring: p_keep_lanes and p_receipts come
-- from awa.claim_slot_position_lanes, read before the locks.
CREATE OR REPLACE FUNCTION awa.prune_locked(p_ring text, p_slot int, p_keep_lanes int[],
                                            p_receipts bigint)
RETURNS text[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_reason text;
    v_receipts bigint;
    v_truncate text;
BEGIN
    EXECUTE (SELECT 'LOCK TABLE ' || string_agg(awa.ring_child(f, p_slot)::text, ', ')
                    || ' IN ACCESS EXCLUSIVE MODE'
               FROM unnest(awa.ring_families(p_ring)) f);
    IF awa.ring_slot_blocker(p_ring, p_slot) IS NULL THEN
        RETURN ARRAY['already_pruned', NULL];
    END IF;
    IF p_ring = 'claim' THEN
        -- receipts committed since the kept lanes were read: they were not considered
        EXECUTE format('SELECT count(*) FROM awa.%I', 'lease_claims_' || p_slot)
           INTO v_receipts;
        IF v_receipts IS DISTINCT FROM p_receipts THEN
            RETURN ARRAY['blocked', 'claim.receipts_changed'];
        END IF;
    END IF;
    v_reason := awa.ring_slot_live_reason(p_ring, p_slot);
    IF v_reason IS NOT NULL THEN
        RETURN ARRAY['skipped_active', v_reason];
    END IF;
    v_reason := awa.ring_slot_carry_forward(p_ring, p_slot, p_keep_lanes);
    IF v_reason IS NOT NULL THEN
        RETURN ARRAY['blocked', v_reason];
    END IF;
    PERFORM awa.ring_slot_record_terminal_counts(p_ring, p_slot);
    -- only the children that have storage: TRUNCATE of a child with no block gives it
    -- a new relfilenode (new pg_class rows, dead ones under a pinned horizon) and
    -- empties nothing. Under the ACCESS EXCLUSIVE locks no one else can extend a child
    -- or hold a row of it in flight, so a size of 0 means no row at all, committed,
    -- in progress or dead (docs/storage.md, prune).
    SELECT string_agg(c::text, ', ') INTO v_truncate
      FROM unnest(awa.ring_families(p_ring)) f, awa.ring_child(f, p_slot) c
     WHERE pg_relation_size(c) > 0;
    IF v_truncate IS NOT NULL THEN
        EXECUTE 'TRUNCATE ' || v_truncate;
    END IF;
    RETURN ARRAY['pruned', NULL];
END
$$;

CREATE OR REPLACE FUNCTION awa.prune(p_schema text, p_ring text,
    OUT ring text, OUT outcome text, OUT reason text, OUT slot int, OUT generation bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int;
    v_authority text;
    v_cur record;
    v_locked boolean;
    v_keep int[];
    v_receipts bigint;
    v_saved text;
    v_res text[];
BEGIN
    PERFORM awa.check_schema(p_schema);
    v_n := awa.ring_slot_count(p_ring);
    ring := p_ring;

    -- read-only gates: no lock beyond ACCESS SHARE, no xid
    SELECT c.slot, c.generation INTO v_cur FROM awa.ring_cursor(p_ring) c;
    SELECT o.slot, o.generation INTO slot, generation
      FROM awa.ring_oldest_sealed(v_cur.slot, v_cur.generation, v_n) o;
    IF slot IS NULL THEN
        outcome := 'noop';
        RETURN;
    END IF;
    reason := awa.ring_slot_blocker(p_ring, slot);
    IF reason IS NULL THEN
        outcome := 'already_pruned';
        RETURN;
    ELSIF reason = 'locked' THEN
        outcome := 'blocked';
        RETURN;
    END IF;
    reason := awa.ring_slot_live_reason(p_ring, slot);
    IF reason IS NOT NULL THEN
        outcome := 'skipped_active';
        RETURN;
    END IF;

    -- serializer -> slot row -> children, every gate again under them
    v_authority := awa.ring_try_serializer(p_ring);
    IF v_authority IS NULL THEN
        outcome := 'blocked';
        reason := 'locked';
        RETURN;
    END IF;
    SELECT c.slot, c.generation INTO v_cur FROM awa.ring_cursor(p_ring) c;
    SELECT o.slot, o.generation INTO slot, generation
      FROM awa.ring_oldest_sealed(v_cur.slot, v_cur.generation, v_n) o;
    IF slot IS NULL THEN
        outcome := 'noop';
        reason := NULL;
        RETURN;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I WHERE slot = $1 '
                   'FOR UPDATE SKIP LOCKED)', p_ring || '_ring_slots')
       INTO v_locked USING slot;
    IF NOT v_locked THEN
        outcome := 'blocked';
        reason := 'locked';
        RETURN;
    END IF;
    reason := awa.ring_slot_live_reason(p_ring, slot);
    IF reason IS NOT NULL THEN
        outcome := 'skipped_active';
        RETURN;
    END IF;
    IF p_ring = 'claim' THEN
        SELECT k.lanes, k.receipts INTO v_keep, v_receipts
          FROM awa.claim_slot_position_lanes(slot) k;
    END IF;
    v_saved := current_setting('lock_timeout');
    PERFORM set_config('lock_timeout',
                       coalesce(current_setting('awa_bgw.prune_lock_timeout', true), '10ms'),
                       true);
    BEGIN
        v_res := awa.prune_locked(p_ring, slot, v_keep, v_receipts);
        outcome := v_res[1];
        reason := v_res[2];
    EXCEPTION WHEN lock_not_available THEN
        -- everything this block wrote or locked is rolled back with it
        outcome := 'blocked';
        reason := 'lock_timeout';
    END;
    PERFORM set_config('lock_timeout', v_saved, true);
END
$$;

-- ---- internal/terminal_counts.sql ----
-- Terminal counts of pruned history: prune records a pruned slot's counts, counts
-- read them back (0.7: appended deltas plus the folded rollups).

-- Earlier builds recorded each ring through its own function; an upgrade drops them.
DROP FUNCTION IF EXISTS awa.queue_slot_record_terminal_counts(int);
DROP FUNCTION IF EXISTS awa.claim_slot_record_terminal_counts(int);

-- Prune appends the pruned slot's terminal counts (awa.ring_slot_terminal_counts) to the
-- delta table (never upserts the rollups); the fold merges them later.
CREATE OR REPLACE FUNCTION awa.ring_slot_record_terminal_counts(p_ring text, p_slot int)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH ins AS (
        INSERT INTO awa.queue_terminal_rollup_deltas
               (queue, priority, pruned_completed_delta, pruned_failed_delta)
        SELECT c.queue, c.priority, c.completed, c.failed
          FROM awa.ring_slot_terminal_counts(p_ring, p_slot) c
        RETURNING 1)
    SELECT count(*) FROM ins
$$;

-- The terminal counts of a queue's pruned history: the folded rollups plus the deltas
-- not folded yet. STABLE: it reads in its caller's snapshot.
CREATE OR REPLACE FUNCTION awa.queue_pruned_terminal_counts(p_queue text,
    OUT completed bigint, OUT failed bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(sum(t.c), 0)::bigint, coalesce(sum(t.f), 0)::bigint
      FROM (SELECT r.pruned_completed_count AS c, r.pruned_failed_count AS f
              FROM awa.queue_terminal_rollups r WHERE r.queue = p_queue
            UNION ALL
            SELECT x.pruned_completed_delta, x.pruned_failed_delta
              FROM awa.queue_terminal_rollup_deltas x WHERE x.queue = p_queue) t
$$;

-- ---- status/ring_status.sql ----
-- Status views: the rings as the tables show them, and the workers as shared memory
-- shows them.

CREATE OR REPLACE FUNCTION awa.ring_ledger_stats(p_ring text,
    OUT ledger_rows bigint, OUT last_rotated_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.ring_families(p_ring);   -- validates the ring name
    EXECUTE format('SELECT count(*), max(rotated_at) FROM awa.%I', p_ring || '_ring_rotations')
       INTO ledger_rows, last_rotated_at;
END
$$;

CREATE OR REPLACE VIEW awa.ring_status AS
SELECT r.ring,
       awa.ring_authority() AS authority,
       c.slot AS current_slot,
       c.generation,
       awa.ring_slot_count(r.ring) AS slot_count,
       l.ledger_rows,
       l.last_rotated_at,
       awa.ring_sealed_slots_holding_rows(r.ring, c.slot, c.generation)
           AS sealed_slots_awaiting_prune
  FROM (VALUES (1, 'queue'), (2, 'lease'), (3, 'claim')) r(ord, ring)
 CROSS JOIN LATERAL awa.ring_cursor(r.ring) c
 CROSS JOIN LATERAL awa.ring_ledger_stats(r.ring) l
 ORDER BY r.ord;

COMMENT ON VIEW awa.ring_status IS
'per ring: authority, cursor, slot count, ledger length, last rotation, and the sealed '
'slots that still hold rows';

-- ---- status/maintenance_status.sql ----
-- The workers as shared memory shows them.

CREATE OR REPLACE FUNCTION awa.maintenance_worker_status(
    OUT database name, OUT pid int, OUT state text, OUT state_since timestamptz,
    OUT started_at timestamptz, OUT leader_since timestamptz,
    OUT rotations jsonb, OUT prunes jsonb,
    OUT folds_run bigint, OUT folds_stood_down bigint, OUT rows_folded bigint,
    OUT rows_trimmed bigint, OUT last_fold_at timestamptz, OUT pin_holder text,
    OUT auto_flip text, OUT auto_flip_window_since timestamptz,
    OUT errors bigint, OUT last_error text, OUT last_error_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_status'
LANGUAGE C STRICT VOLATILE;

-- A session other than awa_bgw's own workers that holds the maintenance leader key
-- of a database (the public advisory lock 4708303813012965710, DESIGN 1): a worker
-- that stays follower while no other worker leads is held off by it. NULL pid: a
-- prepared transaction.
CREATE OR REPLACE FUNCTION awa.leader_key_holders(p_database name)
RETURNS TABLE (pid int, holder text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT l.pid,
           CASE WHEN l.pid IS NULL THEN 'a prepared transaction'
                ELSE format('pid %s (role %s, application %s, %s)', l.pid,
                            coalesce(a.usename::text, '?'),
                            coalesce(nullif(a.application_name, ''), '?'),
                            coalesce(a.backend_type, '?')) END
      FROM pg_locks l
      LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
       AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = p_database)
       AND l.classid::bigint = 4708303813012965710 >> 32
       AND l.objid::bigint = 4708303813012965710 & 4294967295
       AND NOT EXISTS (SELECT 1 FROM awa.maintenance_worker_status() w WHERE w.pid = l.pid)
     ORDER BY l.pid
$$;

CREATE OR REPLACE VIEW awa.maintenance_status AS
SELECT w.*, h.pid AS leader_key_holder_pid, h.holder AS leader_key_holder
  FROM awa.maintenance_worker_status() w
  LEFT JOIN LATERAL (SELECT k.pid, k.holder FROM awa.leader_key_holders(w.database) k
                      LIMIT 1) h ON true;

COMMENT ON VIEW awa.maintenance_status IS
'one row per awa_bgw maintenance worker of this cluster: state, leadership, per-ring '
'rotate and prune outcome counters, folds run and stood down (with the pin holder seen '
'at the last stand-down), rows folded and trimmed, the auto-flip check (its last verdict and '
'the start of its stable window), errors, and a session that is not an awa_bgw worker '
'holding the leader key (leader_key_holder_pid, leader_key_holder)';

-- ---- api/lane_shards.sql ----
-- The shards of 0.6-0.8: four lanes per (queue, priority), each held by an enqueuer to
-- its commit (docs/storage.md Part B §2). 0.9 has eight (api/0.9/lane_shards.sql).
CREATE OR REPLACE FUNCTION awa.lane_shards() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 4 $$;

-- ---- api/jobs.sql ----
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

-- ---- api/claim.sql ----
-- Claim (docs/storage.md §4, §5): lane positions from receipts, candidates from the
-- ready slots between the position and the cursor, receipts appended.

-- The per-slot probes of claim, in C (src/dataplane.c): direct index scans on the
-- named children, no planning, the same children locked as the EXECUTEs they replaced.
-- Cursors and slot counts are arguments (the 0.6 data plane reads its cursor from the
-- compat columns).

-- The lane's newest receipt, claim children from p_claim_slot backwards, first hit:
-- (0, NULL) when the lane has never been claimed from.
CREATE OR REPLACE FUNCTION awa.claim_position(p_lane_id int, p_claim_slot int,
                                              p_claim_gen bigint, p_claim_slots int,
                                              OUT lane_seq bigint,
                                              OUT ready_generation bigint)
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_claim_position';

-- The queue generation of the lane's newest entry (its head sequence, see
-- ensure_lanes); NULL when nothing was ever enqueued in it. Reads no partition.
CREATE OR REPLACE FUNCTION awa.lane_head_generation(p_lane_id int) RETURNS bigint
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_lane_head_generation';

-- What a claim of the lane takes: its position (claim_position), then its unclaimed,
-- uncancelled entries above it in lane order, up to p_limit, from the ready slots of
-- the position's generation (or the oldest live one) up to the lane's head generation,
-- each slot read by name for its own generation (so a stale p_queue_gen can only
-- delay an entry, never reorder or skip one); nothing is read when the head is older
-- than every live slot. As lane_position + lane_candidates. The caller holds the
-- lane's claim lock, and the calling statement's snapshot was taken after it.
CREATE OR REPLACE FUNCTION awa.lane_claimables(p_lane_id int, p_limit int,
                                               p_claim_slot int, p_claim_gen bigint,
                                               p_claim_slots int, p_queue_gen bigint,
                                               p_queue_slots int)
RETURNS SETOF awa.ready_entries
LANGUAGE C STABLE STRICT ROWS 1
AS 'MODULE_PATHNAME', 'awa_lane_claimables';

-- A hint, read without the lane's claim lock: whether the lane's newest committed
-- entry is above its position (false when its head is older than every live slot).
-- A claimer locks only lanes that look busy with work; what it takes is decided under
-- the lock (lane_claimables).
CREATE OR REPLACE FUNCTION awa.lane_has_work(p_lane_id int, p_claim_slot int,
                                             p_claim_gen bigint, p_claim_slots int,
                                             p_queue_gen bigint, p_queue_slots int)
RETURNS boolean
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_lane_has_work';

-- The lane's position: its newest receipt, probing claim children from the current
-- slot backwards (each by name). (0, NULL) when the lane has never been claimed from.
-- Callers hold the lane's claim lock, so claim prune cannot carry it away meanwhile.
CREATE OR REPLACE FUNCTION awa.lane_position(p_lane_id int, p_claim_slot int DEFAULT NULL,
                                  p_claim_gen bigint DEFAULT NULL,
                                  OUT lane_seq bigint, OUT ready_generation bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_cur record;
BEGIN
    IF p_claim_gen IS NULL THEN
        SELECT * INTO v_cur FROM awa.ring_cursor('claim');
    ELSE
        SELECT p_claim_slot AS slot, p_claim_gen AS generation INTO v_cur;
    END IF;
    SELECT p.lane_seq, p.ready_generation
      INTO lane_position.lane_seq, lane_position.ready_generation
      FROM awa.claim_position(p_lane_id, v_cur.slot, v_cur.generation,
                              awa.ring_slot_count('claim')) p;
END
$$;

-- (Not on the hot path any more: claim uses lane_claimables.) Unclaimed, uncancelled
-- entries of a lane above p_after, in lane order, from the
-- ready slots of generation p_from_gen (or the oldest live one) up to the lane's head
-- generation (its newest entry's; see ensure_lanes), each slot read by name and
-- filtered on its generation (so a stale p_queue_gen can only delay an entry, never
-- reorder or skip one). Nothing is
-- read when the head is older than every live slot. Unclaimed entries are always within
-- the last slot_count generations: prune never truncates a slot holding one, so the
-- ring cannot turn past it.
CREATE OR REPLACE FUNCTION awa.lane_candidates(p_lane_id int, p_after bigint, p_from_gen bigint,
                                    p_limit int, p_queue_gen bigint DEFAULT NULL)
RETURNS SETOF awa.ready_entries
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa.ring_slot_count('queue');
    v_head bigint := pg_sequence_last_value(awa.lane_head_seq(p_lane_id));
    v_gen bigint := p_queue_gen;
    v_got bigint := 0;
    v_rows bigint;
    g bigint;
BEGIN
    IF v_head IS NULL THEN
        RETURN;                 -- nothing was ever enqueued in this lane
    END IF;
    IF v_gen IS NULL THEN
        SELECT c.generation INTO v_gen FROM awa.ring_cursor('queue') c;
    END IF;
    FOR g IN greatest(coalesce(p_from_gen, 0), v_gen - v_n + 1, 0)
             .. least(v_head, v_gen) LOOP
        EXIT WHEN v_got >= p_limit;
        RETURN QUERY EXECUTE format(
            'SELECT r.* FROM awa.%I r WHERE r.lane_id = $1 AND r.lane_seq > $2 '
            'AND r.ready_generation = $4 '
            'AND NOT EXISTS (SELECT 1 FROM awa.%I d WHERE d.lane_id = r.lane_id '
            'AND d.lane_seq = r.lane_seq AND d.run_lease = 0) '
            'ORDER BY r.lane_seq LIMIT $3',
            'ready_entries_' || (g % v_n), 'done_entries_' || (g % v_n))
          USING p_lane_id, p_after, p_limit - v_got, g;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_got := v_got + v_rows;
    END LOOP;
END
$$;

-- claim(queue, max_batch, deadline): lanes in priority order, shards starting from
-- this backend's; a lane whose claim lock is busy is left to its holder.
CREATE OR REPLACE FUNCTION awa.claim(queue text, max_batch int DEFAULT 1,
                          deadline interval DEFAULT '5 minutes')
RETURNS SETOF awa.claimed_job
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_left int := claim.max_batch;
    v_lane int;
    v_rows int;
    v_queue_gen bigint;
    v_hint record;
    v_key bigint;
    v_now timestamptz;
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_claim(claim.queue, claim.max_batch, claim.deadline);
    -- the queue generation once per claim (a hint: lane_claimables filters on the
    -- generation of each slot it reads); the claim cursor is read under each lane's
    -- lock, in the statement that looks the lane's position up and appends the
    -- receipts, whose snapshot is taken after the lock
    SELECT c.generation INTO v_queue_gen FROM awa.ring_cursor('queue') c;
    SELECT * INTO v_hint FROM awa.ring_cursor('claim');   -- for the hints only
    FOR v_lane IN
        SELECT l.lane_id FROM awa.queue_lanes l
         WHERE l.queue = claim.queue
         ORDER BY l.priority, (l.shard + awa.lane_shards()
                               - pg_backend_pid() % awa.lane_shards()) % awa.lane_shards()
    LOOP
        EXIT WHEN v_left <= 0;
        -- lock only a lane that looks as if it had work (its head is in the ring and
        -- its newest entry above its position, read without the lock: a hint)
        CONTINUE WHEN NOT awa.lane_has_work(v_lane, v_hint.slot, v_hint.generation,
                                            awa.ring_slot_count('claim'), v_queue_gen,
                                            awa.ring_slot_count('queue'));
        v_key := awa.claim_lock_key(v_lane);
        IF NOT awa.private_try_xact_lock(v_key) THEN
            -- busy with work: before anything is claimed, wait for its holder's commit
            -- a little (polling, never queued: no deadlock), rather than come back empty
            CONTINUE WHEN v_left < claim.max_batch
                       OR NOT awa.private_try_xact_lock_for(v_key, 10);
        END IF;
        v_now := clock_timestamp();
        RETURN QUERY
        INSERT INTO awa.lease_claims AS c (claim_slot, claim_generation, job_id, run_lease,
                                           lane_id, lane_seq, ready_slot, ready_generation,
                                           queue, priority, kind, args, max_attempts,
                                           created_at, claimed_at, deadline_at)
        SELECT k.slot, k.generation, r.job_id, r.attempt, r.lane_id, r.lane_seq,
               r.ready_slot, r.ready_generation, r.queue, r.priority, r.kind, r.args,
               r.max_attempts, r.created_at, v_now, v_now + claim.deadline
          FROM awa.ring_cursor('claim') k,
               awa.lane_claimables(v_lane, v_left, k.slot, k.generation,
                                   awa.ring_slot_count('claim'), v_queue_gen,
                                   awa.ring_slot_count('queue')) r
         ORDER BY r.lane_seq
        RETURNING c.job_id, c.run_lease, c.queue, c.kind, c.args, c.priority, c.run_lease,
                  c.max_attempts, c.created_at, c.claimed_at, c.deadline_at;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_left := v_left - v_rows;
    END LOOP;
END
$$;

-- What prune, cancel and the counts ask of a lane's position (api/0.9/claim.sql answers
-- the same questions from snapshot windows):

-- Whether a ready entry is still unclaimed: above its lane's position. The caller
-- holds the lane's claim lock.
CREATE OR REPLACE FUNCTION awa.entry_unclaimed(p_entry awa.ready_entries) RETURNS boolean
LANGUAGE sql STABLE
AS $$ SELECT p_entry.lane_seq > p.lane_seq FROM awa.lane_position(p_entry.lane_id) p $$;

-- The lane's unclaimed, uncancelled entries (queue_counts' available).
CREATE OR REPLACE FUNCTION awa.lane_available(p_lane_id int) RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT count(*)
      FROM awa.lane_position(p_lane_id) p,
           LATERAL awa.lane_candidates(p_lane_id, p.lane_seq, p.ready_generation, 2147483647) c
$$;

-- Whether the queue slot holds an unclaimed, uncancelled entry of the lane (the queue
-- prune proof); p_top is the lane's highest lane_seq in the slot.
CREATE OR REPLACE FUNCTION awa.lane_unclaimed_in_slot(p_lane_id int, p_slot int, p_top bigint)
RETURNS boolean
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_pos bigint := (SELECT p.lane_seq FROM awa.lane_position(p_lane_id) p);
    v_live boolean;
BEGIN
    IF p_top <= v_pos THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I r WHERE r.lane_id = $1 '
                   'AND r.lane_seq > $2 AND NOT EXISTS (SELECT 1 FROM awa.%I d '
                   'WHERE d.lane_id = r.lane_id AND d.lane_seq = r.lane_seq '
                   'AND d.run_lease = 0))',
                   'ready_entries_' || p_slot, 'done_entries_' || p_slot)
       INTO v_live USING p_lane_id, v_pos;
    RETURN v_live;
END
$$;

-- The receipts of a claim slot that are the position of one of the given lanes (claim
-- prune carries them forward): a lane's position is its newest receipt, so in a slot
-- it can only be the lane's highest lane_seq.
CREATE OR REPLACE FUNCTION awa.claim_slot_positions(p_slot int, p_lanes int[])
RETURNS SETOF awa.lease_claims
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT t.* FROM (SELECT DISTINCT ON (c.lane_id) c.* FROM awa.%I c '
        '                  WHERE c.lane_id = ANY ($1) ORDER BY c.lane_id, c.lane_seq DESC) t '
        ' WHERE t.lane_seq = (SELECT p.lane_seq FROM awa.lane_position(t.lane_id) p)',
        'lease_claims_' || p_slot)
      USING p_lanes;
END
$$;

-- Whether the lane's position (p_top, the lane_seq of its receipt) is still needed:
-- the queue ring holds an entry of the lane at or below it.
CREATE OR REPLACE FUNCTION awa.lane_position_needed(p_lane_id int, p_top bigint) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT EXISTS (SELECT 1 FROM awa.ready_entries r
                    WHERE r.lane_id = p_lane_id AND r.lane_seq <= p_top)
$$;

-- The attempt number of a receipt: its run_lease before 0.9 (api/0.9/claim.sql: the
-- attempt column, run_lease being the attempt's token).
CREATE OR REPLACE FUNCTION awa.receipt_attempt(p_receipt awa.lease_claims) RETURNS int
LANGUAGE sql IMMUTABLE
AS $$ SELECT p_receipt.run_lease $$;

-- ---- internal/attempts.sql ----
-- After the claim (docs/storage.md §5): complete, fail, heartbeat, cancel. Every call
-- carries (job_id, run_lease) and first takes that attempt's lock; a call whose
-- attempt is already closed (completed, rescued, cancelled), or whose run_lease names
-- no attempt, changes nothing and returns false. run_lease is a bigint: in 0.9 the
-- random token the claim drew (§A.6), before it the attempt number; the attempt number
-- of a receipt is awa.receipt_attempt (api/claim.sql).

-- The still-open receipts of a set of attempts, in C (src/dataplane.c): for each
-- distinct attempt, its receipt in the newest claim child holding one (children probed
-- from p_claim_slot backwards by (job_id, run_lease), each by name, while an attempt
-- is still unfound), returned when that child holds no closure of it. The caller holds
-- the attempts' locks (prune cannot move them) and passes the claim cursor.
CREATE OR REPLACE FUNCTION awa.open_receipts_at(p_job_ids bigint[], p_run_leases bigint[],
                                                p_claim_slot int, p_claim_gen bigint,
                                                p_claim_slots int)
RETURNS SETOF awa.lease_claims
LANGUAGE C STABLE STRICT ROWS 1
AS 'MODULE_PATHNAME', 'awa_open_receipts_at';

-- The attempt's receipt if it is still open (no closure), probing claim children from
-- the current slot backwards; the caller holds the attempt lock.
CREATE OR REPLACE FUNCTION awa.open_receipt(p_job_id bigint, p_run_lease bigint)
RETURNS SETOF awa.lease_claims
LANGUAGE sql STABLE
AS $$
    SELECT r.* FROM awa.ring_cursor('claim') c,
           awa.open_receipts_at(ARRAY[p_job_id], ARRAY[p_run_lease], c.slot, c.generation,
                                awa.ring_slot_count('claim')) r
$$;

-- Closes open attempts: a closure in each receipt's claim slot and, for a terminal
-- outcome (p_state not NULL), its done entry in the current queue slot (a done entry's
-- run_lease is the attempt number: 0 for a job cancelled before any claim). The one place
-- that writes closures and outcomes (complete, complete_batch, fail, rescue, cancel).
-- The caller holds the attempts' locks.
CREATE OR REPLACE FUNCTION awa.close_attempts(p_receipts awa.lease_claims[], p_outcome text,
                                              p_state text, p_error text)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, job_id, run_lease,
                                          outcome)
    SELECT c.claim_slot, c.claim_generation, c.job_id, c.run_lease, p_outcome
      FROM unnest(p_receipts) c;
    IF p_state IS NOT NULL THEN
        INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease,
                                      lane_id, lane_seq, queue, priority, kind, state,
                                      error, created_at)
        SELECT k.slot, k.generation, c.job_id, awa.receipt_attempt(c), c.lane_id, c.lane_seq,
               c.queue, c.priority, c.kind, p_state, p_error, c.created_at
          FROM awa.ring_cursor('queue') k, unnest(p_receipts) c;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa.complete(job_id bigint, run_lease bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_receipt awa.lease_claims;
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.private_xact_lock(awa.attempt_lock_key(complete.job_id, complete.run_lease));
    SELECT * INTO v_receipt FROM awa.open_receipt(complete.job_id, complete.run_lease);
    IF v_receipt.job_id IS NULL THEN
        RETURN false;
    END IF;
    PERFORM awa.close_attempts(ARRAY[v_receipt], 'completed', 'completed', NULL);
    RETURN true;
END
$$;

-- The still-open receipts of a set of attempts (open_receipts_at at the current claim
-- cursor). The caller holds the attempts' locks.
CREATE OR REPLACE FUNCTION awa.open_receipts(p_job_ids bigint[], p_run_leases bigint[])
RETURNS awa.lease_claims[]
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(array_agg(r), '{}')
      FROM awa.ring_cursor('claim') k,
           awa.open_receipts_at(p_job_ids, p_run_leases, k.slot, k.generation,
                                awa.ring_slot_count('claim')) r
$$;

-- Completes many attempts in one round trip (locks taken in key order); returns the
-- attempts it completed.
CREATE OR REPLACE FUNCTION awa.complete_batch(job_ids bigint[], run_leases bigint[])
RETURNS TABLE (job_id bigint, run_lease bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_open awa.lease_claims[];
BEGIN
    PERFORM awa.require_read_committed();
    IF cardinality(job_ids) IS DISTINCT FROM cardinality(run_leases)
       OR cardinality(job_ids) > 1000 THEN
        RAISE EXCEPTION 'job_ids and run_leases must be arrays of the same length (at most 1000)'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the job_id and run_lease of each claimed attempt, pairwise; '
                         'each attempt takes a lock until commit, so batches stay small.';
    END IF;
    -- one statement: the keys sorted (a materialized sort under a plain scan), then
    -- locked in that order
    PERFORM awa.private_xact_lock(s.k)
       FROM (SELECT DISTINCT awa.attempt_lock_key(j, l) AS k
               FROM unnest(job_ids, run_leases) AS u(j, l)
              WHERE j IS NOT NULL AND l IS NOT NULL
              ORDER BY 1 OFFSET 0) s;
    -- the open receipts of all these attempts, one probe per claim slot (each attempt's
    -- receipt is in exactly one slot; the attempt locks keep prune from moving it)
    v_open := awa.open_receipts(job_ids, run_leases);
    PERFORM awa.close_attempts(v_open, 'completed', 'completed', NULL);
    RETURN QUERY SELECT c.job_id, c.run_lease::bigint FROM unnest(v_open) c ORDER BY 1, 2;
END
$$;

-- Retry backoff: 2^attempt seconds, at most an hour.
CREATE OR REPLACE FUNCTION awa.retry_backoff(p_attempt int) RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT make_interval(secs => least(power(2, least(p_attempt, 12)), 3600)) $$;

-- Ends an open attempt as failed: retried (deferred by retry_in or the backoff) while
-- attempts remain, else moved to failed_jobs. Shared by fail() and rescue.
CREATE OR REPLACE FUNCTION awa.fail_attempt(p_receipt awa.lease_claims, p_outcome text, p_error text,
                                 p_retry_in interval)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_attempt int := awa.receipt_attempt(p_receipt);
BEGIN
    IF v_attempt < p_receipt.max_attempts THEN
        PERFORM awa.close_attempts(ARRAY[p_receipt], CASE WHEN p_outcome = 'failed'
                                                          THEN 'retried' ELSE p_outcome END,
                                   NULL, NULL);
        PERFORM awa.enqueue_jobs(p_receipt.queue, ARRAY[ROW(1, p_receipt.job_id,
            p_receipt.kind, p_receipt.args, p_receipt.priority,
            now() + coalesce(p_retry_in, awa.retry_backoff(v_attempt)),
            v_attempt + 1, p_receipt.max_attempts,
            p_receipt.created_at, p_error)::awa.new_job]);
    ELSE
        PERFORM awa.close_attempts(ARRAY[p_receipt], p_outcome, 'failed', p_error);
        INSERT INTO awa.failed_jobs (job_id, queue, priority, kind, args, attempts,
                                     max_attempts, error, created_at)
        VALUES (p_receipt.job_id, p_receipt.queue, p_receipt.priority, p_receipt.kind,
                p_receipt.args, v_attempt, p_receipt.max_attempts, p_error,
                p_receipt.created_at)
        ON CONFLICT (job_id) DO NOTHING;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa.fail(job_id bigint, run_lease bigint, error text,
                         retry_in interval DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_receipt awa.lease_claims;
BEGIN
    PERFORM awa.require_read_committed();
    IF fail.retry_in < interval '0' THEN
        RAISE EXCEPTION 'retry_in must not be negative, not %', fail.retry_in
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'NULL means the default exponential backoff.';
    END IF;
    PERFORM awa.check_payload('error text', octet_length(fail.error));
    PERFORM awa.private_xact_lock(awa.attempt_lock_key(fail.job_id, fail.run_lease));
    SELECT * INTO v_receipt FROM awa.open_receipt(fail.job_id, fail.run_lease);
    IF v_receipt.job_id IS NULL THEN
        RETURN false;
    END IF;
    PERFORM awa.fail_attempt(v_receipt, 'failed', fail.error, fail.retry_in);
    RETURN true;
END
$$;

CREATE OR REPLACE FUNCTION awa.heartbeat(job_id bigint, run_lease bigint, progress jsonb DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_receipt awa.lease_claims;
    v_cur record;
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_payload('heartbeat progress', pg_column_size(heartbeat.progress));
    PERFORM awa.private_xact_lock(awa.attempt_lock_key(heartbeat.job_id, heartbeat.run_lease));
    SELECT * INTO v_receipt FROM awa.open_receipt(heartbeat.job_id, heartbeat.run_lease);
    IF v_receipt.job_id IS NULL THEN
        RETURN false;
    END IF;
    SELECT * INTO v_cur FROM awa.ring_cursor('lease');
    INSERT INTO awa.leases (lease_slot, lease_generation, job_id, run_lease, progress)
    VALUES (v_cur.slot, v_cur.generation, heartbeat.job_id, heartbeat.run_lease,
            heartbeat.progress);
    RETURN true;
END
$$;

-- The newest still-claimable ready entry of a job, if any (probing every queue slot:
-- cancel is rare; the hot paths never do this).
CREATE OR REPLACE FUNCTION awa.find_ready_entry(p_job_id bigint) RETURNS SETOF awa.ready_entries
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa.ring_slot_count('queue');
    s int;
BEGIN
    FOR s IN 0 .. v_n - 1 LOOP
        RETURN QUERY EXECUTE format(
            'SELECT r.* FROM awa.%I r WHERE r.job_id = $1 AND NOT EXISTS '
            '(SELECT 1 FROM awa.%I d WHERE d.lane_id = r.lane_id AND d.lane_seq = r.lane_seq '
            'AND d.run_lease = 0)', 'ready_entries_' || s, 'done_entries_' || s)
          USING p_job_id;
    END LOOP;
END
$$;

-- The job's open receipt, whatever its run_lease.
CREATE OR REPLACE FUNCTION awa.find_open_receipt(p_job_id bigint) RETURNS SETOF awa.lease_claims
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa.ring_slot_count('claim');
    s int;
BEGIN
    FOR s IN 0 .. v_n - 1 LOOP
        RETURN QUERY EXECUTE format(
            'SELECT c.* FROM awa.%I c WHERE c.job_id = $1 AND NOT EXISTS '
            '(SELECT 1 FROM awa.%I x WHERE x.job_id = c.job_id AND x.run_lease = c.run_lease)',
            'lease_claims_' || s, 'lease_claim_closures_' || s)
          USING p_job_id;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION awa.cancel(job_id bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_def awa.deferred_jobs;
    v_entry awa.ready_entries;
    v_receipt awa.lease_claims;
    v_cur record;
BEGIN
    PERFORM awa.require_read_committed();
    -- hold off prune (its TRUNCATE is not MVCC-safe) before the lookups below take
    -- their snapshots
    LOCK TABLE awa.ready_entries, awa.done_entries, awa.lease_claims,
               awa.lease_claim_closures IN ACCESS SHARE MODE;
    -- scheduled or waiting for a retry
    DELETE FROM awa.deferred_jobs d WHERE d.job_id = cancel.job_id RETURNING * INTO v_def;
    IF v_def.job_id IS NOT NULL THEN
        SELECT * INTO v_cur FROM awa.ring_cursor('queue');
        INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease,
                                      lane_id, lane_seq, queue, priority, kind, state,
                                      created_at)
        VALUES (v_cur.slot, v_cur.generation, v_def.job_id, v_def.attempt, 0, 0,
                v_def.queue, v_def.priority, v_def.kind, 'cancelled', v_def.created_at);
        RETURN true;
    END IF;
    -- available: under its lane's claim lock, so no claimer takes it meanwhile
    FOR v_entry IN SELECT * FROM awa.find_ready_entry(cancel.job_id) ORDER BY attempt DESC LOOP
        PERFORM awa.private_xact_lock(awa.claim_lock_key(v_entry.lane_id));
        IF awa.entry_unclaimed(v_entry) THEN
            INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease,
                                          lane_id, lane_seq, queue, priority, kind, state,
                                          created_at)
            VALUES (v_entry.ready_slot, v_entry.ready_generation, v_entry.job_id, 0,
                    v_entry.lane_id, v_entry.lane_seq, v_entry.queue, v_entry.priority,
                    v_entry.kind, 'cancelled', v_entry.created_at);
            RETURN true;
        END IF;
        EXIT;
    END LOOP;
    -- running
    FOR v_receipt IN SELECT * FROM awa.find_open_receipt(cancel.job_id) LOOP
        PERFORM awa.private_xact_lock(awa.attempt_lock_key(v_receipt.job_id, v_receipt.run_lease));
        SELECT * INTO v_receipt FROM awa.open_receipt(v_receipt.job_id, v_receipt.run_lease);
        IF v_receipt.job_id IS NOT NULL THEN
            PERFORM awa.close_attempts(ARRAY[v_receipt], 'cancelled', 'cancelled', NULL);
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

-- ---- maintenance/jobs.sql ----
-- The worker's job maintenance, each one transaction callable by hand: promotion of
-- due deferred jobs and the retention of failed_jobs (the rescue of attempts past their
-- deadline or silent too long is in rescue.sql).

CREATE OR REPLACE FUNCTION awa.promote_deferred(p_schema text, OUT promoted bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_due awa.deferred_jobs[];
    v_queue text;
BEGIN
    PERFORM awa.check_schema(p_schema);
    PERFORM awa.require_read_committed();
    WITH due AS (
        DELETE FROM awa.deferred_jobs d
         WHERE d.job_id IN (SELECT x.job_id FROM awa.deferred_jobs x
                             WHERE x.run_at <= now()
                             ORDER BY x.run_at, x.job_id LIMIT 5000
                             FOR UPDATE SKIP LOCKED)
        RETURNING d.*)
    SELECT array_agg(due ORDER BY due.run_at, due.job_id) INTO v_due FROM due;
    promoted := coalesce(cardinality(v_due), 0);
    FOR v_queue IN SELECT DISTINCT d.queue FROM unnest(v_due) d ORDER BY 1 LOOP
        PERFORM awa.enqueue_jobs(v_queue, ARRAY(
            SELECT ROW(0, d.job_id, d.kind, d.args, d.priority, d.run_at, d.attempt,
                       d.max_attempts, d.created_at, NULL)::awa.new_job
              FROM unnest(v_due) d WHERE d.queue = v_queue));
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION awa.purge_failed_jobs(p_schema text, OUT purged bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_keep interval := coalesce(current_setting('awa_bgw.failed_retention', true),
                                '7d')::interval;
BEGIN
    PERFORM awa.check_schema(p_schema);
    DELETE FROM awa.failed_jobs f
     WHERE f.job_id IN (SELECT x.job_id FROM awa.failed_jobs x
                         WHERE x.failed_at < now() - v_keep
                         ORDER BY x.failed_at LIMIT 1000);
    GET DIAGNOSTICS purged = ROW_COUNT;
END
$$;

-- ---- maintenance/rescue.sql ----
-- The worker's rescue of stuck attempts, as 0.6-0.8 have it (0.9: 0.9/rescue.sql).

-- Open receipts past their deadline, or whose newest heartbeat (or, without one, the
-- claim) is older than awa_bgw.job_heartbeat_timeout: closed as rescued and retried, or
-- failed when out of attempts. Takes the claim ring's serializer first, as prune does,
-- so it never races a carry-forward; an attempt whose lock is busy is left for the next
-- round.
CREATE OR REPLACE FUNCTION awa.rescue(p_schema text, OUT rescued bigint, OUT outcome text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_timeout interval := coalesce(current_setting('awa_bgw.job_heartbeat_timeout', true),
                                   '90s')::interval;
    v_n int := awa.ring_slot_count('claim');
    -- each child has a row type of its own: the receipt is read as the parent's (a
    -- plan cached for one child's type fails on another's)
    r record;
    s int;
BEGIN
    PERFORM awa.check_schema(p_schema);
    PERFORM awa.require_read_committed();
    rescued := 0;
    IF awa.ring_try_serializer('claim') IS NULL THEN
        outcome := 'blocked';
        RETURN;
    END IF;
    FOR s IN 0 .. v_n - 1 LOOP
        FOR r IN EXECUTE format(
            'SELECT ROW(c.*)::awa.lease_claims AS receipt, CASE WHEN c.deadline_at < clock_timestamp() THEN ''deadline passed'' '
            '               ELSE ''no heartbeat for '' || $1::text END AS why '
            '  FROM awa.%I c '
            ' WHERE NOT EXISTS (SELECT 1 FROM awa.%I x WHERE x.job_id = c.job_id '
            '                   AND x.run_lease = c.run_lease) '
            '   AND (c.deadline_at < clock_timestamp() '
            '        OR greatest(c.claimed_at, (SELECT max(l.heartbeat_at) FROM awa.leases l '
            '                     WHERE l.job_id = c.job_id AND l.run_lease = c.run_lease)) '
            '           < clock_timestamp() - $1) '
            ' LIMIT 500', 'lease_claims_' || s, 'lease_claim_closures_' || s)
          USING v_timeout
        LOOP
            CONTINUE WHEN NOT awa.private_try_xact_lock(
                awa.attempt_lock_key((r.receipt).job_id, (r.receipt).run_lease));
            PERFORM awa.fail_attempt(r.receipt, 'rescued', 'rescued: ' || r.why, NULL);
            rescued := rescued + 1;
        END LOOP;
    END LOOP;
    outcome := CASE WHEN rescued > 0 THEN 'rescued' ELSE 'none' END;
END
$$;

-- ---- api/counts.sql ----
-- Exact counts and terminal history. queue_counts first locks the ring families (ACCESS
-- SHARE, which waits for a prune in progress and keeps the next from truncating
-- anything until it commits), then computes all five numbers in one later statement:
-- queue_counts_in_snapshot is STABLE, so every read it makes uses that statement's
-- snapshot, taken after the lock. TRUNCATE is not MVCC-safe: a snapshot taken before a
-- prune committed would see the truncated slot empty and miss what it carried forward.
-- (A REPEATABLE READ transaction's snapshot may predate a prune; its counts of pruned
-- history are not exact.)

-- One claim child's part of a queue's counts, in the caller's snapshot: its receipts of
-- the queue with no closure (running), and the terminal outcomes it holds. Before 0.9 a
-- closure carries no outcome (done entries do): none. api/0.9/counts.sql replaces it.
CREATE OR REPLACE FUNCTION awa.claim_slot_queue_counts(p_queue text, p_slot int,
    OUT running bigint, OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('SELECT count(*), 0, 0 FROM awa.%I c WHERE c.queue = $1 AND NOT EXISTS '
                   '(SELECT 1 FROM awa.%I x WHERE x.job_id = c.job_id '
                   'AND x.run_lease = c.run_lease)',
                   'lease_claims_' || p_slot, 'lease_claim_closures_' || p_slot)
       INTO running, completed, failed USING p_queue;
END
$$;

CREATE OR REPLACE FUNCTION awa.queue_counts_in_snapshot(queue text,
    OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_lane int;
    v_n int := awa.ring_slot_count('claim');
    v_part record;
    s int;
BEGIN
    available := 0;
    FOR v_lane IN SELECT DISTINCT l.lane_id FROM awa.queue_lanes l
                   WHERE l.queue = queue_counts_in_snapshot.queue LOOP
        available := available + awa.lane_available(v_lane);
    END LOOP;

    SELECT count(*) INTO scheduled FROM awa.deferred_jobs d WHERE d.queue = queue_counts_in_snapshot.queue;

    SELECT coalesce(sum(t.c), 0), coalesce(sum(t.f), 0) INTO completed, failed
      FROM (SELECT count(*) FILTER (WHERE d.state = 'completed') AS c,
                   count(*) FILTER (WHERE d.state = 'failed') AS f
              FROM awa.done_entries d WHERE d.queue = queue_counts_in_snapshot.queue
            UNION ALL
            SELECT p.completed, p.failed
              FROM awa.queue_pruned_terminal_counts(queue_counts_in_snapshot.queue) p) t;

    running := 0;
    FOR s IN 0 .. v_n - 1 LOOP
        SELECT * INTO v_part FROM awa.claim_slot_queue_counts(queue_counts_in_snapshot.queue, s);
        running := running + v_part.running;
        completed := completed + v_part.completed;
        failed := failed + v_part.failed;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION awa.queue_counts(queue text,
    OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_name('queue', queue_counts.queue);
    LOCK TABLE awa.ready_entries, awa.done_entries, awa.lease_claims,
               awa.lease_claim_closures IN ACCESS SHARE MODE;
    SELECT * INTO available, scheduled, running, completed, failed
      FROM awa.queue_counts_in_snapshot(queue_counts.queue);
END
$$;

-- Terminal outcomes still in the queue ring (pruned history survives as counts only;
-- failed jobs are also kept in awa.failed_jobs for awa_bgw.failed_retention).
CREATE OR REPLACE VIEW awa.terminal_jobs AS
SELECT d.job_id, d.queue, d.priority, d.kind, d.state,
       nullif(d.run_lease, 0) AS attempt, d.error, d.created_at, d.finished_at
  FROM awa.done_entries d;

-- ---- internal/lanes.sql ----
-- Lanes of 0.6 to 0.8 (docs/storage.md Part B §2): registration with a head sequence
-- per lane, and the enqueue lock of a lane held to commit, under which lane_seq order
-- is commit order. 0.9 replaces this piece (internal/0.9/lanes.sql): no lock, no sequence.

-- Registers the shards of (queue, priority) once; SECURITY DEFINER so that an
-- application role needs no INSERT on the registry. Each lane also gets a head
-- sequence, awa.lane_<id>_head, which every enqueue sets (under the lane lock) to the
-- queue-ring generation of the lane's newest entry: a claimer reads it without
-- touching any partition, and skips a lane whose newest entry is in a slot that has
-- already been pruned (so nothing in it can be unclaimed). The sequences are created
-- at run time, so they are not extension members: pg_dump keeps them with their values,
-- and DROP EXTENSION leaves them in schema awa (a later install reuses them).
CREATE OR REPLACE FUNCTION awa.ensure_lanes(p_queue text, p_priority smallint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET client_min_messages = warning
AS $$
DECLARE
    v_id int;
    s int;
BEGIN
    IF EXISTS (SELECT 1 FROM awa.queue_lanes WHERE queue = p_queue AND priority = p_priority) THEN
        RETURN;
    END IF;
    PERFORM awa.private_xact_lock(hashtextextended('awa.lane_registry', 0));
    IF EXISTS (SELECT 1 FROM awa.queue_lanes WHERE queue = p_queue AND priority = p_priority) THEN
        RETURN;
    END IF;
    FOR s IN 0 .. awa.lane_shards() - 1 LOOP
        v_id := nextval('awa.queue_lane_id_seq');
        EXECUTE format('CREATE SEQUENCE IF NOT EXISTS awa.%I AS bigint MINVALUE 0 START 0',
                       'lane_' || v_id || '_head');
        -- one left behind by an earlier install starts over as "never enqueued"
        PERFORM setval(awa.lane_head_seq(v_id), 0, false);
        INSERT INTO awa.queue_lanes (lane_id, queue, priority, shard)
        VALUES (v_id, p_queue, p_priority, s);
    END LOOP;
END
$$;

-- The lane's head sequence.
CREATE OR REPLACE FUNCTION awa.lane_head_seq(p_lane_id int) RETURNS regclass
LANGUAGE sql STABLE
AS $$ SELECT format('awa.%I', 'lane_' || p_lane_id || '_head')::regclass $$;

-- The key of a lane's enqueue lock (a private lock, internal/private_locks.sql).
CREATE OR REPLACE FUNCTION awa.enqueue_lock_key(p_lane_id int) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.enqueue:' || p_lane_id::text, 0) $$;

-- Takes the enqueue lock of one shard of (queue, priority) and returns its lane; held
-- to commit, so lane_seq order is commit order in the lane. A transaction keeps using
-- the lane it already holds (asked of the lock manager: nothing a caller can set says
-- which), so it never holds two shards of one pair (no lock cycle between two such
-- transactions). Others start from their backend's own shard (so one session's jobs
-- stay in one lane, in order) and take the first free one; concurrent producers spread
-- over the shards, so several claimers can drain them at once. Only when every shard
-- is busy does it wait, for its own.
CREATE OR REPLACE FUNCTION awa.lock_enqueue_lane(p_queue text, p_priority smallint) RETURNS int
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_lanes int[];
    v_n int;
    v_start int;
    v_lane int;
    i int;
BEGIN
    SELECT array_agg(lane_id ORDER BY shard) INTO v_lanes
      FROM awa.queue_lanes WHERE queue = p_queue AND priority = p_priority;
    IF v_lanes IS NULL THEN
        PERFORM awa.ensure_lanes(p_queue, p_priority);
        SELECT array_agg(lane_id ORDER BY shard) INTO v_lanes
          FROM awa.queue_lanes WHERE queue = p_queue AND priority = p_priority;
    END IF;
    FOREACH v_lane IN ARRAY v_lanes LOOP
        IF awa.private_xact_lock_held(awa.enqueue_lock_key(v_lane)) THEN
            RETURN v_lane;
        END IF;
    END LOOP;
    v_n := cardinality(v_lanes);
    v_start := pg_backend_pid() % v_n;
    FOR i IN 0 .. v_n - 1 LOOP
        v_lane := v_lanes[(v_start + i) % v_n + 1];
        IF awa.private_try_xact_lock(awa.enqueue_lock_key(v_lane)) THEN
            RETURN v_lane;
        END IF;
    END LOOP;
    v_lane := v_lanes[v_start + 1];
    PERFORM awa.private_xact_lock(awa.enqueue_lock_key(v_lane));
    RETURN v_lane;
END
$$;

-- A job on its way into the ring (enqueue, batch, promotion, retry).
-- Appends ready entries for jobs of one (queue, priority), due now, into the current
-- queue slot, under one lane lock. The cursor is read after the lock, in its own
-- statement; lane_seq is taken in job_id order.
CREATE OR REPLACE FUNCTION awa.enqueue_ready(p_queue text, p_priority smallint, p_jobs awa.new_job[])
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_lane int := awa.lock_enqueue_lane(p_queue, p_priority);
    v_cur record;
BEGIN
    SELECT * INTO v_cur FROM awa.ring_cursor('queue');
    INSERT INTO awa.ready_entries (ready_slot, ready_generation, lane_id, lane_seq, job_id,
                                   queue, priority, kind, args, attempt, max_attempts,
                                   created_at)
    SELECT v_cur.slot, v_cur.generation, v_lane, nextval('awa.lane_seq'), j.job_id,
           p_queue, p_priority, j.kind, j.args, j.attempt, j.max_attempts, j.created_at
      FROM (SELECT * FROM unnest(p_jobs) ORDER BY job_id) j;
    -- setval writes WAL each time: only when the head moves (only holders of the
    -- lane lock move it, so it cannot change between the read and the write)
    IF awa.lane_head_generation(v_lane) IS DISTINCT FROM v_cur.generation THEN
        PERFORM setval(awa.lane_head_seq(v_lane), v_cur.generation);
    END IF;
END
$$;

-- ---- maintenance/folds.sql ----
-- The horizon gate and the folds (DESIGN §3.8–3.9, §5). A fold deletes rows, so it runs
-- only when nothing genuinely pins the MVCC horizon: then what it deletes is reclaimable
-- at once. The gate is checked at the start of the fold's own transaction.

-- Every holder of the xmin horizon this database can see, with whether it counts as a
-- genuine pin and why. Clears the statistics snapshot first (pg_stat_activity is
-- otherwise cached for the rest of the transaction).
--
-- A standby's feedback xmin and a replication slot's xmin carry no start time, and a
-- standby with hot_standby_feedback always feeds one back (its oldest running xid,
-- refreshed every wal_receiver_status_interval), so "set" alone would pin for good. They
-- are dated against the ring ledgers instead: v_dated is the xid of the newest rotation
-- made at least min_age ago (a rotation's xid is assigned before its rotated_at), and an
-- xmin that does not precede it is younger than min_age (plus the gap to that rotation)
-- and does not pin. With no rotation that old to compare with (or only a frozen one,
-- whose xid says nothing), an xmin pins.
CREATE OR REPLACE FUNCTION awa.horizon_pins_at(p_min_age interval,
    OUT kind text, OUT pid int, OUT name text, OUT state text, OUT xid xid, OUT xmin xid,
    OUT xact_age interval, OUT pins boolean, OUT reason text)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_dated xid;
BEGIN
    IF p_min_age IS NULL OR p_min_age < interval '0' THEN
        RAISE EXCEPTION 'min_age must be a non-negative interval, not %', p_min_age
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'awa_bgw.horizon_pin_min_age is the usual value.';
    END IF;
    SELECT r.xmin INTO v_dated
      FROM ((SELECT q.xmin, q.rotated_at FROM awa.queue_ring_rotations q
              WHERE q.rotated_at <= now() - p_min_age AND age(q.xmin) < 2147483647
              ORDER BY q.generation DESC LIMIT 1)
            UNION ALL
            (SELECT l.xmin, l.rotated_at FROM awa.lease_ring_rotations l
              WHERE l.rotated_at <= now() - p_min_age AND age(l.xmin) < 2147483647
              ORDER BY l.generation DESC LIMIT 1)
            UNION ALL
            (SELECT c.xmin, c.rotated_at FROM awa.claim_ring_rotations c
              WHERE c.rotated_at <= now() - p_min_age AND age(c.xmin) < 2147483647
              ORDER BY c.generation DESC LIMIT 1)) r
     ORDER BY r.rotated_at DESC LIMIT 1;
    PERFORM pg_stat_clear_snapshot();
    RETURN QUERY
    -- sessions and background workers of this database
    SELECT CASE WHEN a.backend_type = 'client backend' THEN 'backend' ELSE 'worker' END,
           a.pid, coalesce(nullif(a.application_name, ''), a.backend_type)::text,
           a.state, a.backend_xid, a.backend_xmin, now() - a.xact_start,
           p.pins, p.why
      FROM pg_stat_activity a
     CROSS JOIN LATERAL (
           SELECT (a.xact_start <= now() - p_min_age
                   AND ((a.backend_xid IS NOT NULL AND a.state LIKE 'idle in transaction%')
                        OR a.backend_xmin IS NOT NULL)) AS pins,
                  CASE WHEN a.xact_start > now() - p_min_age THEN 'younger than min_age'
                       WHEN a.backend_xid IS NOT NULL AND a.state LIKE 'idle in transaction%'
                       THEN 'idle in transaction holding a write xid'
                       WHEN a.backend_xmin IS NOT NULL THEN 'holds a snapshot'
                       ELSE 'holds no snapshot' END AS why) p
     WHERE a.datname = current_database()
       AND a.pid <> pg_backend_pid()
       AND a.backend_type NOT IN ('autovacuum worker', 'autovacuum launcher',
                                  'awa_bgw worker', 'awa_bgw launcher', 'walsender')
       AND (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
    UNION ALL
    -- standbys feeding back an xmin (hot_standby_feedback): cluster-wide
    SELECT 'walsender', r.pid, r.application_name::text, r.state, NULL::xid,
           r.backend_xmin, NULL::interval, o.old,
           CASE WHEN o.old THEN 'standby feedback holds xmin' ELSE 'younger than min_age' END
      FROM pg_stat_replication r
     CROSS JOIN LATERAL (SELECT v_dated IS NULL OR age(r.backend_xmin) >= age(v_dated)) o(old)
     WHERE r.backend_xmin IS NOT NULL
    UNION ALL
    -- prepared transactions of this database
    SELECT 'prepared', NULL::int, x.gid, 'prepared', x.transaction, NULL::xid,
           now() - x.prepared, x.prepared <= now() - p_min_age,
           CASE WHEN x.prepared <= now() - p_min_age THEN 'prepared transaction'
                ELSE 'younger than min_age' END
      FROM pg_prepared_xacts x
     WHERE x.database = current_database()
    UNION ALL
    -- replication slots: an xmin pins; a logical slot's catalog_xmin alone does not
    SELECT 'slot', NULL::int, s.slot_name::text, s.slot_type, NULL::xid,
           coalesce(s.xmin, s.catalog_xmin), NULL::interval, o.old,
           CASE WHEN s.xmin IS NULL THEN 'catalog_xmin only (does not hold back user tables)'
                WHEN o.old THEN 'replication slot holds xmin'
                ELSE 'younger than min_age' END
      FROM pg_replication_slots s
     CROSS JOIN LATERAL (SELECT s.xmin IS NOT NULL
                                AND (v_dated IS NULL OR age(s.xmin) >= age(v_dated))) o(old)
     WHERE s.xmin IS NOT NULL OR s.catalog_xmin IS NOT NULL
    UNION ALL
    -- a caller who cannot see other roles' sessions (their state, xact_start and
    -- backend_type read NULL) cannot tell whether they pin: that counts as a pin
    SELECT 'gate', NULL::int, current_user::text, NULL::text, NULL::xid, NULL::xid,
           NULL::interval, true,
           'this role cannot see other roles'' sessions: grant it pg_read_all_stats'
     WHERE NOT pg_has_role(current_user, 'pg_read_all_stats', 'USAGE');
END
$$;

CREATE OR REPLACE VIEW awa.horizon_pins AS
SELECT * FROM awa.horizon_pins_at(coalesce(current_setting('awa_bgw.horizon_pin_min_age', true),
                                           '5s')::interval);

COMMENT ON VIEW awa.horizon_pins IS
'every holder of the MVCC horizon visible from this database, whether it genuinely pins '
'it (older than awa_bgw.horizon_pin_min_age) and why';

-- The first genuine pin's description, or NULL when nothing pins the horizon.
CREATE OR REPLACE FUNCTION awa.horizon_pin_holder(p_min_age interval) RETURNS text
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT p.kind || ' ' || coalesce(p.pid::text, p.name) || ': ' || p.reason
      FROM awa.horizon_pins_at(p_min_age) p WHERE p.pins
     ORDER BY p.xact_age DESC NULLS LAST LIMIT 1
$$;

CREATE OR REPLACE FUNCTION awa.horizon_pinned(min_age interval) RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT awa.horizon_pin_holder(min_age) IS NOT NULL $$;

CREATE OR REPLACE FUNCTION awa.fold_min_age() RETURNS interval
LANGUAGE sql STABLE
AS $$ SELECT coalesce(current_setting('awa_bgw.horizon_pin_min_age', true), '5s')::interval $$;

-- Drains the rollup deltas into the rollups (GREATEST(0, …) clamp, keys in order), unless
-- the horizon is genuinely pinned.
CREATE OR REPLACE FUNCTION awa.fold_terminal_rollup_deltas(p_schema text,
    OUT outcome text, OUT folded_rows bigint, OUT folded_keys bigint, OUT pin text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_deltas awa.rollup_delta[];
BEGIN
    PERFORM awa.check_schema(p_schema);
    pin := awa.horizon_pin_holder(awa.fold_min_age());
    IF pin IS NOT NULL THEN
        outcome := 'stood_down';
        RETURN;
    END IF;
    WITH d AS (
        DELETE FROM awa.queue_terminal_rollup_deltas
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

-- Trims each ledger to its newest slot_count rows (one wrap), in both authorities,
-- unless the horizon is genuinely pinned.
CREATE OR REPLACE FUNCTION awa.fold_ring_rotation_ledgers(p_schema text,
    OUT outcome text, OUT trimmed_rows bigint, OUT pin text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r text;
    n bigint;
BEGIN
    PERFORM awa.check_schema(p_schema);
    pin := awa.horizon_pin_holder(awa.fold_min_age());
    IF pin IS NOT NULL THEN
        outcome := 'stood_down';
        RETURN;
    END IF;
    trimmed_rows := 0;
    FOREACH r IN ARRAY ARRAY['queue', 'lease', 'claim'] LOOP
        EXECUTE format('DELETE FROM awa.%1$I WHERE generation < '
                       '(SELECT max(generation) FROM awa.%1$I) - ($1 - 1)',
                       r || '_ring_rotations')
          USING awa.ring_slot_count(r);
        GET DIAGNOSTICS n = ROW_COUNT;
        trimmed_rows := trimmed_rows + n;
    END LOOP;
    outcome := 'folded';
END
$$;

-- The failed_jobs retention, in small batches, under the same gate.
CREATE OR REPLACE FUNCTION awa.purge_failed_jobs_gated(p_schema text, OUT outcome text,
                                            OUT purged bigint, OUT pin text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_schema(p_schema);
    pin := awa.horizon_pin_holder(awa.fold_min_age());
    IF pin IS NOT NULL THEN
        outcome := 'stood_down';
        purged := 0;
        RETURN;
    END IF;
    SELECT p.purged INTO purged FROM awa.purge_failed_jobs(p_schema) p;
    outcome := 'folded';
END
$$;

-- ---- maintenance/0.8/flip.sql ----
-- 0.8: the flip happened before the contract; the function stays for callers and
-- answers ledger.

CREATE OR REPLACE FUNCTION awa.flip_ring_authority(p_schema text, p_force boolean DEFAULT false,
                                                   p_fresh_seconds float8 DEFAULT 90)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_schema(p_schema);
    RETURN awa.ring_authority();
END
$$;

-- ---- grants/grants.sql ----
-- Privileges: maintenance and internals are revoked from PUBLIC; the status views and
-- the read-only helpers they call stay readable.

REVOKE ALL ON ALL TABLES IN SCHEMA awa FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA awa FROM PUBLIC;

GRANT EXECUTE ON FUNCTION awa.semver_rank(text), awa.ring_authority_min_flip_version()
    TO PUBLIC;

-- The application API (SECURITY DEFINER, pinned search_path): grant it to a role with
--   GRANT USAGE ON SCHEMA awa TO app;
--   GRANT EXECUTE ON FUNCTION awa.enqueue(text, text, jsonb, smallint, timestamptz, int),
--       awa.enqueue_batch(text, jsonb), awa.claim(text, int, interval, interval),
--       awa.complete(bigint, bigint), awa.complete_batch(bigint[], bigint[]),
--       awa.fail(bigint, bigint, text, interval), awa.heartbeat(bigint, bigint, jsonb),
--       awa.cancel(bigint), awa.queue_counts(text), awa.register_queue(text, smallint),
--       awa.job(bigint) TO app;
-- and the role can do nothing else here. The operators' functions (api/0.9/inspect.sql,
-- api/0.9/replay.sql; SECURITY DEFINER too) go to an operator role only:
--   GRANT EXECUTE ON FUNCTION awa.jobs(text, text, text, int), awa.retry_failed(bigint),
--       awa.retry_failed_queue(text, text, timestamptz),
--       awa.purge_failed(text, text, timestamptz), awa.cancel_queue(text, text) TO ops;
