-- Prune truncates only the children of the slot that have storage: a child left empty
-- since its last TRUNCATE keeps its relfilenode (no new pg_class rows), a child that
-- held rows gets a new one. Starts from a fresh install.
\i sql/fresh.inc

CREATE TEMP TABLE fn (child regclass, filenode oid);
CREATE FUNCTION pg_temp.note(p_children regclass[]) RETURNS void LANGUAGE sql AS $$
    DELETE FROM fn;
    INSERT INTO fn SELECT c, pg_relation_filenode(c) FROM unnest(p_children) c;
$$;
CREATE FUNCTION pg_temp.kept() RETURNS TABLE (child regclass, has_storage boolean,
                                               same_filenode boolean, rows bigint)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM fn ORDER BY fn.child::text LOOP
        child := r.child;
        has_storage := pg_relation_size(r.child) > 0;
        same_filenode := pg_relation_filenode(r.child) = r.filenode;
        EXECUTE format('SELECT count(*) FROM %s', r.child) INTO rows;
        RETURN NEXT;
    END LOOP;
END $$;

-- queue ring: one job in slot 0, claimed after the ring turned; slot 0 has a ready
-- entry and no done entry (the claim's receipt is in the claim ring)
SELECT awa.enqueue('pe', 'k') AS job \gset
SELECT outcome, slot FROM awa.rotate('awa', 'queue');
SELECT count(*) AS claimed FROM awa.claim('pe', 1);
SELECT max(run_lease) AS lease FROM awa.lease_claims WHERE job_id = :job \gset
SELECT pg_temp.note('{awa.ready_entries_0, awa.done_entries_0}');
SELECT pg_relation_size('awa.done_entries_0') AS done_bytes_before;
SELECT outcome, reason, slot FROM awa.prune('awa', 'queue');
SELECT * FROM pg_temp.kept();

-- claim ring: the open receipt in slot 0 (no closure yet) is carried forward; the
-- receipts child is truncated, the empty closures child is left as it is
SELECT outcome, slot FROM awa.rotate('awa', 'claim');
SELECT pg_temp.note('{awa.lease_claims_0, awa.lease_claim_closures_0}');
SELECT outcome, reason, slot FROM awa.prune('awa', 'claim');
SELECT * FROM pg_temp.kept();
SELECT claim_slot, count(*) AS receipts FROM awa.lease_claims GROUP BY claim_slot;
-- the carried receipt still completes the job
SELECT awa.complete(:job, :lease) AS completed;
SELECT completed, running FROM awa.queue_counts('pe');
