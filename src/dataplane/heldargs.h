/*-------------------------------------------------------------------------
 *
 * heldargs.h
 *	  The args of an attempt whose receipt does not carry them (heldargs.c,
 *	  docs/storage.md A.20).
 *
 * src/dataplane/heldargs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_HELDARGS_H
#define AWA_HELDARGS_H

#include "postgres.h"

/* a ready entry's claim-order key, as its receipt carries it */
typedef struct AwaEntryKey
{
	int32		lane_id;
	Datum		txid;			/* xid8 */
	int64		lane_seq;
} AwaEntryKey;

extern Datum awa_attempt_args(Oid nsp, int64 job_id, int32 attempt,
							  const AwaEntryKey *key);

#endif							/* AWA_HELDARGS_H */
