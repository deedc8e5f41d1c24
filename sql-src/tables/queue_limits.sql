-- Running and rate limits per queue (0.10, issue 34; docs/usage.md "Running limits"): a
-- small plain table, written only by awa.set_queue_limits and awa.clear_queue_limits,
-- never on the hot path. Claims read it through the per-backend policy cache
-- (src/dataplane/queuepolicy.c), which every change invalidates at commit; the running
-- counts and the token buckets themselves live in shared memory
-- (src/dataplane/limits.c). A row has a running limit, a rate, or both; a rate has its
-- interval and its burst.
CREATE TABLE awa_internal.queue_limits (
    queue text PRIMARY KEY CHECK (length(queue) BETWEEN 1 AND 200),
    max_running int CHECK (max_running BETWEEN 1 AND 1000000),
    rate int CHECK (rate BETWEEN 1 AND 1000000),
    rate_per interval CHECK (rate_per BETWEEN interval '1 millisecond' AND interval '1 day'),
    burst int CHECK (burst BETWEEN 1 AND 1000000),
    set_by oid NOT NULL,
    set_at timestamptz NOT NULL DEFAULT now(),
    CHECK (max_running IS NOT NULL OR rate IS NOT NULL),
    CHECK ((rate IS NULL) = (rate_per IS NULL) AND (rate IS NULL) = (burst IS NULL))
);

-- Limits name queues only, and survive pg_dump.
SELECT pg_catalog.pg_extension_config_dump('awa_internal.queue_limits', '');
