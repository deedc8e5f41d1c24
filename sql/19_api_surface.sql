-- The surface of schema awa: every function (by signature) and view it holds, and two
-- lints over the bodies of schemas awa and awa_internal (docs/proposals/internal_schema.md:
-- the internals move to awa_internal, which nobody but the extension's owner may use).
-- A function added to or removed from awa changes the list below, and says so in review.
-- Schema awa holds the API (54 functions) and nothing else: the library finds the
-- internals it calls in awa_internal (src/rel/relcache.c, awa_internal_namespace).
-- Runs on its own.
\i sql/fresh.inc

-- the functions of schema awa
SELECT p.oid::regprocedure AS function
  FROM pg_proc p
 WHERE p.pronamespace = 'awa'::regnamespace
 ORDER BY p.oid::regprocedure::text COLLATE "C";
-- the views of schema awa
SELECT c.oid::regclass AS view
  FROM pg_class c
 WHERE c.relnamespace = 'awa'::regnamespace AND c.relkind = 'v'
 ORDER BY c.oid::regclass::text COLLATE "C";
SELECT (SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'awa'::regnamespace)
         AS functions,
       (SELECT count(*) FROM pg_proc p
         WHERE p.pronamespace = 'awa_internal'::regnamespace) AS internal_functions,
       (SELECT count(*) FROM pg_class c
         WHERE c.relnamespace = 'awa'::regnamespace AND c.relkind = 'v') AS views;

-- Lint A: no body in schema p_from or p_to names a function of p_to as p_from.<name>.
-- Bodies are text (prosrc), and extension scripts run with check_function_bodies off:
-- a call left under the old schema would fail only when it runs.
CREATE FUNCTION pg_temp.lint_old_names(p_from name, p_to name)
RETURNS TABLE (body regprocedure, names_old text) LANGUAGE sql STABLE AS $$
    SELECT p.oid::regprocedure, p_from || '.' || f.proname
      FROM pg_proc p
      JOIN pg_proc f ON f.pronamespace = to_regnamespace(p_to)
     WHERE p.pronamespace IN (to_regnamespace(p_from), to_regnamespace(p_to))
       AND p.prosrc ~ ('\m' || p_from || '\.' || f.proname || '\M')
     ORDER BY p.oid::regprocedure::text COLLATE "C", 2
$$;
-- Lint B: no function of the schemas p_in that runs as its invoker (not SECURITY
-- DEFINER) and that a role other than its owner may execute (PUBLIC included) has a body
-- naming schema p_hidden: it is parsed as the invoker, who has no USAGE on it (42501).
CREATE FUNCTION pg_temp.lint_invoker_bodies(p_in name[], p_hidden name)
RETURNS SETOF regprocedure LANGUAGE sql STABLE AS $$
    SELECT p.oid::regprocedure
      FROM pg_proc p
     WHERE p.pronamespace IN (SELECT to_regnamespace(n) FROM unnest(p_in) n)
       AND NOT p.prosecdef
       AND position(p_hidden || '.' IN p.prosrc) > 0
       AND EXISTS (SELECT 1
                     FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                    WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner)
     ORDER BY p.oid::regprocedure::text COLLATE "C"
$$;

-- both hold (no rows)
SELECT * FROM pg_temp.lint_old_names('awa', 'awa_internal');
SELECT * FROM pg_temp.lint_invoker_bodies(ARRAY['awa', 'awa_internal']::name[],
                                          'awa_internal') AS invoker_body;

-- the lints see what they look for, in a scratch pair of schemas standing in for the
-- two: a body naming lint_api.<f> for an f of lint_internal, and an invoker's body
-- naming lint_internal that PUBLIC may execute
CREATE SCHEMA lint_api;
CREATE SCHEMA lint_internal;
CREATE FUNCTION lint_internal.helper() RETURNS int LANGUAGE sql AS 'SELECT 1';
CREATE FUNCTION lint_internal.helper_two() RETURNS int LANGUAGE sql AS 'SELECT 2';
-- (unchecked, as in an extension script: lint_api.helper does not exist)
SET check_function_bodies = off;
CREATE FUNCTION lint_api.caller() RETURNS int LANGUAGE sql
    AS 'SELECT lint_api.helper() + lint_api.helper_two() + lint_api.helper_three()';
RESET check_function_bodies;
CREATE FUNCTION lint_api.invoker() RETURNS int LANGUAGE sql
    AS 'SELECT lint_internal.helper()';
CREATE FUNCTION lint_api.definer() RETURNS int LANGUAGE sql SECURITY DEFINER
    AS 'SELECT lint_internal.helper()';
SELECT * FROM pg_temp.lint_old_names('lint_api', 'lint_internal');
SELECT * FROM pg_temp.lint_invoker_bodies(ARRAY['lint_api', 'lint_internal']::name[],
                                          'lint_internal') AS invoker_body;
-- owner-only, it is no longer reported
REVOKE EXECUTE ON FUNCTION lint_api.invoker() FROM PUBLIC;
SELECT * FROM pg_temp.lint_invoker_bodies(ARRAY['lint_api', 'lint_internal']::name[],
                                          'lint_internal') AS invoker_body;
SET client_min_messages = warning;
DROP SCHEMA lint_api, lint_internal CASCADE;
RESET client_min_messages;

-- Lint C: a SECURITY DEFINER function pins its search_path, but for the API's entry
-- points in C (docs/storage.md §5, "Privileges and search_path"): they resolve no name
-- through the caller's path, and the SQL they reach runs under a path the library pins
-- (src/rel/relcache.c, awa_path_pin; sql/10_hostile.sql, 7). A function that joins
-- this list says so in review.
SELECT p.oid::regprocedure AS definer_without_set, l.lanname
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.pronamespace IN ('awa'::regnamespace, 'awa_internal'::regnamespace)
   AND p.prosecdef
   AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%')
 ORDER BY p.oid::regprocedure::text COLLATE "C";
-- the SQL and PL/pgSQL functions those entry points call by OID without a pin of the
-- library's (src/dataplane: unique.c, limits.c, xidspace.c) pin their own
SELECT p.proname, p.proconfig
  FROM pg_proc p
 WHERE p.pronamespace = 'awa_internal'::regnamespace
   AND p.proname IN ('unique_job', 'queue_open_attempts', 'refuse_subscribed_tables')
 ORDER BY p.proname COLLATE "C";
