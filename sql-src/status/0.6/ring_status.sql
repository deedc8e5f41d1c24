-- 0.6: the rings as the tables show them (the cursor from the columns; no ledger).

CREATE OR REPLACE VIEW awa.ring_status AS
SELECT r.ring,
       c.slot AS current_slot,
       c.generation,
       awa.ring_slot_count(r.ring) AS slot_count,
       awa.ring_sealed_slots_holding_rows(r.ring, c.slot, c.generation)
           AS sealed_slots_awaiting_prune
  FROM (VALUES (1, 'queue'), (2, 'lease'), (3, 'claim')) r(ord, ring)
 CROSS JOIN LATERAL awa.ring_cursor_columns(r.ring) c
 ORDER BY r.ord;
