-- Privileges: maintenance and internals are revoked from PUBLIC; the status views and
-- the read-only helpers they call stay readable.

REVOKE ALL ON ALL TABLES IN SCHEMA awa FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA awa FROM PUBLIC;
-- (a function created in awa_internal has PUBLIC's EXECUTE too; nothing on the schema
-- itself is granted: docs/proposals/internal_schema.md)
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA awa_internal FROM PUBLIC;

GRANT EXECUTE ON FUNCTION awa_internal.semver_rank(text),
    awa_internal.ring_authority_min_flip_version()
    TO PUBLIC;
-- the closures' code mapping (tables/closure_code.sql): awa.terminal_jobs calls it, so
-- its readers need EXECUTE (a pure CASE, which reads nothing)
GRANT EXECUTE ON FUNCTION awa_internal.closure_outcome("char", text),
    awa_internal.closure_state("char", text)
    TO PUBLIC;

-- The application API (SECURITY DEFINER, pinned search_path): grant it to a role with
--   GRANT USAGE ON SCHEMA awa TO app;
--   GRANT EXECUTE ON FUNCTION awa.enqueue(text, text, jsonb, int, timestamptz, int,
--       text, interval, text[]),
--       awa.enqueue_batch(text, jsonb), awa.claim(text, int, interval, interval),
--       awa.complete(bigint, bigint), awa.complete_batch(bigint[], bigint[]),
--       awa.complete_and_claim(bigint[], bigint[], text, int, interval),
--       awa.fail(bigint, bigint, text, interval),
--       awa.fail_and_claim(bigint, bigint, text, interval, text, int, interval),
--       awa.heartbeat(bigint, bigint, jsonb),
--       awa.cancel(bigint), awa.queue_counts(text), awa.register_queue(text, int),
--       awa.job(bigint) TO app;
-- and the role can do nothing else here. The operators' functions (api/inspect.sql,
-- api/replay.sql; SECURITY DEFINER too) go to an operator role only:
--   GRANT EXECUTE ON FUNCTION awa.jobs(text, text, text, int), awa.retry_failed(bigint),
--       awa.retry_failed_queue(text, text, timestamptz),
--       awa.purge_failed(text, text, timestamptz), awa.cancel_queue(text, text) TO ops;
