/*-------------------------------------------------------------------------
 *
 * wait.c
 *	  Claims that wake (docs/storage.md §A.11): awa.claim(queue, max_batch,
 *	  deadline, wait) sleeps on its latch until a commit that made work in its
 *	  queue sets it, and holds no snapshot while it sleeps.
 *
 * Shared memory holds one waiter slot per backend (indexed by proc number): the
 * database and the hash of the queue it waits for, the order it began
 * waiting in, and whether it was woken. A transaction notes, in backend-local
 * memory, what it did that may give a waiter work: the jobs it enqueued per
 * queue (awa.note_enqueued, from enqueue_ready), and the queues whose lanes it
 * took jobs from (awa.note_claimed, from the claim). When it commits, after
 * its commit is visible to new snapshots, it wakes, per queue, the longest
 * waiting claimers: one per job enqueued, and one more when it took jobs (the
 * lane it held to its end may hold more work a woken claimer skipped while it
 * was locked).
 * An abort wakes one per job its claims took (they are claimable again); a
 * subtransaction abort does the same at once and forgets its enqueues.
 *
 * No wake-up is lost: a claimer arms its slot before its first look for work,
 * and a producer reads whether anyone is armed only after its commit is
 * visible; so either the claimer's look sees the job or the producer sees the
 * claimer. A woken claimer that finds nothing (a lane locked by another
 * claimer) looks again after 1, 2, 4 ... 64 ms before it sleeps again; one
 * that leaves without looking (its wait ended, or it was cancelled) passes
 * its wake-up on to another waiter of the queue. A look that took nothing for
 * want of a token of the queue's rate (src/dataplane/limits.c) also sets a
 * timer: the claimer looks again when the next token is due, woken or not,
 * since no commit announces a token.
 *
 * The statement's snapshot: a claim that waits must be its statement's only
 * reader (SELECT ... FROM awa.claim(...) or SELECT awa.claim(...), called by
 * the portal itself, in a transaction without an xid and without another
 * snapshot, e.g. an open cursor). It then gives the statement's snapshot back
 * (its xmin no longer holds back vacuum), looks for work in subtransactions
 * that take their own snapshots, and before it returns installs a fresh
 * snapshot in the statement's place (nothing read the old one after the call
 * began: the statement reads no relation). Each look runs in a subtransaction
 * rolled back when it took nothing, so a waiting claimer holds no lock either.
 *
 *	awa.claim(queue, max_batch, deadline, wait)	the API's claim
 *	awa.note_enqueued(queue, n, lane, ready_slot),
 *	awa.note_claimed(queue, taken, lane)
 *	awa.claim_waiters()						who waits (pid, database, since)
 *	awa.note_resumed(queue)					a resume: wake all its waiters
 *
 * src/dataplane/wait.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/execdesc.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "parser/parse_func.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/pquery.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/portal.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "src/compat.h"
#include "src/dataplane/checks.h"
#include "src/dataplane/lanemarks.h"
#include "src/dataplane/queuepolicy.h"
#include "src/dataplane/wait.h"
#include "src/rel/relcache.h"

PG_FUNCTION_INFO_V1(awa_claim);
PG_FUNCTION_INFO_V1(awa_note_enqueued);
PG_FUNCTION_INFO_V1(awa_note_claimed);
PG_FUNCTION_INFO_V1(awa_claim_waiters);
PG_FUNCTION_INFO_V1(awa_note_resumed);

/* the longest wait one call may ask for */
#define AWA_MAX_WAIT_US		(INT64CONST(3600) * USECS_PER_SEC)
/* the last of the short looks after a wake-up that found nothing (ms) */
#define AWA_RETRY_MAX_MS	64

typedef struct Waiter
{
	Oid			dboid;			/* InvalidOid: not waiting */
	uint32		queue_hash;
	bool		woken;
	uint64		since;			/* arming order: the longest waiting first */
	int			pid;
	TimestampTz started;
} Waiter;

