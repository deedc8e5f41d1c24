-- Terminal history counts folded out of pruned queue slots.
CREATE TABLE awa.queue_terminal_rollups (
    queue text NOT NULL,
    priority smallint NOT NULL,
    pruned_completed_count bigint NOT NULL DEFAULT 0,
    pruned_failed_count bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, priority)
);

SELECT pg_catalog.pg_extension_config_dump('awa.queue_terminal_rollups', '');
