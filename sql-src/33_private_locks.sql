-- Private locks (src/privlock.c, docs/storage.md §A.2): transaction-scoped locks on
-- 64-bit keys that no SQL function of PostgreSQL can take, so that a role that can
-- only connect cannot hold a lane, an attempt or a ring. Every lock of the data plane
-- and of maintenance is one, except the maintenance leader's (a public advisory key,
-- shared with AWA by design). Revoked from PUBLIC with everything else in 90_grants.

CREATE OR REPLACE FUNCTION awa.private_xact_lock(p_key bigint) RETURNS void
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_xact_lock';

CREATE OR REPLACE FUNCTION awa.private_try_xact_lock(p_key bigint) RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_try_xact_lock';

-- private_try_xact_lock(p_key), retried every 200 us for up to p_timeout_ms: a bounded
-- wait that never queues in the lock manager (so no deadlock, whatever the caller
-- holds).
CREATE OR REPLACE FUNCTION awa.private_try_xact_lock_for(p_key bigint, p_timeout_ms int)
RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_try_xact_lock_for';

-- Whether this transaction holds the lock (a subtransaction that took it and rolled
-- back released it).
CREATE OR REPLACE FUNCTION awa.private_xact_lock_held(p_key bigint) RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_xact_lock_held';

-- Gives back one hold of the lock before the transaction ends (a claim that took
-- nothing from a lane it locked); false when not held.
CREATE OR REPLACE FUNCTION awa.private_xact_unlock(p_key bigint) RETURNS boolean
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'awa_private_xact_unlock';
