/*-------------------------------------------------------------------------
 *
 * summarize.c
 *	  The summaries of the ready children's BRIN index on job_id (0.10,
 *	  tables/job_id_brin.sql, docs/proposals/job_id_lookup.md §2-§3):
 *	  awa_internal.summarize_ready_ranges(), a step of the worker, summarizes
 *	  the block ranges that filled since its last run, so that a lookup by job
 *	  id (rel/scan.c) reads the ranges its id may be in and a short
 *	  unsummarized tail, not a whole child.
 *
 * BRIN writes nothing when a row goes into a range not yet summarized, and
 * an update of the summary (about 2 KB for bloom) for nearly every row into
 * one that is. So a range is summarized only once it is full: in the child of
 * the current queue slot, only ranges wholly below the size the child had at
 * the previous run (a bulk extension leaves empty pages below the end, which
 * the inserts of the next moments fill); a sealed slot's child, whole. Each
 * child's first range not yet summarized is remembered by its relfilenode
 * (a prune's TRUNCATE gives a new one), so a run where nothing filled reads
 * sixteen sizes and writes nothing.
 *
 * Locks: brin_summarize_range takes SHARE UPDATE EXCLUSIVE on the child and
 * its index, waiting. It is called only once both are held, taken
 * conditionally here: a child that autovacuum, a prune or a rebase holds is
 * skipped until the next run. So the step waits for no lock (no edge in
 * docs/storage.md A.9's order), and a prune waits for one summarize at most.
 *
 * src/dataplane/summarize.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/brin.h"
#include "access/table.h"
#include "fmgr.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/fmgrprotos.h"
#include "utils/rel.h"

#include "src/compat.h"
#include "src/dataplane/probes.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_summarize_ready_ranges);

/* what a backend remembers of each ready child between runs */
typedef struct ChildMemory
{
	Oid			filenode;		/* the child's storage when remembered */
	BlockNumber prev_blocks;	/* its size at the previous run */
	BlockNumber next_range;		/* the first block of the first range not
								 * summarized by this backend */
} ChildMemory;

static ChildMemory memory[AWA_QUEUE_SLOTS];

/*
 * The ranges of child slot s to summarize now, [from, to), for a child of
 * blocks pages; current: the queue ring's current slot.
 */
static void
due_ranges(ChildMemory *m, Oid filenode, BlockNumber blocks, BlockNumber per_range,
		   bool current, BlockNumber *from, BlockNumber *to)
{
	if (m->filenode != filenode)
	{
		m->filenode = filenode;
		m->prev_blocks = 0;
		m->next_range = 0;
	}
	*from = m->next_range;
	if (current)
		*to = (Min(m->prev_blocks, blocks) / per_range) * per_range;
	else
		*to = blocks;
	m->prev_blocks = blocks;
}

/*
 * Summarizes the due ranges of ready child s, if its BRIN index on job_id
 * and both locks can be had now; the ranges summarized.
 */
static int64
summarize_child(Oid nsp, int s, bool current)
{
	static const char *const cols[] = {"job_id"};
	Relation	heap = awa_open_table(nsp, "ready_entries", s);
	Relation	index = awa_open_brin_index(heap, cols[0]);
	BlockNumber per_range;
	BlockNumber from;
	BlockNumber to;
	BlockNumber r;
	int64		done = 0;

	if (index == NULL ||
		!ConditionalLockRelationOid(RelationGetRelid(heap), ShareUpdateExclusiveLock) ||
		!ConditionalLockRelationOid(RelationGetRelid(index), ShareUpdateExclusiveLock))
	{
		if (index != NULL)
			index_close(index, NoLock);
		table_close(heap, NoLock);
		return 0;
	}
	per_range = BrinGetPagesPerRange(index);
	due_ranges(&memory[s], awa_relation_file_number(heap), RelationGetNumberOfBlocks(heap),
			   per_range, current, &from, &to);
	for (r = from; r < to; r += per_range)
		done += DatumGetInt32(DirectFunctionCall2(brin_summarize_range,
												  ObjectIdGetDatum(RelationGetRelid(index)),
												  Int64GetDatum((int64) r)));
	if (to > from)
		memory[s].next_range = to;
	index_close(index, NoLock);
	table_close(heap, NoLock);
	return done;
}

/*
 * awa_internal.summarize_ready_ranges() RETURNS bigint
 *
 * One run: the ranges of every ready child that filled since this backend's
 * previous run (the worker's step; by hand, a first call only reads the
 * sizes of the current slot's child). Returns the ranges summarized.
 */
Datum
awa_summarize_ready_ranges(PG_FUNCTION_ARGS)
{
	Oid			nsp = awa_namespace();
	int32		current;
	int64		generation;
	int64		done = 0;
	int			s;

	if (!awa_ring_cursor_read(nsp, "queue", &current, &generation))
		PG_RETURN_INT64(0);
	for (s = 0; s < AWA_QUEUE_SLOTS; s++)
		done += summarize_child(nsp, s, s == current);
	PG_RETURN_INT64(done);
}
