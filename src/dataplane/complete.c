/*-------------------------------------------------------------------------
 *
 * complete.c
 *	  Completing one attempt in 0.9, in C (docs/storage.md §A.13):
 *	  awa.complete(job_id, run_lease).
 *
 * What the PL/pgSQL complete does (internal/attempts.sql), step for step: READ
 * COMMITTED; the attempt's lock (private, keyed by awa_attempt_lock_key);
 * with a snapshot taken after the lock, the attempt's open receipt (the claim
 * children probed from the current claim slot backwards by (job_id,
 * run_lease), the first one holding it; open when its slot has no closure
 * for it); then what close_attempts writes for 'completed': one closure,
 * in the receipt's claim slot, with the state 'completed' (§A.15: no done
 * entry; in 0.10 the pair as its outcome code, tables/closure_code.sql). The
 * row goes straight into the ring child (probes.c's row inserter).
 * complete_batch does the same for up to 1000
 * attempts, their locks taken in key order, then their receipts found under
 * one snapshot taken after the last lock (one read of the claim cursor, one
 * scan per claim child keyed again per attempt: ReceiptFinder).
 * complete_and_claim completes so, then claims (wait.c's claim, without
 * wait): a consumer's loop in one transaction per job.
 *
 * src/dataplane/complete.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/tuplestore.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "src/compat.h"
#include "src/dataplane/activity.h"
#include "src/dataplane/checks.h"
#include "src/dataplane/complete.h"
#include "src/dataplane/limits.h"
#include "src/dataplane/privlock.h"
#include "src/dataplane/probes.h"
#include "src/dataplane/queuepolicy.h"
#include "src/dataplane/receipthints.h"
#include "src/dataplane/wait.h"
#include "src/rel/inserter.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_complete);
PG_FUNCTION_INFO_V1(awa_complete_batch);
PG_FUNCTION_INFO_V1(awa_complete_and_claim);

/* the columns of an open receipt that closing or retrying it needs */
static const char *const receipt_cols[AWA_RECEIPT_COLS] = {
	"claim_slot", "claim_generation", "job_id", "run_lease", "attempt", "queue",
	"priority", "kind", "created_at", "args", "max_attempts", "lane_id", "lane_seq", "txid"
};

/*
 * Finds the open receipts of many attempts under one snapshot: the claim
 * cursor is read once, and each claim child's scan of an attempt, and its
 * closures' scan, is begun the first time a probe reaches that slot and
 * keyed again for the next attempt (complete_batch: 32 attempts read the
 * cursor once, not 32 times). Slots are counted from the current one
 * backwards.
 */
typedef struct ReceiptFinder
{
	Oid			nsp;
	const AwaFreshRead *fresh;	/* NULL: the active snapshot */
	bool		have_cursor;
	int32		claim_slot;
	int64		claim_gen;
	/* [0] receipts, [1] closures; heap NULL: not begun */
	ChildScan	scans[2][AWA_CLAIM_SLOTS];
	AttrNumber	atts[AWA_CLAIM_SLOTS][AWA_RECEIPT_COLS];	/* receipt_cols in a child */
} ReceiptFinder;

static void
finder_begin(ReceiptFinder *f, Oid nsp, const AwaFreshRead *fresh)
{
	memset(f, 0, sizeof(*f));
	f->nsp = nsp;
	f->fresh = fresh;
	f->have_cursor = awa_ring_cursor_read_as(nsp, "claim", fresh, &f->claim_slot,
											 &f->claim_gen);
	if (f->have_cursor)
		awa_check_slots(f->claim_slot, f->claim_gen, AWA_CLAIM_SLOTS);
}

/*
 * Whether the child of slot k back (family 0: lease_claims, 1:
 * lease_claim_closures) holds the attempt (its row in the scan's slot): the
 * child's scan (src/rel/scan.c awa_child_scan_attempt: the closures by their
 * btree on (job_id, run_lease), the receipts by theirs or, in 0.10, by their
 * BRIN index on job_id, newest page first, after the tuple where this
 * backend's claim wrote the receipt when it did: receipthints.c) is begun on
 * the first probe of the slot and keyed again for the next attempt.
 */
