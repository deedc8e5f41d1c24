/*-------------------------------------------------------------------------
 *
 * inserter.c
 *	  Direct inserts into one ring child (RowInserter), for the C hot paths
 *	  (src/dataplane/claim.c, complete.c and enqueue.c): the heap tuples and
 *	  their index entries, as an INSERT into the child would write them.
 *
 * The callers give every column (defaults are theirs to compute); the ring
 * children have no triggers. Each row is checked as an INSERT into the child
 * checks it: NOT NULL and every CHECK (ExecConstraints; ours are the fixed
 * CHECKs of an outcome or a state, and a DBA may add more) and the partition
 * bound (ExecPartitionCheck), with PostgreSQL's own SQLSTATEs and messages.
 * The ResultRelInfo is in no range table (index 0): the checks' error paths
 * then describe the row without asking for a range table entry.
 *
 * The rows put are held (copied into the inserter's own slots, emptied by
 * each write) and written when AWA_INSERT_BATCH rows or AWA_INSERT_BYTES of
 * them are held, and at awa_row_inserter_end: one row by heap_insert, more by
 * heap_multi_insert, which writes one WAL record per heap page instead of one
 * per row (a claim, completion or enqueue of 32 jobs). So a caller cannot
 * read the rows it put before awa_row_inserter_end; none needs to (each puts
 * its rows in one loop, reading nothing in between).
 *
 * src/rel/inserter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "utils/rel.h"

#include "src/compat.h"
#include "src/rel/inserter.h"

/* Begins the inserts into rel (opened by the caller with RowExclusiveLock). */
void
awa_row_inserter_begin(RowInserter *ri, Relation rel)
{
	memset(ri, 0, sizeof(RowInserter));
	ri->rel = rel;
	ri->estate = CreateExecutorState();
	ri->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(ri->rri, rel, 0, NULL, 0);
	ExecOpenIndices(ri->rri, false);
}

/* the rows held: the heap tuples, then each one's index entries */
static void
row_inserter_flush(RowInserter *ri)
{
	int			i;

	if (ri->held == 1)
		simple_table_tuple_insert(ri->rel, ri->slots[0]);
	else if (ri->held > 1)
		table_multi_insert(ri->rel, ri->slots, ri->held, GetCurrentCommandId(true), 0, NULL);
	for (i = 0; i < ri->held; i++)
	{
		awa_insert_index_tuples(ri->rri, ri->slots[i], ri->estate);
		ExecClearTuple(ri->slots[i]);
	}
	ri->held = 0;
	ri->held_bytes = 0;
}

void
awa_row_inserter_put(RowInserter *ri, Datum *values, bool *nulls)
{
	TupleDesc	desc = RelationGetDescr(ri->rel);
	TupleTableSlot *slot;

	if (ri->held == AWA_INSERT_BATCH || ri->held_bytes >= AWA_INSERT_BYTES)
		row_inserter_flush(ri);
	if (ri->slots[ri->held] == NULL)
		ri->slots[ri->held] = table_slot_create(ri->rel, NULL);
	slot = ri->slots[ri->held++];
	memcpy(slot->tts_values, values, desc->natts * sizeof(Datum));
	memcpy(slot->tts_isnull, nulls, desc->natts * sizeof(bool));
	ExecStoreVirtualTuple(slot);
	/* the slot's own copy: the caller reuses its arrays for the next row */
	ExecMaterializeSlot(slot);
	/* what an INSERT into the child checks, before anything is written */
	if (desc->constr != NULL)
		ExecConstraints(ri->rri, slot, ri->estate);
	if (ri->rel->rd_rel->relispartition)
		ExecPartitionCheck(ri->rri, slot, ri->estate, true);
	ResetPerTupleExprContext(ri->estate);
	ri->held_bytes += ExecFetchSlotHeapTuple(slot, false, NULL)->t_len;
}

void
awa_row_inserter_end(RowInserter *ri)
{
	int			i;

	row_inserter_flush(ri);
	for (i = 0; i < AWA_INSERT_BATCH && ri->slots[i] != NULL; i++)
		ExecDropSingleTupleTableSlot(ri->slots[i]);
	ExecCloseIndices(ri->rri);
	FreeExecutorState(ri->estate);
}
