/*-------------------------------------------------------------------------
 *
 * probes.c
 *	  The per-slot probes of the hot paths (enqueue, claim, complete), as
 *	  direct index scans on the named ring children: no SPI, no planning.
 *
 * The PL/pgSQL versions ran one EXECUTE per ring slot probed (a static plan
 * over a partitioned parent would lock every child, see docs/storage.md §1),
 * and each EXECUTE was parsed and planned on every call. These functions open
 * exactly the children the EXECUTEs touched, in the same order, with ACCESS
 * SHARE held to the end of the transaction (as the executor holds it), and
 * read them under the calling statement's snapshot, so they see and lock what
 * the SQL they replace saw and locked:
 *
 *	awa.ring_cursor(ring)		the ring's newest ledger row, or its compat
 *								columns while they are authoritative (0.7);
 *	awa.ring_cursor_ledger(ring)	the same, ledger only (0.8);
 *	awa.claim_position(...)		a lane's newest claim receipt;
 *	awa.lane_head_generation(lane)	the queue generation of a lane's newest
 *								entry (its head sequence; no partition read);
 *	awa.lane_claimables(...)	a lane's unclaimed, untombstoned ready
 *								entries above its position, in lane order;
 *	awa.open_receipts_at(...)	the still-open receipts of a set of attempts;
 *	awa.lane_has_work(...)		a hint, read without the lane's claim lock:
 *								whether the lane's newest entry is above its
 *								position.
 *
 * The ring cursor and the slot counts are arguments, read by the callers: the
 * 0.6 data plane reads its cursor from the compat columns. The C hot paths
 * share the pieces of these probes that they need too (probes.h): the ring's
 * cursor from its ledger, the arithmetic and checks of slots, and whether an
 * entry has a cancel tombstone. The relations are found and read through
 * src/rel/.
 *
 * src/dataplane/probes.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/attmap.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "nodes/pg_list.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "src/compat.h"
#include "src/dataplane/probes.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_ring_cursor);
PG_FUNCTION_INFO_V1(awa_ring_cursor_ledger);
PG_FUNCTION_INFO_V1(awa_claim_position);
PG_FUNCTION_INFO_V1(awa_lane_head_generation);
PG_FUNCTION_INFO_V1(awa_lane_claimables);
PG_FUNCTION_INFO_V1(awa_open_receipts_at);
PG_FUNCTION_INFO_V1(awa_lane_has_work);

/* an attempt of open_receipts_at */
typedef struct Attempt
{
	int64		job_id;
	int64		run_lease;
	bool		found;
} Attempt;

/* appends the slot's row to the SRF result, columns matched by name */
static void
emit_row(ReturnSetInfo *rsinfo, TupleTableSlot *slot, AttrMap *map)
{
	TupleDesc	out = rsinfo->setDesc;
	Datum	   *values = palloc(out->natts * sizeof(Datum));
	bool	   *nulls = palloc(out->natts * sizeof(bool));
	int			i;

	slot_getallattrs(slot);
	for (i = 0; i < out->natts; i++)
	{
		AttrNumber	in = map->attnums[i];

		if (in == 0)
		{
			values[i] = (Datum) 0;
			nulls[i] = true;
		}
		else
		{
			values[i] = slot->tts_values[in - 1];
			nulls[i] = slot->tts_isnull[in - 1];
		}
	}
	tuplestore_putvalues(rsinfo->setResult, out, values, nulls);
	pfree(values);
	pfree(nulls);
}

int
awa_ring_slot(int64 slot, int64 back, int nslots)
{
	return (int) (((slot - back) % nslots + nslots) % nslots);
}

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
 * The ring's cursor from its rotation ledger: the newest row (by the ledger
 * table's primary key, read backwards) visible to the active snapshot. False
 * when the ledger is empty.
 */
bool
awa_ring_cursor_read(Oid nsp, const char *ring, int32 *slot, int64 *generation)
{
	static const char *const cols[] = {"generation"};
	char		name[NAMEDATALEN];
	Relation	rel;
	ChildScan	cs;
	bool		found;

	snprintf(name, sizeof(name), "%s_ring_rotations", ring);
	rel = awa_open_table(nsp, name, -1);
	awa_child_scan_begin(&cs, rel, awa_open_index(rel, 1, cols), 0);
	index_rescan(cs.scan, NULL, 0, NULL, 0);
	found = index_getnext_slot(cs.scan, BackwardScanDirection, cs.slot);
	if (found)
	{
		bool		isnull;

		*slot = awa_get_int32(cs.slot, awa_column_number(rel, "slot"), &isnull);
		*generation = awa_get_int64(cs.slot, awa_column_number(rel, "generation"), &isnull);
	}
	awa_child_scan_end(&cs);
	return found;
}

