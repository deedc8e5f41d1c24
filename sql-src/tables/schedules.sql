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
