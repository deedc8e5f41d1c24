/*-------------------------------------------------------------------------
 *
 * claimkey.c
 *	  The claim-order key of the ready children (0.10,
 *	  docs/proposals/claim_order_key.md, docs/storage.md A.3): the index
 *	  (lane_id, awa_internal.xid_lo(txid), lane_seq), whose tuples are 24
 *	  bytes, so that PostgreSQL splits a page after the new tuple when a
 *	  lane's entries come in increasing order (before 0.10, and on a 0.9
 *	  catalog, (lane_id, txid, lane_seq): 32 bytes, split 50/50). Owns
 *	  awa_internal.xid_lo, which index a child has, and the keys of a read.
 *
 * xid_lo(x) is the low 32 bits of the 64-bit xid x with the sign bit
 * flipped, so that int4 order is their unsigned order. Within one epoch
 * (x >> 32) it is strictly increasing in x; across epochs it is not. So a
 * read of the xids [from, to) is cut into spans (awa_xid_spans): the part in
 * from's epoch and the part in to's, each read in key order, which is
 * (txid, lane_seq) order for the rows of the span; and the whole epochs
 * between (a window that spans more than 2^32 xids: a lane left idle that
 * long, or a lane's first window, which starts at xid 0), read in one pass
 * over the lane's whole key range. Every read is of a superset: the caller
 * keeps only the rows whose full txid (read from the heap row) is in the
 * span, so each read returns exactly the rows and the order it returned
 * on the 0.9 index.
 *
 * src/dataplane/claimkey.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "access/transam.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/xid8.h"

#include "src/dataplane/claimkey.h"
#include "src/rel/relcache.h"

PG_FUNCTION_INFO_V1(awa_xid_lo_sql);
PG_FUNCTION_INFO_V1(awa_xid_spans_sql);

#define EPOCH(x) ((x) >> 32)
#define EPOCH_START(e) ((uint64) (e) << 32)

/* the key of xid x: its low 32 bits, the sign bit flipped */
int32
awa_xid_lo(uint64 x)
{
	return (int32) ((uint32) x ^ (uint32) 0x80000000);
}

/*
 * The spans that read [from, to) on the index (low) or on the 0.9 one (one
 * ordered span), in increasing order of xid, into spans[AWA_MAX_XID_SPANS];
 * how many (0 when the range is empty).
 */
int
awa_xid_spans(uint64 from, uint64 to, bool low, AwaXidSpan *spans)
{
	int			n = 0;
	uint64		first_end;
	uint64		last_start;

	if (from >= to)
		return 0;
	if (!low || EPOCH(from) == EPOCH(to - 1))
	{
		spans[0] = (AwaXidSpan) {from, to, true};
		return 1;
	}
	first_end = EPOCH_START(EPOCH(from) + 1);
	last_start = EPOCH_START(EPOCH(to - 1));
	spans[n++] = (AwaXidSpan) {from, first_end, true};
	if (first_end < last_start)
		spans[n++] = (AwaXidSpan) {first_end, last_start, false};
	spans[n++] = (AwaXidSpan) {last_start, to, true};
	return n;
}

/*
 * The claim-order index of ready child ready, with ACCESS SHARE: the 0.9 one
 * on (lane_id, txid, lane_seq) when the child has it (*low false), else the
 * one on (lane_id, xid_lo(txid), lane_seq) (*low true); an error when it has
 * neither. Either index is cached per backend (relcache.c), and xid_lo is
 * looked up only when the child's index is not (first, and after an
 * invalidation of the child or its index, as DROP EXTENSION sends).
 */
Relation
awa_open_claim_order_index(Relation ready, bool *low)
{
	static const char *const cols[] = {"lane_id", "txid", "lane_seq"};
	Relation	index = awa_open_index_if(ready, 3, cols);

	*low = index == NULL;
	if (index == NULL)
		index = awa_open_expr_index_if(ready, 3, cols, 1, "xid_lo");
	if (index == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("relation \"%s\" has no claim-order index",
						RelationGetRelationName(ready)),
				 errhint("It needs a btree index on (lane_id, awa_internal.xid_lo(txid), "
						 "lane_seq) or on (lane_id, txid, lane_seq).")));
	return index;
}

