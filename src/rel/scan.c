/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Reading one relation of the hot paths: a column's number by name, the
 *	  equality key on an integer column of either width, one index scan on one
 *	  ring child (ChildScan), the rows of one job or of one attempt on a child
 *	  by its btree or, lacking one, by its BRIN index, and the integers of the
 *	  rows returned.
 *
 * The scans are direct (index_beginscan under the active snapshot, no SPI,
 * no planning); the caller opens the heap and its index (src/rel/relcache.c)
 * and the scan closes them, keeping their locks to the end of the
 * transaction, as the executor does. A fresh read (AwaFreshRead) scans what
 * the shared state holds now instead, at every isolation level, without a
 * predicate lock (docs/storage.md A.18); the statement's read
 * (awa_statement_read) is its snapshot in the same form.
 *
 * BRIN has no amgettuple, so the lookup on a child whose job_id index is
 * BRIN (docs/proposals/job_id_lookup.md §4: the ready entries; the receipts)
 * builds the index's bitmap (whole pages, of each range that may hold the
 * job or is not summarized), then reads each run of consecutive pages with a
 * TID range scan under the same snapshot, keeping the rows of the job (of
 * the attempt: its run_lease compared too) that the fresh read's filter
 * sees. A job's rows are read in block order; an attempt's newest first (the
 * last run first, each backward), since its receipt is nearly always in the
 * last pages written and the callers stop at the first row; before any of
 * that, the one tuple a hint names (awa_child_scan_hint), whose row, when it
 * is the attempt's, spares the bitmap.
 *
 * src/rel/scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/tidbitmap.h"
#include "storage/off.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/snapshot.h"

#include "src/compat.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

/*
 * The equality key on index's column att (int4 or int8) for value; false when
 * an int4 column cannot hold it (no row has it), the key then unset.
 */
bool
awa_int_key(ScanKey key, Relation index, AttrNumber att, int64 value)
{
	if (TupleDescAttr(RelationGetDescr(index), att - 1)->atttypid == INT8OID)
		ScanKeyInit(key, att, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(value));
	else if (value >= PG_INT32_MIN && value <= PG_INT32_MAX)
		ScanKeyInit(key, att, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum((int32) value));
	else
		return false;
	return true;
}

/*
 * The number of rel's column name (not dropped); InvalidAttrNumber when there
 * is none (a column of a later version than the catalog's).
 */
AttrNumber
awa_column_number_if(Relation rel, const char *name)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return att->attnum;
	}
	return InvalidAttrNumber;
}

/* The number of rel's column name (not dropped); an error when there is none. */
AttrNumber
awa_column_number(Relation rel, const char *name)
{
	AttrNumber	a = awa_column_number_if(rel, name);

	if (a != InvalidAttrNumber)
		return a;
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("column \"%s\" of relation \"%s\" does not exist",
					name, RelationGetRelationName(rel))));
	return InvalidAttrNumber;	/* keep compiler quiet */
}

/* Begins a scan of nkeys keys of heap by index (the caller opened both). */
void
awa_child_scan_begin(ChildScan *cs, Relation heap, Relation index, int nkeys)
{
	cs->heap = heap;
	cs->index = index;
	cs->scan = awa_index_beginscan(heap, index, GetActiveSnapshot(), nkeys);
	cs->slot = table_slot_create(heap, NULL);
	cs->filter = NULL;
	cs->none = false;
	cs->bitmap = false;
}

/*
 * The same, as a fresh read (awa_fresh_read_begin) rather than the
 * statement's; with fresh NULL, awa_child_scan_begin.
 */
void
awa_child_scan_begin_fresh(ChildScan *cs, Relation heap, Relation index, int nkeys,
						   const AwaFreshRead *fresh)
{
	if (fresh == NULL)
	{
		awa_child_scan_begin(cs, heap, index, nkeys);
		return;
	}
	cs->heap = heap;
	cs->index = index;
	cs->scan = awa_index_beginscan(heap, index, fresh->snapshot, nkeys);
	cs->slot = table_slot_create(heap, NULL);
	cs->filter = fresh->filter;
	cs->none = false;
	cs->bitmap = false;
}