static bool
probe(ReceiptFinder *f, int family, int k, int64 job_id, int64 run_lease)
{
	ChildScan  *cs = &f->scans[family][k];
	ItemPointerData hint;
	int			i;

	if (cs->heap == NULL)
	{
		const char *table = family == 0 ? "lease_claims" : "lease_claim_closures";
		Relation	heap = awa_open_table(f->nsp, table,
										  awa_ring_slot(f->claim_slot, k, AWA_CLAIM_SLOTS));

		awa_child_scan_attempt(cs, heap, job_id, run_lease, f->fresh);
		for (i = 0; family == 0 && i < AWA_RECEIPT_COLS; i++)
			f->atts[k][i] = awa_column_number(heap, receipt_cols[i]);
	}
	else
		awa_child_scan_rekey(cs, job_id, run_lease);
	if (family == 0 &&
		awa_receipt_hint_get(RelationGetRelid(cs->heap), job_id, run_lease, &hint))
		awa_child_scan_hint(cs, &hint);
	return awa_child_scan_next(cs, ForwardScanDirection);
}

/*
 * The attempt's receipt, from the newest claim child that holds it; true when
 * it is there and open (no closure for it in its slot).
 */
static bool
finder_find(ReceiptFinder *f, int64 job_id, int64 run_lease, AwaReceipt *r)
{
	int64		k;
	int			i;

	for (k = 0; f->have_cursor && k <= Min(f->claim_gen, (int64) AWA_CLAIM_SLOTS - 1); k++)
	{
		ChildScan  *cs = &f->scans[0][k];

		if (!probe(f, 0, (int) k, job_id, run_lease))
			continue;
		if (probe(f, 1, (int) k, job_id, run_lease))
			return false;
		for (i = 0; i < AWA_RECEIPT_COLS; i++)
		{
			AttrNumber	a = f->atts[k][i];
			Form_pg_attribute att = TupleDescAttr(RelationGetDescr(cs->heap), a - 1);

			r->values[i] = slot_getattr(cs->slot, a, &r->nulls[i]);
			if (!r->nulls[i])
				r->values[i] = datumCopy(r->values[i], att->attbyval, att->attlen);
		}
		return true;
	}
	return false;
}

static void
finder_end(ReceiptFinder *f)
{
	int			family;
	int			k;

	for (family = 0; family < 2; family++)
		for (k = 0; k < AWA_CLAIM_SLOTS; k++)
			if (f->scans[family][k].heap != NULL)
				awa_child_scan_end(&f->scans[family][k]);
}

/*
 * The read of the receipts that complete, complete_batch, fail and heartbeat
 * make after the attempts' locks (awa_receipts_read_begin): at READ
 * COMMITTED the transaction's next snapshot, as the statements of the
 * PL/pgSQL complete took; at REPEATABLE READ and SERIALIZABLE a fresh read
 * (docs/storage.md A.18), whose snapshot is also the active one, so that
 * what follows (the retry's enqueue, the heartbeat's lease cursor) sees the
 * same instant. Reset at each begin: an error ended the last one.
 */
static AwaFreshRead receipts_buf;
static const AwaFreshRead *receipts_fresh = NULL;

static const AwaFreshRead *
receipts_read_begin(void)
{
	CommandCounterIncrement();
	receipts_fresh = awa_fresh_read_begin_for_level(&receipts_buf);
	PushActiveSnapshot(receipts_fresh != NULL ? receipts_fresh->registered
					   : GetTransactionSnapshot());
	return receipts_fresh;
}

/* the fresh read under way, or NULL (READ COMMITTED, or none) */
const AwaFreshRead *
awa_receipts_fresh(void)
{
	return receipts_fresh;
}

/* the end of the read awa_lock_open_receipt (or complete_batch) began */
void
awa_receipts_read_end(void)
{
	PopActiveSnapshot();
	awa_fresh_read_end(receipts_fresh);
	receipts_fresh = NULL;
}

/* the attempt's open receipt, as finder_find; for one attempt */
static bool
open_receipt(Oid nsp, int64 job_id, int64 run_lease, AwaReceipt *r, const AwaFreshRead *fresh)
{
	ReceiptFinder f;
	bool		open;

	finder_begin(&f, nsp, fresh);
	open = finder_find(&f, job_id, run_lease, r);
	finder_end(&f);
	return open;
}

