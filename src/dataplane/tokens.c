/*-------------------------------------------------------------------------
 *
 * tokens.c
 *	  Attempt tokens (docs/storage.md §A.6): the run_lease that names one
 *	  claimed attempt in 0.9.
 *
 * A claim draws one token per receipt from the operating system's strong
 * random source (64 tokens' worth of bytes per call into it), so that a
 * grantee who knows a job id cannot name another session's attempt:
 * complete, fail and heartbeat with a wrong token find no
 * receipt and change nothing, and the attempt lock they take (keyed by the
 * token) is one no real attempt uses. Tokens are positive and at least 2^62:
 * never 0 (a cancel tombstone) and never an attempt number (the run_lease of
 * receipts written before 0.9), with 62 random bits.
 *
 *	awa.lease_token()	a fresh token
 *
 * src/dataplane/tokens.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "src/dataplane/tokens.h"

PG_FUNCTION_INFO_V1(awa_lease_token);

#define AWA_TOKEN_FLOOR	(INT64CONST(1) << 62)

/*
 * Random words drawn 64 at a time: one call into the strong random source per
 * 64 tokens instead of one per token (each call costs more than the bytes it
 * returns; a batched claim draws one token per receipt). The words left stay
 * in this backend's memory, where each is used once, never shared.
 */
#define AWA_TOKEN_POOL	64

static uint64 token_pool[AWA_TOKEN_POOL];
static int	token_pool_left = 0;

int64
awa_new_lease_token(void)
{
	uint64		r;

	if (token_pool_left == 0)
	{
		if (!pg_strong_random(token_pool, sizeof(token_pool)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate a random attempt token")));
		token_pool_left = AWA_TOKEN_POOL;
	}
	r = token_pool[--token_pool_left];
	token_pool[token_pool_left] = 0;
	return (int64) ((r & (uint64) (AWA_TOKEN_FLOOR - 1)) | AWA_TOKEN_FLOOR);
}

Datum
awa_lease_token(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(awa_new_lease_token());
}
