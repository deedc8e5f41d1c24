/*-------------------------------------------------------------------------
 *
 * scan.h
 *	  Reading one relation of the hot paths (scan.c): a column by name, one
 *	  index scan on one ring child, the integers of its rows.
 *
 * src/rel/scan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_SCAN_H
#define AWA_SCAN_H

#include "access/genam.h"
#include "executor/tuptable.h"
#include "utils/relcache.h"

/* one index scan on one ring child */
typedef struct ChildScan
{
	Relation	heap;
	Relation	index;
	IndexScanDesc scan;
	TupleTableSlot *slot;
} ChildScan;

extern AttrNumber awa_column_number(Relation rel, const char *name);
extern void awa_child_scan_begin(ChildScan *cs, Relation heap, Relation index, int nkeys);
extern void awa_child_scan_end(ChildScan *cs);
extern int64 awa_get_int64(TupleTableSlot *slot, AttrNumber att, bool *isnull);
extern int32 awa_get_int32(TupleTableSlot *slot, AttrNumber att, bool *isnull);

#endif							/* AWA_SCAN_H */