/* bigint = bigint (pg_operator.dat; no macro of pg_operator_d.h names it) */
#define INT8_EQUAL_OPERATOR ((Oid) 410)

/*
 * The key of job_id on a BRIN index whose only key is a bigint job_id: its
 * equality's strategy is its opclass's (bloom 1, minmax 3), and the subtype is
 * named, as minmax looks its operator up by (column type, subtype).
 */
static void
brin_job_key(ScanKey key, Relation index, int64 job_id)
{
	StrategyNumber strategy;

	strategy = get_op_opfamily_strategy(INT8_EQUAL_OPERATOR, index->rd_opfamily[0]);
	if (strategy == InvalidStrategy)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" has no operator bigint = bigint",
						RelationGetRelationName(index))));
	ScanKeyEntryInitialize(key, 0, 1, strategy, INT8OID, InvalidOid,
						   F_INT8EQ, Int64GetDatum(job_id));
}

/*
 * Begins the bitmap mode of cs on heap and index (BRIN on job_id), unkeyed
 * (bitmap_key): the index's bitmap scan and the range scans are under the
 * fresh read's snapshot (SnapshotAny at SERIALIZABLE, so that neither takes a
 * predicate lock) or the active one. The bitmap scan is begun when a
 * bitmap is first built (a hint's tuple may spare it: its begin reads the
 * index's metapage) and kept for the next key; it and the index stay open
 * until awa_child_scan_end.
 */
static void
bitmap_begin(ChildScan *cs, Relation heap, Relation index, const AwaFreshRead *fresh)
{
	cs->heap = heap;
	cs->index = index;
	cs->slot = table_slot_create(heap, NULL);
	cs->filter = fresh != NULL ? fresh->filter : NULL;
	cs->none = false;
	cs->bitmap = true;
	cs->newest_first = false;
	cs->snapshot = fresh != NULL ? fresh->snapshot : GetActiveSnapshot();
	cs->job_att = awa_column_number(heap, "job_id");
	cs->lease_att = InvalidAttrNumber;
	cs->scan = NULL;			/* begun by the first bitmap_build */
	cs->hint_due = false;
	cs->bitmap_due = false;
	cs->runs = NULL;
	cs->nruns = 0;
	cs->runs_begun = 0;
	cs->range = NULL;
}

/* Ends the run being read, if any, and forgets the bitmap's runs. */
static void
bitmap_reset(ChildScan *cs)
{
	if (cs->range != NULL)
		table_endscan(cs->range);
	cs->range = NULL;
	if (cs->runs != NULL)
		pfree(cs->runs);
	cs->runs = NULL;
	cs->nruns = 0;
	cs->runs_begun = 0;
}

/* The runs of consecutive pages of tbm, into cs->runs in block order. */
static void
bitmap_runs(ChildScan *cs, TIDBitmap *tbm)
{
	AwaTbmIter *iter = awa_tbm_begin(tbm);
	int			cap = 0;
	BlockNumber b;

	while (awa_tbm_next(iter, &b))
	{
		if (cs->nruns > 0 && cs->runs[cs->nruns - 1].last + 1 == b)
		{
			cs->runs[cs->nruns - 1].last = b;
			continue;
		}
		if (cs->nruns == cap)
		{
			cap = cap == 0 ? 8 : cap * 2;
			cs->runs = cs->runs == NULL ? palloc(cap * sizeof(AwaPageRun))
				: repalloc(cs->runs, cap * sizeof(AwaPageRun));
		}
		cs->runs[cs->nruns].first = b;
		cs->runs[cs->nruns].last = b;
		cs->nruns++;
	}
	awa_tbm_end(iter);
}

/*
 * The bitmap's runs: the pages the index says may hold cs->job_id (whole
 * pages, of each range that may, or is not summarized).
 */
static void
bitmap_build(ChildScan *cs)
{
	ScanKeyData key;
	TIDBitmap  *tbm;

	/* due only once after bitmap_key, which reset the runs */
	Assert(cs->range == NULL && cs->runs == NULL);
	if (cs->scan == NULL)
		cs->scan = awa_index_beginscan_bitmap(cs->index, cs->snapshot, 1);
	brin_job_key(&key, cs->index, cs->job_id);
	index_rescan(cs->scan, &key, 1, NULL, 0);
	tbm = tbm_create(work_mem * 1024L, NULL);
	(void) index_getbitmap(cs->scan, tbm);
	bitmap_runs(cs, tbm);
	tbm_free(tbm);
}

