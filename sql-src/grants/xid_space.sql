-- 0.10: the state of the xid space is a word any caller of the API may read, and whether
-- the extension's tables are subscribed is in pg_subscription_rel for all to see
-- (src/dataplane/xidspace.c asks both before a reader reads a window, in the caller's identity).
GRANT EXECUTE ON FUNCTION awa.xid_space_state(), awa_internal.refuse_subscribed_tables() TO PUBLIC;
