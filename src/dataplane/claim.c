/*-------------------------------------------------------------------------
 *
 * claim.c
 *	  The 0.9 claim in C (docs/storage.md §A.3, §A.13): awa.claim_now(queue,
 *	  max_batch, deadline), called by awa.claim (src/dataplane/wait.c).
 *
 * What it does is what the PL/pgSQL claim of 0.9 did, step for step, without
 * the interpreter, the partition routing and the executor start-up of each
 * statement:
 *	- validation (READ COMMITTED; awa.check_claim's rules and messages);
 *	- the queue's lanes (an index scan of awa.queue_lanes), in claim order:
 *	  priority, then shards starting at this backend's own;
 *	- per lane, while jobs are wanted: the empty-lane mark (src/dataplane/lanemarks.c);
 *	  the lane's claim lock, tried (the lanes of a priority in two passes:
 *	  every free one first, then, while nothing has been taken, each busy one
 *	  that looks as if it had work is waited for up to 10 ms); a
 *	  fresh snapshot, taken after the lock; the lane's window read
 *	  (src/dataplane/windows.c); one receipt per entry taken, inserted straight into
 *	  the lease_claims child of the current claim slot, in (txid, lane_seq)
 *	  order with claim_seq from awa.claim_seq, the window on the receipt that
 *	  ends the read; a lane that gave nothing is unlocked and marked empty,
 *	  one that gave jobs is noted for the end of the transaction
 *	  (src/dataplane/wait.c);
 *	- a queue with a running or a rate limit: the claim asks the lanes for at
 *	  most the room its shared count leaves and the tokens its bucket holds,
 *	  reserved first and the unused part given back after
 *	  (src/dataplane/limits.c); a claim that found no token says when the
 *	  next is due, for a claim that waits (src/dataplane/wait.c).
 *
 * src/dataplane/claim.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "src/dataplane/activity.h"
#include "src/dataplane/checks.h"
#include "src/dataplane/lanemarks.h"
#include "src/dataplane/limits.h"
#include "src/dataplane/privlock.h"
#include "src/dataplane/probes.h"
#include "src/dataplane/queuepolicy.h"
#include "src/dataplane/receipthints.h"
#include "src/dataplane/tokens.h"
#include "src/dataplane/wait.h"
#include "src/dataplane/windows.h"
#include "src/dataplane/xidspace.h"
#include "src/rel/inserter.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_claim_now);

/* how long a claim that has taken nothing waits for a busy lane with work */
#define AWA_BUSY_LANE_MS	10

typedef struct Lane
{
	int32		lane_id;
	int16		priority;
	int32		shard;
} Lane;

/* one claim call */
typedef struct Claim
{
	Oid			nsp;
	text	   *queue;
	int32		left;
	int32		max_batch;
	Interval   *deadline;		/* NULL: none */
	int32		claim_slot;		/* the claim cursor, read after the lane's lock */
	int64		claim_gen;
	ReturnSetInfo *rsinfo;
	bool		no_wait;		/* first pass over a priority: busy lanes skipped */
	bool		busy;			/* the last lane tried was busy */
} Claim;

/* awa.check_claim(queue, max_batch, deadline): the same rules and messages */
static void
check_claim(FunctionCallInfo fcinfo)
{
	awa_check_name("queue", PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0));
	if (PG_ARGISNULL(1) || PG_GETARG_INT32(1) < 1 || PG_GETARG_INT32(1) > 1000)
	{
		char		num[16];

		if (!PG_ARGISNULL(1))
			snprintf(num, sizeof(num), "%d", PG_GETARG_INT32(1));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_batch %s is out of range", PG_ARGISNULL(1) ? "NULL" : num),
				 errhint("Claim between 1 and 1000 jobs at a time.")));
	}
	if (!PG_ARGISNULL(2))
	{
		Interval	zero = {0};
		Datum		d = PG_GETARG_DATUM(2);

		if (DatumGetInt32(DirectFunctionCall2(interval_cmp, d,
											  IntervalPGetDatum(&zero))) <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("deadline must be positive or NULL, not %s",
							DatumGetCString(DirectFunctionCall1(interval_out, d))),
					 errhint("NULL means no deadline: liveness by heartbeat only.")));
	}
}

