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

-- claim ring (claim_slot): the receipt of one attempt, carrying the job's body (0.10: but
-- its args, tables/held_args.sql), and
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

-- One child per slot of each ring family, as many as the ring's slot_count (its
-- ring_state row, tables/seed.sql). The families of each ring are listed by
-- awa_internal.ring_families (tables/held_args.sql, which adds the queue ring's third).
DO $$
DECLARE
    r record;
    s int;
BEGIN
    FOR r IN SELECT ARRAY['ready_entries', 'done_entries'] AS families, q.slot_count AS n
               FROM awa.queue_ring_state q
             UNION ALL SELECT ARRAY['leases'], l.slot_count FROM awa.lease_ring_state l
             UNION ALL SELECT ARRAY['lease_claims', 'lease_claim_closures'], c.slot_count
               FROM awa.claim_ring_state c LOOP
        FOR s IN 0 .. r.n - 1 LOOP
            EXECUTE (SELECT string_agg(format(
                'CREATE TABLE awa.%I PARTITION OF awa.%I FOR VALUES IN (%s); '
                'SELECT pg_catalog.pg_extension_config_dump(%L, %L)',
                f || '_' || s, f, s, format('awa.%I', f || '_' || s), ''), '; ')
                FROM unnest(r.families) f);
        END LOOP;
    END LOOP;
END
$$;
