-- The tests' helper (used by every later file): the SQLSTATE and message of a
-- statement, or 'no error'. sql/fresh.inc, which every later file includes first so
-- that it also runs alone, defines the same.
CREATE FUNCTION public.sqlstate_of(p_sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE p_sql;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- The extension installs into schema awa (the control file fixes it; not relocatable).
CREATE EXTENSION awa_bgw;
SELECT extname, extversion, nspname
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE extname = 'awa_bgw';
-- creating it twice is refused
CREATE EXTENSION awa_bgw;
