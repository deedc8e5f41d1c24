/*-------------------------------------------------------------------------
 *
 * heldargs.c
 *	  The args of an open attempt whose receipt does not carry them (0.10,
 *	  tables/held_args.sql, docs/storage.md A.20): its ready entry's, or,
 *	  once queue prune took the entry's slot, the copy prune made in
 *	  held_args. The fail path (attempts.c) and awa_internal.attempt_args
 *	  (rescue's fail_attempt, sql-src/internal/attempts.sql) read them here.
 *
 * A prune's TRUNCATE is not MVCC-safe: a snapshot taken before it commits
 * sees the slot empty and not the copy it made. So every child of both
 * families is locked ACCESS SHARE first (a prune in progress is waited for,
 * at most its lock timeout, and the next one waits for this transaction),
 * and then read as a fresh read (rel/scan.c): a snapshot of now, taken after
 * the locks, at every isolation level, and with no predicate lock at
 * SERIALIZABLE (docs/storage.md A.18).
 *
 * src/dataplane/heldargs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/table.h"
#include "fmgr.h"
#include "utils/fmgrprotos.h"

#include "src/dataplane/heldargs.h"
#include "src/dataplane/probes.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_attempt_args_sql);

/* the families that hold an attempt's args in the queue ring, in reading order */
static const char *const families[] = {"ready_entries", "held_args"};

/*
 * The args of the row of (job_id, attempt) in heap, a copy in the caller's
 * memory context, or (Datum) 0 when heap holds none. Closes heap (its lock
 * kept to the end of the transaction).
 */
static Datum
args_in(Relation heap, int64 job_id, int32 attempt, const AwaFreshRead *fresh)
{
	AttrNumber	a_attempt = awa_column_number(heap, "attempt");
	AttrNumber	a_args = awa_column_number(heap, "args");
	ChildScan	cs;
	Datum		args = (Datum) 0;

	awa_child_scan_job(&cs, heap, job_id, fresh);
	while (args == (Datum) 0 && awa_child_scan_next(&cs, ForwardScanDirection))
	{
		bool		isnull;

		if (awa_get_int32(cs.slot, a_attempt, &isnull) != attempt)
			continue;
		args = slot_getattr(cs.slot, a_args, &isnull);
		args = isnull ? (Datum) 0 : PointerGetDatum(PG_DETOAST_DATUM_COPY(args));
	}
	awa_child_scan_end(&cs);
	return args;
}

/*
 * The args of attempt of job_id, from the queue ring; refused (XX001) when
 * it holds none, which invariant B rules out while the attempt is open.
 */
Datum
awa_attempt_args(Oid nsp, int64 job_id, int32 attempt)
{
	Relation	rels[lengthof(families)][AWA_QUEUE_SLOTS];
	AwaFreshRead fresh;
	Datum		args = (Datum) 0;
	int			f;
	int			s;

	for (f = 0; f < (int) lengthof(families); f++)
		for (s = 0; s < AWA_QUEUE_SLOTS; s++)
			rels[f][s] = awa_open_table(nsp, families[f], s);
	awa_fresh_read_begin(&fresh);
	for (f = 0; f < (int) lengthof(families); f++)
		for (s = 0; s < AWA_QUEUE_SLOTS; s++)
		{
			/* the scan closes what it read; the rest is closed here (locks kept) */
			if (args == (Datum) 0)
				args = args_in(rels[f][s], job_id, attempt, &fresh);
			else
				table_close(rels[f][s], NoLock);
		}
	awa_fresh_read_end(&fresh);
	if (args == (Datum) 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the args of job " INT64_FORMAT " attempt %d are gone",
						job_id, attempt),
				 errhint("The queue ring should hold them while the attempt is open; "
						 "report this with the output of awa.job(" INT64_FORMAT ").",
						 job_id)));
	return args;
}

/* awa_internal.attempt_args(job_id bigint, attempt int) RETURNS jsonb */
Datum
awa_attempt_args_sql(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(awa_attempt_args(awa_namespace(), PG_GETARG_INT64(0),
									 PG_GETARG_INT32(1)));
}
