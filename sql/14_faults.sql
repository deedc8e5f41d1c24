-- Faults and hostile set-ups around the extension itself: awa.try_relation_empty probes
-- only tables of schema awa without row-level security (its dirty read sees every row).

\set SHOW_CONTEXT never
-- 1. awa.try_relation_empty: a ring child is probed; anything else is refused.
SELECT awa.try_relation_empty('awa.ready_entries_0') IS NOT NULL AS ring_child_probed;
CREATE TABLE public.awa_test_elsewhere (x int);
INSERT INTO public.awa_test_elsewhere VALUES (1);
SELECT awa.try_relation_empty('public.awa_test_elsewhere');
\echo :LAST_ERROR_SQLSTATE
CREATE TEMP TABLE awa_test_temp (x int);
SELECT awa.try_relation_empty('awa_test_temp');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE awa.awa_test_rls (x int);
ALTER TABLE awa.awa_test_rls ENABLE ROW LEVEL SECURITY;
SELECT awa.try_relation_empty('awa.awa_test_rls');
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE awa.awa_test_rls DISABLE ROW LEVEL SECURITY;
SELECT awa.try_relation_empty('awa.awa_test_rls') AS probed_without_rls;
DROP TABLE awa.awa_test_rls, public.awa_test_elsewhere, awa_test_temp;