/* rows into one ring child, their columns given by name (the rest NULL) */
typedef struct NamedInserter
{
	Relation	rel;
	RowInserter ri;
	int			n;
	AttrNumber *atts;
	Datum	   *row;
	bool	   *nulls;
} NamedInserter;

static void
named_begin(NamedInserter *ni, Relation rel, int n, const char *const *names)
{
	int			natts = RelationGetDescr(rel)->natts;
	int			i;

	ni->rel = rel;
	ni->n = n;
	ni->atts = palloc(n * sizeof(AttrNumber));
	for (i = 0; i < n; i++)
		ni->atts[i] = awa_column_number(rel, names[i]);
	ni->row = palloc0(natts * sizeof(Datum));
	ni->nulls = palloc(natts * sizeof(bool));
	memset(ni->nulls, true, natts * sizeof(bool));
	awa_activity_note();
	awa_row_inserter_begin(&ni->ri, rel);
}

static void
named_put(NamedInserter *ni, Datum *values, bool *nulls)
{
	int			i;

	for (i = 0; i < ni->n; i++)
	{
		ni->row[ni->atts[i] - 1] = values[i];
		ni->nulls[ni->atts[i] - 1] = nulls[i];
	}
	awa_row_inserter_put(&ni->ri, ni->row, ni->nulls);
}

/* ends the inserts; the relation stays locked to the end of the transaction */
static void
named_end(NamedInserter *ni)
{
	awa_row_inserter_end(&ni->ri);
	table_close(ni->rel, NoLock);
}

/* one row into a ring child, its columns given by name (the rest NULL) */
void
awa_insert_named(Relation rel, int n, const char *const *names, Datum *values, bool *nulls)
{
	NamedInserter ni;

	named_begin(&ni, rel, n, names);
	named_put(&ni, values, nulls);
	awa_row_inserter_end(&ni.ri);
}

/* the index of r's column name in receipt_cols */
static int
receipt_col_index(const char *name)
{
	int			i;

	for (i = 0; i < AWA_RECEIPT_COLS; i++)
		if (strcmp(receipt_cols[i], name) == 0)
			return i;
	elog(ERROR, "no receipt column %s", name);
	return -1;
}

/* r's column by name */
Datum
awa_receipt_col(AwaReceipt *r, const char *name)
{
	return r->values[receipt_col_index(name)];
}

/* whether r's column is NULL (a 0.10 receipt's args, tables/held_args.sql) */
bool
awa_receipt_col_is_null(AwaReceipt *r, const char *name)
{
	return r->nulls[receipt_col_index(name)];
}

/*
 * A closure's columns: those of every version, then 0.10's outcome code
 * (tables/closure_code.sql) or, in an older catalog, the generation and the
 * text pair (outcome, state). The child opened decides, not the version: the
 * 0.7-0.9 scripts run by this library get the rows they always had.
 */
static const char *const closure_coded_cols[] = {
	"claim_slot", "job_id", "run_lease", "closed_at", "error", "outcome_code"
};
static const char *const closure_text_cols[] = {
	"claim_slot", "job_id", "run_lease", "closed_at", "error", "claim_generation",
	"outcome", "state"
};

/* the pairs (outcome, state) a closure carries, by code (state NULL: the job goes on) */
typedef struct ClosureCode
{
	char		code;
	const char *outcome;
	const char *state;
} ClosureCode;

static const ClosureCode closure_codes[] = {
	{'1', "completed", "completed"},
	{'2', "failed", "failed"},
	{'3', "retried", NULL},
	{'4', "cancelled", "cancelled"},
	{'5', "rescued", NULL},
	{'6', "rescued", "failed"}
};

/* whether two states, either NULL, are the same */
static bool
same_state(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* the code of the pair (outcome, state) */
static char
closure_code(const char *outcome, const char *state)
{
	size_t		i;

	for (i = 0; i < lengthof(closure_codes); i++)
		if (strcmp(closure_codes[i].outcome, outcome) == 0 &&
			same_state(closure_codes[i].state, state))
			return closure_codes[i].code;
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("awa_bgw: no outcome code for a closure %s with the state %s",
					outcome, state != NULL ? state : "NULL")));
	return '\0';				/* keep compiler quiet */
}