/*
 * ring_cursor(ring): the ledger's newest row (by the ledger table's primary
 * key, read backwards), or under compat authority the singleton's columns.
 */
static void
ring_cursor(FunctionCallInfo fcinfo, bool ledger_only)
{
	static const char *const authority_col[] = {"authority"};
	static const char *const cursor_cols[] = {"current_slot", "generation"};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *ring = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	char		name[NAMEDATALEN];
	Oid			nsp;
	bool		ledger = ledger_only;
	Datum		values[2];
	bool		nulls[2];

	if (ring == NULL || (strcmp(ring, "queue") != 0 && strcmp(ring, "lease") != 0 &&
						 strcmp(ring, "claim") != 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ring_cursor: unknown ring \"%s\"", ring ? ring : "<NULL>"),
				 errhint("The rings are queue, lease and claim.")));

	InitMaterializedSRF(fcinfo, 0);
	nsp = awa_namespace();

	/* awa.ring_authority(): the singleton's authority, else 'columns' */
	if (!ledger && read_singleton(nsp, "ring_cursor_authority", 1, authority_col,
								  values, nulls))
		ledger = !nulls[0] && strcmp(TextDatumGetCString(values[0]), "ledger") == 0;

	if (ledger)
	{
		int32		slot;
		int64		generation;

		if (awa_ring_cursor_read(nsp, ring, &slot, &generation))
		{
			values[0] = Int32GetDatum(slot);
			values[1] = Int64GetDatum(generation);
			nulls[0] = nulls[1] = false;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	else
	{
		snprintf(name, sizeof(name), "%s_ring_state", ring);
		if (read_singleton(nsp, name, 2, cursor_cols, values, nulls))
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

Datum
awa_ring_cursor(PG_FUNCTION_ARGS)
{
	ring_cursor(fcinfo, false);
	return (Datum) 0;
}

Datum
awa_ring_cursor_ledger(PG_FUNCTION_ARGS)
{
	ring_cursor(fcinfo, true);
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

void
awa_check_slots(int32 slot, int64 generation, int32 nslots)
{
	if (nslots < 1 || slot < 0 || slot >= nslots || generation < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid ring position (slot %d, generation " INT64_FORMAT
						") for %d slots", slot, generation, nslots)));
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

/* whether the lane's entry lane_seq has a cancel tombstone (run_lease 0) */
bool
awa_tombstoned(ChildScan *done, AttrNumber a_lease, int32 lane_id, int64 lane_seq)
{
	ScanKeyData keys[2];

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(lane_id));
	ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(lane_seq));
	index_rescan(done->scan, keys, 2, NULL, 0);
	while (index_getnext_slot(done->scan, ForwardScanDirection, done->slot))
	{
		bool		isnull;
		int32		lease = awa_get_int32(done->slot, a_lease, &isnull);

		if (!isnull && lease == 0)
			return true;
	}
	return false;
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
			emit_row(rsinfo, rs.slot, map);
			got++;
		}
		free_attrmap(map);
		awa_child_scan_end(&ds);
		awa_child_scan_end(&rs);
	}
	return (Datum) 0;
}

/* the type of a column of rel */
static Oid
column_type(Relation rel, const char *name)
{
	return TupleDescAttr(RelationGetDescr(rel), awa_column_number(rel, name) - 1)->atttypid;
}

/*
 * The scan key run_lease = lease on a bigint (0.9) or int (before) column;
 * false when an int column cannot hold the lease (no attempt has it).
 */
static bool
lease_key(ScanKey key, bool int8_column, int64 lease)
{
	if (int8_column)
		ScanKeyInit(key, 2, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(lease));
	else if (lease >= PG_INT32_MIN && lease <= PG_INT32_MAX)
		ScanKeyInit(key, 2, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum((int32) lease));
	else
		return false;
	return true;
}

static int
attempt_cmp(const void *a, const void *b)
{
	const Attempt *x = (const Attempt *) a;
	const Attempt *y = (const Attempt *) b;

	if (x->job_id != y->job_id)
		return x->job_id < y->job_id ? -1 : 1;
	if (x->run_lease != y->run_lease)
		return x->run_lease < y->run_lease ? -1 : 1;
	return 0;
}

