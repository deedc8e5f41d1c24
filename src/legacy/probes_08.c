/*-------------------------------------------------------------------------
 *
 * probes_08.c
 *	  The per-slot probes that only the released 0.6-0.8 scripts call: the
 *	  claim by lane positions and done entries, in C (direct index scans on
 *	  the named ring children: no SPI, no planning).
 *
 * src/legacy/ holds the C that serves only the extension versions before 0.9
 * (docs/development.md, "Support window of old schema versions"). The whole
 * folder goes at 1.0, with the 0.6-0.8 scripts of released/, the tests that
 * install 0.7 or 0.8 and the rows 0.7 and 0.8 of schema_versions[]
 * (src/worker/schema_version.c); nothing outside it calls into it.
 *
 * This file owns the SQL-callable functions that released/awa_bgw--0.7.sql,
 * released/awa_bgw--0.8.sql and their upgrade scripts name (the 0.6 scripts
 * too: 0.6 is not maintained, but an update from it passes through them), and
 * that no later script does (awa_bgw--0.8--0.9.sql drops the last four; 0.8
 * already points awa.ring_cursor at awa_ring_cursor_ledger in probes.c). The
 * library maintains 0.7 and 0.8 databases until 1.0, so until then it must
 * keep exporting them:
 *
 *	awa.ring_cursor(ring)		(0.7: awa_ring_cursor) the ring's newest
 *								ledger row, or its compat columns while they
 *								are authoritative;
 *	awa.claim_position(...)		(0.7, 0.8) a lane's newest claim receipt;
 *	awa.lane_head_generation(lane)	(0.7, 0.8) the queue generation of a
 *								lane's newest entry (its head sequence; no
 *								partition read);
 *	awa.lane_claimables(...)	(0.7, 0.8) a lane's unclaimed, untombstoned
 *								ready entries above its position, in lane
 *								order;
 *	awa.lane_has_work(...)		(0.7, 0.8) a hint, read without the lane's
 *								claim lock: whether the lane's newest entry is
 *								above its position.
 *
 * Like every probe they open exactly the children the PL/pgSQL EXECUTEs they
 * replaced touched, in the same order, with ACCESS SHARE held to the end of
 * the transaction, and read them under the calling statement's snapshot. The
 * ring cursor and the slot counts are arguments, read by the callers: the
 * 0.6 data plane reads its cursor from the compat columns. What they share
 * with the probes of 0.9 and later (the ring_cursor argument and ledger row,
 * slot arithmetic and checks, tombstones, a row of a set-returning result)
 * stays in src/dataplane/probes.c, declared in probes.h.
 *
 * src/legacy/probes_08.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/attmap.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "src/compat.h"
#include "src/dataplane/probes.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_ring_cursor);
PG_FUNCTION_INFO_V1(awa_claim_position);
PG_FUNCTION_INFO_V1(awa_lane_head_generation);
PG_FUNCTION_INFO_V1(awa_lane_claimables);
PG_FUNCTION_INFO_V1(awa_lane_has_work);

/*
 * Copies the named columns of the table's singleton row (singleton = true),
 * read under the active snapshot, into values/nulls; false when it has none.
 */
static bool
read_singleton(Oid nsp, const char *table, int ncols, const char *const *cols,
			   Datum *values, bool *nulls)
{
	Relation	rel = awa_open_table(nsp, table, -1);
	AttrNumber	a_single = awa_column_number(rel, "singleton");
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	bool		found = false;
	int			i;

	while (!found && table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, a_single, &isnull);

		if (isnull || !DatumGetBool(d))
			continue;
		for (i = 0; i < ncols; i++)
		{
			AttrNumber	a = awa_column_number(rel, cols[i]);
			Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), a - 1);

			values[i] = slot_getattr(slot, a, &nulls[i]);
			if (!nulls[i])
				values[i] = datumCopy(values[i], att->attbyval, att->attlen);
		}
		found = true;
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	table_close(rel, NoLock);
	return found;
}

