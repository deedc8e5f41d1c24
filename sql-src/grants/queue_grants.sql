-- Privileges of the per-queue policy (after grants/grants.sql, which revokes everything
-- from PUBLIC). awa.queue_allowed answers only for the caller and is read by
-- awa.terminal_jobs, whose readers need EXECUTE on it. grant_queue, revoke_queue,
-- forget_dropped_queue_grantees, pause_queue and resume_queue, and the views
-- queue_grants and queue_settings, stay with the extension's owner until it grants them
-- (docs/operations.md "Roles and the trust model").
GRANT EXECUTE ON FUNCTION awa.queue_allowed(text, text) TO PUBLIC;