static int
lane_cmp(const ListCell *a, const ListCell *b)
{
	const Lane *x = lfirst(a);
	const Lane *y = lfirst(b);
	int			me = MyProcPid % AWA_LANE_SHARDS;
	int			rx = (x->shard + AWA_LANE_SHARDS - me) % AWA_LANE_SHARDS;
	int			ry = (y->shard + AWA_LANE_SHARDS - me) % AWA_LANE_SHARDS;

	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->shard != y->shard)
		return x->shard < y->shard ? -1 : 1;
	return x->lane_id < y->lane_id ? -1 : x->lane_id > y->lane_id;
}

/* The queue's lanes visible to the active snapshot, in claim order. */
static List *
queue_lanes(Oid nsp, text *queue)
{
	static const char *const cols[] = {"queue", "priority", "shard"};
	Relation	heap = awa_open_table(nsp, "queue_lanes", -1);
	AttrNumber	a_lane = awa_column_number(heap, "lane_id");
	AttrNumber	a_prio = awa_column_number(heap, "priority");
	AttrNumber	a_shard = awa_column_number(heap, "shard");
	ChildScan	cs;
	ScanKeyData key;
	List	   *lanes = NIL;

	awa_child_scan_begin(&cs, heap, awa_open_index(heap, 3, cols), 1);
	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   cs.index->rd_indcollation[0], F_TEXTEQ, PointerGetDatum(queue));
	index_rescan(cs.scan, &key, 1, NULL, 0);
	while (index_getnext_slot(cs.scan, ForwardScanDirection, cs.slot))
	{
		Lane	   *l = palloc(sizeof(Lane));
		bool		isnull;

		l->lane_id = awa_get_int32(cs.slot, a_lane, &isnull);
		l->priority = DatumGetInt16(slot_getattr(cs.slot, a_prio, &isnull));
		l->shard = awa_get_int32(cs.slot, a_shard, &isnull);
		lanes = lappend(lanes, l);
	}
	awa_child_scan_end(&cs);
	list_sort(lanes, lane_cmp);
	return lanes;
}

