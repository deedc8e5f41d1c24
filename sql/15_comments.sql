-- The public surface says what it is for: every function of the application API, every
-- status view and every maintenance entry point has a comment (\df+ and \dv+ show it);
-- internals have none. A function of schema awa has a comment, one of awa_internal has
-- none (docs/proposals/internal_schema.md). Runs on its own.
\i sql/fresh.inc

-- the commented functions and views: the public surface, as a list
SELECT p.oid::regprocedure AS function
  FROM pg_proc p
 WHERE p.pronamespace = 'awa'::regnamespace
   AND obj_description(p.oid, 'pg_proc') IS NOT NULL
 ORDER BY p.oid::regprocedure::text COLLATE "C";
SELECT c.oid::regclass AS view
  FROM pg_class c
 WHERE c.relnamespace = 'awa'::regnamespace AND c.relkind = 'v'
   AND obj_description(c.oid, 'pg_class') IS NOT NULL
 ORDER BY c.oid::regclass::text COLLATE "C";

-- no view is left without one
SELECT c.oid::regclass AS view_without_comment
  FROM pg_class c
 WHERE c.relnamespace = 'awa'::regnamespace AND c.relkind = 'v'
   AND obj_description(c.oid, 'pg_class') IS NULL;

-- every function of awa has one, none of awa_internal
SELECT p.oid::regprocedure AS awa_function_without_comment
  FROM pg_proc p
 WHERE p.pronamespace = 'awa'::regnamespace
   AND obj_description(p.oid, 'pg_proc') IS NULL
 ORDER BY p.oid::regprocedure::text COLLATE "C";
SELECT p.oid::regprocedure AS awa_internal_function_with_comment
  FROM pg_proc p
 WHERE p.pronamespace = 'awa_internal'::regnamespace
   AND obj_description(p.oid, 'pg_proc') IS NOT NULL;