typedef struct WaitState
{
	LWLock	   *lock;			/* every field below and every slot */
	pg_atomic_uint32 armed;		/* slots waiting: producers skip the lock at 0 */
	uint64		next_since;
	int			nslots;
	Waiter		slots[FLEXIBLE_ARRAY_MEMBER];
} WaitState;

/* what this transaction did that may give a waiter work, per queue, lane and level */
typedef struct WakeNote
{
	uint32		queue_hash;
	int32		lane;			/* its lane marks are bumped (src/dataplane/lanemarks.c); -1:
								 * a resume, which wakes every waiter */
	int			level;			/* transaction nesting level that noted it */
	int			enqueued;
	int			taken;			/* > 0: it holds a lane of the queue to its end */
} WakeNote;

static WaitState *wait_state = NULL;
static WakeNote *notes = NULL;
static int	nnotes = 0;
static int	maxnotes = 0;
static bool callbacks_registered = false;
static bool my_slot_armed = false;

static void disarm(bool pass_on);

static Size
wait_state_size(void)
{
	return add_size(offsetof(WaitState, slots), mul_size(MaxBackends, sizeof(Waiter)));
}

void
awa_wait_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(wait_state_size()));
	RequestNamedLWLockTranche("awa_bgw_waiters", 1);
}

void
awa_wait_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	wait_state = ShmemInitStruct("awa_bgw waiters", wait_state_size(), &found);
	if (!found)
	{
		memset(wait_state, 0, wait_state_size());
		wait_state->lock = &(GetNamedLWLockTranche("awa_bgw_waiters"))->lock;
		pg_atomic_init_u32(&wait_state->armed, 0);
		wait_state->nslots = MaxBackends;
	}
	LWLockRelease(AddinShmemInitLock);
}

static uint32
queue_hash(text *queue)
{
	return DatumGetUInt32(hash_any((unsigned char *) VARDATA_ANY(queue),
								   VARSIZE_ANY_EXHDR(queue)));
}

/* ---- waking ---- */

/*
 * Wakes up to n claimers of this database waiting for the queue, the longest
 * waiting first. Called after this transaction's commit is visible (or at
 * once, for an abort); takes no lock when nobody waits.
 */
static void
wake_waiters(uint32 hash, int n)
{
	if (n <= 0 || wait_state == NULL)
		return;
	pg_memory_barrier();
	if (pg_atomic_read_u32(&wait_state->armed) == 0)
		return;
	LWLockAcquire(wait_state->lock, LW_EXCLUSIVE);
	while (n-- > 0)
	{
		int			best = -1;
		int			i;

		for (i = 0; i < wait_state->nslots; i++)
		{
			Waiter	   *w = &wait_state->slots[i];

			if (w->dboid == MyDatabaseId && w->queue_hash == hash && !w->woken &&
				(best < 0 || w->since < wait_state->slots[best].since))
				best = i;
		}
		if (best < 0)
			break;
		wait_state->slots[best].woken = true;
		SetLatch(&GetPGProcByNumber(best)->procLatch);
	}
	LWLockRelease(wait_state->lock);
}

/*
 * Wakes up to n claimers waiting for the queue (a name): room freed under its
 * running limit (src/dataplane/limits.c).
 */
void
awa_wake_queue_waiters(const char *queue, int n)
{
	wake_waiters(DatumGetUInt32(hash_any((const unsigned char *) queue, strlen(queue))), n);
}

/*
 * The wake-ups one note owes when its work ends, committed or aborted: one
 * more for the lane its claims held (it may hold more work than they took)
 */
static int
note_wakes(const WakeNote *n, bool commit)
{
	return (commit ? n->enqueued : n->taken) + (n->taken > 0 ? 1 : 0);
}

