-- Status views: the rings as the tables show them, and the workers as shared memory
-- shows them.

CREATE OR REPLACE FUNCTION awa.ring_ledger_stats(p_ring text,
    OUT ledger_rows bigint, OUT last_rotated_at timestamptz)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM awa.ring_families(p_ring);   -- validates the ring name
    EXECUTE format('SELECT count(*), max(rotated_at) FROM awa.%I', p_ring || '_ring_rotations')
       INTO ledger_rows, last_rotated_at;
END
$$;

CREATE OR REPLACE VIEW awa.ring_status AS
SELECT r.ring,
       awa.ring_authority() AS authority,
       c.slot AS current_slot,
       c.generation,
       awa.ring_slot_count(r.ring) AS slot_count,
       l.ledger_rows,
       l.last_rotated_at,
       awa.ring_sealed_slots_holding_rows(r.ring, c.slot, c.generation)
           AS sealed_slots_awaiting_prune
  FROM (VALUES (1, 'queue'), (2, 'lease'), (3, 'claim')) r(ord, ring)
 CROSS JOIN LATERAL awa.ring_cursor(r.ring) c
 CROSS JOIN LATERAL awa.ring_ledger_stats(r.ring) l
 ORDER BY r.ord;

COMMENT ON VIEW awa.ring_status IS
'per ring: authority, cursor, slot count, ledger length, last rotation, and the sealed '
'slots that still hold rows';
