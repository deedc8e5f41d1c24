-- Private locks (src/dataplane/privlock.c, docs/storage.md §A.2): transaction-scoped locks on
-- 64-bit keys that no SQL function of PostgreSQL can take, so that a role that can
-- only connect cannot hold a lane, an attempt or a ring. Every lock of the data plane
-- and of maintenance is one, except the maintenance leader's (a public advisory key,
-- shared with AWA by design). Revoked from PUBLIC with everything else in 90_grants.

CREATE OR REPLACE FUNCTION awa_internal.private_xact_lock(p_key bigint) RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_xact_lock';

CREATE OR REPLACE FUNCTION awa_internal.private_try_xact_lock(p_key bigint) RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_try_xact_lock';

-- private_try_xact_lock(p_key), retried every 200 us for up to p_timeout_ms: a bounded
-- wait that never queues in the lock manager (so no deadlock, whatever the caller
-- holds).
CREATE OR REPLACE FUNCTION awa_internal.private_try_xact_lock_for(p_key bigint, p_timeout_ms int)
RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_try_xact_lock_for';

-- Whether this transaction holds the lock (a subtransaction that took it and rolled
-- back released it).
CREATE OR REPLACE FUNCTION awa_internal.private_xact_lock_held(p_key bigint) RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_xact_lock_held';

-- Gives back one hold of the lock before the transaction ends (a claim that took
-- nothing from a lane it locked); false when not held.
CREATE OR REPLACE FUNCTION awa_internal.private_xact_unlock(p_key bigint) RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_xact_unlock';

-- The keys (hashtextextended of a name, seed 0), each built by one function, here;
-- src/dataplane/privlock.c builds
-- the claim and attempt keys from the same names, so that a claim or a complete in C
-- and a cancel or a prune in SQL take the very same lock. Every part immutable
-- (explicit casts, text || text), so that the planner inlines them: text || int is only
-- stable, and an immutable SQL function whose body is not cannot be inlined, which made
-- every call plan the body afresh (~80 us a call).

-- A lane's claim lock: claims of the lane, and whatever reads or moves its position.
CREATE OR REPLACE FUNCTION awa_internal.claim_lock_key(p_lane_id int) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.claim:' || p_lane_id::text, 0) $$;

-- An attempt's lock: whatever closes, extends or carries the attempt.
CREATE OR REPLACE FUNCTION awa_internal.attempt_lock_key(p_job_id bigint, p_run_lease bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.attempt:' || p_job_id::text || ':' || p_run_lease::text, 0) $$;

-- A ring's serializer under ledger authority (internal/serializer.sql).
CREATE OR REPLACE FUNCTION awa_internal.ring_serializer_key(p_ring text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT hashtextextended('awa.queue_storage.ring_rotation:awa:' || p_ring, 0) $$;