/* the distinct (job_id, run_lease) pairs of the two arrays, NULLs skipped */
static Attempt *
read_attempts(ArrayType *jobs_a, ArrayType *leases_a, int *count)
{
	Datum	   *jobs,
			   *leases;
	bool	   *jnulls,
			   *lnulls;
	int			njobs,
				nleases;
	Attempt    *att;
	int			n = 0;
	int			i;

	deconstruct_array(jobs_a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &jobs, &jnulls, &njobs);
	deconstruct_array(leases_a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &leases, &lnulls, &nleases);
	if (njobs != nleases)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("job_ids and run_leases must be arrays of the same length")));
	att = palloc(sizeof(Attempt) * Max(njobs, 1));
	for (i = 0; i < njobs; i++)
	{
		if (jnulls[i] || lnulls[i])
			continue;
		att[n].job_id = DatumGetInt64(jobs[i]);
		att[n].run_lease = DatumGetInt64(leases[i]);
		att[n].found = false;
		n++;
	}
	if (n > 1)
	{
		int			m = 1;

		qsort(att, n, sizeof(Attempt), attempt_cmp);
		for (i = 1; i < n; i++)
			if (attempt_cmp(&att[i], &att[m - 1]) != 0)
				att[m++] = att[i];
		n = m;
	}
	*count = n;
	return att;
}

/*
 * The receipts in claim slot s of the attempts not found yet: each one found
 * is marked, and emitted unless its closure is in the slot too. Returns how
 * many were found.
 */
static int
probe_claim_slot(Oid nsp, int s, Attempt *att, int n, ReturnSetInfo *rsinfo)
{
	static const char *const cols[] = {"job_id", "run_lease"};
	Relation	heap = awa_open_table(nsp, "lease_claims", s);
	AttrMap    *map = awa_build_attrmap_by_name(RelationGetDescr(heap), rsinfo->setDesc);
	ChildScan	cs,
				xs;
	bool		closures_open = false;
	bool		lease_int8 = column_type(heap, "run_lease") == INT8OID;
	int			found = 0;
	int			i;

	awa_child_scan_begin(&cs, heap, awa_open_index(heap, 2, cols), 2);
	for (i = 0; i < n; i++)
	{
		ScanKeyData keys[2];

		if (att[i].found)
			continue;
		ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT8EQ,
					Int64GetDatum(att[i].job_id));
		if (!lease_key(&keys[1], lease_int8, att[i].run_lease))
			continue;
		index_rescan(cs.scan, keys, 2, NULL, 0);
		if (!index_getnext_slot(cs.scan, ForwardScanDirection, cs.slot))
			continue;
		att[i].found = true;
		found++;
		if (!closures_open)
		{
			Relation	x = awa_open_table(nsp, "lease_claim_closures", s);

			awa_child_scan_begin(&xs, x, awa_open_index(x, 2, cols), 2);
			closures_open = true;
		}
		index_rescan(xs.scan, keys, 2, NULL, 0);
		if (!index_getnext_slot(xs.scan, ForwardScanDirection, xs.slot))
			emit_row(rsinfo, cs.slot, map);
	}
	if (closures_open)
		awa_child_scan_end(&xs);
	awa_child_scan_end(&cs);
	free_attrmap(map);
	return found;
}

/*
 * open_receipts_at(job_ids bigint[], run_leases bigint[], claim_slot, claim_gen,
 *					claim_slots) RETURNS SETOF awa.lease_claims
 *
 * For each distinct attempt (NULLs ignored): its receipt in the newest claim
 * child holding one (children probed from the current slot backwards, while
 * some attempt is still unfound), returned if that child holds no closure of
 * it. The caller holds the attempts' locks, so prune cannot move them.
 * run_lease is a bigint token in 0.9 and the int attempt number before: the
 * key is built for the column's type, and a lease no int column can hold
 * names no attempt there.
 */
Datum
awa_open_receipts_at(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32		claim_slot = PG_GETARG_INT32(2);
	int64		claim_gen = PG_GETARG_INT64(3);
	int32		nslots = PG_GETARG_INT32(4);
	Attempt    *att;
	int			n;
	int			left;
	int64		k;
	Oid			nsp;

	awa_check_slots(claim_slot, claim_gen, nslots);
	att = read_attempts(PG_GETARG_ARRAYTYPE_P(0), PG_GETARG_ARRAYTYPE_P(1), &n);
	InitMaterializedSRF(fcinfo, 0);
	left = n;
	nsp = awa_namespace();
	for (k = 0; left > 0 && k <= Min(claim_gen, (int64) nslots - 1); k++)
		left -= probe_claim_slot(nsp, awa_ring_slot(claim_slot, k, nslots), att, n, rsinfo);
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
