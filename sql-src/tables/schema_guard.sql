-- A fresh install refuses a schema awa that already exists and is not the installing
-- superuser's alone: CREATE EXTENSION takes an existing schema of the control file's
-- name as it finds it, and the owner of a schema (or a role that may create in it) can
-- drop, rename or shadow what the extension puts there.
DO $guard$
DECLARE
    v_owner name;
    v_creators text;
BEGIN
    SELECT pg_catalog.pg_get_userbyid(n.nspowner),
           (SELECT pg_catalog.string_agg(DISTINCT CASE a.grantee WHEN 0 THEN 'PUBLIC'
                       ELSE pg_catalog.pg_get_userbyid(a.grantee)::text END, ', ')
              FROM pg_catalog.aclexplode(n.nspacl) a
             WHERE a.privilege_type = 'CREATE' AND a.grantee <> n.nspowner)
      INTO v_owner, v_creators
      FROM pg_catalog.pg_namespace n
     WHERE n.nspname = 'awa';
    IF v_owner IS NOT NULL AND v_owner <> current_user THEN
        RAISE EXCEPTION 'schema "awa" already exists and is owned by role "%"', v_owner
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'awa_bgw installs into schema awa, which must belong to the '
                           'superuser who creates the extension.',
                  HINT = 'Drop or rename that schema (after checking what is in it), or '
                         'make the installing superuser its owner, then run CREATE '
                         'EXTENSION awa_bgw again.';
    END IF;
    IF v_creators IS NOT NULL THEN
        RAISE EXCEPTION 'schema "awa" already exists and lets other roles create objects in it: %',
                        v_creators
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Revoke CREATE ON SCHEMA awa from them (after checking what '
                         'they created there), then run CREATE EXTENSION awa_bgw again.';
    END IF;
END
$guard$;
