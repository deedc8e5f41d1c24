-- The last step of 0.9 -> 0.10: the API forms 0.10 replaces. A priority is an int in
-- every function that takes one, so that priority => 5 resolves as a caller writes it
-- (0.9 took a smallint, and an integer constant does not cast to it implicitly). Beside
-- the new forms the old ones would make every call with a priority ambiguous, so each
-- old form hands its EXECUTE grants (a DBA's, and a tenant's) to its new form and is
-- dropped. The group roles already hold the new forms (grants/roles.sql). check_job's
-- old form stays in awa (upgrade/0.9--0.10-internal.sql does not move it), its new
-- form is in awa_internal.
DO $$
DECLARE
    f record;
    g record;
BEGIN
    FOR f IN
        SELECT o.oid AS old_fn, v.new_sig::regprocedure AS new_fn
          FROM (VALUES
                ('awa.enqueue(text, text, jsonb, smallint, timestamptz, int, text, interval, text[])',
                 'awa.enqueue(text, text, jsonb, int, timestamptz, int, text, interval, text[])'),
                ('awa.check_job(text, text, jsonb, smallint, timestamptz, int)',
                 'awa_internal.check_job(text, text, jsonb, int, timestamptz, int)'),
                ('awa.register_queue(text, smallint)', 'awa.register_queue(text, int)'),
                ('awa.schedule(text, text, text, text, jsonb, text, smallint, int)',
                 'awa.schedule(text, text, text, text, jsonb, text, int, int)')) v(old_sig, new_sig)
         CROSS JOIN LATERAL (SELECT to_regprocedure(v.old_sig) AS oid) o
         WHERE o.oid IS NOT NULL
    LOOP
        FOR g IN
            SELECT a.grantee, a.is_grantable
              FROM pg_proc p, aclexplode(p.proacl) a
             WHERE p.oid = f.old_fn AND a.privilege_type = 'EXECUTE'
               AND a.grantee <> 0 AND a.grantee <> p.proowner
        LOOP
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I%s', f.new_fn,
                           pg_get_userbyid(g.grantee),
                           CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        END LOOP;
        EXECUTE format('DROP FUNCTION %s', f.old_fn);
    END LOOP;
END
$$;
