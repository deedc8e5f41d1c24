/*-------------------------------------------------------------------------
 *
 * claimkey.h
 *	  The claim-order index of the ready children (claimkey.c): which one a
 *	  child has, and the keys of a read of it.
 *
 * src/dataplane/claimkey.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_CLAIMKEY_H
#define AWA_CLAIMKEY_H

#include "access/skey.h"
#include "utils/relcache.h"

/*
 * A span of xids [from, to) read in one pass of the index: ordered when the
 * rows it keeps come in (txid, lane_seq) order (one epoch), not when it
 * stands for several whole epochs read in one pass (xid_lo order).
 */
typedef struct AwaXidSpan
{
	uint64		from;
	uint64		to;
	bool		ordered;
} AwaXidSpan;

#define AWA_MAX_XID_SPANS 3

extern int32 awa_xid_lo(uint64 x);
extern int	awa_xid_spans(uint64 from, uint64 to, bool low, AwaXidSpan *spans);
extern Relation awa_open_claim_order_index(Relation ready, bool *low);
extern void awa_claim_order_span_keys(ScanKey keys, bool low, int32 lane_id,
									  const AwaXidSpan *span, int64 seq_after);
extern void awa_claim_order_probe_keys(ScanKey keys, bool low, int32 lane_id, Datum txid,
									   int64 lane_seq);

#endif							/* AWA_CLAIMKEY_H */
