/*-------------------------------------------------------------------------
 *
 * probes.h
 *	  The ring-child scan helpers of the hot-path probes (probes.c), shared
 *	  with the 0.9 snapshot-window probes (windows.c).
 *
 * src/dataplane/probes.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef AWA_DATAPLANE_H
#define AWA_DATAPLANE_H

#include "access/genam.h"
#include "nodes/pg_list.h"
#include "storage/lockdefs.h"
#include "executor/tuptable.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

/* one index scan on one ring child */
typedef struct ChildScan
{
	Relation	heap;
	Relation	index;
	IndexScanDesc scan;
	TupleTableSlot *slot;
} ChildScan;

/*
 * The fixed shape of 0.9, the one C spelling of it: SQL's is awa.lane_shards()
 * and awa.ring_slot_count() (sql-src/api/lane_shards.sql,
 * sql-src/internal/names.sql). The lease ring's size is not needed in C.
 */
#define AWA_LANE_SHARDS		8
#define AWA_QUEUE_SLOTS		16
#define AWA_CLAIM_SLOTS		8

/* one entry a window scan found, in the caller's output layout (windows.c) */
typedef struct WindowEntry
{
	uint64		txid;
	int64		seq;
	int			child;			/* the ready slot it is in */
	Datum	   *values;
	bool	   *nulls;
} WindowEntry;

/* rows, and bytes of them, an inserter holds before it writes them together */
#define AWA_INSERT_BATCH 64
#define AWA_INSERT_BYTES (1024 * 1024)

/* direct inserts into one ring child (probes.c) */
typedef struct RowInserter
{
	Relation	rel;
	struct EState *estate;
	struct ResultRelInfo *rri;
	int			held;			/* rows in slots[] not yet written */
	Size		held_bytes;		/* their heap tuples' length */
	TupleTableSlot *slots[AWA_INSERT_BATCH];	/* made as needed */
} RowInserter;

/* one job to enqueue: the fields of awa.new_job (kind, args, error: datums) */
typedef struct AwaNewJob
{
	int32		ord;
	int64		job_id;
	Datum		kind;
	Datum		args;
	int16		priority;
	TimestampTz run_at;
	int32		attempt;
	int32		max_attempts;
	TimestampTz created_at;
	Datum		error;			/* 0: NULL */
} AwaNewJob;

/* an open receipt's columns (complete.c's receipt_cols) */
#define AWA_RECEIPT_COLS 11
typedef struct AwaReceipt
{
	Datum		values[AWA_RECEIPT_COLS];
	bool		nulls[AWA_RECEIPT_COLS];
} AwaReceipt;

extern bool awa_open_receipt(Oid nsp, int64 job_id, int64 run_lease, AwaReceipt *r);
extern Datum awa_receipt_col(AwaReceipt *r, const char *name);
extern void awa_close_attempts(Oid nsp, AwaReceipt *rs, int n, const char *outcome,
							   const char *state, Datum error);
extern void awa_close_attempt(Oid nsp, AwaReceipt *r, const char *outcome, const char *state,
							  Datum error);
extern void awa_insert_named(Relation rel, int n, const char *const *names, Datum *values,
							 bool *nulls);
extern int64 awa_next_job_id(void);
extern bool awa_lock_open_receipt(int64 job_id, int64 run_lease, AwaReceipt *r);
extern void awa_enqueue_jobs(text *queue, AwaNewJob *jobs, int njobs);
extern int64 awa_unique_job(text *queue, const Datum *v, const bool *n, int64 job_id);

extern void awa_row_inserter_begin(RowInserter *ri, Relation rel);
extern void awa_row_inserter_put(RowInserter *ri, Datum *values, bool *nulls);
extern void awa_row_inserter_end(RowInserter *ri);

extern Oid	awa_namespace(void);
extern void awa_xid_space_adopt(void);
extern void awa_xid_space_require(void);
extern void awa_xid_space_invalidate(Oid relid);
extern Datum awa_table_changed_trigger(FunctionCallInfo fcinfo, const char *fn,
									   const char *tables);
extern Oid	awa_relid(Oid nsp, const char *name);
extern bool awa_ring_cursor_read(Oid nsp, const char *ring, int32 *slot, int64 *generation);
extern List *awa_window_take(int32 lane_id, int limit, int32 claim_slot,
							 int64 claim_gen, int32 claim_slots, int32 queue_slots,
							 TupleDesc out, Datum *win_lo, Datum *win_hi);
extern AttrNumber awa_column_number(Relation rel, const char *name);
extern Relation awa_open_table(Oid nsp, const char *family, int slot);
extern Relation awa_open_table_for(Oid nsp, const char *family, int slot, LOCKMODE lockmode);
extern Relation awa_open_index(Relation heap, int ncols, const char *const *cols);
extern Relation awa_open_tombstone_index(Relation done);
extern Relation awa_open_position_index(Relation claims);
extern void awa_child_scan_begin(ChildScan *cs, Relation heap, Relation index, int nkeys);
extern void awa_child_scan_end(ChildScan *cs);
extern int64 awa_get_int64(TupleTableSlot *slot, AttrNumber att, bool *isnull);
extern int32 awa_get_int32(TupleTableSlot *slot, AttrNumber att, bool *isnull);
extern int	awa_ring_slot(int64 slot, int64 back, int nslots);
extern void awa_check_slots(int32 slot, int64 generation, int32 nslots);
extern bool awa_tombstoned(ChildScan *done, AttrNumber a_lease, int32 lane_id, int64 lane_seq);

#endif							/* AWA_DATAPLANE_H */
