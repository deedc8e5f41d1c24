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
 *	awa.ring_cursor(ring)		(0.8 on: awa_ring_cursor_ledger) the ring's
 *								newest ledger row;
 *	awa.open_receipts_at(...)	the still-open receipts of a set of attempts.
 *
 * The probes that only the 0.7 and 0.8 scripts call (0.7's ring_cursor, which
 * also reads the compat columns, claim_position, lane_head_generation,
 * lane_claimables, lane_has_work) are in src/legacy/probes_08.c, which goes
 * at 1.0.
 *
 * The ring cursor and the slot counts are arguments, read by the callers: the
 * 0.6 data plane reads its cursor from the compat columns. The C hot paths
 * and src/legacy/ share the pieces of these probes that they need too
 * (probes.h): the ring's cursor from its ledger, the ring a cursor function
 * is asked for, the arithmetic and checks of slots, whether an entry has a
 * cancel tombstone, a row appended to a set-returning result. The relations
 * are found and read through src/rel/.
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

PG_FUNCTION_INFO_V1(awa_ring_cursor_ledger);
PG_FUNCTION_INFO_V1(awa_open_receipts_at);

/* an attempt of open_receipts_at */
typedef struct Attempt
{
	int64		job_id;
	int64		run_lease;
	bool		found;
} Attempt;

/* appends the slot's row to the SRF result, columns matched by name */
void
awa_emit_row(ReturnSetInfo *rsinfo, TupleTableSlot *slot, AttrMap *map)
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
 * The ring's cursor from its rotation ledger: the newest row (by the ledger
 * table's primary key, read backwards) visible to the active snapshot, or
 * to a fresh read when fresh is not NULL. False when the ledger is empty.
 */
bool
awa_ring_cursor_read(Oid nsp, const char *ring, int32 *slot, int64 *generation)
{
	return awa_ring_cursor_read_as(nsp, ring, NULL, slot, generation);
}

bool
awa_ring_cursor_read_as(Oid nsp, const char *ring, const AwaFreshRead *fresh,
						int32 *slot, int64 *generation)
{
	static const char *const cols[] = {"generation"};
	char		name[NAMEDATALEN];
	Relation	rel;
	ChildScan	cs;
	bool		found;

	snprintf(name, sizeof(name), "%s_ring_rotations", ring);
	rel = awa_open_table(nsp, name, -1);
	awa_child_scan_begin_fresh(&cs, rel, awa_open_index(rel, 1, cols), 0, fresh);
	index_rescan(cs.scan, NULL, 0, NULL, 0);
	found = awa_child_scan_next(&cs, BackwardScanDirection);
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
 * The ring a ring_cursor(ring) function is asked for (its first argument):
 * queue, lease or claim; any other name, or NULL, is an error.
 */
char *
awa_ring_cursor_arg(FunctionCallInfo fcinfo)
{
	char	   *ring = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (ring == NULL || (strcmp(ring, "queue") != 0 && strcmp(ring, "lease") != 0 &&
						 strcmp(ring, "claim") != 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ring_cursor: unknown ring \"%s\"", ring ? ring : "<NULL>"),
				 errhint("The rings are queue, lease and claim.")));
	return ring;
}

/*
 * Appends the ring's cursor from its ledger (awa_ring_cursor_read) to the
 * materialized SRF result as (slot, generation); nothing when the ledger is
 * empty.
 */
void
awa_ring_cursor_put(ReturnSetInfo *rsinfo, Oid nsp, const char *ring)
{
	int32		slot;
	int64		generation;
	Datum		values[2];
	bool		nulls[2];

	if (awa_ring_cursor_read(nsp, ring, &slot, &generation))
	{
		values[0] = Int32GetDatum(slot);
		values[1] = Int64GetDatum(generation);
		nulls[0] = nulls[1] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * ring_cursor(ring) from 0.8 on: the ledger's newest row (by the ledger
 * table's primary key, read backwards).
 */
Datum
awa_ring_cursor_ledger(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *ring = awa_ring_cursor_arg(fcinfo);

	InitMaterializedSRF(fcinfo, 0);
	awa_ring_cursor_put(rsinfo, awa_namespace(), ring);
	return (Datum) 0;
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

/* whether the lane's entry lane_seq has a cancel tombstone (run_lease 0) */
bool
awa_tombstoned(ChildScan *done, AttrNumber a_lease, int32 lane_id, int64 lane_seq)
{
	ScanKeyData keys[2];

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(lane_id));
	ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(lane_seq));
	index_rescan(done->scan, keys, 2, NULL, 0);
	while (awa_child_scan_next(done, ForwardScanDirection))
	{
		bool		isnull;
		int32		lease = awa_get_int32(done->slot, a_lease, &isnull);

		if (!isnull && lease == 0)
			return true;
	}
	return false;
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
 * is marked, and emitted unless its closure is in the slot too. Each family's
 * scan of an attempt (src/rel/scan.c awa_child_scan_attempt: the receipts by
 * their btree on (job_id, run_lease) or, in 0.10, by their BRIN index on
 * job_id; the closures by their btree) is begun on its first attempt and
 * keyed again for the next. Returns how many were found.
 */
static int
probe_claim_slot(Oid nsp, int s, Attempt *att, int n, ReturnSetInfo *rsinfo)
{
	Relation	heap = awa_open_table(nsp, "lease_claims", s);
	AttrMap    *map = awa_build_attrmap_by_name(RelationGetDescr(heap), rsinfo->setDesc);
	ChildScan	cs,
				xs;
	bool		receipts_begun = false;
	bool		closures_begun = false;
	int			found = 0;
	int			i;

	for (i = 0; i < n; i++)
	{
		if (att[i].found)
			continue;
		if (receipts_begun)
			awa_child_scan_rekey(&cs, att[i].job_id, att[i].run_lease);
		else
			awa_child_scan_attempt(&cs, heap, att[i].job_id, att[i].run_lease, NULL);
		receipts_begun = true;
		if (!awa_child_scan_next(&cs, ForwardScanDirection))
			continue;
		att[i].found = true;
		found++;
		if (closures_begun)
			awa_child_scan_rekey(&xs, att[i].job_id, att[i].run_lease);
		else
			awa_child_scan_attempt(&xs, awa_open_table(nsp, "lease_claim_closures", s),
								   att[i].job_id, att[i].run_lease, NULL);
		closures_begun = true;
		if (!awa_child_scan_next(&xs, ForwardScanDirection))
			awa_emit_row(rsinfo, cs.slot, map);
	}
	if (closures_begun)
		awa_child_scan_end(&xs);
	if (receipts_begun)
		awa_child_scan_end(&cs);
	else
		table_close(heap, NoLock);
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