/*
 * ring_cursor(ring) of 0.7: the ledger's newest row (by the ledger table's
 * primary key, read backwards), or under compat authority the singleton's
 * columns.
 */
Datum
awa_ring_cursor(PG_FUNCTION_ARGS)
{
	static const char *const authority_col[] = {"authority"};
	static const char *const cursor_cols[] = {"current_slot", "generation"};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *ring = awa_ring_cursor_arg(fcinfo);
	char		name[NAMEDATALEN];
	Oid			nsp;
	bool		ledger = false;
	Datum		values[2];
	bool		nulls[2];

	InitMaterializedSRF(fcinfo, 0);
	nsp = awa_namespace();

	/* awa.ring_authority(): the singleton's authority, else 'columns' */
	if (read_singleton(nsp, "ring_cursor_authority", 1, authority_col, values, nulls))
		ledger = !nulls[0] && strcmp(TextDatumGetCString(values[0]), "ledger") == 0;

	if (ledger)
		awa_ring_cursor_put(rsinfo, nsp, ring);
	else
	{
		snprintf(name, sizeof(name), "%s_ring_state", ring);
		if (read_singleton(nsp, name, 2, cursor_cols, values, nulls))
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * The lane's newest receipt: the largest lane_seq of the lane in any live
 * claim child (each child read backwards on (lane_id, lane_seq)). Every child
 * is read: an open receipt carried forward out of the oldest slot lands in
 * the current one, above the slot that holds the lane's position, so the
 * first receipt found from the current slot backwards may be an older one.
 * Returns false (no position) when the lane was never claimed from.
 */
static bool
lane_position(Oid nsp, int32 lane_id, int32 claim_slot, int64 claim_gen, int32 nslots,
			  int64 *lane_seq, int64 *ready_gen)
{
	static const char *const cols[] = {"lane_id", "lane_seq"};
	bool		any = false;
	int64		k;

	for (k = 0; k <= Min(claim_gen, (int64) nslots - 1); k++)
	{
		Relation	heap = awa_open_table(nsp, "lease_claims",
										  awa_ring_slot(claim_slot, k, nslots));
		ChildScan	cs;
		ScanKeyData key;
		bool		isnull;

		awa_child_scan_begin(&cs, heap, awa_open_index(heap, 2, cols), 1);
		ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(lane_id));
		index_rescan(cs.scan, &key, 1, NULL, 0);
		if (index_getnext_slot(cs.scan, BackwardScanDirection, cs.slot))
		{
			int64		seq = awa_get_int64(cs.slot, awa_column_number(heap, "lane_seq"),
											&isnull);

			if (!any || seq > *lane_seq)
			{
				*lane_seq = seq;
				*ready_gen = awa_get_int64(cs.slot,
										   awa_column_number(heap, "ready_generation"),
										   &isnull);
			}
			any = true;
		}
		awa_child_scan_end(&cs);
	}
	return any;
}

/*
 * claim_position(lane_id, claim_slot, claim_gen, claim_slots,
 *				  OUT lane_seq, OUT ready_generation): (0, NULL) when none.
 */
Datum
awa_claim_position(PG_FUNCTION_ARGS)
{
	int32		lane_id = PG_GETARG_INT32(0);
	int32		claim_slot = PG_GETARG_INT32(1);
	int64		claim_gen = PG_GETARG_INT64(2);
	int32		nslots = PG_GETARG_INT32(3);
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	int64		seq = 0;
	int64		gen = 0;

	awa_check_slots(claim_slot, claim_gen, nslots);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	desc = BlessTupleDesc(desc);
	if (!lane_position(awa_namespace(), lane_id, claim_slot, claim_gen, nslots, &seq, &gen))
		nulls[1] = true;
	values[0] = Int64GetDatum(seq);
	values[1] = Int64GetDatum(gen);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* pg_sequence_last_value(awa.lane_<id>_head); false when never set */
static bool
lane_head(Oid nsp, int32 lane_id, int64 *head)
{
	char		name[NAMEDATALEN];
	Oid			seqid;
	Datum		d;
	LOCAL_FCINFO(fc, 1);

	snprintf(name, sizeof(name), "lane_%d_head", lane_id);
	seqid = awa_relid(nsp, name);
	if (!OidIsValid(seqid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation \"awa.%s\" does not exist", name)));
	InitFunctionCallInfoData(*fc, NULL, 1, InvalidOid, NULL, NULL);
	fc->args[0].value = ObjectIdGetDatum(seqid);
	fc->args[0].isnull = false;
	d = pg_sequence_last_value(fc);
	if (fc->isnull)
		return false;
	*head = DatumGetInt64(d);
	return true;
}

/* lane_head_generation(lane_id): NULL when nothing was ever enqueued in the lane */
Datum
awa_lane_head_generation(PG_FUNCTION_ARGS)
{
	int64		head;

	if (!lane_head(awa_namespace(), PG_GETARG_INT32(0), &head))
		PG_RETURN_NULL();
	PG_RETURN_INT64(head);
}

/*
 * The ready generations where the lane's unclaimed entries can be: from its
 * position's generation (or the oldest live one) up to its head generation (or
 * the queue cursor's), and its position (*after, 0 when never claimed from).
 * False when there can be none: nothing was ever enqueued in the lane, or its
 * head is older than every live slot (then its position is not looked up).
 */
static bool
lane_window(Oid nsp, int32 lane_id, int32 claim_slot, int64 claim_gen, int32 claim_slots,
			int64 queue_gen, int32 queue_slots, int64 *after, int64 *lo, int64 *hi)
{
	int64		head;
	int64		from = 0;

	*after = 0;
	if (!lane_head(nsp, lane_id, &head) || head <= queue_gen - queue_slots)
		return false;
	(void) lane_position(nsp, lane_id, claim_slot, claim_gen, claim_slots, after, &from);
	*lo = Max(Max(from, queue_gen - queue_slots + 1), 0);
	*hi = Min(head, queue_gen);
	return *lo <= *hi;
}

/*
 * lane_claimables(lane_id, limit, claim_slot, claim_gen, claim_slots,
 *				   queue_gen, queue_slots) RETURNS SETOF awa.ready_entries
 *
 * The lane's position (its newest receipt), then the unclaimed entries above
 * it, not tombstoned, in lane order, up to limit: ready children from the
 * position's generation (or the oldest live one) up to the lane's head
 * generation, each read on (lane_id, ready_generation, lane_seq) for its own
 * generation (so a stale queue_gen can only delay an entry, never reorder or
 * skip one). The caller holds the lane's claim lock, and its statement took
 * its snapshot after that lock (docs/storage.md §4).
 */
Datum
awa_lane_claimables(PG_FUNCTION_ARGS)
{
	static const char *const rcols[] = {"lane_id", "ready_generation", "lane_seq"};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32		lane_id = PG_GETARG_INT32(0);
	int32		limit = PG_GETARG_INT32(1);
	int32		claim_slot = PG_GETARG_INT32(2);
	int64		claim_gen = PG_GETARG_INT64(3);
	int32		claim_slots = PG_GETARG_INT32(4);
	int64		queue_gen = PG_GETARG_INT64(5);
	int32		queue_slots = PG_GETARG_INT32(6);
	Oid			nsp;
	int64		after;
	int64		lo;
	int64		hi;
	int64		g;
	int64		got = 0;

	awa_check_slots(claim_slot, claim_gen, claim_slots);
	awa_check_slots(0, queue_gen, queue_slots);
	InitMaterializedSRF(fcinfo, 0);
	nsp = awa_namespace();
	if (!lane_window(nsp, lane_id, claim_slot, claim_gen, claim_slots, queue_gen, queue_slots,
					 &after, &lo, &hi))
		return (Datum) 0;

	for (g = lo; g <= hi && got < limit; g++)
	{
		Relation	ready = awa_open_table(nsp, "ready_entries", (int) (g % queue_slots));
		Relation	done = awa_open_table(nsp, "done_entries", (int) (g % queue_slots));
		AttrNumber	a_seq = awa_column_number(ready, "lane_seq");
		AttrNumber	a_lease = awa_column_number(done, "run_lease");
		AttrMap    *map = awa_build_attrmap_by_name(RelationGetDescr(ready), rsinfo->setDesc);
		ChildScan	rs,
					ds;
		ScanKeyData keys[3];

		awa_child_scan_begin(&rs, ready, awa_open_index(ready, 3, rcols), 3);
		awa_child_scan_begin(&ds, done, awa_open_tombstone_index(done), 2);
		ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(lane_id));
		ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(g));
		ScanKeyInit(&keys[2], 3, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(after));
		index_rescan(rs.scan, keys, 3, NULL, 0);
		while (got < limit && index_getnext_slot(rs.scan, ForwardScanDirection, rs.slot))
		{
			bool		isnull;
			int64		seq = awa_get_int64(rs.slot, a_seq, &isnull);

			if (awa_tombstoned(&ds, a_lease, lane_id, seq))
				continue;
			awa_emit_row(rsinfo, rs.slot, map);
			got++;
		}
		free_attrmap(map);
		awa_child_scan_end(&ds);
		awa_child_scan_end(&rs);
	}
	return (Datum) 0;
}

