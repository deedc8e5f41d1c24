-- Faults and hostile set-ups around the extension itself: awa.try_relation_empty probes
-- only tables of schema awa without row-level security (its dirty read sees every row);
-- CREATE EXTENSION refuses a schema awa that another role owns or may create in, and
-- leaves nothing behind.
\i sql/fresh.inc

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

-- 2. CREATE EXTENSION into a schema awa made by another role, in a database of its own.
SELECT current_database() AS regress_db \gset
CREATE DATABASE awa_test_squat;
CREATE ROLE awa_test_squatter;
GRANT CREATE ON DATABASE awa_test_squat TO awa_test_squatter;
\c awa_test_squat
SET ROLE awa_test_squatter;
CREATE SCHEMA awa;
CREATE FUNCTION awa.planted() RETURNS int LANGUAGE sql AS 'SELECT 1';
RESET ROLE;
CREATE EXTENSION awa_bgw;
\echo :LAST_ERROR_SQLSTATE
CREATE EXTENSION awa_bgw VERSION '0.8';
\echo :LAST_ERROR_SQLSTATE
-- nothing was left behind: no extension, the schema as it was
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'awa_bgw';
SELECT pg_get_userbyid(nspowner) AS owner,
       (SELECT count(*) FROM pg_class WHERE relnamespace = n.oid) AS relations,
       (SELECT string_agg(proname, ', ') FROM pg_proc WHERE pronamespace = n.oid) AS functions
  FROM pg_namespace n WHERE nspname = 'awa';
-- the installer's own schema, but another role may create in it: refused too
DROP FUNCTION awa.planted();
ALTER SCHEMA awa OWNER TO CURRENT_USER;
GRANT CREATE ON SCHEMA awa TO awa_test_squatter;
CREATE EXTENSION awa_bgw;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS extensions FROM pg_extension WHERE extname = 'awa_bgw';
-- the installer's own schema, nobody else may create in it: installed there
REVOKE CREATE ON SCHEMA awa FROM awa_test_squatter;
CREATE EXTENSION awa_bgw;
SELECT extversion FROM pg_extension WHERE extname = 'awa_bgw';
\c :regress_db
DROP DATABASE awa_test_squat;
DROP ROLE awa_test_squatter;
