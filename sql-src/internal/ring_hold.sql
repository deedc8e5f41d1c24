-- Holding prune off for a reader (0.9). A prune's TRUNCATE is not MVCC-safe: a snapshot
-- taken before it commits sees the truncated child empty and not what it carried
-- forward. So every reader that must see the rings whole (job lookups, counts, stats,
-- cancels, unique keys) first takes ACCESS SHARE on the ring families, held to its
-- commit, and reads them in a later statement, whose snapshot is taken after the locks:
-- a prune in progress is waited for, the next one waits (and reports blocked) until
-- the reader ends. The families are the queue and claim rings' (awa_internal.ring_families, the
-- one list of them), and the lease ring's when p_leases (awa.job reads heartbeats).
CREATE OR REPLACE FUNCTION awa_internal.hold_ring_families(p_leases boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    EXECUTE (SELECT 'LOCK TABLE ' || string_agg(format('awa.%I', f), ', ' ORDER BY o)
                    || ' IN ACCESS SHARE MODE'
               FROM unnest(awa_internal.ring_families('queue') || awa_internal.ring_families('claim')
                           || CASE WHEN p_leases THEN awa_internal.ring_families('lease')
                                   ELSE '{}'::text[] END) WITH ORDINALITY AS t(f, o));
END
$$;
