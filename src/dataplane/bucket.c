/*-------------------------------------------------------------------------
 *
 * bucket.c
 *	  The token bucket of a queue's rate limit (docs/usage.md "Running
 *	  limits", docs/proposals/flow_control.md §4): at most burst tokens,
 *	  refilled at rate tokens per rate_per; one token per attempt claimed.
 *	  Arithmetic only: the bucket lives in the queue's shared entry
 *	  (src/dataplane/limits.c), whose spinlock the caller holds, so nothing
 *	  here allocates or errs, and only awa_bucket_now, called before the
 *	  spinlock is taken, reads the clock.
 *
 * Tokens are counted in units of 1/per_us of a token: rate tokens per per_us
 * microseconds is then rate units per microsecond, an exact integer, and a
 * refill never rounds (50 per second is 50 units each microsecond, 1,000,000
 * units a token). The largest count, burst * per_us, is 10^6 * 8.64 * 10^10
 * (a burst of a million, a day): it fits in an int64, and so does every
 * product below, each bounded before it is made.
 *
 * The clock is the monotonic one PostgreSQL's instrumentation reads (one for
 * every process of the machine): an adjustment of the wall clock neither
 * fills nor drains a bucket. A refill whose "now" was read before another
 * backend's later refill adds nothing (it never moves refilled_at back).
 *
 * src/dataplane/bucket.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "portability/instr_time.h"
#include "utils/timestamp.h"

#include "src/dataplane/bucket.h"

/* the microseconds of the monotonic clock, read before the entry's spinlock */
int64
awa_bucket_now(void)
{
	instr_time	t;

	INSTR_TIME_SET_CURRENT(t);
	return (int64) INSTR_TIME_GET_MICROSEC(t);
}

static int64
capacity(const TokenBucket *b)
{
	return (int64) b->burst * b->per_us;
}

/* A new bucket with these parameters, full or empty, refilled as of now. */
void
awa_bucket_make(TokenBucket *b, uint64 id, int32 rate, int64 per_us, int32 burst,
				bool full, int64 now)
{
	b->id = id;
	b->rate = rate;
	b->per_us = per_us;
	b->burst = burst;
	b->tokens = full ? capacity(b) : 0;
	b->refilled_at = now;
}

/* the tokens that accrued since the last refill, at the bucket's own rate */
static void
accrue(TokenBucket *b, int64 now)
{
	int64		cap = capacity(b);
	int64		elapsed;
	int64		deficit;

	if (now <= b->refilled_at)
	{
		/* a clock that went back (not a monotonic one): start again from it */
		if (b->refilled_at - now > USECS_PER_SEC)
			b->refilled_at = now;
		return;
	}
	elapsed = now - b->refilled_at;
	b->refilled_at = now;
	deficit = cap - b->tokens;
	if (deficit <= 0)
		b->tokens = cap;
	else if (elapsed >= (deficit + b->rate - 1) / b->rate)
		b->tokens = cap;		/* full before now: the rest of the time is lost */
	else
		b->tokens += b->rate * elapsed; /* < deficit + rate: no overflow */
}

/*
 * Refills the bucket as of now, first at its own parameters; then, when the
 * queue's are others (its rate was changed), recounts its whole tokens in the
 * new ones, at most the new burst (the fraction of a token is dropped).
 */
void
awa_bucket_refill(TokenBucket *b, int32 rate, int64 per_us, int32 burst, int64 now)
{
	int64		whole;

	accrue(b, now);
	if (b->rate == rate && b->per_us == per_us && b->burst == burst)
		return;
	whole = Min(b->tokens / b->per_us, (int64) burst);
	b->rate = rate;
	b->per_us = per_us;
	b->burst = burst;
	b->tokens = whole * per_us;
}

/* the whole tokens in the bucket (as of its last refill) */
int32
awa_bucket_whole(const TokenBucket *b)
{
	return (int32) (b->tokens / b->per_us);
}

/* Takes at most asked whole tokens; returns how many. */
int
awa_bucket_take(TokenBucket *b, int asked)
{
	int			t = Min(asked, awa_bucket_whole(b));

	t = Max(t, 0);
	b->tokens -= (int64) t * b->per_us;
	return t;
}

/* Gives n tokens back, at most up to burst. */
void
awa_bucket_give(TokenBucket *b, int n)
{
	if (n <= 0)
		return;
	if (n >= b->burst)
		b->tokens = capacity(b);
	else
		b->tokens = Min(b->tokens + (int64) n * b->per_us, capacity(b));
}

/*
 * Microseconds from the last refill until the bucket holds a whole token
 * (rounded up); 0 when it holds one.
 */
int64
awa_bucket_due_us(const TokenBucket *b)
{
	int64		need;

	if (b->tokens >= b->per_us)
		return 0;
	need = b->per_us - b->tokens;
	return (need + b->rate - 1) / b->rate;
}
