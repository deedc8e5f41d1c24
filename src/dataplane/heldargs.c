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
#include "access/stratnum.h"
#include "access/table.h"
#include "fmgr.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"

#include "src/dataplane/claimkey.h"
#include "src/dataplane/heldargs.h"
#include "src/dataplane/probes.h"
#include "src/rel/relcache.h"
#include "src/rel/scan.h"

PG_FUNCTION_INFO_V1(awa_attempt_args_sql);

/*
 * The args of the row of (job_id, attempt) that cs returns, a copy in the
 * caller's memory context, or (Datum) 0 when it returns none. Ends the scan
 * (the locks kept to the end of the transaction).
 */
static Datum
args_of_scan(ChildScan *cs, int64 job_id, int32 attempt)
{
	AttrNumber	a_job = awa_column_number(cs->heap, "job_id");
	AttrNumber	a_attempt = awa_column_number(cs->heap, "attempt");
	AttrNumber	a_args = awa_column_number(cs->heap, "args");
	Datum		args = (Datum) 0;

	while (args == (Datum) 0 && awa_child_scan_next(cs, ForwardScanDirection))
	{
		bool		isnull;

		if (awa_get_int64(cs->slot, a_job, &isnull) != job_id ||
			awa_get_int32(cs->slot, a_attempt, &isnull) != attempt)
			continue;
		args = slot_getattr(cs->slot, a_args, &isnull);
		args = isnull ? (Datum) 0 : PointerGetDatum(PG_DETOAST_DATUM_COPY(args));
	}
	awa_child_scan_end(cs);
	return args;
}

/* the args of (job_id, attempt) in family's child of slot, found by job id */
static Datum
args_by_job(Oid nsp, const char *family, int slot, int64 job_id, int32 attempt,
			const AwaFreshRead *fresh)
{
	ChildScan	cs;

	awa_child_scan_job(&cs, awa_open_table(nsp, family, slot), job_id, fresh);
	return args_of_scan(&cs, job_id, attempt);
}

/*
 * The args of (job_id, attempt) in ready child slot, found by the entry's
 * claim-order key, which its receipt carries: the btree every entry has,
 * probed for one key.
 */
static Datum
args_by_entry(Oid nsp, int slot, const AwaEntryKey *key, int64 job_id, int32 attempt,
			  const AwaFreshRead *fresh)
{
	Relation	heap = awa_open_table(nsp, "ready_entries", slot);
	ChildScan	cs;
	ScanKeyData keys[3];
	bool		low;

	awa_child_scan_begin_fresh(&cs, heap, awa_open_claim_order_index(heap, &low), 3, fresh);
	awa_claim_order_probe_keys(keys, low, key->lane_id, key->txid, key->lane_seq);
	index_rescan(cs.scan, keys, 3, NULL, 0);
	return args_of_scan(&cs, job_id, attempt);
}

/*
 * The args of (job_id, attempt) in the queue ring, read as fresh: the ready
 * entry by its claim-order key when the receipt gave one, else the copy a
 * prune made in held_args, else the ready entry by job id (a receipt that
 * carries no key; every key of an open attempt finds its entry first).
 */
static Datum
ring_args(Oid nsp, int64 job_id, int32 attempt, const AwaEntryKey *key,
		  const AwaFreshRead *fresh)
{
	Datum		args = (Datum) 0;
	int			s;

	for (s = 0; key != NULL && args == (Datum) 0 && s < AWA_QUEUE_SLOTS; s++)
		args = args_by_entry(nsp, s, key, job_id, attempt, fresh);
	for (s = 0; args == (Datum) 0 && s < AWA_QUEUE_SLOTS; s++)
		args = args_by_job(nsp, "held_args", s, job_id, attempt, fresh);
	for (s = 0; args == (Datum) 0 && s < AWA_QUEUE_SLOTS; s++)
		args = args_by_job(nsp, "ready_entries", s, job_id, attempt, fresh);
	return args;
}

/*
 * The args of attempt of job_id, from the queue ring; refused (XX001) when
 * it holds none, which invariant B rules out while the attempt is open.
 * key: the entry's claim-order key from the receipt, or NULL.
 */
Datum
awa_attempt_args(Oid nsp, int64 job_id, int32 attempt, const AwaEntryKey *key)
{
	static const char *const families[] = {"ready_entries", "held_args"};
	AwaFreshRead fresh;
	Datum		args;
	int			f;
	int			s;

	/* every child locked before the snapshot of now is taken */
	for (f = 0; f < (int) lengthof(families); f++)
		for (s = 0; s < AWA_QUEUE_SLOTS; s++)
			table_close(awa_open_table(nsp, families[f], s), NoLock);
	awa_fresh_read_begin(&fresh);
	args = ring_args(nsp, job_id, attempt, key, &fresh);
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

/*
 * awa_internal.attempt_args(job_id bigint, attempt int, lane_id int,
 * txid xid8, lane_seq bigint) RETURNS jsonb; the entry's key NULL when any
 * of its parts is (a receipt from before 0.9 has no txid).
 */
Datum
awa_attempt_args_sql(PG_FUNCTION_ARGS)
{
	AwaEntryKey key;
	bool		has_key = !PG_ARGISNULL(2) && !PG_ARGISNULL(3) && !PG_ARGISNULL(4);

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (has_key)
	{
		key.lane_id = PG_GETARG_INT32(2);
		key.txid = PG_GETARG_DATUM(3);
		key.lane_seq = PG_GETARG_INT64(4);
	}
	PG_RETURN_DATUM(awa_attempt_args(awa_namespace(), PG_GETARG_INT64(0),
									 PG_GETARG_INT32(1), has_key ? &key : NULL));
}
