/*-------------------------------------------------------------------------
 *
 * jobstate.c
 *	  A job's state as a fresh read (docs/storage.md A.18): what
 *	  awa_internal.job_state answers under the statement's snapshot, read
 *	  instead with direct index scans as one fresh read, so that a unique
 *	  enqueue at REPEATABLE READ or SERIALIZABLE sees what the data plane
 *	  holds now and, at SERIALIZABLE, takes no predicate lock (scan.c).
 *
 * The records are those of awa_internal.job_records (sql-src/api/inspect.sql),
 * each with its attempt and rank; the state is the top one's, by attempt then
 * rank, as job_state orders them:
 *
 *	deferred_jobs		1, scheduled (attempt 1) or retryable (a retry)
 *	ready_entries_s		5 cancelled (a tombstone in done_entries_s),
 *						2 available (unclaimed), else 0 and no state
 *	lease_claims_c		the newest copy of each attempt's receipt: 3 running
 *						(no closure in its slot), 5 the closure's terminal
 *						state, 4 retryable (retried, rescued) or the outcome
 *						(either read from the closure's code when it has one)
 *	done_entries_s		5, its state (run_lease > 0: an attempt's outcome)
 *	failed_jobs			5, failed
 *
 * Every child of each family is read, as a scan of the partitioned parent
 * would; the caller holds the ring families in ACCESS SHARE, so no prune
 * truncates one under the read. awa_internal.job_state_now(job_id) runs the
 * same read by hand; the tests compare it with job_state.
 *
 * src/dataplane/jobstate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/transam.h"
#include "access/xact.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/xid8.h"

#include "src/dataplane/complete.h"
#include "src/dataplane/jobstate.h"
#include "src/dataplane/probes.h"
#include "src/dataplane/windows.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_job_state_now);

/* the top record found so far */
typedef struct JobTop
{
	bool		found;
	int32		attempt;
	int			rank;
	char	   *state;			/* NULL: the record tells no state */
} JobTop;

/* one copy of an attempt's receipt */
typedef struct ReceiptCopy
{
	int64		run_lease;
	int64		generation;
	int32		attempt;
	int			child;
} ReceiptCopy;

static void
consider(JobTop *top, int32 attempt, int rank, const char *state)
{
	if (top->found && (attempt < top->attempt ||
					   (attempt == top->attempt && rank <= top->rank)))
		return;
	top->found = true;
	top->attempt = attempt;
	top->rank = rank;
	top->state = state != NULL ? pstrdup(state) : NULL;
}

/* begins a scan of family's child (slot < 0: the table) by its index on cols */
static void
scan_by(ChildScan *cs, Oid nsp, const char *family, int slot, int ncols,
		const char *const *cols, const AwaFreshRead *fresh)
{
	Relation	heap = awa_open_table(nsp, family, slot);

	awa_child_scan_begin_fresh(cs, heap, awa_open_index(heap, ncols, cols), ncols, fresh);
}

/* the integer column name (int4 or int8: run_lease is either, by family) */
static int64
int_col(ChildScan *cs, const char *name)
{
	bool		isnull;

	return awa_get_int(cs->slot, awa_column_number(cs->heap, name), &isnull);
}

