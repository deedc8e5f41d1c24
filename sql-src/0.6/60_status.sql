-- 0.6: the rings as the tables show them (the cursor from the columns; no ledger).

CREATE OR REPLACE VIEW awa.ring_status AS
SELECT r.ring,
       c.slot AS current_slot,
       c.generation,
       awa.ring_slot_count(r.ring) AS slot_count,
       (SELECT count(*)
          FROM generate_series(1, least(c.generation, awa.ring_slot_count(r.ring) - 1)) o
         WHERE awa.ring_slot_blocker(r.ring,
                   (((c.slot - o) % awa.ring_slot_count(r.ring) + awa.ring_slot_count(r.ring))
                    % awa.ring_slot_count(r.ring))::int) IS NOT NULL
       ) AS sealed_slots_awaiting_prune
  FROM (VALUES (1, 'queue'), (2, 'lease'), (3, 'claim')) r(ord, ring)
 CROSS JOIN LATERAL awa.ring_cursor_columns(r.ring) c
 ORDER BY r.ord;
