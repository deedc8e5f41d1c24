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
