-- Jobs outside the rings: ids, lanes, deferred and failed jobs; the API's row types.

CREATE SEQUENCE awa.job_id_seq;
CREATE SEQUENCE awa.lane_seq;          -- lane order: the claim order within a window (A.3)
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
