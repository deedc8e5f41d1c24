/*-------------------------------------------------------------------------
 *
 * inserter.h
 *	  Direct inserts into one ring child, batched (inserter.c).
 *
 * src/rel/inserter.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_INSERTER_H
#define AWA_INSERTER_H

#include "executor/tuptable.h"
#include "utils/relcache.h"

/* rows, and bytes of them, an inserter holds before it writes them together */
#define AWA_INSERT_BATCH 64
#define AWA_INSERT_BYTES (1024 * 1024)

typedef struct RowInserter
{
	Relation	rel;
	struct EState *estate;
	struct ResultRelInfo *rri;
	int			held;			/* rows in slots[] not yet written */
	Size		held_bytes;		/* their heap tuples' length */
	ItemPointerData *tids;		/* NULL, or where each row's TID goes once it
								 * is written, in the order put (the caller
								 * sets it after awa_row_inserter_begin) */
	int			written;		/* rows written */
	TupleTableSlot *slots[AWA_INSERT_BATCH];	/* made as needed */
} RowInserter;

extern void awa_row_inserter_begin(RowInserter *ri, Relation rel);
extern void awa_row_inserter_put(RowInserter *ri, Datum *values, bool *nulls);
extern void awa_row_inserter_end(RowInserter *ri);

#endif							/* AWA_INSERTER_H */