/*
 * Keys the bitmap mode of cs on job_id. The bitmap is built when the rows
 * are first asked for (bitmap_next): after the tuple of a hint
 * (awa_child_scan_hint), and only when that was not the row.
 */
static void
bitmap_key(ChildScan *cs, int64 job_id)
{
	bitmap_reset(cs);
	cs->job_id = job_id;
	cs->hint_due = false;
	cs->bitmap_due = true;
}

/*
 * Begins the TID range scan of the hint's one tuple, as a run (under the
 * same snapshot, its row compared as the runs' are).
 */
static void
hint_begin(ChildScan *cs)
{
	cs->hint_due = false;
	cs->range = table_beginscan_tidrange(cs->heap, cs->snapshot, &cs->hint, &cs->hint);
}

/*
 * Begins the TID range scan of the bitmap's next run (the next in block
 * order, or newest first the one before); false when none is left.
 */
static bool
bitmap_next_run(ChildScan *cs)
{
	ItemPointerData mintid;
	ItemPointerData maxtid;
	AwaPageRun *run;

	if (cs->runs_begun == cs->nruns)
		return false;
	if (cs->newest_first)
		run = &cs->runs[cs->nruns - 1 - cs->runs_begun];
	else
		run = &cs->runs[cs->runs_begun];
	cs->runs_begun++;
	ItemPointerSet(&mintid, run->first, FirstOffsetNumber);
	ItemPointerSet(&maxtid, run->last, MaxOffsetNumber);
	cs->range = table_beginscan_tidrange(cs->heap, cs->snapshot, &mintid, &maxtid);
	return true;
}

/*
 * Whether the row in cs->slot is one the bitmap mode wants: the pages are
 * lossy, so its job_id, and for an attempt its run_lease, are compared; then
 * the fresh read's filter is applied (under SnapshotAny the range scans
 * return every version).
 */
static bool
bitmap_row_wanted(ChildScan *cs)
{
	bool		isnull;

	if (awa_get_int64(cs->slot, cs->job_att, &isnull) != cs->job_id || isnull)
		return false;
	if (cs->lease_att != InvalidAttrNumber &&
		(awa_get_int(cs->slot, cs->lease_att, &isnull) != cs->run_lease || isnull))
		return false;
	return cs->filter == NULL ||
		table_tuple_satisfies_snapshot(cs->heap, cs->slot, cs->filter);
}

/*
 * The next row wanted (into cs->slot) in bitmap mode: the runs in block order
 * and each forward, or newest first, the runs from the last and each backward.
 */
static bool
bitmap_next(ChildScan *cs)
{
	ScanDirection dir = cs->newest_first ? BackwardScanDirection : ForwardScanDirection;

	for (;;)
	{
		if (cs->range == NULL && cs->hint_due)
			hint_begin(cs);
		else if (cs->range == NULL && !bitmap_next_run(cs))
		{
			if (!cs->bitmap_due)
				return false;
			cs->bitmap_due = false;
			bitmap_build(cs);
			continue;
		}
		if (!table_scan_getnextslot_tidrange(cs->range, dir, cs->slot))
		{
			table_endscan(cs->range);
			cs->range = NULL;
			continue;
		}
		if (bitmap_row_wanted(cs))
			return true;
	}
}

/*
 * The BRIN index on (job_id) of heap, which has no btree for the lookup; an
 * error when it has none either. what names the btree wanted.
 */
static Relation
brin_job_index(Relation heap, const char *what)
{
	Relation	index = awa_open_brin_index(heap, "job_id");

	if (index == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("relation \"%s\" has no btree index on (%s) nor BRIN index on (job_id)",
						RelationGetRelationName(heap), what)));
	return index;
}

/*
 * Begins a fresh read (fresh NULL: the statement's) of heap's rows of job_id:
 * the one lookup every family keyed by a job shares (the caller opened heap;
 * awa_child_scan_end closes it and the index). By heap's btree on
 * (job_id, ...) when it has one, else by its BRIN index on (job_id) in bitmap
 * mode (docs/proposals/job_id_lookup.md §4), in block order; rows come
 * forward only.
 */
