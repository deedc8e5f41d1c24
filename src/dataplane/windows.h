/*-------------------------------------------------------------------------
 *
 * windows.h
 *	  The 0.9 snapshot-window read of one lane (windows.c), for the claim.
 *
 * src/dataplane/windows.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_WINDOWS_H
#define AWA_WINDOWS_H

#include "access/tupdesc.h"
#include "nodes/pg_list.h"
#include "src/rel/scan.h"

/* one entry a window scan found, in the caller's output layout */
typedef struct WindowEntry
{
	uint64		txid;
	int64		seq;
	int			child;			/* the ready slot it is in */
	Datum	   *values;
	bool	   *nulls;
} WindowEntry;

extern List *awa_window_take(int32 lane_id, int limit, int32 claim_slot,
							 int64 claim_gen, int32 claim_slots, int32 queue_slots,
							 TupleDesc out, Datum *win_lo, Datum *win_hi);

/* whether an entry is unclaimed (awa_entry_unclaimed_fresh) */
typedef enum AwaUnclaimed
{
	AWA_UNCLAIMED_UNKNOWN,		/* no claim cursor: SQL's NULL */
	AWA_UNCLAIMED_NO,
	AWA_UNCLAIMED_YES
} AwaUnclaimed;

extern AwaUnclaimed awa_entry_unclaimed_fresh(Oid nsp, int32 lane_id, uint64 txid,
											  int64 lane_seq, const AwaFreshRead *fresh);

#endif							/* AWA_WINDOWS_H */
