/*-------------------------------------------------------------------------
 *
 * summarize.c
 *	  The summaries of the BRIN indexes on job_id of the ready children
 *	  (0.10, tables/job_id_brin.sql, docs/storage.md A.21) and of the
 *	  receipts' children (tables/receipt_brin.sql, A.22):
 *	  awa_internal.summarize_job_id_ranges(), a step of the worker,
 *	  summarizes the block ranges that are done filling, so that a lookup by
 *	  job id (rel/scan.c) reads the ranges its id may be in and a short
 *	  unsummarized tail, not a whole child.
 *
 * BRIN writes nothing when a row goes into a range not yet summarized, and
 * an update of the summary (about 1-2 KB for bloom) for nearly every row into
 * one that is. So a range is summarized only once it is done filling: in the
 * child of its ring's current slot, once every page of it and of the range
 * after it holds a row and none of its pages was written for a run
 * (range_done); a sealed slot's child, whole (rows go only into the current
 * slot's child of both families). Each child's first range not yet
 * summarized is remembered by its relfilenode (a prune's TRUNCATE gives a
 * new one), so a run where nothing filled reads a size per child and a few
 * pages, and writes nothing.
 *
 * Locks: every lock is tried, never waited for: the ring's ledger (its
 * cursor) and the child ACCESS SHARE, then, since brin_summarize_range takes
 * SHARE UPDATE EXCLUSIVE on the child and its index waiting, both of those
 * before it is called. A ring whose ledger, or a child that autovacuum, a
 * prune, a rebase or an outsider holds is skipped until the next run. So the
 * step waits for no lock (no edge in docs/storage.md A.9's order; t/001 locks
 * a ledger), and a prune waits for one summarize at most.
 *
 * src/dataplane/summarize.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/brin.h"
#include "access/table.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/fmgrprotos.h"
#include "utils/rel.h"

#include "src/compat.h"
#include "src/dataplane/probes.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_summarize_job_id_ranges);

/* what a backend remembers of each child between runs */
typedef struct ChildMemory
{
	Oid			filenode;		/* the child's storage when remembered */
	BlockNumber next_range;		/* the first block of the first range not
								 * summarized by this backend */
} ChildMemory;

/* the families whose children have a BRIN index on job_id, and their rings */
typedef struct BrinFamily
{
	const char *table;
	const char *ring;
	int			slots;
} BrinFamily;

static const BrinFamily families[] = {
	{"ready_entries", "queue", AWA_QUEUE_SLOTS},
	{"lease_claims", "claim", AWA_CLAIM_SLOTS},
};

#define NFAMILIES lengthof(families)
#define MAX_SLOTS Max(AWA_QUEUE_SLOTS, AWA_CLAIM_SLOTS)

static ChildMemory memory[NFAMILIES][MAX_SLOTS];

/*
 * The WAL insert position at the start of this backend's last two runs
 * ([0] the older): a page of the current child last written before marks[0]
 * has been left alone for a whole run.
 */
static XLogRecPtr marks[2];

/*
 * Whether every page of heap in [from, to) holds a row (a page added by a
 * bulk extension and not reached yet is new, or empty), and, with quiet_before
 * valid, was last written before it.
 */
static bool
pages_settled(Relation heap, BlockNumber from, BlockNumber to, XLogRecPtr quiet_before)
{
	BlockNumber b;

	for (b = from; b < to; b++)
	{
		Buffer		buf = ReadBufferExtended(heap, MAIN_FORKNUM, b, RBM_NORMAL, NULL);
		Page		page;
		bool		settled;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		settled = !PageIsNew(page) && PageGetMaxOffsetNumber(page) > 0 &&
			(XLogRecPtrIsInvalid(quiet_before) || PageGetLSN(page) < quiet_before);
		UnlockReleaseBuffer(buf);
		if (!settled)
			return false;
	}
	return true;
}

