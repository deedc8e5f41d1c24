/*-------------------------------------------------------------------------
 *
 * limits.h
 *	  Running and rate limits per queue (limits.c): the shared counts and
 *	  token buckets, the claim's reservation and the closes that free room.
 *
 * src/dataplane/limits.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_LIMITS_H
#define AWA_LIMITS_H

#include "fmgr.h"

#include "src/dataplane/queuepolicy.h"

/* what a claim of a limited queue reserved, for awa_limit_settle */
typedef struct LimitClaim
{
	int			reserved;		/* attempts: room and tokens, at most asked */
	bool		counted;		/* reserved in the running count (max_running) */
	uint64		epoch;			/* the running count's, when counted */
	uint64		bucket;			/* the token bucket's id (a rate); 0: none */
	int64		due_us;			/* nothing reserved for want of a token: the
								 * microseconds until the next is due; else 0 */
} LimitClaim;

extern void awa_limits_shmem_request(void);
extern void awa_limits_shmem_startup(void);
extern void awa_limits_init(void);

extern int	awa_limit_reserve(text *queue, const AwaQueueLimits *lim, int asked,
							  LimitClaim *claim);
extern void awa_limit_settle(text *queue, const LimitClaim *claim, int took);
extern void awa_limit_note_closed(text *queue, int n);

#endif							/* AWA_LIMITS_H */