/*
 * lane_has_work(lane_id, claim_slot, claim_gen, claim_slots, queue_gen,
 *				 queue_slots) RETURNS boolean
 *
 * A hint for a claimer that does not hold the lane's claim lock: whether the
 * lane's newest committed entry (the first one found reading the ready
 * children backwards from its head generation) is above its position. False
 * when the lane's head is older than every live slot. Tombstones are not
 * looked at (a lane whose only entries above its position are cancelled reads
 * as busy). It only decides whether to lock the lane: what a claim takes is
 * decided under the lock, with a snapshot taken after it.
 */
Datum
awa_lane_has_work(PG_FUNCTION_ARGS)
{
	static const char *const rcols[] = {"lane_id", "ready_generation", "lane_seq"};
	int32		lane_id = PG_GETARG_INT32(0);
	int32		claim_slot = PG_GETARG_INT32(1);
	int64		claim_gen = PG_GETARG_INT64(2);
	int32		claim_slots = PG_GETARG_INT32(3);
	int64		queue_gen = PG_GETARG_INT64(4);
	int32		queue_slots = PG_GETARG_INT32(5);
	Oid			nsp = awa_namespace();
	int64		pos;
	int64		lo;
	int64		hi;
	int64		g;

	awa_check_slots(claim_slot, claim_gen, claim_slots);
	awa_check_slots(0, queue_gen, queue_slots);
	if (!lane_window(nsp, lane_id, claim_slot, claim_gen, claim_slots, queue_gen, queue_slots,
					 &pos, &lo, &hi))
		PG_RETURN_BOOL(false);
	for (g = hi; g >= lo; g--)
	{
		Relation	ready = awa_open_table(nsp, "ready_entries", (int) (g % queue_slots));
		AttrNumber	a_seq = awa_column_number(ready, "lane_seq");
		ChildScan	rs;
		ScanKeyData keys[2];
		bool		found;
		bool		isnull;
		int64		seq = 0;

		awa_child_scan_begin(&rs, ready, awa_open_index(ready, 3, rcols), 2);
		ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(lane_id));
		ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(g));
		index_rescan(rs.scan, keys, 2, NULL, 0);
		found = index_getnext_slot(rs.scan, BackwardScanDirection, rs.slot);
		if (found)
			seq = awa_get_int64(rs.slot, a_seq, &isnull);
		awa_child_scan_end(&rs);
		if (found)
			PG_RETURN_BOOL(seq > pos);
	}
	PG_RETURN_BOOL(false);
}
