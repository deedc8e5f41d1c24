/*-------------------------------------------------------------------------
 *
 * privlock.c
 *	  Private locks: transaction-scoped heavyweight locks that no SQL function
 *	  of PostgreSQL can take (docs/storage.md §A.2).
 *
 * awa_bgw serializes lanes, attempts and ring rotation on 64-bit keys
 * (hashtextextended of a name, as before). Taken as advisory locks, any role
 * that can connect could compute a key and hold it, stalling a ring, a lane
 * or the worker. These locks live on LOCKTAG_USERLOCK (database, key high,
 * key low, AWA_PRIVATE_LOCK_FIELD4), a tag space the advisory functions never
 * use (they take LOCKTAG_ADVISORY with field4 1 or 2), in the user lock method:
 * released at transaction end exactly as pg_advisory_xact_lock is, visible to
 * the deadlock detector, shown in pg_locks as locktype 'userlock'. Only a role
 * with EXECUTE on these functions (revoked from PUBLIC) can take one.
 *
 *	awa.private_xact_lock(key)				waits (the hot paths' attempt locks)
 *	awa.private_try_xact_lock(key)			never waits
 *	awa.private_try_xact_lock_for(key, ms)	polls for up to ms, never queues
 *	awa.private_xact_lock_held(key)			whether this transaction holds it
 *	awa.private_xact_unlock(key)			gives back one hold of it early (a claim
 *											that took nothing from a lane)
 *
 * The keys C takes are built here only (awa_claim_lock_key,
 * awa_attempt_lock_key), from the same names as their SQL builders in
 * sql-src/internal/private_locks.sql (awa.claim_lock_key, awa.attempt_lock_key):
 * a C claim and an SQL cancel or prune must take the very same lock.
 *
 * src/dataplane/privlock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/timestamp.h"

#include "src/compat.h"
#include "src/dataplane/privlock.h"

/* field4 of a private lock's tag: "AW" */
#define AWA_PRIVATE_LOCK_FIELD4 0x4157

PG_FUNCTION_INFO_V1(awa_private_xact_lock);
PG_FUNCTION_INFO_V1(awa_private_try_xact_lock);
PG_FUNCTION_INFO_V1(awa_private_try_xact_lock_for);
PG_FUNCTION_INFO_V1(awa_private_xact_lock_held);
PG_FUNCTION_INFO_V1(awa_private_xact_unlock);

/*
 * hashtextextended(name, 0), as SQL computes it for a text in the database's
 * default collation (always deterministic): hash_any_extended of its bytes.
 */
static int64
name_key(const char *name, int len)
{
	return DatumGetInt64(hash_any_extended((const unsigned char *) name, len, 0));
}

/* awa.claim_lock_key(lane_id): hashtextextended('awa.claim:' || lane_id, 0) */
int64
awa_claim_lock_key(int32 lane_id)
{
	char		buf[32];
	int			n = snprintf(buf, sizeof(buf), "awa.claim:%d", lane_id);

	return name_key(buf, n);
}

/*
 * awa.attempt_lock_key(job_id, run_lease):
 * hashtextextended('awa.attempt:' || job_id || ':' || run_lease, 0)
 */
int64
awa_attempt_lock_key(int64 job_id, int64 run_lease)
{
	char		buf[64];
	int			n = snprintf(buf, sizeof(buf), "awa.attempt:" INT64_FORMAT ":" INT64_FORMAT,
							 job_id, run_lease);

	return name_key(buf, n);
}

static void
private_lock_tag(LOCKTAG *tag, int64 key)
{
	tag->locktag_field1 = MyDatabaseId;
	tag->locktag_field2 = (uint32) ((uint64) key >> 32);
	tag->locktag_field3 = (uint32) key;
	tag->locktag_field4 = AWA_PRIVATE_LOCK_FIELD4;
	tag->locktag_type = LOCKTAG_USERLOCK;
	tag->locktag_lockmethodid = USER_LOCKMETHOD;
}

/* Takes the lock for this transaction; with dont_wait, only if free now. */
bool
awa_private_lock(int64 key, bool dont_wait)
{
	LOCKTAG		tag;

	private_lock_tag(&tag, key);
	return LockAcquire(&tag, ExclusiveLock, false, dont_wait) !=
		LOCKACQUIRE_NOT_AVAIL;
}

/* tried again every 200 us until timeout_ms have passed */
bool
awa_private_lock_for(int64 key, int32 timeout_ms)
{
	TimestampTz start = GetCurrentTimestamp();

	for (;;)
	{
		if (awa_private_lock(key, true))
			return true;
		if (TimestampDifferenceExceeds(start, GetCurrentTimestamp(), timeout_ms))
			return false;
		pg_usleep(200L);
		CHECK_FOR_INTERRUPTS();
	}
}

/* releases one hold of the lock; false when this transaction does not hold it */
bool
awa_private_unlock(int64 key)
{
	LOCKTAG		tag;

	private_lock_tag(&tag, key);
	if (!awa_lock_held_by_me(&tag, ExclusiveLock))
		return false;
	return LockRelease(&tag, ExclusiveLock, false);
}

/* private_xact_lock(key bigint) RETURNS void: waits for the lock. */
Datum
awa_private_xact_lock(PG_FUNCTION_ARGS)
{
	(void) awa_private_lock(PG_GETARG_INT64(0), false);
	PG_RETURN_VOID();
}

/* private_try_xact_lock(key bigint) RETURNS boolean: never waits. */
Datum
awa_private_try_xact_lock(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(awa_private_lock(PG_GETARG_INT64(0), true));
}

/*
 * private_try_xact_lock_for(key bigint, timeout_ms int) RETURNS boolean
 *
 * The try, repeated every 200 us for up to timeout_ms. It never queues in the
 * lock manager, so it cannot take part in a deadlock, whatever the caller
 * holds; a holder that stays longer is left to itself.
 */
Datum
awa_private_try_xact_lock_for(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(awa_private_lock_for(PG_GETARG_INT64(0), PG_GETARG_INT32(1)));
}

/*
 * private_xact_lock_held(key bigint) RETURNS boolean
 *
 * Whether this backend holds the lock: from its local lock table, so a lock
 * released by a rolled-back subtransaction reads as not held.
 */
Datum
awa_private_xact_lock_held(PG_FUNCTION_ARGS)
{
	LOCKTAG		tag;

	private_lock_tag(&tag, PG_GETARG_INT64(0));
	PG_RETURN_BOOL(awa_lock_held_by_me(&tag, ExclusiveLock));
}

/*
 * private_xact_unlock(key bigint) RETURNS boolean
 *
 * Gives back one hold of the lock before the transaction ends: a hold taken
 * again by the same transaction (re-entrant) stays until the others are given
 * back. False when this transaction does not hold it.
 */
Datum
awa_private_xact_unlock(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(awa_private_unlock(PG_GETARG_INT64(0)));
}