static void
wait_xact_callback(XactEvent event, void *arg)
{
	int			i;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			for (i = 0; i < nnotes; i++)
			{
				bool		commit = event == XACT_EVENT_COMMIT ||
					event == XACT_EVENT_PARALLEL_COMMIT;

				/* its lane gained work: new entries, or taken ones given back */
				if ((commit ? notes[i].enqueued > 0 : notes[i].taken > 0) &&
					notes[i].lane >= 0)
					awa_lane_bump(notes[i].lane);
				wake_waiters(notes[i].queue_hash, note_wakes(&notes[i], commit));
			}
			break;
		case XACT_EVENT_PRE_PREPARE:
			/* its outcome comes in another session: no lane mark until then */
			if (nnotes > 0)
				awa_lane_marks_prepare(GetTopTransactionIdIfAny());
			for (i = 0; i < nnotes; i++)
				if (notes[i].lane >= 0)
					awa_lane_bump(notes[i].lane);
			return;
		case XACT_EVENT_PREPARE:
			/* its jobs appear at COMMIT PREPARED, in another session: no wake */
			break;
		default:
			return;
	}
	nnotes = 0;
	/* a claim that waited and failed left its slot (the error path disarms too) */
	disarm(event != XACT_EVENT_COMMIT && event != XACT_EVENT_PARALLEL_COMMIT);
}

static void
wait_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	int			i;
	int			kept = 0;

	if (event != SUBXACT_EVENT_COMMIT_SUB && event != SUBXACT_EVENT_ABORT_SUB)
		return;
	for (i = 0; i < nnotes; i++)
	{
		if (notes[i].level < level)
			notes[kept++] = notes[i];
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
		{
			notes[i].level = level - 1;
			notes[kept++] = notes[i];
		}
		else if (notes[i].taken > 0 && notes[i].lane >= 0)
		{
			/* rolled back: its enqueues never happened; its claims give back */
			awa_lane_bump(notes[i].lane);
			wake_waiters(notes[i].queue_hash, notes[i].taken);
		}
	}
	nnotes = kept;
}

static void disarm_at_exit(int code, Datum arg);

/* once per process: the transaction callbacks, and leaving the slot at exit */
static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(wait_xact_callback, NULL);
	RegisterSubXactCallback(wait_subxact_callback, NULL);
	before_shmem_exit(disarm_at_exit, (Datum) 0);
	callbacks_registered = true;
}

static WakeNote *
note_for(text *queue, int32 lane)
{
	uint32		hash = queue_hash(queue);
	int			level = GetCurrentTransactionNestLevel();
	int			i;

	register_callbacks();
	for (i = 0; i < nnotes; i++)
		if (notes[i].queue_hash == hash && notes[i].lane == lane && notes[i].level == level)
			return &notes[i];
	if (nnotes == maxnotes)
	{
		int			grown = Max(16, maxnotes * 2);

		notes = notes == NULL
			? MemoryContextAlloc(TopMemoryContext, grown * sizeof(WakeNote))
			: repalloc(notes, grown * sizeof(WakeNote));
		maxnotes = grown;
	}
	memset(&notes[nnotes], 0, sizeof(WakeNote));
	notes[nnotes].queue_hash = hash;
	notes[nnotes].lane = lane;
	notes[nnotes].level = level;
	return &notes[nnotes++];
}

/*
 * awa.note_enqueued(queue, n, lane, ready_slot): this transaction entered n
 * due jobs into the lane, in the ready child of ready_slot (whose txid bound
 * is raised at once, src/dataplane/lanemarks.c)
 */
void
awa_note_enqueued_lane(text *queue, int jobs, int32 lane, int32 ready_slot)
{
	if (jobs <= 0)
		return;
	awa_ready_child_entered(ready_slot);
	note_for(queue, lane)->enqueued += jobs;
}

Datum
awa_note_enqueued(PG_FUNCTION_ARGS)
{
	if (!PG_ARGISNULL(0) && !PG_ARGISNULL(1) && !PG_ARGISNULL(2) && !PG_ARGISNULL(3))
		awa_note_enqueued_lane(PG_GETARG_TEXT_PP(0), PG_GETARG_INT32(1), PG_GETARG_INT32(2),
							   PG_GETARG_INT32(3));
	PG_RETURN_VOID();
}

