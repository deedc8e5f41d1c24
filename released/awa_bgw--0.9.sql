-- awa_bgw 0.9: full install script, as released. Frozen: never edit this file
-- (released/README.md); later changes go in the next version's upgrade script.
\echo Use "CREATE EXTENSION awa_bgw VERSION '0.9'" to load this file. \quit

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

-- ---- tables/0.9/queue_policies.sql ----
-- Per-queue policy (0.9): who may use a queue, and whether its claims are paused. Two
-- small plain tables (not ring families: a row per grant or pause, written by hand by
-- an administrator, never on the hot path). The hot paths read them through a
-- per-backend cache (src/queuepolicy.c) that every change invalidates at commit.

-- Per-queue grants: a queue with no row here is open to every role with EXECUTE on the
-- API; once it has one, only superusers, roles with the privileges of the extension's
-- owner, and the grantees (and the roles that have their privileges) may use it.
-- privileges is a bit set: 1 enqueue, 2 claim, 4 manage.
CREATE TABLE awa.queue_privileges (
    queue text NOT NULL CHECK (length(queue) BETWEEN 1 AND 200),
    grantee oid NOT NULL,
    privileges smallint NOT NULL CHECK (privileges BETWEEN 1 AND 7),
    granted_by oid NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, grantee)
);

-- Paused queues: their claims take nothing until resumed; enqueues go on.
CREATE TABLE awa.queue_pauses (
    queue text PRIMARY KEY CHECK (length(queue) BETWEEN 1 AND 200),
    paused_at timestamptz NOT NULL DEFAULT now(),
    paused_by oid NOT NULL
);

-- Pauses name queues only and survive pg_dump; grants name roles by OID, which a
-- restore into another cluster would give to other roles: they are not dumped (re-run
-- awa.grant_queue after a restore, docs/operations.md).
SELECT pg_catalog.pg_extension_config_dump('awa.queue_pauses', '');

-- ---- tables/0.9/windows.sql ----
-- 0.9: the data plane of snapshot windows (docs/storage.md Part A §A.3, §A.5), on top
-- of the families of tables/data_plane.sql. Run once, by a fresh 0.9 install and by the
-- 0.8 -> 0.9 upgrade alike, so that both end with the same catalog.
--
-- A ready entry records the top-level xid of the transaction that enqueued it; the
-- claim order reads it through (lane_id, txid, lane_seq). Entries that predate 0.9
-- (an upgrade) read txid 0: visible in every snapshot, so they fall in each lane's
-- first window, in their old lane order.
ALTER TABLE awa.ready_entries ADD COLUMN txid xid8 NOT NULL DEFAULT '0';
ALTER TABLE awa.ready_entries ALTER COLUMN txid DROP DEFAULT;
DROP INDEX awa.ready_entries_lane_id_ready_generation_lane_seq_idx;
CREATE INDEX ON awa.ready_entries (lane_id, txid, lane_seq);

-- A done entry is found on (lane_id, lane_seq) only as a cancel tombstone (run_lease
-- 0): the index holds those alone, so a completion writes no entry into it (one index
-- entry, ~70 bytes of WAL, less per job).
DROP INDEX awa.done_entries_lane_id_lane_seq_idx;
CREATE INDEX ON awa.done_entries (lane_id, lane_seq) WHERE run_lease = 0;

-- A receipt carries the claimed entry's txid and a claim sequence number; the last
-- receipt of each claim also carries the lane's window (win_lo, win_hi): it is the
-- lane's position. Receipts that predate 0.9 have none.
ALTER TABLE awa.lease_claims ADD COLUMN claim_seq bigint, ADD COLUMN txid xid8,
    ADD COLUMN win_lo pg_snapshot, ADD COLUMN win_hi pg_snapshot;
-- Only the receipts that carry a window are ever looked up on it (the lane's position),
-- so the index holds those alone: a claim of 32 jobs writes one entry into it, not 32.
CREATE INDEX ON awa.lease_claims (lane_id, claim_seq) WHERE win_hi IS NOT NULL;
-- 0.7/0.8 found a lane's position on (lane_id, lane_seq); 0.9 finds it on claim_seq:
-- one index less to write per receipt (~70 bytes of WAL per job)
DROP INDEX awa.lease_claims_lane_id_lane_seq_idx;

-- Taken under a lane's claim lock: per lane, claim order.
CREATE SEQUENCE awa.claim_seq;
SELECT pg_catalog.pg_extension_config_dump('awa.claim_seq', '');

-- The lane registry without a unique key: a first producer inserts its lanes without
-- waiting for another's uncommitted registration (two may both insert: readers take
-- the lowest lane of a shard, claimers every lane).
ALTER TABLE awa.queue_lanes DROP CONSTRAINT queue_lanes_queue_priority_shard_key;
CREATE INDEX ON awa.queue_lanes (queue, priority, shard);

-- Attempts named by a token (docs/storage.md §A.6): a receipt's run_lease, and the
-- run_lease of its closures and heartbeats, is the random bigint its claim drew; the
-- attempt number moves to its own column. Receipts that predate 0.9 keep their
-- attempt number as their token, so the attempts running across an upgrade are still
-- completed with the run_lease their worker holds. A done entry's run_lease stays the
-- attempt number (0: cancelled before any claim).
ALTER TABLE awa.lease_claims ALTER COLUMN run_lease TYPE bigint;
ALTER TABLE awa.lease_claim_closures ALTER COLUMN run_lease TYPE bigint;
ALTER TABLE awa.leases ALTER COLUMN run_lease TYPE bigint;
ALTER TABLE awa.lease_claims ADD COLUMN attempt int NOT NULL DEFAULT 0;
ALTER TABLE awa.lease_claims ALTER COLUMN attempt TYPE int USING run_lease::int,
    ALTER COLUMN attempt DROP DEFAULT;
ALTER TYPE awa.claimed_job ALTER ATTRIBUTE run_lease TYPE bigint;

-- ---- tables/0.9/closures.sql ----
-- 0.9: a completion is one row (docs/storage.md §A.15). A closure carries the job's
-- terminal state (NULL while the job goes on: retried, or rescued into a retry) and the
-- error of a final failure; the queue, priority, kind, attempt and created_at of the
-- outcome are its receipt's, in the same claim child. 0.9 writes no done entry for an
-- attempt it closes. Run by a fresh install and by the 0.8 -> 0.9 upgrade alike: the
-- closures written before 0.9 read state NULL (no default), and their done entries
-- count them.
ALTER TABLE awa.lease_claim_closures
    ADD COLUMN state text CHECK (state IN ('completed', 'failed', 'cancelled')),
    ADD COLUMN error text;

-- ---- tables/0.9/inspect.sql ----
-- The schema of job lookup (api/0.9/inspect.sql), run once by a fresh 0.9 install and by
-- the 0.8 -> 0.9 upgrade alike.

-- A job's ready entries by job id (awa.job, awa.jobs, awa.cancel): without it, looking
-- up an available job read every ready child whole. It costs the enqueue one more btree
-- insert per ready entry, on an increasing key (the rightmost leaf page), about 70 bytes
-- of WAL per job.
CREATE INDEX ON awa.ready_entries (job_id);

-- One job as awa.job and awa.jobs show it.
CREATE TYPE awa.job_info AS (
    job_id bigint,
    queue text,
    kind text,
    args jsonb,
    priority smallint,
    state text,
    attempt int,
    max_attempts int,
    run_lease bigint,
    last_error text,
    created_at timestamptz,
    run_at timestamptz,
    attempted_at timestamptz,
    finished_at timestamptz,
    heartbeat_at timestamptz,
    progress jsonb
);