static int
entry_cmp(const ListCell *a, const ListCell *b)
{
	const WindowEntry *x = lfirst(a);
	const WindowEntry *y = lfirst(b);

	if (x->txid != y->txid)
		return x->txid < y->txid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* for each column of the result, its number in the child (by name) */
static AttrNumber *
result_map(TupleDesc result, Relation child)
{
	AttrNumber *map = palloc(result->natts * sizeof(AttrNumber));
	int			i;

	for (i = 0; i < result->natts; i++)
		map[i] = awa_column_number(child, NameStr(TupleDescAttr(result, i)->attname));
	return map;
}

/* the receipt as a claimed job, into the result */
static void
put_result(Claim *c, AttrNumber *map, WindowEntry *e)
{
	TupleDesc	result = c->rsinfo->setDesc;
	Datum	   *values = palloc(result->natts * sizeof(Datum));
	bool	   *nulls = palloc(result->natts * sizeof(bool));
	int			i;

	for (i = 0; i < result->natts; i++)
	{
		values[i] = e->values[map[i] - 1];
		nulls[i] = e->nulls[map[i] - 1];
	}
	tuplestore_putvalues(c->rsinfo->setResult, result, values, nulls);
}

/*
 * Inserts the receipts of the entries taken into the claim child (whose
 * layout they are in), with their indexes, and returns them as claimed jobs.
 * last carries the window (win_lo, win_hi).
 */
enum
{
	R_SLOT, R_GEN, R_LEASE, R_CLAIMED, R_SEQ, R_DEADLINE, R_LO, R_HI, R_NCOLS
};

/* the receipt columns a claim sets (the rest come from the ready entry) */
static const char *const receipt_set[R_NCOLS] = {
	"claim_slot", "claim_generation", "run_lease", "claimed_at", "claim_seq",
	"deadline_at", "win_lo", "win_hi"
};

static void
set_col(WindowEntry *e, AttrNumber a, Datum value)
{
	e->values[a - 1] = value;
	e->nulls[a - 1] = false;
}

/*
 * The args column of a receipt child that may leave them out (0.10,
 * tables/held_args.sql: the queue ring holds them while the attempt is open,
 * docs/storage.md A.20); InvalidAttrNumber in an older catalog, whose
 * receipts carry them.
 */
static AttrNumber
receipt_args_column(Relation child)
{
	AttrNumber	a = awa_column_number(child, "args");

	return TupleDescAttr(RelationGetDescr(child), a - 1)->attnotnull ? InvalidAttrNumber : a;
}

/*
 * Where the receipts of taken went (tids, in the order of taken; a_lease is
 * the run_lease column the claim set), for this backend's lookups of those
 * attempts (receipthints.c).
 */
static void
remember_receipts(Relation child, List *taken, const ItemPointerData *tids,
				  AttrNumber a_lease)
{
	AttrNumber	a_job = awa_column_number(child, "job_id");
	ListCell   *lc;
	int			i = 0;

	/* (a lease is a bigint token since 0.9: A.6) */
	if (TupleDescAttr(RelationGetDescr(child), a_lease - 1)->atttypid != INT8OID)
		return;
	foreach(lc, taken)
	{
		WindowEntry *e = lfirst(lc);

		awa_receipt_hint_put(RelationGetRelid(child), DatumGetInt64(e->values[a_job - 1]),
							 DatumGetInt64(e->values[a_lease - 1]), &tids[i++]);
	}
}

/* e as a receipt, without its args when a_args is valid; e itself unchanged */
static void
put_receipt(RowInserter *ri, WindowEntry *e, AttrNumber a_args)
{
	bool		had;

	if (a_args == InvalidAttrNumber)
	{
		awa_row_inserter_put(ri, e->values, e->nulls);
		return;
	}
	had = e->nulls[a_args - 1];
	e->nulls[a_args - 1] = true;
	awa_row_inserter_put(ri, e->values, e->nulls);
	e->nulls[a_args - 1] = had;
}

static void
insert_receipts(Claim *c, Relation child, List *taken, WindowEntry *last,
				Datum win_lo, Datum win_hi)
{
	RowInserter ri;
	AttrNumber	at[R_NCOLS];
	AttrNumber	a_args = receipt_args_column(child);
	int			i;
	Oid			seq = awa_relid(c->nsp, "claim_seq");
	TimestampTz now = GetCurrentTimestamp();
	Datum		deadline = (Datum) 0;
	AttrNumber *map = result_map(c->rsinfo->setDesc, child);
	ListCell   *lc;

	if (!OidIsValid(seq))
		elog(ERROR, "awa.claim_seq does not exist");
	if (c->deadline != NULL)
		deadline = DirectFunctionCall2(timestamptz_pl_interval, TimestampTzGetDatum(now),
									   IntervalPGetDatum(c->deadline));
	for (i = 0; i < R_NCOLS; i++)
		at[i] = awa_column_number(child, receipt_set[i]);
	awa_activity_note();
	awa_row_inserter_begin(&ri, child);
	ri.tids = palloc(list_length(taken) * sizeof(ItemPointerData));
	list_sort(taken, entry_cmp);
	foreach(lc, taken)
	{
		WindowEntry *e = lfirst(lc);

		set_col(e, at[R_SLOT], Int32GetDatum(c->claim_slot));
		set_col(e, at[R_GEN], Int64GetDatum(c->claim_gen));
		set_col(e, at[R_LEASE], Int64GetDatum(awa_new_lease_token()));
		set_col(e, at[R_CLAIMED], TimestampTzGetDatum(now));
		set_col(e, at[R_SEQ], Int64GetDatum(nextval_internal(seq, false)));
		if (c->deadline != NULL)
			set_col(e, at[R_DEADLINE], deadline);
		if (e == last)
		{
			if (win_lo != (Datum) 0)
				set_col(e, at[R_LO], win_lo);
			set_col(e, at[R_HI], win_hi);
		}
		put_receipt(&ri, e, a_args);
		put_result(c, map, e);
	}
	awa_row_inserter_end(&ri);
	remember_receipts(child, taken, ri.tids, at[R_LEASE]);
}

/*
 * Whether the last claim of this backend took nothing while a lane that had
 * work stayed busy past its short wait (held by another claimer, a cancel, or
 * a claim-ring prune carrying the lane's position): a waiting claim looks
 * again soon rather than sleeping until a commit wakes it, since what holds
 * the lane may wake no one when it ends (src/dataplane/wait.c).
 */
static bool missed_busy_lane = false;

bool
awa_claim_missed_busy_lane(void)
{
	return missed_busy_lane;
}

/*
 * Whether the last claim of this backend took nothing for want of a rate's
 * token: the microseconds until the next is due (0: it did not), which a
 * waiting claim sleeps for, since nothing wakes it when a token accrues.
 */
static int64 token_due_us = 0;

int64
awa_claim_token_due_us(void)
{
	return token_due_us;
}

/* The lane's claim lock, tried; a busy lane is waited for only as a hint says. */
static bool
lock_lane(Claim *c, int32 lane, int64 key)
{
	Datum		lo;
	Datum		hi;

	if (awa_private_lock(key, true))
		return true;
	c->busy = true;
	if (c->no_wait || c->left < c->max_batch)
		return false;
	/* read without the lock, with the statement's snapshot: a hint */
	if (!awa_ring_cursor_read(c->nsp, "claim", &c->claim_slot, &c->claim_gen) ||
		awa_window_take(lane, 1, c->claim_slot, c->claim_gen, AWA_CLAIM_SLOTS,
						AWA_QUEUE_SLOTS, NULL, &lo, &hi) == NIL)
		return false;
	if (awa_private_lock_for(key, AWA_BUSY_LANE_MS))
		return true;
	missed_busy_lane = true;
	return false;
}

/*
 * One lane: its window read with a snapshot taken after its lock, receipts
 * for what it gives. Returns how many jobs it gave.
 */
static int
claim_lane(Claim *c, int32 lane)
{
	uint64		epoch;
	int64		key = awa_claim_lock_key(lane);
	Relation	child;
	List	   *taken;
	Datum		lo = (Datum) 0;
	Datum		hi = (Datum) 0;
	int			n;

	if (awa_lane_marked(lane, &epoch))
		return 0;
	if (!lock_lane(c, lane, key))
		return 0;
	/*
	 * Everything the lane's claim decides is read with a snapshot taken after
	 * its lock: the claim cursor (a rotation may have moved it since the
	 * statement began, and the lane's position may be in the new slot), the
	 * position, the window.
	 */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	n = 0;
	if (awa_ring_cursor_read(c->nsp, "claim", &c->claim_slot, &c->claim_gen))
	{
		awa_check_slots(c->claim_slot, c->claim_gen, AWA_CLAIM_SLOTS);
		child = awa_open_table_for(c->nsp, "lease_claims", c->claim_slot, RowExclusiveLock);
		taken = awa_window_take(lane, c->left, c->claim_slot, c->claim_gen,
								AWA_CLAIM_SLOTS, AWA_QUEUE_SLOTS, RelationGetDescr(child),
								&lo, &hi);
		n = list_length(taken);
		if (n > 0)
			insert_receipts(c, child, taken, llast(taken), lo, hi);
		table_close(child, NoLock);
	}
	PopActiveSnapshot();
	if (n == 0)
	{
		/* took nothing, wrote nothing: the lane is free again at once, and marked */
		awa_private_unlock(key);
		awa_lane_mark_empty(lane, epoch);
	}
	else
		awa_note_claimed_lane(c->queue, n, lane);
	return n;
}

/* claim_lane for one lane, in the per-lane memory context */
static void
claim_one(Claim *c, Lane *lane, MemoryContext lane_cxt)
{
	MemoryContext old = MemoryContextSwitchTo(lane_cxt);

	c->busy = false;
	c->left -= claim_lane(c, lane->lane_id);
	MemoryContextSwitchTo(old);
	MemoryContextReset(lane_cxt);
}

/*
 * The lanes [first, end) of one priority, in two passes: each free lane is
 * claimed from before any busy one is waited for, so that a claimer whose own
 * shard's lane is held by another claimer (until that one's commit) takes
 * from a free shard instead of waiting; then, only if the claim has taken
 * nothing yet, the lanes that were busy are tried again, each waited for as
 * lock_lane says. A lower priority is reached only after both passes, as
 * before.
 */
static void
claim_priority(Claim *c, List *lanes, int first, int end, MemoryContext lane_cxt)
{
	bool	   *busy = palloc0(sizeof(bool) * (end - first));
	int			i;

	c->no_wait = true;
	for (i = first; i < end && c->left > 0; i++)
	{
		claim_one(c, list_nth(lanes, i), lane_cxt);
		busy[i - first] = c->busy;
	}
	c->no_wait = false;
	for (i = first; i < end && c->left == c->max_batch; i++)
		if (busy[i - first])
			claim_one(c, list_nth(lanes, i), lane_cxt);
	pfree(busy);
}

/*
 * awa.claim_now(queue text, max_batch int, deadline interval)
 *		RETURNS SETOF awa.claimed_job
 */
Datum
awa_claim_now(PG_FUNCTION_ARGS)
{
	Claim		c;
	List	   *lanes;
	int			first;
	int			end;
	MemoryContext lane_cxt;
	AwaQueueLimits lim;
	LimitClaim	lc;
	bool		limited;

	awa_require_read_committed("awa.claim");
	check_claim(fcinfo);
	awa_xid_space_adopt();
	InitMaterializedSRF(fcinfo, 0);
	missed_busy_lane = false;
	token_due_us = 0;
	memset(&c, 0, sizeof(c));
	memset(&lc, 0, sizeof(lc));
	c.nsp = awa_namespace();
	c.queue = PG_GETARG_TEXT_PP(0);
	c.max_batch = c.left = PG_GETARG_INT32(1);
	c.deadline = PG_ARGISNULL(2) ? NULL : PG_GETARG_INTERVAL_P(2);
	c.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	/* a paused queue gives nothing (a waiting claim goes on waiting) */
	if (awa_queue_claim_policy(c.queue, &lim))
		return (Datum) 0;
	/* a limited queue: at most its room and tokens (none: nothing, and a waiting claim waits) */
	limited = lim.max_running > 0 || lim.rate > 0;
	if (limited)
	{
		c.max_batch = c.left = awa_limit_reserve(c.queue, &lim, c.max_batch, &lc);
		if (c.left == 0)
		{
			token_due_us = lc.due_us;
			return (Datum) 0;
		}
	}
	lanes = queue_lanes(c.nsp, c.queue);
	lane_cxt = AllocSetContextCreate(CurrentMemoryContext, "awa claim lane",
									 ALLOCSET_DEFAULT_SIZES);
	for (first = 0; first < list_length(lanes) && c.left > 0; first = end)
	{
		int16		priority = ((Lane *) list_nth(lanes, first))->priority;

		for (end = first; end < list_length(lanes) &&
			 ((Lane *) list_nth(lanes, end))->priority == priority; end++)
			;
		claim_priority(&c, lanes, first, end, lane_cxt);
	}
	MemoryContextDelete(lane_cxt);
	if (limited)
		awa_limit_settle(c.queue, &lc, lc.reserved - c.left);
	return (Datum) 0;
}