/*
 * Whether the range of heap at r is done filling: in a sealed slot's child,
 * always; in its ring's current slot's, once every page of it and of the next range
 * holds a row and no page of it was written since before this backend's
 * previous run. The inserters fill the pages the free-space map hands out
 * about in block order, each backend its own page until it is full, so a
 * range is behind them once a whole range after it has been started and
 * none of them has written there for a run; sizes alone tell nothing (a
 * bulk extension adds up to hundreds of empty pages at once), and a backend
 * that fell behind the others may still be filling a page of it.
 */
static bool
range_done(Relation heap, BlockNumber r, BlockNumber per_range, BlockNumber blocks,
		   bool current)
{
	if (r >= blocks)
		return false;
	if (!current)
		return true;
	return r + 2 * per_range <= blocks && !XLogRecPtrIsInvalid(marks[0]) &&
		pages_settled(heap, r, r + per_range, marks[0]) &&
		pages_settled(heap, r + per_range, r + 2 * per_range, InvalidXLogRecPtr);
}

/*
 * Whether relation name of schema nsp is held ACCESS SHARE now, taken
 * without waiting (to the end of the transaction, as an open would).
 */
static bool
try_share(Oid nsp, const char *name)
{
	Oid			relid = awa_relid(nsp, name);

	return OidIsValid(relid) && ConditionalLockRelationOid(relid, AccessShareLock);
}

/*
 * Summarizes the ranges of family f's child s that are done filling and not
 * yet summarized, if it has a BRIN index on job_id and both locks can be had
 * now; the ranges summarized.
 */
static int64
summarize_child(Oid nsp, int f, int s, bool current)
{
	static const char *const cols[] = {"job_id"};
	Relation	heap;
	Relation	index;
	ChildMemory *m = &memory[f][s];
	BlockNumber per_range;
	BlockNumber blocks;
	int64		done = 0;
	char		name[NAMEDATALEN];

	snprintf(name, sizeof(name), "%s_%d", families[f].table, s);
	if (!try_share(nsp, name))
		return 0;
	heap = awa_open_table(nsp, families[f].table, s);
	index = awa_open_brin_index(heap, cols[0]);
	if (index == NULL ||
		!ConditionalLockRelationOid(RelationGetRelid(heap), ShareUpdateExclusiveLock) ||
		!ConditionalLockRelationOid(RelationGetRelid(index), ShareUpdateExclusiveLock))
	{
		if (index != NULL)
			index_close(index, NoLock);
		table_close(heap, NoLock);
		return 0;
	}
	if (m->filenode != awa_relation_file_number(heap))
	{
		m->filenode = awa_relation_file_number(heap);
		m->next_range = 0;
	}
	per_range = BrinGetPagesPerRange(index);
	blocks = RelationGetNumberOfBlocks(heap);
	for (; range_done(heap, m->next_range, per_range, blocks, current);
		 m->next_range += per_range)
		done += DatumGetInt32(DirectFunctionCall2(brin_summarize_range,
												  ObjectIdGetDatum(RelationGetRelid(index)),
												  Int64GetDatum((int64) m->next_range)));
	index_close(index, NoLock);
	table_close(heap, NoLock);
	return done;
}

/*
 * awa_internal.summarize_job_id_ranges() RETURNS bigint
 *
 * One run: the ranges of every child with a BRIN index on job_id that are
 * done filling and that this backend has not summarized (the worker's step;
 * the tests call it by hand). Returns the ranges summarized.
 */
Datum
awa_summarize_job_id_ranges(PG_FUNCTION_ARGS)
{
	Oid			nsp = awa_namespace();
	int64		done = 0;
	int			f;

	marks[0] = marks[1];
	marks[1] = GetXLogInsertRecPtr();
	for (f = 0; f < (int) NFAMILIES; f++)
	{
		int32		current;
		int64		generation;
		int			s;
		char		ledger[NAMEDATALEN];

		snprintf(ledger, sizeof(ledger), "%s_ring_rotations", families[f].ring);
		if (!try_share(nsp, ledger) ||
			!awa_ring_cursor_read(nsp, families[f].ring, &current, &generation))
			continue;
		for (s = 0; s < families[f].slots; s++)
			done += summarize_child(nsp, f, s, s == current);
	}
	PG_RETURN_INT64(done);
}
