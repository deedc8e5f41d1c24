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
 * The expressions of those checks are planned once per backend and relation
 * (PlannedChecks), not once per call as an INSERT plans them per statement:
 * reading each CHECK's node tree back from text and planning it was most of
 * what a completion's insert cost (issue 33: a completion's closure has four
 * CHECKs). A plan kept is used while the relation's CHECKs read the same
 * text and its partition bound is equal, and only for expressions calling
 * built-in functions alone (a user's function may be replaced under the same
 * text: such checks are kept unplanned, and planned by PostgreSQL at each
 * call, as an INSERT plans them); each inserter initializes its own copy.
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
#include "access/transam.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "partitioning/partdesc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/partcache.h"
#include "utils/rel.h"

#include "src/compat.h"
#include "src/rel/inserter.h"

/*
 * the relations whose checks a backend keeps planned, at most: when full (a
 * session that saw many installs of the extension), all are forgotten
 */
#define AWA_PLANNED_CHECKS_MAX 1024

/* one relation's CHECKs and partition bound, planned (all in cxt) */
typedef struct PlannedChecks
{
	Oid			relid;			/* hash key */
	MemoryContext cxt;			/* NULL: nothing kept */
	bool		usable;			/* all built in: the plans below are used */
	int			ncheck;
	char	  **ccbin;			/* the text each was read from; NULL: not enforced */
	Expr	  **checks;			/* planned when usable; NULL: not enforced */
	List	   *bound;			/* the partition qual as the relcache gave it */
	List	   *bound_planned;
} PlannedChecks;

static HTAB *planned_checks_by_rel = NULL;

static bool
user_function(Oid func_id, void *context)
{
	return func_id >= FirstNormalObjectId;
}

/* whether node calls a function that is not built in */
static bool
calls_user_function(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, user_function, context))
		return true;
	return expression_tree_walker(node, calls_user_function, context);
}

/* whether pc was read from constr's CHECKs and this partition bound */
static bool
planned_from(const PlannedChecks *pc, TupleConstr *constr, int ncheck, List *bound)
{
	int			i;

	if (pc->cxt == NULL || pc->ncheck != ncheck || !equal(pc->bound, bound))
		return false;
	for (i = 0; i < ncheck; i++)
	{
		const char *text = awa_check_enforced(constr->check[i]) ? constr->check[i].ccbin : NULL;

		if ((text == NULL) != (pc->ccbin[i] == NULL) ||
			(text != NULL && strcmp(text, pc->ccbin[i]) != 0))
			return false;
	}
	return true;
}

/*
 * Reads constr's CHECKs and the bound into pc, in a new context of its own,
 * and plans them unless one calls a function that is not built in (then pc
 * keeps their text only, so that the next call knows without reading them).
 */
static void
plan_checks(PlannedChecks *pc, TupleConstr *constr, int ncheck, List *bound)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "awa_bgw planned checks",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	int			i;

	pc->ncheck = ncheck;
	pc->ccbin = palloc0(Max(ncheck, 1) * sizeof(char *));
	pc->checks = palloc0(Max(ncheck, 1) * sizeof(Expr *));
	pc->bound = copyObject(bound);
	pc->bound_planned = NIL;
	pc->usable = !calls_user_function((Node *) bound, NULL);
	for (i = 0; i < ncheck; i++)
		if (awa_check_enforced(constr->check[i]))
		{
			pc->ccbin[i] = pstrdup(constr->check[i].ccbin);
			pc->checks[i] = (Expr *) stringToNode(pc->ccbin[i]);
			pc->usable = pc->usable && !calls_user_function((Node *) pc->checks[i], NULL);
		}
	for (i = 0; pc->usable && i < ncheck; i++)
		if (pc->checks[i] != NULL)
			pc->checks[i] = expression_planner(pc->checks[i]);
	if (pc->usable)
		pc->bound_planned = (List *) expression_planner((Expr *) copyObject(bound));
	MemoryContextSwitchTo(old);
	/* kept only once whole: an error above leaves nothing half made */
	MemoryContextSetParent(cxt, CacheMemoryContext);
	pc->cxt = cxt;
}

/* forgets every relation's plans (the table is full) */
static void
forget_planned_checks(void)
{
	HASH_SEQ_STATUS seq;
	PlannedChecks *pc;

	hash_seq_init(&seq, planned_checks_by_rel);
	while ((pc = hash_seq_search(&seq)) != NULL)
	{
		if (pc->cxt != NULL)
			MemoryContextDelete(pc->cxt);
		(void) hash_search(planned_checks_by_rel, &pc->relid, HASH_REMOVE, NULL);
	}
}

/* rel's planned checks, read again when they changed; NULL: none to use */
static PlannedChecks *
planned_checks(Relation rel)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;
	int			ncheck = constr != NULL ? constr->num_check : 0;
	List	   *bound = rel->rd_rel->relispartition ? RelationGetPartitionQual(rel) : NIL;
	PlannedChecks *pc;
	Oid			relid = RelationGetRelid(rel);
	bool		found;

	if ((ncheck == 0 && bound == NIL) ||
		(constr != NULL && awa_has_virtual_columns(constr)))
		return NULL;
	if (planned_checks_by_rel == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(PlannedChecks);
		ctl.hcxt = CacheMemoryContext;
		planned_checks_by_rel = hash_create("awa_bgw planned checks", 64, &ctl,
											HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	pc = hash_search(planned_checks_by_rel, &relid, HASH_FIND, NULL);
	if (pc == NULL)
	{
		if (hash_get_num_entries(planned_checks_by_rel) >= AWA_PLANNED_CHECKS_MAX)
			forget_planned_checks();
		pc = hash_search(planned_checks_by_rel, &relid, HASH_ENTER, &found);
		pc->cxt = NULL;
	}
	if (!planned_from(pc, constr, ncheck, bound))
	{
		if (pc->cxt != NULL)
			MemoryContextDelete(pc->cxt);
		pc->cxt = NULL;
		plan_checks(pc, constr, ncheck, bound);
	}
	return pc->usable ? pc : NULL;
}

/*
 * Gives rri the states of rel's checks from their kept plans (copies: a plan
 * replaced while this inserter runs stays valid for it); without plans kept,
 * ExecConstraints and ExecPartitionCheck build them as for an INSERT.
 */
static void
init_checks(ResultRelInfo *rri, Relation rel, EState *estate)
{
	PlannedChecks *pc = planned_checks(rel);
	MemoryContext old;
	int			i;

	if (pc == NULL)
		return;
	old = MemoryContextSwitchTo(estate->es_query_cxt);
	if (pc->ncheck > 0)
	{
		ExprState **states = palloc0(pc->ncheck * sizeof(ExprState *));

		for (i = 0; i < pc->ncheck; i++)
			if (pc->checks[i] != NULL)
				states[i] = ExecInitExpr(copyObject(pc->checks[i]), NULL);
		awa_rri_checks(rri) = states;
	}
	if (pc->bound_planned != NIL)
		rri->ri_PartitionCheckExpr = ExecInitCheck(copyObject(pc->bound_planned), NULL);
	MemoryContextSwitchTo(old);
}

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
	init_checks(ri->rri, rel, ri->estate);
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
		if (ri->tids != NULL)
			ri->tids[ri->written + i] = ri->slots[i]->tts_tid;
		ExecClearTuple(ri->slots[i]);
	}
	ri->written += ri->held;
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
