/*-------------------------------------------------------------------------
 *
 * scan.c
 *	  Reading one relation of the hot paths: a column's number by name, one
 *	  index scan on one ring child (ChildScan), and the integers of the rows
 *	  it returns.
 *
 * The scans are direct (index_beginscan under the active snapshot, no SPI,
 * no planning); the caller opens the heap and its index (src/rel/relcache.c)
 * and the scan closes them, keeping their locks to the end of the
 * transaction, as the executor does.
 *
 * src/rel/scan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "src/compat.h"
#include "src/rel/scan.h"

/* The number of rel's column name (not dropped); an error when there is none. */
AttrNumber
awa_column_number(Relation rel, const char *name)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return att->attnum;
	}
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
