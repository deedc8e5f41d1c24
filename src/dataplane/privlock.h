/*-------------------------------------------------------------------------
 *
 * privlock.h
 *	  The private lock space (privlock.c, docs/storage.md A.2): transaction
 *	  locks no SQL function of PostgreSQL takes, and their keys.
 *
 * src/dataplane/privlock.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_PRIVLOCK_H
#define AWA_PRIVLOCK_H

extern bool awa_private_lock(int64 key, bool dont_wait);
extern bool awa_private_lock_for(int64 key, int32 timeout_ms);
extern bool awa_private_unlock(int64 key);
extern int64 awa_claim_lock_key(int32 lane_id);
extern int64 awa_attempt_lock_key(int64 job_id, int64 run_lease);

#endif							/* AWA_PRIVLOCK_H */
