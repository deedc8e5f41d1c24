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

extern Datum awa_attempt_args(Oid nsp, int64 job_id, int32 attempt);

#endif							/* AWA_HELDARGS_H */
