-- The schema of job lookup (api/inspect.sql), run once by a fresh 0.9 install and by
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
