/*-------------------------------------------------------------------------
 *
 * bucket.h
 *	  The token bucket of a queue's rate limit (bucket.c): its arithmetic,
 *	  done by limits.c under the spinlock of the queue's shared entry.
 *
 * src/dataplane/bucket.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_BUCKET_H
#define AWA_BUCKET_H

/*
 * A bucket of at most burst tokens, refilled at rate tokens per per_us
 * microseconds. Tokens are counted in units of 1/per_us of a token, so that a
 * refill (rate tokens per per_us microseconds: rate units per microsecond) is
 * exact: no rounding accumulates however often it runs.
 */
typedef struct TokenBucket
{
	uint64		id;				/* 0: none yet; new each time it is made */
	int32		rate;			/* the parameters tokens are counted in */
	int64		per_us;
	int32		burst;
	int64		tokens;			/* 0 .. burst * per_us */
	int64		refilled_at;	/* awa_bucket_now() of the last refill */
} TokenBucket;

extern int64 awa_bucket_now(void);
extern void awa_bucket_make(TokenBucket *b, uint64 id, int32 rate, int64 per_us,
							int32 burst, bool full, int64 now);
extern void awa_bucket_refill(TokenBucket *b, int32 rate, int64 per_us, int32 burst,
							  int64 now);
extern int32 awa_bucket_whole(const TokenBucket *b);
extern int	awa_bucket_take(TokenBucket *b, int asked);
extern void awa_bucket_give(TokenBucket *b, int n);
extern int64 awa_bucket_due_us(const TokenBucket *b);

#endif							/* AWA_BUCKET_H */
