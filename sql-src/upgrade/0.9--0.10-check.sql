-- The last step of 0.9 -> 0.10: no function of awa shares a name with one of
-- awa_internal (a piece that created a moved function in awa again would leave two,
-- and calls by the old name would go on reaching the stale one).
DO $$
DECLARE
    v_twice text;
BEGIN
    SELECT pg_catalog.string_agg(DISTINCT a.proname, ', ') INTO v_twice
      FROM pg_catalog.pg_proc a
      JOIN pg_catalog.pg_proc i ON i.proname = a.proname
     WHERE a.pronamespace = 'awa'::regnamespace
       AND i.pronamespace = 'awa_internal'::regnamespace;
    IF v_twice IS NOT NULL THEN
        RAISE EXCEPTION 'awa_bgw: functions in both awa and awa_internal: %', v_twice;
    END IF;
END
$$;
