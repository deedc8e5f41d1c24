-- Status views: the rings as the tables show them, and the workers as shared memory
-- shows them.

CREATE FUNCTION awa.ring_ledger_stats(p_ring text,
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

CREATE VIEW awa.ring_status AS
SELECT r.ring,
       awa.ring_authority() AS authority,
       c.slot AS current_slot,
       c.generation,
       awa.ring_slot_count(r.ring) AS slot_count,
       l.ledger_rows,
       l.last_rotated_at,
       (SELECT count(*)
          FROM generate_series(1, least(c.generation, awa.ring_slot_count(r.ring) - 1)) o
         WHERE awa.ring_slot_blocker(r.ring,
                   (((c.slot - o) % awa.ring_slot_count(r.ring) + awa.ring_slot_count(r.ring))
                    % awa.ring_slot_count(r.ring))::int) IS NOT NULL
       ) AS sealed_slots_awaiting_prune
  FROM (VALUES (1, 'queue'), (2, 'lease'), (3, 'claim')) r(ord, ring)
 CROSS JOIN LATERAL awa.ring_cursor(r.ring) c
 CROSS JOIN LATERAL awa.ring_ledger_stats(r.ring) l
 ORDER BY r.ord;

COMMENT ON VIEW awa.ring_status IS
'per ring: authority, cursor, slot count, ledger length, last rotation, and the sealed '
'slots that still hold rows';

CREATE FUNCTION awa.maintenance_worker_status(
    OUT database name, OUT pid int, OUT state text, OUT state_since timestamptz,
    OUT started_at timestamptz, OUT leader_since timestamptz,
    OUT rotations jsonb, OUT prunes jsonb,
    OUT folds_run bigint, OUT folds_stood_down bigint, OUT rows_folded bigint,
    OUT rows_trimmed bigint, OUT last_fold_at timestamptz, OUT pin_holder text,
    OUT errors bigint, OUT last_error text, OUT last_error_at timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'awa_maintenance_worker_status'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW awa.maintenance_status AS
SELECT * FROM awa.maintenance_worker_status();

COMMENT ON VIEW awa.maintenance_status IS
'one row per awa_bgw maintenance worker of this cluster: state, leadership, per-ring '
'rotate and prune outcome counters, folds run and stood down (with the pin holder seen '
'at the last stand-down), rows folded and trimmed, errors';
