-- 0.10: a receipt no longer carries its job's args (docs/proposals/receipt_without_body.md,
-- docs/storage.md A.20). Run once, after tables/entry_fields.sql, by a fresh 0.10
-- install and by the 0.9 -> 0.10 upgrade alike (behind upgrade/lock-tables.sql), so that
-- both end with the same catalog.
--
-- The args are the payload: at any size but the smallest they are most of a receipt,
-- and a job wrote them twice, in its ready entry and in its receipt. A 0.10 claim writes
-- the receipt's args NULL (src/dataplane/claim.c) into a catalog where the column is
-- nullable; a receipt written before keeps its args, and every reader takes them from
-- the receipt when it has them. Otherwise the queue ring holds them while the attempt is
-- open (invariant B, A.20): in the ready entry until its slot is pruned, and from that
-- prune on in a held_args row of a later queue slot, which every prune of the slot that
-- holds it copies again while the attempt stays open. held_args is a family of the queue
-- ring (awa_internal.ring_families): truncated with its slot, held by the readers that
-- hold the rings, and never claimable. Only queue prune writes it
-- (maintenance/rotate_prune.sql, ring_slot_carry_forward); the readers find a body by
-- (job_id, attempt) through awa_internal.attempt_args (internal/attempts.sql).
ALTER TABLE awa.lease_claims ALTER COLUMN args DROP NOT NULL;

CREATE TABLE awa.held_args (
    ready_slot int NOT NULL,
    job_id bigint NOT NULL,
    attempt int NOT NULL,
    args jsonb NOT NULL
) PARTITION BY LIST (ready_slot);
CREATE INDEX ON awa.held_args (job_id, attempt);

-- Which families make up each ring, in a fixed order (busy checks report the first
-- non-empty one). Defined here, with the last family added (tables/data_plane.sql made
-- the first ones' children, and 0.9 defined this with them).
CREATE OR REPLACE FUNCTION awa_internal.ring_families(p_ring text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    CASE p_ring
        WHEN 'queue' THEN RETURN ARRAY['ready_entries', 'done_entries', 'held_args'];
        WHEN 'lease' THEN RETURN ARRAY['leases'];
        WHEN 'claim' THEN RETURN ARRAY['lease_claims', 'lease_claim_closures'];
        ELSE
            RAISE EXCEPTION 'unknown ring "%"', p_ring
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'The rings are queue, lease and claim.';
    END CASE;
END
$$;

-- One child per queue slot, kept by pg_dump as the other families' are.
DO $$
DECLARE
    s int;
BEGIN
    FOR s IN 0 .. (SELECT q.slot_count FROM awa.queue_ring_state q) - 1 LOOP
        EXECUTE format('CREATE TABLE awa.%I PARTITION OF awa.held_args FOR VALUES IN (%s)',
                       'held_args_' || s, s);
        PERFORM pg_catalog.pg_extension_config_dump(format('awa.%I', 'held_args_' || s), '');
    END LOOP;
END
$$;