/*
 * awa.note_claimed(queue, taken, lane): this transaction's claim took jobs
 * from the lane of the queue, and holds the lane until it ends
 */
void
awa_note_claimed_lane(text *queue, int taken, int32 lane)
{
	if (taken > 0)
		note_for(queue, lane)->taken += taken;
}

Datum
awa_note_claimed(PG_FUNCTION_ARGS)
{
	if (!PG_ARGISNULL(0) && !PG_ARGISNULL(1) && !PG_ARGISNULL(2))
		awa_note_claimed_lane(PG_GETARG_TEXT_PP(0), PG_GETARG_INT32(1), PG_GETARG_INT32(2));
	PG_RETURN_VOID();
}

/*
 * awa.note_resumed(queue): this transaction resumed the queue; when it
 * commits, every claim waiting for the queue wakes (src/dataplane/queuepolicy.c).
 */
Datum
awa_note_resumed(PG_FUNCTION_ARGS)
{
	if (wait_state != NULL)
		note_for(PG_GETARG_TEXT_PP(0), -1)->enqueued = wait_state->nslots;
	PG_RETURN_VOID();
}

/* ---- the waiter's slot ---- */

static Waiter *
my_slot(void)
{
	if (wait_state == NULL || MyProc == NULL || GetNumberFromPGProc(MyProc) >= wait_state->nslots)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("awa.claim cannot wait in this process"),
				 errhint("Preload awa_bgw (shared_preload_libraries) and claim from a "
						 "client session.")));
	return &wait_state->slots[GetNumberFromPGProc(MyProc)];
}

static void
arm(uint32 hash)
{
	Waiter	   *w = my_slot();

	LWLockAcquire(wait_state->lock, LW_EXCLUSIVE);
	w->dboid = MyDatabaseId;
	w->queue_hash = hash;
	w->woken = false;
	w->since = wait_state->next_since++;
	w->pid = MyProcPid;
	w->started = GetCurrentTimestamp();
	pg_atomic_fetch_add_u32(&wait_state->armed, 1);
	my_slot_armed = true;
	LWLockRelease(wait_state->lock);
}

/* whether this waiter was woken since it last asked; clears the mark */
static bool
take_woken(void)
{
	Waiter	   *w = my_slot();
	bool		woken;

	LWLockAcquire(wait_state->lock, LW_EXCLUSIVE);
	woken = w->woken;
	w->woken = false;
	LWLockRelease(wait_state->lock);
	return woken;
}

/* Leaves the slot; a wake-up this waiter did not use goes to another waiter. */
static void
disarm(bool pass_on)
{
	Waiter	   *w;
	bool		woken;
	uint32		hash;

	if (!my_slot_armed)
		return;
	w = &wait_state->slots[GetNumberFromPGProc(MyProc)];
	LWLockAcquire(wait_state->lock, LW_EXCLUSIVE);
	woken = w->woken;
	hash = w->queue_hash;
	w->dboid = InvalidOid;
	w->woken = false;
	pg_atomic_fetch_sub_u32(&wait_state->armed, 1);
	my_slot_armed = false;
	LWLockRelease(wait_state->lock);
	if (pass_on && woken)
		wake_waiters(hash, 1);
}

static void
disarm_at_exit(int code, Datum arg)
{
	disarm(true);
}

/* ---- the statement's snapshot ---- */

/* whether the statement reads nothing but calls of this function */
static bool
statement_only_calls(PlannedStmt *ps, Oid fn)
{
	ListCell   *lc;

	if (ps->commandType != CMD_SELECT || ps->utilityStmt != NULL || ps->subplans != NIL)
		return false;
	foreach(lc, ps->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
		ListCell   *fc;

		if (rte->rtekind == RTE_RESULT)
			continue;
		if (rte->rtekind != RTE_FUNCTION)
			return false;
		foreach(fc, rte->functions)
		{
			Node	   *call = lfirst_node(RangeTblFunction, fc)->funcexpr;

			if (!IsA(call, FuncExpr) || ((FuncExpr *) call)->funcid != fn)
				return false;
		}
	}
	return true;
}

