/*-------------------------------------------------------------------------
 *
 * queuepolicy.h
 *	  Per-queue grants, pauses, running and rate limits (queuepolicy.c): the
 *	  checks the API makes.
 *
 * src/dataplane/queuepolicy.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_QUEUEPOLICY_H
#define AWA_QUEUEPOLICY_H

/* the privilege bits of awa.queue_privileges */
#define AWA_QUEUE_ENQUEUE	1
#define AWA_QUEUE_CLAIM		2
#define AWA_QUEUE_MANAGE	4

/* a queue's limits, from awa_internal.queue_limits (0: none) */
typedef struct AwaQueueLimits
{
	int32		max_running;	/* attempts running at once */
	int32		rate;			/* attempts claimed per per_us microseconds */
	int64		per_us;
	int32		burst;			/* the most tokens the rate's bucket holds */
} AwaQueueLimits;

extern bool awa_queue_allowed_for(text *queue, int priv);
extern void awa_queue_require(text *queue, int priv);
extern bool awa_queue_paused(text *queue);
extern bool awa_queue_claim_policy(text *queue, AwaQueueLimits *limits);
extern int32 awa_queue_max_running(text *queue);

#endif							/* AWA_QUEUEPOLICY_H */