static char *
text_col(ChildScan *cs, const char *name)
{
	bool		isnull;
	Datum		d = slot_getattr(cs->slot, awa_column_number(cs->heap, name), &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/* begins the scan of family's child (slot < 0: the table) for the job's rows */
static void
scan_job(ChildScan *cs, Oid nsp, const char *family, int slot, int64 job_id,
		 const AwaFreshRead *fresh)
{
	awa_child_scan_job(cs, awa_open_table(nsp, family, slot), job_id, fresh);
}

/* deferred_jobs and failed_jobs: one row by job_id at most */
static void
backlog_records(Oid nsp, int64 job_id, const AwaFreshRead *fresh, JobTop *top)
{
	ChildScan	cs;

	scan_job(&cs, nsp, "deferred_jobs", -1, job_id, fresh);
	if (awa_child_scan_next(&cs, ForwardScanDirection))
	{
		int32		attempt = (int32) int_col(&cs, "attempt");

		consider(top, attempt, 1, attempt > 1 ? "retryable" : "scheduled");
	}
	awa_child_scan_end(&cs);
	scan_job(&cs, nsp, "failed_jobs", -1, job_id, fresh);
	if (awa_child_scan_next(&cs, ForwardScanDirection))
		consider(top, (int32) int_col(&cs, "attempts"), 5, "failed");
	awa_child_scan_end(&cs);
}

/* done_entries_s: the outcomes of attempts (run_lease > 0; 0 is a tombstone) */
static void
done_records(Oid nsp, int64 job_id, const AwaFreshRead *fresh, JobTop *top)
{
	int			s;

	for (s = 0; s < AWA_QUEUE_SLOTS; s++)
	{
		ChildScan	cs;

		scan_job(&cs, nsp, "done_entries", s, job_id, fresh);
		while (awa_child_scan_next(&cs, ForwardScanDirection))
		{
			int64		lease = int_col(&cs, "run_lease");

			if (lease > 0)
				consider(top, (int32) lease, 5, text_col(&cs, "state"));
		}
		awa_child_scan_end(&cs);
	}
}

/* whether the ready entry in cs (slot s) has a cancel tombstone in its slot */
static bool
entry_cancelled(Oid nsp, int s, int32 lane_id, int64 lane_seq, const AwaFreshRead *fresh)
{
	Relation	done = awa_open_table(nsp, "done_entries", s);
	ChildScan	ds;
	bool		cancelled;

	awa_child_scan_begin_fresh(&ds, done, awa_open_tombstone_index(done), 2, fresh);
	cancelled = awa_tombstoned(&ds, awa_column_number(done, "run_lease"), lane_id, lane_seq);
	awa_child_scan_end(&ds);
	return cancelled;
}

/* ready_entries_s: cancelled, available, or claimed (rank 0, no state) */
static void
ready_records(Oid nsp, int64 job_id, const AwaFreshRead *fresh, JobTop *top)
{
	int			s;

	for (s = 0; s < AWA_QUEUE_SLOTS; s++)
	{
		ChildScan	cs;

		scan_job(&cs, nsp, "ready_entries", s, job_id, fresh);
		while (awa_child_scan_next(&cs, ForwardScanDirection))
		{
			int32		attempt = (int32) int_col(&cs, "attempt");
			int32		lane_id = (int32) int_col(&cs, "lane_id");
			int64		seq = int_col(&cs, "lane_seq");
			bool		isnull;
			uint64		txid = U64FromFullTransactionId(DatumGetFullTransactionId(
				slot_getattr(cs.slot, awa_column_number(cs.heap, "txid"), &isnull)));

			if (entry_cancelled(nsp, s, lane_id, seq, fresh))
				consider(top, attempt, 5, "cancelled");
			else if (awa_entry_unclaimed_fresh(nsp, lane_id, txid, seq, fresh) ==
					 AWA_UNCLAIMED_YES)
				consider(top, attempt, 2, "available");
			else
				consider(top, attempt, 0, NULL);
		}
		awa_child_scan_end(&cs);
	}
}

/*
 * The outcome and state of the closure in cs (state NULL: the job goes on):
 * from its code when its child has the column and the row a code (0.10,
 * tables/closure_code.sql), else from the text columns (a row written before,
 * or an older catalog).
 */
static void
closure_pair(ChildScan *cs, const char **outcome, const char **state)
{
	AttrNumber	att = awa_column_number_if(cs->heap, "outcome_code");
	bool		isnull = true;
	Datum		code = (Datum) 0;

	if (att != InvalidAttrNumber)
		code = slot_getattr(cs->slot, att, &isnull);
	if (!isnull)
	{
		awa_closure_decode(DatumGetChar(code), outcome, state);
		return;
	}
	*outcome = text_col(cs, "outcome");
	*state = text_col(cs, "state");
}

/* the closure of a receipt copy, in its claim child: its record */
static void
receipt_record(Oid nsp, int64 job_id, const ReceiptCopy *rc, const AwaFreshRead *fresh,
			   JobTop *top)
{
	static const char *const cols[] = {"job_id", "run_lease"};
	ChildScan	cs;
	ScanKeyData keys[2];

	scan_by(&cs, nsp, "lease_claim_closures", rc->child, 2, cols, fresh);
	/* job_id is bigint; the lease was read from this child's own receipt */
	if (!awa_int_key(&keys[0], cs.index, 1, job_id) ||
		!awa_int_key(&keys[1], cs.index, 2, rc->run_lease))
		elog(ERROR, "awa_bgw: run_lease " INT64_FORMAT " does not fit its column",
			 rc->run_lease);
	index_rescan(cs.scan, keys, 2, NULL, 0);
	if (!awa_child_scan_next(&cs, ForwardScanDirection))
		consider(top, rc->attempt, 3, "running");
	else
	{
		const char *outcome;
		const char *state;

		closure_pair(&cs, &outcome, &state);
		if (state != NULL)
			consider(top, rc->attempt, 5, state);
		else if (strcmp(outcome, "retried") == 0 || strcmp(outcome, "rescued") == 0)
			consider(top, rc->attempt, 4, "retryable");
		else
			consider(top, rc->attempt, 4, outcome);
	}
	awa_child_scan_end(&cs);
}

/* lease_claims_c: the newest copy of each attempt's receipt, with its closure */
static void
receipt_records(Oid nsp, int64 job_id, const AwaFreshRead *fresh, JobTop *top)
{
	ReceiptCopy *copies = NULL;
	int			n = 0;
	int			cap = 0;
	int			c;
	int			i;
	int			j;

	for (c = 0; c < AWA_CLAIM_SLOTS; c++)
	{
		ChildScan	cs;

		scan_job(&cs, nsp, "lease_claims", c, job_id, fresh);
		while (awa_child_scan_next(&cs, ForwardScanDirection))
		{
			if (n == cap)
			{
				cap = cap == 0 ? 8 : cap * 2;
				copies = copies == NULL ? palloc(cap * sizeof(ReceiptCopy))
					: repalloc(copies, cap * sizeof(ReceiptCopy));
			}
			copies[n].run_lease = int_col(&cs, "run_lease");
			copies[n].generation = int_col(&cs, "claim_generation");
			copies[n].attempt = (int32) int_col(&cs, "attempt");
			copies[n].child = c;
			n++;
		}
		awa_child_scan_end(&cs);
	}
	for (i = 0; i < n; i++)
	{
		for (j = 0; j < n; j++)
			if (copies[j].run_lease == copies[i].run_lease &&
				(copies[j].generation > copies[i].generation ||
				 (copies[j].generation == copies[i].generation && j < i)))
				break;
		if (j == n)
			receipt_record(nsp, job_id, &copies[i], fresh, top);
	}
}

/*
 * The job's state as awa_internal.job_state reports it, read as the fresh
 * read given; NULL when the data plane holds no record of it (or its top
 * record, a claimed entry whose receipt is gone, tells none).
 */
char *
awa_job_state_fresh(Oid nsp, int64 job_id, const AwaFreshRead *fresh)
{
	JobTop		top = {0};

	backlog_records(nsp, job_id, fresh, &top);
	ready_records(nsp, job_id, fresh, &top);
	receipt_records(nsp, job_id, fresh, &top);
	done_records(nsp, job_id, fresh, &top);
	return top.state;
}

/*
 * job_state_now(job_id) RETURNS text: awa_job_state_fresh under a fresh read
 * of its own, at any isolation level (the tests compare it with job_state).
 * The caller holds the ring families (awa_internal.hold_ring_families).
 */
Datum
awa_job_state_now(PG_FUNCTION_ARGS)
{
	AwaFreshRead fresh;
	char	   *state;

	awa_fresh_read_begin(&fresh);
	state = awa_job_state_fresh(awa_namespace(), PG_GETARG_INT64(0), &fresh);
	awa_fresh_read_end(&fresh);
	if (state == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(state));
}