void
awa_child_scan_job(ChildScan *cs, Relation heap, int64 job_id, const AwaFreshRead *fresh)
{
	static const char *const cols[] = {"job_id"};
	Relation	index = awa_open_index_if(heap, 1, cols);
	ScanKeyData key;

	if (index != NULL)
	{
		awa_child_scan_begin_fresh(cs, heap, index, 1, fresh);
		(void) awa_int_key(&key, cs->index, 1, job_id); /* job_id is bigint */
		index_rescan(cs->scan, &key, 1, NULL, 0);
		return;
	}
	bitmap_begin(cs, heap, brin_job_index(heap, "job_id, ..."), fresh);
	bitmap_key(cs, job_id);
}

/*
 * Begins a fresh read (fresh NULL: the statement's) of heap's rows of the
 * attempt (job_id, run_lease): a receipt or a closure, in a claim child. By
 * heap's btree on (job_id, run_lease, ...) when it has one (the closures; the
 * receipts of a catalog before the receipts' BRIN index), else by its BRIN
 * index on (job_id) in bitmap mode, each row's job_id and run_lease compared,
 * newest page first: the receipt of an attempt being closed is nearly always
 * in the last pages written, and the callers stop at the first row. Keyed for
 * the next attempt by awa_child_scan_rekey; rows are asked for forward.
 */
void
awa_child_scan_attempt(ChildScan *cs, Relation heap, int64 job_id, int64 run_lease,
					   const AwaFreshRead *fresh)
{
	static const char *const cols[] = {"job_id", "run_lease"};
	Relation	index = awa_open_index_if(heap, 2, cols);

	if (index != NULL)
		awa_child_scan_begin_fresh(cs, heap, index, 2, fresh);
	else
	{
		bitmap_begin(cs, heap, brin_job_index(heap, "job_id, run_lease, ..."), fresh);
		cs->newest_first = true;
		cs->lease_att = awa_column_number(heap, "run_lease");
	}
	awa_child_scan_rekey(cs, job_id, run_lease);
}

/*
 * Keys a scan awa_child_scan_attempt began for another attempt, on the same
 * heap and index: in index mode a rescan on the two keys (none when the
 * lease does not fit an int run_lease, before 0.9), in bitmap mode the
 * index's bitmap of job_id, built again.
 */
void
awa_child_scan_rekey(ChildScan *cs, int64 job_id, int64 run_lease)
{
	ScanKeyData keys[2];

	if (cs->bitmap)
	{
		Assert(cs->lease_att != InvalidAttrNumber);
		cs->run_lease = run_lease;
		bitmap_key(cs, job_id);
		return;
	}
	cs->none = !awa_int_key(&keys[0], cs->index, 1, job_id) ||
		!awa_int_key(&keys[1], cs->index, 2, run_lease);
	if (!cs->none)
		index_rescan(cs->scan, keys, 2, NULL, 0);
}

/*
 * Reads the tuple at tid first, for the attempt the scan is keyed on, when it
 * is in bitmap mode (src/dataplane/receipthints.c: where this backend's claim
 * wrote the attempt's receipt): the row there is taken only when it is the
 * attempt's and seen, as a row of the bitmap's pages; else the bitmap is read
 * as without it. In index mode the index is read as before.
 */
void
awa_child_scan_hint(ChildScan *cs, const ItemPointerData *tid)
{
	if (!cs->bitmap)
		return;
	cs->hint = *tid;
	cs->hint_due = true;
}

/*
 * The scan's next row (into cs->slot) in direction dir, skipping what the
 * filter of a fresh read does not see: under SnapshotAny the index returns
 * every version of a row (each member of a HOT chain in turn), and the one
 * the snapshot of now sees is kept. In bitmap mode dir is forward, the order
 * the scan's own (a job's rows in block order, an attempt's newest first).
 */