/*
 * The pair (outcome, state) a closure's code names; state NULL: the job goes
 * on. A code outside the table is refused (the closures' CHECK admits none).
 */
void
awa_closure_decode(char code, const char **outcome, const char **state)
{
	size_t		i;

	for (i = 0; i < lengthof(closure_codes); i++)
		if (closure_codes[i].code == code)
		{
			*outcome = closure_codes[i].outcome;
			*state = closure_codes[i].state;
			return;
		}
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("awa_bgw: a closure with the unknown outcome code %d", (int) code)));
}

/* the inserter of closures into slot's child; whether that child carries the code */
static bool
closures_begin(NamedInserter *ni, Oid nsp, int32 slot)
{
	Relation	rel = awa_open_table_for(nsp, "lease_claim_closures", slot,
										 RowExclusiveLock);
	bool		coded = awa_column_number_if(rel, "outcome_code") != InvalidAttrNumber;

	if (coded)
		named_begin(ni, rel, lengthof(closure_coded_cols), closure_coded_cols);
	else
		named_begin(ni, rel, lengthof(closure_text_cols), closure_text_cols);
	return coded;
}

/*
 * The closes counted against their queues' running limits (src/dataplane/limits.c),
 * one call per run of receipts of the same queue.
 */
static void
note_closed(AwaReceipt *rs, int n)
{
	int			i;
	int			run = 0;

	for (i = 0; i < n; i++)
	{
		text	   *q = DatumGetTextPP(awa_receipt_col(&rs[i], "queue"));
		text	   *next = NULL;

		if (i + 1 < n)
			next = DatumGetTextPP(awa_receipt_col(&rs[i + 1], "queue"));
		run++;
		if (next != NULL && VARSIZE_ANY_EXHDR(q) == VARSIZE_ANY_EXHDR(next) &&
			memcmp(VARDATA_ANY(q), VARDATA_ANY(next), VARSIZE_ANY_EXHDR(q)) == 0)
			continue;
		awa_limit_note_closed(q, run);
		run = 0;
	}
}

/*
 * close_attempts(receipts, outcome, state, error): the closure of each receipt
 * in its claim slot's child, carrying the outcome, the job's terminal state
 * (NULL: the job goes on) and the error (0: NULL). One row per attempt: the
 * closure is the outcome (docs/storage.md §A.15), no done entry is written.
 * In 0.10 the pair is written as its code, the text columns and the
 * generation NULL (closures_begin). Each child's rows go through one
 * inserter. A close of an attempt of a queue with a running limit frees its
 * room when the transaction commits.
 */
void
awa_close_attempts(Oid nsp, AwaReceipt *rs, int n, const char *outcome, const char *state,
				   Datum error)
{
	NamedInserter ins[AWA_CLAIM_SLOTS];
	bool		open[AWA_CLAIM_SLOTS] = {0};
	bool		coded[AWA_CLAIM_SLOTS];
	Datum		code = CharGetDatum(closure_code(outcome, state));
	Datum		v[lengthof(closure_text_cols)];
	bool		nulls[lengthof(closure_text_cols)] = {0};
	int			i;

	v[3] = TimestampTzGetDatum(GetCurrentTimestamp());
	v[4] = error;
	nulls[4] = error == (Datum) 0;
	v[6] = CStringGetTextDatum(outcome);
	v[7] = state != NULL ? CStringGetTextDatum(state) : (Datum) 0;
	nulls[7] = state == NULL;
	for (i = 0; i < n; i++)
	{
		int32		slot = DatumGetInt32(awa_receipt_col(&rs[i], "claim_slot"));

		if (slot < 0 || slot >= AWA_CLAIM_SLOTS)
			elog(ERROR, "awa_bgw: a receipt in claim slot %d", slot);
		if (!open[slot])
		{
			coded[slot] = closures_begin(&ins[slot], nsp, slot);
			open[slot] = true;
		}
		v[0] = Int32GetDatum(slot);
		v[1] = awa_receipt_col(&rs[i], "job_id");
		v[2] = awa_receipt_col(&rs[i], "run_lease");
		/* the code, or (older catalog) the generation before the text pair */
		v[5] = coded[slot] ? code : awa_receipt_col(&rs[i], "claim_generation");
		named_put(&ins[slot], v, nulls);
	}
	for (i = 0; i < AWA_CLAIM_SLOTS; i++)
		if (open[i])
			named_end(&ins[i]);
	note_closed(rs, n);
}