-- ---- tables/0.9/unique_keys.sql ----
-- Unique jobs (docs/storage.md §A.14): one row per job enqueued with a unique_key, the
-- key's only record. Insert-only on the enqueue path; the maintenance leader deletes
-- the rows of jobs the data plane no longer holds (awa.purge_unique_keys), in batches,
-- and stands down while the MVCC horizon is pinned, so no dead row version is written
-- here while one could not be reclaimed. No unique index: uniqueness is decided under
-- a private lock on (queue, key) by awa.unique_job, so that nothing here is an index
-- whose dead entries a pinned horizon piles up.
CREATE TABLE awa.unique_keys (
    queue      text NOT NULL,
    unique_key text NOT NULL,
    job_id     bigint NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX unique_keys_key ON awa.unique_keys (queue, unique_key, job_id);
CREATE INDEX unique_keys_job_id ON awa.unique_keys (job_id);
SELECT pg_catalog.pg_extension_config_dump('awa.unique_keys', '');

-- ---- tables/0.9/schedules.sql ----
-- Periodic jobs (docs/operations.md, "Periodic jobs"): one row per schedule, which the
-- maintenance leader reads once a second (awa.fire_due_schedules). A plain small table,
-- not a ring: each fire updates its row once (one dead row version per fire per
-- schedule, reclaimed by autovacuum), and nothing on the job hot path reads it.
-- pg_dump keeps its rows: they are the operator's configuration.
CREATE TABLE awa.job_schedules (
    name         text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 200),
    cron         text NOT NULL CHECK (length(cron) <= 200),
    timezone     text NOT NULL CHECK (length(timezone) <= 64),
    queue        text NOT NULL,
    kind         text NOT NULL,
    args         jsonb NOT NULL,
    priority     smallint NOT NULL,
    max_attempts int NOT NULL,
    next_run_at  timestamptz NOT NULL,
    last_run_at  timestamptz,
    last_job_id  bigint,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX job_schedules_next_run_at ON awa.job_schedules (next_run_at);
SELECT pg_catalog.pg_extension_config_dump('awa.job_schedules', '');

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

-- ---- internal/0.9/ring_hold.sql ----
-- Holding prune off for a reader (0.9). A prune's TRUNCATE is not MVCC-safe: a snapshot
-- taken before it commits sees the truncated child empty and not what it carried
-- forward. So every reader that must see the rings whole (job lookups, counts, stats,
-- cancels, unique keys) first takes ACCESS SHARE on the ring families, held to its
-- commit, and reads them in a later statement, whose snapshot is taken after the locks:
-- a prune in progress is waited for, the next one waits (and reports blocked) until
-- the reader ends. The families are the queue and claim rings' (awa.ring_families, the
-- one list of them), and the lease ring's when p_leases (awa.job reads heartbeats).
CREATE OR REPLACE FUNCTION awa.hold_ring_families(p_leases boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    EXECUTE (SELECT 'LOCK TABLE ' || string_agg(format('awa.%I', f), ', ' ORDER BY o)
                    || ' IN ACCESS SHARE MODE'
               FROM unnest(awa.ring_families('queue') || awa.ring_families('claim')
                           || CASE WHEN p_leases THEN awa.ring_families('lease')
                                   ELSE '{}'::text[] END) WITH ORDINALITY AS t(f, o));
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

-- ---- maintenance/0.9/worker_ticks.sql ----
-- What 0.9 adds to awa.maintenance_status (at the end of the view: it keeps its grants
-- on upgrade): the passes of each worker's loop (ticks), its failed_jobs retention
-- (failed_jobs_purged, purge_batches), and the sessions that hold off a blocked prune
-- (prune_blocked_by). And awa.wake(), which asks the worker of the current database to
-- run every step now.

CREATE OR REPLACE FUNCTION awa.maintenance_worker_ticks(OUT pid int, OUT ticks bigint,
    OUT failed_jobs_purged bigint, OUT purge_batches bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_ticks'
LANGUAGE C STRICT VOLATILE;

-- The sessions (pids; 0 for a prepared transaction) other than the caller that hold or
-- await a lock on a child of the ring's slot: what keeps prune's ACCESS EXCLUSIVE off.
-- The worker asks it in the transaction of a prune that came back blocked.
CREATE OR REPLACE FUNCTION awa.ring_slot_lock_holders(p_ring text, p_slot int)
RETURNS int[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n int := awa.ring_slot_count(p_ring);   -- validates the ring name
    v_pids int[];
BEGIN
    IF p_slot IS NULL OR p_slot < 0 OR p_slot >= v_n THEN
        RAISE EXCEPTION 'slot % is not a slot of the % ring', p_slot, p_ring
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('The %s ring has slots 0 to %s.', p_ring, v_n - 1);
    END IF;
    SELECT coalesce(array_agg(DISTINCT coalesce(l.pid, 0) ORDER BY coalesce(l.pid, 0)), '{}')
      INTO v_pids
      FROM pg_locks l
     WHERE l.locktype = 'relation'
       AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
       AND l.relation IN (SELECT awa.ring_child(f, p_slot)
                            FROM unnest(awa.ring_families(p_ring)) f)
       AND l.pid IS DISTINCT FROM pg_backend_pid();
    RETURN v_pids;
END
$$;

COMMENT ON FUNCTION awa.ring_slot_lock_holders(text, int) IS
'the pids (0: a prepared transaction) other than the caller that hold or await a lock on '
'a child of the ring slot: the sessions that hold off its prune';

CREATE OR REPLACE FUNCTION awa.maintenance_worker_prune_blockers(OUT pid int,
                                                                 OUT prune_blocked_by jsonb)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_prune_blockers'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE FUNCTION awa.wake() RETURNS boolean
AS 'MODULE_PATHNAME', 'awa_wake'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION awa.wake() IS
'asks the awa_bgw worker of the current database to run every maintenance step now '
'(rotate and prune of each ring, promotion, rescue, folds), whatever their cadences; '
'true when a worker was signalled';

CREATE OR REPLACE VIEW awa.maintenance_status AS
SELECT w.*, h.pid AS leader_key_holder_pid, h.holder AS leader_key_holder, t.ticks,
       t.failed_jobs_purged, t.purge_batches, b.prune_blocked_by
  FROM awa.maintenance_worker_status() w
  LEFT JOIN LATERAL (SELECT k.pid, k.holder FROM awa.leader_key_holders(w.database) k
                      LIMIT 1) h ON true
  LEFT JOIN awa.maintenance_worker_ticks() t ON t.pid = w.pid
  LEFT JOIN awa.maintenance_worker_prune_blockers() b ON b.pid = w.pid;

COMMENT ON VIEW awa.maintenance_status IS
'one row per awa_bgw maintenance worker of this cluster: state, leadership, per-ring '
'rotate and prune outcome counters, folds run and stood down (with the pin holder seen '
'at the last stand-down), rows folded and trimmed, the auto-flip check (its last verdict and '
'the start of its stable window), errors, a session that is not an awa_bgw worker '
'holding the leader key (leader_key_holder_pid, leader_key_holder), the passes of '
'the worker''s loop (ticks), the failed_jobs rows past the retention it deleted '
'(failed_jobs_purged) in how many transactions (purge_batches), and per ring whose last '
'prune was blocked the pids that held or awaited a lock on the children it wanted '
'(prune_blocked_by); a database that has no worker because no background worker slot was '
'free is shown in state no_worker_slot (no pid; errors counts the launcher''s failed '
'attempts)';

-- ---- status/0.9/monitoring.sql ----
-- Monitoring (docs/monitoring.md): per-queue figures (awa.queue_stats), the cumulative
-- counters of each database's maintenance in shared memory (awa.worker_stats,
-- awa.worker_ring_stats, awa.stats_reset()), and the status views made readable by
-- pg_monitor (the grants are in grants/grants.sql).

-- The counters (src/stats.c): one row per database whose worker has run since the
-- server started; they outlive a worker's restart, a server restart zeroes them.
CREATE OR REPLACE FUNCTION awa.worker_stats_counters(
    OUT database name, OUT worker_starts bigint, OUT leader_terms bigint,
    OUT promote_runs bigint, OUT jobs_promoted bigint,
    OUT rescue_runs bigint, OUT jobs_rescued bigint,
    OUT folds_run bigint, OUT folds_stood_down bigint,
    OUT rows_folded bigint, OUT rows_trimmed bigint,
    OUT purge_runs bigint, OUT purges_stood_down bigint, OUT failed_jobs_purged bigint,
    OUT step_errors bigint, OUT rotations bigint, OUT prunes bigint,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_worker_stats'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE FUNCTION awa.worker_ring_stats_counters(
    OUT database name, OUT ring text,
    OUT rotated bigint, OUT rotate_skipped_idle bigint, OUT rotate_skipped_busy bigint,
    OUT rotate_lost_cas bigint,
    OUT pruned bigint, OUT prune_noop bigint, OUT prune_already_pruned bigint,
    OUT prune_blocked bigint, OUT prune_skipped_active bigint,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_worker_ring_stats'
LANGUAGE C STRICT VOLATILE;

-- Zeroes this database's counters and sets its stats_reset; false when no worker has
-- maintained this database since the server started. Revoked from PUBLIC.
CREATE OR REPLACE FUNCTION awa.stats_reset() RETURNS boolean
AS 'MODULE_PATHNAME', 'awa_stats_reset'
LANGUAGE C STRICT VOLATILE;

CREATE OR REPLACE VIEW awa.worker_stats AS
SELECT * FROM awa.worker_stats_counters();

COMMENT ON VIEW awa.worker_stats IS
'per database: cumulative counters of its maintenance worker since stats_reset (worker '
'starts, leader terms, promotions, rescues, folds, failed_jobs retention, step errors, '
'rotations and prunes); kept across worker restarts, zeroed by awa.stats_reset() and '
'by a server restart';

CREATE OR REPLACE VIEW awa.worker_ring_stats AS
SELECT * FROM awa.worker_ring_stats_counters();

COMMENT ON VIEW awa.worker_ring_stats IS
'per database and ring: cumulative rotate and prune outcomes since stats_reset';

-- The rows of awa.ring_status, read as the extension's owner: its helpers read the
-- ledgers and probe the ring children, which a monitoring role may not read itself.
CREATE OR REPLACE FUNCTION awa.ring_status_rows(
    OUT ring text, OUT authority text, OUT current_slot int, OUT generation bigint,
    OUT slot_count int, OUT ledger_rows bigint, OUT last_rotated_at timestamptz,
    OUT sealed_slots_awaiting_prune bigint)
RETURNS SETOF record
LANGUAGE sql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r.ring,
           awa.ring_authority(),
           c.slot,
           c.generation,
           awa.ring_slot_count(r.ring),
           l.ledger_rows,
           l.last_rotated_at,
           awa.ring_sealed_slots_holding_rows(r.ring, c.slot, c.generation)
      FROM (VALUES (1, 'queue'), (2, 'lease'), (3, 'claim')) r(ord, ring)
     CROSS JOIN LATERAL awa.ring_cursor(r.ring) c
     CROSS JOIN LATERAL awa.ring_ledger_stats(r.ring) l
     ORDER BY r.ord
$$;

CREATE OR REPLACE VIEW awa.ring_status AS
SELECT * FROM awa.ring_status_rows();

-- The start of the history a ring still holds completely: the rotation that made
-- current the slot k rotations back, k being the sealed slots that still hold rows.
-- Prune takes the oldest sealed slot first, so every slot from there on is unpruned.
-- Queue ring: a ready entry or done entry lands in the slot current when it is written,
-- so every one written since that rotation is still in the ring. Claim ring, where 0.9's
-- terminal outcomes lie (a closure is written into its receipt's slot, docs/storage.md
-- §A.15): every receipt written since that rotation, and so every closure of it, is
-- still in the ring; an attempt claimed before it and closed after it may lie in a slot
-- pruned since.
CREATE OR REPLACE FUNCTION awa.ring_history_start(p_ring text) RETURNS timestamptz
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT q.rotated_at
      FROM awa.ring_cursor(p_ring) c
      JOIN (SELECT r.generation, r.rotated_at FROM awa.queue_ring_rotations r
             WHERE p_ring = 'queue'
            UNION ALL
            SELECT r.generation, r.rotated_at FROM awa.claim_ring_rotations r
             WHERE p_ring = 'claim'
            UNION ALL
            SELECT r.generation, r.rotated_at FROM awa.lease_ring_rotations r
             WHERE p_ring = 'lease') q
        ON q.generation = c.generation
                          - awa.ring_sealed_slots_holding_rows(p_ring, c.slot, c.generation)
$$;

-- awa.queue_stats in the caller's statement snapshot (see queue_stats_rows).
-- available, scheduled, running and the totals are queue_counts' numbers; the window
-- figures count what the rings hold since window_start.
CREATE OR REPLACE FUNCTION awa.queue_stats_in_snapshot(p_window interval,
    OUT queue text, OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT oldest_available_at timestamptz, OUT completed_total bigint, OUT failed_total bigint,
    OUT window_start timestamptz, OUT completed_in_window bigint,
    OUT failed_in_window bigint, OUT rescued_in_window bigint, OUT claims_in_window bigint,
    OUT claim_latency_avg interval, OUT claim_latency_max interval)
RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH ws AS (
        SELECT greatest(now() - p_window,
                        coalesce(awa.ring_history_start('queue'), now() - p_window),
                        coalesce(awa.ring_history_start('claim'), now() - p_window)) AS t),
    avail AS (
        -- the lanes with an entry in the queue ring, each position read once
        SELECT r.queue, count(*) AS n, min(r.enqueued_at) AS oldest
          FROM (SELECT DISTINCT e.lane_id FROM awa.ready_entries e) al
         CROSS JOIN LATERAL awa.lane_window(al.lane_id) p
          JOIN awa.ready_entries r ON r.lane_id = al.lane_id
         WHERE awa.window_unclaimed(r.txid, r.lane_seq, p.win_lo, p.win_hi, p.txid, p.lane_seq)
           AND NOT EXISTS (SELECT 1 FROM awa.done_entries d
                            WHERE d.lane_id = r.lane_id AND d.lane_seq = r.lane_seq
                              AND d.run_lease = 0)
         GROUP BY r.queue),
    sched AS (
        SELECT d.queue, count(*) AS n FROM awa.deferred_jobs d GROUP BY d.queue),
    run AS (
        SELECT c.queue, count(*) AS n FROM awa.lease_claims c
         WHERE NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures x
                            WHERE x.claim_slot = c.claim_slot AND x.job_id = c.job_id
                              AND x.run_lease = c.run_lease)
         GROUP BY c.queue),
    done AS (
        -- terminal outcomes: closures carrying a state, with their receipts' queue
        -- (docs/storage.md §A.15), and done entries (written before 0.9)
        SELECT d.queue,
               count(*) FILTER (WHERE d.state = 'completed') AS c,
               count(*) FILTER (WHERE d.state = 'failed') AS f,
               count(*) FILTER (WHERE d.state = 'completed' AND d.at >= ws.t) AS cw,
               count(*) FILTER (WHERE d.state = 'failed' AND d.at >= ws.t) AS fw
          FROM (SELECT e.queue, e.state, e.finished_at AS at FROM awa.done_entries e
                UNION ALL
                SELECT c.queue, x.state, x.closed_at
                  FROM awa.lease_claim_closures x
                  JOIN awa.lease_claims c ON c.claim_slot = x.claim_slot
                                         AND c.job_id = x.job_id
                                         AND c.run_lease = x.run_lease
                 WHERE x.state IS NOT NULL) d, ws
         GROUP BY d.queue),
    pruned AS (
        SELECT t.queue, sum(t.c) AS c, sum(t.f) AS f
          FROM (SELECT r.queue, r.pruned_completed_count AS c, r.pruned_failed_count AS f
                  FROM awa.queue_terminal_rollups r
                UNION ALL
                SELECT x.queue, x.pruned_completed_delta, x.pruned_failed_delta
                  FROM awa.queue_terminal_rollup_deltas x) t
         GROUP BY t.queue),
    rescued AS (
        SELECT c.queue, count(*) AS n
          FROM awa.lease_claim_closures x
          JOIN awa.lease_claims c ON c.claim_slot = x.claim_slot AND c.job_id = x.job_id
                                 AND c.run_lease = x.run_lease, ws
         WHERE x.outcome = 'rescued' AND x.closed_at >= ws.t
         GROUP BY c.queue),
    claims AS (
        -- claims in the window whose entry the queue ring still holds
        SELECT c.queue, count(*) AS n, avg(c.claimed_at - r.enqueued_at) AS lat_avg,
               max(c.claimed_at - r.enqueued_at) AS lat_max
          FROM awa.lease_claims c
          JOIN awa.ready_entries r ON r.lane_id = c.lane_id AND r.txid = c.txid
                                  AND r.lane_seq = c.lane_seq, ws
         WHERE c.claimed_at >= ws.t AND c.attempt = r.attempt AND c.job_id = r.job_id
         GROUP BY c.queue),
    queues AS (
        SELECT l.queue FROM awa.queue_lanes l
        UNION
        SELECT s.queue FROM sched s)
    SELECT q.queue,
           coalesce(a.n, 0), coalesce(s.n, 0), coalesce(ru.n, 0), a.oldest,
           coalesce(d.c, 0) + coalesce(p.c, 0), coalesce(d.f, 0) + coalesce(p.f, 0),
           ws.t, coalesce(d.cw, 0), coalesce(d.fw, 0), coalesce(re.n, 0), coalesce(cl.n, 0),
           cl.lat_avg, cl.lat_max
      FROM queues q
     CROSS JOIN ws
      LEFT JOIN avail a ON a.queue = q.queue
      LEFT JOIN sched s ON s.queue = q.queue
      LEFT JOIN run ru ON ru.queue = q.queue
      LEFT JOIN done d ON d.queue = q.queue
      LEFT JOIN pruned p ON p.queue = q.queue
      LEFT JOIN rescued re ON re.queue = q.queue
      LEFT JOIN claims cl ON cl.queue = q.queue
     ORDER BY q.queue
$$;

-- As queue_counts: lock the ring families first (ACCESS SHARE: a prune's TRUNCATE is
-- not MVCC-safe), then read everything in one later statement's snapshot. Runs as the
-- extension's owner, so that a member of pg_monitor reads the figures without being
-- able to read the jobs. A prune that finds the lock held reports blocked and tries
-- again on its next cadence; the lock is waited for at most 5 s.
CREATE OR REPLACE FUNCTION awa.queue_stats_rows(p_window interval DEFAULT '1 minute',
    OUT queue text, OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT oldest_available_at timestamptz, OUT completed_total bigint, OUT failed_total bigint,
    OUT window_start timestamptz, OUT completed_in_window bigint,
    OUT failed_in_window bigint, OUT rescued_in_window bigint, OUT claims_in_window bigint,
    OUT claim_latency_avg interval, OUT claim_latency_max interval)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '5s'
AS $$
BEGIN
    IF p_window IS NULL OR p_window <= interval '0' OR p_window > interval '1 day' THEN
        RAISE EXCEPTION 'window must be an interval between 0 and 1 day, not %', p_window
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'awa.queue_stats uses one minute.';
    END IF;
    PERFORM awa.hold_ring_families();
    RETURN QUERY SELECT * FROM awa.queue_stats_in_snapshot(p_window);
END
$$;

CREATE OR REPLACE VIEW awa.queue_stats AS
SELECT s.queue, s.available, s.scheduled, s.running,
       s.oldest_available_at, now() - s.oldest_available_at AS oldest_available_age,
       s.completed_total, s.failed_total,
       s.window_start, now() - s.window_start AS rate_window,
       round(s.completed_in_window * 60
             / greatest(extract(epoch FROM now() - s.window_start), 1), 2)
           AS completed_per_minute,
       round(s.failed_in_window * 60
             / greatest(extract(epoch FROM now() - s.window_start), 1), 2)
           AS failed_per_minute,
       round(s.rescued_in_window * 60
             / greatest(extract(epoch FROM now() - s.window_start), 1), 2)
           AS rescued_per_minute,
       s.claims_in_window, s.claim_latency_avg, s.claim_latency_max
  FROM awa.queue_stats_rows('1 minute') s;

COMMENT ON VIEW awa.queue_stats IS
'per queue: available, scheduled and running jobs, the oldest available job, completed '
'and failed totals (as awa.queue_counts), and over the last minute (or the shorter '
'history the queue ring holds, rate_window): completions, failures and rescues per '
'minute and the claim latency (claimed_at - enqueued_at); docs/monitoring.md';

-- ---- api/0.9/queue_policy.sql ----
-- Per-queue grants and pauses (0.9; docs/operations.md "Roles and the trust model").
-- The checks are in C (src/queuepolicy.c): every API call asks a per-backend cache of
-- the queue's policy, which a change to awa.queue_privileges or awa.queue_pauses drops
-- in every backend when it commits (the statement trigger below sends a relcache
-- invalidation of both tables; src/relcache.c's callback passes it on).

-- Whether the calling role may use the queue for the privilege ('enqueue', 'claim',
-- 'manage'). The calling role is the session's current role (its login role, or the
-- one SET ROLE chose), not the owner of a SECURITY DEFINER function in between.
CREATE OR REPLACE FUNCTION awa.queue_allowed(queue text, privilege text) RETURNS boolean
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_queue_allowed';

-- The same, as an error (42501, nothing written) when it may not.
CREATE OR REPLACE FUNCTION awa.require_queue_privilege(queue text, privilege text) RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_require_queue_privilege';

-- The statement trigger of both policy tables: every backend drops its cached policies
-- when the change commits (and not before).
CREATE OR REPLACE FUNCTION awa.queue_policy_changed() RETURNS trigger
LANGUAGE C
AS 'MODULE_PATHNAME', 'awa_queue_policy_changed';

CREATE OR REPLACE TRIGGER queue_privileges_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON awa.queue_privileges
    FOR EACH STATEMENT EXECUTE FUNCTION awa.queue_policy_changed();
CREATE OR REPLACE TRIGGER queue_pauses_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON awa.queue_pauses
    FOR EACH STATEMENT EXECUTE FUNCTION awa.queue_policy_changed();

-- The bit set of a privilege list: 1 enqueue, 2 claim, 4 manage.
CREATE OR REPLACE FUNCTION awa.queue_privilege_bits(p_privileges text[]) RETURNS smallint
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
CREATE OR REPLACE FUNCTION awa.queue_privilege_names(p_bits smallint) RETURNS text[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ARRAY(SELECT n FROM (VALUES (1, 'enqueue'), (2, 'claim'), (4, 'manage')) v(b, n)
                  WHERE p_bits & v.b <> 0 ORDER BY v.b)
$$;

CREATE OR REPLACE FUNCTION awa.check_queue_grantee(p_role regrole) RETURNS void
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
    PERFORM awa.check_name('queue', grant_queue.queue);
    PERFORM awa.check_queue_grantee(grant_queue.role);
    v_bits := awa.queue_privilege_bits(grant_queue.privileges);
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
    PERFORM awa.check_name('queue', revoke_queue.queue);
    PERFORM awa.check_queue_grantee(revoke_queue.role);
    v_bits := awa.queue_privilege_bits(revoke_queue.privileges);
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
    PERFORM awa.check_name('queue', pause_queue.queue);
    PERFORM awa.require_queue_privilege(pause_queue.queue, 'manage');
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
    PERFORM awa.check_name('queue', resume_queue.queue);
    PERFORM awa.require_queue_privilege(resume_queue.queue, 'manage');
    DELETE FROM awa.queue_pauses p WHERE p.queue = resume_queue.queue;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM awa.note_resumed(resume_queue.queue);
    RETURN true;
END
$$;

-- Wakes the claims waiting for the queue when this transaction commits (src/wait.c).
CREATE OR REPLACE FUNCTION awa.note_resumed(queue text) RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_note_resumed';

CREATE OR REPLACE VIEW awa.queue_grants AS
SELECT p.queue, p.grantee::regrole AS grantee,
       awa.queue_privilege_names(p.privileges) AS privileges,
       p.granted_by::regrole AS granted_by, p.granted_at
  FROM awa.queue_privileges p;

-- Every queue known (registered lanes, a grant or a pause) and its policy.
CREATE OR REPLACE VIEW awa.queue_settings AS
SELECT q.queue, s.queue IS NOT NULL AS paused, s.paused_at, s.paused_by::regrole AS paused_by,
       EXISTS (SELECT 1 FROM awa.queue_privileges p WHERE p.queue = q.queue) AS restricted
  FROM (SELECT l.queue FROM awa.queue_lanes l
        UNION SELECT p.queue FROM awa.queue_pauses p
        UNION SELECT g.queue FROM awa.queue_privileges g) q
  LEFT JOIN awa.queue_pauses s ON s.queue = q.queue;

-- ---- api/0.9/lane_shards.sql ----
-- The shards of 0.9 (docs/storage.md §A.3, §A.13): eight lanes per (queue, priority),
-- where 0.6-0.8 have four (api/lane_shards.sql). A 0.9 producer takes no lane lock, so
-- the shards no longer bound concurrent producers; they bound concurrent claimers, each
-- of which holds the lane it takes from until it commits. With 8 clients claiming one job
-- per call, four lanes left a third of the claims finding their first lane busy.
-- src/dataplane.h spells the same number for C (AWA_LANE_SHARDS). A queue registered
-- under 0.8 gets its missing shards from awa.ensure_lanes (internal/0.9/lanes.sql).
CREATE OR REPLACE FUNCTION awa.lane_shards() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 8 $$;

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

-- ---- api/0.9/checks.sql ----
-- The validation of a job in 0.9, in C (src/checks.c; replaces awa.check_job of
-- api/jobs.sql, same signature, same rules, messages, SQLSTATEs and hints in the same
-- order): enqueue_batch checks each job, and the PL/pgSQL check took a quarter of its
-- time.
CREATE OR REPLACE FUNCTION awa.check_job(p_queue text, p_kind text, p_args jsonb,
                                         p_priority smallint, p_run_at timestamptz,
                                         p_max_attempts int)
RETURNS void
LANGUAGE C STABLE
AS 'MODULE_PATHNAME', 'awa_check_job';

-- ---- api/0.9/unique.sql ----
-- Unique jobs (docs/storage.md §A.14; README "Unique jobs"): awa.enqueue(...,
-- unique_key, unique_for, unique_states) calls awa.unique_job before it writes
-- anything. Under a private lock on (queue, unique_key), held to commit, it looks for
-- a job of that queue and key enqueued within unique_for whose state (as awa.job
-- reports it) is one of unique_states; it returns that job's id, or records the new
-- job's key and returns the new id. awa.purge_unique_keys, run by the maintenance
-- leader, forgets the keys of jobs the data plane no longer holds.

-- The states a unique key holds off a second job in, when the enqueue names none:
-- every state but failed and cancelled (a completed job counts while its record is
-- kept, awa_bgw's queue ring retention).
CREATE OR REPLACE FUNCTION awa.unique_states_default() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['scheduled', 'retryable', 'available', 'running', 'completed'] $$;

-- The longest unique key, in bytes.
CREATE OR REPLACE FUNCTION awa.unique_key_max_bytes() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1000 $$;

-- The private lock of one (queue, key): the queue's length first, so that no two
-- (queue, key) pairs spell the same text.
CREATE OR REPLACE FUNCTION awa.unique_lock_key(p_queue text, p_key text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.unique:' || length(p_queue)::text || ':' || p_queue
                             || ':' || p_key, 0) $$;

-- Refuses a bad unique_key, unique_for or unique_states (nothing is written before).
CREATE OR REPLACE FUNCTION awa.check_unique(p_key text, p_for interval, p_states text[])
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
    IF length(p_key) = 0 OR octet_length(p_key) > awa.unique_key_max_bytes() THEN
        RAISE EXCEPTION 'invalid unique_key (% bytes)', octet_length(p_key)
            USING ERRCODE = CASE WHEN length(p_key) = 0 THEN 'invalid_parameter_value'
                                 ELSE 'program_limit_exceeded' END,
                  HINT = format('A unique key is a text of 1 to %s bytes; hash a longer one, '
                                'for example with md5().', awa.unique_key_max_bytes());
    END IF;
    IF p_for IS NOT NULL AND p_for <= interval '0' THEN
        RAISE EXCEPTION 'unique_for % is not positive', p_for
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass an interval such as ''1 hour'', or NULL: unique for as long '
                         'as the earlier job is kept.';
    END IF;
    IF p_states IS NOT NULL
       AND (cardinality(p_states) NOT BETWEEN 1 AND cardinality(awa.job_states())
            OR array_position(p_states, NULL) IS NOT NULL
            OR NOT p_states <@ awa.job_states()) THEN
        RAISE EXCEPTION 'invalid unique_states %', p_states::text
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'unique_states lists some of: '
                         || array_to_string(awa.job_states(), ', ') || '.';
    END IF;
END
$$;

-- The state of a job as awa.job reports it (its top record), or NULL when the data
-- plane holds no record of it. The caller holds the ring families in ACCESS SHARE.
CREATE OR REPLACE FUNCTION awa.job_state(p_job_id bigint) RETURNS text
LANGUAGE sql STABLE
AS $$ SELECT r.state FROM awa.job_records(p_job_id) r
       ORDER BY r.attempt DESC, r.rank DESC LIMIT 1 $$;

-- Called by awa.enqueue with the id it drew for the new job: the id of the job that
-- stands in its way (nothing written), or p_job_id once the new job's key is recorded.
-- Under the (queue, key) lock, each statement's snapshot (READ COMMITTED, which
-- awa.enqueue requires) sees every enqueue of the key that committed before the lock
-- was granted, and the key's own enqueues in this transaction. The ring families are
-- locked ACCESS SHARE (to commit) only when an earlier job of the key is a candidate,
-- so that no prune's TRUNCATE falls between the lookup's snapshot and its reads.
CREATE OR REPLACE FUNCTION awa.unique_job(p_queue text, p_key text, p_for interval,
                                          p_states text[], p_job_id bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_states text[] := coalesce(p_states, awa.unique_states_default());
    v_candidates bigint[];
    v_job bigint;
BEGIN
    PERFORM awa.check_unique(p_key, p_for, p_states);
    PERFORM awa.private_xact_lock(awa.unique_lock_key(p_queue, p_key));
    v_candidates := ARRAY(SELECT k.job_id FROM awa.unique_keys k
                           WHERE k.queue = p_queue AND k.unique_key = p_key
                             AND (p_for IS NULL OR k.created_at > now() - p_for)
                           ORDER BY k.job_id DESC);
    IF cardinality(v_candidates) > 0 THEN
        PERFORM awa.hold_ring_families();
        SELECT c INTO v_job FROM unnest(v_candidates) c
         WHERE awa.job_state(c) = ANY (v_states)
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
    v_batch bigint := coalesce(p_batch, awa.fold_batch_size());
    v_ids bigint[];
BEGIN
    IF v_batch NOT BETWEEN 1 AND 1000000 THEN
        RAISE EXCEPTION 'batch size % is out of range', v_batch
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A batch is 1 to 1000000 keys; NULL takes awa_bgw.fold_batch_size.';
    END IF;
    purged := 0;
    last_job_id := coalesce(p_after, 0);
    pin := awa.horizon_pin_holder(awa.fold_min_age());
    IF pin IS NOT NULL THEN
        outcome := 'stood_down';
        RETURN;
    END IF;
    PERFORM awa.hold_ring_families();
    v_ids := ARRAY(SELECT k.job_id FROM awa.unique_keys k
                    WHERE k.job_id > coalesce(p_after, 0)
                    ORDER BY k.job_id LIMIT v_batch);
    DELETE FROM awa.unique_keys k
     WHERE k.job_id = ANY (v_ids) AND awa.job_state(k.job_id) IS NULL;
    GET DIAGNOSTICS purged = ROW_COUNT;
    last_job_id := CASE WHEN cardinality(v_ids) < v_batch THEN 0
                        ELSE v_ids[cardinality(v_ids)] END;
    outcome := 'folded';
END
$$;

-- ---- api/0.9/enqueue.sql ----
-- Enqueue in 0.9, in C (src/enqueue.c, src/enqueue_batch.c; replace awa.enqueue and
-- awa.enqueue_batch of api/jobs.sql, same signatures, same checks in the same order,
-- same messages, SQLSTATEs and hints, same results): the isolation level, check_job,
-- the job id, then what awa.enqueue_jobs does, the due jobs straight into the ring
-- (awa.enqueue_ready's work) and the later ones through awa.enqueue_jobs into
-- awa.deferred_jobs.
-- 0.9 adds unique_key, unique_for and unique_states (api/0.9/unique.sql): a unique enqueue
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

-- The six-argument form of 0.8 (and of api/jobs.sql, which this script ran first) gives
-- its EXECUTE grants to the new form and goes: beside it, every call with up to six
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

-- ---- api/0.9/claim.sql ----
-- Claim in 0.9 (docs/storage.md Part A §A.3): a lane's position is its newest receipt
-- carrying a window; a claim takes the rest of that window, then opens the next one at
-- its own snapshot. Each receipt's run_lease is a fresh random token (§A.6), its
-- attempt number a column of its own. Replaces api/claim.sql; the probes are C
-- (src/windows.c).

-- The lane's position: the window (win_lo NULL: nothing visible) and the last entry
-- taken from it (its txid and lane_seq), and the receipt's claim_seq; all NULL when
-- the lane has none.
CREATE OR REPLACE FUNCTION awa.window_position(p_lane_id int, p_claim_slot int,
                                               p_claim_gen bigint, p_claim_slots int,
                                               OUT win_lo pg_snapshot, OUT win_hi pg_snapshot,
                                               OUT txid xid8, OUT lane_seq bigint,
                                               OUT claim_seq bigint)
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_window_position';

-- What a claim of the lane takes, in claim order, up to p_limit; the last row carries
-- the window to record. The caller holds the lane's claim lock, and its statement took
-- its snapshot after the lock.
CREATE OR REPLACE FUNCTION awa.window_claimables(p_lane_id int, p_limit int,
                                                 p_claim_slot int, p_claim_gen bigint,
                                                 p_claim_slots int, p_queue_slots int)
RETURNS TABLE (ready_slot int, ready_generation bigint, lane_id int, lane_seq bigint,
               job_id bigint, queue text, priority smallint, kind text, args jsonb,
               attempt int, max_attempts int, created_at timestamptz,
               enqueued_at timestamptz, txid xid8, win_lo pg_snapshot, win_hi pg_snapshot)
LANGUAGE C STABLE STRICT ROWS 1
AS 'MODULE_PATHNAME', 'awa_window_claimables';

-- How many entries a claim of the lane with no limit would take (its available jobs),
-- counted without keeping any.
CREATE OR REPLACE FUNCTION awa.window_available(p_lane_id int, p_claim_slot int,
                                                p_claim_gen bigint, p_claim_slots int,
                                                p_queue_slots int)
RETURNS bigint
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_window_available';

-- A hint, read without the lane's claim lock: whether a claim would take anything.
CREATE OR REPLACE FUNCTION awa.window_has_work(p_lane_id int, p_claim_slot int,
                                               p_claim_gen bigint, p_claim_slots int,
                                               p_queue_slots int)
RETURNS boolean
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_window_has_work';

-- The lane's position at the current claim cursor.
CREATE OR REPLACE FUNCTION awa.lane_window(p_lane_id int)
RETURNS TABLE (win_lo pg_snapshot, win_hi pg_snapshot, txid xid8, lane_seq bigint,
               claim_seq bigint)
LANGUAGE sql STABLE
AS $$
    SELECT p.* FROM awa.ring_cursor('claim') c,
           awa.window_position(p_lane_id, c.slot, c.generation, awa.ring_slot_count('claim')) p
$$;

-- Whether an entry of a lane with position p is unclaimed: in no earlier window (not
-- visible in win_lo) and not at or before the position in the current one.
CREATE OR REPLACE FUNCTION awa.window_unclaimed(p_txid xid8, p_lane_seq bigint,
                                                p_lo pg_snapshot, p_hi pg_snapshot,
                                                p_pos_txid xid8, p_pos_seq bigint)
RETURNS boolean
LANGUAGE sql IMMUTABLE
AS $$
    SELECT p_hi IS NULL
        OR (NOT coalesce(pg_visible_in_snapshot(p_txid, p_lo), false)
            AND NOT (pg_visible_in_snapshot(p_txid, p_hi)
                     AND (p_txid, p_lane_seq) <= (p_pos_txid, p_pos_seq)))
$$;

-- Which claims of this transaction may leave work for a waiting claimer, and which
-- jobs it enqueued, per lane (src/wait.c): read by its end, which wakes the claimers
-- waiting for the queue and clears the lane's empty mark (src/lanemarks.c). An
-- enqueue notes the ready slot it wrote into at once, before it can commit: the
-- claims' window reads skip a ready child whose entries are all older than the window
-- (docs/storage.md A.12).
CREATE OR REPLACE FUNCTION awa.note_enqueued(p_queue text, p_jobs int, p_lane int,
                                             p_ready_slot int) RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_note_enqueued';
CREATE OR REPLACE FUNCTION awa.note_claimed(p_queue text, p_taken int, p_lane int) RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_note_claimed';

-- Empty-lane marks (docs/storage.md A.12, src/lanemarks.c): lane_look gives the lane's
-- epoch, read before the statement that reads the lane takes its snapshot (NULL: the
-- lane is marked empty and nothing has given it work since); a claim that held the
-- lane's claim lock and took nothing marks it with lane_seen_empty.
CREATE OR REPLACE FUNCTION awa.lane_look(p_lane int) RETURNS bigint
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_lane_look';
CREATE OR REPLACE FUNCTION awa.lane_seen_empty(p_lane int, p_epoch bigint) RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_lane_seen_empty';

-- The claims waiting now (src/wait.c).
CREATE OR REPLACE FUNCTION awa.claim_waiters()
RETURNS TABLE (pid int, database oid, waiting_since timestamptz, woken boolean)
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_claim_waiters';

-- The API's claim (src/wait.c): without wait, awa.claim_now; with wait, a claim that
-- finds nothing sleeps, holding no snapshot and no lock, until a commit gives the queue
-- work or wait has passed (docs/storage.md A.11).
CREATE OR REPLACE FUNCTION awa.claim(queue text, max_batch int DEFAULT 1,
                          deadline interval DEFAULT '5 minutes', wait interval DEFAULT NULL)
RETURNS SETOF awa.claimed_job
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_claim';

-- One claim of the queue's lanes, taking what is there now (src/claim.c; called by
-- awa.claim, which runs as the extension's owner with its search_path). Per lane, in
-- claim order (priority, then the shards from this backend's own): the empty-lane mark
-- (awa.lane_look), the lane's claim lock (tried; a busy lane is waited for up to 10 ms
-- only while nothing is taken and awa.window_has_work says it has work), a snapshot
-- taken after the lock, awa.window_claimables' entries, one receipt each (a fresh
-- awa.lease_token(), claim_seq from awa.claim_seq in (txid, lane_seq) order, the window
-- on the receipt that ends the read), inserted into the current claim child; a lane that
-- gave nothing is unlocked (awa.private_xact_unlock) and marked (awa.lane_seen_empty),
-- one that gave jobs noted (awa.note_claimed). Each of those steps can be run by hand.
CREATE OR REPLACE FUNCTION awa.claim_now(queue text, max_batch int, deadline interval)
RETURNS SETOF awa.claimed_job
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_claim_now';

-- What prune, cancel and the counts ask of a lane's position (as in api/claim.sql):

-- Whether a ready entry is still unclaimed. The caller holds the lane's claim lock.
CREATE OR REPLACE FUNCTION awa.entry_unclaimed(p_entry awa.ready_entries) RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT awa.window_unclaimed(p_entry.txid, p_entry.lane_seq, p.win_lo, p.win_hi,
                                p.txid, p.lane_seq)
      FROM awa.lane_window(p_entry.lane_id) p
$$;

-- The lane's unclaimed, uncancelled committed entries (queue_counts' available).
CREATE OR REPLACE FUNCTION awa.lane_available(p_lane_id int) RETURNS bigint
LANGUAGE sql STABLE
AS $$
    SELECT awa.window_available(p_lane_id, c.slot, c.generation, awa.ring_slot_count('claim'),
                                awa.ring_slot_count('queue'))
      FROM awa.ring_cursor('claim') c
$$;

-- Whether the queue slot holds an unclaimed, uncancelled entry of the lane (the queue
-- prune proof; p_top is not needed here).
CREATE OR REPLACE FUNCTION awa.lane_unclaimed_in_slot(p_lane_id int, p_slot int, p_top bigint)
RETURNS boolean
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    p record;
    v_live boolean;
BEGIN
    SELECT * INTO p FROM awa.lane_window(p_lane_id);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM awa.%I r WHERE r.lane_id = $1 '
                   'AND awa.window_unclaimed(r.txid, r.lane_seq, $2, $3, $4, $5) '
                   'AND NOT EXISTS (SELECT 1 FROM awa.%I d WHERE d.lane_id = r.lane_id '
                   'AND d.lane_seq = r.lane_seq AND d.run_lease = 0))',
                   'ready_entries_' || p_slot, 'done_entries_' || p_slot)
       INTO v_live USING p_lane_id, p.win_lo, p.win_hi, p.txid, p.lane_seq;
    RETURN v_live;
END
$$;

-- The receipts of a claim slot that are the position of one of the given lanes: the
-- lane's newest receipt with a window, when it is in this slot.
CREATE OR REPLACE FUNCTION awa.claim_slot_positions(p_slot int, p_lanes int[])
RETURNS SETOF awa.lease_claims
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT t.* FROM (SELECT DISTINCT ON (c.lane_id) c.* FROM awa.%I c '
        '                  WHERE c.lane_id = ANY ($1) AND c.win_hi IS NOT NULL '
        '                  ORDER BY c.lane_id, c.claim_seq DESC) t '
        ' WHERE t.claim_seq = (SELECT p.claim_seq FROM awa.lane_window(t.lane_id) p)',
        'lease_claims_' || p_slot)
      USING p_lanes;
END
$$;

-- Whether the lane's position is still needed: the queue ring holds an entry of the
-- lane (without a position, a lane's next window is its first, which holds every
-- entry still in the ring).
CREATE OR REPLACE FUNCTION awa.lane_position_needed(p_lane_id int, p_top bigint) RETURNS boolean
LANGUAGE sql STABLE
AS $$ SELECT EXISTS (SELECT 1 FROM awa.ready_entries r WHERE r.lane_id = p_lane_id) $$;

-- The attempt number of a receipt (its run_lease is the attempt's token, §A.6).
CREATE OR REPLACE FUNCTION awa.receipt_attempt(p_receipt awa.lease_claims) RETURNS int
LANGUAGE sql IMMUTABLE
AS $$ SELECT p_receipt.attempt $$;

-- A fresh attempt token: random, at least 2^62 (src/tokens.c).
CREATE OR REPLACE FUNCTION awa.lease_token() RETURNS bigint
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_lease_token';

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

-- ---- internal/0.9/close.sql ----
-- Closing attempts in 0.9 (docs/storage.md §A.15; replaces awa.close_attempts of
-- internal/attempts.sql, same signature): one row per attempt, its closure in the
-- receipt's claim slot, carrying the outcome, the job's terminal state (p_state: NULL
-- while the job goes on) and the error of a final failure. No done entry: the closure
-- is the outcome, counted where it lies and folded into the rollups by the claim prune
-- that truncates it. src/complete.c writes the same row for the C paths. The one place
-- in SQL that writes closures (fail_attempt for rescue, cancel, cancel_queue). The
-- caller holds the attempts' locks.
CREATE OR REPLACE FUNCTION awa.close_attempts(p_receipts awa.lease_claims[], p_outcome text,
                                              p_state text, p_error text)
RETURNS void
LANGUAGE sql VOLATILE
AS $$
    INSERT INTO awa.lease_claim_closures (claim_slot, claim_generation, job_id, run_lease,
                                          outcome, state, error)
    SELECT c.claim_slot, c.claim_generation, c.job_id, c.run_lease, p_outcome, p_state,
           p_error
      FROM unnest(p_receipts) c
$$;

-- ---- api/0.9/complete.sql ----
-- Completing one attempt in 0.9, in C (src/complete.c; replaces awa.complete of
-- internal/attempts.sql, same signature, same result): the attempt's lock, its open receipt
-- (awa.open_receipt), then what awa.close_attempts(ARRAY[receipt], 'completed',
-- 'completed', NULL) writes: a closure in the receipt's claim slot and a done entry
-- (run_lease: the attempt number, A.6) in the current queue slot.
CREATE OR REPLACE FUNCTION awa.complete(job_id bigint, run_lease bigint) RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_complete';

-- Completing many attempts in one round trip, in C (src/complete.c; replaces
-- awa.complete_batch of internal/attempts.sql, same signature, checks and result): the locks
-- taken in key order, then for each distinct attempt what awa.complete does; returns
-- the attempts it completed, ordered by (job_id, run_lease).
CREATE OR REPLACE FUNCTION awa.complete_batch(job_ids bigint[], run_leases bigint[])
RETURNS TABLE (job_id bigint, run_lease bigint)
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_complete_batch';

-- Failing an attempt, in C (src/attempts.c; replaces awa.fail of internal/attempts.sql, same
-- signature, checks and result): the attempt's lock, its open receipt, then what
-- awa.fail_attempt(receipt, 'failed', error, retry_in) writes.
CREATE OR REPLACE FUNCTION awa.fail(job_id bigint, run_lease bigint, error text,
                         retry_in interval DEFAULT NULL)
RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_fail';

-- A heartbeat, in C (src/attempts.c; replaces awa.heartbeat of internal/attempts.sql, same
-- signature, checks and result): the attempt's lock, its open receipt, then a row in the
-- current lease slot.
CREATE OR REPLACE FUNCTION awa.heartbeat(job_id bigint, run_lease bigint, progress jsonb DEFAULT NULL)
RETURNS boolean
LANGUAGE C VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'awa_heartbeat';

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

-- ---- maintenance/0.9/rescue.sql ----
-- The worker's rescue of stuck attempts (0.9; 0.6-0.8: ../rescue.sql).

-- Open receipts past their deadline, or whose newest heartbeat (or, without one, the
-- claim) is older than awa_bgw.job_heartbeat_timeout: closed as rescued and retried, or
-- failed when out of attempts. Takes the claim ring's serializer first, as prune does,
-- so it never races a carry-forward; an attempt whose lock is busy is left for the next
-- round.
--
-- 0.9 (docs/operations.md, "What the worker costs"): a receipt can be due only if its
-- deadline has passed or its claim is older than the timeout (the later of its claim
-- and its newest heartbeat is never earlier than its claim), so each receipt is tested
-- on its own columns first and only those old enough reach the closure and heartbeat
-- probes. 0.8 probed the
-- heartbeats of every receipt of the ring, eight lease children each, every 5 s: with
-- 25,000 jobs/s a rescue took 1.4 s, a quarter of a core.
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
            ' WHERE (c.deadline_at < clock_timestamp() OR c.claimed_at < clock_timestamp() - $1) '
            '   AND NOT EXISTS (SELECT 1 FROM awa.%I x WHERE x.job_id = c.job_id '
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

-- ---- api/0.9/counts.sql ----
-- Exact counts in 0.9 (replaces awa.claim_slot_queue_counts of api/counts.sql, same
-- signature): a terminal outcome is a closure carrying a state (docs/storage.md §A.15),
-- counted where it lies, next to its receipt, which names its queue. The claim child is
-- read once: its receipts of the queue joined with their closures, open ones running,
-- closures with the state completed or failed the outcomes. STABLE: it reads in the
-- snapshot of awa.queue_counts' statement, taken after the ring families were locked.
CREATE OR REPLACE FUNCTION awa.claim_slot_queue_counts(p_queue text, p_slot int,
    OUT running bigint, OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('SELECT count(*) FILTER (WHERE x.job_id IS NULL), '
                   '       count(*) FILTER (WHERE x.state = ''completed''), '
                   '       count(*) FILTER (WHERE x.state = ''failed'') '
                   '  FROM awa.%I c LEFT JOIN awa.%I x '
                   '    ON x.job_id = c.job_id AND x.run_lease = c.run_lease '
                   ' WHERE c.queue = $1',
                   'lease_claims_' || p_slot, 'lease_claim_closures_' || p_slot)
       INTO running, completed, failed USING p_queue;
END
$$;

-- ---- api/0.9/queue_checks.sql ----
-- The API's SQL entry points of 0.9 with the per-queue checks (api/0.9/queue_policy.sql):
-- as in api/jobs.sql, internal/attempts.sql and api/counts.sql, and each asks for the caller's
-- privilege on the queue before it writes anything: register_queue enqueue; cancel and
-- queue_counts manage. terminal_jobs shows only the queues the reader may manage.

CREATE OR REPLACE FUNCTION awa.register_queue(queue text, priority smallint DEFAULT 0) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_job(register_queue.queue, 'register', '{}', register_queue.priority,
                          now(), 1);
    PERFORM awa.require_queue_privilege(register_queue.queue, 'enqueue');
    PERFORM awa.ensure_lanes(register_queue.queue, register_queue.priority);
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
    v_queue text;
BEGIN
    PERFORM awa.require_read_committed();
    -- hold off prune (its TRUNCATE is not MVCC-safe) before the lookups below take
    -- their snapshots
    PERFORM awa.hold_ring_families();
    -- scheduled or waiting for a retry
    SELECT d.queue INTO v_queue FROM awa.deferred_jobs d WHERE d.job_id = cancel.job_id;
    IF FOUND THEN
        PERFORM awa.require_queue_privilege(v_queue, 'manage');
    END IF;
    DELETE FROM awa.deferred_jobs d WHERE d.job_id = cancel.job_id RETURNING * INTO v_def;
    IF v_def.job_id IS NOT NULL THEN
        PERFORM awa.require_queue_privilege(v_def.queue, 'manage');
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
        PERFORM awa.require_queue_privilege(v_entry.queue, 'manage');
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
        PERFORM awa.require_queue_privilege(v_receipt.queue, 'manage');
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

CREATE OR REPLACE FUNCTION awa.queue_counts(queue text,
    OUT available bigint, OUT scheduled bigint, OUT running bigint,
    OUT completed bigint, OUT failed bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_name('queue', queue_counts.queue);
    PERFORM awa.require_queue_privilege(queue_counts.queue, 'manage');
    PERFORM awa.hold_ring_families();
    SELECT * INTO available, scheduled, running, completed, failed
      FROM awa.queue_counts_in_snapshot(queue_counts.queue);
END
$$;

-- Terminal outcomes the rings still hold (pruned history survives as counts only;
-- failed jobs are also kept in awa.failed_jobs for awa_bgw.failed_retention), of the
-- queues the reader may manage: the closures carrying a state, with their receipts'
-- queue, kind and attempt (docs/storage.md §A.15), and the done entries (cancelled
-- before a claim, or written before 0.9).
CREATE OR REPLACE VIEW awa.terminal_jobs AS
SELECT d.job_id, d.queue, d.priority, d.kind, d.state,
       nullif(d.run_lease, 0) AS attempt, d.error, d.created_at, d.finished_at
  FROM awa.done_entries d
 WHERE awa.queue_allowed(d.queue, 'manage')
UNION ALL
SELECT c.job_id, c.queue, c.priority, c.kind, x.state, c.attempt, x.error, c.created_at,
       x.closed_at
  FROM awa.lease_claim_closures x
  JOIN awa.lease_claims c ON c.claim_slot = x.claim_slot AND c.job_id = x.job_id
                         AND c.run_lease = x.run_lease
 WHERE x.state IS NOT NULL AND awa.queue_allowed(c.queue, 'manage');

-- ---- internal/0.9/lanes.sql ----
-- Lanes of 0.9 (docs/storage.md Part A §A.3, §A.5): enqueue takes no lock and creates
-- nothing. Replaces internal/lanes.sql.

-- awa_bgw.max_queues (a superuser-only setting: a caller cannot raise it).
CREATE OR REPLACE FUNCTION awa.max_queues() RETURNS int
LANGUAGE C STABLE STRICT
AS 'MODULE_PATHNAME', 'awa_max_queues';

-- Reserves a place for a new queue until this transaction ends, and returns how many
-- other registrations are in flight (src/registry.c; -1: not counted).
CREATE OR REPLACE FUNCTION awa.reserve_queue_registration() RETURNS int
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_reserve_queue_registration';

-- Registers the shards of (queue, priority) that this transaction does not see yet (all
-- of them for a new queue or priority; shards 4-7 for a queue registered under 0.8,
-- which had four); SECURITY DEFINER so that an application role needs no INSERT on the
-- registry. No lock and no unique key: a concurrent first producer never waits for this
-- one (both may register; claimers read every lane, producers the lowest of their
-- shard). A new queue beyond awa_bgw.max_queues is refused (54000): the registration
-- reserves its place first, then counts the queues it sees in a later statement plus
-- the registrations of other transactions in flight, so the limit is never overshot
-- (docs/storage.md A.5).
CREATE OR REPLACE FUNCTION awa.ensure_lanes(p_queue text, p_priority smallint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_others int;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM awa.queue_lanes WHERE queue = p_queue) THEN
        v_others := greatest(awa.reserve_queue_registration(), 0);
    END IF;
    IF v_others IS NOT NULL
       AND (SELECT count(DISTINCT queue) FROM awa.queue_lanes) + v_others >= awa.max_queues() THEN
        RAISE EXCEPTION 'too many queues: awa_bgw.max_queues is %', awa.max_queues()
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Reuse an existing queue, or raise awa_bgw.max_queues in the server '
                         'configuration.';
    END IF;
    INSERT INTO awa.queue_lanes (lane_id, queue, priority, shard)
    SELECT nextval('awa.queue_lane_id_seq'), p_queue, p_priority, s
      FROM generate_series(0, awa.lane_shards() - 1) s
     WHERE NOT EXISTS (SELECT 1 FROM awa.queue_lanes l WHERE l.queue = p_queue
                          AND l.priority = p_priority AND l.shard = s);
END
$$;

-- The lane a producer writes into: its backend's shard of (queue, priority), the lowest
-- lane registered for it. Takes no lock.
CREATE OR REPLACE FUNCTION awa.enqueue_lane(p_queue text, p_priority smallint) RETURNS int
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_lane int;
BEGIN
    SELECT min(l.lane_id) INTO v_lane FROM awa.queue_lanes l
     WHERE l.queue = p_queue AND l.priority = p_priority
       AND l.shard = pg_backend_pid() % awa.lane_shards();
    IF v_lane IS NULL THEN
        PERFORM awa.ensure_lanes(p_queue, p_priority);
        SELECT min(l.lane_id) INTO v_lane FROM awa.queue_lanes l
         WHERE l.queue = p_queue AND l.priority = p_priority
           AND l.shard = pg_backend_pid() % awa.lane_shards();
    END IF;
    RETURN v_lane;
END
$$;

-- Appends ready entries for jobs of one (queue, priority), due now, into the current
-- queue slot (src/enqueue.c): no lock; each entry records this transaction's xid (the
-- claim order, windows of snapshots, comes from it); lane_seq is taken in job_id order.
-- The lane is awa.enqueue_lane's (awa.ensure_lanes registers it first when needed), the
-- slot awa.ring_cursor('queue')'s; then awa.note_enqueued: the slot's txid bound rises
-- at once, and the commit wakes that many claimers waiting for the queue and clears the
-- lane's empty mark (src/wait.c, src/lanemarks.c).
CREATE OR REPLACE FUNCTION awa.enqueue_ready(p_queue text, p_priority smallint, p_jobs awa.new_job[])
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'awa_enqueue_ready';

-- ---- api/0.9/inspect.sql ----
-- Looking jobs up (README "Inspecting and replaying jobs"): awa.job(job_id), one job's
-- state assembled from every place the data plane keeps a part of it, and awa.jobs, the
-- operators' listing. Both only read; neither touches the hot paths.
--
-- A job's records (docs/storage.md §3, Part A): its deferred row (scheduled, or waiting
-- for a retry), a ready entry per attempt that was due (and a cancel tombstone beside
-- it in its slot), a receipt per claimed attempt (and its closure, which in 0.9 carries
-- the job's terminal state, §A.15), a done entry per outcome written before 0.9 or
-- cancel of a deferred job, its failed_jobs row, heartbeats. Attempt numbers only grow,
-- and a later stage of one attempt outranks an earlier one, so the job's state is that
-- of its record with the largest (attempt, rank): claimed ready entry 0 < deferred 1 <
-- ready 2 < open receipt 3 < closed receipt 4 < receipt closed with a terminal state,
-- done entry, tombstone or failed_jobs row 5. Each ring prunes its oldest slot first, so
-- a newer record outlives an older one of the same ring (and a receipt's closure lies in
-- its slot). A claimed entry states nothing: when it is the top record, its receipt was
-- pruned before it, the attempt's outcome with it, and the job has no state (no row).

-- Which queues the caller may see (awa.job and awa.jobs filter their rows with it): a
-- queue without per-queue grants is open to every caller of these functions; a
-- restricted one shows its jobs to the roles that hold any privilege on it (a producer
-- may follow the jobs it enqueued).
CREATE OR REPLACE FUNCTION awa.queue_visible(p_queue text) RETURNS boolean
LANGUAGE sql STABLE
AS $$ SELECT awa.queue_allowed(p_queue, 'manage') OR awa.queue_allowed(p_queue, 'claim')
             OR awa.queue_allowed(p_queue, 'enqueue') $$;

-- Refuses a bulk operation on a queue the caller may not manage (42501).
CREATE OR REPLACE FUNCTION awa.check_queue_access(p_queue text) RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF p_queue IS NOT NULL AND NOT awa.queue_allowed(p_queue, 'manage') THEN
        RAISE EXCEPTION 'permission denied for queue %', quote_literal(p_queue)
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Ask the queue''s owner for access to it.';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION awa.check_job_id(p_job_id bigint) RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF p_job_id IS NULL OR p_job_id < 1 THEN
        RAISE EXCEPTION 'invalid job id %', coalesce(p_job_id::text, 'NULL')
            USING ERRCODE = CASE WHEN p_job_id IS NULL THEN 'null_value_not_allowed'
                                 ELSE 'invalid_parameter_value' END,
                  HINT = 'Job ids are the positive numbers awa.enqueue returns.';
    END IF;
END
$$;

-- The states awa.job reports, in the order a job passes through them.
CREATE OR REPLACE FUNCTION awa.job_states() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['scheduled', 'retryable', 'available', 'running', 'completed',
                   'failed', 'cancelled'] $$;

-- Every record the data plane holds of one job, each with its attempt, its rank (see
-- above) and the state it stands for; index probes only (job id on each family, the
-- tombstone by (lane_id, lane_seq) in the entry's own slot). Reads under the statement's
-- snapshot: the caller holds the ring families in ACCESS SHARE, so no prune truncates a
-- slot under it.
CREATE OR REPLACE FUNCTION awa.job_records(p_job_id bigint)
RETURNS TABLE (attempt int, rank int, state text, queue text, priority smallint,
               kind text, args jsonb, max_attempts int, run_lease bigint, error text,
               created_at timestamptz, run_at timestamptz, attempted_at timestamptz,
               finished_at timestamptz)
LANGUAGE sql STABLE
AS $$
    -- scheduled for later, or waiting for its retry (a retry is attempt 2 or more)
    SELECT d.attempt, 1, CASE WHEN d.attempt > 1 THEN 'retryable' ELSE 'scheduled' END,
           d.queue, d.priority, d.kind, d.args, d.max_attempts, NULL::bigint, d.last_error,
           d.created_at, d.run_at, NULL::timestamptz, NULL::timestamptz
      FROM awa.deferred_jobs d WHERE d.job_id = p_job_id
    UNION ALL
    -- due: available, unless a tombstone in its slot cancelled it; once claimed (at or
    -- below its lane's position, which the claim ring keeps while the queue ring holds
    -- the entry) it ranks 0, under every stage of its attempt, and tells no state: the
    -- receipt does, and a receipt pruned before the entry (the claim ring turning
    -- faster) has taken the attempt's history with it
    SELECT r.attempt, CASE WHEN t.job_id IS NOT NULL THEN 5 WHEN u.unclaimed THEN 2 ELSE 0 END,
           CASE WHEN t.job_id IS NOT NULL THEN 'cancelled' WHEN u.unclaimed THEN 'available' END,
           r.queue, r.priority, r.kind, r.args, r.max_attempts, NULL, NULL,
           r.created_at, r.enqueued_at, NULL, t.finished_at
      FROM awa.ready_entries r
      LEFT JOIN LATERAL (SELECT d.job_id, d.finished_at FROM awa.done_entries d
                          WHERE d.ready_slot = r.ready_slot AND d.lane_id = r.lane_id
                            AND d.lane_seq = r.lane_seq AND d.run_lease = 0
                          LIMIT 1) t ON true
     CROSS JOIN LATERAL (SELECT awa.entry_unclaimed(r) AS unclaimed) u
     WHERE r.job_id = p_job_id
    UNION ALL
    -- claimed: the newest copy of each attempt's receipt (prune carries open ones
    -- forward), open or closed by the closure in its slot; a closure that carries the
    -- job's terminal state (0.9, docs/storage.md §A.15) is its outcome
    SELECT c.attempt, CASE WHEN x.outcome IS NULL THEN 3
                           WHEN x.state IS NULL THEN 4 ELSE 5 END,
           CASE WHEN x.outcome IS NULL THEN 'running'
                WHEN x.state IS NOT NULL THEN x.state
                WHEN x.outcome IN ('retried', 'rescued') THEN 'retryable'
                ELSE x.outcome END,
           c.queue, c.priority, c.kind, c.args, c.max_attempts, c.run_lease, x.error,
           c.created_at, NULL, c.claimed_at, x.closed_at
      FROM (SELECT DISTINCT ON (l.run_lease) l.*
              FROM awa.lease_claims l WHERE l.job_id = p_job_id
             ORDER BY l.run_lease, l.claim_generation DESC) c
      LEFT JOIN LATERAL (SELECT y.outcome, y.state, y.error, y.closed_at
                           FROM awa.lease_claim_closures y
                          WHERE y.claim_slot = c.claim_slot AND y.job_id = c.job_id
                            AND y.run_lease = c.run_lease
                          LIMIT 1) x ON true
    UNION ALL
    -- terminal outcomes written as done entries (before 0.9, or a cancelled deferred
    -- job; a done entry's run_lease is the attempt number; 0, a tombstone, is read
    -- with its entry above)
    SELECT d.run_lease, 5, d.state, d.queue, d.priority, d.kind, NULL, NULL, NULL, d.error,
           d.created_at, NULL, NULL, d.finished_at
      FROM awa.done_entries d WHERE d.job_id = p_job_id AND d.run_lease > 0
    UNION ALL
    SELECT f.attempts, 5, 'failed', f.queue, f.priority, f.kind, f.args, f.max_attempts,
           NULL, f.error, f.created_at, NULL, NULL, f.failed_at
      FROM awa.failed_jobs f WHERE f.job_id = p_job_id
$$;

-- One job from its records: state, attempt and run_lease from the top record; the body
-- and the times from the newest record that has them (a done entry carries no args);
-- the newest heartbeat of the top attempt's receipt, if it has one.
-- No row: no record of the job (never enqueued, or its history pruned).
CREATE OR REPLACE FUNCTION awa.job_in_snapshot(p_job_id bigint) RETURNS SETOF awa.job_info
LANGUAGE sql STABLE
AS $$
    WITH recs AS MATERIALIZED (SELECT * FROM awa.job_records(p_job_id)),
    top AS (SELECT * FROM recs ORDER BY attempt DESC, rank DESC LIMIT 1),
    hb AS (SELECT l.heartbeat_at, l.progress
             FROM awa.leases l
            WHERE l.job_id = p_job_id
              AND l.run_lease = (SELECT r.run_lease FROM recs r, top t
                                  WHERE r.run_lease IS NOT NULL AND r.attempt = t.attempt
                                  LIMIT 1)
            ORDER BY l.heartbeat_at DESC LIMIT 1)
    SELECT p_job_id, t.queue, t.kind,
           (SELECT r.args FROM recs r WHERE r.args IS NOT NULL
             ORDER BY r.attempt DESC, r.rank DESC LIMIT 1),
           t.priority, t.state, t.attempt,
           (SELECT r.max_attempts FROM recs r WHERE r.max_attempts IS NOT NULL
             ORDER BY r.attempt DESC, r.rank DESC LIMIT 1),
           CASE WHEN t.state = 'running' THEN t.run_lease END,
           (SELECT r.error FROM recs r WHERE r.error IS NOT NULL
             ORDER BY r.attempt DESC, r.rank DESC LIMIT 1),
           t.created_at,
           (SELECT max(r.run_at) FROM recs r WHERE r.attempt = t.attempt),
           (SELECT max(r.attempted_at) FROM recs r),
           CASE WHEN t.rank >= 4 AND t.state IN ('completed', 'failed', 'cancelled')
                THEN (SELECT max(r.finished_at) FROM recs r WHERE r.attempt = t.attempt) END,
           (SELECT hb.heartbeat_at FROM hb), (SELECT hb.progress FROM hb)
      FROM top t
     WHERE t.rank > 0
$$;

-- The application's and operator's lookup of one job (SECURITY DEFINER): the ring
-- families are locked ACCESS SHARE first, as queue_counts does, so that no prune's
-- TRUNCATE (not MVCC-safe) falls between the lookup's snapshot and its reads.
CREATE OR REPLACE FUNCTION awa.job(job_id bigint) RETURNS SETOF awa.job_info
LANGUAGE plpgsql VOLATILE SECURITY DEFINER ROWS 1
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.check_job_id(job.job_id);
    PERFORM awa.hold_ring_families(true);
    RETURN QUERY SELECT j.* FROM awa.job_in_snapshot(job.job_id) j
                  WHERE awa.queue_visible(j.queue);
END
$$;

-- The highest lim accepted by awa.jobs.
CREATE OR REPLACE FUNCTION awa.jobs_max_limit() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1000 $$;

-- The operators' listing: the jobs matching the filters, newest job id first, at most
-- lim of them, each as awa.job shows it. Candidates are read newest id first from the
-- families that can hold a job in the wanted state (every one without a state filter;
-- receipts for every state a closure gives too: a finished job's done entry may be
-- pruned before its receipt), each job then looked up whole; the listing stops at lim
-- rows. Its cost is that of the candidates it must pass over (records of other queues
-- or kinds, records a newer one supersedes: a claimed ready entry, a done entry of a
-- retried job), at worst a read of the rings, as queue_counts makes.
CREATE OR REPLACE FUNCTION awa.jobs(queue text DEFAULT NULL, state text DEFAULT NULL,
                                    kind text DEFAULT NULL, lim int DEFAULT 100)
RETURNS SETOF awa.job_info
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id bigint;
    v_last bigint;
    v_job awa.job_info;
    v_n int := 0;
    v_any boolean := jobs.state IS NULL;
BEGIN
    IF jobs.queue IS NOT NULL THEN
        PERFORM awa.check_name('queue', jobs.queue);
        PERFORM awa.check_queue_access(jobs.queue);
    END IF;
    IF jobs.kind IS NOT NULL THEN
        PERFORM awa.check_name('kind', jobs.kind);
    END IF;
    IF jobs.state IS NOT NULL AND NOT jobs.state = ANY (awa.job_states()) THEN
        RAISE EXCEPTION 'unknown job state %', quote_literal(jobs.state)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A state is one of ' || array_to_string(awa.job_states(), ', ')
                         || ', or NULL for all.';
    END IF;
    IF lim IS NULL OR lim NOT BETWEEN 1 AND awa.jobs_max_limit() THEN
        RAISE EXCEPTION 'lim % is out of range', coalesce(lim::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('List 1 to %s jobs at a time; page with a state or kind '
                                'filter.', awa.jobs_max_limit());
    END IF;
    PERFORM awa.hold_ring_families(true);
    FOR v_id IN
        SELECT u.job_id FROM (
            SELECT d.job_id FROM awa.deferred_jobs d
             WHERE (v_any OR jobs.state IN ('scheduled', 'retryable'))
               AND (jobs.queue IS NULL OR d.queue = jobs.queue)
               AND (jobs.kind IS NULL OR d.kind = jobs.kind)
            UNION ALL
            SELECT r.job_id FROM awa.ready_entries r
             WHERE (v_any OR jobs.state IN ('available', 'cancelled'))
               AND (jobs.queue IS NULL OR r.queue = jobs.queue)
               AND (jobs.kind IS NULL OR r.kind = jobs.kind)
            UNION ALL
            SELECT c.job_id FROM awa.lease_claims c
             WHERE (v_any OR jobs.state <> 'scheduled')
               AND (jobs.queue IS NULL OR c.queue = jobs.queue)
               AND (jobs.kind IS NULL OR c.kind = jobs.kind)
            UNION ALL
            SELECT e.job_id FROM awa.done_entries e
             WHERE (v_any OR jobs.state = e.state)
               AND (jobs.queue IS NULL OR e.queue = jobs.queue)
               AND (jobs.kind IS NULL OR e.kind = jobs.kind)
            UNION ALL
            SELECT f.job_id FROM awa.failed_jobs f
             WHERE (v_any OR jobs.state = 'failed')
               AND (jobs.queue IS NULL OR f.queue = jobs.queue)
               AND (jobs.kind IS NULL OR f.kind = jobs.kind)) u
         ORDER BY u.job_id DESC
    LOOP
        CONTINUE WHEN v_id = v_last;
        v_last := v_id;
        SELECT * INTO v_job FROM awa.job_in_snapshot(v_id);
        CONTINUE WHEN v_job.job_id IS NULL
                   OR (jobs.state IS NOT NULL AND v_job.state <> jobs.state)
                   OR (jobs.queue IS NOT NULL AND v_job.queue <> jobs.queue)
                   OR (jobs.kind IS NOT NULL AND v_job.kind <> jobs.kind)
                   OR NOT awa.queue_visible(v_job.queue);
        RETURN NEXT v_job;
        v_n := v_n + 1;
        EXIT WHEN v_n >= lim;
    END LOOP;
END
$$;

-- ---- api/0.9/replay.sql ----
-- Replaying and clearing jobs (README "Inspecting and replaying jobs"): retry of failed
-- jobs, purge of failed jobs, bulk cancel of a queue. Operator functions (not granted
-- with the application API, see grants/grants.sql). None of them updates or deletes a row
-- of a ring family: a retry deletes the job's failed_jobs row and enqueues a new ready
-- entry, a purge deletes failed_jobs rows, a cancel writes what awa.cancel(job_id)
-- writes (a done entry, a tombstone, a closure) and deletes deferred_jobs rows; those two
-- tables are plain backlog tables. Every bulk form does at most a batch per call and
-- returns how many it did: call it again until it returns 0.

-- How many jobs a bulk retry or purge handles per call (enqueue_batch's bound).
CREATE OR REPLACE FUNCTION awa.replay_batch() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 10000 $$;

-- How many jobs a bulk cancel handles per call: each running job it cancels holds its
-- attempt lock, a lock table entry, until the transaction ends (complete_batch's bound).
CREATE OR REPLACE FUNCTION awa.cancel_batch() RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 1000 $$;

-- Re-enqueues failed jobs (rows of failed_jobs, deleted here) under their own job ids,
-- due now, with one more attempt: attempt = attempts + 1, max_attempts raised to that
-- if it was reached. The caller is READ COMMITTED.
CREATE OR REPLACE FUNCTION awa.requeue_failed(p_jobs awa.failed_jobs[]) RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_queue text;
BEGIN
    FOR v_queue IN SELECT DISTINCT f.queue FROM unnest(p_jobs) f ORDER BY 1 LOOP
        PERFORM awa.enqueue_jobs(v_queue, ARRAY(
            SELECT ROW(0, f.job_id, f.kind, f.args, f.priority, now(), f.attempts + 1,
                       greatest(f.max_attempts, f.attempts + 1), f.created_at,
                       NULL)::awa.new_job
              FROM unnest(p_jobs) f WHERE f.queue = v_queue ORDER BY f.job_id));
    END LOOP;
END
$$;

-- One failed job again: returns its job id (the same one), or NULL when failed_jobs
-- holds no such job (never failed, already retried or purged).
CREATE OR REPLACE FUNCTION awa.retry_failed(job_id bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_job awa.failed_jobs;
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_job_id(retry_failed.job_id);
    SELECT * INTO v_job FROM awa.failed_jobs f WHERE f.job_id = retry_failed.job_id
       FOR UPDATE;
    IF v_job.job_id IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM awa.check_queue_access(v_job.queue);
    DELETE FROM awa.failed_jobs f WHERE f.job_id = v_job.job_id;
    PERFORM awa.requeue_failed(ARRAY[v_job]);
    RETURN v_job.job_id;
END
$$;

-- The failed jobs of a queue (of one kind, failed at or after since; named apart from
-- retry_failed(job_id) for the reason cancel_queue is), oldest failure
-- first, at most awa.replay_batch() per call; returns how many it re-enqueued. Rows
-- another transaction is retrying or purging are skipped.
CREATE OR REPLACE FUNCTION awa.retry_failed_queue(queue text, kind text DEFAULT NULL,
                                            since timestamptz DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_jobs awa.failed_jobs[];
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_name('queue', retry_failed_queue.queue);
    IF retry_failed_queue.kind IS NOT NULL THEN
        PERFORM awa.check_name('kind', retry_failed_queue.kind);
    END IF;
    IF NOT isfinite(retry_failed_queue.since) THEN
        RAISE EXCEPTION 'since must be a finite timestamp or NULL'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'NULL retries every failed job of the queue.';
    END IF;
    PERFORM awa.check_queue_access(retry_failed_queue.queue);
    WITH gone AS (
        DELETE FROM awa.failed_jobs f
         WHERE f.job_id IN (SELECT x.job_id FROM awa.failed_jobs x
                             WHERE x.queue = retry_failed_queue.queue
                               AND (retry_failed_queue.kind IS NULL OR x.kind = retry_failed_queue.kind)
                               AND (retry_failed_queue.since IS NULL OR x.failed_at >= retry_failed_queue.since)
                             ORDER BY x.failed_at, x.job_id LIMIT awa.replay_batch()
                             FOR UPDATE SKIP LOCKED)
        RETURNING f.*)
    SELECT coalesce(array_agg(gone), '{}') INTO v_jobs FROM gone;
    PERFORM awa.requeue_failed(v_jobs);
    RETURN cardinality(v_jobs);
END
$$;

-- Deletes failed jobs (of a queue, of a kind) that failed before `before`, at most
-- awa.replay_batch() per call; returns how many. Their done entries stay in the queue
-- ring until it is pruned (awa.job shows them failed until then).
CREATE OR REPLACE FUNCTION awa.purge_failed(queue text DEFAULT NULL, kind text DEFAULT NULL,
                                            before timestamptz DEFAULT now())
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_n bigint;
BEGIN
    IF purge_failed.queue IS NOT NULL THEN
        PERFORM awa.check_name('queue', purge_failed.queue);
        PERFORM awa.check_queue_access(purge_failed.queue);
    END IF;
    IF purge_failed.kind IS NOT NULL THEN
        PERFORM awa.check_name('kind', purge_failed.kind);
    END IF;
    IF purge_failed.before IS NULL THEN
        RAISE EXCEPTION 'before must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass now() (the default) to purge every failed job so far.';
    END IF;
    DELETE FROM awa.failed_jobs f
     WHERE f.job_id IN (SELECT x.job_id FROM awa.failed_jobs x
                         WHERE (purge_failed.queue IS NULL OR x.queue = purge_failed.queue)
                           AND (purge_failed.kind IS NULL OR x.kind = purge_failed.kind)
                           AND x.failed_at < purge_failed.before
                           AND awa.queue_allowed(x.queue, 'manage')
                         ORDER BY x.failed_at, x.job_id LIMIT awa.replay_batch()
                         FOR UPDATE SKIP LOCKED);
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END
$$;

-- Cancels the jobs of a queue (of one kind) the way awa.cancel(job_id) cancels one (a
-- name of its own: an overload awa.cancel(text, text) would take a call
-- awa.cancel($1) whose parameter a driver sends untyped away from awa.cancel(bigint)):
-- scheduled and retryable jobs (their deferred rows deleted, a cancelled done entry
-- each), available ones (under each lane's claim lock, which it waits for and holds to
-- commit: a tombstone in the entry's slot each), running ones (under each attempt's
-- lock: a closure and a cancelled done entry; the worker's next complete, fail or
-- heartbeat of that attempt returns false). At most awa.cancel_batch() jobs per call,
-- in that order; returns how many it cancelled.
CREATE OR REPLACE FUNCTION awa.cancel_queue(queue text, kind text DEFAULT NULL) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_left int := awa.cancel_batch();
    v_n bigint;
    v_lane int;
    v_receipt awa.lease_claims;
BEGIN
    PERFORM awa.require_read_committed();
    PERFORM awa.check_name('queue', cancel_queue.queue);
    IF cancel_queue.kind IS NOT NULL THEN
        PERFORM awa.check_name('kind', cancel_queue.kind);
    END IF;
    PERFORM awa.check_queue_access(cancel_queue.queue);
    -- hold off prune (its TRUNCATE is not MVCC-safe) before the reads below
    PERFORM awa.hold_ring_families();
    -- scheduled, or waiting for a retry
    WITH gone AS (
        DELETE FROM awa.deferred_jobs d
         WHERE d.job_id IN (SELECT x.job_id FROM awa.deferred_jobs x
                             WHERE x.queue = cancel_queue.queue
                               AND (cancel_queue.kind IS NULL OR x.kind = cancel_queue.kind)
                             ORDER BY x.job_id LIMIT v_left
                             FOR UPDATE SKIP LOCKED)
        RETURNING d.*)
    INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease, lane_id,
                                  lane_seq, queue, priority, kind, state, created_at)
    SELECT k.slot, k.generation, g.job_id, g.attempt, 0, 0, g.queue, g.priority, g.kind,
           'cancelled', g.created_at
      FROM awa.ring_cursor('queue') k, gone g;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_left := v_left - v_n;
    -- available: lane by lane, under the lane's claim lock, each unclaimed entry not yet
    -- tombstoned (the statement's snapshot is taken after the lock)
    FOR v_lane IN SELECT DISTINCT l.lane_id FROM awa.queue_lanes l
                   WHERE l.queue = cancel_queue.queue ORDER BY 1 LOOP
        EXIT WHEN v_left <= 0;
        PERFORM awa.private_xact_lock(awa.claim_lock_key(v_lane));
        INSERT INTO awa.done_entries (ready_slot, ready_generation, job_id, run_lease,
                                      lane_id, lane_seq, queue, priority, kind, state,
                                      created_at)
        SELECT r.ready_slot, r.ready_generation, r.job_id, 0, r.lane_id, r.lane_seq,
               r.queue, r.priority, r.kind, 'cancelled', r.created_at
          FROM awa.lane_window(v_lane) p, awa.ready_entries r
         WHERE r.lane_id = v_lane
           AND (cancel_queue.kind IS NULL OR r.kind = cancel_queue.kind)
           AND awa.window_unclaimed(r.txid, r.lane_seq, p.win_lo, p.win_hi, p.txid,
                                    p.lane_seq)
           AND NOT EXISTS (SELECT 1 FROM awa.done_entries t
                            WHERE t.ready_slot = r.ready_slot AND t.lane_id = r.lane_id
                              AND t.lane_seq = r.lane_seq AND t.run_lease = 0)
         ORDER BY r.txid, r.lane_seq LIMIT v_left;
        GET DIAGNOSTICS v_n = ROW_COUNT;
        v_left := v_left - v_n;
    END LOOP;
    -- running: each open receipt under its attempt's lock, checked again under it
    FOR v_receipt IN SELECT c.* FROM awa.lease_claims c
                      WHERE c.queue = cancel_queue.queue
                        AND (cancel_queue.kind IS NULL OR c.kind = cancel_queue.kind)
                        AND NOT EXISTS (SELECT 1 FROM awa.lease_claim_closures x
                                         WHERE x.job_id = c.job_id
                                           AND x.run_lease = c.run_lease)
                      ORDER BY c.job_id, c.run_lease LOOP
        EXIT WHEN v_left <= 0;
        PERFORM awa.private_xact_lock(awa.attempt_lock_key(v_receipt.job_id,
                                                           v_receipt.run_lease));
        SELECT * INTO v_receipt FROM awa.open_receipt(v_receipt.job_id, v_receipt.run_lease);
        IF v_receipt.job_id IS NOT NULL THEN
            PERFORM awa.close_attempts(ARRAY[v_receipt], 'cancelled', 'cancelled', NULL);
            v_left := v_left - 1;
        END IF;
    END LOOP;
    RETURN awa.cancel_batch() - v_left;
END
$$;

-- ---- api/0.9/schedules.sql ----
-- Periodic jobs (docs/operations.md, "Periodic jobs"): a five-field cron parser, the
-- next fire time of an expression in a time zone, awa.schedule / awa.unschedule, the
-- awa.schedules view, and the step the maintenance leader runs once a second,
-- awa.fire_due_schedules, which enqueues each due run exactly once.

-- A bad cron expression: 22023, the field at fault and its allowed values in the hint.
CREATE OR REPLACE FUNCTION awa.cron_error(p_cron text, p_what text, p_problem text,
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
CREATE OR REPLACE FUNCTION awa.cron_value(p_cron text, p_what text, p_token text,
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
            PERFORM awa.cron_error(p_cron, p_what, format('%s is out of range', p_token), p_range);
        END IF;
        RETURN v;
    END IF;
    v := array_position(p_names, upper(p_token));
    IF v IS NULL THEN
        PERFORM awa.cron_error(p_cron, p_what,
                               format('"%s" is not a value', left(p_token, 20)), p_range);
    END IF;
    RETURN p_lo + v - 1;
END
$$;

-- The values one field allows, sorted and distinct. p_star_hi: the top of * (6 for the
-- day of week, whose 7 is also Sunday and becomes 0).
CREATE OR REPLACE FUNCTION awa.cron_field(p_cron text, p_what text, p_field text,
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
            PERFORM awa.cron_error(p_cron, p_what, format('"%s" is not a value, range or step',
                                                         left(v_item, 20)), v_range);
        END IF;
        v_step := 1;
        IF cardinality(v_parts) = 2 THEN
            IF v_parts[2] !~ '^[0-9]{1,2}$' OR v_parts[2]::int NOT BETWEEN 1 AND p_hi THEN
                PERFORM awa.cron_error(p_cron, p_what,
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
                PERFORM awa.cron_error(p_cron, p_what, format('"%s" is not a range',
                                                             left(v_parts[1], 20)), v_range);
            END IF;
            v_from := awa.cron_value(p_cron, p_what, v_bounds[1], p_lo, p_hi, p_names, v_range);
            IF cardinality(v_bounds) = 2 THEN
                v_to := awa.cron_value(p_cron, p_what, v_bounds[2], p_lo, p_hi, p_names, v_range);
                IF v_to < v_from THEN
                    PERFORM awa.cron_error(p_cron, p_what,
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
CREATE OR REPLACE FUNCTION awa.cron_parse(p_cron text, OUT minutes int[], OUT hours int[],
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
    minutes := awa.cron_field(p_cron, 'minute', v_fields[1], 0, 59, 59, NULL);
    hours := awa.cron_field(p_cron, 'hour', v_fields[2], 0, 23, 23, NULL);
    doms := awa.cron_field(p_cron, 'day-of-month', v_fields[3], 1, 31, 31, NULL);
    months := awa.cron_field(p_cron, 'month', v_fields[4], 1, 12, 12, v_month_names);
    dows := awa.cron_field(p_cron, 'day-of-week', v_fields[5], 0, 7, 6,
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
CREATE OR REPLACE FUNCTION awa.check_timezone(p_timezone text) RETURNS void
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
CREATE OR REPLACE FUNCTION awa.cron_local_instant(p_local timestamp, p_timezone text)
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
    c := awa.cron_parse(p_cron);
    PERFORM awa.check_timezone(p_timezone);
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
        v_at := awa.cron_local_instant(v_local, p_timezone);
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
                                        priority smallint DEFAULT 0, max_attempts int DEFAULT 25)
RETURNS timestamptz
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_next timestamptz;
BEGIN
    PERFORM awa.check_name('schedule name', schedule.name);
    PERFORM awa.check_job(schedule.queue, schedule.kind, schedule.args, schedule.priority,
                          now(), schedule.max_attempts);
    PERFORM awa.cron_parse(schedule.cron);
    PERFORM awa.check_timezone(schedule.timezone);
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
    PERFORM awa.check_name('schedule name', unschedule.name);
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
    PERFORM awa.check_schema(p_schema);
    PERFORM awa.require_read_committed();
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

-- ---- maintenance/0.9/fold_batches.sql ----
-- The folds in bounded batches (0.9): after a long pin the delta backlog and the ledgers
-- can hold far more rows than one transaction should delete under
-- awa_bgw.step_timeout. Each call now deletes at most awa_bgw.fold_batch_size rows;
-- the worker calls again at once while a call returns a full batch, so a backlog is
-- caught up over several short transactions. Replaces the one-statement forms of
-- maintenance/folds.sql (same signatures and outputs).

CREATE OR REPLACE FUNCTION awa.fold_batch_size() RETURNS bigint
LANGUAGE sql STABLE
AS $$ SELECT coalesce(current_setting('awa_bgw.fold_batch_size', true), '10000')::bigint $$;

-- Drains up to fold_batch_size delta rows into the rollups (GREATEST(0, …) clamp, keys
-- in order), unless the horizon is genuinely pinned. The rows are picked by a bounded
-- scan and deleted by ctid; only what the DELETE returned is added, so a concurrent
-- fold never adds a row twice.
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
         WHERE ctid = ANY (ARRAY(SELECT ctid FROM awa.queue_terminal_rollup_deltas
                                  LIMIT awa.fold_batch_size()))
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

-- Trims the ledgers towards their newest slot_count rows (one wrap), oldest rows first
-- through the primary key, at most fold_batch_size rows in all per call (queue ring
-- first), unless the horizon is genuinely pinned.
CREATE OR REPLACE FUNCTION awa.fold_ring_rotation_ledgers(p_schema text,
    OUT outcome text, OUT trimmed_rows bigint, OUT pin text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r text;
    n bigint;
    v_budget bigint := awa.fold_batch_size();
BEGIN
    PERFORM awa.check_schema(p_schema);
    pin := awa.horizon_pin_holder(awa.fold_min_age());
    IF pin IS NOT NULL THEN
        outcome := 'stood_down';
        RETURN;
    END IF;
    trimmed_rows := 0;
    FOREACH r IN ARRAY ARRAY['queue', 'lease', 'claim'] LOOP
        EXIT WHEN v_budget <= 0;
        EXECUTE format('DELETE FROM awa.%1$I WHERE generation < least('
                       '(SELECT max(generation) FROM awa.%1$I) - ($1 - 1), '
                       '(SELECT min(generation) FROM awa.%1$I) + $2)',
                       r || '_ring_rotations')
          USING awa.ring_slot_count(r), v_budget;
        GET DIAGNOSTICS n = ROW_COUNT;
        trimmed_rows := trimmed_rows + n;
        v_budget := v_budget - n;
    END LOOP;
    outcome := 'folded';
END
$$;

-- Deletes up to fold_batch_size rows of failed_jobs older than awa_bgw.failed_retention,
-- oldest first through the failed_at index (the scan stops after the batch, however many
-- younger rows the table holds); the rows are deleted by ctid. The worker calls it again
-- at once while a call returns a full batch, so thousands of failures a minute are purged
-- over several short transactions. Ungated: awa.purge_failed_jobs_gated adds the gate.
CREATE OR REPLACE FUNCTION awa.purge_failed_jobs(p_schema text, OUT purged bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_keep interval := coalesce(current_setting('awa_bgw.failed_retention', true),
                                '7d')::interval;
BEGIN
    PERFORM awa.check_schema(p_schema);
    DELETE FROM awa.failed_jobs
     WHERE ctid = ANY (ARRAY(SELECT x.ctid FROM awa.failed_jobs x
                              WHERE x.failed_at < now() - v_keep
                              ORDER BY x.failed_at
                              LIMIT awa.fold_batch_size()));
    GET DIAGNOSTICS purged = ROW_COUNT;
END
$$;

-- ---- maintenance/0.9/claim_terminal_counts.sql ----
-- Claim prune records terminal outcomes (0.9, docs/storage.md §A.15): a closure that
-- carries the job's terminal state is the outcome, and lies in its receipt's claim slot.
-- Replaces awa.claim_slot_terminal_counts of maintenance/rotate_prune.sql, which has
-- none; prune records them through awa.ring_slot_terminal_counts, as the queue ring's.

-- The terminal closures of a sealed claim slot that prune did not carry into the
-- current slot, per (queue, priority) of their receipts, in key order: exactly those
-- the TRUNCATE removes for good (a carried closure is counted where it now lies, and
-- by the prune that removes its copy). Called under the slot's ACCESS EXCLUSIVE locks,
-- after carry-forward, with the ring's serializer held (the cursor cannot move).
CREATE OR REPLACE FUNCTION awa.claim_slot_terminal_counts(p_slot int)
RETURNS TABLE (queue text, priority smallint, completed bigint, failed bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_cur int := (SELECT c.slot FROM awa.ring_cursor('claim') c);
BEGIN
    IF v_cur = p_slot THEN
        RAISE EXCEPTION 'claim slot % is the current one', p_slot
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Only a sealed slot is pruned.';
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT c.queue, c.priority, count(*) FILTER (WHERE x.state = ''completed''), '
        '       count(*) FILTER (WHERE x.state = ''failed'') '
        '  FROM awa.%1$I x '
        '  JOIN awa.%2$I c ON c.job_id = x.job_id AND c.run_lease = x.run_lease '
        ' WHERE x.state IN (''completed'', ''failed'') '
        '   AND NOT EXISTS (SELECT 1 FROM awa.%3$I y '
        '                    WHERE y.job_id = x.job_id AND y.run_lease = x.run_lease) '
        ' GROUP BY c.queue, c.priority ORDER BY c.queue, c.priority',
        'lease_claim_closures_' || p_slot, 'lease_claims_' || p_slot,
        'lease_claim_closures_' || v_cur);
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

-- ---- grants/0.9/monitor.sql ----
-- The status views for monitoring (docs/monitoring.md): readable by members of
-- pg_monitor, which reads the shared-memory status, the queue figures (through
-- SECURITY DEFINER functions: never the jobs themselves), and the ring ledgers
-- (generation, slot, rotated_at: what awa.horizon_pins dates a standby's xmin by).
-- pg_monitor includes pg_read_all_stats, so the views that read pg_stat_activity
-- (horizon_pins, maintenance_status) see every session.
GRANT USAGE ON SCHEMA awa TO pg_monitor;
GRANT SELECT ON awa.maintenance_status, awa.ring_status, awa.horizon_pins,
    awa.queue_stats, awa.worker_stats, awa.worker_ring_stats TO pg_monitor;
GRANT EXECUTE ON FUNCTION awa.maintenance_worker_status(), awa.maintenance_worker_ticks(),
    awa.maintenance_worker_prune_blockers(),
    awa.leader_key_holders(name), awa.ring_status_rows(), awa.horizon_pins_at(interval),
    awa.queue_stats_rows(interval), awa.worker_stats_counters(),
    awa.worker_ring_stats_counters() TO pg_monitor;
GRANT SELECT ON awa.queue_ring_rotations, awa.lease_ring_rotations,
    awa.claim_ring_rotations TO pg_monitor;

-- ---- grants/0.9/queue_grants.sql ----
-- Privileges of the per-queue policy (after grants/grants.sql, which revokes everything
-- from PUBLIC). awa.queue_allowed answers only for the caller and is read by
-- awa.terminal_jobs, whose readers need EXECUTE on it. grant_queue, revoke_queue,
-- forget_dropped_queue_grantees, pause_queue and resume_queue, and the views
-- queue_grants and queue_settings, stay with the extension's owner until it grants them
-- (docs/operations.md "Roles and the trust model").
GRANT EXECUTE ON FUNCTION awa.queue_allowed(text, text) TO PUBLIC;

-- ---- grants/0.9/roles.sql ----
-- Group roles (0.9): four NOLOGIN roles that hold the extension's privileges, so that a
-- DBA grants a role membership instead of a list of functions (docs/operations.md,
-- "Roles and the trust model"):
--   awa_producer  enqueue, enqueue_batch, register_queue, job;
--   awa_consumer  claim, complete, complete_batch, fail, heartbeat, job;
--   awa_monitor   what pg_monitor reads in schema awa (grants/0.9/monitor.sql and
--                 api/0.9/schedules.sql): the status views and the helpers they call;
--   awa_admin     the operators' functions: the per-queue grants and pauses, cancel,
--                 queue_counts, the job listing and replay, periodic jobs, stats_reset,
--                 wake, claim_waiters, and the views queue_grants, queue_settings,
--                 terminal_jobs and schedules.
-- Each has USAGE on schema awa and no privilege on a table that holds jobs (awa_monitor
-- reads the rotation ledgers, as pg_monitor does). The per-queue grants
-- (api/0.9/queue_policy.sql) apply on top: the functions check the session's role.
--
-- Roles belong to the cluster, not to a database: the roles are created only if they
-- do not exist (another database installed the extension first, or a DBA made them),
-- and an existing role is used as it is. They are not members of the extension, so
-- DROP EXTENSION leaves them (docs/operations.md "Roles and the trust model"). The
-- extension is superuser-only (awa_bgw.control), so the installer may create roles.
-- Safe to run again: creating and granting are both idempotent.
DO $$
DECLARE
    r text;
    created boolean;
BEGIN
    FOREACH r IN ARRAY ARRAY['awa_producer', 'awa_consumer', 'awa_monitor', 'awa_admin'] LOOP
        created := false;
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', r);
                created := true;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                -- created meanwhile by an install in another database
                NULL;
            END;
        END IF;
        IF created THEN
            EXECUTE format('COMMENT ON ROLE %I IS %L', r, CASE r
                WHEN 'awa_producer' THEN 'awa_bgw: enqueue jobs and look them up'
                WHEN 'awa_consumer' THEN 'awa_bgw: claim jobs and complete, fail or '
                                         'heartbeat the attempts claimed'
                WHEN 'awa_monitor' THEN 'awa_bgw: read the status views'
                ELSE 'awa_bgw: operate queues: per-queue grants, pauses, cancel, replay, '
                     'periodic jobs' END);
        END IF;
    END LOOP;
END
$$;

GRANT USAGE ON SCHEMA awa TO awa_producer, awa_consumer, awa_monitor, awa_admin;

-- Functions by name, every overload of each (the API's argument lists change between
-- versions; an upgrade's old forms are dropped after this, 0.9's retire-old-forms.sql).
-- A name that matches no function of schema awa is an error: a renamed function must
-- be renamed here too.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT v.grantee, v.fname, p.oid::regprocedure AS fn
          FROM (VALUES
                (1, 'awa_producer', 'enqueue'), (2, 'awa_producer', 'enqueue_batch'),
                (3, 'awa_producer', 'register_queue'), (4, 'awa_producer', 'job'),
                (10, 'awa_consumer', 'claim'), (11, 'awa_consumer', 'complete'),
                (12, 'awa_consumer', 'complete_batch'), (13, 'awa_consumer', 'fail'),
                (14, 'awa_consumer', 'heartbeat'), (15, 'awa_consumer', 'job'),
                (20, 'awa_monitor', 'maintenance_worker_status'),
                (21, 'awa_monitor', 'maintenance_worker_ticks'),
                (22, 'awa_monitor', 'maintenance_worker_prune_blockers'),
                (23, 'awa_monitor', 'leader_key_holders'),
                (24, 'awa_monitor', 'ring_status_rows'),
                (25, 'awa_monitor', 'horizon_pins_at'),
                (26, 'awa_monitor', 'queue_stats_rows'),
                (27, 'awa_monitor', 'worker_stats_counters'),
                (28, 'awa_monitor', 'worker_ring_stats_counters'),
                (30, 'awa_admin', 'grant_queue'), (31, 'awa_admin', 'revoke_queue'),
                (32, 'awa_admin', 'forget_dropped_queue_grantees'),
                (33, 'awa_admin', 'queue_privilege_names'),   -- read by awa.queue_grants
                (34, 'awa_admin', 'pause_queue'), (35, 'awa_admin', 'resume_queue'),
                (36, 'awa_admin', 'register_queue'),
                (37, 'awa_admin', 'cancel'), (38, 'awa_admin', 'cancel_queue'),
                (39, 'awa_admin', 'queue_counts'),
                (40, 'awa_admin', 'job'), (41, 'awa_admin', 'jobs'),
                (42, 'awa_admin', 'retry_failed'), (43, 'awa_admin', 'retry_failed_queue'),
                (44, 'awa_admin', 'purge_failed'),
                (45, 'awa_admin', 'schedule'), (46, 'awa_admin', 'unschedule'),
                (47, 'awa_admin', 'stats_reset'), (48, 'awa_admin', 'wake'),
                (49, 'awa_admin', 'claim_waiters')) v(ord, grantee, fname)
          LEFT JOIN pg_catalog.pg_proc p
            ON p.proname = v.fname AND p.pronamespace = 'awa'::regnamespace
         ORDER BY v.ord, p.oid::regprocedure::text
    LOOP
        IF g.fn IS NULL THEN
            RAISE EXCEPTION 'awa_bgw: no function awa.% to grant to %', g.fname, g.grantee;
        END IF;
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', g.fn, g.grantee);
    END LOOP;
END
$$;

-- awa_monitor reads what pg_monitor reads (sql/17_roles.sql checks that the two hold
-- the same privileges in schema awa); pg_monitor keeps its grants.
GRANT SELECT ON awa.maintenance_status, awa.ring_status, awa.horizon_pins,
    awa.queue_stats, awa.worker_stats, awa.worker_ring_stats, awa.schedules,
    awa.queue_ring_rotations, awa.lease_ring_rotations, awa.claim_ring_rotations
    TO awa_monitor;
GRANT SELECT ON awa.queue_grants, awa.queue_settings, awa.terminal_jobs, awa.schedules
    TO awa_admin;

-- ---- api/0.9/comments.sql ----
-- What each public function and view is for, as \df+ and \dv+ show it. Public: the
-- application API, the status views, and the maintenance entry points an operator runs
-- by hand. Internals carry none: a function without a comment is not for callers.

-- the application API
COMMENT ON FUNCTION awa.enqueue(text, text, jsonb, smallint, timestamptz, int, text,
                                interval, text[]) IS
'enqueue one job (queue, kind, args, priority 0-9, run_at, max_attempts); returns its '
'job id. Transactional: a rolled-back enqueue leaves no job; takes no lock. With '
'unique_key: returns the id of the job of the same queue and key enqueued within '
'unique_for and in one of unique_states, if there is one, and writes nothing';
COMMENT ON FUNCTION awa.enqueue_batch(text, jsonb) IS
'enqueue a JSON array of jobs ({"kind", "args", "priority", "run_at", "max_attempts"}) '
'into one queue in one call; returns their job ids in input order';
COMMENT ON FUNCTION awa.claim(text, int, interval, interval) IS
'claim up to max_batch jobs of a queue (priority 0 first, FIFO within a lane) with a '
'deadline; with wait, sleep until a job of the queue commits or wait passes. Each row '
'carries the attempt''s run_lease, which every later call must pass back';
COMMENT ON FUNCTION awa.complete(bigint, bigint) IS
'complete the attempt (job_id, run_lease); false if that attempt is already closed '
'(rescued, cancelled, completed) or the token is not its token';
COMMENT ON FUNCTION awa.complete_batch(bigint[], bigint[]) IS
'complete many attempts (job_ids[i], run_leases[i]) in one call; returns the attempts '
'it completed';
COMMENT ON FUNCTION awa.fail(bigint, bigint, text, interval) IS
'fail the attempt (job_id, run_lease) with an error text: retried after retry_in or the '
'exponential backoff until max_attempts, then moved to awa.failed_jobs';
COMMENT ON FUNCTION awa.heartbeat(bigint, bigint, jsonb) IS
'the attempt (job_id, run_lease) is alive, with optional progress; an attempt silent '
'for awa_bgw.job_heartbeat_timeout (or past its deadline) is rescued';
COMMENT ON FUNCTION awa.cancel(bigint) IS
'cancel a job that is available, scheduled or running; false if it is already '
'finished or unknown';
COMMENT ON FUNCTION awa.queue_counts(text) IS
'exact counts of a queue: available, scheduled, running, completed, failed';
COMMENT ON FUNCTION awa.register_queue(text, smallint) IS
'register a (queue, priority) ahead of its first enqueue (never needed in 0.9: the '
'first enqueue registers it without waiting)';
COMMENT ON FUNCTION awa.claim_waiters() IS
'the claims waiting for work now: backend pid, database, since when, whether woken';

-- status
COMMENT ON VIEW awa.terminal_jobs IS
'finished jobs the rings still hold (completed, failed, cancelled) with their '
'attempt, error and times; pruned history survives as counts only';

-- maintenance entry points (one transaction each; the worker runs them on its cadences)
COMMENT ON FUNCTION awa.rotate(text, text) IS
'advance a ring''s cursor into its next, empty slot: rotated, skipped_idle or '
'skipped_busy with the blocker; never waits';
COMMENT ON FUNCTION awa.prune(text, text) IS
'empty a ring''s oldest sealed slot with one TRUNCATE once nothing in it is live: '
'pruned, noop, already_pruned, skipped_active or blocked, with the reason';
COMMENT ON FUNCTION awa.promote_deferred(text) IS
'move scheduled and retrying jobs whose run_at has come into the queue ring';
COMMENT ON FUNCTION awa.rescue(text) IS
'close the attempts past their deadline or silent for awa_bgw.job_heartbeat_timeout, '
'and retry or fail their jobs';
COMMENT ON FUNCTION awa.fold_terminal_rollup_deltas(text) IS
'merge the rollup deltas that prune appended into awa.queue_terminal_rollups, unless '
'the MVCC horizon is genuinely pinned (then stood_down, with the holder)';
COMMENT ON FUNCTION awa.fold_ring_rotation_ledgers(text) IS
'trim each ring''s rotation ledger to one wrap, unless the horizon is genuinely pinned';
COMMENT ON FUNCTION awa.purge_unique_keys(bigint, bigint) IS
'forget the unique keys of jobs the data plane no longer holds: one batch after a job '
'id, returning where the next starts (0: the end); stands down while the horizon is '
'pinned';
COMMENT ON FUNCTION awa.purge_failed_jobs_gated(text) IS
'delete failed jobs older than awa_bgw.failed_retention, unless the horizon is '
'genuinely pinned';
COMMENT ON FUNCTION awa.horizon_pinned(interval) IS
'whether something genuinely pins the MVCC horizon: a holder older than min_age (see '
'awa.horizon_pins)';
COMMENT ON FUNCTION awa.ring_cursor(text) IS
'the authoritative cursor (slot, generation) of a ring';
COMMENT ON FUNCTION awa.flip_ring_authority(text, boolean, double precision) IS
'make the rotation ledgers authoritative (one way); refuses while a live runtime is not '
'flip-aware, unless forced';
COMMENT ON FUNCTION awa.ring_authority_status(text, double precision) IS
'the cursor authority, when it flipped, and the live, flip-aware and blocking runtimes';
COMMENT ON FUNCTION awa.ring_authority_blockers(text, double precision) IS
'the live runtimes that keep the flip from happening, and why';

-- per-queue grants and pauses
COMMENT ON FUNCTION awa.queue_allowed(text, text) IS
'whether the current role may use a queue for a privilege (enqueue, claim, manage)';
COMMENT ON FUNCTION awa.grant_queue(text, regrole, text[]) IS
'grant a role privileges on one queue (enqueue, claim, manage); once a queue has a '
'grant, only the roles granted (and superusers) may use it';
COMMENT ON FUNCTION awa.revoke_queue(text, regrole, text[]) IS
'revoke privileges on one queue; revoking its last grant opens the queue again';
COMMENT ON FUNCTION awa.forget_dropped_queue_grantees() IS
'remove the per-queue grants of roles that no longer exist';
COMMENT ON FUNCTION awa.pause_queue(text) IS
'pause a queue: enqueues go on, claims take nothing and waiting claims wait';
COMMENT ON FUNCTION awa.resume_queue(text) IS
'resume a paused queue; its waiting claims wake at commit';
COMMENT ON VIEW awa.queue_grants IS
'the per-queue grants: queue, grantee, privileges, who granted, when';
COMMENT ON VIEW awa.queue_settings IS
'every queue known: whether it is paused (since when, by whom) and whether it is '
'restricted by per-queue grants';

-- monitoring
COMMENT ON FUNCTION awa.stats_reset() IS
'zero the cumulative maintenance counters of this database (awa.worker_stats, '
'awa.worker_ring_stats) and set their stats_reset';

-- job lookup and replay
COMMENT ON FUNCTION awa.job(bigint) IS
'one job as the data plane holds it: state (scheduled, retryable, available, running, '
'completed, failed, cancelled), attempt, body, times, last error, progress; no row when '
'nothing of it is left. A restricted queue''s jobs only for roles with a privilege on it';
COMMENT ON FUNCTION awa.jobs(text, text, text, int) IS
'jobs by queue, state and kind, newest job id first, at most lim (1 to 1000); for '
'operators';
COMMENT ON FUNCTION awa.retry_failed(bigint) IS
're-enqueue a failed job under its own id with one more attempt; NULL if it is not in '
'awa.failed_jobs';
COMMENT ON FUNCTION awa.retry_failed_queue(text, text, timestamptz) IS
're-enqueue up to 10000 failed jobs of a queue (of a kind, failed since); returns how '
'many: call again until 0';
COMMENT ON FUNCTION awa.purge_failed(text, text, timestamptz) IS
'delete up to 10000 failed jobs (of a queue, of a kind) that failed before a time; '
'returns how many';
COMMENT ON FUNCTION awa.cancel_queue(text, text) IS
'cancel up to 1000 scheduled, available and running jobs of a queue (of a kind); '
'returns how many: call again until 0';

-- periodic jobs
COMMENT ON FUNCTION awa.schedule(text, text, text, text, jsonb, text, smallint, int) IS
'create or replace a periodic job: a five-field cron expression in a time zone, and the '
'job the worker enqueues at each fire time; returns the next fire time';
COMMENT ON FUNCTION awa.unschedule(text) IS
'remove a periodic job; false if there was none of that name';
COMMENT ON FUNCTION awa.cron_next(text, timestamptz, text) IS
'the first fire time of a five-field cron expression after a time, in a time zone';
COMMENT ON FUNCTION awa.fire_due_schedules(text, timestamptz) IS
'enqueue the due runs of the periodic jobs, each exactly once (the leader runs it every '
'second): how many fired and failed';
COMMENT ON VIEW awa.schedules IS
'the periodic jobs: cron expression, time zone, the job, next and last run, last job id';