/*
 * The statement this claim may give its snapshot back for, or an error that
 * says why it cannot wait. The snapshot is the portal's: pushed as the active
 * one and registered by the query descriptor and by the executor. Not
 * inlined: its locals would live in awa_claim's frame, across the PG_TRY
 * there (gcc's -Wclobbered, on PostgreSQL 18's flags).
 */
static pg_noinline QueryDesc *
waitable_statement(FunctionCallInfo fcinfo)
{
	QueryDesc  *qd = ActivePortal != NULL ? ActivePortal->queryDesc : NULL;

	awa_require_read_committed("awa.claim");
	if (qd == NULL || qd->estate == NULL || qd->snapshot == NULL ||
		qd->estate->es_snapshot != qd->snapshot || !ActiveSnapshotSet() ||
		GetActiveSnapshot() != qd->snapshot ||
		!statement_only_calls(qd->plannedstmt, fcinfo->flinfo->fn_oid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("awa.claim can wait only as a statement of its own"),
				 errdetail("A waiting claim gives its statement's snapshot back while it "
						   "sleeps, so that it never holds back vacuum."),
				 errhint("Call SELECT * FROM awa.claim(..., wait => ...) as its own "
						 "statement, not from a function or a query that reads anything "
						 "else.")));
	if (TransactionIdIsValid(GetTopTransactionIdIfAny()))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("awa.claim cannot wait in a transaction that has written"),
				 errhint("Commit first, or claim without wait: a sleeping claimer must "
						 "hold no transaction id, so that it never holds back vacuum.")));
	return qd;
}

static void
restore_statement_snapshot(QueryDesc *qd)
{
	Snapshot	snap;

	PushActiveSnapshot(GetTransactionSnapshot());
	snap = GetActiveSnapshot();
	qd->snapshot = RegisterSnapshot(snap);
	qd->estate->es_snapshot = RegisterSnapshot(snap);
}

/*
 * Gives the statement's snapshot back: this backend then holds none (its
 * xmin is cleared), unless the transaction holds another (an open cursor),
 * in which case the statement's is put back and the claim cannot wait.
 */
static void
release_statement_snapshot(QueryDesc *qd)
{
	PopActiveSnapshot();
	UnregisterSnapshot(qd->estate->es_snapshot);
	UnregisterSnapshot(qd->snapshot);
	qd->estate->es_snapshot = InvalidSnapshot;
	qd->snapshot = InvalidSnapshot;
	InvalidateCatalogSnapshot();
	if (HaveRegisteredOrActiveSnapshot())
	{
		restore_statement_snapshot(qd);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("awa.claim cannot wait while this transaction holds another snapshot"),
				 errhint("Close the transaction's open cursors, or claim without wait.")));
	}
}

/* ---- looking for work ---- */

/*
 * claim_now(queue, max_batch, deadline) of the internals' schema
 * (awa_internal; awa before 0.10), the claim itself (C, claim.c)
 */
static FmgrInfo *
claim_now_fn(FunctionCallInfo fcinfo)
{
	FmgrInfo   *fn = (FmgrInfo *) fcinfo->flinfo->fn_extra;

	if (fn == NULL)
	{
		Oid			argtypes[3] = {TEXTOID, INT4OID, INTERVALOID};
		Oid			oid = awa_internal_function("claim_now", 3, argtypes);

		fn = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(FmgrInfo));
		fmgr_info_cxt(oid, fn, fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = fn;
	}
	return fn;
}

/*
 * Runs the claim with this call's arguments first .. first + 2 (queue,
 * max_batch, deadline) into rsi; the claim's function is cached in the
 * caller's flinfo.
 */