/* awa_close_attempts for one receipt */
void
awa_close_attempt(Oid nsp, AwaReceipt *r, const char *outcome, const char *state,
				  Datum error)
{
	awa_close_attempts(nsp, r, 1, outcome, state, error);
}

/*
 * The attempt's lock, then a read taken after it (its snapshot pushed; the
 * caller ends it with awa_receipts_read_end), then whether the attempt has an
 * open receipt (into r), and the caller's claim privilege on its queue: the
 * start of complete, fail and heartbeat.
 */
bool
awa_lock_open_receipt(int64 job_id, int64 run_lease, AwaReceipt *r)
{
	const AwaFreshRead *fresh;
	bool		open;

	(void) awa_private_lock(awa_attempt_lock_key(job_id, run_lease), false);
	fresh = receipts_read_begin();
	open = open_receipt(awa_namespace(), job_id, run_lease, r, fresh);
	/* the receipt's queue decides: its claim privilege */
	if (open)
		awa_queue_require(DatumGetTextPP(awa_receipt_col(r, "queue")), AWA_QUEUE_CLAIM);
	return open;
}

/*
 * awa.complete(job_id bigint, run_lease bigint) RETURNS boolean: false when
 * the attempt has no open receipt (completed, failed, rescued, cancelled, or
 * never claimed: a wrong token).
 */
Datum
awa_complete(PG_FUNCTION_ARGS)
{
	AwaReceipt	r;
	bool		open;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_BOOL(false);
	open = awa_lock_open_receipt(PG_GETARG_INT64(0), PG_GETARG_INT64(1), &r);
	if (open)
		awa_close_attempt(awa_namespace(), &r, "completed", "completed", (Datum) 0);
	awa_receipts_read_end();
	PG_RETURN_BOOL(open);
}

/* one attempt of a batch */
typedef struct BatchAttempt
{
	int64		job_id;
	int64		run_lease;
	int64		key;
} BatchAttempt;

static int
by_key(const void *a, const void *b)
{
	int64		x = ((const BatchAttempt *) a)->key;
	int64		y = ((const BatchAttempt *) b)->key;

	return x < y ? -1 : x > y;
}

static int
by_attempt(const void *a, const void *b)
{
	const BatchAttempt *x = a;
	const BatchAttempt *y = b;

	if (x->job_id != y->job_id)
		return x->job_id < y->job_id ? -1 : 1;
	return x->run_lease < y->run_lease ? -1 : x->run_lease > y->run_lease;
}

/* the distinct attempts named pairwise by the two arrays (NULLs skipped) */
static BatchAttempt *
batch_attempts(ArrayType *jobs_a, ArrayType *leases_a, int *n)
{
	Datum	   *jobs;
	Datum	   *leases;
	bool	   *jn;
	bool	   *ln;
	int			nj;
	int			nl;
	int			i;
	int			m = 0;
	BatchAttempt *att;

	deconstruct_array(jobs_a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &jobs, &jn, &nj);
	deconstruct_array(leases_a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &leases, &ln,
					  &nl);
	att = palloc(Max(nj, 1) * sizeof(BatchAttempt));
	for (i = 0; i < nj && i < nl; i++)
	{
		if (jn[i] || ln[i])
			continue;
		att[m].job_id = DatumGetInt64(jobs[i]);
		att[m].run_lease = DatumGetInt64(leases[i]);
		att[m].key = awa_attempt_lock_key(att[m].job_id, att[m].run_lease);
		m++;
	}
	if (m > 1)
	{
		int			k = 1;

		qsort(att, m, sizeof(BatchAttempt), by_attempt);
		for (i = 1; i < m; i++)
			if (by_attempt(&att[i], &att[k - 1]) != 0)
				att[k++] = att[i];
		m = k;
	}
	*n = m;
	return att;
}

