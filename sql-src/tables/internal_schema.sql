-- Schema awa_internal (docs/proposals/internal_schema.md): the functions that are not
-- the API, out of the application's and the operators' way. It belongs to the
-- extension (CREATE SCHEMA in an extension script makes it a member: DROP EXTENSION
-- drops it) and to the extension's owner, and nothing on it is granted to anyone, so
-- only the owner (and a superuser) can name what is in it: the API's SECURITY DEFINER
-- functions and the worker. A view holds its functions by OID, so a reader of a status
-- view needs EXECUTE on the helpers it calls, and no USAGE on this schema.
--
-- An existing awa_internal is refused, whoever owns it: what a role put there before
-- the extension would sit among its internals. The owner is the extension's (an update
-- run by another superuser makes the schema a fresh install makes).
DO $guard$
DECLARE
    v_owner name;
BEGIN
    SELECT pg_catalog.pg_get_userbyid(n.nspowner) INTO v_owner
      FROM pg_catalog.pg_namespace n
     WHERE n.nspname = 'awa_internal';
    IF FOUND THEN
        RAISE EXCEPTION 'schema "awa_internal" already exists (owned by role "%")', v_owner
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = 'awa_bgw creates schema awa_internal for its internal functions.',
                  HINT = 'Drop or rename that schema (after checking what is in it), then '
                         'create or update the extension again.';
    END IF;
    EXECUTE pg_catalog.format('CREATE SCHEMA awa_internal AUTHORIZATION %I',
                              (SELECT pg_catalog.pg_get_userbyid(e.extowner)
                                 FROM pg_catalog.pg_extension e
                                WHERE e.extname = 'awa_bgw'));
END
$guard$;

COMMENT ON SCHEMA awa_internal IS
'awa_bgw: the internal functions, called by the API and the status views of schema awa; '
'not for applications (docs/reference.md)';