void
awa_claim_now_args(FunctionCallInfo fcinfo, int first, ReturnSetInfo *rsi)
{
	LOCAL_FCINFO(call, 3);
	int			i;

	InitFunctionCallInfoData(*call, claim_now_fn(fcinfo), 3, fcinfo->fncollation,
							 NULL, (Node *) rsi);
	for (i = 0; i < 3; i++)
		call->args[i] = fcinfo->args[first + i];
	(void) FunctionCallInvoke(call);
}

/* Runs the claim with this call's first three arguments into rsi. */
static void
claim_now(FunctionCallInfo fcinfo, ReturnSetInfo *rsi)
{
	awa_claim_now_args(fcinfo, 0, rsi);
}

/*
 * In the PG_CATCH of an internal subtransaction begun in cxt under owner: the
 * error, copied into cxt, and the subtransaction rolled back, cxt and owner
 * current again. The caller rethrows it (ReThrowError), after its own undo.
 */
ErrorData *
awa_subxact_abort(MemoryContext cxt, ResourceOwner owner)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return edata;
}

/*
 * One look for work in a subtransaction: kept when it took jobs (they become
 * this call's result), rolled back when it took nothing, so that nothing it
 * locked or noted outlives it.
 */
static bool
look_for_work(FunctionCallInfo fcinfo, ReturnSetInfo *rsinfo)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ReturnSetInfo rsi = *rsinfo;
	bool		got;
	bool		push;

	rsi.setResult = NULL;
	rsi.setDesc = NULL;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	/*
	 * After the statement's snapshot was given back, the look brings its own
	 * (else PL/pgSQL would make one the portal's, which a SELECT's portal never
	 * pops); it is gone again when the look ends.
	 */
	push = !ActiveSnapshotSet();
	if (push)
		PushActiveSnapshot(GetTransactionSnapshot());
	PG_TRY();
	{
		claim_now(fcinfo, &rsi);
		if (push)
			PopActiveSnapshot();
		got = rsi.setResult != NULL && tuplestore_tuple_count(rsi.setResult) > 0;
		if (got)
			ReleaseCurrentSubTransaction();
		else
			RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ReThrowError(awa_subxact_abort(cxt, owner));
	}
	PG_END_TRY();
	if (got)
	{
		rsinfo->returnMode = rsi.returnMode;
		rsinfo->setResult = rsi.setResult;
		rsinfo->setDesc = rsi.setDesc;
	}
	/* a look leaves no catalog snapshot behind to hold the xmin while we sleep */
	InvalidateCatalogSnapshot();
	return got;
}

/* when the last look's claim says the queue's next token is due (0: not waiting for one) */
static TimestampTz
token_due_at(void)
{
	int64		us = awa_claim_token_due_us();

	return us > 0 ? GetCurrentTimestamp() + us : 0;
}

/*
 * Sleeps until woken or until the deadline, looking for work after each
 * wake-up and, while a look after a wake-up finds nothing, again after 1, 2,
 * 4 ... AWA_RETRY_MAX_MS ms. While the last look found a lane with work busy
 * (awa_claim_missed_busy_lane; busy: the look before the sleep did), it looks
 * again every AWA_RETRY_MAX_MS at most until that ends, woken or not: what
 * holds the lane, such as a claim-ring prune carrying its position, may wake
 * no one when it ends. While the last look found no token of the queue's
 * rate (due: when the next is, else 0), it looks again when that one is due.
 * Returns whether it took jobs.
 */