/* refuses arrays of different lengths, or of more than 1000 attempts */
static void
check_pairs(FunctionCallInfo fcinfo, int first)
{
	int			nj = -1;
	int			nl = -1;

	if (!PG_ARGISNULL(first))
		nj = ArrayGetNItems(ARR_NDIM(PG_GETARG_ARRAYTYPE_P(first)),
							ARR_DIMS(PG_GETARG_ARRAYTYPE_P(first)));
	if (!PG_ARGISNULL(first + 1))
		nl = ArrayGetNItems(ARR_NDIM(PG_GETARG_ARRAYTYPE_P(first + 1)),
							ARR_DIMS(PG_GETARG_ARRAYTYPE_P(first + 1)));
	if (nj != nl || nj > 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("job_ids and run_leases must be arrays of the same length (at most 1000)"),
				 errhint("Pass the job_id and run_lease of each claimed attempt, pairwise; "
						 "each attempt takes a lock until commit, so batches stay small.")));
}

/*
 * Completes the attempts named pairwise by the two arrays that are open:
 * their locks in key order (two batches never wait on each other in a
 * cycle), then their receipts under one read, each checked before anything
 * is written. Puts each completed attempt into rsinfo unless it is NULL.
 */
static void
complete_pairs(ArrayType *jobs, ArrayType *leases, ReturnSetInfo *rsinfo)
{
	BatchAttempt *att;
	AwaReceipt *open;
	ReceiptFinder finder;
	const AwaFreshRead *fresh;
	int			nopen = 0;
	int			n;
	int			i;
	Oid			nsp;

	att = batch_attempts(jobs, leases, &n);
	qsort(att, n, sizeof(BatchAttempt), by_key);
	for (i = 0; i < n; i++)
		if (i == 0 || att[i].key != att[i - 1].key)
			(void) awa_private_lock(att[i].key, false);
	qsort(att, n, sizeof(BatchAttempt), by_attempt);
	fresh = receipts_read_begin();
	nsp = awa_namespace();
	open = palloc(Max(n, 1) * sizeof(AwaReceipt));
	finder_begin(&finder, nsp, fresh);
	for (i = 0; i < n; i++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		if (!finder_find(&finder, att[i].job_id, att[i].run_lease, &open[nopen]))
			continue;
		awa_queue_require(DatumGetTextPP(awa_receipt_col(&open[nopen], "queue")),
						  AWA_QUEUE_CLAIM);
		nopen++;
		if (rsinfo == NULL)
			continue;
		values[0] = Int64GetDatum(att[i].job_id);
		values[1] = Int64GetDatum(att[i].run_lease);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	finder_end(&finder);
	awa_close_attempts(nsp, open, nopen, "completed", "completed", (Datum) 0);
	awa_receipts_read_end();
}

/*
 * awa.complete_batch(job_ids bigint[], run_leases bigint[])
 *		RETURNS TABLE (job_id bigint, run_lease bigint)
 *
 * The attempts it completed, ordered by (job_id, run_lease).
 */
Datum
awa_complete_batch(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	check_pairs(fcinfo, 0);
	InitMaterializedSRF(fcinfo, 0);
	if (!PG_ARGISNULL(0))
		complete_pairs(PG_GETARG_ARRAYTYPE_P(0), PG_GETARG_ARRAYTYPE_P(1), rsinfo);
	return (Datum) 0;
}

/*
 * awa.complete_and_claim(job_ids bigint[], run_leases bigint[], queue text,
 *		max_batch int, deadline interval) RETURNS SETOF awa.claimed_job
 *
 * A consumer's loop in one transaction per job: completes the attempts it
 * holds (as complete_batch; NULL or empty arrays complete nothing), then
 * claims as awa.claim without wait. The queue and the caller's claim
 * privilege are checked before anything is written; READ COMMITTED only,
 * as the claim.
 */
Datum
awa_complete_and_claim(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	awa_require_read_committed("awa.complete_and_claim");
	check_pairs(fcinfo, 0);
	if (!PG_ARGISNULL(2))
	{
		awa_check_name("queue", PG_GETARG_TEXT_PP(2));
		awa_queue_require(PG_GETARG_TEXT_PP(2), AWA_QUEUE_CLAIM);
	}
	if (!PG_ARGISNULL(0))
	{
		complete_pairs(PG_GETARG_ARRAYTYPE_P(0), PG_GETARG_ARRAYTYPE_P(1), NULL);
		/* the claim's snapshots see the closures */
		CommandCounterIncrement();
	}
	awa_claim_now_args(fcinfo, 2, rsinfo);
	return (Datum) 0;
}
