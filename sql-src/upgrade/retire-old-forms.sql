-- The last step of 0.8 -> 0.9: the API forms 0.9 replaces. run_lease is a bigint in
-- every function that takes one (the 0.9 attempt token, §A.6): a database installed by
-- a release whose functions took run_lease int holds both forms, and a call with int
-- arguments would pick the old one. awa.claim gains wait (§A.11): 0.8's three-argument
-- claim would make every call ambiguous. Each old form gives its EXECUTE grants to the
-- new form, then goes.
DO $$
DECLARE
    r record;
    g record;
BEGIN
    FOR r IN
        SELECT o.oid AS old_fn, n.oid AS new_fn
          FROM (VALUES ('awa.complete(bigint, int)', 'awa.complete(bigint, bigint)'),
                       ('awa.complete_batch(bigint[], int[])',
                        'awa.complete_batch(bigint[], bigint[])'),
                       ('awa.fail(bigint, int, text, interval)',
                        'awa.fail(bigint, bigint, text, interval)'),
                       ('awa.heartbeat(bigint, int, jsonb)',
                        'awa.heartbeat(bigint, bigint, jsonb)'),
                       ('awa.open_receipts(bigint[], int[])',
                        'awa.open_receipts(bigint[], bigint[])'),
                       ('awa.open_receipt(bigint, int)', 'awa.open_receipt(bigint, bigint)'),
                       ('awa.open_receipts_at(bigint[], int[], int, bigint, int)',
                        'awa.open_receipts_at(bigint[], bigint[], int, bigint, int)'),
                       ('awa.attempt_lock_key(bigint, int)',
                        'awa.attempt_lock_key(bigint, bigint)'),
                       ('awa.claim(text, int, interval)',
                        'awa.claim(text, int, interval, interval)')) v(old_sig, new_sig)
          CROSS JOIN LATERAL (SELECT to_regprocedure(v.old_sig) AS oid) o
          CROSS JOIN LATERAL (SELECT v.new_sig::regprocedure AS oid) n
         WHERE o.oid IS NOT NULL
    LOOP
        FOR g IN
            SELECT a.grantee, a.is_grantable
              FROM pg_proc p, aclexplode(p.proacl) a
             WHERE p.oid = r.old_fn AND a.privilege_type = 'EXECUTE' AND a.grantee <> 0
               AND a.grantee <> p.proowner
        LOOP
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I%s', r.new_fn,
                           pg_get_userbyid(g.grantee),
                           CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        END LOOP;
        EXECUTE format('DROP FUNCTION %s', r.old_fn);
    END LOOP;
END
$$;