static bool
sleep_for_work(FunctionCallInfo fcinfo, ReturnSetInfo *rsinfo, TimestampTz deadline,
			   bool busy, TimestampTz due)
{
	int			retry_ms = busy ? 1 : 0;

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		long		timeout;
		int			rc;

		if (now >= deadline)
			return false;
		timeout = TimestampDifferenceMilliseconds(now, deadline);
		if (retry_ms > 0)
			timeout = Min(timeout, retry_ms);
		if (due != 0)
			timeout = Min(timeout, TimestampDifferenceMilliseconds(now, due));
		rc = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					   Max(timeout, 1), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (take_woken())
			retry_ms = 1;
		else if (retry_ms > 0 && (rc & WL_TIMEOUT))
			retry_ms = retry_ms >= AWA_RETRY_MAX_MS ? (busy ? AWA_RETRY_MAX_MS : 0)
				: retry_ms * 2;
		else if (due == 0 || GetCurrentTimestamp() < due)
			continue;			/* the wait ended, or the latch was set for another reason */
		if (look_for_work(fcinfo, rsinfo))
			return true;
		busy = awa_claim_missed_busy_lane();
		due = token_due_at();
	}
}

/* the wait argument in microseconds, 0 for none; refuses what is out of bounds */
static int64
wait_us(FunctionCallInfo fcinfo)
{
	Interval   *wait;
	int64		us;

	if (PG_NARGS() < 4 || PG_ARGISNULL(3))
		return 0;
	wait = PG_GETARG_INTERVAL_P(3);
	us = awa_interval_us(wait);
	if (us < 0 || us > AWA_MAX_WAIT_US)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait must be between 0 and 1 hour"),
				 errhint("NULL or 0 claims without waiting; a claimer that waits longer "
						 "calls awa.claim again.")));
	return us;
}

/*
 * awa.claim(queue text, max_batch int, deadline interval, wait interval)
 *		RETURNS SETOF awa.claimed_job
 *
 * Without wait, the claim itself. With wait, a claim that finds nothing
 * sleeps until a commit gives its queue work, or until wait has passed.
 */
Datum
awa_claim(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		us;
	QueryDesc  *qd;
	bool		got;

	/* a role that may not claim from the queue is refused before it waits */
	if (!PG_ARGISNULL(0))
	{
		awa_check_name("queue", PG_GETARG_TEXT_PP(0));
		awa_queue_require(PG_GETARG_TEXT_PP(0), AWA_QUEUE_CLAIM);
	}
	us = wait_us(fcinfo);
	if (us == 0 || PG_ARGISNULL(0))
	{
		claim_now(fcinfo, rsinfo);
		return (Datum) 0;
	}
	qd = waitable_statement(fcinfo);
	register_callbacks();
	arm(queue_hash(PG_GETARG_TEXT_PP(0)));
	PG_TRY();
	{
		TimestampTz deadline = GetCurrentTimestamp() + us;

		got = look_for_work(fcinfo, rsinfo);
		if (!got)
		{
			release_statement_snapshot(qd);
			got = sleep_for_work(fcinfo, rsinfo, deadline, awa_claim_missed_busy_lane(),
								 token_due_at());
			restore_statement_snapshot(qd);
		}
	}
	PG_CATCH();
	{
		disarm(true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	disarm(!got);
	if (!got)
	{
		rsinfo->returnMode = SFRM_Materialize;
		rsinfo->setResult = NULL;
		rsinfo->setDesc = NULL;
	}
	return (Datum) 0;
}

/*
 * awa.claim_waiters() RETURNS TABLE (pid int, database oid, waiting_since
 * timestamptz, woken boolean): the claims waiting now.
 */
Datum
awa_claim_waiters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Waiter	   *copy;
	int			n = 0;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (wait_state == NULL)
		return (Datum) 0;
	/* copied under the lock, returned after it: no allocation while it is held */
	copy = palloc(sizeof(Waiter) * wait_state->nslots);
	LWLockAcquire(wait_state->lock, LW_SHARED);
	for (i = 0; i < wait_state->nslots; i++)
		if (wait_state->slots[i].dboid != InvalidOid)
			copy[n++] = wait_state->slots[i];
	LWLockRelease(wait_state->lock);
	for (i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = Int32GetDatum(copy[i].pid);
		values[1] = ObjectIdGetDatum(copy[i].dboid);
		values[2] = TimestampTzGetDatum(copy[i].started);
		values[3] = BoolGetDatum(copy[i].woken);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(copy);
	return (Datum) 0;
}