bool
awa_child_scan_next(ChildScan *cs, ScanDirection dir)
{
	if (cs->none)
		return false;
	if (cs->bitmap)
	{
		if (!ScanDirectionIsForward(dir))
			elog(ERROR, "awa_bgw: rows by a BRIN index are asked for forward only");
		return bitmap_next(cs);
	}
	while (index_getnext_slot(cs->scan, dir, cs->slot))
	{
		if (cs->filter == NULL ||
			table_tuple_satisfies_snapshot(cs->heap, cs->slot, cs->filter))
			return true;
	}
	return false;
}

/*
 * The read of snapshot: the scans get it, or at SERIALIZABLE SnapshotAny,
 * which PostgreSQL never predicate-locks (predicate.c,
 * SerializationNeededForRead: only MVCC snapshots), with it as their filter
 * (table_tuple_satisfies_snapshot takes no predicate lock either).
 */
static void
read_under(AwaFreshRead *read, Snapshot snapshot)
{
	if (IsolationIsSerializable())
	{
		read->snapshot = SnapshotAny;
		read->filter = snapshot;
	}
	else
	{
		read->snapshot = snapshot;
		read->filter = NULL;
	}
}

/*
 * Begins a fresh read: a snapshot of now, taken after whatever locks the
 * caller holds (a row committed before them is seen), read without a
 * predicate lock at SERIALIZABLE (read_under). The snapshot stays registered
 * until awa_fresh_read_end.
 */
void
awa_fresh_read_begin(AwaFreshRead *fresh)
{
	fresh->registered = RegisterSnapshot(GetLatestSnapshot());
	read_under(fresh, fresh->registered);
}

/*
 * The statement's read, in the same form: its active snapshot, without a
 * predicate lock at SERIALIZABLE (read_under). Nothing is registered: it
 * has no end.
 */
void
awa_statement_read(AwaFreshRead *read)
{
	read->registered = NULL;
	read_under(read, GetActiveSnapshot());
}

/*
 * A fresh read where the transaction's isolation level needs one: into buf at
 * REPEATABLE READ and SERIALIZABLE (returned); NULL at READ COMMITTED, whose
 * readers keep their statement's snapshot.
 */
const AwaFreshRead *
awa_fresh_read_begin_for_level(AwaFreshRead *buf)
{
	if (!IsolationUsesXactSnapshot())
		return NULL;
	awa_fresh_read_begin(buf);
	return buf;
}

/* The end of a fresh read (nothing for NULL). */
void
awa_fresh_read_end(const AwaFreshRead *fresh)
{
	if (fresh != NULL)
		UnregisterSnapshot(fresh->registered);
}

/* Whether a row a fresh read's scan returned (into slot) is seen now. */
bool
awa_fresh_row_visible(const AwaFreshRead *fresh, Relation rel, TupleTableSlot *slot)
{
	return fresh->filter == NULL || table_tuple_satisfies_snapshot(rel, slot, fresh->filter);
}

/* ends the scan; the locks stay to the end of the transaction */
void
awa_child_scan_end(ChildScan *cs)
{
	if (cs->bitmap)
		bitmap_reset(cs);
	if (cs->scan != NULL)
		index_endscan(cs->scan);
	ExecDropSingleTupleTableSlot(cs->slot);
	index_close(cs->index, NoLock);
	table_close(cs->heap, NoLock);
}

/* The bigint column att of the slot's row; 0 (and *isnull) when NULL. */
int64
awa_get_int64(TupleTableSlot *slot, AttrNumber att, bool *isnull)
{
	Datum		d = slot_getattr(slot, att, isnull);

	return *isnull ? 0 : DatumGetInt64(d);
}

/* The int column att of the slot's row; 0 (and *isnull) when NULL. */
int32
awa_get_int32(TupleTableSlot *slot, AttrNumber att, bool *isnull)
{
	Datum		d = slot_getattr(slot, att, isnull);

	return *isnull ? 0 : DatumGetInt32(d);
}

/*
 * The integer column att of the slot's row, int4 or int8 by the slot's
 * descriptor (run_lease is either, by family); 0 (and *isnull) when NULL.
 */
int64
awa_get_int(TupleTableSlot *slot, AttrNumber att, bool *isnull)
{
	if (TupleDescAttr(slot->tts_tupleDescriptor, att - 1)->atttypid == INT8OID)
		return awa_get_int64(slot, att, isnull);
	return awa_get_int32(slot, att, isnull);
}
