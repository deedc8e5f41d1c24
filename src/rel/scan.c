/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Reading one relation of the hot paths: a column's number by name, the
 *	  equality key on an integer column of either width, one index scan on one
 *	  ring child (ChildScan), and the integers of the rows it returns.
 *
 * The scans are direct (index_beginscan under the active snapshot, no SPI,
 * no planning); the caller opens the heap and its index (src/rel/relcache.c)
 * and the scan closes them, keeping their locks to the end of the
 * transaction, as the executor does. A fresh read (AwaFreshRead) scans what
 * the shared state holds now instead, at every isolation level, without a
 * predicate lock (docs/storage.md A.18).
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
#include "utils/fmgroids.h"
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
}

/*
 * Begins a fresh read (fresh NULL: the statement's) of heap's rows of job_id,
 * by its btree on (job_id, ...): the one lookup every family keyed by a job
 * shares (the caller opened heap; awa_child_scan_end closes both).
 */
void
awa_child_scan_job(ChildScan *cs, Relation heap, int64 job_id, const AwaFreshRead *fresh)
{
	static const char *const cols[] = {"job_id"};
	ScanKeyData key;

	awa_child_scan_begin_fresh(cs, heap, awa_open_index(heap, 1, cols), 1, fresh);
	(void) awa_int_key(&key, cs->index, 1, job_id);	/* job_id is bigint */
	index_rescan(cs->scan, &key, 1, NULL, 0);
}

/*
 * The scan's next row (into cs->slot) in direction dir, skipping what the
 * filter of a fresh read does not see: under SnapshotAny the index returns
 * every version of a row (each member of a HOT chain in turn), and the one
 * the snapshot of now sees is kept.
 */
bool
awa_child_scan_next(ChildScan *cs, ScanDirection dir)
{
	while (index_getnext_slot(cs->scan, dir, cs->slot))
	{
		if (cs->filter == NULL ||
			table_tuple_satisfies_snapshot(cs->heap, cs->slot, cs->filter))
			return true;
	}
	return false;
}

/*
 * Begins a fresh read: a snapshot of now, taken after whatever locks the
 * caller holds (a row committed before them is seen). At SERIALIZABLE the
 * scans get SnapshotAny, which PostgreSQL never predicate-locks (predicate.c,
 * SerializationNeededForRead: only MVCC snapshots), and the snapshot of now
 * as their filter (table_tuple_satisfies_snapshot takes no predicate lock
 * either). The snapshot stays registered until awa_fresh_read_end.
 */
void
awa_fresh_read_begin(AwaFreshRead *fresh)
{
	fresh->registered = RegisterSnapshot(GetLatestSnapshot());
	if (IsolationIsSerializable())
	{
		fresh->snapshot = SnapshotAny;
		fresh->filter = fresh->registered;
	}
	else
	{
		fresh->snapshot = fresh->registered;
		fresh->filter = NULL;
	}
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