/*
 * The four keys of a read of lane_id's entries in span (and, when the span
 * is one xid and seq_after >= 0, lane_seq > seq_after): on the 0.9 index
 * from <= txid < to; on the other xid_lo(from) <= key <= xid_lo(to - 1), or
 * the whole key range for a span that is not ordered. The caller tests each
 * row's txid against the span.
 */
void
awa_claim_order_span_keys(ScanKey keys, bool low, int32 lane_id, const AwaXidSpan *span,
						  int64 seq_after)
{
	bool		one = span->to == span->from + 1;

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(lane_id));
	if (!low)
	{
		ScanKeyInit(&keys[1], 2, BTGreaterEqualStrategyNumber, F_XID8GE,
					FullTransactionIdGetDatum(FullTransactionIdFromU64(span->from)));
		ScanKeyInit(&keys[2], 2, BTLessStrategyNumber, F_XID8LT,
					FullTransactionIdGetDatum(FullTransactionIdFromU64(span->to)));
	}
	else
	{
		ScanKeyInit(&keys[1], 2, BTGreaterEqualStrategyNumber, F_INT4GE,
					Int32GetDatum(span->ordered ? awa_xid_lo(span->from) : PG_INT32_MIN));
		ScanKeyInit(&keys[2], 2, BTLessEqualStrategyNumber, F_INT4LE,
					Int32GetDatum(span->ordered ? awa_xid_lo(span->to - 1) : PG_INT32_MAX));
	}
	ScanKeyInit(&keys[3], 3, BTGreaterStrategyNumber, F_INT8GT,
				Int64GetDatum(seq_after >= 0 && one ? seq_after : PG_INT64_MIN));
}

/*
 * The three keys of the probe of one entry (lane_id, txid, lane_seq); on
 * the index of xid_lo, the caller tests the row's txid (lane_seq, from a
 * sequence, names one entry of the lane already).
 */
void
awa_claim_order_probe_keys(ScanKey keys, bool low, int32 lane_id, Datum txid,
						   int64 lane_seq)
{
	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(lane_id));
	if (low)
		ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT4EQ,
					Int32GetDatum(awa_xid_lo(U64FromFullTransactionId(
						DatumGetFullTransactionId(txid)))));
	else
		ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_XID8EQ, txid);
	ScanKeyInit(&keys[2], 3, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(lane_seq));
}

/* awa_internal.xid_lo(xid8) RETURNS int: the key of the claim-order index */
Datum
awa_xid_lo_sql(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(awa_xid_lo(U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(0))));
}

/*
 * awa_internal.xid_spans(from xid8, to xid8) RETURNS TABLE (span_from xid8,
 * span_to xid8, ordered boolean, key_lo int, key_hi int): the spans a read
 * of [from, to) makes on the index of xid_lo and their key ranges (tests).
 */
Datum
awa_xid_spans_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	AwaXidSpan	spans[AWA_MAX_XID_SPANS];
	int			n;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	n = awa_xid_spans(U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(0)),
					  U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(1)), true, spans);
	for (i = 0; i < n; i++)
	{
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};

		values[0] = FullTransactionIdGetDatum(FullTransactionIdFromU64(spans[i].from));
		values[1] = FullTransactionIdGetDatum(FullTransactionIdFromU64(spans[i].to));
		values[2] = BoolGetDatum(spans[i].ordered);
		values[3] = Int32GetDatum(spans[i].ordered ? awa_xid_lo(spans[i].from) : PG_INT32_MIN);
		values[4] = Int32GetDatum(spans[i].ordered ? awa_xid_lo(spans[i].to - 1) : PG_INT32_MAX);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
