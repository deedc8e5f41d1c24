-- 0.9 -> 0.10: awa_internal.window_claimables returns the ready entries' columns, and
-- ready_generation is no longer one of them (tables/entry_fields.sql). CREATE OR
-- REPLACE cannot change a function's result type, so the 0.9 form (moved to
-- awa_internal by upgrade/0.9--0.10-internal.sql) goes before api/claim.sql creates the
-- new one; nothing depends on it (the claim calls its C directly, src/dataplane/claim.c),
-- and grants/grants.sql, run later, gives the new one its privileges.
DROP FUNCTION awa_internal.window_claimables(integer, integer, integer, bigint, integer,
                                             integer);
