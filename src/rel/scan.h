/*-------------------------------------------------------------------------
 *
 * scan.h
 *	  Reading one relation of the hot paths (scan.c): a column by name, one
 *	  index scan on one ring child (or the rows of a job, or of an attempt, by
 *	  its BRIN index), the integers of its rows.
 *
 * src/rel/scan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_SCAN_H
#define AWA_SCAN_H

#include "access/genam.h"
#include "access/relscan.h"
#include "executor/tuptable.h"
#include "storage/block.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "src/compat.h"

/*
 * A fresh read (docs/storage.md A.18): what the queue's shared state holds
 * now, whatever the transaction's isolation level. At REPEATABLE READ the
 * scans take a snapshot of now; at SERIALIZABLE they scan with SnapshotAny
 * and keep the rows that snapshot of now sees (filter), so that the read
 * takes no predicate lock and adds no edge to the caller's serializable
 * graph. At READ COMMITTED the callers read under their statement's snapshot,
 * as before. The statement's own read takes the same form
 * (awa_statement_read: its snapshot, nothing registered).
 */
typedef struct AwaFreshRead
{
	Snapshot	snapshot;		/* what the scans are given */
	Snapshot	filter;			/* SERIALIZABLE: what a row must satisfy */
	Snapshot	registered;		/* the snapshot of now, registered */
} AwaFreshRead;

/* a run of consecutive pages of a bitmap, first to last */
typedef struct AwaPageRun
{
	BlockNumber first;
	BlockNumber last;
} AwaPageRun;

/*
 * One scan on one ring child: an index scan of a btree, or, for the rows of a
 * job or of an attempt on a child that has no btree for them but a BRIN index
 * on (job_id) (awa_child_scan_job, awa_child_scan_attempt), the pages of the
 * index's bitmap read run by run with TID range scans (bitmap set): a job's
 * in block order, an attempt's newest first (the last run first, each read
 * backward). A scan of an attempt is keyed for the next by
 * awa_child_scan_rekey, in either mode.
 */
typedef struct ChildScan
{
	Relation	heap;
	Relation	index;
	IndexScanDesc scan;			/* the index scan; in bitmap mode the index's
								 * bitmap scan */
	TupleTableSlot *slot;
	Snapshot	filter;			/* NULL, or what a row must satisfy */
	bool		none;			/* the key names no row: nothing is read */
	/* bitmap mode only */
	bool		bitmap;
	bool		newest_first;	/* the runs from the last, each read backward */
	Snapshot	snapshot;		/* the range scans' */
	AttrNumber	job_att;		/* the heap's job_id */
	int64		job_id;			/* the rows wanted (the pages are lossy) */
	AttrNumber	lease_att;		/* the heap's run_lease; Invalid: any lease */
	int64		run_lease;
	ItemPointerData hint;		/* a tuple to read before the bitmap's runs */
	bool		hint_due;		/* ... not read yet */
	bool		bitmap_due;		/* the bitmap is yet to be built */
	AwaPageRun *runs;			/* the bitmap's runs, in block order */
	int			nruns;
	int			runs_begun;		/* how many of them were begun */
	TableScanDesc range;		/* the run being read, or NULL */
} ChildScan;

extern AttrNumber awa_column_number(Relation rel, const char *name);
extern AttrNumber awa_column_number_if(Relation rel, const char *name);
extern bool awa_int_key(ScanKey key, Relation index, AttrNumber att, int64 value);
extern void awa_child_scan_begin(ChildScan *cs, Relation heap, Relation index, int nkeys);
extern void awa_child_scan_begin_fresh(ChildScan *cs, Relation heap, Relation index,
									   int nkeys, const AwaFreshRead *fresh);
extern void awa_child_scan_job(ChildScan *cs, Relation heap, int64 job_id,
							   const AwaFreshRead *fresh);
extern void awa_child_scan_attempt(ChildScan *cs, Relation heap, int64 job_id,
								   int64 run_lease, const AwaFreshRead *fresh);
extern void awa_child_scan_rekey(ChildScan *cs, int64 job_id, int64 run_lease);
extern void awa_child_scan_hint(ChildScan *cs, const ItemPointerData *tid);
extern bool awa_child_scan_next(ChildScan *cs, ScanDirection dir);
extern void awa_child_scan_end(ChildScan *cs);
extern void awa_fresh_read_begin(AwaFreshRead *fresh);
extern void awa_statement_read(AwaFreshRead *read);
extern const AwaFreshRead *awa_fresh_read_begin_for_level(AwaFreshRead *buf);
extern void awa_fresh_read_end(const AwaFreshRead *fresh);
extern bool awa_fresh_row_visible(const AwaFreshRead *fresh, Relation rel,
								  TupleTableSlot *slot);
extern int64 awa_get_int64(TupleTableSlot *slot, AttrNumber att, bool *isnull);
extern int32 awa_get_int32(TupleTableSlot *slot, AttrNumber att, bool *isnull);
extern int64 awa_get_int(TupleTableSlot *slot, AttrNumber att, bool *isnull);

#endif							/* AWA_SCAN_H */
